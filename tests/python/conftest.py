"""Shared fixtures: the native-module switch, a fake native module, CLI runners."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import rtcc

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # fake_native lives beside the tests

import fake_native as fake_module  # noqa: E402

try:
    from rtcc import _rtcc as _native_module
except ImportError as exc:  # the extension has not been built in this environment
    _native_module = None
    _NATIVE_ERROR = str(exc)
else:
    _NATIVE_ERROR = ""

HAVE_NATIVE = _native_module is not None
requires_native = pytest.mark.skipif(
    not HAVE_NATIVE,
    reason=f"rtcc._rtcc cannot be imported ({_NATIVE_ERROR}); build it with `pip install -e .`",
)

# 10 s of a 1 Mbps fixed-rate call on an otherwise idle 3 Mbps link.
SHORT_SCENARIO = """\
name = "fixed-1mbps"
duration = "10s"
seed = 7

[link]
capacity = "3Mbps"
delay = "25ms"
queue = "unlimited"

[[flow]]
name = "call"
controller = { name = "fixed", rate = "1Mbps" }
encoder = "ideal"
start = "0s"
fps = 30
"""


def policy_scenario(duration: str = "20s", flow_extra: str = "") -> str:
    """The Python-policy tests' scenario: one ideal-encoder video flow on 1 Mbps / 25 ms with a
    50-packet queue, no packet table (``flow_extra``: more lines for the flow)."""
    return (
        f'duration = "{duration}"\nseed = 3\n[link]\ncapacity = "1Mbps"\ndelay = "25ms"\n'
        f'queue = "50pkt"\n[record]\npackets = false\n[[flow]]\nencoder = "ideal"\n{flow_extra}'
    )


def agent_and_controller_targets(env: Any, policy: Callable[[Any], float], cls: type,
                                  name: str, controller: Any, seed: int) -> tuple[list[float], list[float]]:
    """One episode of ``env`` (an ``rtcc.gym.RtccEnv``) stepped by ``policy``, and the
    same episode's scenario run by ``cls`` (a policy controller, registered as ``name``;
    ``controller`` is the flow's controller entry): the targets the agent set, step by
    step, and the targets the controller decided, one per report after its first."""
    import numpy as np

    obs, _ = env.reset(seed=seed)
    agent, done = [], False
    while not done:
        obs, _, done, _, info = env.step(np.array([policy(obs)]))
        agent.append(info["target_bps"])
    decided: list[float] = []

    class Logged(cls):  # type: ignore[misc, valid-type]
        def __init__(self, params: Any, context: Any) -> None:
            decided.clear()  # the run's own instance (a scenario check builds one first)
            super().__init__(params, context)

        def _act(self) -> None:
            super()._act()
            decided.append(self.feat.target)

    rtcc.register_controller(name, Logged)
    rtcc.simulate(env.scenario(controller), record_packets=False)
    return agent, decided


def run_main(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    """``rtcc ARGS`` in this process: (exit status, stdout, stderr)."""
    from rtcc import cli

    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(code: int, err: str, *needles: str) -> str:
    """Exit status 2 and one ``rtcc: error:`` line holding every needle; the line."""
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("rtcc: error: ")
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def short_scenario(tmp_path: Path) -> Path:
    path = tmp_path / "fixed-1mbps.toml"
    path.write_text(SHORT_SCENARIO, encoding="utf-8")
    return path


@pytest.fixture
def fake_native(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """Swap the compiled simulator for the pure-Python fake for one test."""
    pytest.importorskip("tomllib", reason="the fake parses scenarios with tomllib (3.11+)")
    monkeypatch.setitem(sys.modules, "rtcc._rtcc", fake_module)
    monkeypatch.setattr(rtcc, "_rtcc", fake_module, raising=False)
    yield fake_module


def subprocess_env() -> dict[str, str]:
    # Run the same rtcc package this process imported, installed or not.
    env = dict(os.environ)
    package_root = str(Path(rtcc.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env.pop("RTCC_DEBUG", None)
    return env


def reproduce_short(
    tmp_path_factory: pytest.TempPathFactory, paper: str, *extra: str, timeout: int = 900
) -> tuple[Path, str]:
    """``rtcc reproduce PAPER --short`` into a fresh folder, as a user runs it: the folder
    and what it printed; fails on an error exit or a traceback."""
    out = tmp_path_factory.mktemp(paper)
    done = subprocess.run(
        [sys.executable, "-m", "rtcc", "reproduce", paper, "--short", "--out", str(out),
         "--jobs", "2", *extra],
        capture_output=True, text=True, env=subprocess_env(), timeout=timeout,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return out, done.stdout


@pytest.fixture(scope="module")
def reproduced(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, str]:
    """The test module's paper (its ``PAPER``) reproduced once per module by
    :func:`reproduce_short`: the folder and what it printed."""
    return reproduce_short(tmp_path_factory, request.module.PAPER)


@pytest.fixture(scope="module")
def table(reproduced: tuple[Path, str]) -> Any:
    """The table.csv of :func:`reproduced`, as a DataFrame."""
    import pandas as _pd

    return _pd.read_csv(reproduced[0] / "table.csv")


def reproduce_refused(paper: str, out: Path, *args: str) -> str:
    """``rtcc reproduce PAPER --short ARGS --out OUT``, which must refuse (exit status 2, no
    traceback): what it printed on stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "rtcc", "reproduce", paper, "--short", *args, "--out", str(out)],
        capture_output=True, text=True, env=subprocess_env(), timeout=60,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    return done.stderr


def table_value(table: Any, experiment: str, scheme: str, column: str, **labels: Any) -> float:
    """The one row of a reproduction's table.csv for (experiment, scheme) and ``labels``:
    its ``column``, which must be a number."""
    import pandas as _pd

    match = table[(table["experiment"] == experiment) & (table["scheme"] == scheme)]
    for k, v in labels.items():
        match = match[match[k] == v]
    assert len(match) == 1, (experiment, scheme, labels, len(match))
    v = match.iloc[0][column]
    assert not _pd.isna(v), (experiment, scheme, column, match.iloc[0].get("error"))
    return float(v)


@pytest.fixture
def run_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m rtcc ARGS`` in a subprocess (stdin/out/err are pipes)."""

    def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "rtcc", *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd,
            env=subprocess_env(),
            timeout=300,
        )

    return run


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_a_terminal(
    *args: str | Path, cwd: Path | None = None, timeout_s: float = 300
) -> tuple[int, str, str]:
    """Run ``python -m rtcc ARGS`` with stderr on a pseudo-terminal and stdout on a pipe:
    (exit status, stdout, stderr with its control codes)."""
    master, slave = pty.openpty()
    env = {**subprocess_env(), "COLUMNS": "100", "TERM": "xterm"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rtcc", *map(str, args)],
        stdout=subprocess.PIPE, stderr=slave, cwd=cwd, env=env,
    )  # fmt: skip
    os.close(slave)
    err = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            err += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    out = proc.stdout.read() if proc.stdout else b""
    code = proc.wait(timeout=60)
    return code, out.decode(), err.decode(errors="replace")
