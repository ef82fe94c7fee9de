//! The WAF floor (`ftl.meta_writes`): metadata pages programmed per host page beyond the data
//! and its GC copies.  They keep every FTL invariant (checked after every collection) with FTL
//! blocks and superblocks, streams, placement handles, a shared frontier, GC per die and an
//! SLC cache; they are counted exactly (a fixed-point accumulator, no random numbers); WAF
//! tends to 1 + meta_writes as the spare grows and is raised by more than meta_writes at a
//! small spare (the pages take space GC must free); the timed model charges them and the cost
//! model's bound follows; bad values are refused naming the key.

use opsim_core::describe::describe;
use opsim_core::sim::SimResult;
use opsim_core::timed::costs::{costs, Mix};
use opsim_core::{Config, Simulator};

fn run(text: &str) -> SimResult {
    let mut s = Simulator::from_toml(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let r = s.run().unwrap_or_else(|e| panic!("{e}\n{text}"));
    s.check().unwrap_or_else(|e| panic!("{e}\n{text}"));
    r
}

fn uniform(op: f64, meta: f64, extra: &str) -> String {
    format!(
        "[drive]\nuser_capacity = \"32MiB\"\nop = {op}\npages_per_block = 64\n\
         [ftl]\nmeta_writes = {meta}\ncheck_invariants = true\n{extra}\n\
         [workload]\ntype = \"uniform\"\n\
         [run]\nseed = 7\nprecondition = \"fill\"\nwarmup_drive_writes = 2\nmeasure_drive_writes = 1\nround_drive_writes = 0.5\n"
    )
}

/// Metadata pages are counted exactly: one per whole page owed, over the run's host pages.
fn assert_counted(r: &SimResult, meta: f64) {
    let c = &r.counters;
    let owed = (c.host_write_pages as f64 * meta).floor() as u64;
    assert!(c.meta_pages == owed || c.meta_pages + 1 == owed, "{} metadata pages, {owed} owed", c.meta_pages);
    let m = &r.measure_counters;
    assert_eq!(m.nand_write_pages, m.host_write_pages + m.gc_copy_pages + m.fold_pages + m.meta_pages);
    let share = r.meta_share.expect("meta_share with meta_writes on");
    assert_eq!(share, m.meta_pages as f64 / m.nand_write_pages as f64);
}

#[test]
fn waf_tends_to_one_plus_meta_writes_with_a_large_spare() {
    for (meta, op) in [(0.04, 4.0), (0.25, 4.0), (1.0, 16.0)] {
        let r = run(&uniform(op, meta, ""));
        assert_counted(&r, meta);
        // a spare of many times the user data: GC copies next to nothing
        let copies = r.measure_counters.gc_copy_pages as f64 / r.measure_counters.host_write_pages as f64;
        assert!(copies < 0.01, "{meta}: {copies} copies per host page");
        assert!(r.waf >= 1.0 + meta - 1e-3 && r.waf < 1.0 + meta + 0.015, "{meta}: WAF {}", r.waf);
    }
}

#[test]
fn metadata_takes_space_garbage_collection_must_free() {
    let off = run(&uniform(0.1, 0.0, ""));
    assert!(off.meta_share.is_none() && off.measure_counters.meta_pages == 0);
    let meta = 0.05;
    let on = run(&uniform(0.1, meta, ""));
    assert_counted(&on, meta);
    // more than the metadata itself: it fills blocks, so GC runs more often and copies more
    assert!(on.waf > off.waf + meta + 0.05, "{} vs {} + {meta}", on.waf, off.waf);
    let (c_off, c_on) = (off.measure_counters.gc_copy_pages, on.measure_counters.gc_copy_pages);
    assert!(c_on as f64 > 1.05 * c_off as f64, "{c_on} vs {c_off} copies");
}

#[test]
fn off_is_the_key_not_given() {
    let strip = |r: &SimResult| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("perf");
        v
    };
    let given = run(&uniform(0.1, 0.0, ""));
    let absent = run(&uniform(0.1, 0.0, "").replace("meta_writes = 0\n", ""));
    assert_eq!(strip(&given), strip(&absent));
    assert!(!serde_json::to_string(&given).unwrap().contains("meta"));
}

#[test]
fn the_count_does_not_depend_on_the_seed() {
    let a = run(&uniform(0.2, 0.1, ""));
    let b = run(&uniform(0.2, 0.1, "").replace("seed = 7", "seed = 8"));
    assert_eq!(a.counters.host_write_pages, b.counters.host_write_pages);
    assert_eq!(a.counters.meta_pages, b.counters.meta_pages);
}

#[test]
fn every_layout_keeps_its_invariants() {
    let meta = 0.3;
    let layouts = [
        "streams = 3",
        "gc_frontier = \"shared\"",
        "gc_scope = \"die\"",
        "gc = \"fifo\"\n[ftl.slc_cache]\nmax_fraction = 0.2\nmin_fraction = 0.02",
        "[ftl.placement]\nmode = \"fdp\"\nisolation = \"persistently\"\nhandles = 2",
    ];
    for extra in layouts {
        let mut text = uniform(0.15, meta, extra);
        if extra.contains("gc_scope") {
            text = text.replace("pages_per_block = 64", "pages_per_block = 64\ndies = 3");
        }
        let r = run(&text);
        assert_counted(&r, meta);
        assert!(r.waf > 1.0 + meta, "{extra}: {}", r.waf);
        assert_eq!(r.handles.is_empty(), !extra.contains("fdp"), "{extra}");
        if !r.handles.is_empty() {
            // each handle carries the metadata of its own writes: the handles add up to the drive
            let nand: u64 = r.handles.iter().map(|h| h.nand_write_bytes).sum();
            assert_eq!(nand, r.measure_counters.nand_write_pages * r.drive.page_size, "{extra}");
        }
    }
    // superblocks: 64 KiB x 2 planes x 2 dies of 4 KiB pages, scaled down by 2
    let sb = "[drive]\nuser_capacity = \"3MiB\"\nphysical_capacity = \"4MiB\"\n\
              [ftl]\ngc_unit = \"superblock\"\nsuperblock_scale = 2\nstreams = 2\nmeta_writes = 0.3\ncheck_invariants = true\n\
              [workload]\ntype = \"uniform\"\n\
              [run]\nprecondition = \"fill\"\nwarmup_drive_writes = 2\nmeasure_drive_writes = 1\nround_drive_writes = 0.5\n\
              [timing]\nnand_block_size = \"64KiB\"\nnand_page_size = \"16KiB\"\nplanes = 2\nchannels = 2\ndies_per_channel = 1\n";
    let r = run(sb);
    assert_eq!(r.drive.pages_per_block, 32);
    assert_counted(&r, meta);
}

#[test]
fn namespaces_count_their_metadata() {
    let text = uniform(0.2, 0.1, "")
        + "[[namespace]]\nname = \"a\"\ncapacity = \"50%\"\nshare = 0.7\n[namespace.workload]\ntype = \"uniform\"\n\
           [[namespace]]\nname = \"b\"\ncapacity = \"50%\"\nshare = 0.3\n[namespace.workload]\ntype = \"uniform\"\n";
    let text = text.replace("[workload]\ntype = \"uniform\"\n", "");
    let r = run(&text);
    assert_counted(&r, 0.1);
    let ns: u64 = r.namespaces.iter().map(|n| n.nand_write_bytes).sum();
    assert_eq!(ns, r.measure_counters.nand_write_pages * r.drive.page_size);
}

#[test]
fn bad_values_are_refused_naming_the_key() {
    for v in ["-0.01", "1.5", "nan", "inf"] {
        let text = uniform(0.1, 0.0, "").replace("meta_writes = 0", &format!("meta_writes = {v}"));
        let e = match Simulator::from_toml(&text) {
            Err(e) => e,
            Ok(_) => panic!("{v} accepted"),
        };
        assert_eq!(e.key.as_deref(), Some("ftl.meta_writes"), "{v}: {e}");
        let d = describe(Config::from_toml_str(&text).unwrap(), false).unwrap_err();
        assert_eq!(d.key.as_deref(), Some("ftl.meta_writes"));
    }
    let text = uniform(0.1, 0.0, "").replace("meta_writes = 0", "meta_writes = \"4%\"");
    let e = Config::from_toml_str(&text).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("ftl.meta_writes"), "{e}");
}

/// The timed model programs the metadata pages: a write-bound run loses IOPS, and its
/// bound from `costs()` (the GC WAF without the metadata, which the model adds) follows.
#[test]
fn timed_runs_pay_for_metadata_and_the_cost_model_follows() {
    let text = |meta: f64| {
        format!(
            "[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\npages_per_block = 64\n\
             [ftl]\nmeta_writes = {meta}\n[timing]\n[workload]\ntype = \"uniform\"\n\
             [run]\nprecondition = \"fill\"\nwarmup_drive_writes = 1\nmeasure_drive_writes = 1\nround_drive_writes = 0.25\n"
        )
    };
    let mix =
        Mix { write_fraction: 1.0, units_per_io: 1.0, bytes_per_io: 4096.0, sequential: false, queue_depth: None };
    let mut last = f64::INFINITY;
    for meta in [0.0, 0.2] {
        let cfg = Config::from_toml_str(&text(meta)).unwrap();
        let model = describe(cfg.clone(), true).unwrap().cost_model.unwrap();
        assert_eq!(model.meta_writes, meta);
        let r = Simulator::new(cfg).unwrap().run().unwrap();
        let m = &r.measure_counters;
        let waf_gc = 1.0 + m.gc_copy_pages as f64 / m.host_write_pages as f64;
        let c = costs(&model, &mix, waf_gc).unwrap();
        let iops = r.timed.unwrap().measured_iops;
        assert_eq!(c.bottleneck, "NAND dies");
        assert!(iops <= c.iops * 1.001 && iops >= 0.93 * c.iops, "{meta}: {iops} vs {}", c.iops);
        assert!(iops < 0.95 * last, "{meta}: {iops} vs {last}");
        last = iops;
    }
}
