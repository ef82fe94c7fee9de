//! The dynamic SLC cache (`[ftl.slc_cache]`) in the functional FTL: where host writes go,
//! how the cache shrinks as the drive fills and grows back with TRIM, what folding costs
//! in NAND writes, and the config errors.  Every run checks the FTL invariants after every
//! GC and every fold.

use opsim_core::{ErrorKind, Simulator};

/// 64 MiB user, OP 28%, 64 pages per block (TLC: an SLC-mode block holds 21 pages).
fn sim(slc: &str) -> Simulator {
    Simulator::from_toml(&format!(
        r#"
        [drive]
        user_capacity = "64MiB"
        op = 0.28
        pages_per_block = 64
        [ftl]
        check_invariants = true
        [ftl.slc_cache]
        {slc}
        [run]
        precondition = "none"
        track_data = true
        "#
    ))
    .unwrap()
}

fn pages(s: &Simulator) -> u64 {
    s.geometry().user_pages
}

/// Write user page `lpn` (4 KiB).
fn w(s: &mut Simulator, lpn: u64) {
    s.write(lpn * 8, 8, 0).unwrap();
}

#[test]
fn fresh_drive_writes_in_slc_mode_without_folding() {
    let mut s = sim("");
    let total = pages(&s);
    let n = total / 10;
    for i in 0..n {
        w(&mut s, (i * 7919) % total);
    }
    let c = s.counters();
    assert_eq!(c.fold_pages, 0);
    assert_eq!(c.nand_write_pages, c.host_write_pages, "WAF 1 while the cache has room");
    let (blocks, closed, limit) = s.slc_cache();
    assert_eq!(blocks as u64, n.div_ceil(64 / 3), "every host page in an SLC block of 21 pages");
    assert_eq!(closed + 1, blocks);
    assert!(limit > blocks, "the cache still has room");
    s.check().unwrap();
}

#[test]
fn the_cache_shrinks_as_the_drive_fills_and_folds_cost_nand_writes() {
    let mut s = sim("");
    let total = pages(&s);
    // a sequential fill: the cache fills (a quarter of the drive: 3 blocks of NAND per
    // block of data), then folds to make room, shrinking as the free user space goes
    for lpn in 0..total {
        w(&mut s, lpn);
    }
    let c = s.counters();
    let (blocks, _, limit) = s.slc_cache();
    assert_eq!(limit, 0, "a full drive with no static part has no cache");
    assert!(blocks <= 1, "only the open SLC block can remain: {blocks}");
    // every page went through SLC and all but the last block were folded
    assert_eq!(c.nand_write_pages, c.host_write_pages + c.fold_pages + c.gc_copy_pages);
    assert!(c.fold_pages as f64 > 0.95 * total as f64, "folded {} of {total}", c.fold_pages);
    assert!(c.folds >= c.fold_pages / 21);
    // host writes on a full drive without a static part go straight to TLC
    let before = s.counters();
    for i in 0..total / 2 {
        w(&mut s, (i * 104729) % total);
    }
    let d = s.counters();
    assert_eq!(d.fold_pages - before.fold_pages, 0, "no SLC on a full drive without a static part");
    // TRIM of a quarter of the LBAs frees user space: the cache grows back
    s.trim(0, total / 4 * 8).unwrap();
    let (_, _, limit) = s.slc_cache();
    assert_eq!(limit as u64, (total / 4) / 64, "free user capacity in whole blocks");
    s.check().unwrap();
}

#[test]
fn a_static_part_keeps_every_host_write_in_slc_on_a_full_drive() {
    let mut s = sim("min_fraction = 0.03");
    let total = pages(&s);
    for lpn in 0..total {
        w(&mut s, lpn);
    }
    let (_, _, limit) = s.slc_cache();
    let blocks = s.geometry().blocks;
    assert_eq!(limit, (0.03 * blocks as f64).floor() as u32);
    let before = s.counters();
    let mut x = 12345u64;
    for _ in 0..3 * total {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w(&mut s, x % total);
    }
    let d = s.counters().minus(&before);
    // every host write lands in SLC and nearly all are folded (a page overwritten while
    // still in the small cache is not)
    let folded = d.fold_pages as f64 / d.host_write_pages as f64;
    assert!(folded > 0.9 && folded <= 1.0, "folded per host write {folded}");
    assert_eq!(d.nand_write_pages, d.host_write_pages + d.fold_pages + d.gc_copy_pages);
    assert!(s.slc_cache().0 <= limit);
    // no data lost
    for lpn in (0..total).step_by(97) {
        assert!(s.read_token(lpn * 8).unwrap().is_some());
    }
}

#[test]
fn direct_mode_writes_tlc_when_the_cache_is_full() {
    let mut s = sim("min_fraction = 0.03\nwhen_full = \"direct\"\nmax_fraction = 0.05");
    let total = pages(&s);
    let mut x = 99u64;
    for _ in 0..4 * total {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w(&mut s, x % total);
    }
    let c = s.counters();
    // the cache filled once and then only the excess over the shrinking limit was folded
    let blocks = s.geometry().blocks as u64;
    assert!(c.folds <= (0.05 * blocks as f64) as u64, "folds {}", c.folds);
    assert!((c.fold_pages as f64) < 0.05 * c.host_write_pages as f64);
    s.check().unwrap();
}

#[test]
fn capacity_above_a_lowered_max_address_is_not_cache() {
    // the seeds' procedure: purge, then SET MAX ADDRESS to 80% of the native capacity
    let mut s = sim("");
    let total = pages(&s);
    s.security_erase();
    let keep = total * 8 / 10;
    s.set_max_address(keep * 8, false).unwrap();
    for lpn in 0..keep {
        w(&mut s, lpn);
    }
    assert_eq!(s.slc_cache().2, 0, "the accessible capacity is full: no dynamic cache");
    // the held-back LBAs stay spare area for GC: steady random writes fold nothing
    let before = s.counters();
    for i in 0..keep {
        w(&mut s, (i * 7919) % keep);
    }
    assert_eq!(s.counters().fold_pages, before.fold_pages);
    // restored (a power cycle after a volatile SET MAX), the capacity is free user capacity again
    let mut v = sim("");
    v.set_max_address(keep * 8, true).unwrap();
    for lpn in 0..keep {
        w(&mut v, lpn);
    }
    assert_eq!(v.slc_cache().2, 0);
    v.power_cycle();
    assert_eq!(v.slc_cache().2 as u64, (total - keep) / 64);
}

#[test]
fn purge_empties_the_cache() {
    let mut s = sim("min_fraction = 0.03");
    for lpn in 0..pages(&s) {
        w(&mut s, lpn);
    }
    s.security_erase();
    assert_eq!(s.slc_cache().0, 0);
    assert_eq!(s.mapped_pages(), 0);
    s.check().unwrap();
    w(&mut s, 5);
    assert_eq!(s.slc_cache().0, 1);
}

#[test]
fn cache_off_is_the_default_and_changes_nothing() {
    let cfg = |slc: &str| {
        format!(
            "[drive]\nuser_capacity = \"64MiB\"\nop = 0.07\npages_per_block = 64\n{slc}\n[run]\nwarmup_drive_writes = 1\nmeasure_drive_writes = 1\n"
        )
    };
    let a = Simulator::from_toml(&cfg("")).unwrap().run().unwrap();
    let b = Simulator::from_toml(&cfg("")).unwrap().run().unwrap();
    assert_eq!(a.counters, b.counters);
    assert_eq!(a.counters.fold_pages, 0);
    let j = serde_json::to_value(&a.counters).unwrap();
    assert!(j.get("fold_pages").is_none(), "no new keys in results without a cache");
    let c = Simulator::from_toml(&cfg("[ftl.slc_cache]\nmin_fraction = 0.01")).unwrap().run().unwrap();
    assert!(c.waf > a.waf + 0.9, "folding adds about one NAND write per host write: {} vs {}", c.waf, a.waf);
    // same seed, same result
    let d = Simulator::from_toml(&cfg("[ftl.slc_cache]\nmin_fraction = 0.01")).unwrap().run().unwrap();
    assert_eq!(c.counters, d.counters);
}

#[test]
fn config_errors_name_the_key() {
    let err = |slc: &str, timing: &str| {
        let t = format!(
            "[drive]\nuser_capacity = \"64MiB\"\nop = 0.07\npages_per_block = 64\n[ftl.slc_cache]\n{slc}\n{timing}"
        );
        let e = Simulator::from_toml(&t).err().expect("an error");
        assert_eq!(e.kind, ErrorKind::Config, "{e}");
        e.key.unwrap_or_default()
    };
    assert_eq!(err("min_fraction = 0.5\nmax_fraction = 0.2", ""), "ftl.slc_cache.min_fraction");
    assert_eq!(err("min_fraction = 0.2", ""), "ftl.slc_cache.min_fraction"); // more than half the spare
    assert_eq!(err("max_fraction = 0", ""), "ftl.slc_cache.max_fraction");
    assert_eq!(err("bits_per_cell = 3", "[timing]\ncell = \"mlc\""), "ftl.slc_cache.bits_per_cell");
    assert_eq!(err("bits_per_cell = 7", ""), "ftl.slc_cache.bits_per_cell");
    assert_eq!(err("", "[timing]\ncell = \"slc\""), "ftl.slc_cache");
    assert_eq!(err("idle_ms = -1", ""), "ftl.slc_cache.idle_ms");
    assert_eq!(err("size = 3", ""), "ftl.slc_cache.size");
    // a preset's cache turned off: its SLC-mode times are ignored, its other keys unchecked
    let off = Simulator::from_toml(
        "[drive]\nuser_capacity = \"64MiB\"\nop = 0.07\npages_per_block = 64\n[ftl.slc_cache]\nenabled = false\nmin_fraction = 0.9\n[timing]\nt_prog_slc_us = 200\n",
    );
    assert_eq!(off.unwrap().slc_cache(), (0, 0, 0));
}
