//! `[ftl.slc_cache]` resolved against the drive: the cache's limits in blocks and the bits
//! per cell of its native mode, checked against the timing's cell and the spare area.

use crate::config::timing::Cell;
use crate::config::{check_fraction, Config, SlcCacheConfig, WhenFull};
use crate::error::{Error, Result};
use crate::ftl::SlcParams;
use crate::geometry::Geometry;

/// The SLC cache's limits in blocks, checked against the drive.
/// `reserve`: the free-block reserve, blocks.
pub(super) fn slc_params(c: &SlcCacheConfig, cfg: &Config, geo: &Geometry, reserve: u32) -> Result<SlcParams> {
    let key = "ftl.slc_cache";
    let max = check_fraction(&format!("{key}.max_fraction"), c.max_fraction.0, 0.0, 1.0, false, true)?;
    let min = check_fraction(&format!("{key}.min_fraction"), c.min_fraction.0, 0.0, 1.0, true, true)?;
    if min > max {
        return Err(Error::config(&format!("{key}.min_fraction"), format!("{min} is above max_fraction {max}")));
    }
    let cell_bits = cfg.timing.as_ref().map(|t| t.cell.bits());
    let bits = match (c.bits_per_cell, cell_bits) {
        (Some(b), _) if !(2..=4).contains(&b) => {
            return Err(Error::config(
                &format!("{key}.bits_per_cell"),
                format!("{b} is out of range 2..=4 (MLC, TLC, QLC)"),
            ));
        }
        (Some(b), Some(cb)) if b != cb => {
            return Err(Error::config(
                &format!("{key}.bits_per_cell"),
                format!("{b} disagrees with timing.cell ({cb} bits per cell)"),
            ));
        }
        (Some(b), _) => b,
        (None, Some(1)) => {
            return Err(Error::config(key, "an SLC cache needs multi-level cells (timing.cell is \"slc\")"));
        }
        (None, Some(cb)) => cb,
        (None, None) => Cell::Tlc.bits(),
    };
    if geo.pages_per_block < bits {
        return Err(Error::config(
            "drive.pages_per_block",
            format!("{} is fewer than the {bits} pages an SLC-mode block needs", geo.pages_per_block),
        ));
    }
    if !(c.idle_ms.is_finite() && c.idle_ms >= 0.0) {
        return Err(Error::config(&format!("{key}.idle_ms"), format!("{} must be >= 0", c.idle_ms)));
    }
    let blocks = geo.blocks as f64;
    let max_blocks = (max * blocks).floor() as u32;
    let min_blocks = (min * blocks).floor() as u32;
    // the static part comes out of the spare area: leave GC at least half of it
    let spare = geo.blocks as i64 - geo.user_pages.div_ceil(geo.pages_per_block as u64) as i64 - reserve as i64;
    if min_blocks as i64 > spare / 2 {
        return Err(Error::config(
            &format!("{key}.min_fraction"),
            format!(
                "{min}: a static SLC part of {min_blocks} blocks takes more than half of the {} blocks of spare area",
                spare.max(0)
            ),
        ));
    }
    Ok(SlcParams {
        max_blocks: max_blocks.max(min_blocks),
        min_blocks,
        bits,
        fold_when_full: c.when_full == WhenFull::Fold,
    })
}
