//! Inputs that hang, read without end, or nest too deep (issue 23, items 3-5): a FIFO trace
//! with no writer waits interruptibly, and still reads once a writer comes; configs nested
//! thousands deep are a config error naming the key, not a stack overflow or a bare parser
//! message; a drive file that is a FIFO is refused without blocking.

use opsim_core::trace::{Reader, TraceConfig};
use opsim_core::{Config, ErrorKind, Interrupt};
use std::path::Path;
use std::time::{Duration, Instant};

/// A fresh directory, removed with everything in it when the guard is dropped.
fn tmp(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("opsim-hardening-inputs-{tag}-")).tempdir().unwrap()
}

fn mkfifo(p: &Path) {
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", p.display());
}

const MSR: &[u8] = b"128166372003061629,hm,0,Read,3129794560,65536,115518\n\
128166372016382155,hm,0,Write,2150825984,4096,56928\n";

#[test]
fn a_fifo_trace_with_no_writer_stops_on_the_interrupt() {
    let dir = tmp("nowriter");
    let d = dir.path();
    let fifo = d.join("t.fifo");
    mkfifo(&fifo);
    let mut cfg = TraceConfig::new(fifo.to_str().unwrap());
    let t0 = Instant::now();
    cfg.interrupt = Interrupt::new(move || t0.elapsed() > Duration::from_millis(300));
    // the old code blocked in open(2) for good (Rust's File::open retries on EINTR)
    let e = Reader::open(&cfg).err().expect("the open is interrupted");
    assert_eq!(e.kind, ErrorKind::Interrupted, "{e}");
    assert!(t0.elapsed() < Duration::from_secs(2), "took {:?}", t0.elapsed());
}

#[test]
fn a_fifo_trace_reads_when_a_writer_comes_late_and_pauses() {
    let dir = tmp("writer");
    let d = dir.path();
    let fifo = d.join("t.fifo");
    mkfifo(&fifo);
    let f = fifo.clone();
    let w = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200)); // the reader opens first
        let mut out = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        std::io::Write::write_all(&mut out, &MSR[..30]).unwrap();
        std::thread::sleep(Duration::from_millis(200)); // a line cut in two, a pause
        std::io::Write::write_all(&mut out, &MSR[30..]).unwrap();
    });
    let mut r = Reader::open(&TraceConfig::new(fifo.to_str().unwrap())).unwrap();
    while r.next_record().unwrap().is_some() {}
    w.join().unwrap();
    assert_eq!(r.records, 2);
    assert!(r.check_rereadable("workload.trace.repeat").is_err(), "a FIFO reads once");
}

#[test]
fn a_paused_writer_does_not_hold_off_the_interrupt() {
    let dir = tmp("paused");
    let d = dir.path();
    let fifo = d.join("t.fifo");
    mkfifo(&fifo);
    let f = fifo.clone();
    let w = std::thread::spawn(move || {
        let mut out = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
        std::io::Write::write_all(&mut out, MSR).unwrap();
        std::thread::sleep(Duration::from_millis(1500)); // connected, silent
    });
    let mut cfg = TraceConfig::new(fifo.to_str().unwrap());
    let t0 = Instant::now();
    cfg.interrupt = Interrupt::new(move || t0.elapsed() > Duration::from_millis(400));
    let e = Reader::open(&cfg)
        .and_then(|mut r| {
            while r.next_record()?.is_some() {}
            Ok(r.records)
        })
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Interrupted, "{e}");
    assert!(t0.elapsed() < Duration::from_millis(1400), "took {:?}", t0.elapsed());
    w.join().unwrap();
}

fn deep_toml(n: usize) -> String {
    format!("[drive]\nuser_capacity = \"64MiB\"\nx = {}1{}\n", "[".repeat(n), "]".repeat(n))
}

#[test]
fn configs_nested_deeper_than_the_limit_are_config_errors() {
    // past the limit, below the parsers' own recursion limits: the walk names the key path
    let e = Config::from_toml_str(&deep_toml(70)).unwrap_err();
    assert!(e.is_input(), "{e}");
    assert!(e.key.as_deref().unwrap().starts_with("drive.x[0][0]"), "{e}");
    assert!(e.message.contains("nested too deeply: a config nests at most 64 levels"), "{e}");
    let json = format!("{{\"drive\": {{\"x\": {}1{}}}}}", "[".repeat(70), "]".repeat(70));
    let e = Config::from_json_str(&json).unwrap_err();
    assert!(e.key.as_deref().unwrap().starts_with("drive.x[0]"), "{e}");
    assert!(e.message.contains("nested too deeply"), "{e}");
    // 5,000 deep: the parsers' recursion limits, worded the same
    let e = Config::from_toml_str(&deep_toml(5000)).unwrap_err();
    assert!(e.is_input() && e.message.contains("nested too deeply"), "{e}");
    assert!(e.message.contains("line 3"), "{e}");
    let json = format!("{}{}", "{\"a\": ".repeat(5000), "1".to_owned() + &"}".repeat(5000));
    let e = Config::from_json_str(&json).unwrap_err();
    assert!(e.is_input() && e.message.contains("nested too deeply"), "{e}");
    assert!(e.key.as_deref().unwrap().len() < 130, "{e}");
    // 64 levels is fine as far as nesting goes (the unknown key is the next complaint)
    let e = Config::from_toml_str(&deep_toml(62)).unwrap_err();
    assert!(!e.message.contains("nested too deeply"), "{e}");
}

#[test]
fn a_drive_file_that_is_a_fifo_is_refused_without_blocking() {
    let dir = tmp("drivefifo");
    let d = dir.path();
    let fifo = d.join("drive.toml");
    mkfifo(&fifo);
    let t0 = Instant::now();
    let e = Config::from_toml_str(&format!("preset = \"{}\"\n", fifo.display())).unwrap_err();
    assert!(e.is_input(), "{e}");
    assert!(e.message.contains("is not a regular file (a FIFO)"), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_namespace_fifo_trace_gets_the_interrupt_too() {
    let dir = tmp("namespace");
    let d = dir.path();
    let fifo = d.join("t.fifo");
    mkfifo(&fifo);
    let cfg = format!(
        "[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\npages_per_block = 64\n[run]\ninterleave = \"bytes\"\n\
         [[namespace]]\ncapacity = \"50%\"\nshare = 0.5\n[namespace.workload]\ntype = \"trace\"\n\
         [namespace.workload.trace]\npath = \"{}\"\nremap = \"wrap\"\n\
         [[namespace]]\ncapacity = \"50%\"\nshare = 0.5\n",
        fifo.display()
    );
    let mut sim = opsim_core::Simulator::from_toml(&cfg).unwrap();
    let t0 = Instant::now();
    sim.set_interrupt(Interrupt::new(move || t0.elapsed() > Duration::from_millis(300)));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(sim.run().map(|r| r.interrupted).map_err(|e| e.kind)));
    // set_interrupt left the namespaces' traces without the hook: the open waited for good
    let r = rx.recv_timeout(Duration::from_secs(10)).expect("still waiting for a writer 10 s on");
    assert!(matches!(r, Ok(true) | Err(ErrorKind::Interrupted)), "{r:?}");
    assert!(t0.elapsed() < Duration::from_secs(2), "took {:?}", t0.elapsed());
}
