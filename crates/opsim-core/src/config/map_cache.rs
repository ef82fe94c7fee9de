//! `[timing.map_cache]` resolved against the drive: the mapping-table cache's sizes
//! (translation pages, cached pages, DRAM) and the memory its model takes.  The cache's
//! model is in the timed model (`timed::mapcache`).

use super::timing::MapCacheConfig;
use crate::error::{Error, Result};
use crate::units::format_size;
use serde::Serialize;

/// Bytes of one L2P entry (a physical page number).
pub const ENTRY_BYTES: u64 = 4;

/// The cache resolved against the drive.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MapCacheParams {
    pub translation_page_bytes: u64,
    /// L2P entries (mapping units) per translation page.
    pub entries_per_page: u64,
    /// Mapping units a translation page occupies in NAND (its transfer and program cost).
    pub units_per_page: u64,
    /// Translation pages of the full table (user pages / entries per page, rounded up).
    pub translation_pages: u64,
    /// Translation pages the cache holds.
    pub cached_pages: u64,
    /// DRAM the cached pages take, and the full table's size.
    pub cache_bytes: u64,
    pub table_bytes: u64,
    /// Memory the model of the cache allocates (in `drive.model_memory_bytes`).
    pub model_memory_bytes: u64,
}

impl MapCacheConfig {
    /// Check the keys and size the cache for a drive of `lpns` mapping units of `page_size`
    /// bytes whose NAND pages are `nand_page` bytes; `None` when the cache is off.
    pub fn resolve(&self, page_size: u64, lpns: u64, nand_page: u64) -> Result<Option<MapCacheParams>> {
        const K: &str = "timing.map_cache";
        if !self.enabled {
            return Ok(None); // (a preset's cache turned off: its other keys are not used)
        }
        let tp = self.translation_page.map_or(page_size, |b| b.0);
        if tp == 0 || tp % page_size != 0 || tp > nand_page.max(page_size) {
            return Err(Error::config(
                &format!("{K}.translation_page"),
                format!(
                    "{tp} bytes: a translation page is a whole number of mapping units (drive.page_size = {page_size}) \
                     up to one NAND page (timing.nand_page_size = {nand_page}), read with one tR"
                ),
            ));
        }
        let entries = tp / ENTRY_BYTES;
        let pages = lpns.div_ceil(entries).max(1);
        let cached = match (self.size, self.fraction) {
            (Some(_), Some(_)) => {
                return Err(Error::config(&format!("{K}.fraction"), "give size or fraction, not both"))
            }
            (None, None) => return Err(Error::config(
                &format!("{K}.size"),
                "the cache needs its size: size (bytes of DRAM for translation pages) or fraction (of the full table)",
            )),
            (Some(s), None) => {
                let n = s.0 / tp;
                if n == 0 {
                    return Err(Error::config(
                        &format!("{K}.size"),
                        format!("{} holds no translation page of {tp} bytes; give at least {tp} bytes", s.0),
                    ));
                }
                n.min(pages)
            }
            (None, Some(f)) => {
                let f = crate::config::check_fraction(&format!("{K}.fraction"), f.0, 0.0, 1.0, false, true)?;
                ((f * pages as f64).ceil() as u64).clamp(1, pages)
            }
        };
        if pages >= u32::MAX as u64 {
            return Err(Error::config(
                &format!("{K}.translation_page"),
                format!("{pages} translation pages are too many; use larger ones"),
            ));
        }
        Ok(Some(MapCacheParams {
            translation_page_bytes: tp,
            entries_per_page: entries,
            units_per_page: tp / page_size,
            translation_pages: pages,
            cached_pages: cached,
            cache_bytes: cached * tp,
            table_bytes: pages * tp,
            model_memory_bytes: memory_estimate(pages, cached),
        }))
    }
}

/// Bytes the model allocates: the index (4 bytes per translation page) and per slot its
/// page, LRU links and dirty flag.
pub fn memory_estimate(pages: u64, cached: u64) -> u64 {
    pages * 4 + cached * (4 + 4 + 4 + 1)
}

/// The model's memory for an error message.
pub fn describe_memory(p: &MapCacheParams) -> String {
    format!("of which {} for the mapping-table cache model", format_size(p.model_memory_bytes))
}
