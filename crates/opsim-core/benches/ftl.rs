//! Criterion benchmarks of the FTL hot path: uniform random 4 KiB writes, greedy GC,
//! OP 7% (user basis), 256 pages per block, in steady state (analytic preconditioning).
//! Each iteration writes a fixed number of host pages; throughput is host pages/s.
//!
//! `OPSIM_BENCH_LARGE=1` adds the 256 GiB drive (about 2.2 GiB of memory).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use opsim_core::Simulator;
use std::time::{Duration, Instant};

fn steady_sim(capacity: &str, gc: &str) -> Simulator {
    let toml = format!(
        r#"
        [drive]
        user_capacity = "{capacity}"
        op = 0.07
        pages_per_block = 256
        [ftl]
        gc = "{gc}"
        [run]
        seed = 7
        precondition = "analytic"
        "#
    );
    let mut sim = Simulator::from_toml(&toml).expect("config");
    sim.precondition().expect("precondition");
    // settle for a tenth of a drive write beyond the analytic layout
    let user = sim.geometry().user_bytes;
    sim.run_for(user / 10).expect("settle");
    sim
}

fn bench_writes(c: &mut Criterion, name: &str, capacity: &str, gc: &str) {
    let mut sim = steady_sim(capacity, gc);
    let pages: u64 = 4_000_000;
    let mut group = c.benchmark_group("ftl");
    group.throughput(Throughput::Elements(pages));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let t = Instant::now();
            for _ in 0..iters {
                sim.run_for(pages * 4096).expect("writes");
            }
            t.elapsed()
        })
    });
    group.finish();
}

/// An MSR Cambridge CSV trace of `n` uniform random 4 KiB writes over `span_pages` pages
/// (a fixed LCG, so the file is the same on every machine).
pub fn write_msr_trace(path: &std::path::Path, n: u64, span_pages: u64) {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).expect("create trace"));
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for i in 0..n {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let off = ((x >> 33) % span_pages) * 4096;
        writeln!(w, "{},hm,0,Write,{off},4096,{}", 128166372003061629u64 + i * 1000, 100 + (x & 1023)).expect("write");
    }
    w.flush().expect("flush");
}

/// Trace replay: parse and simulate an MSR trace of 2 M random 4 KiB writes over the whole
/// of a 1 GiB drive at OP 28%, after a sequential fill (functional model; 8 drive writes, GC
/// in steady state from the first); throughput is trace records/s.
fn bench_trace(c: &mut Criterion) {
    let n = 2_000_000u64;
    let dir = std::env::temp_dir().join(format!("opsim-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("msr.csv");
    write_msr_trace(&path, n, (1u64 << 30) / 4096);
    let toml = format!(
        r#"
        [drive]
        user_capacity = "1GiB"
        op = 0.28
        [workload]
        type = "trace"
        [workload.trace]
        path = "{}"
        [run]
        precondition = "fill"
        warmup_drive_writes = 0
        measure_drive_writes = 1000
        "#,
        path.display()
    );
    let mut group = c.benchmark_group("trace");
    group.throughput(Throughput::Elements(n));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(20));
    group.bench_function("msr_replay_2M_random4k_1GiB_op28", |b| {
        b.iter(|| {
            let mut sim = Simulator::from_toml(&toml).expect("config");
            let r = sim.run().expect("replay");
            assert_eq!(r.trace.as_ref().map(|t| t.records), Some(n));
        })
    });
    group.bench_function("msr_parse_2M", |b| {
        b.iter(|| {
            let mut r =
                opsim_core::trace::Reader::open(&opsim_core::trace::TraceConfig::new(path.to_str().unwrap())).unwrap();
            while r.next_record().unwrap().is_some() {}
            assert_eq!(r.records, n);
        })
    });
    // the write profile of the same trace (`opsim trace profile`'s pass, no fit)
    group.bench_function("msr_profile_2M", |b| {
        b.iter(|| {
            let cfg = opsim_core::trace::TraceConfig::new(path.to_str().unwrap());
            let p = opsim_core::trace::profile(&cfg, &opsim_core::trace::ProfileOptions::default()).unwrap();
            assert_eq!(p.source.records, n);
        })
    });
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

fn benches(c: &mut Criterion) {
    bench_trace(c);
    bench_writes(c, "uniform4k_greedy_op7_16GiB", "16GiB", "greedy");
    if std::env::var("OPSIM_BENCH_LARGE").is_ok() {
        bench_writes(c, "uniform4k_greedy_op7_256GiB", "256GiB", "greedy");
    }
}

criterion_group!(ftl, benches);
criterion_main!(ftl);
