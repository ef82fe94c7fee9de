"""The advisor's notes: every model behind a figure, the timing's source, what a calibrated drive
was fitted to, the scale model."""

from __future__ import annotations

import re

from ...presets import is_path
from ..capacity import (
    GB,
)
from ..endurance import DAYS_PER_YEAR, GB_PER_TB, RATING_FORMULA
from .drive import Drive


def _timing_note(drive: Drive) -> str:
    if not drive.preset:
        return f"timing parameters: {drive.sources.get('timing')}"

    src = drive.sources.get("timing") or {}
    fitted = sorted(k for k, v in src.items() if str(v).startswith("fitted"))
    est = sorted(k for k, v in src.items() if str(v).startswith("estimate"))
    what = "drive file" if is_path(drive.preset) else "preset"
    origins = sorted({o for k in fitted for o in _fitted_to(str(src[k]))})
    return (
        f"timing parameters: {what} {drive.preset} (`opsim presets {drive.preset}` gives every source); "
        f"fitted to {' and '.join(origins) or 'its figures'}: {', '.join(fitted) or 'none'}; "
        f"estimates: {', '.join(est) or 'none'}"
    )


def _fitted_to(source: str) -> list[str]:
    """What a fitted key's source says it was fitted to: the drive's datasheet, a seed, a
    measurement (the text after "to " in "fitted: WHAT, to FIGURES (95%: ...)")."""
    figures = source.split(", to ", 1)[1] if ", to " in source else ""
    out = ["its datasheet"] if re.search(r"(^|; )datasheet", figures) else []
    out += sorted(set(re.findall(r"seed \d{3}", figures)))
    if re.search(r"(^|; )(measured|points|measure)", figures):
        out.append("measurements")
    return out


def _superblock_model(drive, model) -> str:
    """The scale model of a superblock drive, as the core's scale rule made it."""
    b, units, pages = drive.pages_per_block, model.units, model.unit_pages
    which = (
        f"the drive's {units:,} superblocks"
        if units == drive.blocks
        else f"{units:,} of the drive's {drive.blocks:,} superblocks"
    )
    return (
        f"a scale model of {units:,} superblocks of {pages:,} pages ({which}, each 1/{b // pages} of its {b:,} pages)"
    )


def notes(drive, wl, targets, model, confirm, confirm_note, screen, latency_rate, step) -> list[str]:
    b = drive.pages_per_block
    out = [
        f"OP levels: every {100 * float(step):g}% of the native capacity held back, as whole marketed GB "
        "(IDEMA LBA1-03 counts)"
        if drive.native.gb is not None
        else f"OP levels: every {100 * float(step):g}% of the native capacity held back, in whole sectors (floor)",
        f"WAF (screen): {screen[0]['waf_model']}, at the OP garbage collection sees (physical pages outside "
        f"the {drive.description['op']['reserved_blocks']}-block free reserve over user pages); steady state",
        f"WAF is NAND bytes over host bytes: sub-page writes program whole {drive.page_size // 1024} KiB mapping "
        "units (read-modify-write)"
        if any(s % drive.page_size for s, _ in wl.sizes())
        else "WAF is NAND bytes over host bytes",
        "IOPS (screen): bottleneck bound over controller, host link, NAND dies and channels with the timed "
        "model's cost rules; queueing is not modelled, so it is an upper bound",
        _timing_note(drive),
    ]
    if drive.slc_folds:
        out.insert(
            2,
            f"SLC cache (screen): in steady state the cache is its static part "
            f"({drive.slc_static_blocks:,} blocks, held out of the pool GC works in); every host write is "
            "programmed in SLC mode and folded (WAF + 1; per page: an SLC read, a native program and the "
            "controller's per-page GC time)",
        )
    if drive.pe is not None:
        pe_src = drive.sources.get("pe")
        pe_note = "" if pe_src in (None, "given with --pe") else f", {pe_src}"
        out.append(
            f"TBW = P/E ({drive.pe:g}{pe_note}) x NAND ({drive.physical_bytes / GB:,.1f} GB) / WAF; "
            f"DWPD = TBW x {GB_PER_TB[RATING_FORMULA]} / user GB / ({targets.dwpd_years:g} x {DAYS_PER_YEAR} days) "
            "(host bytes over user bytes a day: the data-center vendors' ratings, and the one `opsim calibrate` "
            "derives a P/E rating from; "
            "`opsim endurance` gives the SanDisk X400 note's 1024 too); lifetime = TBW / write rate"
            + (
                "; a rating is the floor its vendor warrants, so a P/E derived from one is the least the NAND "
                "carries and these TBW and DWPD are conservative (docs/calibrate.md, 'The endurance prediction "
                "is low')"
                if drive.pe_from_rating
                else ""
            )
        )
        if targets.min_dwpd is not None and targets.dwpd_workload:
            out.append(
                f"the DWPD target is rated under {targets.dwpd_workload}"
                + (
                    ": JEDEC JESD218 rates a data-center drive's endurance under the JESD219 enterprise workload "
                    "(random writes over the whole drive, 50% to the first 5% of the LBAs, 30% to the next 15%, 20% "
                    "to the rest; 0.5-64 KiB transfers, 67% of 4 KiB), and `opsim calibrate` derives a datasheet's "
                    "P/E rating at that workload's WAF; --profile, --skew, --block-size or --sequential rate it "
                    "under another"
                    if targets.dwpd_workload.startswith("the JESD219")
                    else ""
                )
            )
    else:
        out.append("no --pe: TBW, DWPD and lifetime are not computed")
    if 0 < wl.sequential < 1:
        seq, rnd = wl.mix_chunks(drive.page_size, drive.pages_per_block)
        out.append(
            f'random/sequential mix: simulated with the core\'s interleaved pattern (type "sk-hynix"): '
            f"{seq / 2**20:g} MiB of sequential writes (one FTL block) then {rnd / 2**20:g} MiB of random "
            f"ones, {100 * seq / (seq + rnd):.1f}% sequential by bytes"
        )
    if wl.skew == "zipf":
        out.append(
            "zipf: the analytic screen ranks the real drive's pages; the scale model ranks its own (fewer) "
            "pages, so its skew differs slightly"
        )
    if confirm and model is not None:
        shape = (
            _superblock_model(drive, model)
            if drive.superblocks
            else f"a {model.blocks:,}-block scale model ({b} pages per block, "
            f"1/{max(1, drive.blocks // model.blocks)} of the drive's blocks)"
        )
        out.append(
            f"simulator: timed model on {shape} with the same OP seen by GC and every "
            f"timing and die count kept; preconditioning: {model.precondition}"
            + (
                " (the mean-field steady state placed directly)"
                if model.precondition == "analytic"
                else f" ({model.aging_drive_writes:g} drive writes of the workload after a sequential fill"
                + (", in the timed run)" if model.precondition == "fill + timed aging" else ", functional model)")
            )
            + f"; then {model.warmup_drive_writes:.3g} drive writes of warm-up and {model.measure_drive_writes:.3g} "
            "measured"
        )
        out += model.notes
        if targets.latency:
            out.append(
                "latency: simulator only (no analytic model); "
                + (
                    f"open loop at the IOPS target ({latency_rate:,.0f} IOPS, Poisson arrivals)"
                    if latency_rate
                    else f"closed loop at queue depth {drive.queue_depth}"
                )
                + "; percentiles over the measurement window"
            )
    if confirm_note:
        out.append(confirm_note)
    if not confirm and not confirm_note:
        out.append("--no-simulate: analytic screen only, not confirmed by the simulator")
    return out
