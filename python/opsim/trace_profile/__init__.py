"""The write profile of a block trace and the synthetic workload that fits it.

    >>> from opsim import trace_profile
    >>> p = trace_profile.profile("hm_0.csv.gz", device="0")   # one streaming pass (Rust core)
    >>> p.overwrite_ratio, p.curve_at[0.20]                     # 20% hottest blocks: share of writes
    >>> w = trace_profile.fit(p)
    >>> w.skew, w.workload, w.error                             # "hot-cold:12.5/87.3", {...}, 0.004

``profile`` (profile.py) is the core's pass as a typed result; ``fit`` (fit.py) fits uniform,
hot-cold and zipf workloads to its write counts, correcting for the finite number of writes
(docs/workloads.md, "Profiling a trace").
"""

from __future__ import annotations

from ..results import check_trace_profile as check_doc
from ..results import load_trace_profile as load_doc
from .fit import WorkloadFit, fit
from .profile import SCHEMA, TraceProfile, profile

__all__ = ["SCHEMA", "TraceProfile", "WorkloadFit", "check_doc", "fit", "load_doc", "profile"]
