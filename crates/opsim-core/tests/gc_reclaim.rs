//! The controller's time per GC unit reclaimed (`timing.gc_reclaim_us`): 0 is the key not
//! given, bit for bit; a time that makes the controller the bottleneck lowers the timed
//! model's steady IOPS to the cost model's bound, which charges it per unit erased; bad
//! values are refused naming the key.

use opsim_core::describe::describe;
use opsim_core::sim::SimResult;
use opsim_core::timed::costs::{costs, Mix};
use opsim_core::{Config, ErrorKind, Simulator};

fn text(timing: &str) -> String {
    format!(
        "[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\npages_per_block = 64\n\
         [timing]\n{timing}\n[workload]\ntype = \"uniform\"\n\
         [run]\nprecondition = \"fill\"\nwarmup_drive_writes = 1\nmeasure_drive_writes = 1\nround_drive_writes = 0.25\n"
    )
}

fn run(timing: &str) -> SimResult {
    Simulator::from_toml(&text(timing)).unwrap_or_else(|e| panic!("{e}")).run().unwrap()
}

#[test]
fn zero_is_the_key_not_given() {
    let strip = |r: &SimResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("perf");
        v
    };
    let (given, absent) = (run("gc_reclaim_us = 0"), run(""));
    assert_eq!(strip(&given), strip(&absent));
    assert!(!serde_json::to_string(&given).unwrap().contains("gc_reclaim"));
}

#[test]
fn the_controller_pays_per_unit_reclaimed_and_the_cost_model_follows() {
    let mix =
        Mix { write_fraction: 1.0, units_per_io: 1.0, bytes_per_io: 4096.0, sequential: false, queue_depth: None };
    let base = run("").timed.unwrap().measured_iops;
    // 64-page units at WAF ~2.6: a unit per ~25 host writes; 2 ms a unit is ~80 us a write,
    // far above the NAND's share: the controller bounds the rate
    let cfg = Config::from_toml_str(&text("gc_reclaim_us = 2000")).unwrap();
    let model = describe(cfg.clone(), true).unwrap().cost_model.unwrap();
    let r = Simulator::new(cfg).unwrap().run().unwrap();
    let m = &r.measure_counters;
    let waf_gc = 1.0 + m.gc_copy_pages as f64 / m.host_write_pages as f64;
    let c = costs(&model, &mix, waf_gc).unwrap();
    let iops = r.timed.unwrap().measured_iops;
    assert_eq!(c.bottleneck, "controller");
    assert!(iops <= c.iops * 1.02 && iops >= 0.9 * c.iops, "{iops} vs {}", c.iops);
    assert!(iops < 0.7 * base, "{iops} vs {base} without");
    // the controller's time a write: the command's 2 us and erases per write x 2 ms
    let per_write = 2000.0 + m.erases as f64 / m.host_write_pages as f64 * 2e6;
    assert!((1e9 / iops / per_write - 1.0).abs() < 0.1, "{} ns a write, {per_write} ns of reclaims", 1e9 / iops);
}

#[test]
fn bad_values_name_the_key() {
    for v in ["-1", "2e6", "nan"] {
        let e = Simulator::from_toml(&text(&format!("gc_reclaim_us = {v}")))
            .and_then(|mut s| s.run())
            .err()
            .unwrap_or_else(|| panic!("{v}: accepted"));
        assert_eq!(e.kind, ErrorKind::Config, "{v}: {e}");
        assert_eq!(e.key.as_deref(), Some("timing.gc_reclaim_us"), "{v}: {e}");
    }
}
