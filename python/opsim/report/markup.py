"""The report's HTML primitives: escaping, cell formats, tables, embedded figures and the page
around the body (its style, and the script that reports whether every figure loaded)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from typing import Any

from .. import plots
from ..units import fmt_bytes

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;max-width:1180px;
padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
.meta{color:#555;font-size:.9em}table{border-collapse:collapse;margin:.6em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top}th{background:#f3f3f3;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}figure{margin:1em 0;page-break-inside:avoid}
figure img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:.85em;color:#444;max-width:60em}
pre{background:#f7f7f7;padding:.6em;overflow:auto;font-size:.8em}.ok{color:#176e2b}.no{color:#a33}
.note{background:#fff8e1;border-left:4px solid #f0c36d;padding:.4em .8em;font-size:.9em}
details{margin:.3em 0}
"""

_SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-figures', String(imgs.length));
  document.body.setAttribute('data-figures-loaded', String(ok));
  if (ok !== imgs.length) { console.error('opsim report: ' + (imgs.length - ok) + ' figure(s) did not load'); }
});
"""


def esc(x: Any) -> str:
    """``x`` as text, escaped for HTML (quotes included)."""
    return html.escape(str(x), quote=True)


def num(v, fmt="{:,.0f}") -> str:
    """A number formatted by ``fmt``; ``-`` for None, the escaped value when it is no number."""
    if v is None:
        return "-"
    try:
        return fmt.format(v)
    except (ValueError, TypeError):
        return esc(v)


def pct(v, digits=1) -> str:
    """A fraction as a percentage; ``-`` for None."""
    return "-" if v is None else f"{100 * v:.{digits}f}%"


def size(n) -> str:
    """Bytes in binary units; ``-`` for None."""
    return fmt_bytes(n) if n is not None else "-"


def html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] | None = None) -> str:
    """An HTML table; cells are escaped unless given as ``("html", text)``."""
    numeric = numeric or [False] + [True] * (len(headers) - 1)
    out = ["<table>", "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr>"]
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            body = c[1] if isinstance(c, tuple) and c and c[0] == "html" else esc("-" if c is None else c)
            cls = ' class="n"' if numeric[i] else ""
            cells.append(f"<td{cls}>{body}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def img(fig, alt: str) -> str:
    """A matplotlib figure as an ``<img>`` with the PNG inline (base64)."""
    data = base64.b64encode(plots.to_bytes(fig, "png", dpi=96)).decode("ascii")
    return f'<img alt="{esc(alt)}" src="data:image/png;base64,{data}">'


def page(title: str, parts: Sequence[str]) -> str:
    """The whole document: ``parts`` (the body's HTML) in a page with the style and the script."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{esc(title)}</title><link rel="icon" href="data:,"><style>{_CSS}</style>'
        f"<script>{_SCRIPT}</script></head>\n<body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )
