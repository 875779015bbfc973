"""Scenario input: files, TOML text and Python dicts, all turned into TOML text.

The native module parses and validates scenarios; this module only gets text to
it. Dicts are serialised with a small TOML emitter because ``tomllib`` is
read-only and rtcc keeps its runtime dependencies to numpy/pandas/pyarrow/matplotlib.
"""

from __future__ import annotations

import importlib
import math
import os
import re
from collections.abc import Mapping, Sequence
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


# --- TOML emitter ---------------------------------------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def _key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"TOML keys must be strings, not {type(key).__name__}: {key!r}")
    return key if _BARE_KEY.match(key) else _string(key)


def _string(value: str) -> str:
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _is_table(value: object) -> bool:
    return isinstance(value, Mapping)


def _is_table_array(value: object) -> bool:
    return (
        isinstance(value, Sequence)
        and not isinstance(value, (str, bytes))
        and len(value) > 0
        and all(isinstance(v, Mapping) for v in value)
    )


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))  # int() so IntEnum and friends print as numbers
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        # float() drops subclasses such as numpy.float64, whose repr is not TOML;
        # "3.0", "1e-05" and "1e+16" are all valid TOML floats.
        return repr(float(value))
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, os.PathLike):
        return _string(os.fspath(value))
    if isinstance(value, Mapping):
        items = [f"{_key(k)} = {_value(v)}" for k, v in value.items() if v is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(value, Sequence) and not isinstance(value, bytes):
        if any(v is None for v in value):
            raise TypeError("TOML arrays cannot hold None")
        return "[" + ", ".join(_value(v) for v in value) + "]"
    # numpy scalars and the like: fall back on their Python equivalents.
    item = getattr(value, "item", None)
    if callable(item):
        return _value(item())
    raise TypeError(f"cannot write {type(value).__name__} to TOML: {value!r}")


def _emit_table(table: Mapping[str, Any], path: list[str], out: list[str]) -> None:
    # Scalars and inline values must precede sub-tables within a TOML table.
    scalars = [
        (k, v)
        for k, v in table.items()
        if v is not None and not _is_table(v) and not _is_table_array(v)
    ]
    tables = [(k, v) for k, v in table.items() if _is_table(v)]
    arrays = [(k, v) for k, v in table.items() if _is_table_array(v)]
    for k, v in scalars:
        out.append(f"{_key(k)} = {_value(v)}")
    for k, v in tables:
        sub = [*path, _key(k)]
        out.append("")
        out.append("[" + ".".join(sub) + "]")
        _emit_table(v, sub, out)
    for k, v in arrays:
        sub = [*path, _key(k)]
        for entry in v:
            out.append("")
            out.append("[[" + ".".join(sub) + "]]")
            _emit_table(entry, sub, out)


def dumps_toml(data: Mapping[str, Any]) -> str:
    """Serialise a nested dict to TOML text.

    Supports str, int, float, bool, path-likes, lists and nested dicts; lists of
    dicts become arrays of tables (``[[flow]]``). Keys whose value is ``None`` are
    left out, so optional settings can be passed as ``None``.
    """
    if not isinstance(data, Mapping):
        raise TypeError("top level of a TOML document must be a dict")
    out: list[str] = []
    _emit_table(data, [], out)
    return "\n".join(out).lstrip("\n") + "\n"
