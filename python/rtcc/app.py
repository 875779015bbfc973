"""Scripting an adaptation policy: the application API of the FBRA paper (Nagy, Singh, Ott,
Eggert, §6 "AMuSys", Table 6) over rtcc's simulator.

A policy is an object with any of these methods; each gets the :class:`Session` first::

    on_start(session)                  before the first frame
    on_report(session, report)         each receiver report (onReceivedRTCPPacket)
    on_frame(session, frame)           each encoded frame
    on_packet_sent(session, packet)    each packet but FEC sent (onSendRTPPacket)
    on_fec_sent(session, packet)       each FEC packet sent (onSendFECPacket)
    on_timer(session)                  at the time given to session.set_timer

``report`` is a dict: ``report_time_s``, ``received``, ``lost``, ``fraction_lost``,
``jitter_s`` (RFC 3550) and ``late_discards`` (RFC 7097; both None unless the flow's
``report_format`` is ``rtcp-xr``), ``fec_recovered`` (None: no report format carries it),
``owd_min_s``/``owd_mean_s``/
``owd_max_s``, ``rtt_s``, ``estimate_bps`` (a receiver-side estimate, if any) and
``packets``: ``(seq, kind, size, send_s, arrival_s or None, frame or None, late)`` per
packet. ``frame`` is a dict with ``frame``, ``size``, ``packets``, ``key``, ``capture_s``;
``packet`` one with ``seq``, ``kind``, ``size``, ``send_s``, ``frame``.

The session is the codec and network interfaces: ``set_bitrate(bps)``/``get_bitrate()``
(what the encoder produced over the last second), ``get_param(name)``/``set_param(name,
value) -> bool`` (``pacing_factor``, ``frame_schedule`` "paced" or "burst",
``skip_threshold`` in seconds; anything else returns False and changes nothing),
``enable_fec(bool)``, ``set_fec_scheme(group)`` (one XOR parity per ``group`` media
packets), ``set_timer(at_s)``, and ``now_s``, ``target_bps``, ``fec_enabled``.
Simulated time must advance: ``set_timer`` refuses a time before ``now_s`` (from
``on_timer``, one not after it) with a ``ValueError`` naming the policy and callback.
Ctrl-C stops a run whatever its policy does: :func:`run` raises ``KeyboardInterrupt``
and leaves no tables behind.

:func:`run` plays one flow of a scenario with the policy. ``preferences``
(setPreferences: ``codec``, ``fps``, ``resolution``) and ``session_params``
(setSessionParams: ``feedback_interval``, ``nack``) apply to that flow before the run, as
the paper has them negotiated at session set-up.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any

from rtcc.scenario import load_scenario, peek

__all__ = ["PREFERENCES", "SESSION_PARAMS", "Policy", "run"]

# Application preferences (§6.1) -> the flow's scenario field.
PREFERENCES = {"codec": "encoder", "fps": "fps", "resolution": "resolution"}
# Session parameters a run can set (§6.1: RTCP interval, AVPF feedback).
SESSION_PARAMS = {"feedback_interval": "feedback_interval", "nack": "nack"}

_ids = itertools.count()


class Policy:
    """A base class for policies; every callback is optional and does nothing here."""

    def on_start(self, session: Any) -> None:
        """Before the first frame: set the starting bitrate, FEC, a timer."""


def run(
    scenario: Any,
    policy: object,
    *,
    flow: int = 0,
    preferences: Mapping[str, Any] | None = None,
    session_params: Mapping[str, Any] | None = None,
    **simulate_kwargs: Any,
) -> Any:
    """Run ``scenario`` (a path, TOML text or dict, as :func:`rtcc.simulate` takes) with
    video flow ``flow`` driven by ``policy``; returns the :class:`rtcc.result.Result`.
    Deterministic for a given seed and policy."""
    import rtcc

    loaded = load_scenario(scenario, simulate_kwargs.pop("source", None))
    data = peek(loaded.text)
    if not data:
        # The native parser says what is wrong with the text.
        rtcc.native().Simulation(loaded.text, loaded.source)
        raise RuntimeError(f"{loaded.source}: needs a TOML reader (Python 3.11+ or tomli)")
    flows = data.get("flow", [])
    if not isinstance(flow, int) or isinstance(flow, bool) or not 0 <= flow < len(flows):
        raise ValueError(f"{loaded.source}: flow {flow!r}: the scenario has {len(flows)} flows")
    target = flows[flow]
    if target.get("kind", "video") != "video" or target.get("source", "video") != "video":
        raise ValueError(f"{loaded.source}: flow[{flow}]: a policy drives a video flow only")
    for given, table, what in ((preferences, PREFERENCES, "preferences"),
                               (session_params, SESSION_PARAMS, "session_params")):  # fmt: skip
        for key, value in (given or {}).items():
            if key not in table:
                raise ValueError(f"{what}: unknown key {key!r} (known: {', '.join(table)})")
            target[table[key]] = value
    pid = f"policy-{next(_ids)}"
    target["controller"] = {"name": "python", "policy": pid}
    native = rtcc.native()
    native.app_register(pid, policy)
    try:
        return rtcc.simulate(data, source=loaded.source, **simulate_kwargs)
    finally:
        native.app_unregister(pid)
