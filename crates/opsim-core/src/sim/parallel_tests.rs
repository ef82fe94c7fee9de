//! The parallel run against the serial one: random configs and random command sequences give
//! the same results with 1 thread (one FTL) and with several (the pools); a panic in a worker
//! becomes an error; an interrupt stops a threaded run at once, the pools consistent.

use crate::config::Config;
use crate::error::ErrorKind;
use crate::ftl::{FtlParams, Greedy, Policy};
use crate::interrupt::Interrupt;
use crate::par::Pools;
use crate::rng::Rng;
use crate::sim::Simulator;
use proptest::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A whole run's JSON without `perf` (the machine's part: wall clock, the threads used), and
/// the threads it ran on; `toml` without `[run]`, which `run` (its keys) and `threads` make.
fn run_json(toml: &str, run: &str, threads: u32) -> (serde_json::Value, u32) {
    let text = format!("{toml}[run]\n{run}\nthreads = {threads}\n");
    let mut v = match Simulator::new(Config::from_toml_str(&text).unwrap()).and_then(|mut s| s.run()) {
        Ok(r) => serde_json::to_value(&r).unwrap(),
        Err(e) => return (serde_json::json!({ "error": e.to_string() }), 1),
    };
    let used = v["perf"]["parallel"]["threads"].as_u64().unwrap() as u32;
    v.as_object_mut().unwrap().remove("perf");
    (v, used)
}

/// A drive of `dies x planes` GC pools (`scope`) of 64 blocks of 32 pages each, without `[run]`.
fn drive(dies: u32, planes: u32, scope: &str, ftl: &str, wl: &str) -> String {
    format!(
        "[drive]\nphysical_capacity = \"{mib}MiB\"\nop = 0.15\nop_basis = \"physical\"\npages_per_block = 32\n\
         dies = {dies}\nplanes_per_die = {planes}\n[ftl]\ngc_scope = \"{scope}\"\n{ftl}\n[workload]\n{wl}\n",
        mib = 8 * dies * planes,
    )
}

fn workload() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just("type = \"uniform\""),
        Just("type = \"zipf\"\nzipf_exponent = 0.9"),
        Just("type = \"hot-cold\"\nhot_fraction = 0.1\nhot_write_fraction = 0.9"),
        Just("type = \"sequential\"\nrequest_size = \"64KiB\""),
        Just("type = \"zoned\"\nzone_size = \"512KiB\"\nactive_zones = 2"),
        Just("type = \"uniform\"\nread_fraction = 0.2\ntrim_fraction = 0.1\nrequest_size = \"6KiB\"\nalign = \"512B\""),
    ]
}

fn ftl_keys() -> impl Strategy<Value = String> {
    let gc = prop_oneof![Just("greedy"), Just("fifo"), Just("cost-benefit"), Just("windowed-greedy")];
    (gc, prop_oneof![Just(0.0), Just(0.07)], 1u32..3, any::<bool>()).prop_map(|(gc, meta, streams, shared)| {
        let window = if gc == "windowed-greedy" { "window = 6\n" } else { "" };
        let frontier = if shared { "gc_frontier = \"shared\"\n" } else { "" };
        format!("gc = \"{gc}\"\nmeta_writes = {meta}\nstreams = {streams}\n{window}{frontier}")
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random drives of independent pools, policies, workloads and knobs: the JSON of a
    /// threaded run is the serial run's, bit for bit.
    #[test]
    fn threaded_runs_give_the_serial_result(
        dies in 2u32..6, planes in 1u32..3, plane_scope in any::<bool>(), ftl in ftl_keys(), wl in workload(),
        threads in 2u32..5, seed in 0u64..1000,
    ) {
        let toml = drive(dies, planes, if plane_scope { "plane" } else { "die" }, &ftl, wl);
        let run = format!("seed = {seed}\nwarmup_drive_writes = 0.8\nmeasure_drive_writes = 0.8\nround_drive_writes = 0.4");
        let (a, one) = run_json(&toml, &run, 1);
        let (b, many) = run_json(&toml, &run, threads);
        if let Some(e) = a.get("error") {
            // a drawn drive its workload does not fit (FIFO's GC on 2 zones of a 16 MiB drive): the
            // threaded run refuses it with the same words
            prop_assert!(e.as_str().is_some_and(|e| e.contains("does not fit")), "{}: {}", toml, a);
            prop_assert_eq!(a, b);
            return Ok(());
        }
        prop_assert_eq!((one, many), (1, threads.min(dies * if plane_scope { planes } else { 1 })));
        prop_assert_eq!(a, b);
    }

    /// Random host commands through the simulator's command API (writes of any size and
    /// offset, reads, trims, security erases): counters, free blocks and wear after each are
    /// one FTL's.
    #[test]
    fn threaded_commands_keep_the_serial_state(seed in 0u64..10_000, threads in 2u32..4) {
        let toml = drive(2, 2, "plane", "gc = \"greedy\"\nstreams = 2\ncheck_invariants = true", "type = \"uniform\"");
        let make = |t: u32| Simulator::new(Config::from_toml_str(&format!("{toml}[run]\nthreads = {t}\n")).unwrap()).unwrap();
        let (mut a, mut b) = (make(1), make(threads));
        prop_assert_eq!(b.parallelism().threads, threads);
        let total = a.max_address_sectors();
        let mut rng = Rng::stream(seed, 1);
        for _ in 0..3000 {
            let lba = rng.below(total);
            let n = (1 + rng.below(40)).min(total - lba);
            let (k, s) = (rng.below(100), rng.below(2) as u32);
            let (x, y) = match k {
                0..=69 => (a.write(lba, n, s), b.write(lba, n, s)),
                70..=84 => (a.read(lba, n), b.read(lba, n)),
                85..=98 => (a.trim(lba, n), b.trim(lba, n)),
                _ => { a.security_erase(); b.security_erase(); (Ok(()), Ok(())) }
            };
            prop_assert_eq!(x.map_err(|e| e.to_string()), y.map_err(|e| e.to_string()));
            prop_assert_eq!(a.counters(), b.counters());
            prop_assert_eq!(a.free_blocks(), b.free_blocks());
            prop_assert_eq!(a.mapped_pages(), b.mapped_pages());
        }
        prop_assert_eq!(serde_json::to_value(a.wear()).unwrap(), serde_json::to_value(b.wear()).unwrap());
        b.check().unwrap();
    }
}

/// Greedy, but its victim choice panics: a worker's panic.
struct Boom(Greedy);

impl Policy for Boom {
    const NAME: &'static str = "boom";
    const TRACKS_INVALIDATE: bool = true;
    fn new(blocks: u32, ppb: u32, param: u32) -> crate::Result<Self> {
        Ok(Boom(Greedy::new(blocks, ppb, param)?))
    }
    fn on_close(&mut self, blk: u32, valid: &[u32], now: u64) {
        self.0.on_close(blk, valid, now)
    }
    fn on_invalidate(&mut self, blk: u32, old_valid: u32, now: u64) {
        self.0.on_invalidate(blk, old_valid, now)
    }
    fn select(&mut self, _valid: &[u32], _rng: &mut Rng, _now: u64) -> Option<u32> {
        panic!("boom")
    }
    fn clear(&mut self) {
        self.0.clear()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn members(&self) -> Vec<u32> {
        self.0.members()
    }
    fn check(&self, valid: &[u32]) -> Result<(), String> {
        self.0.check(valid)
    }
}

fn params(pools: u32) -> FtlParams {
    FtlParams {
        blocks: 16 * pools,
        pages_per_block: 32,
        lpns: 12 * 32 * pools,
        page_size: 4096,
        sector_size: 512,
        streams: 1,
        gc_low: 2,
        gc_high: 3,
        policy_param: 0,
        check: false,
        track_data: false,
        seed: 1,
        slc: None,
        placement: None,
        groups: pools,
        shared_frontier: false,
        meta_rate: 0,
        gc_classes: 1,
        host_classes: 1,
    }
}

#[test]
fn a_panic_in_a_worker_is_an_error_and_the_run_returns() {
    let mut p = Pools::<Boom>::try_new(&params(4), 4, 2, &mut Interrupt::none()).unwrap();
    let lpns = 12 * 32 * 4;
    let e = p
        .run(2, |split, sink| {
            for i in 0..50 * lpns {
                split.write_pages(i % lpns, 1, 0, sink)?;
            }
            Ok(())
        })
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Internal);
    assert!(e.message.contains("a simulation thread panicked: boom"), "{e}");
}

#[test]
fn an_interrupt_stops_a_threaded_run_at_once_and_the_pools_stay_consistent() {
    let toml = drive(4, 1, "die", "gc = \"greedy\"", "type = \"uniform\"");
    let text = format!("{toml}[run]\nthreads = 2\nwarmup_drive_writes = 0\nmeasure_drive_writes = 1000\n");
    let mut s = Simulator::new(Config::from_toml_str(&text).unwrap()).unwrap();
    let flag = Arc::new(AtomicBool::new(false));
    s.set_interrupt(Interrupt::from_flag(flag.clone()));
    let f = flag.clone();
    let t0 = Instant::now();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        f.store(true, Ordering::Relaxed);
    });
    let r = s.run().unwrap();
    stopper.join().unwrap();
    assert!(r.interrupted);
    assert!(t0.elapsed() < Duration::from_secs(2), "stopped in {:?}", t0.elapsed());
    s.check().unwrap();
    let c = s.counters();
    assert!(c.host_write_pages > 0 && c.nand_write_pages >= c.host_write_pages);
}
