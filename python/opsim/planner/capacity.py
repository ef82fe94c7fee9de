"""Capacity and OP arithmetic, exact.

Everything is integer or :class:`fractions.Fraction` arithmetic: sector counts are integers,
OP ratios are exact fractions, and nothing goes through ``float`` until it is displayed.

IDEMA LBA1-03 (the "marketed GB -> LBA count" rule every SATA/SAS vendor follows)::

    512 B sectors:  LBA = 97,696,368 + 1,953,504 x (GB - 50) = 1,953,504 x GB + 21,168
    4 KiB sectors:  LBA = 12,212,046 +   244,188 x (GB - 50) =   244,188 x GB +  2,646

The inverse is exact integer division.  ``round(bytes / 1e9)`` is *not* the inverse: an
IDEMA drive holds 1,000,194,048 bytes per marketed GB plus 10.8 MB, so the quotient drifts by
0.000194 GB per GB and rounds to the wrong GB from about 2,521 GB (~2.5-3 TB) up.

OP bases (the same names as the simulator's ``op`` block, plus ``added``)::

    user      = (physical - user) / user        SK hynix, Kingston; simulator default
    physical  = (physical - user) / physical    "spare area" (Intel, AnandTech)
    native    = (native - user) / native        held back of the native user capacity (Micron,
                                                Intel "MaximumLBA=80%" = native 20%)
    added     = (native - user) / user          OP added over the native capacity, user basis
                                                (SanDisk X400 and SK hynix "level 2": 256 GB
                                                drive set to 200 GB = 56/200 = 28%)

The core computes the same bases in floating point for the drive it models
(``opsim.sim.describe``: ``op``, and ``levels`` at other user capacities); this module keeps
the exact rational forms (the planner prints exact fractions and IDEMA counts) and
tests/core/test_core_truth_op.py pins them to the core (1e-12 relative on a grid of capacities, OP
values and bases; the same for :func:`parse_fraction` against the core's parser).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from ..errors import CapacityError, InputError
from ..units import parse_size

GB = 10**9
GIB = 2**30

#: IDEMA LBA1-03 constants per sector size: (count at 50 GB, count per GB)
IDEMA = {512: (97_696_368, 1_953_504), 4096: (12_212_046, 244_188)}
IDEMA_MIN_GB = 50  # the formula's base point; below it opsim does not claim an IDEMA count

SECTOR_SIZES = (512, 4096)
BASES = ("user", "physical", "native", "added")

BASIS_HELP = {
    "user": "(physical - user) / user",
    "physical": "(physical - user) / physical (spare area)",
    "native": "(native - user) / native (share of the native capacity held back)",
    "added": "(native - user) / user (OP added over native, user basis: SanDisk, SK hynix level 2)",
}


# ---------------------------------------------------------------------------- IDEMA


def check_sector_size(sector_size, key: str = "sector_size") -> int:
    try:
        ss = int(sector_size)
    except (TypeError, ValueError):
        raise InputError(f"{key}: {sector_size!r} is not a sector size (512 or 4096)", key=key) from None
    if ss not in SECTOR_SIZES:
        raise InputError(f"{key}: {sector_size} is not supported; use 512 or 4096", key=key)
    return ss


def idema_lba_count(gb: int, sector_size: int = 512) -> int:
    """The IDEMA LBA1-03 LBA count of a drive marketed as ``gb`` decimal GB."""
    ss = check_sector_size(sector_size)
    if isinstance(gb, bool) or int(gb) != gb:
        raise CapacityError(f"capacity: IDEMA counts are defined for whole GB, not {gb}", key="capacity")
    gb = int(gb)
    if gb < IDEMA_MIN_GB:
        raise CapacityError(
            f"capacity: {gb} GB is below the {IDEMA_MIN_GB} GB base point of the IDEMA LBA1-03 formula", key="capacity"
        )
    base, per = IDEMA[ss]
    return base + per * (gb - IDEMA_MIN_GB)


@dataclass(frozen=True)
class IdemaInverse:
    gb: int | None  # the largest marketed GB whose IDEMA count fits in the LBAs
    exact: bool  # the count is exactly IDEMA(gb)
    extra_sectors: int  # sectors beyond IDEMA(gb) (0 when exact)


def idema_gb(lba_count: int, sector_size: int = 512) -> IdemaInverse:
    """Exact inverse of :func:`idema_lba_count` (integer arithmetic only)."""
    ss = check_sector_size(sector_size)
    n = int(lba_count)
    base, per = IDEMA[ss]
    if n < base:
        return IdemaInverse(None, False, 0)
    q, r = divmod(n - base, per)
    return IdemaInverse(IDEMA_MIN_GB + q, r == 0, r)


def max_lba_hex(max_lba: int) -> str:
    """Upper-case hex without a prefix, as vendors print it (``DF94BAF``)."""
    return f"{int(max_lba):X}"


# ---------------------------------------------------------------------------- parsing

_SECTORS_RE = re.compile(r"^\s*([0-9][0-9,_]*)\s*(s|sec|sector|sectors|lba|lbas)\s*$", re.I)


def parse_fraction(text, key: str, *, allow_one: bool = False) -> Fraction:
    """``28%`` -> 7/25, ``0.28`` -> 7/25 (exact).  A bare number above 1 is refused (say ``28%``)."""
    if isinstance(text, Fraction):
        v = text
    else:
        s = str(text).strip().replace("_", "")
        is_pct = s.endswith("%")
        if is_pct:
            s = s[:-1].strip()
        try:
            d = Decimal(s)
        except InvalidOperation:
            raise InputError(f"{key}: {text!r} is not a percentage (examples: 28%, 0.28)", key=key) from None
        if not d.is_finite():
            raise InputError(f"{key}: {text!r} is not a percentage", key=key)
        v = Fraction(d) / (100 if is_pct else 1)
        if not is_pct and v > 1:
            raise InputError(
                f"{key}: {text!r} is ambiguous; write a percentage with % ({text}%) or a fraction (0.28)", key=key
            )
    if v < 0:
        raise InputError(f"{key}: {text} cannot be negative", key=key)
    return v


@dataclass(frozen=True)
class Capacity:
    """A capacity as a whole number of sectors, with where the number came from."""

    sectors: int
    sector_size: int
    source: str  # "sectors", "idema", "bytes"
    nominal_bytes: Fraction  # the capacity as given (GB x 1e9, or sectors x size)
    gb: int | None = None  # the marketed GB, when the count is IDEMA(gb)
    notes: tuple = field(default_factory=tuple)

    @property
    def bytes(self) -> int:
        return self.sectors * self.sector_size

    @property
    def max_lba(self) -> int:
        return self.sectors - 1

    def to_dict(self) -> dict:
        inv = idema_gb(self.sectors, self.sector_size)
        return {
            "sectors": self.sectors,
            "max_lba": self.max_lba,
            "max_lba_hex": max_lba_hex(self.max_lba),
            "bytes": self.bytes,
            "gb": self.bytes / GB,
            "gib": self.bytes / GIB,
            "sector_size": self.sector_size,
            "source": self.source,
            "idema_gb": inv.gb,
            "idema_exact": inv.exact,
            "idema_extra_sectors": inv.extra_sectors,
        }


def capacity_from_sectors(sectors: int, sector_size: int, source: str = "sectors") -> Capacity:
    ss = check_sector_size(sector_size)
    inv = idema_gb(sectors, ss)
    if inv.exact and inv.gb is not None:
        # an exact IDEMA count: the drive is marketed as inv.gb GB; OP arithmetic uses that
        return Capacity(
            int(sectors),
            ss,
            "idema",
            Fraction(inv.gb * GB),
            gb=inv.gb,
            notes=(f"{int(sectors):,} sectors is exactly the IDEMA count for {inv.gb} GB",),
        )
    return Capacity(int(sectors), ss, source, Fraction(int(sectors) * ss))


def capacity_from_bytes(nbytes, sector_size: int, key: str, idema: bool = True) -> Capacity:
    """Sectors for a byte capacity: the IDEMA count for a whole number of GB >= 50 (when
    ``idema``), else the whole sectors that fit (rounded down, with a note)."""
    ss = check_sector_size(sector_size)
    nb = Fraction(nbytes)
    if nb <= 0:
        raise CapacityError(f"{key}: a capacity must be positive", key=key)
    gb = nb / GB
    if idema and gb.denominator == 1 and gb >= IDEMA_MIN_GB:
        g = int(gb)
        return Capacity(
            idema_lba_count(g, ss),
            ss,
            "idema",
            nb,
            gb=g,
            notes=(f"{key}: {g} GB taken as the IDEMA LBA1-03 count for {g} GB",),
        )
    sectors = int(nb // ss)
    if sectors <= 0:
        raise CapacityError(f"{key}: {float(nb):g} bytes is less than one {ss}-byte sector", key=key)
    notes = []
    if nb % ss:
        notes.append(
            f"{key}: {float(nb):.0f} bytes is not a whole number of {ss}-byte sectors; "
            f"rounded down to {sectors:,} sectors"
        )
    return Capacity(sectors, ss, "bytes", nb, notes=tuple(notes))


def parse_capacity(text, sector_size: int, key: str, idema: bool = True) -> Capacity:
    """``480GB`` (IDEMA count), ``447GiB``, ``937703088s`` (sectors) or a byte count."""
    if isinstance(text, Capacity):
        return text
    m = _SECTORS_RE.match(str(text))
    if m:
        n = int(m.group(1).replace(",", "").replace("_", ""))
        if n <= 0:
            raise CapacityError(f"{key}: a sector count must be positive", key=key)
        return capacity_from_sectors(n, sector_size)
    return capacity_from_bytes(parse_size(text, key=key), sector_size, key, idema=idema)


# ---------------------------------------------------------------------------- OP bases


def op_all(user: Fraction, physical: Fraction | None, native: Fraction | None) -> dict:
    """OP in every basis (exact fractions; ``None`` where a capacity is unknown)."""
    u = Fraction(user)
    p = None if physical is None else Fraction(physical)
    n = None if native is None else Fraction(native)
    return {
        "user": None if p is None else (p - u) / u,
        "physical": None if p is None else (p - u) / p,
        "native": None if n is None else (n - u) / n,
        "added": None if n is None else (n - u) / u,
    }


def user_from_op(op: Fraction, basis: str, *, native=None, physical=None) -> Fraction:
    """The user capacity (in the units of native/physical) that gives ``op`` in ``basis``."""
    op = Fraction(op)
    if basis not in BASES:
        raise InputError(f"op_basis: {basis!r} is not one of {', '.join(BASES)}", key="op_basis")
    if basis in ("user", "physical"):
        if physical is None:
            raise CapacityError(f"physical: the {basis} basis needs the physical capacity", key="physical")
        p = Fraction(physical)
        if basis == "user":
            return p / (1 + op)
        if op >= 1:
            raise CapacityError("op: a physical-basis OP must be below 100%", key="op")
        return p * (1 - op)
    if native is None:
        raise CapacityError(f"native: the {basis} basis needs the native capacity", key="native")
    n = Fraction(native)
    if basis == "native":
        if op >= 1:
            raise CapacityError("op: a native-basis OP must be below 100%", key="op")
        return n * (1 - op)
    return n / (1 + op)


def convert_op(op, from_basis: str, to_basis: str, *, native=None, physical=None) -> Fraction:
    """Convert an OP ratio between bases (exact).  ``user`` <-> ``physical`` needs no
    capacities; anything involving ``native``/``added`` together with ``user``/``physical``
    needs both."""
    op = Fraction(op)
    if from_basis == to_basis:
        return op
    if {from_basis, to_basis} == {"user", "physical"}:
        return op / (1 + op) if to_basis == "physical" else op / (1 - op)
    if {from_basis, to_basis} == {"native", "added"}:
        return op / (1 - op) if to_basis == "added" else op / (1 + op)
    u = user_from_op(op, from_basis, native=native, physical=physical)
    if u <= 0:
        raise CapacityError("op: leaves no user capacity", key="op")
    r = op_all(u, physical, native)[to_basis]
    if r is None:
        raise CapacityError(
            f"{to_basis}: needs the {'physical' if to_basis in ('user', 'physical') else 'native'} capacity",
            key=to_basis,
        )
    return r


def trunc_pct(x: Fraction, digits: int = 2) -> str:
    """A percentage truncated (not rounded) to ``digits`` decimals, as some vendors print."""
    q = Fraction(x) * 100 * 10**digits
    v = q.numerator // q.denominator
    s = f"{v / 10**digits:.{digits}f}"
    return s + "%"


def round_pct(x: Fraction, digits: int = 2) -> str:
    """A percentage rounded half-up to ``digits`` decimals (exact, no float ties)."""
    q = Fraction(x) * 100 * 10**digits
    v = (q + Fraction(1, 2)).__floor__()
    neg = v < 0
    v = abs(v)
    ip, fp = divmod(v, 10**digits)
    s = f"{ip}.{fp:0{digits}d}" if digits else f"{ip}"
    return ("-" if neg else "") + s + "%"


# ---------------------------------------------------------------------------- the plan


def assumed_physical(native: Capacity) -> tuple[int | None, str]:
    """SK hynix "level 1" OP: the marketed GB are decimal, the NAND is binary (GiB)."""
    gb = native.gb
    if gb is None:
        inv = idema_gb(native.sectors, native.sector_size)
        gb = inv.gb
    if gb is None:
        # not an IDEMA-sized drive: take the native bytes as decimal GB (rounded down)
        gb = native.bytes // GB
        if gb == 0:
            return None, "unknown: below 1 GB no physical capacity is assumed; pass --physical"
    return gb * GIB, (
        f"assumed: {gb} GB native -> {gb} GiB of NAND (SK hynix 'level 1' OP, "
        "GB vs GiB = 7.37%); pass --physical for the real figure"
    )


def plan_capacity(
    native,
    *,
    sector_size: int = 512,
    user=None,
    op=None,
    op_basis: str | None = None,
    max_lba=None,
    physical=None,
    idema: bool = True,
    round_user=None,
) -> dict:
    """Solve for the user capacity from exactly one of ``user``, ``op`` (+``op_basis``) or
    ``max_lba`` (fraction of native LBAs kept), and report it in every unit and OP basis.

    ``native``/``user`` take a :class:`Capacity`, a size string (``480GB``, ``312602976s``) or
    bytes; ``physical`` a size; ``op``/``max_lba`` ``"28%"`` or a fraction.
    """
    ss = check_sector_size(sector_size)
    _check_target_options(user, op, op_basis, max_lba)
    nat = parse_capacity(native, ss, "native", idema=idema)
    notes = list(nat.notes)
    phys_bytes, phys_source, phys_note = _physical_capacity(physical, nat)
    if user is not None:
        ucap = parse_capacity(user, ss, "user", idema=idema)
        notes += list(ucap.notes)
        how = "user"
    elif max_lba is not None:
        ucap = _kept_share(nat, ss, max_lba, notes)
        how = "max_lba"
    elif op is not None:
        assert op_basis is not None  # checked on entry: --op needs --op-basis
        ucap = _user_for_op(nat, ss, op, op_basis, phys_bytes, round_user, idema, notes)
        how = f"op {op_basis}"
    else:
        ucap, how = nat, "native"
    if ucap.sectors <= 0:
        raise CapacityError("user: no sectors left", key="user")
    if ucap.sectors > nat.sectors:
        raise CapacityError(
            f"user: {ucap.sectors:,} sectors is more than the native {nat.sectors:,} sectors", key="user"
        )
    given = {
        "native": str(native) if not isinstance(native, Capacity) else native.sectors,
        "user": None if user is None else str(user),
        "op": None if op is None else str(op),
        "op_basis": op_basis,
        "max_lba": None if max_lba is None else str(max_lba),
        "physical": None if physical is None else str(physical),
        "sector_size": ss,
        "idema": idema,
        "round_user": None if round_user is None else str(round_user),
    }
    physical_row = {
        "bytes": phys_bytes,
        "gib": None if phys_bytes is None else phys_bytes / GIB,
        "source": phys_source if phys_bytes is not None else "unknown",
        "note": phys_note,
    }
    return _capacity_report(given, how, ss, nat, ucap, phys_bytes, physical_row, notes)


def _check_target_options(user, op, op_basis, max_lba) -> None:
    """At most one of user, op and max_lba; op with a known basis."""
    given = [k for k, v in (("user", user), ("op", op), ("max_lba", max_lba)) if v is not None]
    if len(given) > 1:
        raise InputError(f"{given[1]}: give only one of --user, --op or --max-lba", key=given[1])
    if op is not None and op_basis is None:
        raise InputError("op_basis: say which basis --op is in (user, physical, native, added)", key="op_basis")
    if op_basis is not None and op_basis not in BASES:
        raise InputError(f"op_basis: {op_basis!r} is not one of {', '.join(BASES)}", key="op_basis")


def _physical_capacity(physical, nat: Capacity) -> tuple[int | None, str, str]:
    """(bytes of NAND, "given"/"assumed", a note): --physical, else the SK hynix assumption."""
    phys_bytes: int | None
    if physical is not None:
        phys_bytes = parse_size(physical, key="physical")
        if phys_bytes <= 0:
            raise CapacityError("physical: must be positive", key="physical")
        phys_source, phys_note = "given", "given with --physical"
    else:
        phys_bytes, phys_note = assumed_physical(nat)
        phys_source = "assumed"
    if phys_bytes is not None and phys_bytes < nat.bytes:
        raise CapacityError(
            f"physical: {phys_bytes:,} bytes is less than the native capacity ({nat.bytes:,} bytes)", key="physical"
        )
    return phys_bytes, phys_source, phys_note


def _kept_share(nat: Capacity, ss: int, max_lba, notes: list[str]) -> Capacity:
    """Intel's max-LBA way: user sectors = native sectors x kept share, truncated."""
    keep = parse_fraction(max_lba, "max_lba")
    if not (0 < keep <= 1):
        raise InputError("max_lba: the share of native LBAs kept must be in (0%, 100%]", key="max_lba")
    s = nat.sectors * keep
    ucap = Capacity(int(s.numerator // s.denominator), ss, "sectors", s)
    if s.denominator != 1:
        notes.append(
            f"max_lba: {nat.sectors:,} x {float(keep):g} = {float(s):,.1f} sectors, truncated to {ucap.sectors:,}"
        )
    return ucap


def _user_for_op(
    nat: Capacity, ss: int, op, op_basis: str, phys_bytes, round_user, idema: bool, notes: list[str]
) -> Capacity:
    """The user capacity an OP target leaves, in the native's own terms (nominal bytes), rounded
    to --round-user when given, then in sectors."""
    opv = parse_fraction(op, "op")
    target_bytes: Fraction | None
    if op_basis in ("user", "physical"):
        target_bytes = user_from_op(opv, op_basis, physical=phys_bytes)
    else:
        target_bytes = user_from_op(opv, op_basis, native=nat.nominal_bytes)
    if target_bytes is None:
        return nat
    if round_user is not None:
        target_bytes = _rounded_target(target_bytes, round_user, notes)
    if target_bytes <= 0:
        raise CapacityError("op: leaves no user capacity", key="op")
    if nat.source != "sectors":
        ucap = capacity_from_bytes(target_bytes, ss, "user", idema=idema)
        notes += list(ucap.notes)
        return ucap
    # stay in sectors: the native count is exact, truncate the product
    s = target_bytes / ss
    ucap = Capacity(int(s.numerator // s.denominator), ss, "sectors", target_bytes)
    if s.denominator != 1:
        notes.append(f"user: {float(s):,.3f} sectors, truncated to {ucap.sectors:,}")
    return ucap


def _rounded_target(target_bytes: Fraction, round_user, notes: list[str]) -> Fraction:
    """``target_bytes`` rounded half-up to the nearest multiple of the --round-user step."""
    step = parse_size(round_user, key="round_user")
    if step <= 0:
        raise InputError("round_user: the step must be positive", key="round_user")
    k = (target_bytes / step + Fraction(1, 2)).__floor__()
    rounded = Fraction(k * step)
    notes.append(
        f"round_user: {float(target_bytes) / GB:.3f} GB rounded to the nearest "
        f"{step / GB:g} GB: {float(rounded) / GB:g} GB"
    )
    return rounded


def _capacity_report(
    given: dict, how: str, ss: int, nat: Capacity, ucap: Capacity, phys_bytes, physical_row: dict, notes: list[str]
) -> dict:
    """The solved plan in every unit and OP basis (exact fractions beside the floats)."""
    held = nat.sectors - ucap.sectors
    phys_f = None if phys_bytes is None else Fraction(phys_bytes)
    op_lba = op_all(Fraction(ucap.bytes), phys_f, Fraction(nat.bytes))
    op_nominal = None
    if nat.source == "idema" and ucap.source in ("idema", "bytes"):
        # the marketed-GB figures (what vendor tables print): 1024 GB -> 800 GB is 21.875%
        op_nominal = op_all(ucap.nominal_bytes, phys_f, nat.nominal_bytes)
    return {
        "input": given,
        "solved_from": how,
        "sector_size": ss,
        "native": nat.to_dict(),
        "user": ucap.to_dict(),
        "held_back": {"sectors": held, "bytes": held * ss},
        "physical": physical_row,
        "op": {k: (None if v is None else float(v)) for k, v in op_lba.items()},
        "op_exact": {k: (None if v is None else f"{v.numerator}/{v.denominator}") for k, v in op_lba.items()},
        "op_nominal": None
        if op_nominal is None
        else {k: None if v is None else float(v) for k, v in op_nominal.items()},
        "notes": notes,
    }
