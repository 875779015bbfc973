"""A generated bad-input corpus: scenarios, traces, sweep specs, results folders,
datasets and CLI argument lists, each run through ``rtcc.cli.main`` in-process against
the compiled simulator (Python policies, which have no command, through ``rtcc.app``).
Every bad case must be refused with exit status 2 and exactly one stderr line that names
the field, flag or file at fault, with no terminal control character in it -- no
traceback, no panic, no hang. The accepted cases (a trace with a UTF-8 byte-order mark,
short-lived flows, a 100 Gbps source, ...) must give a right result: their ``check``
reads what the command wrote. A few cases run again as child processes of the
installed ``rtcc``, where an abort (death by a signal) shows.

Nothing here is committed as files: the cases are built in code below.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from conftest import policy_scenario, requires_native
from rtcc import cli, safeio

pytestmark = requires_native

# Rust/serde type names mean nothing to a user ("expected u64", "untagged enum Quantity").
JARGON = re.compile(r"\b[iuf](8|16|32|64|128|size)\b|untagged enum|\bvariant of\b")
DIR = object()  # a files-dict value: make a directory, not a file
FIFO = object()  # a files-dict value: make a named pipe
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")  # would recolour or move a terminal
CASE_TIMEOUT_S = 20


@dataclass(frozen=True)
class Link:
    """A files-dict value: a symbolic link to ``target``."""

    target: str


@dataclass(frozen=True)
class Sparse:
    """A files-dict value: a file of ``size`` zero bytes that takes no disk."""

    size: int


@dataclass(frozen=True)
class Case:
    id: str
    args: tuple[str, ...]  # "{tmp}" becomes the case's folder
    files: dict[str, object] = field(default_factory=dict)  # name -> str | bytes | DIR
    needles: tuple[str, ...] = ()  # each must appear in the one error line
    ok: bool = False  # the input is valid and must be accepted
    xfail: str | None = None  # a known defect, recorded rather than hidden
    # For an accepted case: reads the case's folder and stdout; an AssertionError is a
    # wrong result.
    check: Callable[[Path, str], None] | None = None
    # Held around the command: another reproduction's lock, a run to read.
    setup: Callable[[Path], contextlib.AbstractContextManager[Any]] | None = None
    # Instead of the CLI (Python policies have no command): a ValueError is its refusal.
    call: Callable[[Path], object] | None = None


# --- scenarios -------------------------------------------------------------------------

HEAD = """\
name = "corpus"
duration = "1s"
seed = 3
"""
LINK = """\
[link]
capacity = "3Mbps"
delay = "20ms"
queue = "unlimited"
"""
FLOWS = {
    "video": """\
[[flow]]
name = "call"
controller = { name = "fixed", rate = "500kbps" }
encoder = "ideal"
""",
    "tcp": """\
[[flow]]
name = "bulk"
kind = "tcp"
cc = "cubic"
""",
    "web": """\
[[flow]]
name = "browse"
kind = "web"
""",
    "udp": """\
[[flow]]
name = "cbr"
kind = "udp"
rate = "500kbps"
""",
}


def _merge(base: str, extra: str) -> str:
    """``base`` with ``extra``'s lines, each replacing the base line of the same key."""
    keys = {line.split("=")[0].strip() for line in extra.splitlines() if "=" in line}
    kept = [
        line for line in base.splitlines(keepends=True) if line.split("=")[0].strip() not in keys
    ]
    return "".join(kept) + extra


def scenario(top: str = "", link: str = "", flow: str = "", kind: str = "video") -> str:
    """A valid one-flow scenario with lines added to (or replacing lines of) the top
    level, [link] and [[flow]]."""
    return _merge(HEAD, top) + _merge(LINK, link) + _merge(FLOWS[kind], flow)


WRONG_TYPES = {"table": "{ bogus = 1 }", "bool": "true", "array": "[1, 2]"}
NOT_A_NUMBER = {"word": '"abc"', "nan": "nan", "inf": "inf", "nan-text": '"NaN"'}
# Quantity-valued fields (durations, rates, sizes) and what is out of range for them.
DURATION = {"negative": '"-5ms"', "huge": '"1e300s"', "neg-bare": "-1", "bad-unit": '"5parsecs"'}
RATE = {"negative": '"-1Mbps"', "huge": '"1e300bps"', "zero": '"0bps"', "bad-unit": '"5Mhz"'}
SIZE = {"negative": '"-1500B"', "huge": '"1e300B"', "zero": '"0B"', "bad-unit": '"5furlongs"'}

TOP_FIELDS = {
    "name": ({}, WRONG_TYPES | {"number": "5"}),
    "duration": ({}, WRONG_TYPES | NOT_A_NUMBER | DURATION | {"zero": '"0s"'}),
    "seed": ({}, WRONG_TYPES | {"word": '"abc"', "negative": "-1", "float": "1.5"}),
    "record": ({}, {"bool": "true", "array": "[1]", "string": '"yes"', "unknown": "{ bogus = 1 }"}),
}
LINK_FIELDS = {
    "capacity": WRONG_TYPES | NOT_A_NUMBER | RATE | {"unknown-kind": '{ kind = "wobble" }'},
    "delay": WRONG_TYPES | NOT_A_NUMBER | DURATION,
    "reverse_delay": WRONG_TYPES | NOT_A_NUMBER | DURATION,
    "queue": WRONG_TYPES | {"negative": '"-5pkt"', "word": '"abc"', "zero-pkt": '"0pkt"',
                            "one-byte": '"1B"', "unknown-kind": '{ kind = "red" }'},
    "loss": WRONG_TYPES | NOT_A_NUMBER | {"negative": "-0.1", "above-one": "1.5",
                                          "unknown-kind": '{ kind = "burst" }'},
    "reverse_loss": WRONG_TYPES | NOT_A_NUMBER | {"negative": "-0.1", "above-one": "2.0"},
    "reverse_capacity": WRONG_TYPES | NOT_A_NUMBER | RATE,
    "jitter": WRONG_TYPES | NOT_A_NUMBER | DURATION,
}  # fmt: skip
VIDEO_FIELDS = {
    "name": WRONG_TYPES | {"number": "5", "empty": '""'},
    "controller": WRONG_TYPES | {"unknown": '"nope"', "number": "5",
                                 "unknown-param": '{ name = "gcc", bogus = 1 }'},
    "encoder": WRONG_TYPES | {"unknown": '"nope"', "unknown-kind": '{ kind = "nope" }'},
    "source": WRONG_TYPES | {"unknown": '"nope"', "number": "5"},
    "start": WRONG_TYPES | NOT_A_NUMBER | {"negative": '"-1s"', "huge": '"1e300s"'},
    "stop": WRONG_TYPES | NOT_A_NUMBER | {"negative": '"-1s"'},
    "fps": WRONG_TYPES | NOT_A_NUMBER | {"zero": "0", "negative": "-30", "huge": "1e9"},
    "mtu": WRONG_TYPES | NOT_A_NUMBER | SIZE,
    "access_delay": WRONG_TYPES | NOT_A_NUMBER | DURATION,
    "feedback_interval": WRONG_TYPES | NOT_A_NUMBER | DURATION | {"zero": '"0ms"'},
    "start_rate": WRONG_TYPES | NOT_A_NUMBER | RATE,
    "min_rate": WRONG_TYPES | {"word": '"abc"', "negative": '"-1kbps"'},
    "max_rate": WRONG_TYPES | NOT_A_NUMBER | RATE,
    "caps": WRONG_TYPES | {"unknown": '"nope"'},
    "resolution": WRONG_TYPES | {"unknown": '"999p"', "number": "720"},
    "nack": {"table": "{ bogus = 1 }", "string": '"yes"', "number": "1"},
    "nack_max_age": WRONG_TYPES | NOT_A_NUMBER | DURATION,
    "keyframe_wait": WRONG_TYPES | NOT_A_NUMBER | DURATION,
    "fec": {"array": "[1]", "string": '"yes"', "unknown": "{ bogus = 1 }", "zero-group":
            "{ group = 0 }"},
    "audio": {"array": "[1]", "string": '"yes"', "unknown": "{ bogus = 1 }"},
    "queue_time_limit": WRONG_TYPES | {"word": '"abc"', "negative": '"-2s"'},
    "pacer_burst": WRONG_TYPES | {"word": '"abc"', "negative": '"-2ms"'},
    "cwnd_pushback": {"table": "{ bogus = 1 }", "string": '"yes"', "number": "1"},
    "playout": {"unknown": '"fast"', "number": "5", "no-kind": '{ decode_time = "1ms" }',
                "bad-kind": '{ kind = "vlc" }',
                "negative": '{ kind = "webrtc", decode_time = "-1ms" }',
                "min-above-max": '{ kind = "webrtc", min_delay = "2s", max_delay = "1s" }',
                "unknown-param": '{ kind = "webrtc", bogus = 1 }'},
    "skip_threshold": WRONG_TYPES | {"word": '"abc"', "negative": '"-2ms"'},
    "content": WRONG_TYPES | {"unknown": '"nope"', "missing-file": '{ file = "nope.y4m" }'},
}  # fmt: skip
TCP_FIELDS = {
    "cc": WRONG_TYPES | {"unknown": '"vegas"', "number": "5"},
    "sack": {"table": "{ bogus = 1 }", "string": '"yes"', "number": "1"},
    "initial_window": WRONG_TYPES | NOT_A_NUMBER | {"zero": "0", "negative": "-1",
                                                    "huge": "1000000000000"},
    "direction": WRONG_TYPES | {"unknown": '"sideways"'},
    "start": WRONG_TYPES | {"negative": '"-1s"'},
    "access_delay": WRONG_TYPES | {"negative": '"-1ms"'},
}  # fmt: skip
WEB_FIELDS = {
    "object_size": WRONG_TYPES | {"unknown": '"zipf"'},
    "object_mean": WRONG_TYPES | {"negative": '"-40kB"', "zero": '"0B"'},
    "object_min": WRONG_TYPES | {"negative": '"-40kB"'},
    "object_max": WRONG_TYPES | {"negative": '"-40kB"'},
    "object_sigma": WRONG_TYPES | {"negative": "-1.0", "nan": "nan"},
    "object_shape": WRONG_TYPES | {"negative": "-1.2", "zero": "0.0"},
    "think_time": WRONG_TYPES | NOT_A_NUMBER | {"negative": '"-10s"'},
    "start_idle": {"table": "{ bogus = 1 }", "string": '"yes"', "number": "1"},
}  # fmt: skip
UDP_FIELDS = {
    "rate": WRONG_TYPES | NOT_A_NUMBER | RATE,
    "packet_size": WRONG_TYPES | NOT_A_NUMBER | SIZE,
    "on_time": WRONG_TYPES | {"negative": '"-1s"', "zero": '"0s"'},  # with off_time = "1s"
    "off_time": WRONG_TYPES | {"negative": '"-1s"'},  # with on_time = "1s"
}  # fmt: skip
KIND_FIELDS = {"video": VIDEO_FIELDS, "tcp": TCP_FIELDS, "web": WEB_FIELDS, "udp": UDP_FIELDS}
# Fields that belong to another kind of flow.
FOREIGN = {
    "video": ["cc", "rate", "think_time", "object_size"],
    "tcp": ["rate", "fps", "controller", "object_size", "packet_size"],
    "web": ["rate", "fps", "encoder", "on_time"],
    "udp": ["cc", "fps", "controller", "think_time", "sack"],
}
FOREIGN_VALUE = {"cc": '"reno"', "rate": '"1Mbps"', "think_time": '"1s"', "direction":
                 '"forward"', "fps": "30", "controller": '"gcc"', "object_size": '"uniform"',
                 "packet_size": '"1000B"', "encoder": '"ideal"', "on_time": '"1s"',
                 "sack": "true"}  # fmt: skip


# Known defects, recorded here rather than hidden: case id -> what is wrong.
KNOWN: dict[str, str] = {}


def validate(name: str, text: str | bytes, *needles: str, xfail: str | None = None) -> Case:
    return Case(
        name,
        ("validate", "{tmp}/s.toml"),
        {"s.toml": text},
        ("s.toml", *needles),
        xfail=xfail or KNOWN.get(name),
    )


def scenario_cases() -> Iterator[Case]:
    for key, (_, values) in TOP_FIELDS.items():
        for what, value in values.items():
            yield validate(f"scenario-{key}-{what}", scenario(top=f"{key} = {value}\n"), key)
    for key, values in LINK_FIELDS.items():
        for what, value in values.items():
            yield validate(f"link-{key}-{what}", scenario(link=f"{key} = {value}\n"), key)
    for kind, fields in KIND_FIELDS.items():
        for key, values in fields.items():
            partner = {"on_time": 'off_time = "1s"\n', "off_time": 'on_time = "1s"\n'}
            for what, value in values.items():
                text = scenario(flow=partner.get(key, "") + f"{key} = {value}\n", kind=kind)
                yield validate(
                    f"flow-{kind}-{key}-{what}",
                    text,
                    f"flow[0].{key}",
                    xfail=KNOWN.get(f"flow-{kind}-{key}-{what}"),
                )
        for key in FOREIGN[kind]:
            text = scenario(flow=f"{key} = {FOREIGN_VALUE[key]}\n", kind=kind)
            yield validate(f"flow-{kind}-foreign-{key}", text, f"flow[0].{key}")
        yield validate(
            f"flow-{kind}-unknown-field", scenario(flow="bogus = 1\n", kind=kind), "bogus"
        )
    yield validate("scenario-unknown-field", "bogus = 1\n" + scenario(), "bogus")
    yield validate("link-unknown-field", scenario(link="bogus = 1\n"), "bogus")
    yield validate("flow-unknown-kind", scenario(flow='kind = "quic"\n'), "kind")
    yield validate("flow-kind-number", scenario(flow="kind = 5\n"), "kind")
    yield validate(
        "tcp-reverse-without-reverse-capacity",
        scenario(flow='direction = "reverse"\n', kind="tcp"),
        "reverse_capacity",
    )
    yield validate(
        "reverse-queue-without-reverse-capacity",
        scenario(link='reverse_queue = "10pkt"\n'),
        "reverse_queue",
    )
    yield validate("stop-before-start", scenario(flow='start = "0.5s"\nstop = "0.2s"\n'), "stop")
    yield validate(
        "min-rate-above-max-rate",
        scenario(flow='min_rate = "5Mbps"\nmax_rate = "1Mbps"\n'),
        "rate",
    )
    yield validate(
        "start-rate-above-max-rate",
        scenario(flow='start_rate = "10Mbps"\nmax_rate = "1Mbps"\n'),
        "start_rate",
    )
    yield validate("duplicate-flow-names", scenario() + FLOWS["video"], "name")
    yield validate("no-flows", HEAD + LINK, "flow")
    yield validate("no-link", HEAD + FLOWS["video"], "link")
    yield validate("flow-not-an-array", HEAD + LINK + "flow = 5\n", "flow")
    yield validate("link-not-a-table", HEAD + 'link = "3Mbps"\n' + FLOWS["video"], "link")
    yield validate("toml-syntax-unclosed-string", 'name = "oops\n' + scenario())
    yield validate("toml-syntax-missing-value", "duration =\n" + scenario())
    yield validate("toml-syntax-duplicate-key", 'duration = "2s"\n' + scenario(), "duration")
    yield validate("toml-deep-nesting", "x = " + "[" * 400 + "]" * 400 + "\n" + scenario())
    yield validate("toml-deep-tables", "x = " + "{ a = " * 400 + "1" + " }" * 400 + "\n")
    yield validate("empty-file", "")
    yield validate("only-comments", "# nothing here\n")
    yield validate("non-utf8-bytes", b'name = "\xff\xfe\xfa"\n' + scenario().encode())
    yield validate("binary-garbage", bytes(range(256)) * 4)
    yield validate("nul-bytes", b"\x00" * 64)
    yield Case(
        "capacity-pulse-missing-low",
        ("validate", "{tmp}/s.toml"),
        {
            "s.toml": scenario().replace(
                '"3Mbps"', '{ kind = "pulse", high = "3Mbps", every = "1s" }'
            )
        },
        ("s.toml", "low"),
    )
    yield validate(
        "capacity-step-unsorted",
        scenario().replace(
            '"3Mbps"', '{ kind = "step", steps = [["5s", "1Mbps"], ["1s", "2Mbps"]] }'
        ),
        "steps",
    )
    yield validate(
        "capacity-square-duty-above-one",
        scenario().replace(
            '"3Mbps"',
            '{ kind = "square", high = "3Mbps", low = "1Mbps", period = "2s", duty = 1.5 }',
        ),
        "duty",
    )


# --- traces ----------------------------------------------------------------------------


def trace_scenario(file: str, extra: str = "") -> str:
    return scenario().replace('"3Mbps"', f'{{ kind = "trace", file = "{file}"{extra} }}')


def trace_case(
    name: str, content: object, *needles: str, file: str = "t.trace", extra: str = "",
    ok: bool = False, xfail: str | None = None,
) -> Case:  # fmt: skip
    files: dict[str, object] = {"s.toml": trace_scenario(file, extra)}
    if content is not None:
        files[file] = content
    return Case(name, ("validate", "{tmp}/s.toml"), files, needles, ok=ok, xfail=xfail)


def trace_cases() -> Iterator[Case]:
    yield trace_case("trace-empty", "", "t.trace")
    yield trace_case("trace-blank-lines", "\n\n\n", "t.trace")
    yield trace_case("trace-word", "abc\n", "t.trace")
    yield trace_case("trace-word-after-numbers", "1\n2\nthree\n", "t.trace")
    yield trace_case("trace-float", "1.5\n2.5\n", "t.trace")
    yield trace_case("trace-negative", "-5\n1\n", "t.trace")
    yield trace_case("trace-decreasing", "5\n3\n1\n", "t.trace")
    yield trace_case("trace-huge-number", "1\n" + "9" * 40 + "\n", "t.trace")
    yield trace_case("trace-nan", "nan\n", "t.trace")
    yield trace_case("trace-all-zero", "0\n0\n0\n", "t.trace")
    yield trace_case("trace-non-utf8", b"1\n\xff\xfe\n3\n", "t.trace")
    yield trace_case("trace-nul-bytes", b"\x00" * 32, "t.trace")
    yield trace_case("trace-missing", None, "t.trace")
    yield trace_case("trace-directory", DIR, "t.trace")
    yield trace_case("trace-dev-zero", None, "/dev/zero", file="/dev/zero")
    yield trace_case("trace-scale-zero", "1\n2\n", "scale", extra=", scale = 0")
    yield trace_case("trace-scale-negative", "1\n2\n", "scale", extra=", scale = -1.0")
    yield trace_case("trace-scale-nan", "1\n2\n", "scale", extra=", scale = nan")
    yield trace_case(
        "trace-scale-string",
        "1\n2\n",
        "scale",
        "link.capacity.scale",
        extra=', scale = "big"',
    )
    yield trace_case("trace-offset-word", "1\n2\n", "offset", extra=', offset = "abc"')
    yield trace_case("trace-offset-negative", "1\n2\n", "offset", extra=', offset = "-5s"')
    yield Case(
        "trace-file-number",
        ("validate", "{tmp}/s.toml"),
        {"s.toml": scenario().replace('"3Mbps"', '{ kind = "trace", file = 5 }')},
        ("link.capacity.file",),
    )
    yield trace_case("trace-unknown-field", "1\n2\n", "bogus", extra=", bogus = 1")
    # A UTF-8 byte-order mark (Windows editors write one) is not an error.
    yield trace_case("trace-bom-accepted", "\ufeff1\n2\n3\n", ok=True)


# --- sweep specs -----------------------------------------------------------------------

SPEC_BASE = """\
[base]
name = "base"
duration = "1s"
link = { capacity = "2Mbps", delay = "20ms", queue = "unlimited" }

[[base.flow]]
name = "call"
controller = { name = "fixed", rate = "300kbps" }
encoder = "ideal"
"""


def sweep_case(
    name: str, top: str, *needles: str, tail: str = "", xfail: str | None = None
) -> Case:
    files = {"spec.toml": top + SPEC_BASE + tail}
    args = ("sweep", "{tmp}/spec.toml", "--out", "{tmp}/out", "--jobs", "1", "-q")
    return Case(name, args, files, ("spec.toml", *needles), xfail=xfail)


def sweep_cases() -> Iterator[Case]:
    yield sweep_case("sweep-unknown-field", "bogus = 1\n", "bogus")
    yield sweep_case("sweep-seeds-zero", "seeds = 0\n", "seeds")
    yield sweep_case("sweep-seeds-negative", "seeds = -3\n", "seeds")
    yield sweep_case("sweep-seeds-float", "seeds = 2.5\n", "seeds")
    yield sweep_case("sweep-seeds-bool-list", "seeds = [true]\n", "seeds")
    yield sweep_case("sweep-seeds-negative-list", "seeds = [1, -1]\n", "seeds")
    yield sweep_case("sweep-seeds-empty-list", "seeds = []\n", "seeds")
    yield sweep_case("sweep-too-many-runs", "seeds = 100000000\n", "runs")
    yield sweep_case(
        "sweep-too-many-runs-by-axes",
        "",
        "runs",
        tail="[overrides]\n" + "".join(f'"link.x{i}" = {list(range(30))}\n' for i in range(5)),
    )
    yield sweep_case("sweep-controllers-empty", "controllers = []\n", "controllers")
    yield sweep_case("sweep-controllers-number", "controllers = [5]\n", "controllers")
    yield sweep_case("sweep-controllers-unknown", 'controllers = ["nope"]\n', "nope")
    yield sweep_case("sweep-traces-no-match", 'traces = ["nothing*.trace"]\n', "traces")
    yield sweep_case("sweep-traces-number", "traces = [5]\n", "traces")
    yield sweep_case("sweep-flows-bad", 'flows = "some"\n', "flows")
    yield sweep_case("sweep-convergence-string", 'convergence = "yes"\n', "convergence")
    yield sweep_case("sweep-series-number", "series = 1\n", "series")
    yield sweep_case("sweep-steady-window-negative", "steady_window_s = -1\n", "steady_window_s")
    yield sweep_case("sweep-name-traversal", 'name = "../../x"\n', "name")
    yield sweep_case("sweep-name-number", "name = 5\n", "name")
    yield sweep_case(
        "sweep-controller-flows-missing", "controller_flows = [5]\n", "controller_flows"
    )
    yield sweep_case(
        "sweep-controller-flows-string", 'controller_flows = "0"\n', "controller_flows"
    )
    yield sweep_case("sweep-overrides-not-table", "overrides = 5\n", "overrides")
    yield sweep_case(
        "sweep-overrides-empty-axis", "", "link.delay", tail='[overrides]\n"link.delay" = []\n'
    )
    yield sweep_case(
        "sweep-override-unknown-axis", "", "bogus", tail='[overrides]\n"link.bogus" = [1, 2]\n'
    )
    yield sweep_case(
        "sweep-override-bad-value", "", "delay", tail='[overrides]\n"link.delay" = ["abc"]\n'
    )
    yield sweep_case(
        "sweep-override-negative", "", "delay", tail='[overrides]\n"link.delay" = ["-5ms"]\n'
    )
    yield sweep_case(
        "sweep-override-bad-scalar", "", "fps", tail='[overrides]\n"flow.*.fps" = "many"\n'
    )
    yield sweep_case(
        "sweep-override-no-such-flow", "", "flow.5", tail='[overrides]\n"flow.5.fps" = [10, 20]\n'
    )
    yield sweep_case(
        "sweep-override-list-without-index", "", "flow", tail='[overrides]\n"flow.fps" = [10]\n'
    )
    yield sweep_case(
        "sweep-override-empty-part",
        "",
        "link..delay",
        tail='[overrides]\n"link..delay" = ["5ms"]\n',
    )
    yield Case(
        "sweep-base-missing",
        ("sweep", "{tmp}/spec.toml", "-q"),
        {"spec.toml": "seeds = 1\n"},
        ("spec.toml", "base"),
    )
    yield Case(
        "sweep-base-number",
        ("sweep", "{tmp}/spec.toml", "-q"),
        {"spec.toml": "base = 5\n"},
        ("spec.toml", "base"),
    )
    yield Case(
        "sweep-base-missing-file",
        ("sweep", "{tmp}/spec.toml", "-q"),
        {"spec.toml": 'base = "nope.toml"\n'},
        ("spec.toml", "base", "nope.toml"),
    )
    yield Case(
        "sweep-base-no-flows",
        ("sweep", "{tmp}/spec.toml", "--out", "{tmp}/out", "-q"),
        {"spec.toml": '[base]\nduration = "1s"\n'},
        ("flow",),
    )
    yield Case(
        "sweep-empty-file",
        ("sweep", "{tmp}/spec.toml", "-q"),
        {"spec.toml": ""},
        ("spec.toml", "base"),
    )
    yield Case(
        "sweep-bad-toml",
        ("sweep", "{tmp}/spec.toml", "-q"),
        {"spec.toml": "seeds = [1,\n"},
        ("spec.toml",),
    )
    yield Case(
        "sweep-deep-nesting",
        ("sweep", "{tmp}/spec.toml", "-q"),
        {"spec.toml": "x = " + "[" * 400 + "]" * 400 + "\n"},
        ("spec.toml",),
    )
    yield Case(
        "sweep-non-utf8",
        ("sweep", "{tmp}/spec.toml", "-q"),
        {"spec.toml": b'name = "\xff"\n'},
        ("spec.toml",),
    )
    yield Case(
        "sweep-spec-directory",
        ("sweep", "{tmp}/spec.toml", "-q"),
        {"spec.toml": DIR},
        ("spec.toml",),
    )
    yield Case("sweep-spec-missing", ("sweep", "{tmp}/nope.toml", "-q"), {}, ("nope.toml",))
    yield Case("sweep-spec-dev-zero", ("sweep", "/dev/zero", "-q"), {}, ("/dev/zero",))
    yield Case(
        "sweep-out-is-file",
        ("sweep", "{tmp}/spec.toml", "--out", "{tmp}/f", "-q"),
        {"spec.toml": SPEC_BASE, "f": "x"},
        ("f",),
    )
    yield Case(
        "sweep-max-runs-zero",
        ("sweep", "{tmp}/spec.toml", "--max-runs", "0", "-q"),
        {"spec.toml": SPEC_BASE},
        ("--max-runs",),
    )
    yield Case(
        "sweep-max-runs-word",
        ("sweep", "{tmp}/spec.toml", "--max-runs", "many", "-q"),
        {"spec.toml": SPEC_BASE},
        ("--max-runs",),
    )
    yield Case(
        "sweep-max-runs-below-spec",
        ("sweep", "{tmp}/spec.toml", "--max-runs", "2", "-q"),
        {"spec.toml": "seeds = 3\n" + SPEC_BASE},
        ("max-runs",),
    )


# --- CLI argument lists ----------------------------------------------------------------


def cli_case(
    name: str, args: tuple[str, ...], *needles: str, files: dict[str, object] | None = None
) -> Case:
    return Case(name, args, files if files is not None else {"s.toml": scenario()}, needles)


def cli_cases() -> Iterator[Case]:
    s = "{tmp}/s.toml"
    yield cli_case("cli-no-command", (), "command")
    yield cli_case("cli-unknown-command", ("frobnicate",), "frobnicate")
    yield cli_case("cli-unknown-global-flag", ("--bogus",), "--bogus")
    yield cli_case("cli-run-unknown-flag", ("run", s, "--bogus"), "--bogus")
    yield cli_case("cli-run-seed-word", ("run", s, "--seed", "abc"), "seed")
    yield cli_case("cli-run-seed-negative", ("run", s, "--seed=-1"), "seed")
    yield cli_case("cli-run-seed-huge", ("run", s, "--seed", str(2**64)), "seed")
    yield cli_case("cli-run-seed-float", ("run", s, "--seed", "1.5"), "seed")
    yield cli_case("cli-run-seed-missing-value", ("run", s, "--seed"), "--seed")
    yield cli_case("cli-run-out-missing-value", ("run", s, "--out"), "--out")
    yield cli_case("cli-run-out-is-file", ("run", s, "--out", s, "-q"), "s.toml")
    yield cli_case("cli-run-missing-file", ("run", "{tmp}/nope.toml"), "nope.toml")
    yield cli_case("cli-run-directory", ("run", "{tmp}"), "tmp", files={})
    yield cli_case("cli-run-dev-zero", ("run", "/dev/zero"), "/dev/zero")
    yield cli_case("cli-run-two-scenarios", ("run", s, s), "unrecognized")
    yield cli_case("cli-validate-no-files", ("validate",), "SCENARIO")
    yield cli_case("cli-validate-missing-file", ("validate", "{tmp}/nope.toml"), "nope.toml")
    yield cli_case("cli-validate-seed-word", ("validate", s, "--seed", "x"), "seed")
    yield cli_case("cli-sweep-no-spec", ("sweep",), "SPEC")
    yield cli_case("cli-sweep-jobs-zero", ("sweep", s, "--jobs", "0"), "job")
    yield cli_case("cli-sweep-jobs-negative", ("sweep", s, "--jobs=-2"), "job")
    yield cli_case("cli-sweep-jobs-word", ("sweep", s, "-j", "many"), "job")
    yield cli_case("cli-sweep-jobs-missing-value", ("sweep", s, "--jobs"), "--jobs")
    yield cli_case("cli-sweep-unknown-flag", ("sweep", s, "--seeds", "3"), "--seeds")
    yield cli_case("cli-sweep-executor-unknown", ("sweep", s, "--executor", "dask"), "dask")
    yield cli_case(
        "cli-sweep-address-without-ray", ("sweep", s, "--address", "127.0.0.1:6379"), "--address"
    )
    yield Case(
        "cli-sweep-address-nobody-there",
        ("sweep", "{tmp}/spec.toml", "--executor", "ray", "--address", "127.0.0.1:1", "-q",
         "--out", "{tmp}/o"),
        {"spec.toml": SPEC_BASE},
        ("--address 127.0.0.1:1",),
    )  # fmt: skip
    yield Case(
        "cli-sweep-address-not-an-address",
        ("sweep", "{tmp}/spec.toml", "--executor", "ray", "--address", "head", "-q",
         "--out", "{tmp}/o"),
        {"spec.toml": SPEC_BASE},
        ("--address head", "HOST:PORT"),
    )  # fmt: skip
    yield Case(
        "cli-sweep-dataset-not-a-dataset",
        ("sweep", "{tmp}/spec.toml", "--dataset", "{tmp}", "-q", "--out", "{tmp}/o"),
        {"spec.toml": SPEC_BASE},
        ("not an rtcc dataset",),
    )
    yield cli_case("cli-sweep-dataset-is-file", ("sweep", s, "--dataset", s, "-q"), "s.toml")
    yield cli_case("cli-query-no-sql", ("query",), "SQL")
    yield cli_case("cli-query-no-dataset", ("query", "SELECT 1", "--dataset", "{tmp}/nope"), "nope")
    yield cli_case(
        "cli-query-folder-without-dataset", ("query", "SELECT 1", "--dataset", "{tmp}"),
        "holds no rtcc dataset",
    )  # fmt: skip
    yield Case(
        "cli-query-bad-sql",
        ("query", "SELECT FROM WHERE", "--dataset", "{tmp}"),
        {"dataset.json": '{"format": "rtcc-dataset", "version": 1}'},
        ("query:", "syntax error"),
    )
    yield cli_case("cli-reproduce-unknown", ("reproduce", "nope"), "nope")
    yield cli_case(
        "cli-reproduce-address-without-ray",
        ("reproduce", "fbra", "--address", "10.0.0.1:6379"), "--address",
    )  # fmt: skip
    yield cli_case(
        "cli-reproduce-all-traces-missing",
        ("reproduce", "all", "--traces", "{tmp}/nope", "--out", "{tmp}/o"), "nope", "--traces",
    )  # fmt: skip
    yield cli_case("cli-reproduce-jobs-zero", ("reproduce", "dumbo", "--jobs", "0"), "job")
    yield cli_case("cli-calibrate-codec", ("calibrate-encoder", "--codec", "av1"), "codec")
    yield cli_case("cli-bench-unknown-flag", ("bench", "--bogus"), "--bogus")
    yield cli_case("cli-fairness-missing-dir", ("fairness", "{tmp}/nope"), "nope")
    yield cli_case("cli-fairness-from-word", ("fairness", "{tmp}", "--from", "abc"), "--from")
    yield cli_case("cli-controllers-extra-arg", ("controllers", "gcc"), "gcc")
    yield cli_case("cli-encoders-unknown-flag", ("encoders", "--yaml"), "--yaml")


# --- accepted inputs whose results must be right ----------------------------------------

ESC = "\x1b"
RUN = ("run", "{tmp}/s.toml", "--out", "{tmp}/o", "-q", "--no-plots")


def _summary(folder: Path, run: str = "o") -> dict[str, Any]:
    return json.loads((folder / run / "summary.json").read_text(encoding="utf-8"))


def _shares_fit(s: dict[str, Any]) -> None:
    """Every utilisation is a share of its link (to rounding), every rate within it."""
    capacity_kbps = 3000
    for f in s["flows"]:
        for key in ("utilization", "media_utilization", "link_share"):
            assert f[key] is None or 0.0 <= f[key] <= 1.0 + 1e-9, (f["name"], key, f[key])
        assert f["goodput_kbps"] is None or 0 <= f["goodput_kbps"] <= capacity_kbps * 1.001
    assert 0.0 <= s["link"]["utilization"] <= 1.0 + 1e-9
    assert sum(s["link"]["utilization_by_kind"].values()) <= s["link"]["utilization"] + 1e-9


def _short_flow_right(folder: Path, _out: str) -> None:
    s = _summary(folder)
    short, long = s["flows"]
    for key in ("goodput_kbps", "utilization", "send_kbps"):
        assert short[key] is None, (key, short[key])
    assert "less than the 1 s a rate needs" in (short["rate_null_reason"] or "")
    assert short["packets_sent"] > 0
    assert long["rate_null_reason"] is None and 2000 < long["goodput_kbps"] <= 3000
    # The index is of the long flow alone.
    assert s["jain_goodput_active"] == s["jain_index"] == 1.0
    _shares_fit(s)


def _late_udp_right(folder: Path, _out: str) -> None:
    s = _summary(folder)
    (late,) = s["flows"]
    assert late["goodput_kbps"] is None and late["rate_null_reason"].startswith("active 0.5")
    assert late["packets_sent"] > 0
    _shares_fit(s)


def _udp_100gbps_right(folder: Path, _out: str) -> None:
    s = _summary(folder)
    (udp,) = s["flows"]
    # 100 Gbps of 1500-byte packets for 50 ms, to 1 %.
    assert abs(udp["packets_sent"] - 100e9 * 0.05 / 8 / 1500) < 100e9 * 0.05 / 8 / 1500 * 0.01
    assert udp["goodput_kbps"] is None and udp["rate_null_reason"]  # 50 ms: too short to rate
    assert 0.5 < s["link"]["utilization"] <= 1.0 + 1e-9


def _same_summary_bytes(folder: Path, _out: str) -> None:
    code = cli.main(["run", str(folder / "s.toml"), "--out", str(folder / "again"), "-q",
                     "--no-plots"])  # fmt: skip
    assert code == 0
    first, again = ((folder / r / "summary.json").read_bytes() for r in ("o", "again"))
    assert first == again, "summary.json differs between two runs of one seed"
    assert "wall_s" not in first.decode()


def _sweep_keeps_tcp_cc(folder: Path, _out: str) -> None:
    import pandas as pd

    table = pd.read_csv(folder / "out" / "table.csv")
    assert table["error"].isna().all(), table["error"].tolist()
    # The axis sets the video flow's controller; the TCP flow keeps its cubic.
    controllers = list(table["controller"])
    assert controllers == ["gcc", "cubic", "fixed", "cubic"], controllers


def _fair_shares(folder: Path, out: str) -> None:
    assert "1 s to the end" in out, out
    index = float(out.rsplit(":", 1)[1])
    assert 0.99 <= index <= 1.0, out  # two 500 kbps flows on 3 Mbps get equal shares


def _escaped_name(_folder: Path, out: str) -> None:
    assert ESC not in out, repr(out)
    assert "a\\x1b[2Jb" in out, out


def _escaped_values(_folder: Path, out: str) -> None:
    assert ESC not in out and "\x07" not in out, repr(out)
    assert "red\\x1b[31m\\x07" in out, out


SHORT_TCP = 'duration = "3s"\nseed = 3\n' + LINK + (
    '[[flow]]\nname = "short"\nkind = "tcp"\nstop = "{stop}"\n'
    '[[flow]]\nname = "long"\nkind = "tcp"\n'
)
UDP_100G = """\
duration = "0.05s"
{extra}[link]
capacity = "3Mbps"
delay = "1ms"
queue = "unlimited"
[[flow]]
kind = "udp"
rate = "100Gbps"
"""
TWO_UDP = 'duration = "3s"\nseed = 5\n' + LINK + (
    '[[flow]]\nname = "a"\nkind = "udp"\nrate = "500kbps"\n'
    '[[flow]]\nname = "b"\nkind = "udp"\nrate = "500kbps"\n'
)
CROSS_SPEC = """\
controllers = ["gcc", "fixed"]
flows = "all"
[base]
name = "mixed"
duration = "1s"
link = { capacity = "2Mbps", delay = "20ms", queue = "unlimited" }
[[base.flow]]
name = "call"
encoder = "ideal"
[[base.flow]]
name = "bulk"
kind = "tcp"
"""


def _saved_run(text: str) -> Callable[[Path], contextlib.AbstractContextManager[Any]]:
    """A setup that leaves the run of scenario ``text`` in the case's folder ``run``."""

    def setup(folder: Path) -> contextlib.AbstractContextManager[Any]:
        import rtcc

        rtcc.simulate(text, source="run.toml").save(folder / "run", plots=False)
        return contextlib.nullcontext()

    return setup


def result_cases() -> Iterator[Case]:
    for stop in ("1us", "100ms"):
        yield Case(
            f"short-tcp-flow-{stop}", RUN, {"s.toml": SHORT_TCP.format(stop=stop)}, ok=True,
            check=_short_flow_right,
        )  # fmt: skip
    yield Case(
        "udp-starting-near-the-end",
        RUN,
        {"s.toml": 'duration = "4s"\n' + LINK + '[[flow]]\nkind = "udp"\nrate = "1Mbps"\n'
                   'start = "3.5s"\n'},
        ok=True, check=_late_udp_right,
    )  # fmt: skip
    yield Case(
        "udp-100gbps-without-packet-rows",
        RUN,
        {"s.toml": UDP_100G.format(extra="[record]\npackets = false\n")},
        ok=True, check=_udp_100gbps_right,
    )  # fmt: skip
    # Rows held behind a standing queue: the run stops at the limit, in one line.
    yield Case(
        "limits-packet-rows-100gbps",
        RUN,
        {"s.toml": UDP_100G.format(extra="[limits]\npacket_rows = 2000\n")},
        ("s.toml", "limits.packet_rows", "the run stopped at", "more than 2000 rows"),
    )
    yield validate("limits-packet-rows-zero", scenario(top="[limits]\npacket_rows = 0\n"),
                   "limits.packet_rows")  # fmt: skip
    yield validate("limits-unknown-field", scenario(top="[limits]\nbogus = 1\n"), "bogus")
    yield Case(
        "summary-bytes-per-seed",
        RUN,
        {"s.toml": scenario(top='duration = "2s"\n', link="loss = 0.01\n")
         + FLOWS["tcp"]},
        ok=True, check=_same_summary_bytes,
    )  # fmt: skip
    yield Case(
        "sweep-tcp-cross-traffic-with-controller-axis",
        ("sweep", "{tmp}/spec.toml", "--out", "{tmp}/out", "--jobs", "1", "-q"),
        {"spec.toml": CROSS_SPEC}, ok=True, check=_sweep_keeps_tcp_cc,
    )  # fmt: skip
    yield Case(
        "sweep-controller-axis-without-video",
        ("sweep", "{tmp}/spec.toml", "--out", "{tmp}/out", "--jobs", "1", "-q"),
        {"spec.toml": CROSS_SPEC.replace('name = "call"\nencoder = "ideal"\n',
                                         'name = "cbr"\nkind = "udp"\nrate = "1Mbps"\n')},
        ("spec.toml", "controllers", "no video flow"),
    )  # fmt: skip


# --- the results dataset's query sandbox -------------------------------------------------


def _batch() -> bytes:
    """One runs batch of a dataset, written by hand: two schemes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "run": ["r0", "r1"], "labels": ["{}", "{}"],
            "flow": pa.array([0, 0], pa.int32()), "scheme": ["gcc", "bbr"],
            "utilization": [0.5, 0.6],
        }
    )  # fmt: skip
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def dataset_files() -> dict[str, object]:
    return {
        "ds/dataset.json": json.dumps(
            {"format": "rtcc-dataset", "version": 1, "tables": ["runs", "timeseries"]}
        ),
        "ds/runs/study=s/a.parquet": _batch(),
    }


def query(name: str, sql: str, *needles: str, extra: dict[str, object] | None = None) -> Case:
    files = dataset_files() | (extra or {})
    return Case(name, ("query", sql, "--dataset", "{tmp}/ds"), files, needles)


def query_cases() -> Iterator[Case]:
    yield query("query-copy-to", "COPY (SELECT 1) TO '{tmp}/out.csv'", "query:", "COPY refused")
    yield query("query-copy-over-the-marker", "COPY runs TO '{tmp}/ds/dataset.json' (FORMAT csv)",
                "COPY refused")  # fmt: skip
    yield query("query-copy-after-select", "SELECT 1; COPY (SELECT 1) TO '{tmp}/x.csv'", "COPY")
    yield query("query-read-passwd", "SELECT * FROM read_csv('/etc/passwd')", "/etc/passwd")
    yield query("query-read-text", "SELECT * FROM read_text('/etc/hostname')", "/etc/hostname")
    yield query("query-install-httpfs", "INSTALL httpfs", "INSTALL refused")
    yield query("query-load-httpfs", "LOAD httpfs", "LOAD refused")
    yield query("query-set", "SET enable_external_access = true", "SET refused")
    yield query("query-attach", "ATTACH '{tmp}/other.duckdb'", "ATTACH refused")
    yield query("query-export", "EXPORT DATABASE '{tmp}/exported'", "EXPORT refused")
    yield query(
        "query-corrupt-parquet", "SELECT count(*) FROM runs", "b.parquet", "not a Parquet file",
        extra={"ds/runs/study=s/b.parquet": b"PAR1 this is not a parquet file"},
    )  # fmt: skip
    yield query(
        "query-parquet-garbage-footer", "SELECT count(*) FROM runs", "b.parquet",
        "unreadable Parquet",
        extra={"ds/runs/study=s/b.parquet": b"PAR1" + b"\x00" * 64 + b"\x10\x00\x00\x00PAR1"},
    )  # fmt: skip
    yield query(
        "query-batch-linked-to-dev-zero", "SELECT count(*) FROM runs", "b.parquet", "a device",
        extra={"ds/runs/study=s/b.parquet": Link("/dev/zero")},
    )  # fmt: skip
    yield query("query-control-characters-in-error", f"SELECT nope{ESC}x FROM runs", "nope\\x1bx")
    yield Case(
        "query-control-characters-in-values",
        ("query", "SELECT 'red' || chr(27) || '[31m' || chr(7) AS v", "--dataset", "{tmp}/ds"),
        dataset_files(), ok=True, check=_escaped_values,
    )  # fmt: skip
    yield Case(
        "query-out-in-proc",
        ("query", "SELECT 1", "--dataset", "{tmp}/ds", "--out", "/proc/1/r.csv"),
        dataset_files(), ("--out /proc/1/r.csv", "cannot create files in /proc/1, which exists (the OS says: "),
    )  # fmt: skip
    yield Case("query-no-dataset-here", ("query", "SELECT 1"), {}, ("no ./results folder",
               "pass --dataset DIR"))  # fmt: skip
    yield Case(
        "query-results-without-dataset", ("query", "SELECT 1"), {"results": DIR},
        ("holds no rtcc dataset", "pass --dataset DIR"),
    )  # fmt: skip


# --- Python policies (rtcc.app: no command) ----------------------------------------------

POLICY_SCENARIO = policy_scenario("3s")


class ReArmAtNow:
    def on_start(self, s: Any) -> None:
        s.set_timer(1.0)

    def on_timer(self, s: Any) -> None:
        s.set_timer(s.now_s)


class PastFromReport:
    def on_report(self, s: Any, _report: object) -> None:
        s.set_timer(s.now_s - 0.5)


class PastFromStart:
    def on_start(self, s: Any) -> None:
        s.set_timer(-1.0)


class NanTimer:
    def on_start(self, s: Any) -> None:
        s.set_timer(float("nan"))


def _policy(policy: type) -> Callable[[Path], object]:
    def call(_folder: Path) -> object:
        from rtcc import app

        return app.run(POLICY_SCENARIO, policy())

    return call


def policy_cases() -> Iterator[Case]:
    for policy, needles in (
        (ReArmAtNow, ("policy ReArmAtNow.on_timer", "not after now")),
        (PastFromReport, ("policy PastFromReport.on_report", "before now")),
        (PastFromStart, ("policy PastFromStart.on_start", "before now")),
        (NanTimer, ("policy NanTimer.on_start",)),
    ):
        yield Case(f"policy-timer-{policy.__name__}", (), {}, needles, call=_policy(policy))


# --- results files, --out and locks ------------------------------------------------------

RECORD_ROW = "scenario,controller,seed,flow_name,run\ns,gcc,1,call,k\n"
HOSTILE = {
    "dev-zero": (Link("/dev/zero"), "a device (through a symbolic link), not a regular file"),
    "fifo": (FIFO, "a FIFO (named pipe), not a regular file"),
    "folder": (DIR, "a folder, not a regular file"),
    "oversized": (Sparse(safeio.MAX_RECORD_BYTES + 1), "above the 256 MiB limit"),
}


def _locked(paper: str) -> Callable[[Path], contextlib.AbstractContextManager[Any]]:
    """A setup: this process holds ``paper``'s reproduction lock on the folder ``out``."""

    def setup(folder: Path) -> contextlib.AbstractContextManager[Any]:
        from rtcc.reproduce import index

        return index.lock(folder / "out", paper)

    return setup


def files_cases() -> Iterator[Case]:
    page = ("--out", "{tmp}/page.html")
    for what, (entry, reason) in HOSTILE.items():
        yield Case(
            f"report-summary-{what}", ("report", "{tmp}/run", *page),
            {"run/summary.json": entry}, ("run/summary.json", reason),
        )  # fmt: skip
        yield Case(
            f"report-run-record-{what}", ("report", "{tmp}/sweep", *page),
            {"sweep/table.csv": RECORD_ROW, "sweep/runs/k.json": entry},
            ("sweep/runs/k.json", reason),
        )  # fmt: skip
    yield Case(
        "report-table-fifo", ("report", "{tmp}/sweep", *page), {"sweep/table.csv": FIFO},
        ("sweep/table.csv", "a FIFO"),
    )  # fmt: skip
    yield cli_case("run-out-proc", ("run", "{tmp}/s.toml", "--out", "/proc/1/nope", "-q"),
                   "--out /proc/1/nope", "cannot create files in /proc/1, which exists (the OS says: ")  # fmt: skip
    yield Case(
        "sweep-out-proc", ("sweep", "{tmp}/spec.toml", "--out", "/proc/1/nope", "-q"),
        {"spec.toml": SPEC_BASE}, ("--out /proc/1/nope", "cannot create files in /proc/1, which exists (the OS says: "),
    )  # fmt: skip
    yield cli_case(
        "run-out-under-a-file", ("run", "{tmp}/s.toml", "--out", "{tmp}/s.toml/o", "-q"),
        "--out <tmp>/s.toml/o", "is not a",
    )  # fmt: skip
    yield Case(
        "reproduce-into-a-locked-folder",
        ("reproduce", "fbra", "--short", "--out", "{tmp}/out", "-q"), {},
        ("<tmp>/out", "another reproduction (rtcc reproduce fbra)", "give another --out"),
        setup=_locked("fbra"),
    )  # fmt: skip
    yield Case(
        "reproduce-another-paper-into-a-locked-folder",
        ("reproduce", "cross", "--short", "--out", "{tmp}/out", "-q"), {},
        ("<tmp>/out", "another reproduction (rtcc reproduce fbra)"), setup=_locked("fbra"),
    )  # fmt: skip
    yield Case(
        "sweep-into-a-reproductions-folder",
        ("sweep", "{tmp}/spec.toml", "--out", "{tmp}/out", "-q"), {"spec.toml": SPEC_BASE},
        ("another reproduction (rtcc reproduce pibes)",), setup=_locked("pibes"),
    )  # fmt: skip
    yield Case(
        "reproduce-lock-is-a-fifo",
        ("reproduce", "fbra", "--short", "--out", "{tmp}/out", "-q"), {"out/sweep.lock": FIFO},
        ("sweep.lock", "not a regular file"),
    )  # fmt: skip


# --- settings checked together ---------------------------------------------------------


def settings_cases() -> Iterator[Case]:
    content = 'encoder = { kind = "content", profile = "p.toml" }\n'
    for name, profile, needles in (
        ("top-level", 'profile = "dynamic"\nti = 8.0\n', ("'profile' is at the top level",
                                                          "[encoder]")),
        ("empty", "", ("no [encoder] or [quality] values",)),
        ("empty-table", "[encoder]\n", ("no [encoder] or [quality] values",)),
        ("oversized", Sparse((1 << 20) + 1), ("1048577 bytes is above",)),
        ("not-toml", "[encoder\n", ()),
        ("fifo", FIFO, ()),
    ):  # fmt: skip
        yield Case(
            f"profile-{name}", ("validate", "{tmp}/s.toml"),
            {"s.toml": scenario(flow=content), "p.toml": profile},
            ("s.toml", "flow[0].encoder.profile", "p.toml", *needles),
        )  # fmt: skip
    for name, controller, extra, param in (
        ("sqp-windows-inverted", '{ name = "sqp", owd_window = "20s", owd_window_long = "10s" }',
         "", "owd_window"),
        ("fbra-report-interval", '{ name = "fbra", report_interval = "100ms" }', "",
         "report_interval"),
        ("fbra-report-interval-vs-flow", '{ name = "fbra", report_interval = "50ms" }',
         'feedback_interval = "100ms"\n', "report_interval"),
        ("fbra-up-down", '{ name = "fbra", up_down = 1.8 }', "", "up_down"),
        ("fbra-rate-window", '{ name = "fbra", rate_window = "3s" }', "", "rate_window"),
        ("nada-delta", '{ name = "nada", delta = "600ms" }', "", "delta"),
        ("nada-delta-max-vs-flow", '"nada"', 'feedback_interval = "1s"\n', "delta_max"),
        ("cross-f", '{ name = "cross", f = 3 }', "", "f"),
        ("cross-probe-rtt", '{ name = "cross", probe_rtt_duration = "2s" }', "",
         "probe_rtt_duration"),
        ("rrtcc-rr-interval", '{ name = "rrtcc", rr_interval = "20ms" }', "", "rr_interval"),
    ):  # fmt: skip
        yield validate(
            f"consistency-{name}",
            scenario(flow=f"controller = {controller}\n{extra}"),
            f"flow[0].controller.{param}:",
        )
    # The paper's 100 ms reports: report_interval follows the flow's feedback_interval.
    yield Case(
        "consistency-fbra-follows-the-flow", ("validate", "{tmp}/s.toml"),
        {"s.toml": scenario(flow='controller = "fbra"\nfeedback_interval = "100ms"\n')}, ok=True,
    )  # fmt: skip


# --- units and traces -------------------------------------------------------------------


def unit_cases() -> Iterator[Case]:
    for key, value, needles in (
        ("delay", '"3"', ('"3" has no unit', '"3ms"')),
        ("capacity", '"3"', ('"3" has no unit', '"3kbps"')),
        ("capacity", '"5kbps"', ("under 10 kbps", "allow_extreme = true")),
        ("capacity", "3", ("a bare number is bits/s", "allow_extreme")),
        ("delay", '"11s"', ("over 10 s", "allow_extreme")),
        ("delay", "25", ("a bare number is seconds", "allow_extreme")),
        ("reverse_delay", '"20s"', ("allow_extreme",)),
        ("jitter", '"11s"', ("allow_extreme",)),
    ):  # fmt: skip
        what = value.strip('"') + ("-text" if value.startswith('"') else "")
        yield validate(f"units-link-{key}-{what}", scenario(link=f"{key} = {value}\n"),
                       f"link.{key}", *needles)  # fmt: skip
    yield validate("units-flow-start-rate", scenario(flow='start_rate = "300"\n'),
                   "flow[0].start_rate", "has no unit")  # fmt: skip
    yield validate("units-access-delay-extreme", scenario(flow='access_delay = "12s"\n'),
                   "flow[0].access_delay", "allow_extreme")  # fmt: skip
    yield validate("units-allow-extreme-not-bool", scenario(top='allow_extreme = "yes"\n'),
                   "allow_extreme")  # fmt: skip
    yield Case(
        "units-allow-extreme-accepted", ("validate", "{tmp}/s.toml"),
        {"s.toml": scenario(top="allow_extreme = true\n", link='delay = "11s"\n')}, ok=True,
    )  # fmt: skip
    yield sweep_case("units-sweep-trace-without-unit", 'traces = ["3Mbps", "3"]\n',
                     "traces[1]", '"3" has no unit')  # fmt: skip
    run = "{tmp}/run"
    fair = _saved_run(TWO_UDP)
    yield Case("fairness-from-beyond-the-run", ("fairness", run, "--from", "20s"), {},
               ("<tmp>/run", "window 20 s to the end", "bins end at 3 s"), setup=fair)  # fmt: skip
    yield Case("fairness-from-after-to", ("fairness", run, "--from", "2s", "--to", "1s"), {},
               ("<tmp>/run", "start 2 s is not before end 1 s"), setup=fair)  # fmt: skip
    yield Case("fairness-from-no-unit-word", ("fairness", run, "--from", "20parsec"), {},
               ("--from", "20parsec"), setup=fair)  # fmt: skip
    yield Case("fairness-from-with-units", ("fairness", run, "--from", "1s"), {}, ok=True,
               check=_fair_shares, setup=fair)  # fmt: skip
    # Traces: a file in no known format, sets that do not exist, --traces without the
    # files a reproduction replays.
    yield trace_case("trace-unknown-format", "hello world\n", "t.trace", "known format",
                     "mahimahi", "pensieve")  # fmt: skip
    yield trace_case("trace-format-mismatch", "1\n2\n", "format", extra=', format = "pensieve"')
    yield trace_case("trace-format-unknown-name", "1\n2\n", "format", extra=', format = "csv"')
    yield Case(
        "trace-set-missing", ("validate", "{tmp}/s.toml"),
        {"s.toml": scenario(link='capacity = { kind = "trace", set = "nope", file = "x" }\n')},
        ("s.toml", "link.capacity.set", "no trace set 'nope'", "mahimahi"),
    )  # fmt: skip
    yield Case(
        "trace-set-escape", ("validate", "{tmp}/s.toml"),
        {"s.toml": scenario(link='capacity = { kind = "trace", set = "mahimahi", '
                                 'file = "../opennetlab/x" }\n')},
        ("s.toml", "link.capacity"),
    )  # fmt: skip
    yield Case(
        "trace-set-not-a-name", ("validate", "{tmp}/s.toml"),
        {"s.toml": scenario(link='capacity = { kind = "trace", set = "../..", file = "x" }\n')},
        ("s.toml", "link.capacity.set", "not a set name"),
    )  # fmt: skip
    for paper in ("pibes", "burstrtc", "dumbo", "all"):
        yield Case(
            f"reproduce-{paper}-traces-empty-folder",
            ("reproduce", paper, "--traces", "{tmp}/empty", "--out", "{tmp}/o", "-q"),
            {"empty": DIR}, ("--traces <tmp>/empty", "no "),
        )  # fmt: skip
    yield Case(
        "reproduce-pibes-traces-unrelated-files",
        ("reproduce", "pibes", "--traces", "{tmp}/t", "--out", "{tmp}/o", "-q"),
        {"t/other.trace": "1\n2\n"}, ("--traces <tmp>/t", "norway_bus_1"),
    )  # fmt: skip
    yield cli_case("reproduce-traces-unknown-set",
                   ("reproduce", "pibes", "--traces", "nosuchset", "--out", "{tmp}/o"),
                   "--traces nosuchset", "sets: ")  # fmt: skip
    # Control characters a scenario's value carries back into its error line.
    for key, value in (("controller", f'"nope{ESC}[31m"'), ("encoder", f'"x{ESC}]0;t\x07"')):
        text = scenario(flow=f"{key} = {value}\n")
        text = text.replace(ESC, "\\u001b").replace("\x07", "\\u0007")  # TOML escapes
        yield validate(f"control-characters-in-{key}", text, f"flow[0].{key}")
    # A flow's name is accepted; printed, it stays inert.
    yield Case(
        "control-characters-in-flow-name",
        ("run", "{tmp}/s.toml", "--out", "{tmp}/o", "--no-plots"),
        {"s.toml": scenario(flow='name = "a\\u001b[2Jb"\n')}, ok=True, check=_escaped_name,
    )  # fmt: skip
    yield trace_case("control-characters-in-trace-file", None, "link.capacity.file",
                     file="t\\u001b[31m.trace")  # fmt: skip


ALL_CASES = [
    *scenario_cases(), *trace_cases(), *sweep_cases(), *cli_cases(), *result_cases(),
    *query_cases(), *policy_cases(), *files_cases(), *settings_cases(), *unit_cases(),
]  # fmt: skip
# Run again as child processes of the installed rtcc, where an abort shows as a signal.
CHILD_IDS = (
    "limits-packet-rows-100gbps", "udp-100gbps-without-packet-rows", "report-summary-fifo",
    "report-summary-dev-zero", "query-corrupt-parquet", "query-copy-to",
    "reproduce-into-a-locked-folder", "run-out-proc", "short-tcp-flow-1us",
)  # fmt: skip


# --- running a case --------------------------------------------------------------------


class _Hang(BaseException):
    """Raised from SIGALRM: not an Exception, so the CLI's handlers do not catch it."""


def _alarm(_signum: int, _frame: object) -> None:
    raise _Hang


def materialise(case: Case, folder: Path) -> list[str]:
    for name, content in case.files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is DIR:
            path.mkdir()
        elif content is FIFO:
            os.mkfifo(path)
        elif isinstance(content, Link):
            os.symlink(content.target, path)
        elif isinstance(content, Sparse):
            with path.open("wb") as f:
                f.truncate(content.size)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(str(content), encoding="utf-8")
    return [a.replace("{tmp}", str(folder)) for a in case.args]


def _command(case: Case, folder: Path, argv: list[str]) -> int:
    """The case's exit status: the CLI's, or for an API call what the CLI would give."""
    if case.call is None:
        return cli.main(argv)
    try:
        case.call(folder)
    except ValueError as exc:  # printed as is: a message of two lines stays two
        print(f"rtcc: error: {exc}", file=sys.stderr)
        return 2
    return 0


def clear_refusal(case: Case, code: int | None, err: str, folder: Path) -> bool:
    """Exit 2 and one ``rtcc: error:`` line holding every needle, in plain words."""
    # The case's folder is named after the test: keep it from supplying a needle.
    lines = err.replace(str(folder), "<tmp>").splitlines()
    return (
        code == 2
        and len(lines) == 1
        and lines[0].startswith("rtcc: error: ")
        and len(lines[0]) > len("rtcc: error: ")
        and all(n in lines[0] for n in case.needles)
        and not JARGON.search(lines[0])
        and not CONTROL.search(lines[0])
    )


def _checked(case: Case, folder: Path, out: str) -> tuple[str, str]:
    """An accepted case's verdict: ``accepted``, or ``wrong result`` if its check fails."""
    if case.check is None:
        return "accepted", ""
    try:
        case.check(folder, out)
    except AssertionError as exc:
        return "wrong result", f"{case.id}: {exc}"
    return "accepted", ""


def outcome(case: Case, folder: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """(verdict, stderr): refused | accepted | wrong result | unclear | traceback | panic |
    hang."""
    argv = materialise(case, folder)
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_TIMEOUT_S)
    escaped = ""
    code: int | None = None
    try:
        with case.setup(folder) if case.setup else contextlib.nullcontext():
            code = _command(case, folder, argv)
    except _Hang:
        escaped = "hang"
    except SystemExit as exc:  # argparse's --help/--version paths
        code = exc.code if isinstance(exc.code, int) else 2
    except BaseException as exc:  # a Rust panic is a BaseException (pyo3 PanicException)
        escaped = "panic" if type(exc).__name__ == "PanicException" else "traceback"
        escaped += f": {type(exc).__name__}: {exc}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    out, err = capsys.readouterr()
    if escaped:
        return escaped.split(":")[0], f"{escaped}\n{err}"
    if "panicked" in err:
        return "panic", err
    if "Traceback" in err:
        return "traceback", err
    if code == 0:
        verdict, why = _checked(case, folder, out)
        capsys.readouterr()  # what a check ran itself
        return verdict, why or err
    return ("refused" if clear_refusal(case, code, err, folder) else "unclear"), err


def in_child(case: Case, folder: Path) -> tuple[str, str]:
    """(verdict, stderr) of the case run by ``python -m rtcc``: as :func:`outcome`, and
    ``abort`` for a process that died by a signal."""
    argv = materialise(case, folder)
    env = {k: v for k, v in os.environ.items() if k != "RTCC_DEBUG"}
    with case.setup(folder) if case.setup else contextlib.nullcontext():
        try:
            proc = subprocess.run(
                [sys.executable, "-m", "rtcc", *argv], cwd=folder, env=env,
                capture_output=True, text=True, timeout=CASE_TIMEOUT_S * 3,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            return "hang", ""
    err = proc.stderr
    if proc.returncode < 0:
        return "abort", f"signal {-proc.returncode}\n{err}"
    if "panicked" in err:
        return "panic", err
    if "Traceback" in err:
        return "traceback", err
    if proc.returncode == 0:
        return _checked(case, folder, proc.stdout)
    return ("refused" if clear_refusal(case, proc.returncode, err, folder) else "unclear"), err


def params() -> list[object]:
    seen: set[str] = set()
    out = []
    for case in ALL_CASES:
        assert case.id not in seen, case.id
        seen.add(case.id)
        marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
        out.append(pytest.param(case, id=case.id, marks=marks))
    return out


BY_ID = {case.id: case for case in ALL_CASES}


@pytest.mark.parametrize("case", params())
def test_bad_input(case: Case, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # default results folders land here
    monkeypatch.delenv("RTCC_DEBUG", raising=False)
    verdict, err = outcome(case, tmp_path, capsys)
    expected = "accepted" if case.ok else "refused"
    assert verdict == expected, f"{case.id}: {verdict}\n{err}"


@pytest.mark.parametrize("case_id", CHILD_IDS)
def test_in_a_child_process(case_id: str, tmp_path: Path) -> None:
    case = BY_ID[case_id]
    verdict, err = in_child(case, tmp_path)
    assert verdict == ("accepted" if case.ok else "refused"), f"{case.id}: {verdict}\n{err}"


def _tallied(verdict: str, case: Case) -> str:
    if case.ok:
        if verdict == "accepted":
            return "accepted as it should"
        return verdict if verdict != "refused" else "wrongly refused"
    return "silently accepted" if verdict == "accepted" else verdict


def test_corpus_counts(tmp_path: Path, capsys, monkeypatch) -> None:
    """Every case once more, and the child-process group, tallied."""
    monkeypatch.delenv("RTCC_DEBUG", raising=False)
    assert len(ALL_CASES) >= 300
    groups: dict[str, tuple[Counter[str], int]] = {}
    odd: list[str] = []
    tally: Counter[str] = Counter()
    for i, case in enumerate(ALL_CASES):
        folder = tmp_path / str(i)
        folder.mkdir()
        monkeypatch.chdir(folder)
        verdict = _tallied(outcome(case, folder, capsys)[0], case)
        tally[verdict] += 1
        if verdict not in ("refused", "accepted as it should"):
            odd.append(f"{case.id}: {verdict}")
    groups["in-process"] = (tally, len(ALL_CASES))
    child: Counter[str] = Counter()
    for case_id in CHILD_IDS:
        folder = tmp_path / f"child-{case_id}"
        folder.mkdir()
        verdict = _tallied(in_child(BY_ID[case_id], folder)[0], BY_ID[case_id])
        child[verdict] += 1
        if verdict not in ("refused", "accepted as it should"):
            odd.append(f"{case_id} (child process): {verdict}")
    groups["child processes"] = (child, len(CHILD_IDS))
    with capsys.disabled():
        print(f"\ncorpus: {len(ALL_CASES) + len(CHILD_IDS)} inputs tried")
        for name, (counts, total) in groups.items():
            counts = Counter(counts)
            accepted = counts.pop("accepted as it should", 0)
            print(f"  {name}: {total} tried")
            print(f"    refused clearly: {counts.pop('refused', 0)}")
            print(f"    accepted with a checked result: {accepted}")
            for verdict in ("unclear", "traceback", "panic", "abort", "hang"):
                print(f"    {verdict}: {counts.pop(verdict, 0)}")
            wrong = counts.pop("silently accepted", 0) + counts.pop("wrong result", 0)
            print(f"    silently accepted or a wrong result: {wrong}")
            for verdict, count in sorted(counts.items()):
                print(f"    {verdict}: {count}")
        for line in odd:
            print(f"  - {line}")
    # Every case is refused clearly or accepted with a right result, but known defects.
    assert {line.split(":")[0] for line in odd} == {c.id for c in ALL_CASES if c.xfail}
