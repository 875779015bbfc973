"""rtcc.app policies cannot hang a run: a timer must move time forward, and Ctrl-C stops
the run whatever the policy does."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from conftest import policy_scenario, requires_native

pytestmark = requires_native

LINK = policy_scenario()


class ReArm:
    def on_start(self, s) -> None:
        s.set_timer(1.0)

    def on_timer(self, s) -> None:
        s.set_timer(s.now_s)


class PastFromReport:
    def on_report(self, s, report) -> None:
        s.set_timer(s.now_s - 0.5)


class Ticker:
    """Valid timers, 10 ms apart."""

    def __init__(self) -> None:
        self.times: list[float] = []

    def on_start(self, s) -> None:
        s.set_timer(0.01)

    def on_timer(self, s) -> None:
        self.times.append(s.now_s)
        s.set_timer(s.now_s + 0.01)


def test_a_timer_re_armed_at_now_is_refused():
    from rtcc import app

    with pytest.raises(ValueError) as info:
        app.run(LINK, ReArm())
    assert str(info.value) == "policy ReArm.on_timer: re-armed at 1.000 s, not after now (1.000 s)"


def test_a_timer_in_the_past_is_refused_from_any_callback():
    from rtcc import app

    with pytest.raises(ValueError, match=r"^policy PastFromReport\.on_report: timer set at "
                       r"-?\d+\.\d{3} s, before now \(\d+\.\d{3} s\)$"):  # fmt: skip
        app.run(LINK, PastFromReport())


def test_timers_that_advance_fire_in_order():
    from rtcc import app

    p = Ticker()
    app.run(LINK, p)
    assert len(p.times) == pytest.approx(1999, abs=2)
    assert p.times == sorted(p.times) and len(set(p.times)) == len(p.times)


def _child(script: str, tmp_path: Path) -> subprocess.Popen[str]:
    path = tmp_path / "child.py"
    path.write_text(textwrap.dedent(script))
    return subprocess.Popen(
        [sys.executable, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )


def test_sigint_from_a_thread_stops_a_policy_that_keeps_its_timers(tmp_path: Path):
    # A day of 10 µs timers: it would run for hours; the interrupt ends it.
    proc = _child(
        """
        import os, signal, threading, time
        from rtcc import app

        class Busy:
            calls = 0
            def on_start(self, s):
                threading.Thread(target=interrupt, daemon=True).start()
                s.set_timer(1e-5)
            def on_timer(self, s):
                Busy.calls += 1
                s.set_timer(s.now_s + 1e-5)

        def interrupt():
            time.sleep(0.5)
            os.kill(os.getpid(), signal.SIGINT)

        text = '''duration = "86400s"
        [link]
        capacity = "1Mbps"
        delay = "25ms"
        [record]
        packets = false
        [[flow]]
        encoder = "ideal"
        '''
        try:
            app.run(text, Busy(), tables_dir="tables")
        finally:
            print("calls", Busy.calls, flush=True)
        """,
        tmp_path,
    )
    out, err = proc.communicate(timeout=120)
    # An uncaught KeyboardInterrupt: Python exits by SIGINT (130 in a shell).
    assert proc.returncode == -signal.SIGINT, (proc.returncode, err[-2000:])
    assert err.rstrip().endswith("KeyboardInterrupt"), err[-2000:]
    assert int(out.split()[-1]) > 0
    # No half-written tables: the run's part files are removed.
    assert [p for p in (tmp_path / "tables").rglob("*") if p.is_file()] == []


def test_sigint_reaches_a_run_whose_policy_runs_no_python(tmp_path: Path):
    # A policy without callbacks runs no Python code, where signal handlers run: the
    # simulation asks for them itself. One native call for the whole day-long run.
    proc = _child(
        """
        import sys
        import rtcc

        class Quiet:
            pass

        native = rtcc.native()
        native.app_register("quiet", Quiet())
        sim = native.Simulation('''duration = "86400s"
        [link]
        capacity = "1Mbps"
        delay = "25ms"
        [record]
        packets = false
        [[flow]]
        encoder = "ideal"
        controller = { name = "python", policy = "quiet" }
        ''')
        try:
            print("ready", flush=True)
            sim.run_until(float("inf"))
        except KeyboardInterrupt:
            print("interrupted at", sim.now_s, "of", sim.duration_s, flush=True)
            sys.exit(130)
        """,
        tmp_path,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)  # into run_until; an interrupt that waited for its end fails below
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, (proc.returncode, out, err[-2000:])
    words = out.split()
    assert float(words[-3]) < float(words[-1])
