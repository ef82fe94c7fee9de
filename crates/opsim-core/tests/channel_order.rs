//! `timing.channel_order`: random 4 KiB reads at QD256 with four independent read planes,
//! the event model against the cost model's bound (`costs()`, which has no channel order).
//! In issue order a read whose die is busy programming holds its channel for every later
//! read of the channel's other dies; in ready order the channel moves whichever page is
//! ready, and the event model comes closer to the bound.

use opsim_core::describe::describe;
use opsim_core::timed::costs::{costs, Mix};
use opsim_core::{Config, Simulator};

/// (measured IOPS, the bound) of random 4 KiB reads (0.1% writes) with `order`.
fn random_reads(order: &str) -> (f64, f64) {
    let text = format!(
        "[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\npages_per_block = 64\n\
         [timing]\ninterface = \"nvme\"\nqueue_depth = 64\nnvme_queues = 4\nchannels = 4\ndies_per_channel = 4\n\
         planes = 4\nread_planes = 4\nchannel_mbps = 1600\nlink_mbps = 100000\nfw_overhead_us = 0.1\n\
         t_read_us = 60\nt_prog_us = 1500\nchannel_order = \"{order}\"\n\
         [workload]\ntype = \"uniform\"\nread_fraction = 0.999\n\
         [run]\nprecondition = \"fill\"\nwarmup_drive_writes = 0.05\nmeasure_drive_writes = 0.1\nround_drive_writes = 0.05\n"
    );
    let cfg = Config::from_toml_str(&text).unwrap();
    let model = describe(cfg.clone(), true).unwrap().cost_model.unwrap();
    let r = Simulator::new(cfg).unwrap().run().unwrap();
    let mix =
        Mix { write_fraction: 0.001, units_per_io: 1.0, bytes_per_io: 4096.0, sequential: false, queue_depth: None };
    let c = costs(&model, &mix, r.waf).unwrap();
    (r.timed.unwrap().measured_iops, c.iops)
}

#[test]
fn ready_order_reaches_a_higher_share_of_the_random_read_bound() {
    let (issue, b_issue) = random_reads("issue");
    let (ready, b_ready) = random_reads("ready");
    assert_eq!(b_issue, b_ready, "the cost model has no channel order");
    let (si, sr) = (issue / b_issue, ready / b_ready);
    println!("random 4 KiB reads, QD256, read_planes 4: issue {issue:.0} IOPS ({si:.3} of {b_issue:.0}), ready {ready:.0} ({sr:.3})");
    assert!(sr <= 1.001, "ready order passes the bound: {sr}");
    assert!(sr > si * 1.01, "ready {sr:.3} vs issue {si:.3} of the bound");
}

#[test]
fn a_bad_channel_order_is_a_config_error_naming_the_key() {
    for v in ["\"fifo\"", "1", "\"\"", "\"Ready\""] {
        let text = format!("[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\n[timing]\nchannel_order = {v}\n");
        let e = Config::from_toml_str(&text).expect_err(&text);
        assert_eq!(e.kind, opsim_core::ErrorKind::Config, "{e}");
        assert_eq!(e.key.as_deref(), Some("timing.channel_order"), "{v}: {e}");
    }
    for v in ["issue", "ready"] {
        let text = format!("[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\n[timing]\nchannel_order = \"{v}\"\n");
        assert!(Config::from_toml_str(&text).is_ok(), "{v}");
    }
}
