"""Arguments of the Python API checked at the boundary, before they reach the Rust core.

One helper per kind of argument; each raises :class:`opsim.errors.InputError` naming the
argument, never a bare TypeError or OverflowError (which is what PyO3 raises when it cannot
convert a Python object, without naming the argument for an OverflowError).
"""

from __future__ import annotations

import json
import math
import operator
import os
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from .errors import InputError

T = TypeVar("T")


def _refuse(name: str, what: str) -> InputError:
    return InputError(f"{name}: {what}", key=name)


def uint(name: str, value: Any, bits: int = 64, *, lo: int = 0, hi: int | None = None) -> int:
    """``value`` as an integer in ``lo..hi`` (default: what ``bits`` unsigned bits hold)."""
    if isinstance(value, bool):
        raise _refuse(name, f"must be an integer, not {value!r}")
    try:
        v = operator.index(value)
    except TypeError:
        raise _refuse(name, f"must be an integer, not {type(value).__name__}") from None
    top = (1 << bits) - 1 if hi is None else hi
    if not lo <= v <= top:
        raise _refuse(name, f"{v} is out of range; expected {lo}..{top}")
    return v


def number(name: str, value: Any) -> float:
    """``value`` as a finite float."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise _refuse(name, f"must be a number, not {type(value).__name__}")
    try:
        v = float(value)
    except (TypeError, ValueError, OverflowError):
        raise _refuse(name, f"must be a number, not {type(value).__name__}") from None
    if not math.isfinite(v):
        raise _refuse(name, f"must be a finite number, not {v}")
    return v


def _each(name: str, values: Any, what: str, item: Callable[[str, Any], T]) -> list[T]:
    """``values`` (an iterable, not a string or a mapping), each checked by ``item``."""
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise _refuse(name, f"must be a list of {what}, not {type(values).__name__}")
    return [item(f"{name}[{i}]", v) for i, v in enumerate(values)]


def numbers(name: str, values: Any) -> list[float]:
    """``values`` (an iterable, not a string or a mapping) as a list of finite floats."""
    return _each(name, values, "numbers", number)


def text(name: str, value: Any) -> str:
    """``value``, a str."""
    if not isinstance(value, str):
        raise _refuse(name, f"must be a string, not {type(value).__name__}")
    return value


def path(name: str, value: Any) -> str:
    """``value``, a str or os.PathLike naming a file (not bytes: the core takes text paths)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str):
        raise _refuse(name, f"must be a path (str or os.PathLike), not {type(value).__name__}")
    if not value or "\0" in value:
        raise _refuse(name, f"{value!r} is not a valid path")
    return value


def flag(name: str, value: Any) -> bool:
    """``value``, a bool (0 and 1 too); anything else is refused rather than read as true."""
    if isinstance(value, bool) or (type(value).__name__ in ("int", "bool_") and value in (0, 1)):
        return bool(value)
    raise _refuse(name, f"must be true or false, not {value!r}"[:200])


def flags(name: str, values: Any) -> list[bool]:
    """``values`` (an iterable, not a string or a mapping) as a list of bools."""
    return _each(name, values, "true/false values", flag)


def json_text(name: str, value: Any) -> str:
    """``value`` (a mapping) as JSON text for the core; the core's errors name ``name.key``."""
    if not isinstance(value, Mapping):
        raise _refuse(name, f"must be a dict, not {type(value).__name__}")
    try:
        return json.dumps(dict(value))
    except (TypeError, ValueError) as e:
        raise _refuse(name, f"cannot be read: {e}") from None
