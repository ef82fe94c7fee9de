"""Lifetime WAF from one snapshot, interval WAF from two."""

from __future__ import annotations

from ..errors import InputError
from .rules import read_counters


def lifetime_waf(snap: dict) -> dict:
    c = read_counters(snap)
    res = {"mode": "lifetime", "source": snap.get("source"), **c}
    if c["waf_num"] is not None:
        den, num = c["waf_den"], c["waf_num"]
        if den["unit"] == num["unit"] or den["bytes"] is None or num["bytes"] is None:
            a, b = num["raw"], den["raw"]
        else:
            a, b = num["bytes"], den["bytes"]
        if not b:
            res.update(waf=None, available=False, reason="the drive reports no host writes yet (denominator is 0)")
        else:
            res.update(waf=a / b, available=True)
    else:
        res.update(waf=None, available=False)
    return res


def _delta(after: dict | None, before: dict | None, what: str):
    if after is None or before is None:
        return None
    d = after["raw"] - before["raw"]
    if d < 0:
        raise InputError(f"{what}: the counter went backwards ({before['raw']} -> {after['raw']}); "
                         "were BEFORE and AFTER swapped, or was the drive reset?", key="snapshot")
    b = None
    if after.get("bytes") is not None and before.get("bytes") is not None:
        b = after["bytes"] - before["bytes"]
    return {"counter": after["counter"], "before": before["raw"], "after": after["raw"], "delta": d,
            "unit": after["unit"], "bytes": b}


def interval_waf(before_snap: dict, after_snap: dict) -> dict:
    b, a = read_counters(before_snap), read_counters(after_snap)
    ib, ia = b["drive"], a["drive"]
    for k in ("serial_number", "model_name"):
        if ib.get(k) and ia.get(k) and ib[k] != ia[k]:
            raise InputError(f"BEFORE and AFTER are different drives ({k} {ib[k]!r} vs {ia[k]!r})", key="snapshot")
    res = {"mode": "interval", "before": before_snap.get("source"), "after": after_snap.get("source"),
           "drive": ia, "rule": a["rule"], "rule_note": a["rule_note"], "formula": a["formula"],
           "assumption": a.get("assumption"), "missing": a["missing"], "reason": a["reason"],
           "host_writes": None, "nand_writes": None, "waf": None, "available": False}
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
        res["reason"] = "no host writes between the two snapshots (the denominator did not move)"
        return res
    res["waf"] = x / y
    res["available"] = True
    res["reason"] = None
    # coarse counters: warn when the interval is only a few units long
    if den["delta"] < 100:
        res["resolution_note"] = (f"the denominator moved by only {den['delta']} units of {den['unit']}; "
                                  "the WAF has a resolution of about 1/{0} -- write more data".format(den["delta"]))
    return res
