//! The model's memory: the limit it must stay under (config, environment, the machine, the
//! process's own limits), the estimate for a drive, and the refusals that name what to change.

use crate::config::gc::GcLayout;
use crate::config::map_cache::{describe_memory, MapCacheParams};
use crate::config::placement::Resolved as Placement;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::geometry::Geometry;
use crate::memory::{available_memory, Limit};
use crate::units::{format_size, parse_size};

/// The advice of a refusal for memory: what makes the model smaller.
const SMALLER_MODEL: &str = "use a smaller user_capacity, a larger page_size (the mapping unit), or a scale model \
                             (a smaller drive with the same OP and workload: WAF depends on them, not on the size)";

/// Memory limit for the model: config, then `OPSIM_MEMORY_LIMIT`, then 90% of available;
/// and in any case what the process's own limits leave (`ulimit -v`, the cgroup's
/// memory.max), when that is less.
pub(crate) fn memory_limit(cfg: &Config) -> Result<Limit> {
    let set = |bytes, source: &str| Limit { bytes, source: source.into(), raise: "raise run.memory_limit" };
    let soft = if let Some(m) = cfg.run.memory_limit {
        set(m.0, "run.memory_limit")
    } else if let Ok(v) = std::env::var("OPSIM_MEMORY_LIMIT") {
        set(parse_size(&v).map_err(|e| Error::config("OPSIM_MEMORY_LIMIT", e))?, "OPSIM_MEMORY_LIMIT")
    } else {
        match available_memory() {
            Some(a) => Limit {
                bytes: a / 10 * 9,
                source: format!("90% of the available memory, MemAvailable {}", format_size(a)),
                raise: "free some memory or set run.memory_limit",
            },
            None => set(u64::MAX, "no limit known"),
        }
    };
    Ok(match crate::memory::process_limit() {
        Some(hard) if hard.bytes < soft.bytes => hard,
        _ => soft,
    })
}

/// The drive cut into blocks, and the memory limit (`model_limits`: the model's; else none).
/// A drive that cannot be cut into blocks (too many pages for 32-bit page numbers) and would
/// not fit in memory anyway is refused for its memory, with the numbers.
pub(super) fn geometry(cfg: &Config, gc: &GcLayout, model_limits: bool) -> Result<(Geometry, Limit)> {
    let caps = super::unit::apply(cfg, Geometry::capacities(&cfg.drive)?)?;
    let limit = if model_limits {
        memory_limit(cfg)?
    } else {
        Limit { bytes: u64::MAX, source: "no limit: a description only".into(), raise: "" }
    };
    let estimate = caps.memory_estimate(cfg.run.track_data);
    let geo = Geometry::from_capacities(caps, cfg.ftl.streams, gc, model_limits);
    if geo.is_err() && estimate > limit.bytes as f64 {
        return Err(Error::capacity(
            "drive.user_capacity",
            format!(
                "the model of this drive needs about {} of memory, more than the limit of {} ({}); {SMALLER_MODEL}; or {}",
                crate::memory::describe(estimate),
                format_size(limit.bytes),
                limit.source,
                limit.raise
            ),
        ));
    }
    Ok((geo?, limit))
}

/// The model's memory (FTL, placement, GC pools, mapping-table cache), refused above `limit`
/// with the key to change: the cache's when the FTL alone fits, else the drive's size.
pub(super) fn model_memory(
    cfg: &Config,
    geo: &Geometry,
    gc: &GcLayout,
    placement: Option<&Placement>,
    map_cache: Option<&MapCacheParams>,
    limit: &Limit,
) -> Result<u64> {
    let pl_memory =
        placement.map_or(0, |p| geo.user_pages * crate::ftl::placement::bytes_per_page(p.handles) + geo.blocks as u64);
    // each GC pool past the first keeps its own victim index heads (greedy: a bucket per
    // valid count) and free queue
    let groups_memory = (gc.groups as u64 - 1) * (geo.pages_per_block as u64 + 1 + 16) * 4;
    // temperature separation (`ftl.separation`) keeps each block's class (a byte) and with
    // host classes its opening time (8 bytes)
    let classes_memory = geo.blocks as u64
        * (u64::from(gc.classes > 1 || gc.host_classes > 1) + if gc.host_classes > 1 { 8 } else { 0 });
    let ftl_memory = geo.memory_estimate(cfg.run.track_data) + pl_memory + groups_memory + classes_memory;
    let memory = ftl_memory + map_cache.map_or(0, |m| m.model_memory_bytes);
    if memory <= limit.bytes {
        return Ok(memory);
    }
    let (key, part, advice) = match map_cache {
        Some(m) if ftl_memory <= limit.bytes => (
            "timing.map_cache",
            format!(" ({})", describe_memory(m)),
            "use a larger timing.map_cache.translation_page, a smaller size or fraction",
        ),
        Some(m) => ("drive.user_capacity", format!(" ({})", describe_memory(m)), SMALLER_MODEL),
        None => ("drive.user_capacity", String::new(), SMALLER_MODEL),
    };
    Err(Error::capacity(
        key,
        format!(
            "the model of this drive needs about {}{part} of memory, more than the limit of {} ({}); {advice}; or {}",
            format_size(memory),
            format_size(limit.bytes),
            limit.source,
            limit.raise
        ),
    ))
}
