"""What a datasheet never states: priors of the drive's structure, each with its basis.

A datasheet gives rates and an endurance; it never states how the firmware lays out and
collects the NAND.  Three things that move every prediction are taken as priors with an
interval, not as the model's convention alone (docs/calibrate.md, "What a datasheet never
states"):

* **the WAF floor** (``ftl.meta_writes``: NAND pages of parity, metadata and journal per host
  page): a population of published parity ratios (:data:`PARITY`), its centre the mean and its
  width the spread of one more drive, as :mod:`.population` makes the NAND's; flat from none
  to the centre, normal above it (:func:`floor_penalty`);
* **the GC policy** (``ftl.gc``): the victim policies of the core that the SSD literature
  proposes for a controller (:data:`POLICIES`); no source says which a drive's firmware uses,
  so each is as likely;
* **the superblock** (``ftl.gc_unit = "superblock"``): its size as a multiple of one NAND block
  on every plane of every die (:data:`SUPERBLOCK`), which only the zoned and sequential writers'
  predictions depend on (the uniform-write WAF curve does not, above 1,536 pages a unit);
* **the native array's write rate** (``timing.t_prog_us``) of a client TLC drive rated only by
  bursts into its SLC cache: a share of the bursts' rate, from published drives (:mod:`.burst`);
* **the controller's time per GC copy** (``timing.gc_fw_us``), when no figure pins it: a drive
  rated only by bursts (a client drive's fresh-out-of-box random write into its SLC cache) says
  nothing of its steady state, which the controller's GC can slow several times over; the fit's
  own half-normal prior (:data:`.model.GC_FW_SIGMA`) walked at :data:`GC_COST_STEPS`.

The fit keeps the model's convention (no floor, greedy, the stripe over every die): these
priors are nuisances the profile likelihood ranges over (:mod:`.uncertainty`), each alternative
with the cost its prior puts on it, so an interval covers what the figures cannot rule out.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from .population import one_more

#: Micron's enterprise SSD FAQ (P400e, P400m, P410m)
MICRON_FAQ = (
    "Micron, enterprise SAS SSD FAQ, 'What is RAIN and why is RAIN important?', "
    "http://www.micron.com/products/solid-state-storage/enterprise-sas-ssd"
)
TOMS_M550 = (
    "Tom's Hardware, 'Crucial M550 SSD Review', p. 3, 'RAIN: Protecting Against Small NAND Failures', "
    "https://www.tomshardware.com/reviews/crucial-m550-ssd-review,3772-3.html"
)
ANANDTECH_M500DC = (
    "AnandTech, 'Micron M500DC (480GB & 800GB) Review', p. 2, 'RAIN', "
    "http://www1.anandtech.com/Show/Index/7947?page=2&slug=micron-m500-dc-480gb-800gb-review"
)


@dataclass(frozen=True)
class Parity:
    """One published die-parity ratio: ``data`` pages of host data to ``parity`` pages."""

    drive: str
    data: int
    parity: int
    source: str

    @property
    def floor(self) -> float:
        """Parity pages per host page."""
        return self.parity / self.data


#: every published parity ratio found: the parity a drive programs with its data, per host page
PARITY: tuple[Parity, ...] = (
    Parity(
        "Micron RAIN (enterprise SAS: P400e, P400m)",
        15,
        1,
        f"{MICRON_FAQ}: 'structured in an arrangement of 15 pages of user data + 1 parity page'",
    ),
    Parity(
        "Micron P410m",
        7,
        1,
        f"{MICRON_FAQ}: 'Reduction in the available NAND space by 12.5% (P410m)', one page in eight",
    ),
    Parity("Micron P320h", 7, 1, f"{MICRON_FAQ}: '(The P320h SSD is structured in a 7+1 arrangement.)'"),
    Parity("Crucial M500", 15, 1, f"{TOMS_M550}: 'Micron settled on a ratio of 1:15' (the M500)"),
    Parity("Crucial M550", 127, 1, f"{TOMS_M550}: 'Instead of 1:15, the M550 rocks a crazy 1:127 relationship'"),
    Parity(
        "Micron M500DC 120-480 GB",
        11,
        1,
        f"{ANANDTECH_M500DC}: 'the stripe ratio is 11:1 for the 120GB, 240GB and 480GB models'",
    ),
    Parity("Micron M500DC 800 GB", 15, 1, f"{ANANDTECH_M500DC}: '15:1 for the 800GB one'"),
)


def floor_prior() -> tuple[float, float, int]:
    """(centre, width, entries) of the WAF floor's prior, normal on the floor: the mean of the
    published parity ratios and the spread of one more drive about it (the sample's standard
    deviation times sqrt(1 + 1/n), Student's t of n - 1 degrees of freedom in place of the
    normal's 1.96), as :mod:`.population` makes the NAND's."""
    xs = [p.floor for p in PARITY]
    return statistics.fmean(xs), one_more(xs), len(xs)


def floor_penalty(f: float, centre: float, width: float) -> float:
    """The cost (chi-square units) the floor's prior puts on floor ``f``: none up to the
    centre (the published ratios reach from 1:127 to 1:7, so a floor below their mean is not
    less likely than at it, and none, the model's convention, keeps its whole interval), a
    normal of the prior's width above it."""
    return max(0.0, (f - centre) / width) ** 2


#: the floors (in prior widths from the centre) the profile ranges over: the convention (none),
#: the centre, one and one and a half widths above it (the cost of two, 4, is past the 95%
#: threshold: a floor there is never inside)
FLOOR_STEPS = (-math.inf, 0.0, 1.0, 1.5)


def floor_grid() -> list[tuple[float, float]]:
    """(floor, the cost its prior puts on it) at each of :data:`FLOOR_STEPS`, none first."""
    centre, width, _ = floor_prior()
    floors = (0.0 if k == -math.inf else centre + k * width for k in FLOOR_STEPS)
    return [(f, floor_penalty(f, centre, width)) for f in floors]


def floor_keys(f: float) -> dict[str, float]:
    """The config key of floor ``f`` as an alternative sets it (none for no floor)."""
    return {"ftl.meta_writes": round(f, 4)} if f > 0 else {}


@dataclass(frozen=True)
class Policy:
    name: str
    keys: dict[str, Any]
    source: str


#: the core's victim policies the SSD literature proposes for a drive's firmware; FIFO and
#: random are left out (no controller is described collecting that way)
POLICIES: tuple[Policy, ...] = (
    Policy(
        "greedy",
        {},
        "the fewest valid pages (Rosenblum and Ousterhout's cleaner; the model's convention and every preset's)",
    ),
    Policy(
        "cost-benefit",
        {"ftl.gc": "cost-benefit"},
        "Kawaguchi, Nishioka and Motoda, 'A flash-memory based file system', USENIX Winter 1995",
    ),
    Policy(
        "windowed greedy",
        {"ftl.gc": "windowed-greedy"},
        "Hu, Eleftheriou, Haas, Iliadis and Pletka, 'Write amplification analysis in flash-based solid state "
        "drives', SYSTOR 2009 (the core's default window, 64 blocks)",
    ),
    Policy(
        "d-choices",
        {"ftl.gc": "d-choices", "ftl.d": 10},
        "Van Houdt, 'A mean field model for a class of garbage collection algorithms in flash-based solid state "
        "drives', SIGMETRICS 2013 (d = 10, as docs/validation.md checks its mean field)",
    ),
)


#: the superblock's size as multiples of one NAND block on every plane of every die, each as
#: likely: a stripe over half the dies or a block of half the word lines, the estimate, two
#: blocks a plane or a block of twice the word lines
SUPERBLOCK = (0.5, 1.0, 2.0)
SUPERBLOCK_SOURCE = (
    "no source gives a drive's superblock: Kioxia's Software-Enabled Flash API, 'Super Blocks' "
    "(https://softwareenabledflash.github.io/SEF-API/super-blocks): 'By default, super blocks span all the dies "
    "... However, the size of the super block may be changed'; the NAND block's word lines are an estimate too "
    "(calibrate.model.WORDLINES_PER_BLOCK); so half and twice the estimate are taken as likely as it"
)


#: the NAND array's read structure, when a drive's ``[timing]`` gives none of it: the core's
#: defaults (two planes, a read holding its die, the convention), or today's NAND as the presets
#: estimate it: two or four planes per die, each reading on its own, a command's units on one
#: page sensed once, channels moving whichever die's page is ready (docs/timed.md, "Reads of
#: today's NAND", "The channel order"), each as likely
ARRAY_KEYS = ("planes", "read_planes", "read_whole_pages", "channel_order")
ARRAYS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("", {}),
    (
        "2 planes reading on their own",
        {"timing.planes": 2, "timing.read_planes": 2, "timing.read_whole_pages": True, "timing.channel_order": "ready"},
    ),
    (
        "4 planes reading on their own",
        {"timing.planes": 4, "timing.read_planes": 4, "timing.read_whole_pages": True, "timing.channel_order": "ready"},
    ),
)
ARRAYS_SOURCE = (
    "the presets' inputs (crates/opsim-core/presets/inputs/): Micron's 176-layer NAND has four planes a die "
    "(https://techspotal.pages.dev/posts/micron-s-232-layer-nand-starts-shipping-with-up-to-2tb-per-package), "
    "Kioxia's BiCS5 two or four and BiCS6 four (https://tomshardware.com/news/kioxia-and-western-digital-build-new-"
    "162-layer-nand-flash-memory); independent plane reads and whole-page senses are the presets' estimates"
)


#: the controller times per GC copy (in widths of the fit's half-normal prior) the profile ranges
#: over when no figure pins it, besides none (the convention): one, one and a half and 1.9 widths
#: (cost 3.61; two, 4, is past the 95% threshold: never inside)
GC_COST_STEPS = (1.0, 1.5, 1.9)
#: the config key of that cost
GC_COST_KEY = "timing.gc_fw_us"


def gc_cost_grid(width: float) -> list[tuple[float, float]]:
    """(``timing.gc_fw_us``, the cost its prior puts on it) at each of :data:`GC_COST_STEPS` of a
    half-normal prior of ``width`` us."""
    return [(round(k * width, 3), k * k) for k in GC_COST_STEPS]


def gc_cost_top(width: float) -> float:
    """The highest controller time per GC copy the profile ranges over (:func:`gc_cost_grid`)."""
    return max(c for c, _ in gc_cost_grid(width))


def gc_prior_text(width: float) -> str:
    """In words: what the profile takes of an unpinned controller time per GC copy."""
    top = gc_cost_top(width)
    return (
        f"the controller's time per GC copy (timing.gc_fw_us) is only its prior, 0 +- {width:g} us (half-normal), "
        f"and every steady-state interval ranges over 0 to {top:g} us (opsim.calibrate.structure)"
    )


@dataclass(frozen=True)
class Alternative:
    """One structure the profile ranges over: the config keys it sets (none: the model's own),
    the cost its prior puts on it (chi-square units, 0 for the likeliest), and what it is."""

    keys: dict[str, Any] = field(default_factory=dict)
    penalty: float = 0.0
    what: str = "the model's convention"


#: the config key of the native program time (a datasheet of bursts: :mod:`.burst`)
NATIVE_KEY = "timing.t_prog_us"
#: the structures' keys whose highest value slows a drive most (the least IOPS, which no WAF end
#: gives): a drive file names the point of each as an end (:meth:`.uncertainty.Profile.stored`)
SLOW_KEYS = (GC_COST_KEY, NATIVE_KEY)


def alternatives(
    tables: dict,
    floor_free: bool,
    gc_width: float | None = None,
    native: list[tuple[float, float, float]] | None = None,
    unit_given: bool | None = None,
) -> list[Alternative]:
    """The structures a fit's intervals range over, the model's own (greedy, no floor) first:
    greedy at every floor of :data:`FLOOR_STEPS`, and every other policy of :data:`POLICIES`
    at the likeliest floor (the prior's centre; the floor moves WAF more than the policy does,
    docs/calibrate.md).  With the floor a fitted parameter (``floor_free``) or given in
    ``[ftl]``, the policies alone; with the policy given, the floors alone.
    A drive whose input gives no GC unit (``unit_given``; None: ``[ftl] gc_unit`` or ``[drive]
    pages_per_block`` in ``tables``) has each floor in superblocks too, and one whose ``[timing]``
    gives nothing of its NAND array's reads each of :data:`ARRAYS`.
    ``gc_width``: the controller's time per GC copy is pinned by no figure and has this prior
    width; the model's own structure then at each cost of :func:`gc_cost_grid` too (each prior
    alone, as :mod:`.gc_cost` bounds the costs).  ``native``: a datasheet of bursts (:mod:`.burst`),
    (native program time, the cost its prior puts on it, its share of the bursts' rate) for the
    model's own structure at each share of :func:`.burst.grid` too (alone, as the GC cost)."""
    ftl = tables.get("ftl", {})
    fixed_floor = "meta_writes" in ftl or floor_free
    floors = [(0.0, 0.0)] if fixed_floor else floor_grid()
    out = []
    # a drive whose GC unit nobody gave collects FTL blocks by the model's convention, or
    # superblocks (SUPERBLOCK_SOURCE: a stripe over the dies), each as likely; one whose NAND
    # array nobody gave has the core's defaults or today's NAND (ARRAYS)
    if unit_given is None:
        unit_given = "gc_unit" in ftl or "pages_per_block" in tables.get("drive", {})
    units = [{}] if unit_given else [{}, {"ftl.gc_unit": "superblock"}]
    timing = tables.get("timing", {})
    arrays = ARRAYS[:1] if any(k in timing for k in ARRAY_KEYS) else ARRAYS
    for name, array in arrays:
        for unit in units:
            for f, pen in floors:
                keys = array | unit | floor_keys(f)
                parts = ["greedy", name, "superblocks" if unit else "", f"floor {f:.3f}" if f > 0 else ""]
                out.append(Alternative(keys, pen, ", ".join(x for x in parts if x)))
    if gc_width is not None:
        out += [
            Alternative({GC_COST_KEY: c}, pen, f"greedy, GC copy cost {c:g} us") for c, pen in gc_cost_grid(gc_width)
        ]
    for t, pen, share in native or []:
        out.append(Alternative({NATIVE_KEY: t}, pen, f"greedy, native array at {share:.2f} of the bursts' rate"))
    if "gc" in ftl:
        return out
    at = 0.0 if fixed_floor else floor_prior()[0]  # the likeliest floor, at no cost
    for pol in POLICIES[1:]:
        out.append(
            Alternative(dict(pol.keys) | floor_keys(at), 0.0, pol.name + (f", floor {at:.3f}" if at > 0 else ""))
        )
    return out


def floors_of(structure: dict[str, Any], tables: dict, floor_free: bool) -> list[Alternative]:
    """The floors of :data:`FLOOR_STEPS` in ``structure`` (an alternative's keys, its floor
    dropped), ``structure`` itself first: none when the floor is fitted or given."""
    keys = {k: v for k, v in structure.items() if k != "ftl.meta_writes"}
    if "meta_writes" in tables.get("ftl", {}) or floor_free:
        return [Alternative(keys, 0.0, "the likeliest structure")]
    return [
        Alternative(keys | floor_keys(f), pen, f"the likeliest structure, floor {f:.3f}") for f, pen in floor_grid()
    ]
