"""Running the demo's configs, several at once."""

from __future__ import annotations

from ..sim import simulate_many


def simulate_all(cfgs, jobs: int, bar) -> dict:
    """Run every (level index, workload key, config) of ``cfgs``, ``jobs`` at once (the Rust
    core releases the GIL: threads run in parallel), each on one thread (the runs side by side
    take the cores); ``bar.update(1)`` after each.  Returns
    {(level index, workload key): result document}."""
    cfgs = list(cfgs)
    res = simulate_many([cfg for _, _, cfg in cfgs], jobs, on_done=lambda _: bar.update(1))
    return {(i, key): r.data for (i, key, _), r in zip(cfgs, res)}
