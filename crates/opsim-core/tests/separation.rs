//! Temperature separation of GC copies (`ftl.separation = "gc-age"`): every FTL invariant
//! holds (checked after every collection) with blocks and superblocks, GC per die, streams,
//! shared placement handles and an SLC cache (`"gc-age"`; `"sepbit"` also with metadata
//! pages); "none" is the key not given, bit for bit; under Zipf writes SepBIT's host classes
//! lower WAF, under uniform writes the units held open only take spare; the open GC units are blocks held back (the capacity check and the
//! memory estimate count them); bad combinations are refused naming the key.

use opsim_core::sim::SimResult;
use opsim_core::{ErrorKind, Simulator};

fn run(text: &str) -> SimResult {
    let mut s = Simulator::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let r = s.run().unwrap_or_else(|e| panic!("{e}\n{text}"));
    s.check().unwrap_or_else(|e| panic!("{e}\n{text}"));
    r
}

fn cfg(workload: &str, ftl: &str, drive: &str, seed: u64) -> String {
    format!(
        "[drive]\nuser_capacity = \"32MiB\"\nphysical_capacity = \"36MiB\"\npages_per_block = 64\n{drive}\n\
         [ftl]\ncheck_invariants = true\n{ftl}\n\
         [workload]\n{workload}\n\
         [run]\nseed = {seed}\nprecondition = \"fill\"\nwarmup_drive_writes = 3\nmeasure_drive_writes = 2\nround_drive_writes = 0.5\n"
    )
}

const HOT_COLD: &str = "type = \"hot-cold\"\nhot_fraction = 0.1\nhot_write_fraction = 0.9";
const ZIPF: &str = "type = \"zipf\"\nzipf_exponent = 0.9";
const UNIFORM: &str = "type = \"uniform\"";
const GC_AGE: &str = "separation = \"gc-age\"";
const SEPBIT: &str = "separation = \"sepbit\"";

#[test]
fn invariants_hold_with_every_layout() {
    for (ftl, drive) in [
        (GC_AGE, ""),
        ("separation = \"gc-age\"\nseparation_classes = 2", ""),
        ("separation = \"gc-age\"\nseparation_classes = 8", ""),
        ("separation = \"gc-age\"\nseparation_classes = 2\ngc_scope = \"die\"", "dies = 2"),
        ("separation = \"sepbit\"", ""),
        ("separation = \"sepbit\"\nstreams = 2\nmeta_writes = 0.05", ""),
        ("separation = \"sepbit\"\n[ftl.slc_cache]\nmax_fraction = 0.1\nmin_fraction = 0.02", ""),
        ("separation = \"gc-age\"\ngc = \"cost-benefit\"", ""),
        ("separation = \"gc-age\"\nstreams = 2", ""),
        ("separation = \"gc-age\"\n[ftl.slc_cache]\nmax_fraction = 0.1\nmin_fraction = 0.02", ""),
        ("separation = \"gc-age\"\n[ftl.placement]\nmode = \"fdp\"\nhandles = 2", ""),
    ] {
        let r = run(&cfg(ZIPF, ftl, drive, 3));
        assert!(r.waf > 1.0, "{ftl}: WAF {}", r.waf);
    }
    // superblocks: 64 KiB x 2 planes x 2 dies of 4 KiB pages, scaled down by 2
    let sb = "[drive]\nuser_capacity = \"3MiB\"\nphysical_capacity = \"4MiB\"\n\
              [ftl]\ngc_unit = \"superblock\"\nsuperblock_scale = 2\nseparation = \"gc-age\"\ncheck_invariants = true\n\
              [workload]\ntype = \"zipf\"\nzipf_exponent = 0.8\n\
              [run]\nprecondition = \"fill\"\nwarmup_drive_writes = 2\nmeasure_drive_writes = 1\nround_drive_writes = 0.5\n\
              [timing]\nnand_block_size = \"64KiB\"\nnand_page_size = \"16KiB\"\nplanes = 2\nchannels = 2\ndies_per_channel = 1\n";
    let r = run(sb);
    assert_eq!(r.drive.pages_per_block, 32);
}

#[test]
fn none_is_the_key_not_given() {
    let strip = |r: &SimResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("perf");
        v
    };
    for wl in [HOT_COLD, UNIFORM] {
        let given = run(&cfg(wl, "separation = \"none\"", "", 5));
        let absent = run(&cfg(wl, "", "", 5));
        assert_eq!(strip(&given), strip(&absent));
        let on = run(&cfg(wl, GC_AGE, "", 5));
        assert_ne!(strip(&on), strip(&absent), "gc-age changed nothing");
    }
}

/// A larger model (1,152 blocks of 128 pages, 12.5% spare) without the invariant checker: the
/// open units separation holds back are a small share of its spare, as on a real drive.
fn larger(workload: &str, ftl: &str) -> f64 {
    let text = cfg(workload, ftl, "", 1)
        .replace(
            "user_capacity = \"32MiB\"\nphysical_capacity = \"36MiB\"\npages_per_block = 64",
            "user_capacity = \"128MiB\"\nphysical_capacity = \"144MiB\"\npages_per_block = 128",
        )
        .replace("check_invariants = true", "");
    run(&text).waf
}

#[test]
fn host_classes_lower_waf_under_skew_and_held_back_units_cost_under_uniform_writes() {
    // Zipf 0.9: the hot and cold host frontiers keep rewritten pages apart from cold ones
    // (4.54 against 4.89 here); GC ages alone barely move it
    let (off, age, sepbit) = (larger(ZIPF, ""), larger(ZIPF, GC_AGE), larger(ZIPF, SEPBIT));
    assert!(sepbit < 0.95 * off && sepbit < 0.95 * age, "zipf: none {off}, gc-age {age}, sepbit {sepbit}");
    assert!((age / off - 1.0).abs() < 0.03, "zipf: none {off}, gc-age {age}");
    // uniform writes have no temperature to separate: the units held open only take spare
    // (4.93 and 5.00 against 4.72 here, 1,152 blocks; far less on a drive of thousands)
    let off = larger(UNIFORM, "");
    for sep in [GC_AGE, SEPBIT] {
        let on = larger(UNIFORM, sep);
        assert!(on > off && on < 1.08 * off, "uniform: {sep} {on} vs none {off}");
    }
}

#[test]
fn open_gc_units_are_held_back() {
    // 64 blocks of 64 pages: user data fills 56 after the 12% OP; the reserve (2), a host
    // frontier and a GC frontier leave room, 8 GC frontiers do not
    let text = |ftl: &str| {
        format!(
            "[drive]\nuser_capacity = \"14MiB\"\nphysical_capacity = \"16MiB\"\npages_per_block = 64\n[ftl]\n{ftl}\n"
        )
    };
    Simulator::from_toml(&text("")).expect("one GC frontier fits");
    let e = Simulator::from_toml(&text("separation = \"gc-age\"\nseparation_classes = 8")).err().expect("refused");
    assert_eq!(e.kind, ErrorKind::Capacity);
    assert_eq!(e.key.as_deref(), Some("drive.op"));
    assert!(e.message.contains("8 GC frontiers (ftl.separation's classes)"), "{e}");
    // the GC classes are a byte per block in the model's memory
    let plain = Simulator::from_toml(&cfg(UNIFORM, "", "", 1)).unwrap();
    let sep = Simulator::from_toml(&cfg(UNIFORM, GC_AGE, "", 1)).unwrap();
    let blocks = plain.geometry().blocks as u64;
    assert_eq!(sep.drive_report().model_memory_bytes, plain.drive_report().model_memory_bytes + blocks);
}

#[test]
fn bad_combinations_are_refused_naming_the_key() {
    for (ftl, key) in [
        ("separation = \"hot\"", "ftl.separation"),
        ("separation = \"gc-age\"\ngc_frontier = \"shared\"", "ftl.separation"),
        ("separation = \"sepbit\"\ngc_frontier = \"shared\"", "ftl.separation"),
        ("separation = \"sepbit\"\n[ftl.placement]\nmode = \"fdp\"\nhandles = 2", "ftl.separation"),
        ("separation_classes = 4", "ftl.separation_classes"),
        ("separation = \"gc-age\"\nseparation_classes = 0", "ftl.separation_classes"),
    ] {
        let e = Simulator::from_toml(&cfg(UNIFORM, ftl, "", 1)).err().unwrap_or_else(|| panic!("{ftl}: accepted"));
        assert_eq!(e.kind, ErrorKind::Config, "{ftl}: {e}");
        assert!(e.key.as_deref() == Some(key) || e.message.contains(key), "{ftl}: {e}");
    }
}
