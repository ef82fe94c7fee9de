"""What every plot shares: the Agg figure, the record of what was drawn, results and labels.

Each Axes carries ``opsim_drawn``, the record :func:`drawn` returns (axis labels and scales,
series, markers, model curves, and what was skipped and why).
"""

from __future__ import annotations

import io
import os
from types import SimpleNamespace

from .. import results as result_docs
from .._output import atomic_write
from ..errors import CommandError, InputError

#: why a simulated result has no WAF to draw
NO_WAF = "WAF undefined: no host writes in the measurement window (a read-only load)"


# numpy, matplotlib and the analytic models (numpy and scipy) are imported when a figure is drawn,
# not when this package is: `opsim --help` and `opsim plot --help` list the plot kinds from it, and
# `import opsim` (SimResult.plot) must not pay for them.  One import site each.


def lazy_numpy():
    import numpy  # noqa: PLC0415  (start-up: see above)

    return numpy


def lazy_mpl() -> SimpleNamespace:
    """matplotlib's pieces: the Agg canvas, Figure, colour maps, Line2D and the tickers."""
    try:
        from matplotlib import colormaps, figure, lines, ticker  # noqa: PLC0415  (start-up: see above)
        from matplotlib.backends import backend_agg  # noqa: PLC0415
    except ImportError as e:  # pragma: no cover - a dev dependency
        raise CommandError("plots need matplotlib (pip install matplotlib)") from e
    return SimpleNamespace(
        Figure=figure.Figure,
        FigureCanvasAgg=backend_agg.FigureCanvasAgg,
        colormaps=colormaps,
        Line2D=lines.Line2D,
        ticker=ticker,
    )


def lazy_models():
    """:mod:`opsim.models`, the analytic curves drawn beside simulated points."""
    from .. import models  # noqa: PLC0415  (start-up: see above)

    return models


def new_figure(ncols: int = 1, width: float = 7.5, height: float = 4.4):
    """A Figure on the Agg canvas (no pyplot, no display) with ``ncols`` axes."""
    m = lazy_mpl()
    fig = m.Figure(figsize=(width * ncols if ncols > 1 else width, height), layout="constrained")
    m.FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def record(ax, kind: str, title: str) -> dict:
    rec = {
        "kind": kind,
        "title": title,
        "xlabel": "",
        "ylabel": "",
        "xscale": "linear",
        "yscale": "linear",
        "series": [],
        "markers": [],
        "models": [],
        "skipped": [],
    }
    ax.opsim_drawn = rec
    ax.set_title(title, fontsize=10)
    return rec


def finish(ax, rec: dict) -> None:
    rec["xlabel"], rec["ylabel"] = ax.get_xlabel(), ax.get_ylabel()
    rec["xscale"], rec["yscale"] = ax.get_xscale(), ax.get_yscale()


def drawn(obj) -> list[dict] | dict:
    """What was drawn: for an Axes its record; for a Figure the records of its axes."""
    if hasattr(obj, "opsim_drawn"):
        return obj.opsim_drawn
    return [ax.opsim_drawn for ax in getattr(obj, "axes", []) if hasattr(ax, "opsim_drawn")]


def docs_and_labels(results, labels) -> tuple[list[dict], list[str]]:
    if isinstance(results, dict) or hasattr(results, "data"):
        results = [results]
    docs = []
    for i, r in enumerate(results):
        docs.append(result_docs.check(result_docs.as_doc(r), f"result {i + 1}"))
    if not docs:
        raise InputError("no results to plot", key="results")
    if labels is None:
        labels = [result_docs.default_label(d) for d in docs]
    labels = [str(x) for x in labels]
    if len(labels) != len(docs):
        raise InputError(f"labels: {len(labels)} labels for {len(docs)} results", key="labels")
    return docs, labels


def palette(n: int) -> list:
    colormaps = lazy_mpl().colormaps
    if n <= 10:
        cmap = colormaps["tab10"]
        return [cmap(i) for i in range(n)]
    cmap = colormaps["viridis"]
    return [cmap(i / max(1, n - 1)) for i in range(n)]


def axes_for(ax, ncols=1, **kw):
    if ax is None:
        fig, axes = new_figure(ncols, **kw)
        return fig, axes
    axes = list(ax) if isinstance(ax, (list, tuple)) else [ax]
    if len(axes) != ncols:
        raise InputError(f"ax: this plot needs {ncols} axes, got {len(axes)}", key="ax")
    return axes[0].figure, axes


def save(fig, path: str | os.PathLike, dpi: int = 110) -> str:
    """Write ``fig`` to ``path`` (format from the suffix: png, svg, pdf) atomically."""
    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf"):
        raise InputError(f"output: {path}: the file name must end in .png, .svg or .pdf", key="output")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise InputError(f"output: {path}: directory {d} does not exist", key="output")
    atomic_write(path, lambda f: fig.savefig(f, format=fmt, dpi=dpi), binary=True, suffix="." + fmt)
    return path


def to_bytes(fig, fmt: str = "png", dpi: int = 100) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    return buf.getvalue()


def skip(rec, label, reason):
    rec["skipped"].append({"label": label, "reason": reason})


def nothing(ax, rec):
    """No result had what this plot needs: say so on the axes (the record lists why)."""
    ax.text(
        0.5,
        0.5,
        "nothing to draw:\n" + "\n".join(f"{s['label']}: {s['reason']}" for s in rec["skipped"]),
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=8,
        wrap=True,
    )


def legend(ax, extra: list[dict], **kw) -> None:
    """The legend of the labelled series, then a grey key for each of ``extra`` (the keyword
    arguments of a ``Line2D``: a line style or marker every series shares), in small type."""
    Line2D = lazy_mpl().Line2D
    handles, _ = ax.get_legend_handles_labels()
    ax.legend(handles=handles + [Line2D([], [], color="0.3", **e) for e in extra], fontsize=7, **kw)


def null_locator():
    return lazy_mpl().ticker.NullLocator()


def percent_formatter():
    """Tick labels as percentages of 1.0, no decimals."""
    return lazy_mpl().ticker.PercentFormatter(1.0, decimals=0)
