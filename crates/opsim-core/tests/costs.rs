//! The cost model (`timed::costs`) against the event model it is derived from: closed-loop
//! runs at a high queue depth approach its bound when one resource dominates, never pass it.

use opsim_core::describe::describe;
use opsim_core::timed::costs::{costs, Mix};
use opsim_core::{Config, Simulator};

/// (measured IOPS, the bound, the bottleneck) of a run of `timing` and `workload`.
fn run(timing: &str, workload: &str, request: f64, read: f64) -> (f64, f64, &'static str) {
    run_mix(timing, workload, request, read, false)
}

/// The same, the reads `sequential` in the cost model's mix.
fn run_mix(timing: &str, workload: &str, request: f64, read: f64, sequential: bool) -> (f64, f64, &'static str) {
    let text = format!(
        "[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\npages_per_block = 64\n\
         [timing]\n{timing}\n[workload]\n{workload}\n\
         [run]\nprecondition = \"fill\"\nwarmup_drive_writes = 1\nmeasure_drive_writes = 1\nround_drive_writes = 0.25\n"
    );
    let cfg = Config::from_toml_str(&text).unwrap();
    let model = describe(cfg.clone(), true).unwrap().cost_model.unwrap();
    let r = Simulator::new(cfg).unwrap().run().unwrap();
    let mix = Mix {
        write_fraction: 1.0 - read,
        units_per_io: request / 4096.0,
        bytes_per_io: request,
        sequential,
        queue_depth: None,
    };
    let c = costs(&model, &mix, r.waf).unwrap();
    (r.timed.unwrap().measured_iops, c.iops, c.bottleneck)
}

#[test]
fn controller_bound_is_met() {
    let (m, b, who) = run(
        "interface = \"nvme\"\nqueue_depth = 64\nfw_overhead_us = 50",
        "type = \"uniform\"\nread_fraction = 0.5",
        4096.0,
        0.5,
    );
    assert_eq!(who, "controller");
    // every read senses a written page (the fill writes them all): the controller idles now
    // and then while a program holds the die its next command needs
    assert!(m <= b * 1.001 && m >= 0.98 * b, "{m} vs {b}");
}

#[test]
fn nand_bound_with_garbage_collection_is_approached() {
    let (m, b, who) = run("", "type = \"uniform\"", 4096.0, 0.0);
    assert_eq!(who, "NAND dies");
    assert!(m <= b * 1.001 && m >= 0.93 * b, "{m} vs {b}");
}

#[test]
fn host_link_bound_is_approached() {
    let (m, b, who) = run(
        "interface = \"nvme\"\nqueue_depth = 64\nlink_mbps = 50",
        "type = \"uniform\"\nread_fraction = 0.5\nrequest_size = \"64KiB\"",
        65536.0,
        0.5,
    );
    assert_eq!(who, "host link");
    assert!(m <= b * 1.001 && m >= 0.85 * b, "{m} vs {b}");
}

/// Sequential 128 KiB reads (1% writes) with four independent read planes and whole-page
/// reads: the NAND bound (16 senses an IO over 16 dies x 4 groups) is approached; without
/// whole pages every unit is sensed (32 an IO) and the bound halves with the measurement.
/// Not closer than 0.8: the 1% writes are 128 KiB too, and a program holds its die while
/// the reads behind it wait (no suspend here).
#[test]
fn sequential_read_nand_bound_is_approached() {
    let nand = "interface = \"nvme\"\nqueue_depth = 64\nnvme_queues = 4\nplanes = 4\nread_planes = 4\n\
                channel_mbps = 3200\nlink_mbps = 100000\nfw_overhead_us = 0.5\nt_read_us = 60";
    let wl = "type = \"sequential\"\nrequest_size = \"128KiB\"\nread_fraction = 0.99";
    let (m, b, who) = run_mix(&format!("{nand}\nread_whole_pages = true"), wl, 131072.0, 0.99, true);
    assert_eq!(who, "NAND dies");
    assert!(m <= b * 1.001 && m >= 0.78 * b, "{m} vs {b}");
    let (m1, b1, who) = run_mix(nand, wl, 131072.0, 0.99, true);
    assert_eq!(who, "NAND dies");
    assert!(m1 <= b1 * 1.001 && m1 >= 0.78 * b1, "{m1} vs {b1}");
    assert!(b > 1.7 * b1 && m > 1.7 * m1, "{m} {b} vs {m1} {b1}");
}

/// Random 4 KiB reads (0.1% writes) at a high queue depth with four independent read
/// planes: the NAND bound of `dies x read_planes / tR` is approached, four times that of the
/// planes reading together.  Not closer: a program holds the whole die, so it waits for
/// every group's reads in flight and the reads after it wait for it (no suspend here).
#[test]
fn random_read_nand_bound_with_read_planes_is_approached() {
    let timing = "interface = \"nvme\"\nqueue_depth = 64\nnvme_queues = 8\nplanes = 4\n\
                  channel_mbps = 3200\nlink_mbps = 100000\nfw_overhead_us = 0.1\nt_read_us = 60\nt_prog_us = 100\nt_erase_us = 100";
    let wl = "type = \"uniform\"\nread_fraction = 0.999";
    let (m, b, who) = run(&format!("{timing}\nread_planes = 4"), wl, 4096.0, 0.999);
    assert_eq!(who, "NAND dies");
    assert!(m <= b * 1.001 && m >= 0.7 * b, "{m} vs {b}");
    assert!(b > 0.95 * 16.0 * 4.0 / 60e-6, "{b}");
    let (m1, b1, _) = run(timing, wl, 4096.0, 0.999);
    assert!(m1 <= b1 * 1.001 && m1 >= 0.85 * b1, "{m1} vs {b1}");
    assert!((b / b1 - 4.0).abs() < 0.2 && m > 2.5 * m1, "{m} {b} vs {m1} {b1}");
}

/// A fill writes every address, whatever the workload's read and trim mix: a workload of
/// 99.9% reads once turned its own fill into 99.9% reads of a cursor that moved on, leaving a
/// third of the span unwritten (reads of it cost no NAND time, so the event model passed
/// its bound).  Functional and timed runs alike.
#[test]
fn a_fill_writes_the_whole_span_under_a_read_heavy_workload() {
    for (timing, mix) in [("", "read_fraction = 0.999"), ("[timing]\n", "read_fraction = 0.5\ntrim_fraction = 0.3")] {
        let text = format!(
            "[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\npages_per_block = 64\n{timing}\
             [workload]\ntype = \"uniform\"\n{mix}\n\
             [run]\nprecondition = \"fill\"\nwarmup_drive_writes = 0\nmeasure_drive_writes = 0.02\nround_drive_writes = 0.01\n"
        );
        let r = Simulator::new(Config::from_toml_str(&text).unwrap()).unwrap().run().unwrap();
        let pages = 48 * 256;
        let (all, m) = (&r.counters, &r.measure_counters);
        // the fill: one pass of writes, nothing read or trimmed before the measurement
        assert_eq!(all.host_write_pages - m.host_write_pages, pages, "{mix}");
        assert_eq!(all.host_read_cmds, m.host_read_cmds, "{mix}");
        if mix.contains("trim") {
            assert!(m.trim_cmds > 0);
        } else {
            assert_eq!(m.unmapped_read_pages, 0, "{mix}");
        }
    }
}

/// Random 4 KiB reads (0.01% writes) at queue depths 1 to 256 in ready order: the event model
/// follows the cost model's latency bound at that depth (mean-value analysis with fixed
/// service times): within 3% to QD 64, 6% at QD 256 where the 64 read groups are 80% busy
/// (the analysis' residual-time correction is an approximation; measured -5.5%).
#[test]
fn random_reads_at_a_queue_depth_follow_the_latency_bound() {
    for (qd, queues) in [(1, 1), (8, 1), (32, 2), (64, 4)] {
        let timing = format!(
            "interface = \"nvme\"\nqueue_depth = {qd}\nnvme_queues = {queues}\nchannels = 4\ndies_per_channel = 4\n\
             planes = 4\nread_planes = 4\nchannel_mbps = 1600\nfw_overhead_us = 0.1\nt_read_us = 60\n\
             channel_order = \"ready\""
        );
        let text = format!(
            "[drive]\nuser_capacity = \"48MiB\"\nphysical_capacity = \"64MiB\"\npages_per_block = 64\n\
             [timing]\n{timing}\n[workload]\ntype = \"uniform\"\nread_fraction = 0.9999\n\
             [run]\nprecondition = \"fill\"\nwarmup_drive_writes = 0\nmeasure_drive_writes = 0.004\nround_drive_writes = 0.002\n"
        );
        let cfg = Config::from_toml_str(&text).unwrap();
        let model = describe(cfg.clone(), true).unwrap().cost_model.unwrap();
        let r = Simulator::new(cfg).unwrap().run().unwrap();
        let n = qd * queues;
        let mix = Mix {
            write_fraction: 0.0001,
            units_per_io: 1.0,
            bytes_per_io: 4096.0,
            sequential: false,
            queue_depth: Some(n),
        };
        let c = costs(&model, &mix, r.waf).unwrap();
        let m = r.timed.unwrap().measured_iops;
        assert_eq!(c.bottleneck, "read latency", "QD {n}");
        let tol = if n > 64 { 0.06 } else { 0.03 };
        assert!((m / c.iops - 1.0).abs() < tol, "QD {n}: event {m:.0} vs bound {:.0}", c.iops);
    }
}

#[test]
fn gc_copies_read_whole_pages_as_the_bound_counts_them() {
    // a read time that weighs: read a sense per copy, a GC copy costs 400 us on its die
    // against 75 us for its share of a program (1800 us for 24 units); with whole-page
    // reads the valid units of one multi-plane page (4 units on each of 2 planes) share a
    // sense (here 3,364 senses for 14,644 copies, 0.2297 a copy; the bound's 0.2295)
    let nand = "channels = 2\ndies_per_channel = 2\nplanes = 2\ncell = \"tlc\"\nnand_page_size = \"48KiB\"\n\
                nand_block_size = \"1536KiB\"\nt_read_us = 400\nt_prog_us = 1800\nread_planes = 2\n";
    let (unit, b1, who1) = run(&format!("{nand}read_whole_pages = false"), "type = \"uniform\"", 4096.0, 0.0);
    let (whole, b2, who2) = run(&format!("{nand}read_whole_pages = true"), "type = \"uniform\"", 4096.0, 0.0);
    assert_eq!((who1, who2), ("NAND dies", "NAND dies"));
    assert!(unit <= b1 * 1.001 && unit >= 0.93 * b1, "a sense per copy: {unit} vs {b1}");
    // the bound takes a victim's valid units as spread independently over its pages; the
    // event model counts the FTL's own victims
    assert!(whole <= b2 * 1.001 && whole >= 0.9 * b2, "whole pages: {whole} vs {b2}");
    assert!(whole > 1.8 * unit, "shared senses: {whole} vs {unit}");
}
