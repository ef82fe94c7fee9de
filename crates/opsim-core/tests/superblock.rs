//! Garbage collection in superblocks (`ftl.gc_unit = "superblock"`): random host commands
//! keep every FTL invariant (checked after every collection) and lose no data with small
//! superblocks, and the FTL runs and checks clean with superblocks of 98,304 and of 2^20
//! pages (a unit sized by the stripe, not by `drive.pages_per_block`).

use opsim_core::Simulator;
use proptest::prelude::*;
use std::collections::HashMap;

/// A drive of 4 KiB pages whose superblock is `nand_block` x `planes` x `dies`
/// (`channels` x 1 die each), scaled down by `scale`.
fn sim(user: &str, phys: &str, t: (&str, u32, u32), scale: u32, check: bool) -> Simulator {
    sim_streams(user, phys, t, scale, check, 2)
}

fn sim_streams(user: &str, phys: &str, t: (&str, u32, u32), scale: u32, check: bool, streams: u32) -> Simulator {
    let (nand_block, planes, dies) = t;
    Simulator::from_toml(&format!(
        r#"
        [drive]
        user_capacity = "{user}"
        physical_capacity = "{phys}"
        [ftl]
        gc_unit = "superblock"
        superblock_scale = {scale}
        streams = {streams}
        check_invariants = {check}
        [run]
        track_data = {check}
        precondition = "none"
        [timing]
        nand_block_size = "{nand_block}"
        nand_page_size = "16KiB"
        planes = {planes}
        channels = {dies}
        dies_per_channel = 1
        "#
    ))
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn small_superblocks_keep_invariants(
        cmds in prop::collection::vec((0u64..4096, 1u64..64, 0u32..10), 1..400),
        scale in prop::sample::select(vec![1u32, 2, 4]),
    ) {
        // superblocks of 64 KiB x 2 planes x 2 dies = 64 pages (/ scale), 4 MiB of NAND
        let mut s = sim("2MiB", "4MiB", ("64KiB", 2, 2), scale, true);
        prop_assert_eq!(s.geometry().pages_per_block, 64 / scale);
        let spp = s.geometry().sectors_per_page();
        let total = s.max_address_sectors();
        let mut shadow: HashMap<u64, u64> = HashMap::new();
        for (i, (lba, n, op)) in cmds.into_iter().enumerate() {
            let lba = lba % total;
            let n = n.min(total - lba);
            if op == 0 {
                s.trim(lba, n).map_err(|e| TestCaseError::fail(e.to_string()))?;
                for lpn in lba.div_ceil(spp)..(lba + n) / spp {
                    shadow.remove(&lpn);
                }
            } else {
                s.write(lba, n, op % 2).map_err(|e| TestCaseError::fail(e.to_string()))?;
                for lpn in lba / spp..=(lba + n - 1) / spp {
                    shadow.insert(lpn, i as u64 + 1);
                }
            }
        }
        s.check().map_err(|e| TestCaseError::fail(e.to_string()))?;
        for lpn in 0..total / spp {
            let got = s.read_token(lpn * spp).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(got.is_some(), shadow.contains_key(&lpn), "page {}", lpn);
        }
        prop_assert_eq!(s.mapped_pages(), shadow.len() as u64);
    }
}

/// Uniform random 4 KiB writes, `n` of them, through garbage collection.
fn random_writes(s: &mut Simulator, n: u64) {
    let pages = s.max_address_sectors() / s.geometry().sectors_per_page();
    let spp = s.geometry().sectors_per_page();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.write((x % pages) * spp, spp, 0).unwrap();
    }
}

#[test]
fn superblocks_of_98304_pages_collect_and_check_clean() {
    // the 7450 PRO's stripe: 12 MiB x 2 planes x 16 dies = 384 MiB; 16 of them, checked after
    // every collection
    let mut s = sim_streams("3GiB", "6GiB", ("12MiB", 2, 16), 1, true, 1);
    assert_eq!((s.geometry().pages_per_block, s.geometry().blocks), (98_304, 16));
    random_writes(&mut s, 3_000_000);
    let c = s.counters();
    assert!(c.erases >= 10 && c.gc_copy_pages > 0, "{} erases", c.erases);
    s.check().unwrap();
}

#[test]
fn superblocks_of_a_million_pages_collect_and_check_clean() {
    // 16 MiB x 4 planes x 64 dies = 2^20 pages (4 GiB) per superblock, 8 of them; filled
    // once, then written at random until GC has collected
    let mut s = sim_streams("12GiB", "32GiB", ("16MiB", 4, 64), 1, false, 1);
    assert_eq!((s.geometry().pages_per_block, s.geometry().blocks), (1 << 20, 8));
    let spp = s.geometry().sectors_per_page();
    for lpn in 0..s.max_address_sectors() / spp {
        s.write(lpn * spp, spp, 0).unwrap();
    }
    random_writes(&mut s, 6_000_000);
    let c = s.counters();
    assert!(c.gc_victims >= 2 && c.gc_copy_pages > 0, "{} victims", c.gc_victims);
    s.check().unwrap();
}
