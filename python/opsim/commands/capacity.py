"""``opsim capacity``: IDEMA LBA counts and OP arithmetic in every basis (exact)."""

from __future__ import annotations

from .._output import Output, kv_table, table
from ..errors import InputError
from ..planner.capacity import BASIS_HELP, idema_lba_count, max_lba_hex, plan_capacity
from ..units import fmt_bytes


def register(sub, common):
    p = sub.add_parser(
        "capacity",
        parents=[common],
        help="IDEMA LBA counts, max LBA, and OP in every basis for a target capacity",
        description=(
            "Capacity and OP arithmetic, exact (integers and fractions, no float rounding). "
            "Sizes: 480GB (a whole number of GB >= 50 becomes its IDEMA LBA1-03 count), "
            "447GiB, or a sector count such as 312602976s. Give at most one of --user, --op "
            "(with --op-basis) or --max-lba; with none, the native capacity is described. "
            "Without --physical, the NAND is assumed to be the native GB in GiB (SK hynix "
            "'level 1' OP, 7.37%%), and the output says so. See docs/planner.md."
        ),
    )
    p.add_argument("--native", help="native (factory) user capacity: 480GB, 312602976s, ...")
    p.add_argument("--user", help="target user capacity: 400GB, 250082380s, ...")
    p.add_argument("--op", help="target OP, e.g. 28%% or 0.28 (needs --op-basis)")
    p.add_argument(
        "--op-basis",
        choices=["user", "physical", "native", "added"],
        help="user=(P-U)/U, physical=(P-U)/P, native=(N-U)/N, added=(N-U)/U",
    )
    p.add_argument("--max-lba", help="share of the native LBAs kept, e.g. 80%% (Intel MaximumLBA=80%%)")
    p.add_argument("--physical", help="physical NAND capacity in bytes/units (default: assumed native GB as GiB)")
    p.add_argument(
        "--sector-size", type=int, default=512, choices=[512, 4096], help="logical sector size (default 512)"
    )
    p.add_argument(
        "--no-idema",
        dest="idema",
        action="store_false",
        help="convert whole GB as bytes / sector size instead of the IDEMA count",
    )
    p.add_argument(
        "--round-user",
        metavar="STEP",
        help="round a user capacity computed from --op to the nearest multiple of STEP (e.g. 8GB); "
        "the OP actually achieved is reported",
    )
    p.add_argument(
        "--table",
        metavar="GB[,GB...]",
        help="print IDEMA rows (LBA count, max LBA, hex, bytes) for these marketed GB capacities",
    )
    p.set_defaults(func=run)


def idema_rows(spec: str, sector_size: int) -> list[dict]:
    rows = []
    for part in str(spec).split(","):
        t = part.strip().upper().removesuffix("GB").strip().replace("_", "")
        if not t.isdigit():
            raise InputError(f"table: {part.strip()!r} is not a whole number of GB", key="table")
        gb = int(t)
        n = idema_lba_count(gb, sector_size)
        rows.append(
            {"gb": gb, "lba_count": n, "max_lba": n - 1, "max_lba_hex": max_lba_hex(n - 1), "bytes": n * sector_size}
        )
    return rows


def _pct(v) -> str:
    return "-" if v is None else f"{100 * v:.4f}%"


def summary_text(d: dict) -> str:
    nat, usr, ph = d["native"], d["user"], d["physical"]

    def cap_rows(c):
        idema = (
            f"{c['idema_gb']} GB" + ("" if c["idema_exact"] else f" + {c['idema_extra_sectors']:,} sectors")
            if c["idema_gb"] is not None
            else "-"
        )
        return [c["sectors"], c["max_lba"], c["max_lba_hex"], c["bytes"], f"{c['gb']:.3f}", f"{c['gib']:.3f}", idema]

    lines = [
        table(
            ["", "LBA count", "max LBA", "max LBA (hex)", "bytes", "GB", "GiB", "IDEMA"],
            [["native", *cap_rows(nat)], ["user", *cap_rows(usr)]],
            title=f"opsim capacity  ({d['sector_size']}-byte sectors, solved from {d['solved_from']})",
            align="lrrrrrrl",
        )
    ]
    lines.append("")
    lines.append(
        kv_table(
            [
                ("held back", f"{d['held_back']['sectors']:,} sectors = {d['held_back']['bytes']:,} bytes"),
                (
                    "physical (NAND)",
                    (f"{ph['bytes']:,} bytes ({fmt_bytes(ph['bytes'])}) - " if ph["bytes"] else "") + ph["note"],
                ),
            ]
        )
    )
    lines.append("")
    rows = []
    for b in ("user", "physical", "native", "added"):
        nom = d["op_nominal"][b] if d.get("op_nominal") else None
        rows.append([b, BASIS_HELP[b], _pct(d["op"][b]), _pct(nom)])
    lines.append(
        table(
            ["OP basis", "definition", "OP (LBAs)", "OP (marketed GB)"],
            rows,
            title="OP in every basis (user/physical use the physical capacity above)",
            align="llrr",
        )
    )
    if d["notes"]:
        lines.append("")
        lines += [f"note: {n}" for n in d["notes"]]
    return "\n".join(lines)


def run(args) -> Output:
    if args.table:
        rows = idema_rows(args.table, args.sector_size)
        text = table(
            ["GB", "IDEMA LBA count", "IDEMA max LBA", "max LBA (hex)", "user bytes"],
            [[str(r["gb"]), r["lba_count"], r["max_lba"], r["max_lba_hex"], r["bytes"]] for r in rows],
            title=f"IDEMA LBA1-03, {args.sector_size}-byte sectors",
        )
        data = {"sector_size": args.sector_size, "idema": rows}
        if args.native is None:
            return Output(data=data, text=text)
    if args.native is None:
        raise InputError(
            "native: give the drive's native capacity with --native (e.g. 480GB or 937703088s)", key="native"
        )
    d = plan_capacity(
        args.native,
        sector_size=args.sector_size,
        user=args.user,
        op=args.op,
        op_basis=args.op_basis,
        max_lba=args.max_lba,
        physical=args.physical,
        idema=args.idema,
        round_user=args.round_user,
    )
    text = summary_text(d)
    if args.table:
        d["idema"] = rows
        text = (
            text
            + "\n\n"
            + table(
                ["GB", "IDEMA LBA count", "IDEMA max LBA", "max LBA (hex)", "user bytes"],
                [[str(r["gb"]), r["lba_count"], r["max_lba"], r["max_lba_hex"], r["bytes"]] for r in rows],
            )
        )
    return Output(data=d, text=text)
