"""Sweep runs as Ray tasks: ``rtcc sweep SPEC --executor ray [--address ADDR]``.

The sweep's own process (the driver) keeps the local pool's bookkeeping: it computes each
run's key, reads the cache, writes each finished run to ``OUT/runs`` itself and holds the
folder's lock, so workers need no shared file system and the cache and resume rules are
the same whichever executor ran a run. Workers only simulate and analyse.

Files a scenario reads -- trace files (``link.capacity``, ``link.reverse_capacity``),
content files and photos (``flow.content``), encoder and quality profile files -- are put
in Ray's object store once per content and written to a temporary folder on each
worker's machine the first time a task there needs them; the worker simulates a copy of
the scenario text whose paths point there. The cache key and the cached record keep the
driver's text. The key also names the driver's simulator build, so a worker whose
native module differs is refused rather than trusted.

Every machine of the cluster needs the same rtcc installed (``pip install "rtcc[ray]"``);
Ray itself is imported only here, so the local pool needs none.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import tempfile
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from rtcc.scenario import dumps_toml, peek
from rtcc.sweepspec import SweepError

__all__ = ["MISSING", "connect", "ray_module", "run", "ship_fields"]

MISSING = "--executor ray needs Ray: pip install 'rtcc[ray]'"
# Profile names the simulator takes as built in, never as files (rtcc-sim's profile.rs,
# and the content model's own profiles).
_BUILTIN_PROFILES = frozenset({"vp8", "h264", "static", "dynamic"})
# Stands for the worker's folder of shipped files in the text a task receives.
_PLACEHOLDER = "@rtcc-shipped@"
_WRONG_BUILD = "\x00wrong build\x00"
# Seconds to wait for a cluster's port before giving up: Ray itself retries for minutes.
_CONNECT_TIMEOUT_S = 5.0
# Runs in flight per cluster CPU: keeps every worker busy while the driver stores results.
_IN_FLIGHT_PER_CPU = 2

Task = tuple[str, str, str, int, Any, str | None]  # key, text, source, seed, analysis, cache
Finish = Callable[[str, dict[str, Any] | None, str | None], None]


def ray_module() -> Any:
    """The ``ray`` package, or a :class:`SweepError` saying how to install it."""
    try:
        import ray
    except ImportError:
        raise SweepError(MISSING) from None
    return ray


def connect(address: str | None, jobs: int | None = None) -> Any:
    """Ray, initialised: already (by the caller), at ``address``, at ``RAY_ADDRESS`` or a
    cluster started on this machine with ``ray start``, else a local instance of ``jobs``
    CPUs (default: all)."""
    if address is not None:
        _reachable(address)  # before Ray: a wrong address is the first thing to hear of
    ray = ray_module()
    if ray.is_initialized():
        return ray
    quiet: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False}
    given = "--address"
    if address is None and os.environ.get("RAY_ADDRESS"):
        address, given = os.environ["RAY_ADDRESS"], "RAY_ADDRESS"
        _reachable(address, given)
    if address is not None:
        try:
            ray.init(address=address, **quiet)
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise SweepError(f"{given} {address}: {_one_line(exc)}") from None
        return ray
    try:
        ray.init(address="auto", **quiet)
    except ConnectionError:  # no cluster here: start one for this process
        ray.init(num_cpus=jobs or os.cpu_count() or 1, include_dashboard=False, **quiet)
    return ray


def _reachable(address: str, given: str = "--address") -> None:
    """Refuse an address nothing listens on at once (Ray would retry for minutes);
    ``given`` names where the address came from."""
    if address in ("auto", "local"):
        return
    parts = urlsplit(address if "://" in address else f"//{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        raise SweepError(f"{given} {address}: not a Ray cluster address (HOST:PORT)")
    try:
        socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        raise SweepError(
            f"{given} {address}: no Ray cluster answers there ({exc.strerror or exc}); "
            "start one with 'ray start --head'"
        ) from None


def run(tasks: Sequence[Task], jobs: int | None, address: str | None, finish: Finish) -> None:
    """Run ``tasks`` (the local pool's) on Ray; store each record in its cache file, then
    ``finish(key, record, error)`` in completion order. At most ``jobs`` runs are in flight
    (default: twice the cluster's CPUs)."""
    from rtcc import sweeprun

    ray = connect(address, jobs)
    remote = ray.remote(num_cpus=1)(_task)
    build = sweeprun._simulator_digest()
    shipper = _Shipper(ray)
    limit = jobs or _IN_FLIGHT_PER_CPU * max(1, int(ray.cluster_resources().get("CPU", 1)))
    waiting: Iterator[Task] = iter(tasks)
    running: dict[Any, Task] = {}

    def submit(task: Task) -> None:
        key, text, source, seed, analysis, _ = task
        shipped_text, files = shipper.prepare(text, source)
        running[remote.remote(key, shipped_text, source, seed, analysis, files, build)] = task

    try:
        for task in islice(waiting, limit):
            submit(task)
        while running:
            try:
                done, _ = ray.wait(list(running), num_returns=1)
            except ray.exceptions.RayError as exc:  # the cluster itself went away
                raise SweepError(
                    f"Ray cluster: {_first_line(exc)}; the finished runs are cached, run the "
                    "same command again to resume"
                ) from None
            for ref in done:
                task = running.pop(ref)
                key, record, error = _outcome(ray, ref, task)
                if record is not None:
                    record["scenario"] = task[1]  # the driver's text, not the worker's paths
                    if task[5] is not None:
                        sweeprun.store(task[5], record)
                following = next(waiting, None)
                if following is not None:
                    submit(following)
                finish(key, record, error)
    finally:
        for ref in running:  # Ctrl-C or a failed run: finished runs are already stored
            with contextlib.suppress(Exception):  # keep the error that got us here
                ray.cancel(ref, force=True)


def _outcome(ray: Any, ref: Any, task: Task) -> tuple[str, dict[str, Any] | None, str | None]:
    try:
        key, record, error = ray.get(ref)
    except ray.exceptions.RayError as exc:  # the worker died (a crash, out of memory)
        return task[0], None, f"Ray task failed: {_first_line(exc)}"
    if error is not None and error.startswith(_WRONG_BUILD):
        raise SweepError(
            f"Ray worker {error.removeprefix(_WRONG_BUILD)} runs another rtcc build than this "
            "process (the cache key names this one); install the same rtcc on every machine"
        )
    return key, record, error


def _task(
    key: str,
    text: str,
    source: str,
    seed: int,
    analysis: Any,
    files: list[tuple[str, str, list[Any]]],
    build: str,
) -> tuple[str, dict[str, Any] | None, str | None]:
    """Worker: check the simulator build, write the shipped files here, run ``_one``."""
    from rtcc import sweeprun

    mine = sweeprun._simulator_digest()
    if mine != build:
        return key, None, f"{_WRONG_BUILD}on {socket.gethostname()} (build {mine[:12]})"
    if files:
        text = materialize(text, files, _fetch)
    return sweeprun._one(key, text, source, seed, analysis, None)


def _fetch(ref: list[Any]) -> bytes:
    import ray

    data: bytes = ray.get(ref[0])
    return data


def shipped_root() -> Path:
    """Where a worker keeps the files shipped to it, one folder per content digest."""
    return Path(tempfile.gettempdir()) / "rtcc-shipped"


def materialize(
    text: str, files: list[tuple[str, str, list[Any]]], fetch: Callable[[list[Any]], bytes]
) -> str:
    """Write each shipped file under :func:`shipped_root` (unless a task here already did)
    and return ``text`` with the placeholder pointing there."""
    root = shipped_root()
    for digest, name, ref in files:
        path = root / digest / name
        if path.is_file():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{name}.{os.getpid()}.tmp")
        tmp.write_bytes(fetch(ref))
        tmp.replace(path)  # several workers of a machine may fetch the same file
    # The text holds the path inside a TOML basic string: escape it as one.
    return text.replace(_PLACEHOLDER, json.dumps(str(root))[1:-1])


class _Shipper:
    """Puts each file a run reads into the object store once; rewrites run texts."""

    def __init__(self, ray: Any) -> None:
        self.ray = ray
        self.refs: dict[str, Any] = {}

    def prepare(self, text: str, source: str) -> tuple[str, list[tuple[str, str, list[Any]]]]:
        """The text a worker runs (shipped files' paths replaced by placeholders) and the
        files to ship as (digest, name, [object ref])."""
        from rtcc import sweeprun

        if not any(word in text for word in ("file", "profile", "photos")):
            return text, []
        data = peek(text)
        base = Path(source).parent
        files: dict[str, tuple[str, str, list[Any]]] = {}
        for container, key in ship_fields(data):
            path = base / str(container[key])
            if not path.is_file():
                continue  # the run reports the missing file itself, naming the field
            digest = sweeprun._file_digest(str(path))
            if digest not in self.refs:
                self.refs[digest] = self.ray.put(path.read_bytes())
            container[key] = f"{_PLACEHOLDER}/{digest}/{path.name}"
            files[digest] = (digest, path.name, [self.refs[digest]])
        if not files:
            return text, []
        return dumps_toml(data), list(files.values())


def ship_fields(scenario: dict[str, Any]) -> Iterator[tuple[Any, Any]]:
    """(container, key) of every scenario value naming a file the simulator reads."""
    link = scenario.get("link")
    if isinstance(link, dict):
        for name in ("capacity", "reverse_capacity"):
            capacity = link.get(name)
            trace = isinstance(capacity, dict) and capacity.get("kind") == "trace"
            if trace and isinstance(capacity.get("file"), str):
                yield capacity, "file"
    flows = scenario.get("flow")
    for flow in flows if isinstance(flows, list) else []:
        if not isinstance(flow, dict):
            continue
        content = flow.get("content")
        if isinstance(content, dict):
            if isinstance(content.get("file"), str):
                yield content, "file"
            photos = content.get("photos")
            if isinstance(photos, list):
                yield from ((photos, i) for i, p in enumerate(photos) if isinstance(p, str))
        for name in ("encoder", "quality"):
            table = flow.get(name)
            if isinstance(table, dict):
                profile = table.get("profile")
                if isinstance(profile, str) and profile not in _BUILTIN_PROFILES:
                    yield table, "profile"


def _first_line(exc: BaseException) -> str:
    """A Ray error's first line (the rest is a remote traceback), one line, bounded."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return " ".join(first.split())[:300]


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
