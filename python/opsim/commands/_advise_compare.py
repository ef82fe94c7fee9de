"""``opsim advise --compare FILE``: the option, what it cannot be combined with, the run and the
table (the logic is :mod:`opsim.planner.advise.compare`; docs/planner.md, "Buy or
over-provision")."""

from __future__ import annotations

import sys

from .._output import Output, kv_table, table
from ..errors import option_error as _bad

#: options the compare file replaces: (attribute, option, whether it was given)
_GIVEN = (
    ("preset", lambda a: a.preset is not None),
    ("drive", lambda a: a.drive is not None),
    ("native", lambda a: a.native is not None),
    ("physical", lambda a: a.physical is not None),
    ("pages_per_block", lambda a: a.pages_per_block is not None),
    ("interface", lambda a: a.interface is not None),
    ("pe", lambda a: a.pe is not None),
    ("gc", lambda a: a.gc is not None),
    ("queue_depth", lambda a: a.queue_depth is not None),
    ("sector_size", lambda a: a.sector_size != 512),
    ("read_write", lambda a: a.read_write != "0:100"),
    ("block_size", lambda a: a.block_size is not None),
    ("sequential", lambda a: str(a.sequential).strip() not in ("0", "0%")),
    ("skew", lambda a: a.skew is not None),
    ("profile", lambda a: a.profile is not None),
    ("write_rate", lambda a: a.write_rate is not None),
    ("fio", lambda a: a.fio is not None),
    ("section", lambda a: a.section is not None),
    ("trace", lambda a: a.trace is not None),
    ("min_iops", lambda a: a.min_iops is not None),
    ("min_tbw", lambda a: a.min_tbw is not None),
    ("min_dwpd", lambda a: a.min_dwpd is not None),
    ("dwpd_years", lambda a: str(a.dwpd_years).strip() != "5"),
    ("min_lifetime", lambda a: a.min_lifetime is not None),
    ("min_capacity", lambda a: a.min_capacity is not None),
    ("max_latency", lambda a: bool(a.max_latency)),
    ("price", lambda a: a.price is not None),
    ("tenants", lambda a: a.tenants is not None),
    ("placement", lambda a: a.placement is not None),
    ("conservative", lambda a: a.conservative),
)


def add_option(g) -> None:
    g.add_argument(
        "--compare",
        metavar="FILE",
        help="buy or over-provision: a TOML file of the fleet's [need] (usable, host_writes_per_day, years, ...) "
        "and [[candidate]] drives with their price; ranks them by cost per usable TB-year with the drives and "
        "the OP each needs (docs/planner.md, 'Buy or over-provision')",
    )


def check(args) -> None:
    """Refuse, naming the option, what the compare file gives itself (before any work)."""
    for attr, given in _GIVEN:
        if given(args):
            raise _bad(attr, "the compare file gives the drives, the workload and the need; drop it or --compare")


def run(args, advisor, step, max_held_back) -> Output:
    """``advisor``: :mod:`opsim.planner.advise`, as the command imported it (when it runs)."""
    cf = advisor.load_compare(args.compare)  # every key checked, every drive loaded: exit 2 before any work
    tty = sys.stderr.isatty()

    def progress(msg: str) -> None:
        if tty:
            sys.stderr.write(f"\r\033[K  {msg}")
            sys.stderr.flush()

    d = advisor.compare_fleet(
        cf,
        step=step,
        max_held_back=max_held_back,
        confirm=args.simulate,
        model_blocks=args.model_blocks,
        seed=args.seed,
        progress=progress,
    )
    if tty:
        sys.stderr.write("\r\033[K")
    return Output(data=d, text=render(d), exit_code=0 if d["choice"] is not None else 1)


def _range(e: dict, key: str, fmt: str) -> str:
    v, lo, hi = e[key], e[f"{key}_low"], e[f"{key}_high"]
    if v is None:
        return "-"
    if lo == v and hi == v:
        return fmt.format(v)
    return f"{fmt.format(v)} ({fmt.format(lo)}-{'no limit' if hi is None else fmt.format(hi)})"


def _row(e: dict) -> list[str]:
    if not e["feasible"]:
        return [e["name"], f"{e['price']:,.4g}", "cannot meet the need", "-", "-", "-", "-", "-"]
    pct = f"{100 * e['held_back']:.1f}%"
    if e["held_back_max"] > e["held_back"] + 1e-12:
        pct += f" (up to {100 * e['held_back_max']:.1f}%)"
    drives = {"drives": e["drives"], "drives_low": e["drives_low"], "drives_high": e["drives_high"]}
    return [
        e["name"],
        f"{e['price']:,.4g}",
        pct,
        f"{e['usable_bytes_per_drive'] / 1e9:,.1f} GB",
        _range(drives, "drives", "{:,}"),
        _range(e, "cost", "{:,.0f}"),
        _range(e, "cost_per_usable_tb_year", "{:,.3f}"),
        ", ".join(e["binding"]),
    ]


def render(d: dict) -> str:
    need = d["need"]
    lat = "; ".join(
        f"{x['ios'] + ' ' if x['ios'] != 'all' else ''}{x['percentile']} <= {x['us']:,g} us"
        for x in need["max_latency_us"]
    )
    head = [
        "opsim advise --compare: buy or over-provision",
        f"  need: {need['usable_bytes'] / 1e12:,.6g} TB usable, {need['host_writes_per_day_bytes'] / 1e12:,.6g} TB "
        f"written a day, {need['years']:g} years"
        + (f", {need['min_iops_per_tb']:,g} IOPS per usable TB" if need["min_iops_per_tb"] is not None else "")
        + (f", latency {lat}" if lat else ""),
        f"  workload: {need['workload']['description']}",
        "",
    ]
    t = table(
        ["candidate", "price", "held back", "usable/drive", "drives", "cost", "per usable TB-year", "binding"],
        [_row(e) for e in d["candidates"]],
        align="lrrrrrrl",
        title="Candidates (ranges: the fleet solved at each end of the drive's 95% intervals)",
    )
    lines = [*head, t, ""]
    ch = d["choice"]
    lines.append(f"Choice: {ch['why']}" if ch is not None else "Choice: none: no candidate can meet the need")
    for e in d["candidates"]:
        lines.append(f"  {e['name']}: {e['why']}")
        b = e["cost_breakdown"]
        if b is not None and (b["bays"] is not None or b["power"] is not None):
            parts = [f"drives {b['drives']:,.0f}"]
            if b["bays"] is not None:
                parts.append(f"bays {b['bays']:,.0f}")
            if b["power"] is not None:
                parts.append(f"power {b['power']:,.0f} ({b['energy_kwh']:,.0f} kWh)")
            lines.append(f"    cost: {', '.join(parts)}")
        if e["feasible"]:
            lines.append(f"    to set each drive: {e['plan_command']}")
    lines.append("")
    lines.append(kv_table([(f"[{i + 1}]", a) for i, a in enumerate(d["assumptions"])], title="Model and assumptions"))
    return "\n".join(lines)
