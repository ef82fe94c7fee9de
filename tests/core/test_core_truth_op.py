"""The planner's exact arithmetic pinned to the core.

The planner keeps exact rational (``Fraction``) OP arithmetic and IDEMA LBA counts, and its own
size and percentage parsers (exact fractions, the planner's refusals and messages); the core
computes the same figures in floating point for the drive it models.  On a grid of capacities,
OP values and bases the two agree to 1e-12 relative, and the advisor's OP garbage collection
sees is the core's figure."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opsim import _core
from opsim.errors import InputError
from opsim.planner.capacity import BASES, capacity_from_bytes, op_all, parse_fraction, user_from_op
from opsim.sim import describe
from opsim.units import parse_size

BLOCK = 256 * 4096
NATIVE_GB = [64, 128, 240, 256, 480, 512, 1000, 1024, 3840, 7680, 15360]


def _close(a: float, b: float, rel: float = 1e-12) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b))


def _drive(user: int, physical: int, native: int) -> dict:
    return {"drive": {"user_capacity": user, "physical_capacity": physical, "native_capacity": native}}


@pytest.mark.parametrize("gb", NATIVE_GB)
@pytest.mark.parametrize("held", [Fraction(0), Fraction(1, 200), Fraction(7, 100), Fraction(1, 5), Fraction(1, 2)])
@pytest.mark.parametrize("spare", [Fraction(7, 100), Fraction(28, 100)])
def test_op_all_matches_the_core(gb, held, spare):
    native = capacity_from_bytes(gb * 10**9, 512, "native")
    user = capacity_from_bytes(max(1, math.floor(native.sectors * (1 - held))) * 512, 512, "user", idema=False)
    physical = math.ceil(native.bytes * (1 + spare) / BLOCK) * BLOCK  # whole blocks, as the core models
    core = describe(_drive(user.bytes, physical, native.bytes), model_limits=False)["op"]
    exact = op_all(Fraction(user.bytes), Fraction(physical), Fraction(native.bytes))
    for basis in BASES:
        assert _close(core[basis], float(exact[basis])) or exact[basis] == 0 == core[basis], (basis, core, exact)


@pytest.mark.parametrize("gb", NATIVE_GB)
@pytest.mark.parametrize("op", [Fraction(1, 100), Fraction(7, 100), Fraction(28, 100), Fraction(1, 2)])
@pytest.mark.parametrize("basis", ["user", "physical", "native"])
def test_user_from_op_matches_the_core(gb, op, basis):
    """The core solves the user capacity from an OP in the user, physical and native bases
    (rounded down to whole sectors); the planner's exact solution agrees."""
    native = gb * 10**9
    physical = math.ceil(native * Fraction(107, 100) / BLOCK) * BLOCK
    drive = {"op": float(op), "op_basis": basis}
    if basis == "native":
        drive |= {"native_capacity": native, "physical_capacity": physical}
    else:
        drive |= {"physical_capacity": physical}
    core = describe({"drive": drive}, model_limits=False)["drive"]["user_bytes"]
    exact = user_from_op(op, basis, native=native, physical=physical)
    assert abs(core - exact) < 512 + 1e-12 * exact, (core, float(exact))
    assert core % 512 == 0 and core <= exact * (1 + 1e-12)


def test_added_basis_is_the_cores():
    """SanDisk X400: 256 GB set to 200 GB is 28% added OP."""
    d = describe(_drive(200 * 10**9, 256 * 2**30, 256 * 10**9), model_limits=False)
    assert d["op"]["added"] == pytest.approx(0.28, rel=1e-12)
    assert float(op_all(Fraction(200 * 10**9), None, Fraction(256 * 10**9))["added"]) == pytest.approx(0.28, rel=1e-12)


@pytest.mark.parametrize("preset", ["samsung-840-pro-256gb", "micron-1100-1tb-dwa", "sandisk-x400-512gb"])
def test_advisor_op_seen_is_the_cores(preset):
    """``Drive.op_seen`` is the core's ``seen_by_gc`` at the level's user capacity (the pool
    the analytic preconditioning lays data out in: outside the free-block reserve and the
    SLC cache's static part)."""
    from opsim.planner.advise import load_drive

    drive = load_drive(preset=preset)
    d = drive.description
    gc_low = d["config"]["ftl"]["gc_low_watermark"]
    static = d["slc_cache"]["min_blocks"] if d["slc_cache"] else 0
    ppb, page = d["drive"]["pages_per_block"], d["drive"]["page_size"]
    for held in (0, 0.07, 0.2):
        user = int(drive.native.sectors * (1 - held)) * 512
        up = -(-user // page)
        assert drive.op_seen(user) == ((d["drive"]["blocks"] - gc_low - static) * ppb - up) / up
    assert drive.op_seen(drive.native.bytes) == pytest.approx(d["op"]["seen_by_gc"], rel=1e-15)


# ------------------------------------------------------------------------- parsers

_UNITS = ["", "B", "b", "kB", "KB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB", "gib", "tb"]


@settings(max_examples=400, deadline=None)
@given(
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=999),
    st.integers(min_value=0, max_value=3),
    st.sampled_from(_UNITS),
    st.sampled_from(["", " "]),
    st.booleans(),
)
def test_size_parsers_agree(whole, frac, digits, unit, space, underscore):
    """On the grammar both accept (digits, `_` separators, a decimal part, a unit in any case),
    the planner's parser and the core's give the same bytes, or both refuse."""
    num = f"{whole:_}" if underscore else str(whole)
    if digits:
        num += "." + str(frac).zfill(3)[:digits]
    text = f"{num}{space}{unit}"
    try:
        py = parse_size(text)
    except InputError:
        py = None
    try:
        core = _core.parse_size(text)
    except InputError:
        core = None
    if py is not None and py >= 2**64:
        assert core is None  # the core's sizes are 64-bit
    else:
        assert py == core, text


@pytest.mark.parametrize("text", ["4G", "1.5B", "-1GB", "", "0x10", "1e3", "1,000", "GB", "4 K"])
def test_size_parsers_refuse_alike(text):
    with pytest.raises(InputError):
        parse_size(text)
    with pytest.raises(InputError):
        _core.parse_size(text)


@settings(max_examples=300, deadline=None)
@given(st.fractions(min_value=0, max_value=1, max_denominator=10**4), st.booleans())
def test_fraction_parsers_agree(v, percent):
    text = f"{float(v * 100)!r}%" if percent else repr(float(v))
    exact = parse_fraction(text, "op")
    assert _close(_core.parse_fraction(text), float(exact), 1e-15) or exact == 0 == _core.parse_fraction(text)
