"""One sweep point run: its config through the core, the result's metrics, or the error that
stopped it (recorded, not raised, so the other points finish)."""

from __future__ import annotations

import json
import time
from typing import Any

from .._version import __version__
from .columns import metrics


def _error_fields(e: BaseException) -> dict:
    return {
        "status": "error",
        "error_type": type(e).__name__,
        "error_key": getattr(e, "key", None),
        "error_message": str(e) or repr(e),
    }


def _one_thread(config_json: str) -> str:
    """The point's config with ``run.threads = 1`` unless it sets its own: the points run side by
    side, one on each of the workers' cores (a point's own ``run.threads`` is for a sweep with
    fewer workers than cores: docs/sweeps.md)."""
    cfg = json.loads(config_json)
    run = cfg.get("run") if isinstance(cfg, dict) else None
    if not isinstance(cfg, dict) or (run is not None and not isinstance(run, dict)) or "threads" in (run or {}):
        return config_json
    cfg["run"] = {**(run or {}), "threads": 1}
    return json.dumps(cfg)


def run_point(config_json: str, document: bool = False, base_dir: str | None = None) -> dict:
    """Simulate one point (a config as JSON text); never raises: an error becomes the row.
    With ``document``, the row keeps the whole result document (without its machine-dependent
    ``perf``) as JSON text in ``result_json``.  Relative paths in the config (traces) are
    taken relative to ``base_dir``.

    This is the function the Dask workers run; it needs only ``opsim`` importable there.
    """
    t0 = time.perf_counter()
    try:
        from ..sim import _core

        data = json.loads(_core().simulate(_one_thread(config_json), "json", base_dir))
        row: dict[str, Any] = {"status": "ok", "error_type": None, "error_key": None, "error_message": None}
        row.update(metrics(data))
        if document:
            data.pop("perf", None)
            row["result_json"] = json.dumps(data, separators=(",", ":"))
    except Exception as e:  # recorded, never raised: one bad point must not stop a sweep
        row = _error_fields(e)
    row["opsim_version"] = __version__
    row["wall_seconds"] = time.perf_counter() - t0
    return row
