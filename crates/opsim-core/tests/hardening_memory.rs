//! Issue 12 item 9: running out of memory is a capacity error, never an abort; the memory a
//! drive needs is told before anything is allocated, whatever its size.

use opsim_core::ftl::{Ftl, FtlParams, Greedy};
use opsim_core::{ErrorKind, Simulator};

#[test]
fn an_ftl_too_large_to_allocate_is_a_capacity_error() {
    // 65536 blocks of 2^32 - 1 pages: a physical-to-logical map of about 1 PiB
    let params = FtlParams {
        blocks: 65536,
        pages_per_block: u32::MAX,
        lpns: 1,
        page_size: 4096,
        sector_size: 512,
        streams: 1,
        gc_low: 2,
        gc_high: 2,
        policy_param: 0,
        check: false,
        track_data: false,
        seed: 1,
        slc: None,
        placement: None,
        groups: 1,
        shared_frontier: false,
        meta_rate: 0,
        gc_classes: 1,
        host_classes: 1,
    };
    let e = Ftl::<Greedy>::try_new(&params).err().expect("refused");
    assert_eq!(e.kind, ErrorKind::Capacity);
    assert!(e.message.contains("out of memory") && e.message.contains("physical-to-logical map"), "{e}");
}

#[test]
fn the_memory_limit_is_checked_before_the_page_count() {
    // 100 PB: refused for its memory, with the numbers (was "gives no whole NAND block")
    let e = Simulator::from_toml("[drive]\nuser_capacity = \"100PB\"\nop = 0.07\n[run]\nmemory_limit = \"1GiB\"\n")
        .err()
        .expect("refused");
    assert_eq!(e.kind, ErrorKind::Capacity);
    assert_eq!(e.key.as_deref(), Some("drive.user_capacity"));
    assert!(e.message.contains("TB of memory, more than the limit of 1GiB (run.memory_limit)"), "{e}");
    assert!(e.message.contains("scale model"), "{e}");
}

#[test]
fn the_model_memory_reported_is_unchanged() {
    let s = Simulator::from_toml("[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 64\n").unwrap();
    let g = s.geometry();
    assert_eq!(s.drive_report().model_memory_bytes, g.memory_estimate(false));
    let caps = opsim_core::geometry::Geometry::capacities(&s.config().drive).unwrap();
    assert_eq!(caps.memory_estimate(false), g.memory_estimate(false) as f64);
}
