"""`rtcc validate` checks each file as what it is: a scenario, or a sweep spec (every
run's scenario, runs that differ only by seed once); a file that is neither says so."""

from __future__ import annotations

from pathlib import Path

from conftest import SHORT_SCENARIO, one_line_error, requires_native, run_main

pytestmark = requires_native


def _files(tmp_path: Path, spec: str) -> Path:
    (tmp_path / "base.toml").write_text(SHORT_SCENARIO, encoding="utf-8")
    path = tmp_path / "spec.toml"
    path.write_text(spec, encoding="utf-8")
    return path


def test_a_sweep_spec_is_validated_run_by_run(capsys, tmp_path: Path):
    spec = _files(
        tmp_path,
        'name = "grid"\nbase = "base.toml"\ncontrollers = ["gcc", "copa"]\n'
        'traces = ["3Mbps", { kind = "pulse", high = "3Mbps", low = "1Mbps", every = "2s" }]\n'
        "seeds = 3\n",
    )
    code, out, err = run_main(capsys, "validate", spec, tmp_path / "base.toml")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"{spec}: ok (sweep grid, 12 runs, 4 distinct scenarios)"
    assert lines[1].startswith(f"{tmp_path / 'base.toml'}: ok (fixed-1mbps, 10 s, 1 flow)")


def test_a_refused_run_is_named(capsys, tmp_path: Path):
    spec = _files(tmp_path, 'base = "base.toml"\ncontrollers = ["gcc", "nosuch"]\n')
    code, _, err = run_main(capsys, "validate", spec)
    line = one_line_error(code, err, f"{spec}: 1 of 2 runs refused; the first, run 1 ")
    assert "controller=nosuch" in line and "base.toml: flow[0].controller" in line
    # The spec's own fields are checked as `rtcc sweep` checks them.
    spec.write_text('base = "base.toml"\nseeds = [-1]\n', encoding="utf-8")
    code, _, err = run_main(capsys, "validate", spec)
    one_line_error(code, err, "seeds[0]")
    spec.write_text('controllers = ["gcc"]\n', encoding="utf-8")
    code, _, err = run_main(capsys, "validate", spec)
    one_line_error(code, err, "base: missing")


def test_a_file_that_is_neither_says_so(capsys, tmp_path: Path):
    path = tmp_path / "other.toml"
    path.write_text('title = "not rtcc"\n[owner]\nname = "x"\n', encoding="utf-8")
    code, _, err = run_main(capsys, "validate", path)
    one_line_error(
        code, err, f"{path}: neither a scenario (no duration, [link] or [[flow]]) nor a sweep spec"
    )
