"""One self-contained HTML report from simulated and measured results.

    >>> from opsim import report
    >>> report.write("report.html", [r1, r2], labels=["7% OP", "28% OP"])

The file holds everything (figures as base64 PNG, no external resource): the drives and
workloads, the OP table, the figures of :mod:`opsim.plots`, the steady-state verdicts, the
model assumptions, and opsim's version and every result's config.  It is written atomically.
A small inline script marks ``<body data-figures=N data-figures-loaded=M>`` once the page has
loaded (and logs a console error if a figure did not decode): the headless-browser test
reads it back.

The rooms: :mod:`.markup` (HTML primitives), :mod:`.rows` (the derived rows: OP table,
verdicts), :mod:`.figures` (the figure plan and its renderer), :mod:`.placement` (the
data-placement section), :mod:`.drives` and :mod:`.sections` (the other sections),
:mod:`.document` (the document in order, and the file).
"""

from __future__ import annotations

from .document import build, write
from .figures import figure_plan, pattern_groups
from .markup import html_table
from .placement import handle_rows, namespace_rows, placement_plan
from .rows import drive_key, groups_of, op_rows, verdicts
from .sections import ASSUMPTIONS

__all__ = [
    "ASSUMPTIONS",
    "build",
    "drive_key",
    "figure_plan",
    "groups_of",
    "handle_rows",
    "html_table",
    "namespace_rows",
    "op_rows",
    "pattern_groups",
    "placement_plan",
    "verdicts",
    "write",
]
