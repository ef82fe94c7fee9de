"""One candidate's fleet: how many drives to buy, and how much of each to hold back, for a need.

The fleet's usable capacity ``U``, host writes ``H`` a day (spread evenly), ``Y`` years and
optionally IOPS per usable TB and latency bounds.  With ``n`` drives each drive writes
``ceil(H / n)`` bytes a day and serves ``iops_per_tb x U / n`` IOPS (a TB of the need is served
wherever it lands); the advisor (:func:`.advisor.advise`) says the least OP that meets, at that
rate, ``Y`` years of the P/E budget (its lifetime target), the IOPS and the latency.  So the
drive count and the OP depend on each other: more OP leaves less usable per drive, so more
drives, so fewer writes each, so less OP needed.

**The fixed point, as a search over the drive count.**  Let ``u_0 > u_1 > ...`` be the
advisor's grid of usable capacities (held back 0, 0.5%, ... of the native capacity, up to
``max_held_back``), ``c(n)`` the most held back at which ``n`` drives still hold ``U``
(the largest ``j`` with ``n x u_j >= U``) and ``a(n)`` the least the advisor needs at the rate
of ``n`` drives.  ``n`` drives can meet the need iff ``a(n) <= c(n)``; the fleet is the
smallest such ``n``, holding back ``a(n)`` (``held_back``; anything up to ``c(n)``,
``held_back_max``, costs the same).  ``c`` grows with ``n`` and ``a`` shrinks (fewer writes and
IOPS a drive: the advisor's targets are monotone in OP and in the load), so feasibility is
monotone in ``n``, and ``n`` ranges over ``[ceil(U / u_0), ceil(U / u_last)]``: no fewer drives
hold ``U``, and past the last ``c(n)`` is the largest level allowed, so more drives would only
be bought to spread the writes (OP by another name: raise ``max_held_back``).  The smallest
feasible ``n`` is found by :func:`.confirm.smallest_passing` (a gallop then a bisection over a
finite integer range: it ends after at most ``2 log2(range) + 2`` judgements whatever the
judge says; monotonicity makes its answer the smallest).

It is found twice: first on the analytic screen's rows (the advisor run once at the fleet's
smallest size, every level's figures kept; the lifetime at another rate is the same TBW over
that rate, :func:`opsim.planner.endurance.lifetime_days`), cheap enough to solve at each end
of the drive's 95% intervals too; then with the advisor itself as the judge (each judgement one
``advise`` at that drive count, its ``max_held_back`` set to ``c(n)``, with the simulator's
confirmation unless ``confirm`` is off; without the intervals, which the first screen carried
and which would triple the simulator's runs), starting from the screen's answer: usually the
screen's answer and the count below it (often settled without a run from a larger count's:
:meth:`Fleet.judged`).  Every reported figure is that
``advise`` document's.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from fractions import Fraction
from typing import Any

from ...workload.spec import Workload
from ..endurance import DAYS_PER_YEAR, TB, lifetime_days
from .advisor import DIAGNOSIS_HELD_BACK, advise
from .compare_file import Candidate, Need
from .confirm import DEFAULT_MODEL_BLOCKS, smallest_passing
from .screen import check, failing, grid
from .targets import Targets
from .trace import advise_trace

#: why the advisor's judgements of drive counts carry no intervals
NO_INTERVALS = (
    "not carried at each drive count judged (the recommendation is the best fit's either way): the fleet's "
    "ranges are solved on the first screen's intervals (opsim advise --compare)"
)

#: the figures each end of the intervals judges on: (TBW, IOPS) keys of a screen row
ENDS = {"best": ("tbw_tb", "iops"), "low": ("tbw_low", "iops_low"), "high": ("tbw_high", "iops_high")}


def per_drive_writes(need: Need, n: int) -> int:
    """Host bytes a day each of ``n`` drives writes: the fleet's, spread evenly, rounded up."""
    return -(-need.host_writes_per_day // n)


def per_drive_iops(need: Need, n: int) -> float | None:
    """IOPS each of ``n`` drives serves: ``min_iops_per_tb`` for every usable TB of the need."""
    return None if need.min_iops_per_tb is None else need.min_iops_per_tb * need.usable / TB / n


def at(need: Need, n: int) -> tuple[Workload, Targets]:
    """The advisor's workload (the need's, at the per-drive rate) and targets with ``n`` drives."""
    wl = copy.copy(need.workload)
    wl.write_rate = per_drive_writes(need, n)
    tg = Targets(min_lifetime_years=need.years, min_iops=per_drive_iops(need, n), latency=list(need.latency))
    return wl, tg


class Fleet:
    """The search for one candidate (:meth:`solve`)."""

    def __init__(
        self,
        cand: Candidate,
        need: Need,
        *,
        step: Fraction = Fraction(1, 200),
        max_held_back: Fraction = Fraction(1, 2),
        confirm: bool = True,
        model_blocks: int = DEFAULT_MODEL_BLOCKS,
        seed: int = 1,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        self.cand, self.need, self.drive = cand, need, cand.drive
        self.step, self.confirm, self.model_blocks, self.seed = step, confirm, model_blocks, seed
        self.progress = progress
        self.levels = grid(self.drive, step, DIAGNOSIS_HELD_BACK)
        self.allowed = sum(1 for lv in self.levels if lv.held_back <= max_held_back)
        self.docs: dict[int, dict] = {}  # the advisor's documents by drive count
        self.probes: list[dict] = []
        self.screen: list[dict] = []
        self.has_interval = False

    @property
    def n_lo(self) -> int:
        return -(-self.need.usable // self.levels[0].user_bytes)

    @property
    def n_cap(self) -> int:
        return -(-self.need.usable // self.levels[self.allowed - 1].user_bytes)

    def cap_level(self, n: int) -> int | None:
        """``c(n)``: the most held back (a grid index) at which ``n`` drives still hold the need."""
        lo, hi = 0, self.allowed  # usable falls with the index: bisect for the last level that holds
        if n * self.levels[0].user_bytes < self.need.usable:
            return None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if n * self.levels[mid].user_bytes >= self.need.usable:
                lo = mid
            else:
                hi = mid
        return lo

    def advise_at(self, n: int, confirm: bool, intervals: bool | str = NO_INTERVALS) -> dict:
        """The advisor's document at ``n`` drives, its levels up to ``c(n)`` (the drive's
        intervals carried only when asked: the first screen's; the recommendation is the best
        fit's either way)."""
        c = self.cap_level(n)
        assert c is not None  # only counts that hold the need are judged
        wl, tg = at(self.need, n)
        if not confirm:  # the screen: latency has no analytic model (a latency bound needs confirm)
            tg = replace(tg, latency=[])
        if self.progress:
            self.progress(
                f"{self.cand.name}: {n:,} drives, up to {100 * float(self.levels[c].held_back):.1f}% held back"
            )
        kw: dict[str, Any] = dict(
            step=self.step,
            max_held_back=self.levels[c].held_back,
            confirm=confirm,
            model_blocks=self.model_blocks,
            seed=self.seed,
            progress=self.progress,
        )
        if self.need.trace is not None and confirm:  # the fitted workload screened, the trace replayed
            return advise_trace(self.drive, tg, self.need.trace, write_rate=wl.write_rate, **kw)
        return advise(self.drive, wl, tg, intervals=intervals, **kw)

    # ------------------------------------------------------------------ the screen's fixed point

    def level_meets(self, row: dict, n: int, end: str = "best") -> bool:
        """Whether the screen's ``row`` meets the need's analytic targets with ``n`` drives, on
        the best fit or an end of its intervals (a figure without an end fails: a point left
        garbage collection no spare)."""
        tbw_key, iops_key = ENDS[end] if self.has_interval else ENDS["best"]
        tbw, iops = row.get(tbw_key), row.get(iops_key)
        if tbw is None:
            return False
        wl, tg = at(self.need, n)
        assert wl.write_rate is not None  # at() sets it
        life = float(lifetime_days(tbw, wl.write_rate) / DAYS_PER_YEAR)
        view = {"iops": iops, "tbw_tb": tbw, "dwpd": None, "lifetime_years": life, "user_bytes": row["user_bytes"]}
        return not failing(check(replace(tg, latency=[]), view, None), skip_unknown=False)

    def screen_smallest(self, end: str) -> int | None:
        """The smallest drive count the screen says meets the need (at ``end``), or None."""

        def ok(k: int) -> bool:
            n = self.n_lo + k
            c = self.cap_level(n)
            return c is not None and self.level_meets(self.screen[c], n, end)

        _, hi = smallest_passing(self.n_cap - self.n_lo + 1, 0, ok)
        return None if hi is None else self.n_lo + hi

    def curve(self) -> list[dict]:
        """Every allowed level bought for capacity alone (``ceil(U / u)`` drives): whether the
        screen's best fit meets the need there (the figure of ``opsim report``)."""
        out = []
        for lv, row in zip(self.levels[: self.allowed], self.screen):
            n = -(-self.need.usable // lv.user_bytes)
            out.append(
                {
                    "held_back": float(lv.held_back),
                    "drives": n,
                    "meets": self.level_meets(row, n),
                    "user_bytes": lv.user_bytes,
                }
            )
        return out

    # ------------------------------------------------------------------ the advisor as the judge

    def judged(self, n: int) -> bool:
        """Whether ``n`` drives meet the need, by the advisor (with its simulator unless
        ``confirm`` is off).  Settled without a run where a larger count's run already says:
        a count whose ``c(n)`` is below what the larger count needs fails (fewer drives never
        need less OP), and one whose ``c(n)`` keeps that level passes when the level's own
        figures (TBW and IOPS, which do not depend on the rate) meet this count's targets
        (no latency bound: its load moves with the count).  The count the search ends on is
        run in any case (:meth:`solve`)."""
        if n in self.docs:
            return self.docs[n]["feasible"]
        c = self.cap_level(n)
        known = min((m for m, d in self.docs.items() if m > n and d["feasible"]), default=None)
        rec = None if known is None else self.docs[known]["recommendation"]
        if c is None or (rec is not None and c < rec["index"]):
            self.probes.append({"drives": n, "feasible": False, "judged_by": "a larger count's need"})
            return False
        if rec is not None and not self.need.latency:
            f = rec["figures"]
            if self.level_meets({"tbw_tb": f["tbw_tb"], "iops": f["iops"], "user_bytes": rec["user_bytes"]}, n):
                self.probes.append(
                    {
                        "drives": n,
                        "feasible": True,
                        "held_back_max": float(self.levels[c].held_back),
                        "held_back": rec["held_back"],
                        "judged_by": f"the level {known:,} drives need, its figures at this count's rate",
                    }
                )
                return True
        d = self.advise_at(n, self.confirm)
        self.docs[n] = d
        self.probes.append(self._probe(n, d))
        return d["feasible"]

    def _probe(self, n: int, d: dict) -> dict:
        """What one judgement by the advisor said (``search.judged`` of the document)."""
        c = self.cap_level(n)
        assert c is not None  # judged counts hold the need
        rec = d["recommendation"]
        return {
            "drives": n,
            "feasible": d["feasible"],
            "held_back_max": float(self.levels[c].held_back),
            "held_back": None if rec is None else rec["held_back"],
            "judged_by": "simulator" if d["search"]["confirmed"] else "analytic models",
        }

    def solve(self) -> dict:
        """The fleet: drive counts (best fit, each end of the intervals), the advisor's document
        at the best, and the screen's curve."""
        if self.allowed == 0:
            return {"n": None, "doc": None, "ends": {}, "curve": [], "why": "no level leaves garbage collection spare"}
        first = self.advise_at(self.n_lo, False, True)  # the screen, every level's figures and intervals
        if not self.confirm:
            self.docs[self.n_lo] = first
            self.probes.append(self._probe(self.n_lo, first))
        self.screen = first["screen"][: self.allowed]
        self.has_interval = first["interval"]["from"] is not None
        ends = {e: self.screen_smallest(e) for e in ENDS}
        start = ends["best"] if ends["best"] is not None else self.n_cap
        while True:  # each turn runs the advisor at a count it had not run at: it ends
            _, hi = smallest_passing(
                self.n_cap - self.n_lo + 1, start - self.n_lo, lambda k: self.judged(self.n_lo + k)
            )
            n = None if hi is None else self.n_lo + hi
            if n is None or n in self.docs:
                break
            self.docs[n] = self.advise_at(n, self.confirm)  # settled from a larger count's run: run it
            self.probes.append(self._probe(n, self.docs[n]))
            if self.docs[n]["feasible"]:
                break
        doc = self.docs[n] if n is not None else self.docs.get(self.n_cap) or self.advise_at(self.n_cap, False)
        return {"n": n, "doc": doc, "ends": ends, "curve": self.curve(), "first": first}
