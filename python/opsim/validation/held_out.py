"""Predictions of held-out figures by ``opsim calibrate`` (docs/calibrate.md, tests): each
drive is calibrated without the figure it then predicts, and the prediction is set beside the
published value.

    python -m opsim.validation.held_out          # the table in docs/calibrate.md (about a minute)
    python -m opsim.validation.held_out --nand   # the 7450 MAX's DWPD against the NAND (seconds)
    python -m opsim.validation.held_out --siblings   # every 1 DWPD preset at 5/6 of its capacity
"""

from __future__ import annotations

import sys
from dataclasses import replace

from scipy.optimize import brentq

from .. import presets
from .._output import markdown_table
from ..calibrate import calibrate, endurance, read_inputs
from ..calibrate.curve import curve
from ..calibrate.inputs import Figure
from ..calibrate.presets import calibration
from ..calibrate.result import DEFAULT_WARRANTY
from ..planner.endurance import dwpd_of
from ..presets import INPUTS
from ..sim import describe
from .real_drives import load
from .seeds import X400_IOPS, x400_users


def _inputs(name: str):
    return read_inputs(str(INPUTS / f"{name}.toml"))


def _row(drive: str, fitted_to: str, figure: str, model: float, published: float, tol: float | None) -> dict:
    """One prediction; ``tol`` None: reported, not a pass/fail line."""
    err = model / published - 1
    return {
        "drive": drive,
        "calibrated from": fitted_to,
        "predicted": figure,
        "model": model,
        "published": published,
        "error": err,
        "tolerance": tol,
        "pass": tol is None or abs(err) <= tol,
    }


def micron_1100() -> list[dict]:
    """Seed 000 with Dynamic Write Acceleration: from the fresh burst and the 1024 GB steady state."""
    cal = calibration("micron-1100-1tb-dwa")
    full, p1000, p800 = (r["iops"] for r in cal.predict([1024 * 10**9, 1000 * 10**9, 800 * 10**9], max_address=True))
    src = "80,000 IOPS fresh; 11,000 at 1024 GB"
    return [
        _row("Micron 1100 1 TB (DWA)", src, "IOPS 1000 GB / 1024 GB", p1000 / full, 13000 / 11000, 0.15),
        _row("Micron 1100 1 TB (DWA)", src, "IOPS 800 GB / 1024 GB", p800 / full, 29000 / 11000, 0.15),
    ]


def intel_320() -> list[dict]:
    """Seed 002: from the 3x ratio at 20% held back, predict the 4x at 40%."""
    cal = calibration("intel-320-160gb")
    native = cal.user_bytes
    users = [native, int(native * 0.6) // 4096 * 4096]
    a, b = (r["iops"] for r in cal.predict(users, max_address=True))
    return [_row("Intel 320 160 GB", "3x at 20% held back", "IOPS 40% held back / native", b / a, 4.0, 0.15)]


def x400() -> list[dict]:
    """Seed 001, each capacity from its own 0% point: the controller's time per GC page fitted to
    it, the time per command the family's (the 256 GB drive's fit, which used that drive's 28%
    point); predict 7% and 28%."""
    family = calibration("sandisk-x400-256gb").fitted.values["fw_overhead_us"]
    rows = []
    for cap, iops in X400_IOPS.items():
        spec, _ = _inputs(f"sandisk-x400-{cap}gb")
        spec.model = spec.model | {"timing.fw_overhead_us": family}
        spec.model_sources = spec.model_sources | {"timing.fw_overhead_us": "the family's (256 GB fit)"}
        users = x400_users(cap)
        fig = Figure("steady_iops", iops[0], f"seed 001: {cap} GB at 0%", user=users[0], queue_depth=32, sigma=0.05)
        cal = calibrate(replace(spec), [fig])
        p0, p7, p28 = (r["iops"] for r in cal.predict([users[0], users[7], users[28]], max_address=True))
        note = "its 0% point" + (" (and fw from its 28% point)" if cap == 256 else "")
        rows.append(_row(f"SanDisk X400 {cap} GB", note, "IOPS 7% / 0%", p7 / p0, iops[1] / iops[0], 0.25))
        rows.append(_row(f"SanDisk X400 {cap} GB", note, "IOPS 28% / 0%", p28 / p0, iops[2] / iops[0], 0.25))
    return rows


def micron_7450() -> list[dict]:
    """The 7450 PRO 960 GB's datasheet alone, predicting the 7450 MAX 800 GB (same hardware):
    its steady random writes, and its endurance under the JESD219 enterprise workload the PRO's
    1 DWPD was rated at (the MAX's user capacity 800 GB: the max address lowered)."""
    cal = calibration("micron-7450-pro-960gb")
    pro, mx = cal.predict([960 * 10**9, 800 * 10**9])
    src = "the PRO's datasheet (85,000 IOPS, 1,400 MB/s writes; 530,000 IOPS, 6,800 MB/s reads; 1 DWPD)"
    return [
        _row("Micron 7450 MAX 800 GB", src, "steady random-write IOPS", mx["iops"], 145_000, 0.20),
        _row("Micron 7450 MAX 800 GB", src, "IOPS MAX / PRO", mx["iops"] / pro["iops"], 145_000 / 85_000, 0.20),
        _row("Micron 7450 MAX 800 GB", src, "DWPD (JESD219 enterprise)", rated_dwpd(cal, 800 * 10**9), 3.0, None),
    ]


def rated_dwpd(cal, user_bytes: int) -> float:
    """Drive writes per day over the warranty of the calibrated drive with its user capacity
    set to ``user_bytes``, under the JESD219 enterprise workload: P/E x NAND / WAF / (user
    bytes x 365 x years)."""
    assert cal.pe is not None
    years = cal.spec.warranty_years or DEFAULT_WARRANTY
    physical = float(cal.fitted.values.get("physical") or cal.config()["drive"]["physical_capacity"])
    waf = endurance.enterprise_waf(cal.config(), user_bytes).waf
    return dwpd_of(cal.pe["value"] * physical / waf, user_bytes, years)


def micron_7450_nand(
    physicals: tuple[float, ...] = (1.00e12, 1.04e12, 1.06e12, 1.08e12, 1.10e12, 1.20e12),
) -> list[dict]:
    """Why the MAX's DWPD comes out low: the 7450 PRO preset at other NAND capacities, rated 1
    DWPD at 960 GB under the JESD219 enterprise workload, and the DWPD the same P/E gives at
    800 GB (the spare alone: DWPD ratio = WAF at 960 GB / WAF at 800 GB x 960 / 800)."""
    cfg = presets.get("micron-7450-pro-960gb")["settings"]
    rows = []
    for physical in (*physicals, None):
        pro, mx, dwpd = _same_pe(_with_nand(cfg, physical), 960 * 10**9, 800 * 10**9)
        rows.append(
            {
                "physical": physical,
                "seen_pro": pro.seen_by_gc,
                "seen_max": mx.seen_by_gc,
                "waf_pro": pro.waf,
                "waf_max": mx.waf,
                "dwpd_max": dwpd,
            }
        )
    return rows


def _with_nand(cfg: dict, physical: float | None) -> dict:
    """``cfg`` with ``physical`` bytes of NAND behind it (None: as it is)."""
    return cfg if physical is None else cfg | {"drive": cfg["drive"] | {"physical_capacity": int(physical)}}


def _same_pe(cfg: dict, native: int, user: int):
    """The JESD219 enterprise WAFs of the drive ``cfg`` at ``native`` and at ``user`` bytes, and
    the drive writes per day the same P/E gives at ``user`` per one rated at ``native``: the WAF
    at native over the WAF at ``user``, times native / user (the spare alone)."""
    a, b = (endurance.enterprise_waf(cfg, u) for u in (native, user))
    return a, b, a.waf / b.waf * native / user


def _sibling_row(name: str, cfg: dict, physical: int, native: int, sibling: int, rated: float, nand: str) -> dict:
    """The DWPD the same P/E gives at ``sibling`` bytes on the drive ``cfg`` rated ``rated``
    DWPD at ``native`` (:func:`_same_pe`)."""
    a, b, per_rated = _same_pe(cfg, native, sibling)
    return {
        "preset": name,
        "nand": nand,
        "physical": physical,
        "native": native,
        "sibling": sibling,
        "seen": (a.seen_by_gc, b.seen_by_gc),
        "waf": (a.waf, b.waf),
        "dwpd": rated * per_rated,
    }


def nand_for_waf(name: str, waf: float) -> int:
    """The NAND (physical bytes) at which the preset ``name``'s steady WAF of 4 KiB uniform
    random writes over its whole native capacity is ``waf``: its WAF curve (calibrate's) at
    the OP garbage collection sees, solved for the NAND with scipy's brentq."""
    cfg = presets.settings(name)
    native = presets.user_bytes(name)
    timing = cfg.get("timing", {})
    cv = curve(cfg["drive"], cfg.get("ftl", {}), 4096, timing.get("cell"), timing=timing)

    def gap(physical: float) -> float:
        seen = float(describe(_with_nand(cfg, physical), model_limits=False, users=[native])["levels"][0]["seen_by_gc"])
        return cv.at(seen)[0] - waf

    return int(brentq(gap, native * 1.05, native * 1.6, xtol=1e6))


def siblings(share: float = 5 / 6) -> list[dict]:
    """Every data-center preset rated 1 DWPD, at ``share`` of its native capacity (the 3 DWPD
    sibling of a read-intensive drive: the 7450 MAX's 800 GB of the PRO's 960 GB): the DWPD
    the same P/E gives there under the JESD219 enterprise workload, from the preset as it
    stands; and the D7-P5520 once more with its NAND set by its measured whole-drive WAF (the
    real-drives suite's ``waf-whole``), where a measurement, not a datasheet, pins the spare."""

    def row(name: str, physical: int | None, nand: str) -> dict:
        cfg, native = _with_nand(presets.settings(name), physical), presets.user_bytes(name)
        sibling = int(native * share) // 10**9 * 10**9
        given = presets.physical_bytes(name) if physical is None else physical
        return _sibling_row(name, cfg, given, native, sibling, _inputs(name)[0].dwpd, nand)

    rated_1 = [n for n in sorted(f.stem for f in INPUTS.glob("*.toml")) if _is_read_intensive(_inputs(n)[0])]
    rows = [row(name, None, "the preset's") for name in rated_1]
    case = next(c for c in load() if c.id == "solidigm-d7-p5520-1920gb")
    measured = case.figures["waf-whole"].value
    rows.append(row(case.input, nand_for_waf(case.input, measured), f"its 4 KiB uniform WAF, {measured:g}"))
    return rows


def _is_read_intensive(spec) -> bool:
    """A data-center (NVMe) drive rated 1 DWPD."""
    return spec.dwpd == 1 and spec.interface == "nvme"


def siblings_markdown(rows: list[dict]) -> str:
    return markdown_table(
        ["preset (1 DWPD)", "NAND", "user capacity", "OP seen by GC", "WAF JESD219", "DWPD from its 1"],
        "llrrrr",
        (
            [
                r["preset"],
                f"{r['physical'] / 1e12:.3f} TB ({r['nand']})",
                f"{r['native'] / 1e9:,.0f} / {r['sibling'] / 1e9:,.0f} GB",
                f"{r['seen'][0]:.1%} / {r['seen'][1]:.1%}",
                f"{r['waf'][0]:.2f} / {r['waf'][1]:.2f}",
                f"{r['dwpd']:.2f}",
            ]
            for r in rows
        ),
    )


def held_out() -> list[dict]:
    return micron_1100() + intel_320() + x400() + micron_7450()


def markdown(rows: list[dict]) -> str:
    return markdown_table(
        ["drive", "calibrated from", "predicted", "model", "published", "error", "within"],
        "lllrrrr",
        (
            [
                r["drive"],
                r["calibrated from"],
                r["predicted"],
                f"{r['model']:.3g}",
                f"{r['published']:.3g}",
                f"{r['error']:+.1%}",
                "reported" if r["tolerance"] is None else f"{r['tolerance']:.0%}" + ("" if r["pass"] else " (fails)"),
            ]
            for r in rows
        ),
    )


def nand_markdown(rows: list[dict]) -> str:
    return markdown_table(
        ["NAND", "OP seen by GC, PRO / MAX", "WAF JESD219, PRO / MAX", "MAX DWPD from the PRO's 1"],
        "lrrr",
        (
            [
                "the preset's" if r["physical"] is None else f"{r['physical'] / 1e12:.2f} TB",
                f"{r['seen_pro']:.1%} / {r['seen_max']:.1%}",
                f"{r['waf_pro']:.2f} / {r['waf_max']:.2f}",
                f"{r['dwpd_max']:.2f}",
            ]
            for r in rows
        ),
    )


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--siblings" in argv:  # docs/calibrate.md, "The endurance prediction"
        print(siblings_markdown(siblings()))
        return 0
    if "--nand" in argv:  # the table in docs/calibrate.md, "The endurance prediction"
        print(nand_markdown(micron_7450_nand()))
        return 0
    print(markdown(held_out()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
