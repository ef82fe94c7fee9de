"""Per-tenant WAF: one group of bars per namespace, one bar per result, the drive's WAF dashed."""

from __future__ import annotations

from collections.abc import Sequence

from .. import results as result_docs
from ..errors import InputError
from ..results import namespaces_of, placement_label, placement_of
from ..units import fmt_bytes
from .figure import axes_for, docs_and_labels, finish, lazy_numpy, legend, nothing, palette, record, skip


def _tenant_labels(docs: Sequence[dict]) -> list[str]:
    """Default bar labels: the placement, with the OP when two results share a placement."""
    labels = [placement_label(d) for d in docs]
    if len(set(labels)) < len(labels):
        labels = [f"{lab}, OP {d['op']['user'] * 100:.1f}%" for lab, d in zip(labels, docs)]
    if len(set(labels)) < len(labels):
        labels = [f"{lab} ({i + 1})" for i, lab in enumerate(labels)]
    return labels


def _check_tenant_results(docs: Sequence[dict], labels: Sequence[str]) -> None:
    """Every result a simulation with namespaces, else an InputError naming it."""
    for i, (d, lab) in enumerate(zip(docs, labels)):
        if result_docs.kind_of(d) != result_docs.SIM:
            raise InputError(
                f"result {i + 1} ({lab}): a measured result has no per-namespace WAF; the tenants plot needs "
                "simulations of configs with [[namespace]] tables",
                key="results",
            )
        if namespaces_of(d) is None:
            raise InputError(
                f"result {i + 1} ({lab}): no namespaces in the result (no 'namespaces' list); the tenants plot "
                "needs a simulation of a config with [[namespace]] tables, e.g. examples/fdp-blender.toml",
                key="results",
            )


def _tenant_names(docs: Sequence[dict]) -> tuple[list[str], dict[str, str]]:
    """The namespace names in first-seen order, and each one's capacity text (size, share)."""
    names: list[str] = []
    capacity: dict[str, str] = {}
    for d in docs:
        for n in namespaces_of(d) or []:
            name = str(n.get("name"))
            if name not in names:
                names.append(name)
                cap = n.get("capacity_bytes")
                user = d["drive"].get("user_bytes")
                capacity[name] = (
                    "" if cap is None else f"{fmt_bytes(cap)}" + (f", {100 * cap / user:.0f}%" if user else "")
                )
    return names, capacity


def _tenant_bars(rec, label: str, by_name: dict, names: list[str]) -> tuple[list, list, list]:
    """(group positions, WAFs, names) of one result's bars; namespaces without a WAF listed as skipped."""
    xs, ys, cats = [], [], []
    for gi, name in enumerate(names):
        this = by_name.get(name)
        if this is None:
            skip(rec, f"{label}: {name}", "the result has no namespace of that name")
            continue
        if this.get("waf") is None:
            skip(rec, f"{label}: {name}", "no host writes to this namespace in the measurement window")
            continue
        xs.append(gi)
        ys.append(float(this["waf"]))
        cats.append(name)
    return xs, ys, cats


def _draw_drive_waf(ax, ri: int, drive_waf: float, n_names: int, color) -> None:
    """A dashed line across the groups at the drive's WAF, named at the right."""
    ax.hlines(drive_waf, -0.5, n_names - 0.5, colors=[color], linestyles="--", lw=1.2, gid=f"drive:{ri}", zorder=3)
    ax.text(
        n_names - 0.5,
        drive_waf,
        f" drive {drive_waf:.2f}",
        color=color,
        ha="left",
        va="center",
        fontsize=7,
        gid=f"drivelabel:{ri}",
    )


def _draw_tenant_result(ax, rec, ri: int, n_docs: int, d: dict, label: str, color, names: list[str]) -> float:
    """One result's bars (and its drive WAF line); returns the highest WAF drawn (at least 1)."""
    np = lazy_numpy()

    width = 0.8 / max(1, n_docs)
    top = 1.0
    mode = placement_of(d)["mode"]
    by_name = {str(n.get("name")): n for n in namespaces_of(d) or []}
    xs, ys, cats = _tenant_bars(rec, label, by_name, names)
    shown = label if mode.lower() in label.lower() else f"{label} (placement {mode})"
    pos = np.asarray(xs, dtype=float) - 0.4 + width * (ri + 0.5)
    if xs:
        ax.bar(pos, ys, width=width * 0.95, color=color, label=shown, gid=f"series:{ri}")
        for p, v in zip(pos, ys):
            ax.text(p, v, f"{v:.2f}", ha="center", va="bottom", fontsize=6)
        top = max(top, *ys)
    drive_waf = d.get("waf")
    if drive_waf is not None:
        _draw_drive_waf(ax, ri, drive_waf, len(names), color)
        top = max(top, drive_waf)
    by_cat = [by_name[c] for c in cats]
    rec["series"].append(
        {
            "label": label,
            "source": "sim",
            "placement": mode,
            "x": cats,
            "y": ys,
            "drive_waf": drive_waf,
            "host_write_bytes": [n.get("host_write_bytes") for n in by_cat],
            "nand_write_bytes": [n.get("nand_write_bytes") for n in by_cat],
        }
    )
    return top


def tenants(results, labels: Sequence[str] | None = None, ax=None, title: str | None = None):
    """Per-tenant WAF: one group of bars per namespace (matched by name across results), one
    bar per result (default label: its placement, e.g. ``placement none`` against
    ``placement fdp, 4 handles``), each bar the namespace's WAF over the measurement window
    (its NAND writes, GC copies included, over its host writes); a dashed line in each
    result's colour marks the drive's WAF.  Every result must carry ``namespaces`` (a config
    with ``[[namespace]]`` tables): anything else is an :class:`InputError` naming it."""
    given = labels
    docs, labels = docs_and_labels(results, labels)
    _check_tenant_results(docs, labels)
    if given is None:
        labels = _tenant_labels(docs)
    fig, (ax,) = axes_for(ax)
    rec = record(ax, "tenants", title or "Write amplification per tenant (namespace)")
    names, capacity = _tenant_names(docs)
    colors = palette(len(docs))
    top = 1.0
    for ri, (d, label, color) in enumerate(zip(docs, labels, colors)):
        top = max(top, _draw_tenant_result(ax, rec, ri, len(docs), d, label, color, names))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(
        [f"{n}\n{capacity[n]}" if capacity.get(n) else n for n in names],
        fontsize=7,
        rotation=0 if len(names) <= 6 else 30,
        ha="center" if len(names) <= 6 else "right",
    )
    ax.set_xlim(-0.5, len(names) - 0.5 + (0.6 if len(names) <= 6 else 0.9))
    ax.axhline(1.0, color="0.4", lw=0.8)
    ax.set_ylim(0, top * 1.15)
    ax.set_xlabel("namespace (capacity, share of the user capacity)")
    ax.set_ylabel("write amplification (WAF), measurement window")
    ax.grid(True, axis="y", alpha=0.25)
    if any(s["y"] for s in rec["series"]):
        legend(ax, [{"ls": "--", "label": "drive WAF (all namespaces)"}], loc="upper right")
    else:
        nothing(ax, rec)
    finish(ax, rec)
    return fig
