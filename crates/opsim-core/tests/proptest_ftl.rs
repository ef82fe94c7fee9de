//! Property tests: random host command sequences (writes of any size and offset, reads,
//! trims, security erases, max-address changes, power cycles) keep every FTL invariant and
//! lose no written data, with and without the dynamic SLC cache (fold or direct when full,
//! with and without a static part).  A shadow model records, per logical page, the command number that
//! last wrote it; after every command the drive must return exactly that.

use opsim_core::{Error, ErrorKind, Simulator};
use proptest::prelude::*;
use std::collections::HashMap;

#[derive(Clone, Debug)]
enum Cmd {
    Write { lba: u64, sectors: u64, stream: u32 },
    Read { lba: u64, sectors: u64 },
    Trim { lba: u64, sectors: u64 },
    Erase,
    SetMax { frac: u8, volatile: bool },
    PowerCycle,
}

fn cmd(total: u64) -> impl Strategy<Value = Cmd> {
    let range = (0..total, 1u64..64).prop_map(move |(lba, n)| (lba, n.min(total - lba)));
    prop_oneof![
        60 => (range.clone(), 0u32..2).prop_map(|((lba, sectors), stream)| Cmd::Write { lba, sectors, stream }),
        10 => range.clone().prop_map(|(lba, sectors)| Cmd::Read { lba, sectors }),
        15 => range.prop_map(|(lba, sectors)| Cmd::Trim { lba, sectors }),
        2 => Just(Cmd::Erase),
        5 => (1u8..=100, any::<bool>()).prop_map(|(frac, volatile)| Cmd::SetMax { frac, volatile }),
        5 => Just(Cmd::PowerCycle),
    ]
}

fn sim(gc: &str, b: u32) -> Simulator {
    sim_slc(gc, b, None)
}

/// `slc`: the body of an `[ftl.slc_cache]` table, or no cache.
fn sim_slc(gc: &str, b: u32, slc: Option<&str>) -> Simulator {
    sim_knobs(gc, b, slc, "", 0.25)
}

/// `knobs`: more `[ftl]` keys (GC frontier, scope, reserve); the drive has 2 dies of 2 planes.
fn sim_knobs(gc: &str, b: u32, slc: Option<&str>, knobs: &str, op: f64) -> Simulator {
    let extra = if gc == "d-choices" { format!("d = 3\n{knobs}") } else { knobs.to_owned() };
    let slc = slc.map(|t| format!("[ftl.slc_cache]\n{t}")).unwrap_or_default();
    Simulator::from_toml(&format!(
        r#"
        [drive]
        user_capacity = "2MiB"
        op = {op}
        pages_per_block = {b}
        dies = 2
        planes_per_die = 2
        [ftl]
        gc = "{gc}"
        {extra}
        streams = 2
        check_invariants = true
        {slc}
        [run]
        track_data = true
        precondition = "none"
        "#
    ))
    .unwrap()
}

fn run_case(gc: &str, b: u32, cmds: Vec<Cmd>) -> Result<(), TestCaseError> {
    run_case_slc(gc, b, None, cmds)
}

fn run_case_slc(gc: &str, b: u32, slc: Option<&str>, cmds: Vec<Cmd>) -> Result<(), TestCaseError> {
    run_case_knobs(gc, b, slc, "", cmds)
}

/// With `knobs`, the drive has OP 0.5: a pool per plane keeps its own reserve and frontiers.
fn run_case_knobs(gc: &str, b: u32, slc: Option<&str>, knobs: &str, cmds: Vec<Cmd>) -> Result<(), TestCaseError> {
    let mut s = sim_knobs(gc, b, slc, knobs, if knobs.is_empty() { 0.25 } else { 0.5 });
    let spp = s.geometry().sectors_per_page();
    let total = s.max_address_sectors();
    let pages = total / spp;
    let mut shadow: HashMap<u64, u64> = HashMap::new();
    let mut cmd_no = 0u64;
    for c in cmds {
        match c {
            Cmd::Write { lba, sectors, stream } => {
                let r = s.write(lba, sectors, stream);
                if lba + sectors > s.max_address_sectors() {
                    let refused = matches!(r, Err(Error { kind: ErrorKind::Device, .. }));
                    prop_assert!(refused, "write past the max address was not refused");
                    continue;
                }
                r.map_err(|e| TestCaseError::fail(e.to_string()))?;
                cmd_no += 1;
                for lpn in lba / spp..=(lba + sectors - 1) / spp {
                    shadow.insert(lpn, cmd_no);
                }
            }
            Cmd::Read { lba, sectors } => {
                let r = s.read(lba, sectors);
                prop_assert_eq!(r.is_ok(), lba + sectors <= s.max_address_sectors());
            }
            Cmd::Trim { lba, sectors } => {
                if s.trim(lba, sectors).is_ok() {
                    for lpn in lba.div_ceil(spp)..(lba + sectors) / spp {
                        shadow.remove(&lpn);
                    }
                }
            }
            Cmd::Erase => {
                s.security_erase();
                shadow.clear();
            }
            Cmd::SetMax { frac, volatile } => {
                let sectors = (total * frac as u64 / 100).max(1);
                let _ = s.set_max_address(sectors, volatile);
            }
            Cmd::PowerCycle => s.power_cycle(),
        }
        s.check().map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    // No data lost: every page holds exactly what the shadow says, hidden LBAs included.
    let max = s.max_address_sectors();
    s.power_cycle();
    let _ = s.set_max_address(total, false);
    for lpn in 0..pages {
        let got = s.read_token(lpn * spp).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(got, shadow.get(&lpn).copied(), "page {} (max address was {})", lpn, max);
    }
    prop_assert_eq!(s.mapped_pages(), shadow.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn greedy_keeps_invariants(cmds in prop::collection::vec(cmd(4096), 1..400)) {
        run_case("greedy", 8, cmds)?;
    }

    #[test]
    fn fifo_keeps_invariants(cmds in prop::collection::vec(cmd(4096), 1..400)) {
        run_case("fifo", 8, cmds)?;
    }

    #[test]
    fn dchoices_keeps_invariants(cmds in prop::collection::vec(cmd(4096), 1..400)) {
        run_case("d-choices", 16, cmds)?;
    }

    #[test]
    fn slc_cache_keeps_invariants(cmds in prop::collection::vec(cmd(4096), 1..400)) {
        // 40 blocks of 8 pages (SLC mode: 2): a static part of 2 blocks, folding or direct
        run_case_slc("greedy", 8, Some("min_fraction = 0.05"), cmds.clone())?;
        run_case_slc("fifo", 8, Some("when_full = \"direct\"\nmin_fraction = 0.05\nmax_fraction = 0.2"), cmds.clone())?;
        run_case_slc("d-choices", 16, Some("bits_per_cell = 2"), cmds)?;
    }

    #[test]
    fn gc_scope_frontier_and_reserve_keep_invariants(cmds in prop::collection::vec(cmd(4096), 1..400)) {
        // 80 blocks of 8 pages in 4 planes; every block holds only its plane's logical pages
        run_case_knobs("greedy", 8, None, "gc_scope = \"plane\"\ngc_frontier = \"shared\"", cmds.clone())?;
        run_case_knobs("fifo", 8, None, "gc_scope = \"die\"\ngc_reserve = \"2 blocks per plane\"", cmds.clone())?;
        run_case_knobs("d-choices", 16, None, "gc_frontier = \"shared\"\ngc_reserve = \"3 blocks per drive\"", cmds.clone())?;
        run_case_knobs("cost-benefit", 8, None, "gc_scope = \"plane\"", cmds)?;
    }

    #[test]
    fn windowed_and_cost_benefit_keep_invariants(cmds in prop::collection::vec(cmd(4096), 1..300)) {
        run_case("windowed-greedy", 8, cmds.clone())?;
        run_case("cost-benefit", 8, cmds)?;
    }
}

/// A long random-write run through GC and SLC folds many times over, checked after every
/// GC and every fold.
#[test]
fn long_random_run_with_slc_cache() {
    for slc in ["min_fraction = 0.05", "min_fraction = 0.05\nwhen_full = \"direct\"", ""] {
        let mut s = sim_slc("greedy", 8, Some(slc));
        let total = s.max_address_sectors();
        let mut x = 777u64;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let lba = x % total;
            let n = (1 + (x >> 40) % 16).min(total - lba);
            if i % 50 == 49 {
                s.trim(lba, n).unwrap();
            } else {
                s.write(lba, n, ((x >> 20) & 1) as u32).unwrap();
            }
        }
        assert!(s.counters().folds > 20, "{slc}: {} folds", s.counters().folds);
        s.check().unwrap();
    }
}

/// A long random-write run through GC many times over, checked after every GC.
#[test]
fn long_random_run_with_checks_after_every_gc() {
    let mut s = sim("greedy", 8);
    let total = s.max_address_sectors();
    let mut x = 12345u64;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let lba = x % total;
        let n = (1 + (x >> 40) % 16).min(total - lba);
        s.write(lba, n, ((x >> 20) & 1) as u32).unwrap();
    }
    assert!(s.counters().erases > 100);
    s.check().unwrap();
}
