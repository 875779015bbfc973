"""Live runs and the relay on loopback, in real time (seconds each): the same results
folder as a simulated run with a ``live`` object, refusals naming the flow, bad
addresses named, and the relay's counts."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import rtcc
from rtcc import cli

CALL = """name = "live-call"
duration = "3s"
seed = 2
[link]
capacity = "2Mbps"
delay = "15ms"
queue = "100ms"
[[flow]]
name = "call"
controller = { name = "fixed", rate = "800kbps" }
encoder = "ideal"
"""


def test_live_gives_a_result_like_simulate_with_what_only_live_knows():
    sim = rtcc.simulate(CALL)
    live = rtcc.live(CALL)
    info = live.summary["live"]
    assert info["mode"] == "live" and info["interrupted"] is False
    assert (info["socket_drops"], info["undecodable"], info["refused"]) == (0, 0, 0)
    assert info["wall_s"] >= 3.0 and len(info["late_us"]) == 3
    assert info["timestamps"] == "kernel" and info["kernel_stamped"] > 10 * info["kernel_clamped"]
    # Real bytes: each forward datagram is its RTP payload plus header and extensions.
    fwd = info["forward"]
    # All but what was still on the way when the run ended.
    assert fwd["received"] - 5 <= fwd["delivered"] <= fwd["received"] and fwd["queue_drops"] == 0
    s, f = sim.summary["flows"][0], live.summary["flows"][0]
    assert abs(f["packets_sent"] - s["packets_sent"]) <= 2
    # Each datagram carries its RTP header and extensions beyond the payload the
    # recorder counts.
    payload = f["video_kbps"] * 1e3 / 8 * 3.0
    assert fwd["delivered_bytes"] > payload
    assert abs(f["goodput_kbps"] / s["goodput_kbps"] - 1) < 0.05
    assert s["owd_ms_mean"] - 0.2 <= f["owd_ms_mean"] < s["owd_ms_mean"] + 10
    # The tables are the simulator's: one packet row per packet sent.
    assert len(live.packets) >= f["packets_sent"]
    assert set(sim.frames.columns) == set(live.frames.columns)


def test_rtcc_live_writes_a_results_folder(capsys, tmp_path: Path):
    path = tmp_path / "call.toml"
    path.write_text(CALL)
    out = tmp_path / "out"
    code = cli.main(["live", str(path), "--out", str(out), "--no-plots", "--compare"])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "wake-ups late by" in printed and "simulated, beside live" in printed
    table = pd.read_csv(out / "sim_vs_live.csv")
    assert list(table["run"]) == ["sim", "live"]
    sim, live = table.iloc[0], table.iloc[1]
    assert abs(live["goodput kbps"] / sim["goodput kbps"] - 1) < 0.05
    summary = json.loads((out / "summary.json").read_text())
    assert summary["live"]["mode"] == "live"
    assert (out / "packets.parquet").exists() and (out / "frames.parquet").exists()


def test_live_refuses_what_it_cannot_carry_naming_the_flow(capsys, tmp_path: Path):
    path = tmp_path / "tcp.toml"
    path.write_text(CALL + '[[flow]]\nkind = "tcp"\ncc = "cubic"\n')
    code = cli.main(["live", str(path), "-q", "--bottleneck", "udp"])
    err = capsys.readouterr().err
    assert code == 2 and "flow[1].kind" in err and "TUN" in err and "Traceback" not in err
    # A reverse flow without a reverse bottleneck, as the simulator refuses it.
    path.write_text(CALL.replace('encoder = "ideal"\n', 'encoder = "ideal"\ndirection = "reverse"\n'))
    code = cli.main(["live", str(path), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "direction" in err and "reverse_capacity" in err and "Traceback" not in err


TCP = CALL.replace('duration = "3s"', 'duration = "5s"') + """[[flow]]
name = "bulk"
kind = "tcp"
cc = "reno"
start = "1s"
"""


def test_live_tcp_is_the_kernels_through_the_tun_bottleneck(capsys, tmp_path: Path):
    """A bulk TCP flow beside the call, as the kernel's Reno, in two namespaces the run
    makes (only addresses inside them are used)."""
    path = tmp_path / "tcp.toml"
    path.write_text(TCP)
    out = tmp_path / "out"
    code = cli.main(["live", str(path), "--out", str(out), "--no-plots"])
    captured = capsys.readouterr()
    if code == 2 and "TUN bottleneck is not available" in captured.err:
        pytest.skip(captured.err.strip().splitlines()[-1])
    assert code == 0, captured.err
    assert "is the kernel's TCP reno (asked: reno)" in captured.out
    summary = json.loads((out / "summary.json").read_text())
    info = summary["live"]
    assert info["bottleneck"] == "tun-emulator" and info["header_overhead_bytes"] == 0
    (tcp,) = info["tcp"]
    assert (tcp["flow"], tcp["cc"]) == (1, "reno")
    call, bulk = summary["flows"]
    assert bulk["kind"] == "tcp" and bulk["goodput_kbps"] > 300
    assert call["goodput_kbps"] + bulk["goodput_kbps"] < 2000 * 1.02
    # The kernel filled the 100 ms queue: both flows saw its delay.
    assert bulk["owd_ms_p95"] > 15 + 50 and tcp["info"]["min_rtt_us"] >= 30_000
    assert tcp["packets"] == bulk["packets_sent"] > 100


def test_without_tun_live_tcp_is_refused_or_left_out(capsys, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("RTCC_NO_TUN", "1")
    path = tmp_path / "tcp.toml"
    path.write_text(TCP.replace('duration = "5s"', 'duration = "2s"'))
    code = cli.main(["live", str(path), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "TUN bottleneck is not available" in err and "Traceback" not in err
    out = tmp_path / "out"
    code = cli.main(["live", str(path), "--out", str(out), "--no-plots", "--tun-fallback"])
    printed = capsys.readouterr().out
    assert code == 0 and "left out bulk" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["live"]["left_out"] == ["bulk"] and len(summary["flows"]) == 1
    with pytest.raises(ValueError, match="bottleneck"):
        rtcc.live(CALL, bottleneck="netem")


def test_relay_names_a_bad_address_and_duration(capsys):
    code = cli.main(["relay", "--to", "nowhere", "--duration", "1s", "-q"])
    assert code == 2 and "to: 'nowhere' is not an address with a port" in capsys.readouterr().err
    code = cli.main(["relay", "--to", "127.0.0.1:9", "--duration", "0s", "-q"])
    assert code == 2 and "duration" in capsys.readouterr().err
    code = cli.main(["relay", "--to", "127.0.0.1:9", "--duration", "1s", "--peers", "-1", "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "--peers -1: must be in 1..1024" in err and "Traceback" not in err


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_relay_carries_datagrams_both_ways(tmp_path: Path):
    """50 datagrams through the demo's link (3 Mbps, 25 ms) and one answer each back;
    bounded in count and time, loopback only."""
    receiver = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    receiver.bind(("127.0.0.1", 0))
    receiver.settimeout(0.2)
    listen = f"127.0.0.1:{free_port()}"
    report = tmp_path / "relay.json"
    to = "127.0.0.1:%d" % receiver.getsockname()[1]
    args = ["relay", "--listen", listen, "--to", to, "--duration", "2s", "--report", str(report), "-q"]
    relay = threading.Thread(target=cli.main, args=(args,))
    relay.start()
    time.sleep(0.3)
    sender = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sender.settimeout(0.2)
    host, port = listen.split(":")
    got, answers = 0, 0
    for k in range(50):
        sender.sendto(k.to_bytes(4, "big") + bytes(500), (host, int(port)))
        time.sleep(0.005)
    deadline = time.monotonic() + 1.2
    while time.monotonic() < deadline and got < 50:
        try:
            data, source = receiver.recvfrom(2048)
        except TimeoutError:
            continue
        got += 1
        receiver.sendto(data[:4], source)
    while time.monotonic() < deadline + 0.3 and answers < got:
        try:
            sender.recvfrom(64)
            answers += 1
        except TimeoutError:
            continue
    relay.join(timeout=5)
    sender.close()
    receiver.close()
    counts = json.loads(report.read_text())
    assert got == 50 and answers == 50
    assert counts["forward"]["delivered"] == 50 and counts["reverse"]["delivered"] == 50
    assert counts["refused"] == 0 and counts["peers"] == 1


@pytest.mark.parametrize("bad", ["{", "[link]\ncapacity = 3\n"])
def test_live_names_a_bad_scenario(bad: str):
    with pytest.raises(rtcc.ScenarioError):
        rtcc.live(bad + "\n")


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_live_run_and_keeps_what_ran(tmp_path: Path, sig: str):
    """Ctrl-C or SIGTERM half-way through a 6 s live run: exit 130, and the results
    folder holds the run up to the signal, marked interrupted."""
    import signal
    import subprocess
    import sys

    path = tmp_path / "call.toml"
    path.write_text(CALL.replace('duration = "3s"', 'duration = "6s"'))
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "rtcc", "live", str(path), "--out", str(out), "--no-plots"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # The run starts once its first line is out (imports can take seconds).
    assert proc.stdout is not None and proc.stdout.readline().startswith("live: ")
    time.sleep(1.5)
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert (out / "summary.json").exists(), err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["live"]["interrupted"] is True
    assert 0.5 < summary["duration_s"] < 5.0, summary["duration_s"]
    assert summary["flows"][0]["frames_displayed"] > 0
