"""What the demo's report says about the study: its results in order (grouped by workload,
labelled by level), the introduction and notes, and the OP table in place of the generated one."""

from __future__ import annotations

from .levels import PRESET, SECTOR, marketed_gb
from .study import WORKLOADS, Study
from .table import report_table


def report_results(study: Study, res: dict) -> tuple[list[dict], list[str]]:
    """(documents, labels): every run, labelled by its configuration, grouped by workload."""
    docs, labels = [], []
    for key, _l, _w, _r in WORKLOADS:
        for i, (label, _s, _src) in enumerate(study.levels):
            docs.append(res[(i, key)])
            labels.append(label)
    return docs, labels


def _intro(study: Study) -> list[str]:
    if study.drive_file is None:
        drive = (
            "How much of a 256 GB-class client SSD should be held back as spare area, and what does it buy? The "
            f"drive (256 GiB of NAND sold as 256 GB; preset {PRESET}) is configured at the capacities the seeds "
            "discuss "
        )
    else:
        drive = (
            f"How much of {study.drive} should be held back as spare area, and what does it buy? The drive "
            f"({study.nand_text}, native {marketed_gb(study.levels[0][1] * SECTOR)} GB; {study.what}) is "
            "configured at the OP levels the seeds discuss, as shares of its native capacity and NAND, "
        )
    return [
        drive + "and simulated under 4 KiB random writes at QD32 after a sequential fill (AnandTech's IO-consistency "
        "method, the write-saturation curve) and under a 95:5 read:write mix of 4 KiB random IOs from the "
        "analytic steady state (Micron's read-heavy case).",
        "Every figure below was computed by this run; nothing is copied from the seeds.",
    ]


def _notes(scale: int, blocks: int, pages_per_block: int) -> list[str]:
    return [
        f"Scale model: 1/{scale} of the NAND ({blocks} FTL blocks of {pages_per_block:,} pages) with every timing, "
        "die and block size of the preset kept, so IOPS and latency are the full drive's; the time axes are the "
        f"model's (the full drive takes {scale}x as long), data written in drive writes is the same. "
        "Greedy GC over this few blocks writes somewhat less than the mean-field model, which assumes "
        "infinitely many: compare the WAF and WAF model columns.",
        "The 95:5 runs keep more blocks free in the background (the timed model's background GC runs while "
        "the NAND idles), which the garbage collector then cannot use as spare: their WAF is higher than "
        "under pure writes.",
    ]


def report_context(study: Study, rows: list[dict], command: str, scale: int, blocks: int, pages_per_block: int):
    """The report's ``context``: how it was made (``command``), the introduction, the notes on
    the 1/``scale`` model of ``blocks`` blocks, and the OP table of ``rows``."""
    return {
        "command": command,
        "intro": _intro(study),
        "notes": _notes(scale, blocks, pages_per_block),
        "op_table": report_table(rows),
    }


def report_title(study: Study) -> str:
    return f"opsim demo: over-provisioning study of {study.drive}"
