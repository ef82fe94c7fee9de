"""A drive model under calibration: the drive's config tables with every key's source, the
parameters left to fit with their priors, and the prediction of each figure from the core.

The prediction chain asks the core for every rule: the config resolved (``describe``: the OP
GC sees at the span written, the cost model's inputs), the steady WAF at that OP (the
functional simulator, :mod:`.curve`), and the IOPS the busiest resource allows at that WAF
(``costs``: the timed model's own per-command charges).  An efficiency per figure, measured
with the timed (event) simulator by :mod:`.timed`, carries what the bound leaves out
(queueing, read-modify-write of a large mapping unit); it starts at 1.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import InputError
from ..planner.endurance import dwpd_of
from ..sim import costs, describe
from . import burst, population, read_time
from .bounds import core_refusal
from .curve import alternative, curve
from .inputs import DriveSpec, Figure

#: NAND die capacity by cell, for the die count of a drive whose dies no source gives
#: (estimate: the common die of each cell type in current data-center drives)
DIE_GBIT = {"slc": 64, "mlc": 256, "tlc": 512, "qlc": 1024}
#: pages of 16 KiB per word line and plane are programmed together (one-shot programming)
NAND_PAGE = 16 << 10
#: word lines per physical block (estimate: sets the block size, hence each erase's share)
WORDLINES_PER_BLOCK = 256
#: the FTL block of a drive whose input gives neither it nor the GC unit (bytes; an estimate, the
#: modelling unit every client preset's input estimates: greedy's uniform-write WAF is within 1%
#: of a larger unit's past 256 pages, and a real drive's GC unit, a superblock, is far larger
#: still: the core's default of 256 pages of 4 KiB sits on the low side of that 1%)
FTL_BLOCK = 4 << 20
#: ... on a drive of at least this many of them (4 GiB; a smaller one, a file measured to test the
#: tools, keeps the core's default: 4 MiB blocks would leave it too few for garbage collection)
FTL_BLOCKS_LEAST = 1024
FTL_BLOCK_SOURCE = (
    "estimate: a 4 MiB FTL block, as the client presets' inputs (modelling unit; or superblocks, the GC unit's prior)"
)
#: the WAF floor (``ftl.meta_writes``: NAND pages of metadata, journal and parity per host page) is
#: fitted only when the figures hold steady WAFs at this many spans; else the core's default, none.
#: Prior: 0, width META_SIGMA, an estimate (docs/calibrate.md): die-stripe parity of 1 page in 16 to
#: 32 (3-6%) and map and journal checkpoints (about 1%) lie well inside one width, and two measured
#: WAFs (5% each) outweigh it; a width of 0.05 held a true floor of 0.07 to 0.03 in the synthetic check
META_SPANS = 2
META_SIGMA = 0.1
#: the controller time per unit GC copies (``timing.gc_fw_us``): prior 0, half-normal of this width
#: (us).  An estimate: the seed drives' controllers fitted to 10-43 us, and every cost calibrate has
#: fitted to a published steady state lies within one width (Intel 320 27.17, Micron 1100 10.61,
#: SanDisk X400 44.55, Samsung PM9A3 3.75, Kioxia CM7-R 0.85: the presets' [preset.calibration]).
#: Where no figure pins it, the profile ranges over it (:func:`.structure.gc_cost_grid`)
GC_FW_SIGMA = 50.0


@dataclass(frozen=True)
class Param:
    """One fitted parameter: ``key`` in the config; fitted as z = (log(value) - log(prior)) /
    sigma (``log``) or (value - prior) / sigma, so the prior is a residual z."""

    name: str
    key: str
    what: str
    prior: float
    sigma: float
    log: bool = True
    lower: float = 0.0
    upper: float = math.inf
    prior_source: str = "default"
    #: the finite-difference step of the fit's Jacobian (z units; None: the fit's own): wider
    #: where the core resolves the value coarsely (the NAND capacity in whole superblocks)
    step: float | None = None

    def value(self, z: float) -> float:
        return self.prior * math.exp(z * self.sigma) if self.log else self.prior + z * self.sigma

    def z(self, value: float) -> float:
        return math.log(value / self.prior) / self.sigma if self.log else (value - self.prior) / self.sigma

    def z_bounds(self) -> tuple[float, float]:
        if self.log:
            lo = self.z(self.lower) if self.lower > 0 else -math.inf
            hi = self.z(self.upper) if math.isfinite(self.upper) else math.inf
            return lo, hi
        return self.z(self.lower), (self.z(self.upper) if math.isfinite(self.upper) else math.inf)


@dataclass
class Model:
    """The drive's config tables (``drive``, ``ftl``, ``timing``), each key's source, and the
    parameters left to fit."""

    tables: dict
    sources: dict[str, str]
    params: list[Param]
    spec: DriveSpec
    #: the timed simulator's IOPS over the cost model's bound, by figure condition (:func:`condition`)
    efficiency: dict[tuple, float] = field(default_factory=dict)
    #: a datasheet of bursts (:mod:`.burst`): its bursts are SLC-mode programs
    slc_bursts: bool = False
    #: and, with no figure of a steady state, the native program time is the fitted SLC-mode one's
    #: at this share of its write rate (the prior's centre), with ``units_ratio`` the core's units
    #: of a native program over an SLC-mode one; None: the native program time is its own
    native_share: float | None = None
    units_ratio: float = 1.0
    #: the FTL block is :data:`FTL_BLOCK`, an estimate (nobody gave it nor the GC unit): a structure
    #: of superblocks has none
    ftl_block_estimated: bool = False

    def config(self, values: dict[str, Any] | None = None) -> dict:
        """The config with ``values`` (parameter name -> value, and a structural alternative's
        config keys, ``ftl.gc`` ...: :func:`structure_of`) applied."""
        cfg = _copy_tables(self.tables)
        for p in self.params:
            if values and p.name in values:
                section, k = p.key.split(".", 1)
                v = values[p.name]
                cfg.setdefault(section, {})[k] = int(v) // 4096 * 4096 if p.name == "physical" else v
        if self.native_share is not None:  # a structure's own native program time overrides it
            t = cfg["timing"]
            t["t_prog_us"] = round(burst.native_prog_us(t["t_prog_slc_us"], self.units_ratio, self.native_share), 3)
        for key, v in structure_of(values).items():
            section, k = key.split(".", 1)
            cfg.setdefault(section, {})[k] = v
        if self.ftl_block_estimated and cfg.get("ftl", {}).get("gc_unit") == "superblock":
            del cfg["drive"]["pages_per_block"]
        return cfg

    @property
    def unit_given(self) -> bool:
        """Whether the input gives the GC unit: superblocks, or FTL blocks of a given size."""
        return "ftl.gc_unit" in self.sources or (
            "drive.pages_per_block" in self.sources and not self.ftl_block_estimated
        )

    def ftl(self, values: dict[str, Any]) -> dict:
        """The ``[ftl]`` table :meth:`config` gives with ``values``' parameters (a fitted floor),
        without a structural alternative's keys: the drive's own."""
        out = _copy_tables({"ftl": self.tables.get("ftl", {})})["ftl"]
        for p in self.params:
            if p.name in values and p.key.startswith("ftl."):
                out[p.key.split(".", 1)[1]] = values[p.name]
        return out

    @property
    def user_bytes(self) -> int:
        return int(self.tables["drive"]["user_capacity"])


def _copy_tables(tables: dict) -> dict:
    """A copy of config ``tables`` sharing nothing mutable with them (as ``copy.deepcopy``): each
    table's scalars copied by reference, a nested table or list deep-copied (the calibration's
    tables are flat but for such as ``ftl.slc_cache``; a prediction copies them thousands of times)."""
    return {
        s: {k: (copy.deepcopy(v) if isinstance(v, (dict, list)) else v) for k, v in t.items()}
        if isinstance(t, dict)
        else copy.deepcopy(t)
        for s, t in tables.items()
    }


def structure_of(values: dict[str, Any] | None) -> dict[str, Any]:
    """The config keys of the structural alternative (:mod:`.structure`) a profile point's
    ``values`` carry (``ftl.gc``, ``ftl.meta_writes``, ``timing.planes`` ...); parameters are
    named without a table."""
    return {k: v for k, v in (values or {}).items() if "." in k}


def _put(tables: dict, sources: dict, key: str, value: Any, source: str) -> None:
    section, k = key.split(".", 1)
    tables.setdefault(section, {})[k] = value
    sources[key] = source


def build(spec: DriveSpec, figures: list[Figure] | None = None) -> Model:
    """The model of ``spec``: given values, the rules for what nobody gave, and the parameters
    to fit (each with its prior); the WAF floor is one of them when ``figures`` can pin it
    (:func:`pins_floor`)."""
    if spec.native is None:
        raise InputError("the drive's native (user) capacity is needed: --native 960GB or [drive] native", key="native")
    tables: dict = {"drive": {}, "timing": {}}
    sources: dict[str, str] = {}
    _put_given(spec, tables, sources)
    prior_physical = spec.physical or spec.native * 2**30 // 10**9
    _put_nand_defaults(tables, sources, prior_physical)
    _put_host_defaults(spec, tables, sources)
    estimated = _put_ftl_block(tables, sources)
    prior = _population_prior(spec)
    params = _params(spec, tables, sources, prior)
    if pins_floor(figures or [], spec.native) and "ftl.meta_writes" not in sources:
        params.append(
            Param(
                "meta_writes",
                "ftl.meta_writes",
                "NAND pages of metadata, journal and parity per host page (the WAF floor)",
                0.0,
                META_SIGMA,
                log=False,
                lower=0.0,
                upper=1.0,
                prior_source="the core's default (none; the prior's width is an estimate, docs/calibrate.md)",
            )
        )
    model = Model(tables, sources, params, spec, ftl_block_estimated=estimated)
    if bursts_rated(spec, figures or [], sources):
        _put_slc_bursts(model, steady=any(f.kind in STEADY_KINDS for f in figures or []))
    return model


#: the figures of a steady state (a datasheet's steady random write, a measured point)
STEADY_KINDS = ("steady_iops", "waf", "steady_ratio", "waf_ratio")


def bursts_rated(spec: DriveSpec, figures: list[Figure], sources: dict[str, str]) -> bool:
    """Whether ``spec`` is a client TLC drive whose datasheet rates bursts alone (:mod:`.burst`): no
    datasheet figure of a steady state (a measured one may be there), and nobody gave its native
    or SLC-mode program time or its SLC cache."""
    given = ("timing.t_prog_us", "timing.t_prog_slc_us", "ftl.slc_cache")
    rated = [f for f in figures if f.source.startswith("datasheet")]
    return (
        spec.cell == "tlc"
        and _drive_class(spec)[0] == "client"
        and bool(rated)
        and not any(f.kind in STEADY_KINDS for f in rated)
        and not any(k in sources for k in given)
    )


def _put_slc_bursts(model: Model, steady: bool) -> None:
    """A datasheet of bursts (:mod:`.burst`): an SLC cache takes them, and the fit has the SLC
    mode's program time; the native one is the prior's share of its write rate, or, where a
    measured figure is of a steady state (``steady``), a parameter of its own that it pins."""
    tables, sources = model.tables, model.sources
    _put(tables, sources, "ftl.slc_cache", dict(burst.SLC_CACHE), burst.SLC_CACHE_SOURCE)
    physical = next((p.prior for p in model.params if p.name == "physical"), None)
    drive = tables["drive"] | ({"physical_capacity": int(physical)} if physical else {})
    d = describe({"drive": drive, "ftl": tables["ftl"], "timing": tables["timing"]}, model_limits=False)
    slc = d["timing"]["slc"]
    model.slc_bursts = True
    model.units_ratio = d["timing"]["units_per_program"] / slc["units_per_program"]
    core = slc["t_prog_ns"] / 1000
    slc_prog = Param(
        "t_prog_slc_us",
        "timing.t_prog_slc_us",
        "SLC-mode program time of a word line (the SLC cache's write bandwidth: the datasheet's bursts)",
        core,
        math.log(3),
        lower=core / 1000,
        upper=core * 1000,
        prior_source="the core's default for SLC mode",
    )
    at = next(i for i, p in enumerate(model.params) if p.name == "t_prog_us")
    if steady:  # both program times, each pinned by its own figures
        model.params.insert(at, slc_prog)
    else:  # the native one the prior's share of the SLC mode's
        model.params[at] = slc_prog
        model.native_share = burst.prior()[0]
        sources["timing.t_prog_us"] = "default: " + burst.centre_text()


def pins_floor(figures: list[Figure], user_bytes: int) -> bool:
    """Whether ``figures`` can pin the WAF floor: steady WAFs at ``META_SPANS`` spans or more (a
    floor and the spare NAND shape the WAF-against-span curve differently; one WAF fits either)."""
    sides = [x for f in figures for x in parts(f) if x.kind == "waf"]  # a WAF ratio's two sides too
    return len({(x.span or user_bytes, x.user) for x in sides}) >= META_SPANS


def _population_prior(spec: DriveSpec) -> tuple[int, str, float]:
    """The prior of the NAND GC can use: the population of real drives of the drive's class
    (:mod:`.population`: its centre and width, the drive's own preset left out), as (bytes,
    source, width in log)."""
    assert spec.native is not None
    cls, dwpd = _drive_class(spec)
    centre, sigma, n = population.class_prior(cls, exclude=spec.name)
    why = (
        "no endurance or cell says the drive's class: every class"
        if cls is None
        else f"class {cls} ({'QLC' if cls == 'qlc' else f'{dwpd:g} DWPD'})"
    )
    source = (
        f"the population of real drives (opsim.calibrate.population, docs/calibrate.md): {why}, {n} drives, "
        f"NAND = {centre:.3f} x the user capacity, x/÷ {math.exp(sigma):.3f} (1 sd)"
    )
    return int(spec.native * centre), source, sigma


def _drive_class(spec: DriveSpec) -> tuple[str | None, float | None]:
    """(the drive's class in :mod:`.population`, its DWPD): from its endurance and cell."""
    assert spec.native is not None
    dwpd = spec.dwpd
    if dwpd is None and spec.tbw is not None:
        years = spec.warranty_years or 5.0
        dwpd = dwpd_of(spec.tbw * 1e12, spec.native, years)
    return population.drive_class(spec.cell, dwpd), dwpd


def _put_given(spec: DriveSpec, tables: dict, sources: dict) -> None:
    """The values given (options, drive file) or read from the datasheet."""

    def said(what: str) -> str:
        return "given" if spec.origin.get(what) == "given" else "datasheet"

    _put(tables, sources, "drive.user_capacity", spec.native, f"{said('native')}: native capacity")
    if spec.page_size is not None:
        _put(
            tables, sources, "drive.page_size", spec.page_size, f"{said('page_size')}: mapping unit (indirection unit)"
        )
    if spec.interface:
        _put(tables, sources, "timing.interface", spec.interface, f"{said('interface')}: host interface")
    if spec.cell:
        _put(tables, sources, "timing.cell", spec.cell, f"{said('cell')}: NAND cell type")
    if spec.physical is not None:
        _put(tables, sources, "drive.physical_capacity", spec.physical, f"{said('physical')}: NAND capacity")
    for key, v in spec.model.items():
        _put(tables, sources, key, v, spec.model_sources[key])


def _put_nand_defaults(tables: dict, sources: dict, prior_physical: int) -> None:
    """The NAND array nobody gave: word-line page, block, channels, dies for the capacity."""
    t = tables["timing"]
    cell = t.get("cell", "tlc")
    bits = {"slc": 1, "mlc": 2, "tlc": 3, "qlc": 4}[cell]
    if "timing.nand_page_size" not in sources:
        _put(
            tables,
            sources,
            "timing.nand_page_size",
            bits * NAND_PAGE,
            f"default: one word line of {bits} x 16 KiB pages programmed at once ({cell.upper()})",
        )
    if "timing.nand_block_size" not in sources:
        _put(
            tables,
            sources,
            "timing.nand_block_size",
            t["nand_page_size"] * WORDLINES_PER_BLOCK,
            f"default: {WORDLINES_PER_BLOCK} word lines per block",
        )
    if "timing.channels" not in sources:
        _put(
            tables,
            sources,
            "timing.channels",
            _core_default("timing", "channels"),
            "default: the core's channel count",
        )
    if "timing.dies_per_channel" not in sources:
        channels = t["channels"]
        dies = max(1, round(prior_physical / (DIE_GBIT[cell] * 2**30 / 8)))
        per = max(1, round(dies / channels))
        why = core_refusal({"dies_per_channel": per})
        if why is not None:  # the capacity asks for more dies than the simulator models
            raise InputError(
                f"native: the drive's {prior_physical / 1e12:,.4g} TB of NAND (from its capacity) would be {dies:,} dies of {DIE_GBIT[cell]} Gbit on {channels} channels, {per:,} a channel: "
                f"more than the simulator models ({why}); give [model] timing.dies_per_channel and "
                "timing.channels, or a smaller drive",
                key="native",
            )
        _put(
            tables,
            sources,
            "timing.dies_per_channel",
            per,
            f"default: {dies} dies of {DIE_GBIT[cell]} Gbit {cell.upper()} for "
            f"{prior_physical / 2**30:.0f} GiB of NAND, on {channels} channels",
        )


def _put_host_defaults(spec: DriveSpec, tables: dict, sources: dict) -> None:
    """The host side from the datasheet: the PCIe generation its sequential read needs, the
    queue depth its random writes were measured at."""
    t = tables["timing"]
    if spec.source.get("seq_read_mbps") and t.get("interface", "sata") == "nvme" and "timing.pcie_gen" not in sources:
        gen = _pcie_gen_for(tables, float(spec.source["seq_read_mbps"]))
        if gen is not None:
            _put(
                tables,
                sources,
                "timing.pcie_gen",
                gen,
                f"datasheet: sequential read {spec.source['seq_read_mbps']:g} MB/s needs PCIe gen {gen} (x4)",
            )
    if t.get("interface", "sata") == "nvme" and "timing.link_mbps" not in sources:
        _put_link(spec, tables, sources)
    if spec.rand_write_qd and "timing.queue_depth" not in sources:
        qd, queues = _queue(spec.rand_write_qd, t.get("interface", "sata"))
        _put(tables, sources, "timing.queue_depth", qd, f"datasheet: random writes measured at QD{spec.rand_write_qd}")
        if queues > 1:
            _put(tables, sources, "timing.nvme_queues", queues, f"datasheet: QD{spec.rand_write_qd} as {queues} queues")


def _params(spec: DriveSpec, tables: dict, sources: dict, prior: tuple[int, str, float]) -> list[Param]:
    """The parameters to fit: what nobody gave, each with its prior (the core's default)."""
    assert spec.native is not None  # build refuses a spec without it
    prior_physical, physical_source, physical_sigma = prior
    t = tables["timing"]
    cell = t.get("cell", "tlc")
    d = describe({"drive": tables["drive"] | {"physical_capacity": prior_physical}, "timing": t}, model_limits=False)
    rt = d["timing"]
    params: list[Param] = []
    if "drive.physical_capacity" not in sources:
        params.append(
            Param(
                "physical",
                "drive.physical_capacity",
                "NAND garbage collection can use (with any hidden reserve)",
                prior_physical,
                physical_sigma,
                lower=spec.native * 1.003,
                upper=spec.native * 3.0,
                prior_source=physical_source,
                step=_physical_step(tables, prior_physical, physical_sigma),
            )
        )
    for name, what, core, sigma in (
        (
            "t_prog_us",
            "NAND program time of a word line (the array's write bandwidth)",
            rt["t_prog_ns"] / 1000,
            math.log(3),
        ),
        ("t_read_us", "NAND read time (tR)", *read_time.prior(cell)[:2]),
        ("fw_overhead_us", "controller time per host command", rt["fw_ns"] / 1000, math.log(10)),
        ("channel_mbps", "flash channel transfer rate", float(d["config"]["timing"]["channel_mbps"]), math.log(3)),
    ):
        if f"timing.{name}" not in sources:
            params.append(
                Param(
                    name,
                    f"timing.{name}",
                    what,
                    core,
                    sigma,
                    lower=core / 1000,
                    upper=core * 1000,
                    prior_source=(
                        read_time.prior(cell)[2]
                        if name == "t_read_us"
                        else f"the core's default for {cell.upper()} on {t.get('interface', 'sata')}"
                    ),
                )
            )
    if "timing.gc_fw_us" not in sources:
        params.append(
            Param(
                "gc_fw_us",
                "timing.gc_fw_us",
                "controller time per page garbage collection copies",
                0.0,
                GC_FW_SIGMA,
                log=False,
                lower=0.0,
                prior_source="the core's default (none)",
            )
        )
    return params


def _physical_step(tables: dict, prior_physical: int, sigma: float) -> float | None:
    """A Jacobian step of the NAND capacity spanning 4 GC units when the unit is a superblock
    (the core cuts the capacity into whole superblocks: a smaller step sees no change)."""
    if tables.get("ftl", {}).get("gc_unit") != "superblock":
        return None
    cfg = {
        "drive": tables["drive"] | {"physical_capacity": prior_physical},
        "ftl": tables["ftl"],
        "timing": tables["timing"],
    }
    unit = describe(cfg, model_limits=False)["drive"]["gc_unit"]["bytes"]
    return 4 * unit / (prior_physical * sigma)


def _put_ftl_block(tables: dict, sources: dict) -> bool:
    """The FTL block nobody gave (nor the GC unit): :data:`FTL_BLOCK` of the mapping unit's pages;
    whether it was put (an estimate the superblock alternative drops: :meth:`Model.config`)."""
    if "drive.pages_per_block" in sources or "ftl.gc_unit" in sources:
        return False
    if int(tables["drive"]["user_capacity"]) < FTL_BLOCK * FTL_BLOCKS_LEAST:  # a test file, not a drive
        return False
    page = _core_default("drive", "page_size", {k: v for k, v in tables["drive"].items() if k == "page_size"})
    _put(tables, sources, "drive.pages_per_block", max(2, FTL_BLOCK // page), FTL_BLOCK_SOURCE)
    return True


def _core_default(table: str, key: str, drive: dict | None = None) -> int:
    """The core's value of ``[table] key`` on a drive of ``drive``'s keys (its default if none)."""
    caps = {"user_capacity": 1 << 30, "physical_capacity": 1 << 31}
    d = describe({"drive": caps | (drive or {}), "timing": {}}, model_limits=False)
    return int(d["config"][table][key])


#: a PCIe TLP's payload and its overhead in bytes: a device's memory writes (the data of its
#: reads) at the common maximum payload size of 256 B, each with a 3-dword header, sequence
#: number, LCRC and framing (5 dwords): "For a 256-byte maximum payload size and a three dword
#: TLP header (or five dword overhead), the maximum possible throughput is (256/(256+20)), or
#: 92%" (Intel, AN 456: PCI Express High Performance Reference Design, 1.1.2 "Throughput for
#: Posted Writes", https://www.intel.com/content/www/us/en/docs/programmable/683541/current/
#: throughput-for-posted-writes.html)
TLP_PAYLOAD = 256
TLP_OVERHEAD = 20


def _put_link(spec: DriveSpec, tables: dict, sources: dict) -> None:
    """An NVMe drive's host link payload rate: the core's rate of its PCIe generation and lanes
    (after the line code) times a TLP's share of payload (:data:`TLP_PAYLOAD`), and never less
    than the datasheet's sequential read (a host of a larger payload size carries more)."""
    t = tables["timing"]
    base = {"drive": {"user_capacity": 1 << 30, "physical_capacity": 1 << 31}}
    raw = float(describe(base | {"timing": t}, model_limits=False)["timing"]["link_mbps"])
    share = TLP_PAYLOAD / (TLP_PAYLOAD + TLP_OVERHEAD)
    link = raw * share
    why = (
        f"estimate: the PCIe link's {raw:g} MB/s times a TLP's payload share {TLP_PAYLOAD}/"
        f"({TLP_PAYLOAD}+{TLP_OVERHEAD}) at a 256 B maximum payload (Intel AN 456, 'Throughput for Posted Writes')"
    )
    seq = spec.source.get("seq_read_mbps")
    if seq and float(seq) > link:
        link = float(seq)
        why = f"datasheet: sequential read {float(seq):g} MB/s, above {why.removeprefix('estimate: ')}"
    _put(tables, sources, "timing.link_mbps", round(link, 1), why)


def _pcie_gen_for(tables: dict, mbps: float) -> int | None:
    """The lowest PCIe generation (from the configured one up) whose x4 link carries ``mbps``,
    as the core rates links; None when the configured one does already, or when none of the
    generations the core rates does (the link rate is then the datasheet's figure:
    :func:`_put_link`)."""
    base = {"drive": {"user_capacity": 1 << 30, "physical_capacity": 1 << 31}}
    for gen in (3, 4, 5):
        d = describe(base | {"timing": {"interface": "nvme", "pcie_gen": gen}}, model_limits=False)
        if d["timing"]["link_mbps"] >= mbps:
            return None if gen == 3 else gen
    return None


def _queue(qd: int, interface: str) -> tuple[int, int]:
    """A datasheet queue depth as (queue_depth, queues): SATA at most 32; NVMe QD x jobs as
    several queues of at most 64."""
    if interface != "nvme":
        return min(qd, 32), 1
    queues = max(1, math.ceil(qd / 64))
    return math.ceil(qd / queues), queues


def condition(f: Figure) -> tuple:
    """What a timed run of ``f`` depends on: the kind of run, span, request size, queue depth
    and mix (a WAF figure and an IOPS figure of one run share it)."""
    kind = "steady" if f.kind in STEADY_KINDS else f.kind
    return (kind, f.span, f.user, f.block_size, f.queue_depth, f.read_fraction)


@dataclass(frozen=True)
class Prediction:
    value: float
    waf: float
    waf_gc: float
    bound: float
    bottleneck: str


def parts(f: Figure) -> list[Figure]:
    """The figures whose IOPS make ``f``: itself, or a ratio's numerator and denominator."""
    if f.kind in ("steady_ratio", "waf_ratio"):
        assert f.ref is not None
        return [replace(f, kind=f.ref.kind, ref=None), f.ref]
    return [f]


def mix_of(f: Figure, page: int, interface: str, read_fraction: float | None = None) -> dict:
    """The cost model's workload mix of figure ``f`` on a drive of mapping unit ``page``
    (``read_fraction``: instead of the figure's); a sequential read senses each NAND page once
    for the units of a command in it (``sequential``: the core's sequential-read model); the
    commands in flight of the figure's queue depth on ``interface`` (as :func:`_queue` runs
    it), at which the core bounds random reads by their latency too."""
    rf = f.read_fraction if read_fraction is None else read_fraction
    mix: dict = {
        "write_fraction": 1.0 - rf,
        "units_per_io": max(1.0, f.block_size / page),
        "bytes_per_io": float(f.block_size),
    }
    if f.kind == "seq_read":
        mix["sequential"] = True
    if f.queue_depth:
        qd, queues = _queue(f.queue_depth, interface)
        mix["queue_depth"] = qd * queues  # random reads are bound by their latency at it too
    return mix


def fresh_state(model: Model) -> dict[str, bool]:
    """The cost model's state of a fresh drive (a burst, a sequential fill): nothing folded yet;
    a drive rated by bursts (:mod:`.burst`) writes them in SLC mode."""
    return {"slc_folds": False, "slc_burst": model.slc_bursts}


def predict(model: Model, values: dict[str, Any], figures: list[Figure]) -> list[Prediction]:
    """Each figure's value at ``values``, from the core (see the module's text)."""
    cfg = model.config(values)
    leaves = [x for f in figures for x in parts(f)]
    spans = sorted({x.span or model.user_bytes for x in leaves})
    d = describe(cfg, model_limits=False, users=spans)
    seen = {s: lv["seen_by_gc"] for s, lv in zip(spans, d["levels"])}
    cm = d["cost_model"]
    page = d["drive"]["page_size"]

    alt = {k.split(".", 1)[1]: v for k, v in structure_of(values).items() if k.startswith("ftl.")}
    # the drive's own [ftl] (a fitted floor included), the alternative's keys scaled onto its curve
    own_ftl = model.ftl(values)

    burst_state = fresh_state(model)

    def one(f: Figure) -> Prediction:
        steady = f.kind in ("steady_iops", "waf")
        if steady:
            cell = cfg["timing"].get("cell")
            c = curve(cfg["drive"], own_ftl, f.block_size, cell, timing=cfg["timing"])
            if alt:  # a structural alternative: the drive's own curve, scaled (docs/calibrate.md)
                c = alternative(c, cfg["drive"], own_ftl, f.block_size, cell, alt)
            waf, waf_gc = c.at(seen[f.span or model.user_bytes])
        else:
            waf, waf_gc = 1.0, 1.0
        if not math.isfinite(waf_gc):
            return Prediction(math.nan, math.inf, math.inf, math.nan, "-")
        mix = mix_of(f, page, d["config"]["timing"]["interface"])
        # a fresh drive (burst, sequential fill) has nothing to fold yet: the cost model's
        # steady-state SLC folding applies only to the steady figures
        bound = costs(cm if steady else cm | burst_state, mix, waf_gc)
        iops = bound["iops"] * model.efficiency.get(condition(f), 1.0)
        return Prediction(waf if f.kind == "waf" else iops, waf, waf_gc, bound["iops"], bound["bottleneck"])

    out = []
    for f in figures:
        ps = [one(x) for x in parts(f)]
        if len(ps) == 2:
            a, b = ps
            out.append(Prediction(a.value / b.value, a.waf, a.waf_gc, a.bound / b.bound, a.bottleneck))
        else:
            out.append(ps[0])
    return out
