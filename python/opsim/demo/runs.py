"""Running the demo's configs, several at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, as_completed

from ..sim import simulate


def simulate_all(cfgs, jobs: int, bar) -> dict:
    """Run every (level index, workload key, config) of ``cfgs``, ``jobs`` at once (the Rust
    core releases the GIL: threads run in parallel), each on one thread (the runs side by side
    take the cores); ``bar.update(1)`` after each.  Returns
    {(level index, workload key): result document}."""
    results = {}
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = {ex.submit(simulate, cfg, threads=1): (i, key) for i, key, cfg in cfgs}
        try:
            for f in as_completed(futs):
                results[futs[f]] = f.result().data
                bar.update(1)
        except BaseException:
            for f in futs:
                f.cancel()
            raise
    return results
