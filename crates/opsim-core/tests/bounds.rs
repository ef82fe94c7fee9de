//! Issue 23 item 2: every `[timing]` value that sets a run's time, work or memory has an
//! upper bound (and rates and intervals a lower one), checked before the model is built:
//! a config error naming the key and the bound.  And the IOPS series, which grows with
//! simulated time, is capped: a run whose simulated time runs away is an error, never an
//! abort (`timing.t_erase_us = 1e15` used to allocate gigabytes and abort).

use opsim_core::config::timing::bounds;
use opsim_core::{ErrorKind, Simulator};

const DRIVE: &str = "[drive]\nuser_capacity = \"16MiB\"\nop = 0.28\npages_per_block = 64\n";

fn timed(extra: &str) -> String {
    format!("{DRIVE}[run]\nwarmup_drive_writes = 0\nmeasure_drive_writes = 0.5\n[timing]\n{extra}\n")
}

/// The error of building the simulator of `[timing]` `extra`: before anything runs.
fn refused(extra: &str) -> opsim_core::Error {
    Simulator::from_toml(&timed(extra)).err().unwrap_or_else(|| panic!("accepted: {extra}"))
}

/// `extra` passes the bound of `key` (the drive may still be refused for something else: a
/// 65536-die drive of 16 MiB has no room for its frontiers).
fn accepted(extra: &str, key: &str) {
    if let Err(e) = Simulator::from_toml(&timed(extra)) {
        assert_ne!(e.key.as_deref(), Some(key), "{extra}: {e}");
    }
}

/// `extra` (over the bound) refused naming `key` and showing `bound`; `ok` (at it) accepted.
fn bounded(extra: &str, ok: &str, key: &str, bound: &str) {
    let e = refused(extra);
    assert_eq!(e.kind, ErrorKind::Config, "{extra}: {e}");
    assert_eq!(e.key.as_deref(), Some(key), "{extra}: {e}");
    assert!(e.message.contains(bound), "{extra}: {e}");
    accepted(ok, key);
}

#[test]
fn the_erase_time_of_the_hostile_probe_is_refused_before_the_run() {
    let t = std::time::Instant::now();
    let e = refused("t_erase_us = 1e15");
    assert_eq!(e.key.as_deref(), Some("timing.t_erase_us"), "{e}");
    assert!(e.message.contains("at most 10000000 us"), "{e}");
    assert!(t.elapsed().as_secs_f64() < 1.0);
}

#[test]
fn every_nand_operation_time_is_at_most_ten_seconds_and_every_controller_time_one() {
    for k in ["t_read_us", "t_prog_us", "t_erase_us"] {
        bounded(&format!("{k} = 10000001"), &format!("{k} = 10000000"), &format!("timing.{k}"), "at most 10000000 us");
    }
    for k in ["fw_overhead_us", "gc_fw_us", "suspend_us"] {
        bounded(&format!("{k} = 1000001"), &format!("{k} = 1000000"), &format!("timing.{k}"), "at most 1000000 us");
    }
    for k in ["t_read_page_us", "t_prog_page_us"] {
        bounded(
            &format!("{k} = [50, 60, 1e8]"),
            &format!("{k} = [50, 60, 1e7]"),
            &format!("timing.{k}"),
            "at most 10000000 us",
        );
    }
    // the SLC-mode times are checked even with no cache (a preset sets them)
    for k in ["t_read_slc_us", "t_prog_slc_us"] {
        bounded(&format!("{k} = 2e7"), &format!("{k} = 1e7"), &format!("timing.{k}"), "at most 10000000 us");
    }
}

#[test]
fn rates_and_intervals_have_both_bounds() {
    let cases = [
        ("channel_mbps = 0.05", "channel_mbps = 0.1", "timing.channel_mbps", "expected 0.1 to 10000000 MB/s"),
        ("channel_mbps = 2e7", "channel_mbps = 1e7", "timing.channel_mbps", "expected 0.1 to 10000000 MB/s"),
        ("link_mbps = 0.001", "link_mbps = 1", "timing.link_mbps", "expected 0.1 to 10000000 MB/s"),
        ("arrival_iops = 0.001", "arrival_iops = 0.01", "timing.arrival_iops", "expected 0.01 to 1000000000"),
        ("arrival_iops = 1e10", "arrival_iops = 1e9", "timing.arrival_iops", "expected 0.01 to 1000000000"),
        ("series_interval_s = 1e-9", "series_interval_s = 1e-6", "timing.series_interval_s", "expected 0.000001 to"),
        ("series_interval_s = 1e7", "series_interval_s = 1e6", "timing.series_interval_s", "to 1000000 s"),
        ("round_s = 1e-4", "round_s = 0.001", "timing.round_s", "expected 0.001 to 100000000 s"),
        ("round_s = 1e9", "round_s = 1e8", "timing.round_s", "expected 0.001 to 100000000 s"),
        ("max_time_s = 1e9", "max_time_s = 1e8", "timing.max_time_s", "at most 100000000 s"),
        (
            "urgent_free_pct = 5\nurgent_perf_pct = 0.01",
            "urgent_free_pct = 5\nurgent_perf_pct = 0.1",
            "timing.urgent_perf_pct",
            "expected 0.1 to 100 %",
        ),
        (
            "urgent_free_pct = 5\nurgent_sustain_mbps = 0.01",
            "urgent_free_pct = 5\nurgent_sustain_mbps = 0.1",
            "timing.urgent_sustain_mbps",
            "expected 0.1 to",
        ),
        (
            "urgent_free_pct = 5\nurgent_sustain_window_s = 1e10",
            "urgent_free_pct = 5\nurgent_sustain_window_s = 1e8",
            "timing.urgent_sustain_window_s",
            "at most 100000000 s",
        ),
    ];
    for (bad, ok, key, bound) in cases {
        bounded(bad, ok, key, bound);
    }
}

#[test]
fn a_time_limit_with_too_many_series_points_is_refused() {
    bounded(
        "max_time_s = 1e6\nseries_interval_s = 0.1",
        "max_time_s = 1e5\nseries_interval_s = 0.1",
        "timing.series_interval_s",
        &format!("at most {}", bounds::MAX_SERIES_POINTS),
    );
    for bad in ["max_time_s = -1", "max_time_s = nan", "max_time_s = 0"] {
        let e = refused(bad);
        assert_eq!(e.key.as_deref(), Some("timing.max_time_s"), "{bad}: {e}");
        assert!(e.message.contains("must be a positive number"), "{bad}: {e}");
    }
}

#[test]
fn counts_and_sizes_of_the_timed_model_are_bounded() {
    let nvme = "interface = \"nvme\"\n";
    bounded(
        &format!("{nvme}queue_depth = 65536\nnvme_queues = 2"),
        &format!("{nvme}queue_depth = 65536\nnvme_queues = 1"),
        "timing.queue_depth",
        "at most 65536",
    );
    bounded(
        "channels = 1024\ndies_per_channel = 65",
        "channels = 1024\ndies_per_channel = 64",
        "timing.dies_per_channel",
        "at most 65536",
    );
    bounded(
        "nand_page_size = \"128MiB\"\nnand_block_size = \"1GiB\"",
        "nand_page_size = \"64MiB\"\nnand_block_size = \"1GiB\"",
        "timing.nand_page_size",
        "above the bound of 64MiB",
    );
    bounded("nand_block_size = \"128GiB\"", "nand_block_size = \"64GiB\"", "timing.nand_block_size", "64GiB");
    bounded("write_buffer = \"1TiB\"", "write_buffer = \"64GiB\"", "timing.write_buffer", "64GiB");
}

#[test]
fn a_run_whose_simulated_time_runs_away_stops_with_an_error_naming_the_interval() {
    // one-second erases and a microsecond series interval: the series would need millions of
    // points; it stops at the cap with an error (the old recorder grew without bound)
    let text = timed("t_erase_us = 1e6\nt_prog_us = 1e6\nseries_interval_s = 1e-6\nqueue_depth = 1");
    let mut sim = Simulator::from_toml(&text).expect("within the bounds");
    let e = sim.run().expect_err("stopped at the series cap");
    assert_eq!(e.kind, ErrorKind::Capacity, "{e}");
    assert_eq!(e.key.as_deref(), Some("timing.series_interval_s"), "{e}");
    assert!(e.message.contains("series points of 0.000001 s"), "{e}");
}

#[test]
fn the_series_fits_in_what_the_memory_limit_leaves_beside_the_model() {
    // 64 MiB of limit, a model of some kilobytes: room for some 16,000 points (4 KiB each,
    // as the caller's result holds them); a 1 us interval passes that within the run
    let text = timed("series_interval_s = 1e-6")
        .replace("[run]\n", "[run]\nmemory_limit = \"64MiB\"\n")
        .replace("measure_drive_writes = 0.5", "measure_drive_writes = 2");
    let mut sim = Simulator::from_toml(&text).expect("within the bounds");
    let e = sim.run().expect_err("stopped at the memory's cap");
    assert_eq!(e.key.as_deref(), Some("timing.series_interval_s"), "{e}");
    assert!(e.message.contains("under the memory limit: run.memory_limit"), "{e}");
    let points: u64 = e.message.split("more than ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!((10_000..=16_384).contains(&points), "{e}");
    // the same run with the default interval fits
    let mut sim = Simulator::from_toml(&text.replace("series_interval_s = 1e-6", "")).unwrap();
    assert!(sim.run().is_ok());
}

#[test]
fn every_preset_and_example_is_within_the_bounds() {
    for name in opsim_core::presets::names() {
        let cfg = opsim_core::Config::from_toml_str(&format!("preset = \"{name}\"\n")).unwrap();
        cfg.timing.as_ref().expect("a preset has timing").check_bounds().unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut timed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue; // examples/datasheets: calibrate's inputs, not configs
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // (tenants-fdp.toml is a tenants file for `opsim advise --tenants`, not a config)
        let Ok(cfg) = opsim_core::Config::from_toml_str_in(&text, path.parent()) else { continue };
        if let Some(t) = &cfg.timing {
            t.check_bounds().unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            timed += 1;
        }
    }
    assert!(timed >= 1, "the timed example (micron-1100-800gb.toml) was found");
}
