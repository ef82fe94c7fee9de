//! The unit garbage collection collects and erases (`ftl.gc_unit`), resolved in one place
//! for `Simulator::new`, `describe` and the timed model: the FTL block of
//! `drive.pages_per_block` mapping units, or a superblock, one NAND block on each plane of
//! each die of a stripe: `timing.nand_block_size / drive.page_size x timing.planes x
//! superblock_dies` mapping units (`/ ftl.superblock_scale` in a scale model).

use crate::config::gc::GcUnitKind;
use crate::config::Config;
use crate::error::{Error, Result};
use crate::geometry::{Capacities, GcUnit, MAX_PAGES};

/// The most mapping units in one superblock (u32 page numbers; a 4 GiB unit of 4 KiB pages).
pub const MAX_SUPERBLOCK_PAGES: u64 = 1 << 20;

/// `caps` (the `[drive]` table's capacities, cut into FTL blocks of `drive.pages_per_block`)
/// with the GC unit of `cfg`: unchanged for `gc_unit = "block"`, the superblock's pages else.
pub(crate) fn apply(cfg: &Config, mut caps: Capacities) -> Result<Capacities> {
    if let Some(u) = superblock(cfg, caps.page_size)? {
        caps.pages_per_block = u.pages;
        caps.unit = u;
    }
    Ok(caps)
}

/// The superblock of `cfg` with mapping units of `page` bytes, checked; None with
/// `gc_unit = "block"` (where `superblock_dies` and `superblock_scale` are refused).
pub(crate) fn superblock(cfg: &Config, page: u64) -> Result<Option<GcUnit>> {
    let f = &cfg.ftl;
    if f.gc_unit == GcUnitKind::Block {
        for (key, given) in [("ftl.superblock_dies", f.superblock_dies), ("ftl.superblock_scale", f.superblock_scale)] {
            if given.is_some() {
                return Err(Error::config(key, "is only used with ftl.gc_unit = \"superblock\""));
            }
        }
        return Ok(None);
    }
    let key = "ftl.gc_unit";
    if let Some(r) = f.gc_reserve.filter(|r| r.per != crate::config::gc::GcScope::Drive) {
        return Err(Error::config(
            "ftl.gc_reserve",
            format!(
                "\"{} blocks per {}\" cannot be combined with ftl.gc_unit = \"superblock\" (a superblock spans \
                 the dies and planes); give the reserve in superblocks per drive",
                r.blocks,
                r.per.name()
            ),
        ));
    }
    if cfg.drive.pages_per_block.is_some() {
        return Err(Error::config(
            "drive.pages_per_block",
            "cannot be given with ftl.gc_unit = \"superblock\": the superblock (timing.nand_block_size x planes x dies) \
             sets the FTL's unit",
        ));
    }
    let t = cfg.timing.as_ref().ok_or_else(|| {
        Error::config(
            key,
            "\"superblock\" needs a [timing] table (nand_block_size, planes, channels, dies_per_channel)",
        )
    })?;
    let dies = t.channels as u64 * t.dies_per_channel as u64;
    let stripe = match f.superblock_dies {
        None => dies,
        Some(n) if n >= 1 && n as u64 <= dies => n as u64,
        Some(n) => {
            return Err(Error::config(
                "ftl.superblock_dies",
                format!("{n} is out of range; expected 1..={dies} (timing.channels x timing.dies_per_channel)"),
            ))
        }
    };
    let nand_block = t.nand_block_size.0;
    if nand_block == 0 || nand_block % page != 0 {
        return Err(Error::config(
            "timing.nand_block_size",
            format!("{nand_block} bytes is not a whole number of drive.page_size ({page} bytes) mapping units"),
        ));
    }
    let full = nand_block / page * t.planes as u64 * stripe;
    let scale = f.superblock_scale.unwrap_or(1) as u64;
    if scale == 0 || full % scale != 0 || full / scale < 2 {
        return Err(Error::config(
            "ftl.superblock_scale",
            format!("{scale} does not divide the superblock's {full} mapping units into a unit of 2 or more"),
        ));
    }
    let pages = full / scale;
    if pages > MAX_SUPERBLOCK_PAGES.min(MAX_PAGES) {
        return Err(Error::config(
            key,
            format!(
                "a superblock of {pages} mapping units ({} x {} planes x {stripe} dies) is more than the \
                 {MAX_SUPERBLOCK_PAGES} the model holds; use a larger drive.page_size, fewer ftl.superblock_dies \
                 or a scale model (ftl.superblock_scale)",
                crate::units::format_size(nand_block),
                t.planes
            ),
        ));
    }
    let mut u = GcUnit::block(pages as u32, page);
    u.kind = GcUnitKind::Superblock;
    (u.dies, u.planes, u.nand_blocks) = (Some(stripe as u32), Some(t.planes), Some((stripe * t.planes as u64) as u32));
    u.scale = scale as u32;
    Ok(Some(u))
}

#[cfg(test)]
mod tests {
    use crate::config::gc::GcUnitKind;
    use crate::config::Config;
    use crate::describe::describe;

    fn unit(toml: &str) -> crate::Result<crate::geometry::GcUnit> {
        Ok(describe(Config::from_toml_str(toml)?, false)?.drive.gc_unit)
    }
    const SB: &str = "[drive]\nuser_capacity = \"64GiB\"\nop = 0.1\n[ftl]\ngc_unit = \"superblock\"\n";
    const T: &str = "[timing]\nnand_block_size = \"12MiB\"\nplanes = 2\nchannels = 8\ndies_per_channel = 2\n";

    #[test]
    fn a_superblock_is_nand_block_x_planes_x_dies() {
        let u = unit(&format!("{SB}{T}")).unwrap();
        assert_eq!(
            (u.kind, u.pages, u.dies, u.planes, u.nand_blocks),
            (GcUnitKind::Superblock, 98_304, Some(16), Some(2), Some(32))
        );
        assert_eq!(u.bytes, 384 << 20);
        assert_eq!((u.open_host, u.open_gc, u.scale), (1, 1, 1));
        let u = unit(&format!("{SB}superblock_dies = 4\nstreams = 3\n{T}")).unwrap();
        assert_eq!((u.pages, u.dies, u.open_host), (24_576, Some(4), 3));
        let u = unit(&format!("{SB}superblock_scale = 64\n{T}")).unwrap();
        assert_eq!((u.pages, u.scale), (1_536, 64));
        // the [timing] defaults: 8 MiB blocks, 2 planes, 8 x 2 dies
        assert_eq!(unit(&format!("{SB}[timing]\n")).unwrap().pages, 2048 * 2 * 16);
        // the old unit by default, with the block's pages
        let u = unit("[drive]\nuser_capacity = \"1GiB\"\nop = 0.1\npages_per_block = 64\n").unwrap();
        assert_eq!((u.kind, u.pages, u.bytes, u.dies), (GcUnitKind::Block, 64, 64 * 4096, None));
    }

    #[test]
    fn whole_superblocks_are_kept() {
        let d = describe(Config::from_toml_str(&format!("{SB}{T}")).unwrap(), false).unwrap();
        let phys = (64u64 << 30) as f64 * 1.1;
        assert_eq!(d.drive.blocks as u64, (phys / (384u64 << 20) as f64).floor() as u64);
    }

    #[test]
    fn a_million_page_superblock_is_modelled() {
        // 16 MiB blocks x 4 planes x 64 dies of 4 KiB: 1,048,576 pages (4 GiB) per superblock
        let t = "[timing]\nnand_block_size = \"16MiB\"\nplanes = 4\nchannels = 16\ndies_per_channel = 4\n";
        let cfg = format!("[drive]\nuser_capacity = \"256GiB\"\nop = 0.25\n[ftl]\ngc_unit = \"superblock\"\n{t}");
        let u = unit(&cfg).unwrap();
        assert_eq!(u.pages, 1 << 20);
        let e = unit(&cfg.replace("16MiB", "32MiB")).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("ftl.gc_unit"), "{e}");
    }

    #[test]
    fn refusals_name_the_key() {
        let cases = [
            (SB.to_string(), "ftl.gc_unit"),
            (format!("{SB}{T}").replace("op = 0.1\n", "op = 0.1\npages_per_block = 256\n"), "drive.pages_per_block"),
            (format!("{SB}superblock_dies = 0\n{T}"), "ftl.superblock_dies"),
            (format!("{SB}superblock_dies = 17\n{T}"), "ftl.superblock_dies"),
            (format!("{SB}superblock_scale = 0\n{T}"), "ftl.superblock_scale"),
            (format!("{SB}superblock_scale = 7\n{T}"), "ftl.superblock_scale"),
            (format!("{SB}gc_reserve = \"2 blocks per die\"\n{T}"), "ftl.gc_reserve"),
            ("[drive]\nuser_capacity = \"1GiB\"\nop = 0.1\n[ftl]\nsuperblock_dies = 2\n".into(), "ftl.superblock_dies"),
            (
                "[drive]\nuser_capacity = \"1GiB\"\nop = 0.1\n[ftl]\nsuperblock_scale = 2\n".into(),
                "ftl.superblock_scale",
            ),
            ("[drive]\nuser_capacity = \"1GiB\"\nop = 0.1\n[ftl]\ngc_unit = \"stripe\"\n".into(), "ftl.gc_unit"),
        ];
        for (toml, key) in cases {
            let e = unit(&toml).unwrap_err();
            assert_eq!(e.key.as_deref(), Some(key), "{toml}: {e}");
        }
    }
}
