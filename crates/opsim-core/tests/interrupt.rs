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
