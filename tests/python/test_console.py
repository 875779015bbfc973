"""What rtcc writes to a terminal (rtcc.console, rtcc.tables): progress bars only on a
terminal, tables as plain aligned text, errors as one line.

In-process against the fake native module, and as subprocesses with stderr on a
pseudo-terminal (stdout a pipe) against the compiled simulator.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rtcc
from conftest import ANSI, on_a_terminal, requires_native, subprocess_env
from rtcc import cli
from rtcc.console import Bar, Steps, console, print_error
from rtcc.tables import table_text


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def plain(text: str) -> str:
    return ANSI.sub("", text)


# --- progress --------------------------------------------------------------------------


def test_bar_draws_count_percentage_and_eta_on_a_terminal():
    stream = _Tty()
    with Bar("demo", stream=stream) as bar:
        bar(5.0, 10.0)
        bar(10.0, 10.0)
    drawn = stream.getvalue()
    assert "\x1b[" in drawn  # a terminal gets control codes (and colour)
    text = plain(drawn)
    assert "demo" in text and "50%" in text and "5.0/10.0 s" in text
    assert "ETA" in text and "10.0/10.0 s" in text
    assert drawn.endswith("\x1b[2K")  # closing removes it


def test_bar_counts_runs_with_its_own_unit():
    stream = _Tty()
    with Bar("sweep", unit=" runs", digits=0, stream=stream) as bar:
        bar(3, 12)
    assert "3/12 runs" in plain(stream.getvalue())


def test_bar_writes_nothing_off_a_terminal(monkeypatch):
    # rich alone would take FORCE_COLOR / TTY_COMPATIBLE as a terminal and draw into a log.
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    stream = io.StringIO()
    with Bar("demo", stream=stream) as bar:
        bar(5.0, 10.0)
    assert stream.getvalue() == ""
    assert not console(stream).is_terminal


def test_bar_on_a_forced_rich_console():
    from rich.console import Console

    out = io.StringIO()
    with Bar("forced", terminal=Console(file=out, force_terminal=True, width=100)) as bar:
        bar(1.0, 4.0)
    assert "forced" in plain(out.getvalue()) and "25%" in plain(out.getvalue())


def test_steps_report_to_a_callable_or_a_bar():
    seen: list[tuple[float, float]] = []
    with Steps(lambda done, total: seen.append((done, total)), "x", 3) as steps:
        steps.advance()
        steps.advance(2)
    assert seen == [(0, 3), (1, 3), (3, 3)]
    with Steps(False, "x", 3) as steps:
        steps.advance()
    assert steps.done == 1


@pytest.mark.usefixtures("fake_native")
def test_run_draws_on_a_terminal_and_prints_clean_results(monkeypatch, capsys, short_scenario):
    terminal = _Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    out_dir = str(short_scenario.parent / "o")
    assert cli.main(["run", str(short_scenario), "--out", out_dir, "--no-plots"]) == 0
    out = capsys.readouterr().out
    bar = plain(terminal.getvalue())
    assert "fixed-1mbps" in bar and "10.0/10.0 s" in bar and "ETA" in bar
    assert "\x1b" not in out and out.splitlines()[2].split()[:2] == ["call", "fixed"]


@pytest.mark.usefixtures("fake_native")
def test_bench_draws_its_runs_on_a_terminal(monkeypatch, capsys):
    terminal = _Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli.main(["bench", "--workload", "fixed", "--repeat", "2"]) == 0
    assert "2/2 runs" in plain(terminal.getvalue())
    assert capsys.readouterr().out.splitlines()[0].split()[:2] == ["workload", "sim"]


SPEC = """\
name = "pty"
controllers = ["fixed", "gcc"]
seeds = 2

[base]
duration = "5s"
link = { capacity = "2Mbps", delay = "20ms", queue = "unlimited" }

[[base.flow]]
name = "call"
controller = { name = "fixed", rate = "500kbps" }
encoder = "ideal"
"""


@requires_native
def test_progress_on_a_pseudo_terminal_and_not_in_a_pipe(tmp_path: Path, short_scenario: Path):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC, encoding="utf-8")
    run = ["run", str(short_scenario), "--out", str(tmp_path / "run"), "--no-plots"]
    sweep = ["sweep", str(spec), "--out", str(tmp_path / "sweep"), "-j", "2"]
    for args, drawn, table in ((run, "10.0/10.0 s", 3), (sweep, "4/4 runs", 4)):
        code, out, err = on_a_terminal(*args, cwd=tmp_path)
        assert code == 0, err
        assert drawn in plain(err) and "ETA" in plain(err)
        assert "\x1b" not in out  # stdout is a pipe: plain text
        # All in pipes, with rich's hints of a terminal and a narrow one: no bar, and the
        # same table, unwrapped.
        piped = subprocess.run(
            [sys.executable, "-m", "rtcc", *args], capture_output=True, text=True, cwd=tmp_path,
            env={**subprocess_env(), "FORCE_COLOR": "1", "COLUMNS": "40"}, timeout=120,
        )  # fmt: skip
        assert piped.returncode == 0, piped.stderr
        assert piped.stderr == ""
        assert piped.stdout.splitlines()[:table] == out.splitlines()[:table]
        assert max(len(line) for line in out.splitlines()[:table]) > 40


@requires_native
def test_a_reproduction_draws_its_runs_on_a_terminal_only(tmp_path: Path):
    args = ["reproduce", "fbra", "--short", "--out", str(tmp_path / "fbra"), "-j", "2"]
    code, out, err = on_a_terminal(*args, cwd=tmp_path)
    assert code == 0, err
    # The bar is labelled in the paper's words.
    assert re.search(r"FBRA Tables 1-3: .* \d+/\d+ runs .*ETA", plain(err))
    piped = subprocess.run(
        [sys.executable, "-m", "rtcc", *args], capture_output=True, text=True, cwd=tmp_path,
        env={**subprocess_env(), "FORCE_COLOR": "1"}, timeout=300,
    )  # fmt: skip
    assert piped.returncode == 0 and piped.stderr == ""
    table = out.split("\nresults:")[0]
    assert piped.stdout.startswith(table) and "\x1b" not in out


@requires_native
def test_errors_are_one_coloured_line_on_a_terminal(tmp_path: Path):
    code, out, err = on_a_terminal("run", "missing.toml", cwd=tmp_path)
    assert code == 2 and out == ""
    assert "\x1b[" in err  # coloured prefix
    assert plain(err).rstrip("\r\n").splitlines() == ["rtcc: error: missing.toml: no such file"]


# --- errors ----------------------------------------------------------------------------


def test_error_line_is_plain_off_a_terminal_and_never_wrapped(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setenv("FORCE_COLOR", "1")
    message = "s.toml: flow[0].fps: [bold]not markup[/bold] " + "x" * 300 + "\n  and more"
    print_error(message)
    expected = "rtcc: error: s.toml: flow[0].fps: [bold]not markup[/bold] " + "x" * 300
    assert stream.getvalue() == expected + " and more\n"


def test_error_line_on_a_terminal_colours_the_prefix_only(monkeypatch):
    terminal = _Tty()
    monkeypatch.setattr(sys, "stderr", terminal)
    print_error("spec.toml: seeds[1]: must be an integer in 0..2^64-1 " + "y" * 200)
    text = terminal.getvalue()
    assert text.startswith("\x1b[1;31mrtcc: error: \x1b[0m")
    assert text.count("\n") == 1
    assert plain(text).endswith("seeds[1]: must be an integer in 0..2^64-1 " + "y" * 200 + "\n")


# --- tables ----------------------------------------------------------------------------


def test_table_aligns_text_left_and_numbers_right():
    text = table_text(["a", "bb"], [["long name", "1"], ["x", "1,000"]])
    assert text.splitlines() == [
        "a             bb",
        "---------  -----",
        "long name      1",
        "x          1,000",
    ]


def test_table_without_header_has_no_trailing_spaces():
    rows = [["  rate", "1Mbps", "> 0bps", "target bitrate"], ["  a", "", "", ""]]
    assert table_text(None, rows, left=4).splitlines() == [
        "  rate  1Mbps  > 0bps  target bitrate",
        "  a",
    ]


def test_wide_tables_keep_every_column_on_one_line(monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    header = ["scheme", *(f"metric {i}" for i in range(20))]
    rows = [[f"s{r}", *(f"{r * i * 1000:,}" for i in range(20))] for r in range(5)]
    lines = table_text(header, rows).splitlines()
    assert len(lines) == 2 + len(rows)
    assert max(len(line) for line in lines) > 200
    assert lines[0].split("  ")[0] == "scheme" and lines[0].endswith("metric 19")
    assert [line.split() for line in lines[2:]] == rows
    # Right-aligned numbers: every row ends where the header does.
    assert {len(line) for line in [lines[0], *lines[2:]]} == {len(lines[0])}
    assert "\x1b" not in "".join(lines)


def test_table_cells_are_text_not_markup():
    text = table_text(["name"], [["[red]x[/red]"], [":smile:"]])
    assert text.splitlines()[2:] == ["[red]x[/red]", ":smile:"]


def test_table_refuses_rows_of_the_wrong_width():
    with pytest.raises(ValueError, match="3 cells in a table of 2 columns"):
        table_text(["a", "b"], [["1", "2", "3"]])


@pytest.mark.usefixtures("fake_native")
def test_sweep_table_keeps_columns_and_numbers(tmp_path: Path):
    table = rtcc.sweep(SPEC, out=tmp_path / "s", jobs=1)
    from rtcc.sweeprun import summary_text

    lines = summary_text(table).splitlines()
    assert lines[0].split() == [
        "scenario", "controller", "trace", "runs", "util", "%", "video", "kbps", "padding",
        "kbps", "latency", "ms", "freeze", "%",
    ]  # fmt: skip
    assert set(lines[1]) == {"-", " "}
    fixed = table[table["controller"] == "fixed"]
    row = lines[2].split()
    assert row[:4] == ["<sweep>", "fixed", "2Mbps", "2"]
    assert row[4] == f"{fixed['utilization'].mean() * 100:.1f}"
