"""Controller parameters are checked against each other and against their flow, not
only each against its own range: a crafted inconsistency is refused in one line naming
``flow[i].controller.<param>``, and every controller's defaults still validate."""

from __future__ import annotations

import pytest

import rtcc
from conftest import HAVE_NATIVE, requires_native

pytestmark = requires_native

HEAD = """duration = "5s"
[link]
capacity = "2Mbps"
delay = "20ms"
[[flow]]
kind = "tcp"
[[flow]]
"""

# (controller table, extra flow fields, refused parameter, words of the reason)
CASES = [
    ('{ name = "sqp", owd_window = "20s", owd_window_long = "10s" }', "", "owd_window",
     "is above owd_window_long"),
    ('{ name = "fbra", report_interval = "100ms" }', "", "report_interval",
     "differs from the flow's feedback_interval 50ms"),
    ('{ name = "fbra", up_down = "1.8" }', "", "up_down", "is above probe_down"),
    ('{ name = "fbra", probe_down = 1.2, up_down = 1.1, stay = 1.15 }', "", "stay",
     "is above up_down"),
    ('{ name = "fbra", down_edge = 1.5 }', "", "probe_down", "is above down_edge"),
    ('{ name = "fbra", rate_window = "3s" }', "", "rate_window", "is above history"),
    ('{ name = "nada", delta = "600ms" }', "", "delta", "is above delta_max"),
    ('"nada"', 'feedback_interval = "1s"\n', "delta_max",
     "is below the flow's feedback_interval 1s"),
    ('{ name = "cross", f = 3 }', "", "f", "is above m"),
    ('{ name = "cross", probe_rtt_duration = "2s" }', "", "probe_rtt_duration",
     "is above probe_rtt_timeout"),
    ('{ name = "rrtcc", rr_interval = "20ms" }', "", "rr_interval",
     "is below the flow's feedback_interval 50ms"),
]  # fmt: skip


@pytest.mark.parametrize("controller, extra, param, reason", CASES)
def test_an_inconsistent_setting_is_refused_naming_its_parameter(controller, extra, param, reason):
    text = f"{HEAD}controller = {controller}\n{extra}"
    with pytest.raises(rtcc.ScenarioError) as info:
        rtcc.native().Simulation(text, "crafted.toml")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"crafted.toml: flow[1].controller.{param}: "), message
    assert reason in message, message


def test_fbra_follows_the_flows_feedback_interval():
    # Left out, report_interval is the flow's: the paper's 100 ms reports validate.
    text = f'{HEAD}controller = "fbra"\nfeedback_interval = "100ms"\n'
    rtcc.native().Simulation(text, "fbra.toml")
    given = f'{HEAD}controller = {{ name = "fbra", report_interval = "100ms" }}\n'
    rtcc.native().Simulation(given + 'feedback_interval = "100ms"\n', "fbra.toml")


LISTED = [c["name"] for c in rtcc.native().controllers()] if HAVE_NATIVE else []


@pytest.mark.parametrize("name", [n for n in LISTED if n != "python"])
def test_every_controllers_defaults_validate(name):
    rtcc.native().Simulation(f'{HEAD}controller = "{name}"\n', f"{name}.toml")
