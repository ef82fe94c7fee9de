//! The timed model's mapping-table cache (`[timing.map_cache]`, DFTL-style): hit ratios
//! against their closed forms, the cost of a miss, a cache holding the whole table, the
//! config errors, determinism, and results unchanged when the cache is off.  Each expected
//! figure comes from the parameters, not from the simulator.

use opsim_core::sim::SimResult;
use opsim_core::timed::mapcache::MapCacheReport;
use opsim_core::{ErrorKind, Simulator};

/// 8 dies on 4 channels; tR 60 us, a 4 KiB unit moves in 4096 / 800 MB/s = 5.12 us
/// (`nand_page_size` 16 KiB unless a test gives its own).
const TIMING: &str = r#"
channels = 4
dies_per_channel = 2
planes = 2
t_read_us = 60
t_prog_us = 1600
t_erase_us = 4000
channel_mbps = 800
fw_overhead_us = 1.0
background_gc = false
"#;
const T_READ_US: f64 = 60.0;
const XFER_US: f64 = 4096.0 / 800.0;

/// A 1 GiB drive (262144 mapping units: 256 translation pages of 1024 entries), OP 28%.
fn config(workload: &str, run: &str, timing: &str, map: &str) -> String {
    let map = if map.is_empty() { String::new() } else { format!("[timing.map_cache]\n{map}\n") };
    let nand_page = if timing.contains("nand_page_size") { "" } else { "nand_page_size = \"16KiB\"\n" };
    format!(
        "[drive]\nuser_capacity = \"1GiB\"\nop = 0.28\npages_per_block = 256\n\
         [run]\nseed = 5\n{run}\n{workload}\n[timing]\n{TIMING}{nand_page}{timing}\n{map}"
    )
}

fn run(text: &str) -> SimResult {
    Simulator::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}")).run().unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn map(r: &SimResult) -> &MapCacheReport {
    r.timed.as_ref().unwrap().map_cache.as_ref().expect("map cache on")
}

/// Reads (with 1 in `1/(1-rf)` writes) over the span: a short warm-up phase, then a
/// measured phase of `ios` commands.
fn phases(workload: &str, warm: u64, ios: u64) -> String {
    format!(
        "[[phase]]\nname = \"warm\"\nios = {warm}\nworkload = {{ {workload} }}\n\
         [[phase]]\nname = \"measure\"\nios = {ios}\nmeasure = true\nworkload = {{ {workload} }}\n"
    )
}

#[test]
fn a_cache_holding_the_whole_table_costs_only_cold_misses() {
    let wl = "[workload]\nread_fraction = 0.5\n";
    let runs = "warmup_drive_writes = 0.5\nmeasure_drive_writes = 0.5\nround_drive_writes = 0.25\n";
    let none = run(&config(wl, runs, "queue_depth = 32\n", ""));
    let full = run(&config(wl, runs, "queue_depth = 32\n", "fraction = 1.0"));
    let m = map(&full);
    assert_eq!((m.params.translation_pages, m.params.cached_pages), (256, 256));
    // each translation page read once (every one is touched), never evicted
    assert_eq!(m.total.map_reads, 256);
    assert_eq!(m.total.map_writes, 0);
    assert_eq!(m.window.map_reads, 0, "the measurement window only hits");
    assert_eq!(m.window.hit_ratio, Some(1.0));
    // the FTL's work is the same; the WAF with mapping writes is the FTL's
    assert_eq!(full.waf, none.waf);
    assert_eq!(m.window.waf_with_map, Some(full.waf));
    let (a, b) = (none.timed.as_ref().unwrap(), full.timed.as_ref().unwrap());
    let rel = (b.measured_iops - a.measured_iops).abs() / a.measured_iops;
    assert!(
        rel < 0.005,
        "IOPS {} with the whole table cached vs {} without the cache",
        b.measured_iops,
        a.measured_iops
    );
    // and the measured rounds' read latency agrees
    for (x, y) in a.rounds.iter().zip(&b.rounds).filter(|(x, _)| x.index >= full.measure_window.first_round) {
        assert!(
            (x.latency_us.p50 - y.latency_us.p50).abs() / x.latency_us.p50 < 0.02,
            "{:?} vs {:?}",
            x.latency_us,
            y.latency_us
        );
    }
}

#[test]
fn uniform_random_reads_hit_in_proportion_to_the_cached_share_of_the_span() {
    // span 0.5: 128 translation pages touched; C of them cached gives P(hit) = C / 128 for
    // independent uniform lookups once the LRU is full (every lookup an independent trial)
    for (size, cached) in [("128KiB", 32u64), ("384KiB", 96)] {
        let wl = phases("read_fraction = 0.99, span = 0.5", 5_000, 100_000);
        let r = run(&config(&wl, "", "queue_depth = 32\n", &format!("size = \"{size}\"")));
        let m = map(&r);
        assert_eq!(m.params.cached_pages, cached);
        let p = cached as f64 / 128.0;
        let n = m.window.lookups as f64;
        assert!(n >= 100_000.0, "one lookup per 4 KiB command: {n}");
        let sigma = (p * (1.0 - p) / n).sqrt();
        let h = m.window.hit_ratio.unwrap();
        assert!((h - p).abs() < 4.0 * sigma, "hit ratio {h} vs C/S = {p} (4 sigma = {})", 4.0 * sigma);
        assert_eq!(m.window.map_reads, m.window.lookups - m.window.hits, "every miss reads its page");
        assert!(m.window.map_writes <= m.window.map_reads, "only evictions program");
    }
}

#[test]
fn sequential_reads_hit_1023_of_1024() {
    let wl = phases("type = \"sequential\", read_fraction = 0.99", 10_240, 102_400);
    let r = run(&config(&wl, "", "queue_depth = 32\n", "size = \"16KiB\""));
    let m = map(&r);
    assert_eq!(m.params.cached_pages, 4);
    let n = m.window.lookups;
    assert_eq!(n, 102_400, "one lookup per 4 KiB command");
    // one miss per translation page entered: 100 of them
    let misses = n - m.window.hits;
    // (each phase starts its stream at LBA 0: the warm-up's 10 pages are evicted before the
    // measured phase gets back to them)
    assert_eq!(misses, 100, "{misses} misses in {n} sequential lookups");
    assert!((m.window.hit_ratio.unwrap() - 1023.0 / 1024.0).abs() < 1.0 / 1024.0 / 50.0);
    // the pages the 1% writes dirtied are programmed when they leave the cache
    assert!(m.window.map_writes >= misses - 5 && m.window.map_writes <= misses);
    assert!(m.window.waf_with_map.unwrap() > r.waf);
}

#[test]
fn a_miss_adds_a_translation_page_read_to_a_qd1_read() {
    // QD1 uniform random reads over the whole drive; 64 of 256 translation pages cached
    let wl = phases("read_fraction = 0.999", 2_000, 20_000);
    let none = run(&config(&wl, "", "queue_depth = 1\n", ""));
    let some = run(&config(&wl, "", "queue_depth = 1\n", "fraction = 0.25"));
    let m = map(&some);
    assert_eq!(m.params.cached_pages, 64);
    let miss = 1.0 - m.window.hit_ratio.unwrap();
    assert!((miss - 0.75).abs() < 0.02, "miss ratio {miss}");
    let (a, b) = (&none.timed.as_ref().unwrap().latency_us.all, &some.timed.as_ref().unwrap().latency_us.all);
    assert_eq!(a.count, b.count);
    // each miss: tR + one unit's transfer before the data read
    let per_miss = (b.mean - a.mean) / miss;
    assert!(
        (per_miss / (T_READ_US + XFER_US) - 1.0).abs() < 0.03,
        "{per_miss} us per miss, expected {}",
        T_READ_US + XFER_US
    );
    // a hit costs nothing: the fastest read is the uncached drive's
    assert!((b.min - a.min).abs() < 0.5, "{} vs {}", b.min, a.min);
    // and at a 75% miss ratio the median read is a miss
    assert!((b.p50 - a.p50 - (T_READ_US + XFER_US)).abs() < 0.04 * (T_READ_US + XFER_US), "p50 {} vs {}", b.p50, a.p50);
}

#[test]
fn larger_translation_pages_cost_their_transfer_and_hold_more_entries() {
    // 8 KiB translation pages: 2048 entries, 128 pages; a miss moves two units
    let wl = phases("read_fraction = 0.999", 2_000, 20_000);
    let none = run(&config(&wl, "", "queue_depth = 1\n", ""));
    let some = run(&config(&wl, "", "queue_depth = 1\n", "fraction = 0.25\ntranslation_page = \"8KiB\""));
    let m = map(&some);
    assert_eq!(
        (m.params.entries_per_page, m.params.translation_pages, m.params.cached_pages, m.params.units_per_page),
        (2048, 128, 32, 2)
    );
    let miss = 1.0 - m.window.hit_ratio.unwrap();
    let per_miss =
        (some.timed.as_ref().unwrap().latency_us.all.mean - none.timed.as_ref().unwrap().latency_us.all.mean) / miss;
    assert!((per_miss / (T_READ_US + 2.0 * XFER_US) - 1.0).abs() < 0.03, "{per_miss} us per miss");
}

#[test]
fn with_page_times_a_miss_costs_the_mean_page_read() {
    // TLC word lines of 3 x 16 KiB; reads of LSB / CSB / MSB pages 50 / 100 / 150 us: a
    // translation page's page type is not tracked, so a miss costs the mean, 100 us
    let pages =
        "cell = \"tlc\"\nnand_page_size = \"48KiB\"\nnand_block_size = \"12MiB\"\nt_read_page_us = [50, 100, 150]\n";
    let wl = phases("read_fraction = 0.999", 2_000, 20_000);
    let timing = format!("queue_depth = 1\n{pages}");
    let none = run(&config(&wl, "", &timing, ""));
    let some = run(&config(&wl, "", &timing, "fraction = 0.25"));
    let miss = 1.0 - map(&some).window.hit_ratio.unwrap();
    let per_miss =
        (some.timed.as_ref().unwrap().latency_us.all.mean - none.timed.as_ref().unwrap().latency_us.all.mean) / miss;
    assert!((per_miss / (100.0 + XFER_US) - 1.0).abs() < 0.03, "{per_miss} us per miss");
}

#[test]
fn dirty_evictions_program_translation_pages_and_count_in_waf_with_map() {
    // random writes over the whole drive with 16 of 256 pages cached: nearly every write
    // misses and evicts a dirty page
    let runs = "warmup_drive_writes = 0.25\nmeasure_drive_writes = 0.25\nround_drive_writes = 0.125\n";
    let none = run(&config("", runs, "queue_depth = 32\n", ""));
    let r = run(&config("", runs, "queue_depth = 32\n", "size = \"64KiB\""));
    let m = map(&r);
    let host_pages = r.measure_window.host_write_bytes / 4096;
    let expect_miss = 1.0 - 16.0 / 256.0;
    assert!((m.window.map_reads as f64 / host_pages as f64 - expect_miss).abs() < 0.01);
    assert!(m.window.map_writes as f64 >= 0.99 * m.window.map_reads as f64, "almost every evicted page is dirty");
    let waf_map = (r.measure_window.nand_write_bytes + m.window.map_writes * 4096) as f64
        / r.measure_window.host_write_bytes as f64;
    assert_eq!(m.window.waf_with_map, Some(waf_map));
    assert_eq!(m.waf, r.waf);
    assert!(waf_map > r.waf + 0.9 * expect_miss);
    // the FTL's WAF is untouched (the functional agreement holds)
    assert_eq!(r.waf, none.waf);
    // the extra NAND work lowers the sustained write IOPS
    assert!(r.timed.as_ref().unwrap().measured_iops < 0.95 * none.timed.as_ref().unwrap().measured_iops);
}

#[test]
fn trims_look_up_and_dirty_their_translation_pages() {
    let wl = "[workload]\ntrim_fraction = 0.5\n";
    let runs = "warmup_drive_writes = 0.05\nmeasure_drive_writes = 0.05\nround_drive_writes = 0.05\n";
    let r = run(&config(wl, runs, "queue_depth = 32\n", "size = \"64KiB\""));
    let m = map(&r);
    let c = &r.measure_counters;
    assert_eq!(m.window.lookups, c.host_write_cmds + c.trim_cmds);
}

fn without_perf(r: &SimResult) -> serde_json::Value {
    let mut v = serde_json::to_value(r).unwrap();
    v.as_object_mut().unwrap().remove("perf");
    v
}

#[test]
fn same_seed_same_result_and_off_is_unchanged() {
    let wl = phases("read_fraction = 0.7", 2_000, 20_000);
    let text = config(&wl, "", "queue_depth = 8\n", "fraction = 0.1");
    assert_eq!(without_perf(&run(&text)), without_perf(&run(&text)));
    // off: `enabled = false` and no table give the same result (but for the config echo),
    // with no map_cache anywhere in it
    let absent = without_perf(&run(&config(&wl, "", "queue_depth = 8\n", "")));
    let mut off = without_perf(&run(&config(&wl, "", "queue_depth = 8\n", "enabled = false\nfraction = 0.1")));
    assert!(off["config"]["timing"]["map_cache"].is_object());
    off.as_object_mut().unwrap().insert("config".into(), absent["config"].clone());
    assert_eq!(absent, off);
    let s = absent.to_string();
    assert!(!s.contains("map_cache") && !s.contains("waf_with_map"), "no mapping-cache keys when off");
}

#[test]
fn bad_input_names_the_key() {
    let err = |map: &str| {
        let text = config("", "", "", map);
        match Simulator::from_toml(&text).and_then(|mut s| s.run()) {
            Err(e) => e,
            Ok(_) => panic!("accepted: {map}"),
        }
    };
    let e = err("translation_page = \"4KiB\"");
    assert_eq!((e.kind, e.key.as_deref()), (ErrorKind::Config, Some("timing.map_cache.size")));
    let e = err("size = \"1MiB\"\nfraction = 0.5");
    assert_eq!(e.key.as_deref(), Some("timing.map_cache.fraction"));
    let e = err("size = \"2KiB\"");
    assert_eq!(e.key.as_deref(), Some("timing.map_cache.size"));
    assert!(e.message.contains("4096"), "{}", e.message);
    for f in ["0", "1.5", "-0.1"] {
        assert_eq!(err(&format!("fraction = {f}")).key.as_deref(), Some("timing.map_cache.fraction"));
    }
    for tp in ["\"6KiB\"", "\"32KiB\"", "0"] {
        assert_eq!(
            err(&format!("size = \"1MiB\"\ntranslation_page = {tp}")).key.as_deref(),
            Some("timing.map_cache.translation_page")
        );
    }
    let e = err("size = \"1MiB\"\nbogus = 1");
    assert_eq!(e.kind, ErrorKind::Config);
    assert!(e.to_string().contains("bogus"), "{e}");
    // the model's memory: refused with the cache's share named
    let text = config("", "memory_limit = \"1MiB\"\n", "", "fraction = 1.0");
    let e = Simulator::from_toml(&text).err().expect("refused");
    assert_eq!(e.kind, ErrorKind::Capacity);
    assert!(e.message.contains("mapping-table cache"), "{}", e.message);
    // only the cache's share over the limit: the key is the cache's
    let ftl = Simulator::from_toml(&config("", "", "", "")).unwrap().drive_report().model_memory_bytes;
    let text = config("", &format!("memory_limit = {}\n", ftl + 100), "", "fraction = 1.0");
    let e = Simulator::from_toml(&text).err().expect("refused");
    assert_eq!(e.key.as_deref(), Some("timing.map_cache"));
    let on = Simulator::from_toml(&config("", "", "", "fraction = 1.0")).unwrap().drive_report().model_memory_bytes;
    assert_eq!(on - ftl, 256 * 4 + 256 * 13, "the index and the slots");
}
