//! The timed model's urgent state (SK hynix, seed 004; issue 3): "below N% free blocks GC
//! takes over and host throughput falls to K% of the sustained rate", and the timed rounds'
//! steady state, phases and rates.  Small drives (256 MiB, 64-page blocks), run in the
//! optimised test profile.

use opsim_core::sim::SimResult;
use opsim_core::timed::urgent::UrgentReport;
use opsim_core::Simulator;

const DRIVE: &str = r#"
[drive]
user_capacity = "256MiB"
op = 0.28
pages_per_block = 64

[run]
seed = 3
warmup_drive_writes = 1
measure_drive_writes = 1
round_drive_writes = 0.25
"#;

const TIMING: &str = r#"
channels = 4
dies_per_channel = 2
planes = 2
nand_page_size = "16KiB"
t_read_us = 60
t_prog_us = 1600
t_erase_us = 4000
channel_mbps = 800
fw_overhead_us = 1.0
queue_depth = 32
background_gc = false
series_interval_s = 0.01
"#;

fn run(workload: &str, timing: &str, run_extra: &str) -> SimResult {
    let text = format!("{DRIVE}{run_extra}\n[workload]\n{workload}\n[timing]\n{TIMING}{timing}\n");
    Simulator::from_toml(&text).unwrap().run().unwrap()
}

fn urgent(r: &SimResult) -> &UrgentReport {
    r.timed.as_ref().unwrap().urgent.as_ref().expect("urgent state configured")
}

fn blocks(r: &SimResult) -> f64 {
    r.drive.blocks as f64
}

#[test]
fn urgent_state_is_entered_on_the_free_block_pool() {
    // 28% OP: the NAND not holding valid data never falls under 3% of the physical pages
    // (the old basis), but the pool of erased blocks drains to the FTL's watermark.
    let r = run("", "urgent_free_pct = 3\n", "");
    let u = urgent(&r);
    assert_eq!(u.reference_blocks as f64, blocks(&r));
    assert!((u.enter_below_blocks - 0.03 * blocks(&r)).abs() < 1e-9);
    assert_eq!(u.exit_at_blocks, u.enter_below_blocks);
    let first = u.first_entry_s.expect("entered");
    assert!(u.entries >= 1 && u.time_s > 0.0);
    // the same N% of a smaller reference block count is reached later (free < 3% of 100
    // blocks: only at the FTL's own watermark of 2)
    let later = run("", "urgent_free_pct = 3\nurgent_reference_blocks = 100\n", "");
    let ul = urgent(&later);
    assert_eq!(ul.enter_below_blocks, 3.0);
    assert!(ul.first_entry_s.unwrap() > first);
    // series points and rounds say when
    let t = r.timed.as_ref().unwrap();
    assert!(t.iops_series.iter().any(|p| p.urgent));
    assert!(t.iops_series.iter().filter(|p| p.t_s + 0.01 < first).all(|p| !p.urgent));
    assert!(t.rounds.iter().all(|x| x.urgent_s.is_some() && x.urgent_write_bytes.is_some()));
    let total: f64 = t.rounds.iter().map(|x| x.urgent_s.unwrap()).sum();
    assert!(total <= u.time_s + 1e-9);
}

#[test]
fn host_write_rate_is_k_percent_of_the_sustained_rate_in_bytes() {
    // the same byte rate whatever the command size: a pace in bytes, not in commands
    for req in ["4KiB", "64KiB"] {
        let r = run(&format!("request_size = \"{req}\"\n"), "urgent_free_pct = 3\nurgent_sustain_mbps = 100\n", "");
        let u = urgent(&r);
        assert_eq!(u.sustained_from, Some("given"));
        assert_eq!(u.throttle_mbps, Some(30.0));
        let rate = u.write_bytes as f64 / u.time_s / 1e6;
        assert!((rate - 30.0).abs() < 0.03 * 30.0, "{req}: {rate} MB/s in the urgent state");
    }
}

#[test]
fn sustained_rate_is_measured_in_bytes_over_a_window() {
    let r = run("", "urgent_free_pct = 3\nurgent_sustain_window_s = 0.1\n", "");
    let u = urgent(&r);
    assert_eq!(u.sustained_from, Some("measured"));
    let first = u.first_entry_s.unwrap();
    // the last 10 whole series intervals before the entry in which the host wrote
    let t = r.timed.as_ref().unwrap();
    let before: Vec<f64> = t
        .iops_series
        .iter()
        .filter(|p| p.t_s <= first + 1e-12 && !p.urgent && p.write_iops > 0.0)
        .map(|p| p.mbps)
        .collect();
    assert!(before.len() >= 10);
    let last10 = &before[before.len() - 10..];
    let mean = last10.iter().sum::<f64>() / 10.0;
    let s = u.sustained_mbps.unwrap();
    assert!((s - mean).abs() < 1e-6 * mean, "{s} vs {mean}");
    assert!((u.throttle_mbps.unwrap() - 0.3 * s).abs() < 1e-9);
}

#[test]
fn gc_takes_over_the_time_the_throttle_frees() {
    // K = 15%: well under what GC sustains at this OP (K = 30% of the fresh drive's rate
    // is about the GC-bound rate: the pool would be held, not refilled)
    let on = run("", "urgent_free_pct = 3\nurgent_perf_pct = 15\n", "");
    let off = run("", "urgent_free_pct = 3\nurgent_perf_pct = 15\nurgent_gc = false\n", "");
    let (a, b) = (urgent(&on), urgent(&off));
    assert!(a.gc_takes_over && !b.gc_takes_over);
    // GC collects in the freed NAND time, the pool gets back to N% and the state ends
    assert!(a.gc_victims > 10 && a.gc_copy_pages > 0);
    assert!(a.entries > 1, "the state ended at least once: {} entries", a.entries);
    // throttle only: nothing refills the pool beyond the FTL's watermark; the state never ends
    assert_eq!((b.gc_victims, b.entries), (0, 1));
    // the pool stays near N% (39 blocks) instead of falling to the FTL's watermark (2)
    let last_min = |r: &SimResult| r.rounds.last().unwrap().free_blocks_min;
    assert!(last_min(&on) as f64 >= a.enter_below_blocks.floor() - 2.0, "{}", last_min(&on));
    assert!(last_min(&off) <= 2);
    // host bytes in the urgent state still come at K% of the sustained rate
    for u in [a, b] {
        let rate = u.write_bytes as f64 / u.time_s / 1e6;
        assert!(rate <= 1.02 * u.throttle_mbps.unwrap(), "{rate} vs {:?}", u.throttle_mbps);
    }
}

#[test]
fn no_urgent_state_unless_configured() {
    let r = run("", "", "");
    let t = r.timed.as_ref().unwrap();
    assert!(t.urgent.is_none());
    assert!(t.rounds.iter().all(|x| x.urgent_s.is_none() && x.urgent_write_bytes.is_none()));
    assert!(t.iops_series.iter().all(|p| !p.urgent));
    let json = serde_json::to_string(&r.config).unwrap();
    assert!(!json.contains("urgent_reference_blocks") && !json.contains("urgent_gc"));
    for key in ["urgent_gc = false", "urgent_reference_blocks = 10", "urgent_sustain_mbps = 5", "urgent_exit_pct = 4"] {
        let text = format!("{DRIVE}\n[timing]\n{TIMING}{key}\n");
        let e = Simulator::from_toml(&text).and_then(|mut s| s.run()).expect_err("an error");
        assert_eq!(e.key.as_deref(), Some(format!("timing.{}", key.split(' ').next().unwrap()).as_str()), "{key}");
    }
    let text = format!("{DRIVE}\n[timing]\n{TIMING}urgent_free_pct = 5\nurgent_exit_pct = 4\n");
    let e = Simulator::from_toml(&text).and_then(|mut s| s.run()).expect_err("exit below entry");
    assert_eq!(e.key.as_deref(), Some("timing.urgent_exit_pct"));
}

#[test]
fn steady_state_iops_excludes_fresh_out_of_box_rounds() {
    // fresh drive, 28% OP: the first rounds erase nothing and run flat at the program rate
    let text = format!(
        "{}\n[workload]\n[timing]\n{TIMING}",
        DRIVE
            .replace("warmup_drive_writes = 1", "warmup_drive_writes = 0\nprecondition = \"none\"")
            .replace("measure_drive_writes = 1", "measure_drive_writes = 4")
            .replace("round_drive_writes = 0.25", "round_drive_writes = 0.1")
    );
    let r = Simulator::from_toml(&text).unwrap().run().unwrap();
    let t = r.timed.as_ref().unwrap();
    let flat = t.rounds.iter().take_while(|x| x.erases == 0).count();
    assert!(flat >= 5, "{flat} fresh-out-of-box rounds");
    let ss = &t.steady_state;
    assert!(ss.reached);
    let (a, b) = ss.window.unwrap();
    assert!(a >= flat, "window {a}..{b} starts in the fresh-out-of-box rounds (0..{flat})");
    assert!(t.rounds.iter().filter(|x| (a..=b).contains(&x.index)).all(|x| x.erases > 0));
    // a run that never leaves fresh-out-of-box is not in steady state
    let short = text.replace("measure_drive_writes = 4", "measure_drive_writes = 0.5");
    let r = Simulator::from_toml(&short).unwrap().run().unwrap();
    let t = r.timed.as_ref().unwrap();
    assert!(t.rounds.len() >= 5 && t.rounds.iter().all(|x| x.erases == 0));
    assert!(!t.steady_state.reached && t.steady_iops.is_none() && t.phases.steady_start_s.is_none());
}

#[test]
fn analytic_preconditioning_has_no_fresh_out_of_box_phase() {
    let text = format!(
        "{}\n[workload]\n[timing]\n{TIMING}",
        DRIVE.replace("seed = 3", "seed = 3\nprecondition = \"analytic\"")
    );
    let r = Simulator::from_toml(&text).unwrap().run().unwrap();
    assert_eq!(r.timed.as_ref().unwrap().phases.fob_end_s, None);
    // a fresh drive has one
    let text = format!(
        "{}\n[workload]\n[timing]\n{TIMING}",
        DRIVE
            .replace("seed = 3", "seed = 3\nprecondition = \"none\"")
            .replace("warmup_drive_writes = 1", "warmup_drive_writes = 0")
            .replace("measure_drive_writes = 1", "measure_drive_writes = 3")
    );
    let r = Simulator::from_toml(&text).unwrap().run().unwrap();
    assert!(r.timed.as_ref().unwrap().phases.fob_end_s.is_some());
}

#[test]
fn round_rates_count_the_commands_completed_in_the_round() {
    // 512 KiB writes, then a short phase of 4 KiB writes: in the short round the drive
    // completes the 512 KiB commands queued before it
    let text = format!(
        r#"{DRIVE}
[[phase]]
name = "big"
drive_writes = 0.5
workload = {{ type = "sequential", request_size = "512KiB" }}

[[phase]]
name = "small"
ios = 200
workload = {{ type = "uniform", request_size = "4KiB" }}

[timing]
{TIMING}"#
    );
    let r = Simulator::from_toml(&text).unwrap().run().unwrap();
    let t = r.timed.as_ref().unwrap();
    let small = t.rounds.iter().find(|x| x.phase == "small").unwrap();
    let big = t.rounds.iter().find(|x| x.phase == "big").unwrap();
    let secs = small.t_end_s - small.t_start_s;
    assert!(small.completed_write_bytes > 8 * small.host_write_bytes, "queued 512 KiB commands complete in it");
    assert!((small.mbps - small.completed_write_bytes as f64 / secs / 1e6).abs() < 1e-9 * small.mbps);
    assert!(small.mbps > 0.5 * big.mbps, "{} vs {} MB/s", small.mbps, big.mbps);
    for x in &t.rounds {
        let s = x.t_end_s - x.t_start_s;
        assert!((x.iops - (x.write_iops + x.read_iops)).abs() < 1e-6 * x.iops.max(1.0));
        assert!((x.mbps - x.completed_write_bytes as f64 / s / 1e6).abs() < 1e-9 * x.mbps.max(1.0));
    }
}
