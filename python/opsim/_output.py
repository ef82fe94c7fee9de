"""Shared output conventions for every opsim command.

A command returns an :class:`Output`: a JSON-serialisable document for programs and a
human-readable text (usually tables) for people.  ``opsim CMD --json`` prints the
document on stdout; ``--json FILE`` writes it to FILE atomically and prints the text.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Iterable, Sequence


@dataclass
class Output:
    data: dict
    text: str = ""
    #: process exit code after the output is printed (130: interrupted, results kept)
    exit_code: int = 0


def _fmt_cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if v != 0 and (abs(v) >= 1e7 or abs(v) < 1e-3):
            return f"{v:.4g}"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.4g}" if abs(v) < 10 else f"{v:.2f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None,
          align: str | None = None) -> str:
    """Render a fixed-width table.  ``align`` is a string of 'l'/'r' per column
    (default: first column left, the rest right)."""
    rows = [[_fmt_cell(c) for c in r] for r in rows]
    headers = [str(h) for h in headers]
    n = len(headers)
    if align is None:
        align = "l" + "r" * (n - 1)
    widths = [len(h) for h in headers]
    for r in rows:
        if len(r) != n:
            raise ValueError(f"table row has {len(r)} cells, expected {n}")
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.ljust(widths[i]) if align[i] == "l" else c.rjust(widths[i]))
        return "  ".join(out).rstrip()

    parts = []
    if title:
        parts.append(title)
    parts.append(line(headers))
    parts.append("  ".join("-" * w for w in widths))
    parts.extend(line(r) for r in rows)
    return "\n".join(parts)


def kv_table(pairs: Iterable[tuple[str, Any]], title: str | None = None) -> str:
    """A two-column key/value listing."""
    pairs = [(str(k), _fmt_cell(v)) for k, v in pairs]
    w = max((len(k) for k, _ in pairs), default=0)
    lines = [title] if title else []
    lines += [f"{k.ljust(w)}  {v}" for k, v in pairs]
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], align: str, rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table; ``align`` has 'l' or 'r' per column; cells are used as given."""
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, NaN and dataclasses into plain JSON values."""
    try:
        import numpy as np
    except ImportError:  # pragma: no cover
        np = None
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if np is not None:
        if isinstance(obj, np.ndarray):
            return [to_jsonable(v) for v in obj.tolist()]
        if isinstance(obj, np.generic):
            return to_jsonable(obj.item())
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return to_jsonable(obj.to_dict())
    return obj


def dumps(data: Any) -> str:
    return json.dumps(to_jsonable(data), indent=2, sort_keys=False)


def file_mode() -> int:
    """0666 less the process umask: what open() would have given (mkstemp makes 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def atomic_write(path: str | os.PathLike, write, binary: bool = False, suffix: str = "") -> None:
    """Write a file so that readers never see it half-written: ``write(f)`` fills a temporary
    file in the same directory, which is then renamed into place (removed on any error)."""
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".opsim-", suffix=suffix, dir=d)
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb" if binary else "w") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write a text file atomically (see :func:`atomic_write`), ending with a newline."""
    atomic_write(path, lambda f: f.write(text if text.endswith("\n") else text + "\n"))
