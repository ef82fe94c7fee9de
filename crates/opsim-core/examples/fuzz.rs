//! The long pass of the parser fuzzer: `cargo run --release -p opsim-core --example fuzz --
//! --parser config|trace|fio-job --count N --seed S [--first I]`.  Prints the count, time and
//! outcome; failing inputs are written under `target/fuzz-failures/`; the exit status is 1
//! when any input failed.  `--first I --count 1` makes input I of seed S again.

#[path = "../tests/fuzz_harness/mod.rs"]
mod fuzz_harness;

use fuzz_harness::{run, Target};

fn usage() -> ! {
    eprintln!("usage: fuzz --parser config|trace|fio-job [--count N] [--seed S] [--first I]");
    std::process::exit(2)
}

fn max_rss_mb() -> f64 {
    #[cfg(unix)]
    {
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `u` is a valid rusage to fill in.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } == 0 {
            return u.ru_maxrss as f64 / 1024.0;
        }
    }
    f64::NAN
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut parser, mut count, mut seed, mut first) = (None, 1_000_000u64, 1u64, 0u64);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_else(|| usage());
        match a.as_str() {
            "--parser" => parser = Some(Target::parse(&val()).unwrap_or_else(|| usage())),
            "--count" => count = val().parse().unwrap_or_else(|_| usage()),
            "--seed" => seed = val().parse().unwrap_or_else(|_| usage()),
            "--first" => first = val().parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    let target = parser.unwrap_or_else(|| usage());
    let rep = run(target, seed, first, count, true);
    println!(
        "fuzz {}: {} inputs (seed {}, from {}), {} parsed, {} refused with an error, {} failures, {:.1} s, slowest input {} ({:.0?}), max RSS {:.0} MB",
        target.name(),
        rep.count,
        rep.seed,
        first,
        rep.ok,
        rep.errors,
        rep.failures.len(),
        rep.elapsed.as_secs_f64(),
        rep.slowest.1,
        rep.slowest.0,
        max_rss_mb()
    );
    for f in rep.failures.iter().take(20) {
        println!("  {f}");
    }
    if !rep.failures.is_empty() {
        std::process::exit(1);
    }
}
