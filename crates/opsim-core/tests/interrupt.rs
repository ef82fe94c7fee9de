//! Issue 12 item 7 in the core: an `Interrupt` stops every kind of run at a consistent point.
//! Whole runs return the rounds done (marked `interrupted`), the same as the first rounds of
//! the run left to finish; `run_for` returns an `Interrupted` error and the drive stays usable.

use opsim_core::{ErrorKind, Interrupt, Simulator};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An interrupt that says stop once `after` has passed.
fn after(after: Duration) -> Interrupt {
    let t0 = Instant::now();
    Interrupt::new(move || t0.elapsed() >= after)
}

const DRIVE: &str = "[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 64\n";

fn sim(extra: &str) -> Simulator {
    Simulator::from_toml(&format!("{DRIVE}{extra}")).unwrap()
}

#[test]
fn an_interrupted_run_keeps_the_rounds_it_did_identical() {
    let cfg = |measure: usize| {
        format!("[run]\nprecondition = \"fill\"\nwarmup_drive_writes = 1\nmeasure_drive_writes = {measure}\nround_drive_writes = 1\n")
    };
    let mut s = sim(&cfg(1_000_000));
    s.set_interrupt(after(Duration::from_millis(150)));
    let cut = s.run().unwrap();
    assert!(cut.interrupted);
    let n = cut.rounds.len();
    assert!(n >= 3, "{n} rounds");
    let sum: u64 = cut.rounds.iter().map(|r| r.host_write_bytes).sum();
    assert_eq!(sum, cut.counters.host_write_bytes, "the cut round is counted in the rounds");
    let json = serde_json::to_value(&cut).unwrap();
    assert_eq!(json["interrupted"], true);

    // the same run left to finish (its length does not change the rounds before its end)
    let whole = sim(&cfg(n + 2)).run().unwrap();
    assert!(!whole.interrupted);
    assert!(serde_json::to_value(&whole).unwrap().get("interrupted").is_none());
    assert_eq!(cut.rounds[..n - 1], whole.rounds[..n - 1], "same seed, same rounds up to the cut");
    assert!(cut.rounds[n - 1].host_write_bytes <= whole.rounds[n - 1].host_write_bytes);
}

#[test]
fn phases_pts_and_the_timed_model_stop_too() {
    let phases =
        "[run]\nprecondition = \"none\"\n[[phase]]\ndrive_writes = 100000\n[phase.workload]\ntype = \"sequential\"\n\
                  [[phase]]\ndrive_writes = 100000\n[phase.workload]\ntype = \"uniform\"\n";
    let pts = "[workload]\ntype = \"snia-pts\"\n[run]\nround_drive_writes = 1000\nmax_rounds = 100000\n";
    let timed = "[run]\nprecondition = \"none\"\nwarmup_drive_writes = 0\nmeasure_drive_writes = 100000\n[timing]\nqueue_depth = 32\n";
    let timed_pts = format!("{pts}[timing]\nqueue_depth = 4\n");
    for (what, cfg) in [("phases", phases), ("snia-pts", pts), ("timed", timed), ("timed snia-pts", &timed_pts)] {
        let mut s = sim(cfg);
        s.set_interrupt(after(Duration::from_millis(200)));
        let t = Instant::now();
        let r = s.run().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(t.elapsed() < Duration::from_secs(5), "{what}: stopped late");
        assert!(r.interrupted && !r.rounds.is_empty(), "{what}");
        if cfg.contains("[timing]") {
            assert!(r.timed.is_some(), "{what}: the timed rounds are kept");
        }
        s.check().unwrap();
    }
}

#[test]
fn interrupted_before_anything_is_an_error_and_run_for_stops() {
    let flag = Arc::new(AtomicBool::new(true));
    let mut s = sim("[run]\nprecondition = \"none\"\n");
    s.set_interrupt(Interrupt::from_flag(flag.clone()));
    let e = s.run().expect_err("nothing done");
    assert_eq!(e.kind, ErrorKind::Interrupted);
    let e = s.run_for(u64::MAX / 2).expect_err("stopped");
    assert_eq!(e.kind, ErrorKind::Interrupted);
    // the drive is usable after it
    flag.store(false, Ordering::Relaxed);
    s.run_for(64 << 20).unwrap();
    s.check().unwrap();
    assert!(s.counters().host_write_bytes >= 64 << 20);
}

/// Issue 36 item 2: the build of a large model asks the interrupt while it fills its tables
/// (a 4 TiB drive's took 32 s, deaf to Ctrl-C).
#[test]
fn the_build_of_a_large_model_stops_when_asked() {
    let calls = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let c = calls.clone();
    // false at the first call (before the build), then stop: the fill of 256 GiB's tables
    // (600 MB, a few hundred ms) asks again after 50 ms
    let intr = Interrupt::new(move || c.fetch_add(1, Ordering::Relaxed) >= 1);
    let cfg = opsim_core::Config::from_toml_str("[drive]\nuser_capacity = \"256GiB\"\nop = 0.12\n").unwrap();
    let t = Instant::now();
    let e = Simulator::new_interruptible(cfg.clone(), intr).err().expect("interrupted");
    assert_eq!(e.kind, ErrorKind::Interrupted, "{e}");
    assert!(calls.load(Ordering::Relaxed) >= 2, "stopped by the fill's poll, not before the build");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    // without an interrupt the same config builds
    assert!(Simulator::new_interruptible(cfg, Interrupt::none()).is_ok());
}

/// Issue 36 item 2: a zoned writer opening millions of zones at its first command stops at
/// the run's interrupt (functional and timed): nothing was done, so the run is an
/// `Interrupted` error (as any run stopped before its first round), and the drive is as it was.
#[test]
fn the_opening_of_many_zones_stops_when_asked() {
    let zoned = "[drive]\nuser_capacity = \"16GiB\"\nop = 0.12\n[workload]\ntype = \"zoned\"\nzone_size = \"4KiB\"\n\
                 active_zones = 4194000\n[run]\nprecondition = \"none\"\nwarmup_drive_writes = 1\nmeasure_drive_writes = 1\n";
    for (what, extra) in [("functional", ""), ("timed", "[timing]\nqueue_depth = 32\n")] {
        let mut s = Simulator::from_toml(&format!("{zoned}{extra}")).unwrap();
        s.set_interrupt(after(Duration::from_millis(100)));
        let t = Instant::now();
        let e = s.run().err().unwrap_or_else(|| panic!("{what}: not interrupted"));
        assert_eq!(e.kind, ErrorKind::Interrupted, "{what}: {e}");
        assert!(t.elapsed() < Duration::from_secs(5), "{what}: {:?}", t.elapsed());
        assert_eq!(s.counters().host_write_bytes, 0, "{what}: stopped while opening the zones");
    }
}
