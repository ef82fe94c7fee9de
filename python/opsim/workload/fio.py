"""``opsim advise --fio JOB``: a fio job file's job as the advisor's workload.

The Rust core reads the job (``opsim._core.fio_job``: the options it honours, the ones it
refuses by name and line) and generates it (``[workload] type = "fio"``); this module maps
the core's reading to the advisor's screen and hands the job itself to the confirmation:

* **screen** (analytic): the job's read share, its write block sizes (``bs``/``bssplit``),
  sequential or random, and its ``random_distribution`` as the advisor's skew:
  ``zipf:θ`` -> zipf θ (fio's zipf is Gray et al.'s approximation of zipf θ over the
  blocks); ``pareto:h`` -> hot-cold h/(1-h) (fio's pareto sends a share ``x^(1/p)`` of the
  I/O, ``p = log h / log(1-h)``, to the hottest share ``x`` of the blocks, which is 1-h at
  x = h: the two-class approximation of that curve at fio's own point);
  ``zoned``/``zoned_abs`` -> one LBA class per zone (hot-cold when two); ``random`` and
  ``normal`` -> uniform (noted: fio's random map visits every block once a pass, which GC
  finds easier than uniform; normal has no analytic model here);
* **confirmation** (simulated): ``[workload] type = "fio"`` with the job file itself, on the
  scale model of each candidate level.  The job's region must be a share of the target
  (no ``size``/``offset``/``filesize``, or percentages), since each level has another user
  capacity; byte values are refused naming the option and line.

docs/planner.md ("fio jobs") and docs/workloads.md ("fio job files").
"""

from __future__ import annotations

import json
import os

from .. import sim
from ..errors import InputError
from ..errors import option_error as _bad
from .spec import Workload, _units_touched


def read_job(path, section=None) -> dict:
    """The core's reading of the job (the core's typed errors, exit 2; its config keys
    ``workload.job`` and ``workload.section`` become the options ``--fio`` and ``--section``).
    The core refuses a path that is missing or is not a regular file (a FIFO, a device, a
    directory) before reading it, and says which."""
    try:
        return json.loads(sim._core().fio_job(os.path.abspath(str(path)), section))
    except InputError as e:
        for key, opt in (("workload.section", "section"), ("workload.job", "fio")):
            if getattr(e, "key", None) == key:
                raise _bad(opt, str(e).split(": ", 1)[-1]) from None
        raise


class FioWorkload(Workload):
    """The advisor's workload for a fio job (the screen's mapping; the job for the simulator)."""

    def __init__(self, job: dict, section: str | None):
        super().__init__(read_fraction=float(job["read_fraction"]))
        self.job = job
        self.section = section if section is not None else job["job"]
        self.sequential = 0.0 if job["random"] else 1.0
        sizes = [(int(b), float(p)) for b, p in job["write_sizes"]]
        self._sizes = sizes
        self.block_size = sizes[0][0] if len(sizes) == 1 else None
        self.mapping, self._zone_classes = _skew_of(job)
        if self.mapping.get("skew") == "zipf":
            self.skew, self.zipf_exponent = "zipf", self.mapping["zipf_exponent"]
        elif self.mapping.get("skew") == "hot-cold":
            self.skew = "hot-cold"
            self.hot_fraction = self.mapping["hot_fraction"]
            self.hot_write_fraction = self.mapping["hot_write_fraction"]

    def sizes(self) -> list[tuple[int, float]]:
        return list(self._sizes)

    def pages_per_io(self, page: int) -> float:
        return sum(p * _units_touched(s, page, min(min(b for b, _ in self._sizes), page)) for s, p in self._sizes)

    def classes(self, user_pages: int):
        if self._zone_classes is not None:
            return self._zone_classes
        return super().classes(user_pages)

    def sim_workload(self, page: int | None = None, ppb: int | None = None) -> dict:
        return {"type": "fio", "job": self.job["path"], "section": self.section}

    def describe(self) -> str:
        j = self.job
        kind = "random" if j["random"] else "sequential"
        dist = j["distribution"] + (f":{j['parameter']:g}" if j["parameter"] is not None else "")
        rw = f"{100 * self.read_fraction:g}:{100 * self.write_fraction:g} read:write"
        sizes = ", ".join(f"{_fmt(b)}{'' if p == 1 else f' {100 * p:g}%'}" for b, p in self._sizes)
        return (
            f"fio job [{j['job']}] of {os.path.basename(j['path'])}: {sizes} {kind} writes, {rw}"
            + (f", random_distribution={dist}" if j["random"] else "")
            + f"; screened as {self.mapping['notation']}"
            + (f" ({HASH_NOTE})" if self.hashed else "")
        )

    @property
    def hashed(self) -> bool:
        """fio hashes this job's ranks modulo the block count (zipf, pareto, normal)."""
        return bool(self.job["random"]) and self.job["distribution"] in ("zipf", "pareto", "normal")

    def to_dict(self) -> dict:
        note = {"fio_note": HASH_NOTE} if self.hashed else {}
        return super().to_dict() | {"fio": self.job, "fio_mapping": self.mapping} | note


#: fio's zipf, pareto and normal hash the rank modulo the block count (docs/planner.md)
HASH_NOTE = (
    "fio hashes ranks modulo the block count, so the share of blocks ever written depends on the count; "
    "the simulator's scale model has its own count, not the drive's: docs/planner.md, fio jobs"
)


def _fmt(n: int) -> str:
    for u, m in (("MiB", 2**20), ("KiB", 1024)):
        if n % m == 0:
            return f"{n // m} {u}"
    return f"{n} B"


def _skew_of(job: dict) -> tuple[dict, list[tuple[float, float]] | None]:
    """The screen's skew for the job's distribution (module docstring) and, for zones, the
    LBA classes [(share of LBAs, share of writes)]."""
    d, x = job["distribution"], job["parameter"]
    if not job["random"]:
        return {"skew": "uniform", "notation": "sequential", "exact": True}, None
    if d == "zipf":
        return {"skew": "zipf", "zipf_exponent": x, "notation": f"zipf:{x:g}", "exact": False}, None
    if d == "pareto":
        h = float(x)
        hot, share = min(h, 1 - h), max(h, 1 - h)
        return {
            "skew": "hot-cold",
            "hot_fraction": hot,
            "hot_write_fraction": share,
            "notation": f"hot-cold:{100 * hot:g}/{100 * share:g}",
            "exact": False,
        }, None
    if d in ("zoned", "zoned_abs"):
        zones = job["zones"]
        if d == "zoned":
            lbas = [z["size_percent"] / 100 for z in zones]
        else:
            total = sum(z["bytes"] for z in zones)
            lbas = [z["bytes"] / total for z in zones]
        cls = [(f, z["access_percent"] / 100) for f, z in zip(lbas, zones, strict=True) if f > 0]
        if len(cls) == 2:
            (f, r), _ = sorted(cls, key=lambda c: -c[1] / c[0])
            return {
                "skew": "hot-cold",
                "hot_fraction": f,
                "hot_write_fraction": r,
                "notation": f"hot-cold:{100 * f:g}/{100 * r:g}",
                "exact": True,
            }, None
        m = {"skew": "hot-cold", "notation": f"{len(cls)} LBA classes (fio's zones)", "exact": True}
        m["hot_fraction"], m["hot_write_fraction"] = max(cls, key=lambda c: c[1] / c[0])
        return m, cls
    note = (
        "uniform (fio's random map writes every block once a pass: the simulator's WAF is lower)"
        if d == "random" and not job["norandommap"]
        else "uniform (no analytic model of fio's normal; the simulator runs it)"
        if d == "normal"
        else "uniform"
    )
    return {"skew": "uniform", "notation": note, "exact": d == "random" and job["norandommap"]}, None


def fio_workload(path, section=None) -> FioWorkload:
    """The advisor's workload for job ``section`` of fio job file ``path``; a region given in
    bytes (``size``, ``offset``, ``filesize``) is refused: each OP level has its own capacity."""
    job = read_job(path, section)
    for key in ("size", "offset", "filesize"):
        v = job[key]
        if v is not None and "bytes" in v:
            raise InputError(
                f"{job['path']}:{v['line']}: option `{key}`: opsim advise --fio runs the job on each candidate "
                f"OP level's user area, so the region must be a share of it: give {key} as a percentage "
                f"(e.g. {key}=100%) or leave it out",
                key=f"{job['path']}:{v['line']}",
            )
    return FioWorkload(job, section)
