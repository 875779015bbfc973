"""The command line, in-process, against the fake native module.

test_native.py runs the same commands as subprocesses against the real simulator.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rtcc import cli, tables

pytestmark = pytest.mark.usefixtures("fake_native")


def run(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, err: str, *needles: str) -> None:
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rtcc: error: ")
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0]


def test_run_prints_summary_and_files(capsys, short_scenario: Path, tmp_path: Path):
    out_dir = tmp_path / "res"
    code, out, err = run(capsys, "run", short_scenario, "--out", out_dir)
    assert code == 0, err
    assert err == ""  # no TTY: no progress bar
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["flow", "controller", "video"]
    row = lines[2].split()
    assert row[:5] == ["call", "fixed", "1,000", "0", "990"]
    assert row[5] == "33.3"  # utilization as a percentage
    assert "link: capacity 3,000 kbps mean, utilization 50.0 %" in out
    assert "simulated 10.0 s in 0.010 s (1,000" in out
    assert f"results: {out_dir}" in out
    assert "report.html" in out
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["scenario"] == "fixed-1mbps"


def test_run_default_out_dir_and_demo(capsys, monkeypatch, tmp_path: Path, short_scenario: Path):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "run", "--no-plots", "--quiet")
    assert code == 0
    assert out == ""
    assert (tmp_path / "results" / "demo" / "summary.json").exists()
    assert not (tmp_path / "results" / "demo" / "rates.png").exists()
    code, _, _ = run(capsys, "run", short_scenario, "--seed", "11", "-q")
    assert code == 0
    summary = json.loads((tmp_path / "results" / "fixed-1mbps" / "summary.json").read_text())
    assert summary["seed"] == 11


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["run", "missing.toml"], ["missing.toml", "no such file"]),
        (["run", "."], [".: is a directory"]),
        (["validate", "missing.toml"], ["missing.toml"]),
        (["run", "--seed", "abc"], ["--seed", "abc"]),
        (["run", "--seed", "-1"], ["--seed"]),
        (["run", "--seed", str(2**64)], ["--seed"]),
        (["bench", "--workload", "nope"], ["--workload"]),
        (["bench", "--repeat", "0"], ["--repeat"]),
        (["frobnicate"], ["frobnicate"]),
        ([], ["missing command"]),
        (["run", "--colour"], ["--colour"]),
    ],
)
def test_errors_are_one_line(capsys, args, needles):
    code, out, err = run(capsys, *args)
    assert_one_line_error(code, err, *needles)
    assert out == ""


def test_a_bare_rtcc_and_the_docstring_name_every_command(capsys):
    code, _, err = run(capsys)
    listed = err.split("missing command (")[1].split(")")[0].split(", ")
    commands = [
        "run", "live", "relay", "calibrate-encoder", "validate", "controllers", "encoders", "traces", "bench",
        "fairness", "sweep", "reproduce", "rfc8867", "report", "query",
    ]  # fmt: skip
    assert code == 2 and listed == commands
    first = " ".join((cli.__doc__ or "").split(".")[0].split())
    assert first.endswith(": " + ", ".join(commands))


def test_non_utf8_scenario(capsys, tmp_path: Path):
    bad = tmp_path / "latin.toml"
    bad.write_bytes(b'name = "d\xe9bit"\n')
    code, _, err = run(capsys, "run", bad)
    assert_one_line_error(code, err, str(bad), "UTF-8")


def test_scenario_error_is_one_line(capsys, tmp_path: Path):
    bad = tmp_path / "noflows.toml"
    bad.write_text('name = "x"\nduration = "1s"\n')
    code, _, err = run(capsys, "run", bad, "--out", tmp_path / "o")
    assert_one_line_error(code, err, str(bad), "flow")
    assert not (tmp_path / "o").exists()


def test_out_dir_that_is_a_file(capsys, short_scenario: Path, tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run(capsys, "run", short_scenario, "--out", blocker / "sub")
    assert_one_line_error(code, err, "file")


def test_debug_env_shows_traceback(monkeypatch):
    monkeypatch.setenv("RTCC_DEBUG", "1")
    with pytest.raises(FileNotFoundError):
        cli.main(["run", "missing.toml"])


def test_validate(capsys, short_scenario: Path, tmp_path: Path):
    code, out, err = run(capsys, "validate", short_scenario)
    assert code == 0, err
    assert out.strip() == f"{short_scenario}: ok (fixed-1mbps, 10 s, 1 flow)"
    bad = tmp_path / "bad.toml"
    bad.write_text('duration = "1s"\n')
    code, out, err = run(capsys, "validate", short_scenario, bad)
    assert code == 2
    assert out.count(": ok") == 1
    assert_one_line_error(code, err, "bad.toml")


def test_controllers_and_encoders(capsys):
    code, out, _ = run(capsys, "controllers")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "controllers (controller = ...)"
    assert lines[2] == "fixed: constant target bitrate"
    assert lines[3].split() == ["rate", "1Mbps", ">", "0bps", "target", "bitrate"]
    assert "gcc: Google Congestion Control" in out
    assert "encoders (encoder = ...)" in out and "ideal: frames" in out
    code, out, _ = run(capsys, "controllers", "--json")
    data = json.loads(out)
    assert data["controllers"][0]["params"][0]["name"] == "rate"
    assert data["encoders"][0]["name"] == "ideal"
    code, out, _ = run(capsys, "encoders")
    assert out.startswith("ideal: ")
    code, out, _ = run(capsys, "encoders", "--json")
    assert json.loads(out)[0]["name"] == "ideal"


def test_bench(capsys):
    code, out, _ = run(capsys, "bench", "--repeat", "2")
    assert code == 0
    lines = out.splitlines()
    fixed = next(line for line in lines if line.startswith("fixed"))
    gcc = next(line for line in lines if line.startswith("gcc"))
    assert fixed.endswith("PASS") and "25,000" in fixed
    assert gcc.endswith("BELOW TARGET")
    assert "best of 2 runs" in out
    code, _, _ = run(capsys, "bench", "--strict")
    assert code == 1
    code, out, _ = run(capsys, "bench", "--workload", "fixed", "--strict")
    assert code == 0 and "gcc" not in out


def _fake_ns3(tmp_path: Path, body: str) -> Path:
    """An executable standing in for a Python with the ns3 wheel: it records its
    arguments and runs ``body`` (shell)."""
    python = tmp_path / "ns3-python"
    python.write_text(f'#!/bin/sh\necho "$@" > "{tmp_path}/ns3-args"\n{body}\n', encoding="utf-8")
    python.chmod(0o755)
    return python


def test_bench_tcp_against_ns3(capsys, tmp_path: Path):
    # The wheel's loader chatters on stderr; only run_s= and goodput_mbps= count.
    python = _fake_ns3(
        tmp_path,
        "echo '[runStaticInitializersOnce]: Failed to materialize symbols' >&2\n"
        "echo run_s=6.000\necho goodput_mbps=9.567\necho sim_s=120 speedup=20.0x",
    )
    script = tmp_path / "ns3_tcp.py"
    script.write_text("# stand-in\n", encoding="utf-8")
    code, out, err = run(
        capsys,
        "bench",
        "--workload",
        "tcp",
        "--repeat",
        "2",
        "--ns3",
        python,
        "--ns3-script",
        script,
    )
    assert code == 0, err
    header, _, row = out.splitlines()[:3]
    assert "bare ns-3 wall s" in header and "rtcc faster by" in header
    # fake rtcc: 120 s in 0.04 s (3,000x); ns-3: 6 s, so rtcc is 150x faster.
    assert row.split() == [
        "tcp",
        "120",
        "0.040",
        "3,000",
        "1,000",
        "PASS",
        "9.50",
        "6.000",
        "9.57",
        "150.0x",
    ]
    assert "best of 2 runs; 1 Cubic flow, 10 Mbps / 20 ms" in out
    assert (tmp_path / "ns3-args").read_text().split() == [str(script), "120", "--prr-rfc"]
    # Without --ns3, rtcc alone; `all` includes tcp.
    code, out, _ = run(capsys, "bench", "--workload", "tcp", "--strict")
    assert code == 0 and "ns-3" not in out and "PASS" in out
    code, out, _ = run(capsys, "bench", "--repeat", "1")
    assert any(line.startswith("tcp ") and line.endswith("PASS") for line in out.splitlines())


def test_bench_tcp_default_script_is_the_repository_one(capsys, tmp_path: Path):
    from rtcc import benchtcp

    assert (
        benchtcp.default_script() == Path(__file__).resolve().parents[2] / "scripts" / "ns3_tcp.py"
    )
    python = _fake_ns3(tmp_path, "echo run_s=1.2\necho goodput_mbps=9.5")
    code, out, err = run(capsys, "bench", "--workload", "tcp", "--repeat", "1", "--ns3", python)
    assert code == 0, err
    assert out.splitlines()[2].endswith("30.0x")
    assert (tmp_path / "ns3-args").read_text().split() == [
        str(benchtcp.default_script()),
        "120",
        "--prr-rfc",
    ]


def test_bench_tcp_ns3_failures_are_one_line(capsys, tmp_path: Path):
    python = _fake_ns3(
        tmp_path,
        "echo 'noise' >&2\n"
        "echo 'ns3_tcp.py: cannot import ns-3 (pip install ns3): no module' >&2\nexit 1",
    )
    code, _, err = run(capsys, "bench", "--workload", "tcp", "--repeat", "1", "--ns3", python)
    assert_one_line_error(code, err, "ns-3", "exit status 1", "cannot import ns-3")
    python = _fake_ns3(tmp_path, "echo hello")
    code, _, err = run(capsys, "bench", "--workload", "tcp", "--repeat", "1", "--ns3", python)
    assert_one_line_error(code, err, "ns-3", "no run_s=/goodput_mbps=", "hello")
    code, _, err = run(capsys, "bench", "--workload", "tcp", "--ns3", tmp_path / "no-python")
    assert_one_line_error(code, err, "ns-3", "no-python")
    missing = tmp_path / "nowhere.py"
    code, _, err = run(
        capsys, "bench", "--workload", "tcp", "--ns3", python, "--ns3-script", missing
    )
    assert_one_line_error(code, err, str(missing), "ns-3 TCP script not found")


def test_format_number_scales_and_marks_missing_values():
    assert tables.format_number(0.4712, 100, 1) == "47.1"
    assert tables.format_number(3129.0) == "3,129"
    assert [tables.format_number(v) for v in (None, float("nan"), "7")] == ["-", "-", "-"]


def test_bench_flows_runs_in_rounds_and_keeps_each_counts_best(monkeypatch):
    """Repeats go round all the flow counts, so the single-flow reference and each count's
    best come from the same stretch of the machine; the ratio is of the bests."""
    import rtcc
    from rtcc import benchflows

    calls: list[str] = []
    # A slow stretch in the second round: a count-by-count order would time every
    # repeat of one count in it.
    slow = {4, 5}

    def bench(workload: str) -> dict[str, float]:
        calls.append(workload)
        n = int(workload.removeprefix("flows-"))
        ns = (400.0 if n == 1 else 700.0) * (3.0 if len(calls) - 1 in slow else 1.0)
        packets = 1000.0 * n
        return {
            "wall_s": ns * packets / 1e9,
            "speedup": 1.0,
            "ns_per_packet": ns,
            "rss_per_flow_bytes": 1e3,
            "heap_per_flow_bytes": 2e3,
        }

    monkeypatch.setattr(rtcc, "bench", bench)
    rows = benchflows.run(counts=(1, 10, 1000), repeat=2)
    assert calls == ["flows-1", "flows-10", "flows-1000"] * 2
    assert [r["ns_per_packet"] for r in rows] == [400.0, 700.0, 700.0]
    assert [r["cost_ratio"] for r in rows] == [1.0, 1.75, 1.75]
    assert rows[0]["heap_per_flow_kb"] == 2.0

