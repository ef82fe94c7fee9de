"""The advisor's checks of a request before any work: the targets against what the drive
and workload allow, a random/sequential mix, and whether JESD219's rating can be confirmed."""

from __future__ import annotations

from ...workload.spec import Workload
from .drive import Drive
from .options import _bad
from .screen import (
    jesd219_available,
)
from .targets import Targets


def check_request(drive: Drive, wl: Workload, targets: Targets, confirm: bool) -> None:
    """Refuse, naming the option, targets the drive or workload cannot be judged on."""
    needs_pe = [
        o
        for o, v in (
            ("min_tbw", targets.min_tbw),
            ("min_dwpd", targets.min_dwpd),
            ("min_lifetime", targets.min_lifetime_years),
        )
        if v is not None
    ]
    if needs_pe and drive.pe is None:
        raise _bad(
            needs_pe[0],
            "an endurance target needs the NAND's P/E cycle rating: give --pe "
            "(host TB writable = P/E x NAND capacity / WAF)",
        )
    if targets.min_lifetime_years is not None and not wl.write_rate:
        raise _bad("min_lifetime", "a lifetime target needs the host writes per day: give --write-rate")
    if not targets.names():
        raise _bad(
            "min_iops",
            "give at least one target: --min-iops, --min-tbw, --min-dwpd, --min-lifetime, "
            "--min-capacity or --max-latency",
        )
    if targets.min_capacity is not None and targets.min_capacity > drive.native.bytes:
        raise _bad(
            "min_capacity",
            f"{targets.min_capacity:,} bytes is more than the drive's native capacity ({drive.native.bytes:,} bytes)",
        )
    if targets.latency and not confirm:
        raise _bad("max_latency", "latency has no analytic model: it needs the simulator (drop --no-simulate)")
    check_mix(drive, wl)


def check_mix(drive: Drive, wl: Workload) -> None:
    """A random/sequential mix: uniform random writes of whole pages."""
    if wl.sequential > 0 and wl.skewed:
        raise _bad(
            "sequential",
            "a random/sequential mix is simulated with uniform random writes; drop --skew/--profile or --sequential",
        )
    if 0 < wl.sequential < 1:
        assert wl.block_size is not None  # a mix is not skewed (refused above), so it has one transfer size
        if wl.block_size % drive.page_size:
            raise _bad(
                "sequential",
                f"a random/sequential mix needs a --block-size that is a multiple of the "
                f"{drive.page_size}-byte page (the simulator's interleaved pattern)",
            )


def jesd219_confirmation(wl: Workload, targets: Targets, confirm: bool) -> tuple[bool, str | None]:
    """Whether the simulator confirms, and why not: a core without the JESD219 workload
    screens that profile with the analytic models only."""
    if not (wl.skew == "jesd219" and confirm and not jesd219_available()):
        return confirm, None
    note = (
        'the Rust core has no workload type "jesd219" yet: the JESD219 profile is screened '
        "with the analytic models only"
    )
    if targets.latency:
        raise _bad("max_latency", note + "; a latency target cannot be checked")
    return False, note
