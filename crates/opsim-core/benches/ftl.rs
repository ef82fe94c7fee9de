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

fn benches(c: &mut Criterion) {
    bench_writes(c, "uniform4k_greedy_op7_16GiB", "16GiB", "greedy");
    if std::env::var("OPSIM_BENCH_LARGE").is_ok() {
        bench_writes(c, "uniform4k_greedy_op7_256GiB", "256GiB", "greedy");
    }
}

criterion_group!(ftl, benches);
criterion_main!(ftl);
