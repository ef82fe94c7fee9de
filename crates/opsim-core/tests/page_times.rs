//! Per-page-type NAND times (`timing.t_read_page_us`, `timing.t_prog_page_us`): a mapping
//! unit's page type (LSB, CSB, MSB) follows from its place in its die's word line, a read
//! costs its page's tR, and page-by-page programs cost the sum of the pages' times per word
//! line.  Expected figures come from the model's own parameters (docs/timed.md), not from
//! the simulator.
//!
//! Geometry of every test: 4 dies (2 channels x 2), 2 planes, a 48 KiB TLC word line
//! (`nand_page_size`) of 4 KiB mapping units: a program unit is 12 x 2 = 24 units on a die,
//! 8 per page type; the page types repeat every 4 dies x 24 = 96 physical pages.

use opsim_core::sim::SimResult;
use opsim_core::{ErrorKind, Simulator};
use std::path::PathBuf;

const DIES: u64 = 4;
const UPP: u64 = 24;
const PER_PAGE: u64 = 8;

const TIMING: &str = r#"
channels = 2
dies_per_channel = 2
planes = 2
cell = "tlc"
nand_page_size = "48KiB"
nand_block_size = "12MiB"
t_read_us = 60
t_prog_us = 1800
t_erase_us = 4000
channel_mbps = 800
fw_overhead_us = 1.0
background_gc = false
"#;

/// `TIMING` with `extra`'s keys set (replacing those `TIMING` sets).
fn timing(extra: &str) -> String {
    let set = |line: &str| line.split('=').next().map(str::trim).filter(|k| !k.is_empty()).map(str::to_owned);
    let over: Vec<String> = extra.lines().filter_map(set).collect();
    let mut out: String =
        TIMING.lines().filter(|l| !matches!(set(l), Some(k) if over.contains(&k))).map(|l| format!("{l}\n")).collect();
    out.push_str(extra);
    out.push('\n');
    out
}

/// Firmware + channel transfer + SATA link of one unloaded 4 KiB read, microseconds.
const READ_OVERHEAD_US: f64 = 1.0 + 4096.0 / 800.0 + 4096.0 / 600.0;

fn run(text: &str) -> SimResult {
    Simulator::from_toml(text).unwrap().run().unwrap()
}

/// A DiskSim trace of 4 KiB reads of the user pages `lpns`, in a fresh temporary directory:
/// (the directory's guard, which removes it when dropped, and the trace's path).
fn read_trace(name: &str, lpns: &[u64]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix("opsim-page-times-").tempdir().unwrap();
    let path = dir.path().join(format!("{name}.disksim"));
    let mut s = String::new();
    for (i, l) in lpns.iter().enumerate() {
        s.push_str(&format!("{}.0 0 {} 8 1\n", i, l * 8));
    }
    std::fs::write(&path, s).unwrap();
    (dir, path)
}

/// A 64 MiB drive filled sequentially (`precondition = "fill"`: user page i sits in
/// physical page i), then the trace's reads at queue depth 1.
fn reads_on_filled_drive(lpns: &[u64], name: &str, timing_extra: &str) -> SimResult {
    let (_dir, path) = read_trace(name, lpns);
    run(&format!(
        r#"
        [drive]
        user_capacity = "64MiB"
        op = 0.28
        pages_per_block = 96
        [run]
        seed = 5
        precondition = "fill"
        [[phase]]
        name = "reads"
        ios = {n}
        workload = {{ type = "trace", trace = {{ path = "{p}", format = "disksim" }} }}
        [timing]
        {t}
        "#,
        n = lpns.len(),
        p = path.display(),
        t = timing(&format!("queue_depth = 1\n{timing_extra}"))
    ))
}

fn user_pages() -> u64 {
    (64 << 20) / 4096
}

/// The page type (0 LSB, 1 CSB, 2 MSB) of physical page `ppn` in this geometry.
fn page_type(ppn: u64) -> u64 {
    ((ppn / DIES) % UPP) / PER_PAGE
}

fn mean_read_us(r: &SimResult) -> f64 {
    let t = r.timed.as_ref().unwrap();
    assert_eq!(t.latency_us.read.count, t.latency_us.all.count, "reads only");
    t.latency_us.read.mean
}

fn lcg(n: usize, modulo: u64) -> Vec<u64> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % modulo
        })
        .collect()
}

#[test]
fn random_reads_cost_the_mean_page_read_time() {
    let lpns = lcg(20_000, user_pages());
    let r = reads_on_filled_drive(&lpns, "random", "t_read_page_us = [50, 100, 150]");
    // the expected tR from the addresses drawn (about a third of each page type)
    let want: f64 = lpns.iter().map(|&l| [50.0, 100.0, 150.0][page_type(l) as usize]).sum::<f64>() / lpns.len() as f64;
    assert!((want - 100.0).abs() < 2.0, "the draw covers the page types evenly: {want}");
    let got = mean_read_us(&r);
    assert!(
        (got - (want + READ_OVERHEAD_US)).abs() < 0.5,
        "mean read {got} us, expected {} us",
        want + READ_OVERHEAD_US
    );
    // tR of each type shows in the distribution: the fastest and slowest reads
    let lat = &r.timed.as_ref().unwrap().latency_us.read;
    assert!((lat.min - (50.0 + READ_OVERHEAD_US)).abs() < 1.0, "min {}", lat.min);
    assert!((lat.max - (150.0 + READ_OVERHEAD_US)).abs() < 3.0, "max {}", lat.max);
    // the resolved timing reports the page times, and t_read_ns is their mean (GC copies)
    let timing = serde_json::to_value(&r.timed.as_ref().unwrap().timing).unwrap();
    assert_eq!(timing["pages"]["t_read_ns"], serde_json::json!([50_000, 100_000, 150_000]));
    assert_eq!(timing["pages"]["units_per_page"], 8);
    assert_eq!(timing["t_read_ns"], 100_000);
}

#[test]
fn reads_of_one_page_type_cost_its_read_time() {
    for (kind, t_r) in [(0u64, 50.0), (1, 100.0), (2, 150.0)] {
        // every user page in the chosen page type, in a scrambled order over the dies
        let lpns: Vec<u64> = lcg(3000, user_pages()).into_iter().filter(|&l| page_type(l) == kind).collect();
        assert!(lpns.len() > 800);
        let r = reads_on_filled_drive(&lpns, &format!("type{kind}"), "t_read_page_us = [50, 100, 150]");
        let got = mean_read_us(&r);
        assert!(
            (got - (t_r + READ_OVERHEAD_US)).abs() < 0.5,
            "page type {kind}: mean read {got} us, expected {}",
            t_r + READ_OVERHEAD_US
        );
        let lat = &r.timed.as_ref().unwrap().latency_us.read;
        assert!(lat.max - lat.min < 1.0, "every read of page type {kind} costs the same: {} .. {}", lat.min, lat.max);
    }
}

#[test]
fn without_page_times_every_read_costs_t_read() {
    let lpns = lcg(3000, user_pages());
    let r = reads_on_filled_drive(&lpns, "scalar", "");
    let got = mean_read_us(&r);
    assert!((got - (60.0 + READ_OVERHEAD_US)).abs() < 0.5, "mean read {got}");
    let timing = serde_json::to_value(&r.timed.as_ref().unwrap().timing).unwrap();
    assert!(timing.get("pages").is_none(), "no page times in the resolved timing: {timing}");
}

/// A 64 MiB drive written fresh out of box (no preconditioning) by 4 KiB random writes
/// (a write buffer of 32 units, so that it hides little of the NAND time).
fn fob_writes(timing_extra: &str, drive_writes: f64) -> SimResult {
    run(&format!(
        r#"
        [drive]
        user_capacity = "64MiB"
        op = 0.28
        pages_per_block = 96
        [run]
        seed = 5
        precondition = "none"
        warmup_drive_writes = 0
        measure_drive_writes = {drive_writes}
        round_drive_writes = {drive_writes}
        [timing]
        {t}
        "#,
        t = timing(&format!("queue_depth = 32\nwrite_buffer = \"128KiB\"\n{timing_extra}"))
    ))
}

#[test]
fn page_by_page_programs_cost_the_sum_of_the_pages_per_word_line() {
    // aggregated (write cache on): a word line of 24 units on a die takes 500 + 1500 +
    // 2500 us; the drive's program bandwidth is dies x units / that sum
    let r = fob_writes("t_prog_page_us = [500, 1500, 2500]", 0.5);
    let t = r.timed.as_ref().unwrap();
    let bound = (DIES * UPP) as f64 / 4500e-6;
    assert!((t.timing.program_units_per_s - bound).abs() < 1e-6 * bound);
    assert_eq!(t.timing.t_prog_ns, 4_500_000);
    let iops = t.measured_iops;
    assert!((iops - bound).abs() < 0.03 * bound, "FOB write IOPS {iops}, program bound {bound}");
    // the same sum as one-shot t_prog_us gives the same bandwidth
    let one_shot = fob_writes("t_prog_us = 4500", 0.5);
    let o = one_shot.timed.as_ref().unwrap().measured_iops;
    assert!((iops - o).abs() < 0.01 * o, "page by page {iops}, one-shot {o}");
}

#[test]
fn with_the_cache_off_a_command_pads_its_page_not_the_word_line() {
    // write-through: each 4 KiB command is programmed alone, padded to its page (page by
    // page) on its die: the dies' mean time per command is the mean page time (1500 us);
    // one-shot, a whole word line (4500 us)
    let paged = fob_writes("write_cache = false\nt_prog_page_us = [500, 1500, 2500]", 0.03);
    let one_shot = fob_writes("write_cache = false\nt_prog_us = 4500", 0.03);
    let p = paged.timed.as_ref().unwrap().measured_iops;
    let o = one_shot.timed.as_ref().unwrap().measured_iops;
    let want_p = DIES as f64 / 1500e-6;
    let want_o = DIES as f64 / 4500e-6;
    assert!((p - want_p).abs() < 0.05 * want_p, "page by page {p} IOPS, expected {want_p}");
    assert!((o - want_o).abs() < 0.05 * want_o, "one-shot {o} IOPS, expected {want_o}");
    // a command waits for its own page's program: the fastest for an LSB page, the
    // slowest for an MSB page
    let lat = &paged.timed.as_ref().unwrap().latency_us.write;
    assert!(lat.min >= 500.0 && lat.min < 600.0, "min write latency {}", lat.min);
    assert!(lat.max >= 2500.0, "max write latency {}", lat.max);
}

#[test]
fn page_times_equal_to_the_scalar_times_change_nothing() {
    // [t, t, t] with t = t_read_us, and t_prog_page_us = t_prog_us / 3 (1800 / 3: the
    // per-unit shares are whole nanoseconds either way) give the same timed run
    let mix = |extra: &str| {
        run(&format!(
            r#"
            [drive]
            user_capacity = "64MiB"
            op = 0.28
            pages_per_block = 96
            [workload]
            read_fraction = 0.5
            [run]
            seed = 5
            warmup_drive_writes = 1
            measure_drive_writes = 1
            [timing]
            {t}
            "#,
            t = timing(&format!("queue_depth = 16\n{extra}"))
        ))
    };
    let scalar = mix("");
    let paged = mix("t_read_page_us = [60, 60, 60]\nt_prog_page_us = [600, 600, 600]");
    let (a, b) = (scalar.timed.as_ref().unwrap(), paged.timed.as_ref().unwrap());
    assert_eq!(scalar.waf, paged.waf);
    assert_eq!(serde_json::to_string(&a.latency_us).unwrap(), serde_json::to_string(&b.latency_us).unwrap());
    assert_eq!(serde_json::to_string(&a.iops_series).unwrap(), serde_json::to_string(&b.iops_series).unwrap());
    assert_eq!(a.simulated_seconds, b.simulated_seconds);
}

#[test]
fn page_time_errors_name_the_key() {
    let err = |extra: &str| {
        let text =
            format!("[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 96\n[timing]\n{}", timing(extra));
        match Simulator::from_toml(&text).and_then(|mut s| s.run()) {
            Ok(_) => panic!("{extra}: accepted"),
            Err(e) => e,
        }
    };
    let e = err("t_read_page_us = [50, 100]");
    assert_eq!(e.kind, ErrorKind::Config);
    assert_eq!(e.key.as_deref(), Some("timing.t_read_page_us"));
    assert!(e.to_string().contains("TLC needs 3 values (LSB, CSB, MSB), got 2"), "{e}");
    let e = err("t_prog_page_us = [500, 1500, 2500, 3000]");
    assert_eq!(e.key.as_deref(), Some("timing.t_prog_page_us"));
    assert!(e.to_string().contains("got 4"), "{e}");
    let e = err("t_prog_page_us = [500, -1, 2500]");
    assert_eq!(e.key.as_deref(), Some("timing.t_prog_page_us"));
    assert!(e.to_string().contains("value 2"), "{e}");
    let e = err("cell = \"mlc\"\nt_read_page_us = [50, 100, 150]");
    assert!(e.to_string().contains("MLC needs 2 values (LSB, MSB), got 3"), "{e}");
    // a TLC word line of 16 KiB does not split into 3 pages of whole 4 KiB units
    let e = err("nand_page_size = \"16KiB\"\nt_prog_page_us = [500, 1500, 2500]");
    assert_eq!(e.key.as_deref(), Some("timing.t_prog_page_us"));
    assert!(e.to_string().contains("nand_page_size"), "{e}");
    // QLC, 4 pages: a 48 KiB word line of 12 units splits, 4 values are needed
    let e = err("cell = \"qlc\"\nt_read_page_us = [50, 100, 150]");
    assert!(e.to_string().contains("QLC needs 4 values (LP, UP, XP, TP), got 3"), "{e}");
    // SLC: one value
    let e = err("cell = \"slc\"\nt_read_page_us = [25, 25]");
    assert!(e.to_string().contains("SLC needs 1 value (one page), got 2"), "{e}");
}
