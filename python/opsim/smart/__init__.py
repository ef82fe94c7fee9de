"""Drive counters: snapshots (smartctl, nvme-cli) and the WAF they imply.

>>> from opsim.smart import load_document, lifetime_waf, interval_waf
>>> lifetime_waf(load_document("micron5300.json"))["waf"]
"""

from ..devices.smartctl import smartctl_status
from . import report, rules
from .parse import as_snapshot, load_document, parse_count
from .rules import RULES, find_rule, read_counters
from .snapshot import take_snapshot
from .waf import interval_waf, lifetime_waf

__all__ = [
    "RULES",
    "as_snapshot",
    "find_rule",
    "interval_waf",
    "lifetime_waf",
    "load_document",
    "parse_count",
    "read_counters",
    "report",
    "rules",
    "smartctl_status",
    "take_snapshot",
]
