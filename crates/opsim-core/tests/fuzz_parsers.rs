//! The short pass of the parser fuzzer (`fuzz_harness`): a few thousand seeded, mutated
//! inputs per parser must each give a record stream (a job's commands) or an error, never a panic, and the same
//! result whatever the read buffer's size.  The long pass is `examples/fuzz.rs`.

mod fuzz_harness;

use fuzz_harness::{run, Target};

fn short_pass(target: Target, count: u64) {
    let seed = std::env::var("OPSIM_FUZZ_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(20_261_123);
    let rep = run(target, seed, 0, count, false);
    eprintln!("{}: {} parsed, {} refused", target.name(), rep.ok, rep.errors);
    assert!(rep.failures.is_empty(), "{} failures (seed {seed}):\n{}", rep.failures.len(), rep.failures.join("\n"));
    // the inputs reach both outcomes: the harness is not only producing garbage
    assert!(rep.ok > count / 50 && rep.errors > count / 50, "ok {} errors {}", rep.ok, rep.errors);
}

#[test]
fn fuzz_trace_parsers_short() {
    short_pass(Target::Trace, 5000);
}

#[test]
fn fuzz_config_parser_short() {
    short_pass(Target::Config, 5000);
}

#[test]
fn fuzz_fio_job_parser_short() {
    short_pass(Target::FioJob, 3000);
}
