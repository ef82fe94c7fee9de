"""NVMe Flexible Data Placement (FDP, TP4146) on a real drive: the nvme-cli procedure.

:func:`make_fdp_plan` computes, and only computes, what ``opsim plan --placement fdp`` prints:
check that the controller supports FDP, read the FDP configurations of the endurance group,
delete every namespace in it (the controller refuses to change the FDP feature while one
exists), enable one configuration, create one namespace per tenant with its placement handle
list (``nvme create-ns --nphndls --phndls``), attach them, and verify with ``nvme fdp``. Nothing
here writes to a device.

The namespace sizes are LBA counts from :func:`opsim.planner.capacity.plan_capacity`, the same
arithmetic every other plan uses (IDEMA counts for whole GB, exact sectors, percentages of the
native LBAs), pinned to the Rust core by tests/core/test_core_truth_op.py. The capacity left outside
every namespace is the spare area the drive sees as OP; it is reported in every OP basis by the
same function.

Sources (docs/fdp-real-drives.md has the links): nvme-cli's ``fdp`` plugin and its man pages
(``configs``, ``usage``, ``stats``, ``events``, ``status``, ``update``, ``set-events``,
``feature``), ``create-ns`` (``--nphndls``, ``--phndls``, ``--endg-id``), the Set Features
encoding nvme-cli's ``fdp feature`` sends (FID 1Dh, CDW11 = endurance group, CDW12 = config
index << 8 | enable), and the Identify Controller CTRATT bit 19 (FDPS).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from ..devices.nvme import lba_format_index
from ..errors import CapacityError, InputError
from .capacity import capacity_from_sectors, check_sector_size, parse_capacity, plan_capacity

#: Set Features / Get Features identifier of the Flexible Data Placement feature
FDP_FEATURE_ID = 0x1D
#: Namespace Management's Placement Handle List holds at most 128 entries
MAX_PHNDLS = 128
#: FDP event types worth enabling per handle: RU not fully written, RU time limit exceeded,
#: controller-level reset modified RUHs, invalid placement identifier, media reallocated,
#: implicitly modified RUH
FDP_EVENT_TYPES = (0x0, 0x1, 0x2, 0x3, 0x80, 0x81)

#: The traps every FDP plan states (key -> text); the JSON carries them as ``traps``.
TRAPS = {
    "endurance_group": "FDP is a property of an endurance group, not of a namespace: one configuration is "
    "enabled for the whole group, and every namespace in the group shares its reclaim unit handles.",
    "delete_first": "The controller refuses to enable, change or disable FDP while any namespace exists in the "
    "endurance group: every namespace in it must be deleted first (DATA LOSS), and deleted again to turn FDP off.",
    "support": "Not every drive supports FDP. Tell by: Identify Controller CTRATT bit 19 (FDPS, ctratt & 0x80000) "
    "and bit 4 (endurance groups); `nvme fdp configs` returning a configuration with the valid bit (fdpa bit 7) "
    "set; `nvme id-ctrl -H` printing 'Flexible Data Placement Supported'. Without it `nvme fdp configs` fails "
    "(invalid log page or field) and nothing below applies.",
    "config_index": "The configuration index given to `nvme fdp feature --enable-conf-idx` (or CDW12 bits 15:8) is "
    "the position of the configuration in `nvme fdp configs`; choose one whose valid bit (fdpa bit 7) is set.",
    "ruh_count_and_size": "The number of reclaim unit handles (nruh), of reclaim groups (nrg), of namespaces "
    "the configuration supports (nnss) and the reclaim unit nominal size (runs, bytes) come from that configuration "
    "in `nvme fdp configs`; a placement handle list may only name RUH indices below nruh.",
    "unallocated_is_op": "Capacity left outside every namespace of the endurance group is never written by the "
    "host: the drive uses it as spare area, i.e. it is OP, exactly as with a shrunk single namespace.",
    "pli_indexes": "fio's fdp_pli= (and `nvme fdp status`) index the namespace's own placement handle list, not "
    "the RUH ids: a namespace created with --phndls=3 is written through RUH 3 with fdp_pli=0.",
    "default_handle": "Writes that carry no placement directive (the block device /dev/nvmeXnY, file systems, "
    "fio without io_uring_cmd) go to placement handle 0 of their namespace; only NVMe passthrough "
    "(/dev/ngXnY with fio's io_uring_cmd engine, Linux 5.19+, fio 3.34+) can choose another handle.",
    "isolation": "Reclaim unit handle types (ruht in `nvme fdp configs`): 1 = initially isolated (garbage "
    "collection may later mix data of several handles in one reclaim unit), 2 = persistently isolated (it never "
    "does). Sharing one handle between tenants gives up their isolation.",
}

WARN_DATA_LOSS = (
    "DATA LOSS: this procedure deletes every namespace in the endurance group (and the optional sanitize erases "
    "the whole NVM subsystem). Back up first."
)
WARN_RAID = (
    "RAID controllers and HBAs in RAID mode usually do not pass NVMe namespace management or the FDP log pages "
    "through; attach the drive directly (PCIe) or use the controller vendor's tool."
)

_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class NamespaceSpec:
    """One tenant's namespace as the user wrote it: ``[NAME=]SIZE[:RUH[,RUH...]]``."""

    name: str
    size: str  # a capacity (480GB, 447GiB, 937703088s) or a share of the native LBAs (25%)
    handles: tuple[int, ...] | None  # RUH indices for its placement handle list; None: the default


def parse_handles(text: str, key: str = "namespace") -> tuple[int, ...]:
    """``0,2,3`` -> (0, 2, 3): reclaim unit handle indices, each listed once."""
    out: list[int] = []
    for part in str(text).split(","):
        p = part.strip()
        if not re.fullmatch(r"\d+", p):
            raise InputError(f"{key}: {part!r} in {text!r} is not a reclaim unit handle index (0, 1, ...)", key=key)
        v = int(p)
        if v > 0xFFFF:
            raise InputError(f"{key}: reclaim unit handle {v} is beyond the 16-bit identifier range", key=key)
        if v in out:
            raise InputError(f"{key}: reclaim unit handle {v} is listed twice in {text!r}", key=key)
        out.append(v)
    if len(out) > MAX_PHNDLS:
        raise InputError(f"{key}: {len(out)} placement handles; a namespace has at most {MAX_PHNDLS}", key=key)
    return tuple(out)


def parse_namespace_spec(text: str, index: int) -> NamespaceSpec:
    """``db=400GB:0``, ``200GB:1,2``, ``25%`` (``index`` names an unnamed one ``ns<index+1>``)."""
    s = str(text).strip()
    name = f"ns{index + 1}"
    if "=" in s:
        name, s = (x.strip() for x in s.split("=", 1))
        if not _NAME_RE.match(name):
            raise InputError(
                f"namespace: {name!r} in {text!r} is not a name (a letter, then letters, digits, _ . -)",
                key="namespace",
            )
    size, sep, hs = s.partition(":")
    size = size.strip()
    if not size:
        raise InputError(f"namespace: {text!r} has no size (e.g. 400GB, 25%, 937703088s)", key="namespace")
    handles = parse_handles(hs, "namespace") if sep else None
    if sep and not handles:
        raise InputError(f"namespace: {text!r} names no reclaim unit handle after ':'", key="namespace")
    return NamespaceSpec(name=name, size=size, handles=handles)


# ---------------------------------------------------------------------------- the plan


_NVME_PATH = re.compile(r"^/dev/nvme(\d+)(n\d+)?$")


def nvme_path_match(path: str | None) -> re.Match | None:
    """The path (or what a /dev/disk/by-id link points to) as /dev/nvmeX[nY], or None."""
    if not path:
        return None
    return _NVME_PATH.match(path) or _NVME_PATH.match(os.path.realpath(path))


def controller_of(drive: dict) -> tuple[str, str]:
    """``/dev/nvme0`` and ``0`` from the drive's path (namespace or controller); a described
    drive, or a path that is not an NVMe device, gets the usual first controller."""
    m = nvme_path_match(drive.get("path"))
    if not m:
        return "/dev/nvme0", "0"
    return f"/dev/nvme{m.group(1)}", m.group(1)


def _native(drive: dict, ss: int):
    native = drive.get("native")
    if native is None:
        if not drive.get("native_sectors"):
            raise InputError("native: unknown native capacity; give --native", key="native")
        native = capacity_from_sectors(drive["native_sectors"], ss)
    return native


def _namespace_sectors(native, ss: int, spec: NamespaceSpec, physical, idema: bool) -> tuple[int, list[str]]:
    """A namespace's LBA count from the capacity arithmetic every plan uses."""
    try:
        if spec.size.endswith("%"):
            cap = plan_capacity(native, sector_size=ss, max_lba=spec.size, physical=physical, idema=idema)
        else:
            cap = plan_capacity(native, sector_size=ss, user=spec.size, physical=physical, idema=idema)
    except InputError as e:  # name the namespace: "user: ..." alone would not say which one
        raise type(e)(f"namespace: {spec.name} ({spec.size}): {e}", key="namespace") from None
    return cap["user"]["sectors"], [f"{spec.name}: {n}" for n in cap["notes"] if not n.startswith("native")]


def make_fdp_plan(
    drive: dict,
    *,
    namespaces: list[NamespaceSpec] | None = None,
    tenants: int | None = None,
    user=None,
    op=None,
    op_basis=None,
    max_lba=None,
    physical=None,
    round_user=None,
    endgrp: int = 1,
    config_index: int = 0,
    configs: list[dict] | None = None,
    configs_source: str | None = None,
    support: dict | None = None,
    granularity: int | None = None,
    idema: bool = True,
) -> dict:
    """The FDP procedure for ``drive`` (a :func:`opsim.devices.probe.describe_drive` dict or a
    described one): tenants' namespaces, from explicit ``namespaces`` or ``tenants`` equal
    shares of a ``user``/``op``/``max_lba`` target, each with a placement handle list."""
    _check_nvme(drive)
    ss = check_sector_size(drive.get("sector_size") or 512)
    nat = parse_capacity(_native(drive, ss), ss, "native", idema=idema)
    _check_identifiers(endgrp, config_index)
    target = {"user": user, "op": op, "op_basis": op_basis, "max_lba": max_lba, "round_user": round_user}
    specs, sizes, notes = _namespace_sizes(nat, ss, namespaces, tenants, target, physical, idema)
    _round_to_granularity(specs, sizes, granularity, ss, notes)
    allocated = _check_allocation(specs, sizes, nat)
    cfg = _chosen_config(configs, config_index)
    handles = _placement_handles(specs, cfg, config_index, "tenants" if tenants is not None else "namespace")
    _check_namespace_counts(drive, specs, cfg, config_index)
    warnings = _shared_handle_warnings(handles)

    ctrl, inst = controller_of(drive)
    c = (drive.get("nvme") or {}).get("ctrl") or {}
    cntl = c.get("cntlid")
    where = _Where(ctrl, str(cntl) if cntl is not None else "<cntlid from id-ctrl>", endgrp, config_index)
    fmt = lba_format_index((drive.get("nvme") or {}).get("ns") or {}, ss)
    runs = (cfg or {}).get("runs")
    ns_rows = _namespace_rows(specs, sizes, handles, ss, fmt, inst, runs)
    steps = [*_check_steps(where), *_reset_steps(where), *_create_steps(where, ns_rows, ss, fmt)]
    plan_notes = _plan_notes(drive, where, cfg, configs_source, handles, ss, fmt)
    if runs:
        spare = (nat.sectors - allocated) * ss
        plan_notes.append(
            f"reclaim units of {runs:,} bytes: "
            + ", ".join(f"{r['name']} spans {r['reclaim_units']:,.1f}" for r in ns_rows)
            + f"; the unallocated spare holds {spare / runs:,.1f}"
        )
    sup = support or {}
    _add_drive_warnings(warnings, drive, sup, c)

    return {
        "placement": "fdp",
        "drive": {k: v for k, v in drive.items() if k != "native"},
        "endurance_group": endgrp,
        "fdp_config": {
            "index": config_index,
            "source": configs_source if cfg is not None else None,
            **({k: v for k, v in cfg.items() if k != "index"} if cfg is not None else {}),
        },
        "support": sup or None,
        "namespaces": ns_rows,
        "capacity": _capacity_section(nat, ss, allocated, physical, idema, notes),
        "steps": steps,
        "traps": [{"key": k, "text": v} for k, v in TRAPS.items()],
        "warnings": [WARN_DATA_LOSS, *warnings],
        "notes": plan_notes,
    }


def _capacity_section(nat, ss: int, allocated: int, physical, idema: bool, notes: list[str]) -> dict:
    """The endurance group's capacity: allocated, unallocated (the spare the drive sees as OP)
    and the OP in every basis, from the capacity arithmetic every plan uses."""
    cap_total = plan_capacity(nat, sector_size=ss, user=f"{allocated}s", physical=physical, idema=idema)
    unalloc = nat.sectors - allocated
    return {
        "sector_size": ss,
        "native": cap_total["native"],
        "allocated": {"sectors": allocated, "bytes": allocated * ss},
        "unallocated": {"sectors": unalloc, "bytes": unalloc * ss},
        "op": cap_total["op"],
        "op_exact": cap_total["op_exact"],
        "physical": cap_total["physical"],
        "notes": notes,
    }


def _check_nvme(drive: dict) -> None:
    iface = drive.get("interface")
    if iface != "nvme":
        raise InputError(
            f"interface: FDP is an NVMe feature; this drive is {iface or 'of unknown interface'} "
            "(give --interface nvme for a described drive)",
            key="interface",
        )


def _check_identifiers(endgrp, config_index) -> None:
    if not isinstance(endgrp, int) or isinstance(endgrp, bool) or not 1 <= endgrp <= 0xFFFF:
        raise InputError(f"endgrp_id: {endgrp!r} is not an endurance group identifier (1-65535)", key="endgrp_id")
    if not isinstance(config_index, int) or isinstance(config_index, bool) or not 0 <= config_index <= 0xFF:
        raise InputError(f"fdp_config: {config_index!r} is not a configuration index (0-255)", key="fdp_config")


def _namespace_sizes(
    nat, ss: int, namespaces, tenants, target: dict, physical, idema: bool
) -> tuple[list[NamespaceSpec], list[int], list[str]]:
    """The namespaces and their LBA counts: explicit ``namespaces``, or ``tenants`` equal shares
    of the ``target`` (user/op/op_basis/max_lba/round_user); with the capacity notes."""
    target_given = [k for k in ("user", "op", "max_lba") if target[k] is not None]
    if namespaces:
        if tenants is not None:
            raise InputError("tenants: give either --namespace (repeated) or --tenants N, not both", key="tenants")
        if target_given:
            k = target_given[0]
            raise InputError(
                f"{k}: --namespace gives each namespace's size; --user/--op/--max-lba go with --tenants N", key=k
            )
        specs = list(namespaces)
        sizes, notes = [], []
        for s in specs:
            n, ns_notes = _namespace_sectors(nat, ss, s, physical, idema)
            sizes.append(n)
            notes += ns_notes
        return specs, sizes, notes
    if tenants is not None:
        if isinstance(tenants, bool) or not isinstance(tenants, int) or tenants < 1:
            raise InputError(f"tenants: {tenants!r} is not a number of tenants (1 or more)", key="tenants")
        if not target_given:
            raise InputError("user: --tenants N splits a target: give --user, --op/--op-basis or --max-lba", key="user")
        return _equal_tenants(nat, ss, tenants, target, physical, idema)
    raise InputError(
        "namespace: give the tenants' namespaces with --namespace [NAME=]SIZE[:RUH,...] (repeated) "
        "or --tenants N with --user/--op/--max-lba",
        key="namespace",
    )


def _equal_tenants(
    nat, ss: int, tenants: int, target: dict, physical, idema: bool
) -> tuple[list[NamespaceSpec], list[int], list[str]]:
    """``tenants`` equal namespaces sharing the capacity target; the remainder stays spare."""
    cap = plan_capacity(nat, sector_size=ss, **target, physical=physical, idema=idema)
    notes = [n for n in cap["notes"] if not n.startswith("native")]
    total = cap["user"]["sectors"]
    each = total // tenants
    if each <= 0:
        raise CapacityError(f"tenants: {total:,} LBAs cannot be split into {tenants} namespaces", key="tenants")
    if total % tenants:
        notes.append(
            f"tenants: {total:,} LBAs split into {tenants} equal namespaces of {each:,} LBAs; "
            f"the {total - each * tenants:,} LBA(s) left over stay unallocated (spare)"
        )
    specs = [NamespaceSpec(f"tenant{i + 1}", f"{each}s", None) for i in range(tenants)]
    return specs, [each] * tenants, notes


def _round_to_granularity(specs, sizes: list[int], granularity: int | None, ss: int, notes: list[str]) -> None:
    """Round each size down (in place) to the controller's namespace granularity."""
    if not granularity:
        return
    g = granularity // ss
    if g <= 0:
        return
    for i, n in enumerate(sizes):
        if n % g:
            sizes[i] = n // g * g
            notes.append(
                f"{specs[i].name}: NSZE rounded down to the {granularity:,}-byte namespace granularity: "
                f"{sizes[i]:,} LBAs"
            )


def _check_allocation(specs, sizes: list[int], nat) -> int:
    """The LBAs the namespaces hold together; every namespace non-empty, all within the group."""
    for s, n in zip(specs, sizes):
        if n <= 0:
            raise CapacityError(f"namespace: {s.name} has no LBA left ({s.size})", key="namespace")
    allocated = sum(sizes)
    if allocated > nat.sectors:
        raise CapacityError(
            f"namespace: the namespaces hold {allocated:,} LBAs, more than the {nat.sectors:,} of the endurance "
            f"group ({', '.join(f'{s.name} {n:,}' for s, n in zip(specs, sizes))})",
            key="namespace",
        )
    return allocated


def _chosen_config(configs: list[dict] | None, config_index: int) -> dict | None:
    """The configuration from `nvme fdp configs` when given (it must exist and be valid), else None."""
    if configs is None:
        return None
    if config_index >= len(configs):
        raise InputError(
            f"fdp_config: index {config_index}, but `nvme fdp configs` lists {len(configs)} configuration(s) "
            f"(0-{len(configs) - 1})",
            key="fdp_config",
        )
    cfg = configs[config_index]
    if cfg.get("valid") is False:
        raise InputError(
            f"fdp_config: configuration {config_index} is not valid (fdpa bit 7 is 0); choose a valid one",
            key="fdp_config",
        )
    return cfg


def _placement_handles(specs, cfg: dict | None, config_index: int, what: str) -> list[tuple[int, ...]]:
    """Each namespace's RUH list; one without a list gets the lowest RUH index no list names.
    Checked against the configuration's nruh when it is known (errors keyed by ``what``)."""
    nruh = (cfg or {}).get("nruh")
    named = {x for s in specs if s.handles is not None for x in s.handles}
    free = (k for k in range(0x10000) if k not in named)
    handles: list[tuple[int, ...]] = []
    for s in specs:
        h = s.handles if s.handles is not None else (next(free),)
        if nruh is not None:
            bad = [x for x in h if x >= nruh]
            if bad:
                raise InputError(
                    f"{what}: {s.name} uses reclaim unit handle {bad[0]}, but configuration {config_index} has "
                    f"{nruh} (0-{nruh - 1})",
                    key=what,
                )
        handles.append(h)
    return handles


def _check_namespace_counts(drive: dict, specs, cfg: dict | None, config_index: int) -> None:
    nnss = (cfg or {}).get("nnss")
    if nnss and len(specs) > nnss:
        raise InputError(
            f"namespace: {len(specs)} namespaces, but configuration {config_index} supports {nnss}", key="namespace"
        )
    nn = ((drive.get("nvme") or {}).get("ctrl") or {}).get("nn")
    if nn and len(specs) > nn:
        raise InputError(f"namespace: {len(specs)} namespaces, but the controller supports {nn} (nn)", key="namespace")


def _shared_handle_warnings(handles: list[tuple[int, ...]]) -> list[str]:
    shared = sorted({x for h in handles for x in h if sum(x in hh for hh in handles) > 1})
    if not shared:
        return []
    return [
        f"reclaim unit handle(s) {', '.join(map(str, shared))} are shared by several namespaces: their tenants' "
        "data mix in the same reclaim units and lose FDP's isolation"
    ]


def _namespace_rows(specs, sizes, handles, ss: int, fmt: int, inst: str, runs) -> list[dict]:
    """One row per namespace: NSID, sizes, LBA format, handles, device names and the measure command."""
    rows = []
    for i, (s, n, h) in enumerate(zip(specs, sizes, handles)):
        nsid = i + 1
        row: dict[str, Any] = {
            "nsid": nsid,
            "name": s.name,
            "size": s.size,
            "nsze": n,
            "ncap": n,
            "bytes": n * ss,
            "flbas": fmt,
            "phndls": list(h),
            "nphndls": len(h),
            "block_device": f"/dev/nvme{inst}n{nsid}",
            "char_device": f"/dev/ng{inst}n{nsid}",
            "fio_pli": ",".join(str(k) for k in range(len(h))),
            "reclaim_units": (n * ss / runs) if runs else None,
        }
        row["measure"] = (
            f"opsim measure wsat --device {row['block_device']} --destroy-data={row['block_device']} "
            f"--fdp --fdp-pli {row['fio_pli']}"
        )
        rows.append(row)
    return rows


@dataclass(frozen=True)
class _Where:
    """What the procedure's commands name: the controller, its CNTLID, the endurance group and
    the configuration index."""

    ctrl: str
    cntlid: str
    endgrp: int
    index: int


def _check_steps(w: _Where) -> list[dict]:
    """The read-only steps first: FDP support and the configurations."""
    ctrl, eg = w.ctrl, w.endgrp
    return [
        {
            "title": "check FDP support: CTRATT bit 19 (FDPS) and bit 4 (endurance groups), OACS bit 3 "
            "(namespace management)",
            "commands": [
                f"nvme id-ctrl {ctrl} -o json   # ctratt & 0x80000 (FDPS), ctratt & 0x10, oacs & 0x8, cntlid, nn",
                f"nvme id-ctrl {ctrl} -H | grep -i 'flexible data placement'",
            ],
            "destructive": False,
        },
        {
            "title": f"read endurance group {eg}'s FDP configurations and the current state; choose a valid "
            "configuration (fdpa bit 7) and note nruh, nrg, nnss, runs",
            "commands": [
                f"nvme fdp configs {ctrl} --endgrp-id={eg} -o json",
                f"nvme fdp feature {ctrl} --endgrp-id={eg}   # current state (nvme-cli 2.13+)",
                f"nvme get-feature {ctrl} --feature-id=0x1d --cdw11={eg} -H   # the same with older nvme-cli",
                f"nvme list-ns {ctrl} --all   # every allocated namespace",
            ],
            "destructive": False,
        },
    ]


def _reset_steps(w: _Where) -> list[dict]:
    """The destructive steps that clear the endurance group and enable the configuration."""
    ctrl, eg, idx = w.ctrl, w.endgrp, w.index
    return [
        {
            "title": "optional, DESTRUCTIVE: purge the whole NVM subsystem (sanitize block erase) so the "
            "measurement starts fresh out of box, then wait for it",
            "commands": [f"nvme sanitize {ctrl} --sanact=2", f"nvme sanitize-log {ctrl}"],
            "destructive": True,
        },
        {
            "title": f"DESTRUCTIVE: detach and delete every namespace in endurance group {eg} (repeat the pair "
            "for each NSID list-ns --all printed, or delete all at once)",
            "commands": [
                f"nvme detach-ns {ctrl} --namespace-id=1 --controllers={w.cntlid}",
                f"nvme delete-ns {ctrl} --namespace-id=1",
                f"nvme delete-ns {ctrl} --namespace-id=0xffffffff   # all namespaces at once",
            ],
            "destructive": True,
        },
        {
            "title": f"enable FDP configuration {idx} on endurance group {eg} (refused while a namespace exists)",
            "commands": [
                f"nvme fdp feature {ctrl} --endgrp-id={eg} --enable-conf-idx={idx}   # nvme-cli 2.13+",
                f"nvme set-feature {ctrl} --feature-id=0x{FDP_FEATURE_ID:x} --value={eg} --cdw12=0x{(idx << 8) | 1:x} "
                "--save   # older nvme-cli: CDW11 = endurance group, CDW12 = index << 8 | enable",
                f"nvme get-feature {ctrl} --feature-id=0x1d --cdw11={eg} -H   # expect enabled, index {idx}",
            ],
            "destructive": True,
        },
    ]


def _create_steps(w: _Where, ns_rows: list[dict], ss: int, fmt: int) -> list[dict]:
    """Creating and attaching the namespaces, verifying them, and measuring with placement."""
    ctrl, eg = w.ctrl, w.endgrp
    return [
        {
            "title": f"create {len(ns_rows)} namespace(s), each with its placement handle list (RUH indices), "
            f"LBAs of {ss} bytes (LBA format {fmt})",
            "commands": [
                f"nvme create-ns {ctrl} --nsze={r['nsze']} --ncap={r['ncap']} --flbas={r['flbas']} "
                f"--nphndls={r['nphndls']} --phndls={','.join(map(str, r['phndls']))} --endg-id={eg}"
                f"   # {r['name']}: {r['bytes']:,} bytes"
                for r in ns_rows
            ],
            "destructive": True,
        },
        {
            "title": "attach them (use the NSIDs create-ns printed) and rescan",
            "commands": [
                *[f"nvme attach-ns {ctrl} --namespace-id={r['nsid']} --controllers={w.cntlid}" for r in ns_rows],
                f"nvme ns-rescan {ctrl}",
            ],
            "destructive": False,
        },
        {
            "title": "verify: each namespace's placement handles, the RUH usage, and a baseline of the FDP "
            "statistics (host and media bytes written, for WAF)",
            "commands": [
                *[f"nvme fdp status {r['block_device']} -o json   # {r['nphndls']} placement ID(s)" for r in ns_rows],
                f"nvme fdp usage {ctrl} --endgrp-id={eg} -o json",
                f"nvme fdp stats {ctrl} --endgrp-id={eg} -o json > fdp-stats-before.json",
            ],
            "destructive": False,
        },
        {
            "title": "optional: FDP events per placement handle (RU not fully written, time limit, reset, invalid "
            "placement ID, media reallocated, implicit RUH change)",
            "commands": [
                *[
                    f"nvme fdp set-events {r['block_device']} --namespace-id={r['nsid']} --placement-handle={k} "
                    f"--enable --event-types={','.join(str(t) for t in FDP_EVENT_TYPES)}"
                    for r in ns_rows
                    for k in range(r["nphndls"])
                ],
                f"nvme fdp events {ctrl} --endgrp-id={eg} --host-events -o json",
            ],
            "destructive": False,
        },
        {
            "title": "measure with placement (fio io_uring_cmd on the generic device /dev/ngXnY, fdp=1, "
            "fdp_pli = indices into the namespace's handle list); WAF = media / host bytes from `nvme fdp stats`",
            "commands": [r["measure"] for r in ns_rows]
            + [
                f"nvme fdp stats {ctrl} --endgrp-id={eg} -o json > fdp-stats-after.json",
                "opsim smart fdp fdp-stats-before.json fdp-stats-after.json   # WAF over the interval",
            ],
            "destructive": True,
        },
    ]


_PLAN_NOTES = (
    "NCAP = NSZE for every namespace: NCAP < NSZE is thin provisioning, not OP.",
    "granularity margin: controllers allocate namespaces in their own granularity "
    "(`nvme id-ns-granularity`); check unvmcap after creating and leave a margin of one unit.",
    "capacity: the native capacity is that of the endurance group; on a drive with one endurance group it is "
    "tnvmcap (`nvme id-ctrl`).",
    "nvme-cli: `nvme fdp feature` exists from nvme-cli 2.13; `create-ns --endg-id` is in 2.8 but not in 2.5 (leave it "
    "out on a drive with one endurance group and an older nvme-cli); the fdp plugin (configs, usage, stats, events, "
    "status, update, set-events) from 2.3.",
    "`nvme fdp update DEV --namespace-id=N --pids=0` moves a placement ID to a fresh reclaim unit "
    "(the host's way to close a partly written one).",
)


def _plan_notes(drive: dict, w: _Where, cfg: dict | None, configs_source, handles, ss: int, fmt: int) -> list[str]:
    """The procedure's notes: the configuration (read or not) first, then the fixed notes, the
    reclaim groups and the LBA format assumption."""
    notes = list(_PLAN_NOTES)
    if cfg is None:
        notes.insert(
            0,
            f"FDP configuration {w.index}: not read (pass --fdp-configs-json FILE, a saved "
            f"`nvme fdp configs {w.ctrl} --endgrp-id={w.endgrp} -o json`, or probe the device): the RUH indices "
            f"{sorted({x for h in handles for x in h})} are not checked against nruh.",
        )
    else:
        runs = cfg.get("runs")
        ru = f", reclaim unit {runs:,} bytes" if runs else ""
        types = sorted({t for t in cfg.get("ruh_types") or [] if t})
        notes.insert(
            0,
            f"FDP configuration {w.index} ({configs_source or 'nvme fdp configs'}): nruh {cfg.get('nruh')}, "
            f"nrg {cfg.get('nrg')}, nnss {cfg.get('nnss')}{ru}" + (f"; handles {', '.join(types)}" if types else ""),
        )
        if (cfg.get("nrg") or 1) > 1:
            notes.append(
                f"{cfg['nrg']} reclaim groups: a placement identifier carries the reclaim group in its upper bits "
                f"(RGIF {cfg.get('rgif')}); `nvme fdp status` lists the identifiers a namespace can use."
            )
    if not ((drive.get("nvme") or {}).get("ns") or {}).get("lbafs"):
        notes.append(
            f"--flbas={fmt} assumes LBA format {fmt} is the {ss}-byte one; check `nvme id-ns {w.ctrl}n1 -o json` "
            f"(lbafs: ds {ss.bit_length() - 1} = {ss} bytes, ms 0) and use its index"
        )
    return notes


def _add_drive_warnings(warnings: list[str], drive: dict, sup: dict, ctrl: dict) -> None:
    """Support the controller lacks goes first; a mounted drive and the RAID warning last."""
    if sup.get("fdps") is False:
        warnings.insert(
            0,
            f"THIS CONTROLLER DOES NOT REPORT FDP (CTRATT 0x{sup.get('ctratt') or 0:x}, bit 19 is 0): the "
            "procedure below will fail; FDP needs a drive that supports TP4146",
        )
    if sup.get("ns_management") is False or (ctrl and ctrl.get("ns_management") is False):
        warnings.insert(0, "this controller does not support namespace management (OACS bit 3 is 0)")
    elif ctrl and ctrl.get("ns_management") and ctrl.get("tnvmcap") == 0:
        # QEMU's emulated controller (7.2 and 10.0, FDP or not) claims namespace management, reports
        # TNVMCAP 0 and refuses delete-ns/create-ns (tests/vm/test_vm_fdp.py)
        warnings.insert(
            0,
            "this controller claims namespace management (OACS bit 3) but reports a total NVM capacity "
            "(TNVMCAP) of 0: its namespace commands are not to be trusted (an emulated controller answers "
            "them Invalid Command Opcode), so the delete-ns/create-ns steps below may be refused; "
            "do not delete a namespace you cannot re-create",
        )
    if drive.get("mounted"):
        warnings.append(f"the drive is in use: mounted at {', '.join(drive['mounted'])}")
    warnings.append(WARN_RAID)
