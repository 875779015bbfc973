"""Scenario input: files, TOML text and Python dicts, all turned into TOML text.

The native module parses and validates scenarios; this module only gets text to
it. Dicts are written as TOML by tomli-w (``tomllib`` only reads).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rtcc.limits import check_nesting, read_limited

__all__ = [
    "ScenarioInput", "ScenarioLike", "dumps_toml", "load_scenario", "peek", "read_text",
    "toml_module",
]  # fmt: skip


@dataclass(frozen=True)
class ScenarioInput:
    """Scenario text plus where it came from (used in error messages)."""

    text: str
    source: str
    # File stem for scenarios read from disk, else None.
    stem: str | None = None


ScenarioLike = str | os.PathLike[str] | Mapping[str, Any] | ScenarioInput


def load_scenario(scenario: ScenarioLike, source: str | None = None) -> ScenarioInput:
    """Turn a path, TOML text or a dict (or a ready ScenarioInput) into :class:`ScenarioInput`.

    A ``str`` is TOML text when it contains a newline or ``=``; otherwise it is a
    path. Reading a path raises ``FileNotFoundError``/``IsADirectoryError``/
    ``UnicodeDecodeError`` as usual. A file that is not a regular file or is larger
    than :data:`rtcc.limits.MAX_INPUT_BYTES`, and TOML nested deeper than
    :data:`rtcc.limits.MAX_NESTING`, are refused with a ``ValueError`` naming the source.
    """
    if source is not None and not isinstance(source, str):
        raise TypeError(f"source must be a string, not {type(source).__name__}")
    if isinstance(scenario, ScenarioInput):
        loaded = scenario if source is None else ScenarioInput(scenario.text, source, scenario.stem)
    elif isinstance(scenario, Mapping):
        try:
            text = dumps_toml(scenario)
        except RecursionError:
            raise ValueError(f"{source or '<dict>'}: nested too deeply") from None
        loaded = ScenarioInput(text, source or "<dict>")
    elif isinstance(scenario, str) and ("\n" in scenario or "=" in scenario):
        loaded = ScenarioInput(scenario, source or "<scenario>")
    elif isinstance(scenario, (str, os.PathLike)):
        path = Path(scenario)
        text = read_text(path)
        loaded = ScenarioInput(text, source or str(path), path.stem)
    else:
        raise TypeError(
            f"scenario must be a path, TOML text or a dict, not {type(scenario).__name__}"
        )
    check_nesting(loaded.text, loaded.source)
    return loaded


def read_text(path: Path) -> str:
    """A scenario or spec file's text; a byte-order mark some editors write is
    not TOML and is dropped. Devices, pipes and files above the input size limit
    (:data:`rtcc.limits.MAX_INPUT_BYTES`, 16 MiB) are refused before reading."""
    return read_limited(path).decode("utf-8-sig")


def toml_module() -> Any:
    """tomllib (3.11+) or its 3.10 backport tomli; None if neither."""
    for name in ("tomllib", "tomli"):
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def peek(text: str) -> dict[str, Any]:
    """Best-effort parse of scenario text for the Python side (display, media
    files); the native parser validates it and reports errors. Empty when no
    TOML reader is installed, the text is not TOML or nested too deeply to read
    here (the native parser refuses it with a message)."""
    from rtcc.limits import too_deep

    toml = toml_module()
    if toml is None or too_deep(text):
        return {}
    try:
        data: dict[str, Any] = toml.loads(text)
    except (toml.TOMLDecodeError, RecursionError):
        return {}
    return data


# --- TOML text from Python data ----------------------------------------------------------


def dumps_toml(data: Mapping[str, Any]) -> str:
    """Serialise a nested dict to TOML text (with tomli-w).

    Takes str, int, float, bool, path-likes, lists, tuples and nested dicts, and numpy
    scalars and arrays as their Python values; a list of dicts is an array of tables
    (``[[flow]]``, or inline when short). Keys whose value is ``None`` are left out, so
    optional settings can be passed as ``None``; ``None`` inside a list is refused.
    """
    import tomli_w

    if not isinstance(data, Mapping):
        raise TypeError("top level of a TOML document must be a dict")
    text: str = tomli_w.dumps(_plain(data))
    return text


def _plain(value: Any) -> Any:
    """``value`` in the types tomli-w writes: dicts without their None-valued keys, lists,
    and plain str/int/float/bool (IntEnum, numpy.float64 and the like are subclasses or
    scalars whose text is not TOML's)."""
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"TOML keys must be strings, not {type(key).__name__}: {key!r}")
            if item is not None:
                out[key] = _plain(item)
        return out
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, os.PathLike):
        return _plain(os.fspath(value))
    if isinstance(value, (list, tuple)):
        if any(v is None for v in value):
            raise TypeError("TOML arrays cannot hold None")
        return [_plain(v) for v in value]
    # numpy scalars and arrays: their Python values.
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, bytes):
        return _plain(tolist())
    raise TypeError(f"cannot write {type(value).__name__} to TOML: {value!r}")
