"""Lifetime WAF from one snapshot, interval WAF from two.

An interval is refused (:class:`InputError`) when the two snapshots cannot be one drive's
counters read twice in order: different serial numbers, models or WWNs; a serial number
missing from either one (unless ``allow_no_serial``: the counters of two drives of the same
model would give a plausible but meaningless WAF, and the serial is the only identity
smartctl reports); fewer power-on hours or power cycles in AFTER than in BEFORE; or a counter
that went backwards.  smartctl's exit status bits of each snapshot are returned as warnings.
"""

from __future__ import annotations

from ..devices.smartctl import status_warnings
from ..errors import InputError
from .parse import int_field, naming_source, nvme_value, obj
from .rules import read_counters


def snapshot_warnings(snap: dict) -> list[str]:
    """smartctl's exit status bits (one warning each), then the warnings recorded in the snapshot."""
    own = [w for w in snap.get("warnings") or [] if not str(w).startswith("smartctl exit status")]
    return status_warnings(snap.get("smartctl_status")) + [str(w) for w in own]


def _ratio(a: int, b: int) -> float:
    return a / b  # counters are < 2**128 (parse_count), so the ratio is a finite float


def lifetime_waf(snap: dict) -> dict:
    c = read_counters(snap)
    res = {
        "mode": "lifetime",
        "source": snap.get("source"),
        **c,
        "smartctl_status": snap.get("smartctl_status"),
        "warnings": snapshot_warnings(snap),
    }
    if c["waf_num"] is not None:
        den, num = c["waf_den"], c["waf_num"]
        if den["unit"] == num["unit"] or den["bytes"] is None or num["bytes"] is None:
            a, b = num["raw"], den["raw"]
        else:
            a, b = num["bytes"], den["bytes"]
        if not b:
            res.update(waf=None, available=False, reason="the drive reports no host writes yet (denominator is 0)")
        else:
            res.update(waf=_ratio(a, b), available=True)
    else:
        res.update(waf=None, available=False)
    return res


def _delta(after: dict | None, before: dict | None, what: str):
    if after is None or before is None:
        return None
    d = after["raw"] - before["raw"]
    if d < 0:
        raise InputError(
            f"{what}: the counter went backwards ({before['raw']} -> {after['raw']}); "
            "were BEFORE and AFTER swapped, or was the drive reset?",
            key="snapshot",
        )
    b = None
    if after.get("bytes") is not None and before.get("bytes") is not None:
        b = after["bytes"] - before["bytes"]
    return {
        "counter": after["counter"],
        "before": before["raw"],
        "after": after["raw"],
        "delta": d,
        "unit": after["unit"],
        "bytes": b,
    }


def usage_clock(snap: dict) -> dict:
    """Power-on hours and power cycles of a snapshot (None where the drive does not say)."""
    try:
        return _usage_clock(snap)
    except InputError as e:
        raise naming_source(snap, e) from None


def _usage_clock(snap: dict) -> dict:
    sc = snap.get("smartctl") if isinstance(snap.get("smartctl"), dict) else {}
    hours = int_field(obj(sc, "power_on_time"), "hours", "power_on_time.")
    cycles = int_field(sc, "power_cycle_count")
    if hours is None:
        hours = nvme_value(snap, "smart_log", "power_on_hours")
    if cycles is None:
        cycles = nvme_value(snap, "smart_log", "power_cycles")
    return {"power_on_hours": hours, "power_cycles": cycles}


def check_same_drive(before_snap: dict, after_snap: dict, ib: dict, ia: dict, allow_no_serial: bool) -> list[str]:
    """Refuse a pair that cannot be one drive read twice, in order; the warnings for one that may be."""
    names = f"BEFORE ({before_snap.get('source')}) and AFTER ({after_snap.get('source')})"
    for k, label in (("serial_number", "serial number"), ("model_name", "model"), ("wwn", "WWN")):
        if ib.get(k) and ia.get(k) and ib[k] != ia[k]:
            raise InputError(f"{names} are different drives ({label} {ib[k]!r} vs {ia[k]!r})", key="snapshot")
    warnings = []
    missing = [n for n, i in (("BEFORE", ib), ("AFTER", ia)) if not (i.get("serial_number") or "").strip()]
    if missing:
        which = " and ".join(missing)
        if not allow_no_serial:
            raise InputError(
                f"{names}: {which} {'has' if len(missing) == 1 else 'have'} no serial number, so "
                "opsim cannot tell that both are the same drive (two drives of one model give a "
                "plausible but meaningless WAF); if you know they are, pass --allow-no-serial",
                key="snapshot",
            )
        warnings.append(
            f"{which} {'has' if len(missing) == 1 else 'have'} no serial number: the snapshots were "
            "taken to be of the same drive (--allow-no-serial)"
        )
    cb, ca = usage_clock(before_snap), usage_clock(after_snap)
    for k, label in (("power_on_hours", "power-on hours"), ("power_cycles", "power cycles")):
        if cb[k] is not None and ca[k] is not None and ca[k] < cb[k]:
            raise InputError(
                f"{names}: AFTER has fewer {label} ({ca[k]}) than BEFORE ({cb[k]}); were BEFORE "
                "and AFTER swapped, or are they different drives?",
                key="snapshot",
            )
    return warnings


def _unmoved_reason(den: dict, host: dict | None) -> str:
    """Why an interval has no WAF when the WAF's denominator did not move: no host writes, or fewer
    than one unit of a coarse counter (the host-writes row, in finer units, shows how many)."""
    if host is None or not host.get("delta") or host["counter"] == den["counter"]:
        return "no host writes between the two snapshots (the denominator did not move)"
    wrote = f"{host['bytes']:,} bytes" if host.get("bytes") is not None else f"{host['delta']:,} units"
    return (
        f"the WAF's denominator ({den['counter']}, in units of {den['unit']}) did not move while the host "
        f"wrote {wrote} ({host['counter']}): too little for its resolution; write at least two of its "
        "units between the snapshots"
    )


def interval_waf(before_snap: dict, after_snap: dict, *, allow_no_serial: bool = False) -> dict:
    b, a = read_counters(before_snap), read_counters(after_snap)
    ib, ia = b["drive"], a["drive"]
    pair_warnings = check_same_drive(before_snap, after_snap, ib, ia, allow_no_serial)
    warnings = (
        [f"BEFORE: {w}" for w in snapshot_warnings(before_snap)]
        + [f"AFTER: {w}" for w in snapshot_warnings(after_snap)]
        + pair_warnings
    )
    res = {
        "mode": "interval",
        "before": before_snap.get("source"),
        "after": after_snap.get("source"),
        "drive": ia,
        "rule": a["rule"],
        "rule_note": a["rule_note"],
        "formula": a["formula"],
        "assumption": a.get("assumption"),
        "missing": a["missing"],
        "reason": a["reason"],
        "host_writes": None,
        "nand_writes": None,
        "waf": None,
        "available": False,
        "smartctl_status": {"before": before_snap.get("smartctl_status"), "after": after_snap.get("smartctl_status")},
        "warnings": warnings,
    }
    if a["host_writes"] and b["host_writes"] and a["host_writes"]["counter"] == b["host_writes"]["counter"]:
        res["host_writes"] = _delta(a["host_writes"], b["host_writes"], "host writes")
    if a["pair"] is None or b["pair"] is None or a["pair"] != b["pair"]:
        if a["pair"] is not None and b["pair"] is None:
            res["reason"] = "the BEFORE snapshot lacks the counters the AFTER snapshot has: " + ", ".join(b["missing"])
            res["missing"] = b["missing"]
        return res
    res["nand_writes"] = _delta(a["nand_writes"], b["nand_writes"], "NAND writes")
    num = _delta(a["waf_num"], b["waf_num"], "WAF numerator")
    den = _delta(a["waf_den"], b["waf_den"], "WAF denominator")
    res["waf_counters"] = {"numerator": num, "denominator": den}
    if num["unit"] == den["unit"] or num["bytes"] is None or den["bytes"] is None:
        x, y = num["delta"], den["delta"]
    else:
        x, y = num["bytes"], den["bytes"]
    if y == 0:
        res["reason"] = _unmoved_reason(den, res["host_writes"])
        return res
    res["waf"] = _ratio(x, y)
    res["available"] = True
    res["reason"] = None
    # coarse counters: warn when the interval is only a few units long
    if den["delta"] < 100:
        res["resolution_note"] = (
            f"the denominator moved by only {den['delta']} units of {den['unit']}; "
            "the WAF has a resolution of about 1/{0} -- write more data".format(den["delta"])
        )
    return res
