"""A pure-Python stand-in for ``rtcc._rtcc`` that follows the native contract.

It lets the presentation layer (tables, plots, report, CLI formatting) be tested
without the compiled simulator. Numbers are synthetic but deterministic: each
flow sends 1200-byte packets at its fixed rate over a constant link.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

# The native rule (rtcc_core::units::Quantity): text carries its unit; a bare number,
# or text without a unit, is in the base unit (seconds, bits per second, bytes).
_UNITS = {
    "duration": {"": 1.0, "s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "min": 60.0},
    "rate": {
        "": 1.0, "bps": 1.0, "bit/s": 1.0, "kbps": 1e3, "Kbps": 1e3, "kbit/s": 1e3,
        "Mbps": 1e6, "Mbit/s": 1e6, "Gbps": 1e9, "Gbit/s": 1e9,
    },
    "size": {
        "": 1.0, "B": 1.0, "bytes": 1.0, "kB": 1e3, "KB": 1e3, "MB": 1e6, "KiB": 1024.0,
        "MiB": 1048576.0,
    },
}  # fmt: skip
_QUANTITY = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(\S*)\s*")


class ScenarioError(ValueError):
    pass


def parse_quantity(value: str | float, kind: str) -> float:
    units = _UNITS.get(kind)
    if units is None:
        raise ValueError(f"kind '{kind}' is not one of duration, rate, size")
    if isinstance(value, bool):
        raise ValueError(f"expected a {kind}, got {value}")
    if isinstance(value, (int, float)):
        number, unit = float(value), ""
    else:
        m = _QUANTITY.fullmatch(str(value))
        if not m:
            raise ValueError(f"'{value}' is not a number followed by a unit")
        number, unit = float(m.group(1)), m.group(2)
        if not unit:
            raise ValueError(f'"{str(value).strip()}" has no unit')
    if unit not in units:
        expected = ", ".join(u for u in units if u)
        raise ValueError(f"unknown unit '{unit}' (expected one of {expected})")
    if not number >= 0 or number == float("inf"):
        raise ValueError(f"'{value}' must not be negative")
    return number * units[unit]


def _duration(text: str | float, source: str, field: str) -> float:
    try:
        return parse_quantity(text, "duration")
    except ValueError as exc:
        raise ScenarioError(f"{source}: {field}: {exc}") from None


def _rate(text: str | float, source: str, field: str) -> float:
    try:
        rate = parse_quantity(text, "rate")
    except ValueError as exc:
        raise ScenarioError(f"{source}: {field}: {exc}") from None
    if rate <= 0:
        raise ScenarioError(f"{source}: {field}: {text} must be > 0bps")
    return rate


def _table(**columns: np.ndarray) -> dict[str, tuple[str, bytes]]:
    out = {}
    for name, array in columns.items():
        kind = {"f": ("f64", "<f8"), "i": ("i64", "<i8"), "u": ("u8", "u1")}[array.dtype.kind]
        out[name] = (kind[0], array.astype(kind[1]).tobytes())
    return out


class Simulation:
    def __init__(
        self,
        scenario_text: str,
        source: str = "<scenario>",
        seed: int | None = None,
        record_packets: bool = True,
        photo_dir: str | None = None,
        video_dir: str | None = None,
        media_map: dict[str, str] | None = None,
    ) -> None:
        import tomllib  # Python >= 3.11; the fixture skips on older versions

        try:
            data = tomllib.loads(scenario_text)
        except tomllib.TOMLDecodeError as exc:
            raise ScenarioError(f"{source}: {exc}") from None
        flows = data.get("flow")
        if not flows:
            raise ScenarioError(f"{source}: flow: at least one [[flow]] is required")
        self._data = data
        self._source = source
        self._seed = int(seed if seed is not None else data.get("seed", 0))
        self._record = record_packets
        self._video_dir = video_dir
        self._duration = _duration(data.get("duration", "10s"), source, "duration")
        if self._duration <= 0:
            raise ScenarioError(f"{source}: duration: must be positive")
        link = data.get("link", {})
        self._capacity = _rate(link.get("capacity", "3Mbps"), source, "link.capacity")
        self._delay = _duration(link.get("delay", "25ms"), source, "link.delay")
        self._flows = []
        for i, flow in enumerate(flows):
            ctrl = flow.get("controller", "fixed")
            params = ctrl if isinstance(ctrl, dict) else {"name": ctrl}
            rate = _rate(params.get("rate", "1Mbps"), source, f"flow[{i}].controller.rate")
            self._flows.append((flow.get("name", f"flow{i}"), params["name"], rate))
        self._now = 0.0
        self.calls: list[float] = []

    def video_files(self) -> list[tuple[str, float]]:
        return []

    @property
    def duration_s(self) -> float:
        return self._duration

    @property
    def now_s(self) -> float:
        return self._now

    def run_until(self, t_s: float) -> bool:
        self.calls.append(t_s)
        self._now = min(max(self._now, t_s), self._duration)
        return self._now < self._duration

    # Rows are made at the end, all at once: none wait before it, so it never pauses.
    pending_rows = 0
    paused = False

    def set_pause_rows(self, rows: int | None) -> None:
        pass

    def take_tables(self) -> dict[str, Any]:
        return {name: {} for name in ("packets", "frames", "timeseries", "link")}

    def finish(self) -> dict[str, Any]:
        d, fps, size = self._duration, 30, 1200
        pk: dict[str, list[Any]] = {c: [] for c in ("flow", "seq", "kind", "size", "frame")}
        pk.update({c: [] for c in ("send_s", "arrival_s", "owd_ms", "queue_ms")})
        fr: dict[str, list[Any]] = {c: [] for c in ("flow", "frame", "capture_s", "size")}
        fr.update({c: [] for c in ("status", "latency_ms", "delay_ms", "transport_ms")})
        flows_summary = []
        for fid, (name, controller, rate) in enumerate(self._flows):
            n_frames = int(d * fps)
            frame_bytes = rate / 8 / fps
            per_frame = max(1, round(frame_bytes / size))
            seq = 0
            for f in range(n_frames):
                capture = f / fps
                status = 1 if f % 97 == 50 else 0
                lat = self._delay * 1e3 + 10 + (f % 7)
                fr["flow"].append(fid)
                fr["frame"].append(f)
                fr["capture_s"].append(capture)
                fr["size"].append(per_frame * size)
                fr["status"].append(status)
                fr["latency_ms"].append(lat)
                fr["delay_ms"].append(np.nan if status else lat - 5)
                fr["transport_ms"].append(np.nan if status else lat - 6)
                for p in range(per_frame):
                    send = capture + p * size * 8 / rate
                    lost = status == 1 and p == 0
                    queue = (p * size * 8 / self._capacity) * 1e3
                    pk["flow"].append(fid)
                    pk["seq"].append(seq)
                    pk["kind"].append(0 if p or f % 10 else 1)
                    pk["size"].append(size)
                    pk["frame"].append(f)
                    pk["send_s"].append(send)
                    owd = np.nan if lost else self._delay * 1e3 + queue
                    pk["arrival_s"].append(np.nan if lost else send + owd / 1e3)
                    pk["owd_ms"].append(owd)
                    pk["queue_ms"].append(queue)
                    seq += 1
            flows_summary.append(
                {
                    "name": name,
                    "controller": controller,
                    "video_kbps": rate / 1e3,
                    "padding_kbps": 0.0,
                    "goodput_kbps": rate / 1e3 * 0.99,
                    "utilization": rate / self._capacity,
                    "owd_ms_mean": self._delay * 1e3 + 1.5,
                    "owd_ms_p95": self._delay * 1e3 + 3.2,
                    "frame_latency_ms_mean": self._delay * 1e3 + 13,
                    "frame_latency_ms_p95": self._delay * 1e3 + 16,
                    "freeze_ratio": 0.01,
                    "loss_rate": 0.001,
                    "frames_sent": n_frames,
                    "frames_displayed": n_frames - n_frames // 97,
                    "psnr_db_mean": None,
                    "ssim_db_mean": None,
                }
            )
        n = len(pk["flow"])
        packets = {
            k: np.asarray(v, dtype=np.float64 if k.endswith(("_s", "_ms")) else np.int64)
            for k, v in pk.items()
        }
        packets["kind"] = packets["kind"].astype(np.uint8)
        packets["dropped"] = np.zeros(n, np.uint8)
        packets["lost"] = np.isnan(packets["owd_ms"]).astype(np.uint8)
        if not self._record:
            packets = {k: v[:0] for k, v in packets.items()}
        frames = {
            k: np.asarray(v, dtype=np.float64 if k.endswith(("_s", "_ms")) else np.int64)
            for k, v in fr.items()
        }
        frames["status"] = frames["status"].astype(np.uint8)
        t = np.arange(0, d, 0.1)
        ts_cols: dict[str, list[np.ndarray]] = {}
        for fid, (_, _, rate) in enumerate(self._flows):
            cols = {
                "t_s": t,
                "flow": np.full(t.size, fid, np.int64),
                "target_kbps": np.full(t.size, rate / 1e3),
                "send_kbps": np.full(t.size, rate / 1e3 * 1.02),
                "video_kbps": np.full(t.size, rate / 1e3),
                "padding_kbps": np.zeros(t.size),
                "queue_ms": np.full(t.size, 1.5),
                "cwnd_bytes": np.full(t.size, np.nan),
                "estimate_kbps": np.full(t.size, rate / 1e3),  # a controller state column
            }
            for k, v in cols.items():
                ts_cols.setdefault(k, []).append(v)
        timeseries = {k: np.concatenate(v) for k, v in ts_cols.items()}
        link = {
            "t_s": t,
            "capacity_kbps": np.full(t.size, self._capacity / 1e3),
            "delivered_kbps": np.full(t.size, sum(r for *_, r in self._flows) / 1e3),
            "queue_bytes": np.full(t.size, 300.0),
            "queue_ms": np.where(t < d / 2, 1.0, 2.0),
            "drops": np.zeros(t.size, np.int64),
        }
        summary = {
            "scenario": self._data.get("name", "unnamed"),
            "seed": self._seed,
            "duration_s": d,
            "flows": flows_summary,
            "link": {"capacity_kbps_mean": self._capacity / 1e3, "utilization": 0.5},
            "jain_goodput_active": 1.0,
            "jain_index": 1.0,
            "sim": {"wall_s": 0.01, "events": n * 3, "speedup": d / 0.01},
        }
        return {
            "summary": json.dumps(summary),
            "tables": {
                "packets": _table(**packets),
                "frames": _table(**frames),
                "timeseries": _table(**timeseries),
                "link": _table(**link),
            },
        }


def controllers() -> list[dict[str, Any]]:
    return [
        {
            "name": "fixed",
            "summary": "constant target bitrate",
            "params": [
                {
                    "name": "rate",
                    "default": "1Mbps",
                    "doc": "target bitrate",
                    "kind": "rate",
                    "range": "> 0bps",
                }
            ],
        },
        {"name": "gcc", "summary": "Google Congestion Control", "params": []},
    ]


def encoders() -> list[dict[str, Any]]:
    return [{"name": "ideal", "summary": "frames of exactly the target size", "params": []}]


def default_scenario() -> str:
    return (
        'name = "demo"\nduration = "4s"\nseed = 1\n\n[link]\ncapacity = "3Mbps"\n'
        'delay = "25ms"\n\n[[flow]]\nname = "call"\ncontroller = "gcc"\n'
    )


def codecs() -> dict[str, str | None]:
    return {"vp8": None, "h264": None}


def bench(workload: str) -> dict[str, Any]:
    speed = {"fixed": 25_000.0, "gcc": 1_500.0, "vp8": 8.0, "tcp": 3_000.0}[workload]
    return {
        "workload": workload,
        "sim_s": 120.0,
        "wall_s": 120.0 / speed,
        "speedup": speed,
        "packets": 36_000,
        "packets_per_s": 36_000 * speed / 120.0,
        "events": 100_000,
        "goodput_mbps": 9.5 if workload == "tcp" else 3.0,
    }
