"""Congestion controllers written in Python, usable wherever a built-in one is.

A controller is a class with the controller contract's methods (ARCHITECTURE.md, "The
controller contract"); every input gets ``now_s`` (simulated seconds) first::

    __init__(self, params, context)     params: dict of the declared parameters' values
                                        (rates in bits/s, durations in s, sizes in bytes);
                                        context: a :class:`Context`
    decision(self)                      required: the target in bits/s, or a dict with
                                        ``target_bps`` and any of ``pacing_bps``,
                                        ``cwnd_bytes``, ``padding_bps``, ``schedule``
                                        ("paced"/"burst"), ``fec_group``, ``skip_threshold_s``
    on_feedback(self, now_s, fb)        one call per receiver report: a :class:`Feedback`,
                                        its packets as numpy columns
    on_packet_sent(self, now_s, p)      optional (a call per packet): a :class:`Packet`
    on_frame_encoded(self, now_s, f)    optional: a :class:`Frame`
    on_sender_state(self, now_s, s)     optional (a call per enqueue and send): a
                                        :class:`SenderState`
    poll_timeout(self)                  optional: when to call on_timeout (s) or None
    on_timeout(self, now_s)             optional
    state(self)                         optional: {column: number} for the time series

The decision (and ``poll_timeout``) is read after every call and checked: a negative or
NaN rate stops the run. Parameters are declared as :class:`Param` (class attribute
``params`` or ``register_controller(..., params=...)``) and parsed, range-checked and listed
by ``rtcc controllers`` exactly as a built-in controller's.

A controller is found by name in three ways: :func:`register_controller` (this process
only), an entry point in the ``rtcc.controllers`` group of an installed package (name =
``"module:Class"``), or the name ``py:module:Class`` itself, imported on first use. The
last two work in sweep workers and on Ray too, since each worker resolves the name.
An exception in user code stops the run with :class:`ControllerError`: ``controller
'aimd' raised in on_feedback: ValueError: ...`` (the original is its ``__cause__``).
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from typing import Any, NamedTuple

import numpy as np

import rtcc

__all__ = [
    "ENTRY_POINT_GROUP",
    "KINDS",
    "Context",
    "ControllerError",
    "Feedback",
    "Frame",
    "Packet",
    "Param",
    "SenderState",
    "load_entry_points",
    "register_controller",
]

ENTRY_POINT_GROUP = "rtcc.controllers"
# Packet kinds by code, as `Feedback.kind` and `Packet.kind` give them (rtcc-core packet.rs).
KINDS = ("media", "padding", "probe", "fec", "rtx", "audio")
_QUANTITIES = ("rate", "duration", "size")
_KIND_NAMES = ("number", "integer", *_QUANTITIES, "bool", "choice", "text")


def __getattr__(name: str) -> Any:
    if name == "ControllerError":
        return rtcc.native().ControllerError
    raise AttributeError(f"module 'rtcc.pycontrollers' has no attribute {name!r}")


class Context(NamedTuple):
    """What the flow gives its controller (``ControllerContext``)."""

    start_bps: float
    min_bps: float
    max_bps: float
    mtu_bytes: int
    frame_interval_s: float
    feedback_interval_s: float
    # Forked from the run's seed for this flow: draw random numbers from it only.
    seed: int


class Frame(NamedTuple):
    """An encoded frame; ``si``/``ti`` are its ITU-T P.910 SI/TI (0 when unknown)."""

    frame: int
    capture_s: float
    size: int
    packets: int
    key: bool
    si: float
    ti: float


class Packet(NamedTuple):
    """A packet as it left the pacer; ``kind`` indexes :data:`KINDS`, ``frame`` is -1
    for none."""

    seq: int
    kind: int
    size: int
    send_s: float
    in_flight: int
    frame: int


class SenderState(NamedTuple):
    queued_bytes: int
    queued_packets: int
    in_flight_bytes: int


class _Column:
    """One of a report's columns, made a numpy array from its bytes when first read."""

    def __init__(self, index: int, dtype: Any, as_bool: bool = False) -> None:
        self.index, self.dtype, self.as_bool = index, dtype, as_bool

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = getattr(obj, self.slot)
        if value is None:
            value = np.frombuffer(obj._raw[self.index], dtype=self.dtype)
            if self.as_bool:
                value = value.astype(bool)
            setattr(obj, self.slot, value)
        return value


class Feedback:
    """One receiver report joined with the send history.

    Columns (numpy, one entry per reported packet): ``seq``, ``send_s``, ``arrival_s``
    (receiver clock; NaN = lost), ``size`` (bytes), ``frame`` (-1 = none), ``kind``
    (codes of :data:`KINDS`), ``late`` (arrived too late for its frame). Scalars:
    ``report_time_s`` (as the report's bytes give it: RFC 8888's timestamp, under
    TWCC the newest arrival), ``rtt_s`` (newest packet, without the receiver's hold as
    far as the format says it: RFC 8888 carries it, TWCC does not; NaN if none), ``received``, ``lost``, ``jitter_s`` (RFC 3550; NaN unless the report is
    ``rtcp-xr``), ``owd_min_s``/``owd_mean_s``/``owd_max_s``, ``estimate_bps``
    (receiver-side, NaN if none), ``late_discards`` (RFC 7097; None unless ``rtcp-xr``),
    ``fec_recovered`` (None: no report format carries it), ``rtcp_rtt_s`` (the round
    trip the report's RTCP receiver report gives from the sender's SR, RFC 3550 §6.4.1;
    NaN in a report without one: one report a second has one beside TWCC or RFC 8888,
    every ``rtcp-xr`` report). ``late`` is set only by
    ``rtcp-xr``'s discard RLE.
    """

    __slots__ = (
        "report_time_s", "rtt_s", "received", "lost", "jitter_s", "owd_min_s", "owd_mean_s",
        "owd_max_s", "estimate_bps", "late_discards", "fec_recovered", "rtcp_rtt_s",
        "_raw", "_seq", "_send_s", "_arrival_s", "_size", "_frame", "_kind", "_late",
    )  # fmt: skip

    def __init__(self, scalars: Sequence[Any], columns: Sequence[bytes]) -> None:
        (
            self.report_time_s, self.rtt_s, self.received, self.lost, self.jitter_s,
            self.owd_min_s, self.owd_mean_s, self.owd_max_s, self.estimate_bps,
            self.late_discards, self.fec_recovered, self.rtcp_rtt_s,
        ) = scalars  # fmt: skip
        # Columns become arrays when first read: a controller that reads three of the
        # seven pays for three.
        self._raw = columns
        self._seq = self._send_s = self._arrival_s = self._size = None
        self._frame = self._kind = self._late = None

    seq = _Column(0, "<u8")
    send_s = _Column(1, "<f8")
    arrival_s = _Column(2, "<f8")
    size = _Column(3, "<u8")
    frame = _Column(4, "<i8")
    kind = _Column(5, np.uint8)
    late = _Column(6, np.uint8, as_bool=True)

    @property
    def fraction_lost(self) -> float:
        expected = self.received + self.lost
        return self.lost / expected if expected else 0.0

    def __len__(self) -> int:
        return len(self.seq)

    def __repr__(self) -> str:
        return (
            f"Feedback(report_time_s={self.report_time_s:.6f}, packets={len(self)}, "
            f"received={self.received}, lost={self.lost})"
        )


@dataclass(frozen=True)
class Param:
    """A declared parameter. ``kind`` is inferred from the default when not given: a
    bool is "bool", an int "integer", a float "number", text with a rate/duration/size
    unit ("50kbps", "100ms", "1200B") that quantity, other text "choice" when
    ``choices`` are given, else "text". ``min``/``max`` bound it (inclusive; quantities
    may carry units)."""

    name: str
    default: Any
    doc: str = ""
    kind: str | None = None
    min: Any = None
    max: Any = None
    choices: tuple[str, ...] = ()


def _param(owner: str, p: Param | Sequence[Any]) -> tuple[Any, ...]:
    """The native declaration of ``p``: (name, kind, default, min, max, doc, choices),
    quantities in their base unit; a bad declaration raises ValueError naming it."""
    if not isinstance(p, Param):
        if isinstance(p, (str, bytes)) or not isinstance(p, Sequence) or not 2 <= len(p) <= 3:
            raise ValueError(f"controller '{owner}': parameter {p!r}: give a Param or (name, default[, doc])")
        p = Param(*p)
    where = f"controller '{owner}': parameter '{p.name}'"
    if not isinstance(p.name, str) or not p.name.isidentifier():
        raise ValueError(f"controller '{owner}': parameter name {p.name!r} is not an identifier")
    native = rtcc.native()
    kind = p.kind or _infer_kind(p)
    if kind not in _KIND_NAMES:
        raise ValueError(f"{where}: kind {kind!r} is not one of {', '.join(_KIND_NAMES)}")

    def value(v: Any, what: str) -> Any:
        try:
            if kind in _QUANTITIES:
                return native.parse_quantity(v, kind)
            if kind == "integer":
                if isinstance(v, bool) or not float(v).is_integer():
                    raise ValueError(f"{v!r} is not a whole number")
                return int(v)
            if kind == "number":
                if isinstance(v, bool):
                    raise ValueError(f"{v!r} is not a number")
                x = float(v)
                if math.isnan(x):
                    raise ValueError("NaN is not a number")
                return x
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {what}: {exc}") from None
        return v

    default = value(p.default, "default")
    low = None if p.min is None else float(value(p.min, "min"))
    high = None if p.max is None else float(value(p.max, "max"))
    if kind == "bool" and not isinstance(default, bool):
        raise ValueError(f"{where}: default {default!r} is not true or false")
    if kind in ("choice", "text") and not isinstance(default, str):
        raise ValueError(f"{where}: default {default!r} is not text")
    choices = tuple(p.choices)
    if kind == "choice" and (not choices or default not in choices):
        raise ValueError(f"{where}: default {default!r} is not one of the choices {list(choices)}")
    if kind in ("number", "integer", *_QUANTITIES):
        floor = low if low is not None else (-math.inf if kind in ("number", "integer") else 0.0)
        if not floor <= float(default) <= (high if high is not None else math.inf):
            raise ValueError(f"{where}: default {p.default!r} is outside [{p.min}, {p.max}]")
    return (p.name, kind, default, low, high, str(p.doc), list(choices))


def _infer_kind(p: Param) -> str:
    d = p.default
    if isinstance(d, bool):
        return "bool"
    if isinstance(d, int):
        return "integer"
    if isinstance(d, float):
        return "number"
    if isinstance(d, str):
        for kind in _QUANTITIES:
            try:
                rtcc.native().parse_quantity(d, kind)
                return kind
            except ValueError:
                continue
        return "choice" if p.choices else "text"
    return "?"


def register_controller(
    name: str,
    cls: type,
    params: Iterable[Param | Sequence[Any]] | None = None,
    *,
    summary: str | None = None,
) -> None:
    """Register ``cls`` as controller ``name`` in this process: scenarios name it as
    ``controller = "name"`` or ``{ name = "name", ... }``. ``params`` defaults to
    ``cls.params``, ``summary`` to the first line of its docstring. A sweep's worker
    processes do not see it: for those, use an entry point or ``py:module:Class``."""
    if not isinstance(name, str) or not name or "+" in name or any(c.isspace() for c in name):
        raise ValueError(f"controller name {name!r}: must be non-empty, without '+' or spaces")
    if not inspect.isclass(cls):
        raise ValueError(f"controller '{name}': {cls!r} is not a class")
    if not callable(getattr(cls, "decision", None)):
        raise ValueError(f"controller '{name}': {cls.__qualname__} has no decision() method")
    declared = list(getattr(cls, "params", ()) if params is None else params)
    specs = [_param(name, p) for p in declared]
    names = [s[0] for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"controller '{name}': a parameter is declared twice ({', '.join(names)})")
    if summary is None:
        doc = inspect.getdoc(cls) or ""
        summary = doc.strip().splitlines()[0] if doc.strip() else f"{cls.__qualname__} (Python)"

    def factory(values: dict[str, Any], context: tuple[Any, ...]) -> Any:
        return cls(values, Context(*context))

    _install_helpers()
    rtcc.native().pyctl_register(name, summary, specs, factory)


def _resolve(name: str) -> bool:
    """Register ``name`` if it is ``py:module:Class`` or an installed entry point;
    False when it is neither (the caller lists the known names)."""
    if name.startswith("py:"):
        module, _, attr = name[3:].rpartition(":")
        if not module or not attr:
            raise ValueError(f"controller '{name}': write py:module:Class (e.g. py:mypkg.ctl:Aimd)")
        try:
            obj: Any = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
        except ImportError as exc:
            raise ImportError(f"controller '{name}': cannot import {module}: {exc}") from exc
        except AttributeError:
            raise ValueError(f"controller '{name}': module {module} has no {attr}") from None
        register_controller(name, obj)
        return True
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            register_controller(name, _load(ep))
            return True
    return False


def _load(ep: metadata.EntryPoint) -> Any:
    try:
        return ep.load()
    except Exception as exc:
        raise ImportError(f"controller '{ep.name}' (entry point {ep.value}): {type(exc).__name__}: {exc}") from exc


def load_entry_points() -> list[str]:
    """Register every installed ``rtcc.controllers`` entry point (for listings);
    returns their names."""
    names = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        register_controller(ep.name, _load(ep))
        names.append(ep.name)
    return names


def _install_helpers() -> None:
    """Hand the native module this module's resolver and record types. Called on
    import and again from the native side when a name needs resolving, so a module
    first imported while a stand-in native module was active (the tests' fake, which
    has no hook) still reaches the real one."""
    helpers = getattr(rtcc.native(), "pyctl_helpers", None)
    if helpers is not None:
        helpers(_resolve, Feedback, Frame, Packet, SenderState)


_install_helpers()
