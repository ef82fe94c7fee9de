"""The drive the advisor plans for: a preset or a drive file (a TOML file in the presets'
schema), or native/physical capacity, P/E rating and interface, resolved with its sources.  The core describes it (``opsim.sim.describe``: the
config with defaults filled, geometry, OP in every basis, SLC cache, timing resolved); nothing
here restates the core's rules."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ... import presets
from ...errors import OpsimError
from ...sim import describe
from ...units import parse_size
from ..capacity import (
    Capacity,
    assumed_physical,
    parse_capacity,
)
from ..endurance import RATED_PE_SOURCE
from .options import _as_option, _bad, _opt, _option_for_key


@dataclass
class Drive:
    """The drive being advised on, every parameter with where it came from."""

    name: str
    title: str
    preset: str | None  # a preset name, or a drive file's absolute path (what the configs name)
    native: Capacity
    physical_bytes: int
    page_size: int
    pages_per_block: int
    gc: str
    gc_low: int
    pe: float | None
    interface: str
    queue_depth: int
    write_cache: bool
    timing_overrides: dict  # what the advisor puts in [timing] on top of the preset
    drive_overrides: dict  # [drive] keys for a drive given by parameters
    timing: dict  # resolved by the core (ns, counts)
    sources: dict = field(default_factory=dict)
    slc_folds: bool = False  # steady state: every host write goes to SLC and is folded
    ftl_overrides: dict = field(default_factory=dict)  # [ftl] keys set on top of the preset (a profile point's)
    #: the drive file's ``[preset.calibration]`` table (its ``profile`` carries the intervals, :mod:`.interval`)
    calibration: dict = field(default_factory=dict, repr=False)
    #: how to load this drive again (``load_drive``'s arguments): a profile point is this drive with other values
    load_args: dict = field(default_factory=dict, repr=False)
    config: dict = field(default_factory=dict, repr=False)  # the config the core describes
    description: dict = field(default_factory=dict, repr=False)  # opsim.sim.describe of it
    _ops: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    _scale: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def blocks(self) -> int:
        return self.description["drive"]["blocks"]

    @property
    def superblocks(self) -> bool:
        """Whether garbage collection works in superblocks (``ftl.gc_unit``, as the core resolves it)."""
        return self.description["drive"]["gc_unit"]["kind"] == "superblock"

    @property
    def meta_writes(self) -> float:
        """The WAF floor, ``ftl.meta_writes`` as the core resolves it: metadata pages per host page."""
        return float(self.description["config"]["ftl"].get("meta_writes") or 0.0)

    @property
    def slc_static_blocks(self) -> int:
        s = self.description.get("slc_cache")
        return s["min_blocks"] if s else 0

    @property
    def pe_from_rating(self) -> bool:
        """Whether the P/E rating is one ``opsim calibrate`` derived from the datasheet's
        endurance (the drive file's ``pe_cycles_source``), not one given (``--pe``, or the
        drive file's input)."""
        if self.pe is None or self.sources.get("pe", "").startswith("given with --pe"):
            return False
        return str(self.calibration.get("pe_cycles_source") or "").startswith(RATED_PE_SOURCE)

    def prefetch_ops(self, user_bytes) -> None:
        """Ask the core, in one call, for the OP figures at each of these user capacities."""
        todo = sorted({int(u) for u in user_bytes} - self._ops.keys())
        if todo:
            levels = describe(self.config, model_limits=False, users=todo)["levels"]
            self._ops.update(zip(todo, levels))

    def ops(self, user_bytes: int) -> dict:
        """The core's OP figures were the drive set to ``user_bytes``: every basis (``user``,
        ``physical``, ``native``, ``added``), ``seen_by_gc`` and the pool it counts."""
        self.prefetch_ops([user_bytes])
        return self._ops[int(user_bytes)]

    def op_seen(self, user_bytes: int) -> float:
        """The OP garbage collection sees (user basis), as the core counts it: physical pages
        outside the free-block reserve and the SLC cache's static part, over user pages."""
        return self.ops(user_bytes)["seen_by_gc"]

    def cost_model(self) -> dict:
        """The core's cost model of the drive, as ``describe`` returned it (SLC folding, FTL
        block units), with this drive's resolved timing and write cache."""
        return self.description["cost_model"] | {"timing": self.timing, "write_cache": self.write_cache}

    def scale_model(self, user_bytes: int, blocks: int) -> dict:
        """The core's scale model of ``blocks`` blocks giving garbage collection the OP it sees
        at ``user_bytes`` (``blocks``, ``pages_per_block``, ``superblock_scale``,
        ``physical_bytes``, ``user_pages``, ``user_bytes``, ``gc_pool_blocks``): the reserve,
        GC groups and SLC cache as the core keeps them; a superblock drive's superblocks kept,
        each smaller (``Description::scale_model``)."""
        key = (int(user_bytes), int(blocks))
        if key not in self._scale:
            d = describe(self.config, model_limits=False, users=[key[0]], scale_blocks=key[1])
            self._scale[key] = d["levels"][0]["scale_model"]
        return self._scale[key]

    def analytic_precondition(self, workload: dict) -> bool:
        """Whether the core can start ``workload`` (a ``[workload]`` table) on this drive with
        analytic preconditioning (``describe``'s ``analytic_precondition``)."""
        return describe(self.config | {"workload": workload}, model_limits=False)["analytic_precondition"]

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "preset": self.preset,
            "native_bytes": self.native.bytes,
            "native_sectors": self.native.sectors,
            "native_gb": self.native.gb,
            "sector_size": self.native.sector_size,
            "physical_bytes": self.physical_bytes,
            "page_size": self.page_size,
            "pages_per_block": self.pages_per_block,
            "blocks": self.blocks,
            "gc": self.gc,
            "gc_low_watermark": self.gc_low,
            "pe_cycles": self.pe,
            "interface": self.interface,
            "queue_depth": self.queue_depth,
            "write_cache": self.write_cache,
            "timing": self.timing,
            "sources": self.sources,
        }


@dataclass
class _Source:
    """A drive before the core describes it: what was given, and where each figure came from."""

    name: str
    title: str
    preset: str | None
    native: Capacity
    physical: int
    base: dict  # the config's tables, without the capacities
    sources: dict
    timing_over: dict = field(default_factory=dict)
    drive_over: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)  # the preset's [preset] table


def load_drive(
    *,
    preset: str | None = None,
    native=None,
    physical=None,
    pages_per_block=None,
    interface=None,
    pe=None,
    gc=None,
    queue_depth=None,
    sector_size: int = 512,
    preset_option: str = "preset",
    values: dict | None = None,
) -> Drive:
    """A :class:`Drive` from a preset name, a drive file's path (``preset``; errors about it
    name ``preset_option``, ``--preset`` or ``--drive``) or from parameters (errors name the
    option).  The P/E rating is ``pe``, else a drive's ``[preset.calibration] pe_cycles``.
    ``values`` ({config key: value}, e.g. ``{"drive.physical_capacity": ..., "timing.t_prog_us":
    ...}``: a point of the drive file's profile) are set on top of the drive's own."""
    load_args = dict(
        preset=preset,
        native=native,
        physical=physical,
        pages_per_block=pages_per_block,
        interface=interface,
        pe=pe,
        gc=gc,
        queue_depth=queue_depth,
        sector_size=sector_size,
        preset_option=preset_option,
    )
    if preset is not None:
        given = {"native": native, "physical": physical, "pages_per_block": pages_per_block, "interface": interface}
        src = _from_preset(preset, preset_option, sector_size, given)
    else:
        src = _from_parameters(native, physical, pages_per_block, interface, sector_size)
    if gc is not None:
        src.base.setdefault("ftl", {})["gc"] = gc
    if queue_depth is not None:
        if int(queue_depth) < 1:
            raise _bad("queue_depth", "must be at least 1")
        src.timing_over["queue_depth"] = int(queue_depth)
    ftl_over = _set_values(src, values or {}, preset_option)
    src.base["timing"] = dict(src.timing_over)
    # the real drive at its native capacity, described by the core (nothing allocated)
    drive_keys = {"user_capacity": src.native.bytes, "native_capacity": src.native.bytes, "sector_size": sector_size}
    if src.preset is None:
        drive_keys |= {"physical_capacity": int(src.physical)}
    cfg = src.base | {"drive": dict(src.drive_over) | drive_keys}

    try:
        desc = describe(cfg, model_limits=False)
    except OpsimError as e:
        raise _bad(_option_for_key(e.key), str(e)) from None
    c, geo = desc["config"], desc["drive"]
    t = c["timing"]
    if geo["blocks"] < 16:
        raise _bad(
            "physical",
            f"{src.physical:,} bytes is fewer than 16 blocks of {geo['pages_per_block']} x {geo['page_size']}-byte pages",
        )
    if src.preset is None and "pages_per_block" not in src.drive_over:
        src.sources["pages_per_block"] = f"the core's default ({geo['pages_per_block']})"
    # SLC cache: in steady state (every addressable LBA written) the cache is its static part;
    # with one, and "fold" when full, every host write is programmed in SLC mode and folded
    slc = desc["slc_cache"]
    return Drive(
        name=src.name,
        title=src.title,
        preset=src.preset,
        native=src.native,
        physical_bytes=int(src.physical),
        slc_folds=bool(slc and slc["steady_folds"]),
        page_size=geo["page_size"],
        pages_per_block=geo["pages_per_block"],
        gc=c["ftl"]["gc"],
        gc_low=c["ftl"]["gc_low_watermark"],
        pe=_pe_rating(pe, src, preset_option),
        interface=t["interface"],
        queue_depth=t["queue_depth"],
        write_cache=bool(t["write_cache"]),
        timing_overrides=src.timing_over,
        drive_overrides=src.drive_over,
        ftl_overrides=ftl_over,
        timing=desc["timing"],
        sources=src.sources,
        config=cfg,
        description=desc,
        calibration=_calibration(src),
        load_args=load_args,
    )


def _set_values(src: _Source, values: dict, preset_option: str) -> dict:
    """Set ``values`` ({"table.key": value}) on the drive before the core describes it:
    ``drive.*`` (the NAND capacity floored to whole 4 KiB sectors), ``timing.*`` and ``ftl.*``;
    returns the ``[ftl]`` keys set (the simulator's configs carry them)."""
    ftl: dict = {}
    for key, v in values.items():
        table, _, name = str(key).partition(".")
        if table == "drive" and name == "physical_capacity":
            v = int(v) // 4096 * 4096
            src.physical = v
            src.drive_over["physical_capacity"] = v
        elif table == "drive" and name:
            src.drive_over[name] = v
        elif table == "timing" and name:
            src.timing_over[name] = v
        elif table == "ftl" and name:
            ftl[name] = v
            src.base.setdefault("ftl", {})[name] = v
        else:
            raise _bad(preset_option, f"{key!r}: a drive's value is a drive., timing. or ftl. key")
    return ftl


def _calibration(src: _Source) -> dict:
    c = src.meta.get("calibration")
    return c if isinstance(c, dict) else {}


def _from_preset(preset: str, preset_option: str, sector_size: int, given: dict) -> _Source:
    """A preset by name or a drive file by path: its own capacities and timing; the options
    it fixes (``given``) must not be given."""
    if presets.is_path(preset):
        try:
            p = presets.drive_file(preset)
        except OpsimError as e:
            raise _bad(preset_option, e.detail) from None
        what = f"the drive file {preset}"
    else:
        if preset not in presets.names():
            raise _bad(preset_option, f"unknown preset {preset!r}; known: {', '.join(sorted(presets.names()))}")
        p = presets.get(preset)
        what = f"the preset {preset}"
    for opt, v in given.items():
        if v is not None:
            raise _bad(opt, f"{what} fixes this; drop {_opt(opt)} or {_opt(preset_option)}")
    s = p["settings"]
    meta = p["meta"]
    msrc = meta.get("sources", {})
    for k in ("user_capacity", "physical_capacity"):
        if k not in s.get("drive", {}):
            raise _bad(preset_option, f"{what} gives no drive.{k}; the advisor needs the drive's own capacities")
    sources = {
        "native": msrc.get("drive.user_capacity", "preset"),
        "physical": msrc.get("drive.physical_capacity", "preset"),
        "timing": {k.split(".", 1)[1]: v for k, v in msrc.items() if k.startswith("timing.")},
    }
    path = p.get("path", preset)  # a drive file: its absolute path, which resolves from anywhere
    return _Source(
        name=p["name"],
        title=presets.title(p),
        preset=path,
        native=parse_capacity(s["drive"]["user_capacity"], sector_size, "native"),
        physical=parse_size(s["drive"]["physical_capacity"], key="physical"),
        base={"preset": path},
        sources=sources,
        meta=meta,
    )


def _from_parameters(native, physical, pages_per_block, interface, sector_size: int) -> _Source:
    """A drive given by its native and physical capacities, block size and interface (the
    core's default timing for the interface)."""
    if native is None:
        raise _bad(
            "native",
            "give a drive: --preset NAME (see `opsim presets`), --drive FILE or --native SIZE "
            "(with --physical, --pe, --interface)",
        )
    sources: dict = {}
    nat = _as_option("native", parse_capacity, native, sector_size, "native")
    if physical is not None:
        phys = _as_option("physical", parse_size, physical, key="physical")
        sources["physical"] = "given with --physical"
    else:
        phys, note = assumed_physical(nat)
        if phys is None:
            raise _bad("physical", note)
        sources["physical"] = note
    sources["native"] = "given with --native"
    if phys <= nat.bytes:
        raise _bad(
            "physical",
            f"{phys:,} bytes is not more than the native capacity ({nat.bytes:,} bytes); "
            "the drive would have no spare area at all",
        )
    if pages_per_block is not None and not (2 <= int(pages_per_block) <= 65536):
        raise _bad("pages_per_block", f"{pages_per_block} is out of range 2..65536")
    # not given: the core's default, said once the core has resolved the drive (load_drive)
    drive_over = {"pages_per_block": int(pages_per_block)} if pages_per_block else {}
    if pages_per_block:
        sources["pages_per_block"] = "given with --pages-per-block"
    timing_over = {"interface": interface or "sata"}
    sources["timing"] = "the core's defaults for the interface (docs/timed.md): not a specific drive"
    return _Source(
        name="custom",
        title=f"drive given by parameters ({timing_over['interface']})",
        preset=None,
        native=nat,
        physical=phys,
        base={"drive": dict(drive_over)},
        sources=sources,
        timing_over=timing_over,
        drive_over=drive_over,
    )


def _pe_rating(pe, src: _Source, preset_option: str) -> float | None:
    """The P/E rating: ``pe`` given, else the drive file's ``[preset.calibration]
    pe_cycles`` (a calibrated drive file), else None; its source in ``src.sources``."""
    calibration = src.meta.get("calibration")
    if not isinstance(calibration, dict):
        calibration = {}
    cal_pe = calibration.get("pe_cycles")
    if pe is not None:
        try:
            pe_v = float(str(pe).replace(",", "").replace("_", ""))
        except ValueError:
            raise _bad("pe", f"{pe!r} is not a number of P/E cycles") from None
        if not (pe_v > 0 and math.isfinite(pe_v)):
            raise _bad("pe", f"{pe} must be a positive number of P/E cycles")
        src.sources["pe"] = "given with --pe"
        return pe_v
    if cal_pe is None:
        return None
    if isinstance(cal_pe, bool) or not isinstance(cal_pe, (int, float)) or not (cal_pe > 0 and math.isfinite(cal_pe)):
        raise _bad(
            preset_option,
            f"[preset.calibration] pe_cycles of {src.preset}: {cal_pe!r} is not a positive number of P/E cycles",
        )
    why = calibration.get("pe_cycles_source") or src.meta.get("sources", {}).get("calibration.pe_cycles")
    src.sources["pe"] = f"[preset.calibration] pe_cycles of {src.preset}" + (f": {why}" if isinstance(why, str) else "")
    return float(cal_pe)
