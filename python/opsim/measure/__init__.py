"""Real-drive measurement with fio: WSAT, PTS IOPS, IO consistency.  Result schema: docs/measure.md."""

from .fio import parse_fio_json, parse_log, per_second, summarize
from .runner import Plan, run

__all__ = ["Plan", "parse_fio_json", "parse_log", "per_second", "run", "summarize"]
