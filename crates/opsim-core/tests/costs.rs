//! The cost model (`timed::costs`) against the event model it is derived from: closed-loop
//! runs at a high queue depth approach its bound when one resource dominates, never pass it.

use opsim_core::describe::describe;
use opsim_core::timed::costs::{costs, Mix};
use opsim_core::{Config, Simulator};

/// (measured IOPS, the bound, the bottleneck) of a run of `timing` and `workload`.
fn run(timing: &str, workload: &str, request: f64, read: f64) -> (f64, f64, &'static str) {
    let text = format!(
        "[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\npages_per_block = 64\n\
         [timing]\n{timing}\n[workload]\n{workload}\n\
         [run]\nprecondition = \"fill\"\nwarmup_drive_writes = 1\nmeasure_drive_writes = 1\nround_drive_writes = 0.25\n"
    );
    let cfg = Config::from_toml_str(&text).unwrap();
    let model = describe(cfg.clone(), true).unwrap().cost_model.unwrap();
    let r = Simulator::new(cfg).unwrap().run().unwrap();
    let mix =
        Mix { write_fraction: 1.0 - read, units_per_io: request / 4096.0, bytes_per_io: request, sequential: false };
    let c = costs(&model, &mix, r.waf).unwrap();
    (r.timed.unwrap().measured_iops, c.iops, c.bottleneck)
}

#[test]
fn controller_bound_is_met() {
    let (m, b, who) = run(
        "interface = \"nvme\"\nqueue_depth = 64\nfw_overhead_us = 50",
        "type = \"uniform\"\nread_fraction = 0.5",
        4096.0,
        0.5,
    );
    assert_eq!(who, "controller");
    assert!((m / b - 1.0).abs() < 1e-3, "{m} vs {b}");
}

#[test]
fn nand_bound_with_garbage_collection_is_approached() {
    let (m, b, who) = run("", "type = \"uniform\"", 4096.0, 0.0);
    assert_eq!(who, "NAND dies");
    assert!(m <= b * 1.001 && m >= 0.93 * b, "{m} vs {b}");
}

#[test]
fn host_link_bound_is_approached() {
    let (m, b, who) = run(
        "interface = \"nvme\"\nqueue_depth = 64\nlink_mbps = 50",
        "type = \"uniform\"\nread_fraction = 0.5\nrequest_size = \"64KiB\"",
        65536.0,
        0.5,
    );
    assert_eq!(who, "host link");
    assert!(m <= b * 1.001 && m >= 0.85 * b, "{m} vs {b}");
}
