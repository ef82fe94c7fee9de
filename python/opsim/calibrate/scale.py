"""The scale models calibration simulates: the core's rule (``describe(config, scale=k)``:
fewer FTL blocks, or as many superblocks each ``k`` times smaller), with ``k`` chosen here.

A drive whose GC unit is a superblock (``ftl.gc_unit = "superblock"``) keeps its superblocks,
so ``k`` must divide a superblock's pages; greedy's WAF depends little on the pages per unit
above a thousand (docs/config.md, "Scale models"), so a scaled unit keeps at least
``MIN_UNIT_PAGES``.
"""

from __future__ import annotations

from ..sim import describe

#: pages a scaled superblock keeps at least (about 1,500: within 0.15% of the full size on WAF)
MIN_UNIT_PAGES = 1536


def superblock_pages(cfg: dict) -> int | None:
    """Pages of the drive's superblock (its GC unit), None for a drive collecting FTL blocks."""
    unit = describe(cfg, model_limits=False)["drive"]["gc_unit"]
    return int(unit["pages"]) if unit["kind"] == "superblock" else None


def unit_scale(pages: int, most: int) -> int:
    """The largest ``k <= most`` that divides a superblock of ``pages`` into units of at least
    ``MIN_UNIT_PAGES`` (1 when none does: the superblock is that small already)."""
    top = min(most, pages // MIN_UNIT_PAGES)
    return next((k for k in range(top, 1, -1) if pages % k == 0), 1)


def scaled(cfg: dict, k: int, user_bytes: int | None = None) -> dict:
    """``cfg`` ``k`` times smaller by the core's rule (a superblock drive: ``k`` must divide its
    superblock), of a full-size drive of ``user_bytes`` user bytes (default its own)."""
    s = describe(cfg, model_limits=False, scale=k, scale_user=user_bytes)["scaled"]
    model = {**cfg, "drive": dict(cfg["drive"]), "ftl": dict(cfg.get("ftl", {}))}
    model["drive"] |= {"user_capacity": s["user_capacity"], "physical_capacity": s["physical_capacity"]}
    if s["superblock_scale"] is not None:
        model["ftl"]["superblock_scale"] = s["superblock_scale"]
    return model
