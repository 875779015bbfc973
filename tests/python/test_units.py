"""Units cannot be dropped by accident from Python either: text without a unit is
refused with the units it could mean, a capacity under 10 kbps or a one-way delay over
10 s needs ``allow_extreme = true``, and sweep traces and axes follow the same rules."""

from __future__ import annotations

from pathlib import Path

import pytest

import rtcc
from conftest import SHORT_SCENARIO, one_line_error, requires_native, run_main
from rtcc.sweepspec import SweepError, load_spec

pytestmark = requires_native


def test_text_without_a_unit_is_refused_naming_the_units():
    with pytest.raises(ValueError, match=r'"3" has no unit; write "3kbps", "3Mbps", \.\.\. \(rates'):
        rtcc.native().parse_quantity("3", "rate")
    assert rtcc.native().parse_quantity(3, "rate") == 3.0  # a number keeps the base unit
    text = SHORT_SCENARIO.replace('delay = "25ms"', 'delay = "25"')
    with pytest.raises(rtcc.ScenarioError, match=r'^s\.toml: link\.delay: "25" has no unit; write "25ms"'):
        rtcc.native().Simulation(text, "s.toml")


def test_extreme_values_need_the_opt_in(capsys, tmp_path: Path):
    path = tmp_path / "s.toml"
    path.write_text(SHORT_SCENARIO.replace('capacity = "3Mbps"', "capacity = 3"), encoding="utf-8")
    code, _, err = run_main(capsys, "validate", path)
    one_line_error(
        code, err,
        "link.capacity: 3 bps (a bare number is bits/s) is under 10 kbps; write a unit, "
        "or set allow_extreme = true",
    )  # fmt: skip
    text = SHORT_SCENARIO.replace('delay = "25ms"', "delay = 25")
    path.write_text("allow_extreme = true\n" + text, encoding="utf-8")
    code, out, _ = run_main(capsys, "validate", path)
    assert code == 0 and "ok" in out


def _spec(tmp_path: Path, extra: str) -> Path:
    (tmp_path / "base.toml").write_text(SHORT_SCENARIO, encoding="utf-8")
    spec = tmp_path / "spec.toml"
    spec.write_text(f'base = "base.toml"\n{extra}', encoding="utf-8")
    return spec


def test_sweep_traces_and_axes_follow_the_same_rules(capsys, tmp_path: Path):
    with pytest.raises(SweepError, match=r'traces\[1\]: "3" has no unit; write "3kbps"'):
        load_spec(_spec(tmp_path, 'traces = ["3Mbps", "3"]\n'))
    # An axis that sets a delay in bare seconds by mistake: refused per run.
    spec = _spec(tmp_path, '[overrides]\n"link.delay" = [0.025, 25]\n')
    code, _, err = run_main(capsys, "validate", spec)
    one_line_error(code, err, "1 of 2 runs refused", "link.delay: 25 s (a bare number is seconds)")
    spec = _spec(tmp_path, 'traces = ["5kbps"]\n[overrides]\n"allow_extreme" = true\n')
    code, out, _ = run_main(capsys, "validate", spec)
    assert code == 0 and "1 run" in out
