//! Trace reading on hostile input: line length capped, memory bounded (also through gzip),
//! pipes read like files, column maps and numbers checked instead of panicking, and the
//! atomic conversion output.

use opsim_core::trace::{self, Reader, TraceConfig, TraceFormat};
use opsim_core::ErrorKind;
use std::io::Write;

/// A fresh directory, removed with everything in it when the guard is dropped.
fn tmp(tag: &str) -> tempfile::TempDir {
    tempfile::Builder::new().prefix(&format!("opsim-trace-limits-{tag}-")).tempdir().unwrap()
}

fn records(mut r: Reader) -> opsim_core::Result<u64> {
    while r.next_record()?.is_some() {}
    Ok(r.records)
}

const MSR: &[u8] = b"128166372003061629,hm,0,Read,3129794560,65536,115518\n\
128166372016382155,hm,0,Write,2150825984,4096,56928\n128166372026382245,hm,0,Write,8192,512,1\n";

#[test]
fn a_line_without_end_is_refused_naming_the_line_and_the_cap() {
    for format in [TraceFormat::Auto, TraceFormat::Msr, TraceFormat::Disksim] {
        let mut cfg = TraceConfig::new("mem.csv");
        cfg.format = format;
        cfg.skip_bad = true; // a line too long is not a bad line to skip: the stream is no trace
        let mut body = MSR.to_vec();
        body.extend_from_slice(&[b'7'; 200_000]);
        let e = Reader::from_bytes(&cfg, body).and_then(records).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Trace, "{e}");
        assert_eq!(e.key.as_deref(), Some("mem.csv:4"), "{format:?}: {e}");
        assert!(e.message.contains("line longer than 64 KiB"), "{e}");
        // the same with no newline at all
        let e = Reader::from_bytes(&cfg, vec![b'1'; 300_000]).and_then(records).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("mem.csv:1"), "{e}");
        assert!(e.message.contains("line longer than 64 KiB"), "{e}");
    }
}

#[test]
fn dev_zero_is_refused() {
    for format in [TraceFormat::Auto, TraceFormat::Msr] {
        let mut cfg = TraceConfig::new("/dev/zero");
        cfg.format = format;
        let e = trace::info(&cfg).unwrap_err();
        assert!(e.message.contains("line longer than 64 KiB"), "{e}");
    }
}

#[test]
fn a_gzip_bomb_without_newlines_is_refused() {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![b'0'; 1 << 20];
    for _ in 0..64 {
        gz.write_all(&zeros).unwrap();
    }
    let body = gz.finish().unwrap();
    let e = Reader::from_bytes(&TraceConfig::new("bomb.gz"), body).and_then(records).unwrap_err();
    assert!(e.message.contains("line longer than 64 KiB"), "{e}");
}

#[test]
fn a_fifo_reads_like_a_file() {
    let dir = tmp("fifo");
    let d = dir.path();
    let p = d.join("t.csv");
    let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let writer = {
        let p = p.clone();
        std::thread::spawn(move || {
            let mut f = std::fs::OpenOptions::new().write(true).open(p).unwrap();
            // in small pieces, as a pipe hands them over
            for chunk in MSR.chunks(3) {
                f.write_all(chunk).unwrap();
                f.flush().unwrap();
            }
        })
    };
    let mut r = Reader::open(&TraceConfig::new(p.to_str().unwrap())).unwrap();
    let mut n = 0;
    while r.next_record().unwrap().is_some() {
        n += 1;
    }
    writer.join().unwrap();
    assert_eq!((r.format, n), (TraceFormat::Msr, 3));
    // `repeat` cannot read a pipe again: it says so
    let e = r.rewind().unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload.trace.repeat"), "{e}");

    // what needs a second pass says so instead of finding an "empty" trace (and without
    // opening the FIFO: no writer is waiting)
    let e = trace::max_end(&TraceConfig::new(p.to_str().unwrap())).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload.trace.remap"), "{e}");
    assert!(e.message.contains("pipe"), "{e}");
}

#[test]
fn column_indices_are_checked() {
    for (spec, key) in [
        ("time=0,op=1,offset=18446744073709551615,size=3", "workload.trace.columns.offset"),
        ("time=18446744073709551616,op=1,offset=2,size=3", "workload.trace.columns.time"),
        ("time=0,op=99,offset=2,size=3", "workload.trace.columns.op"),
        ("time=0,op=1,offset=2,size=3,device=64", "workload.trace.columns.device"),
    ] {
        let mut cfg = TraceConfig::new("c.csv");
        cfg.format = TraceFormat::Columns;
        cfg.columns = Some(spec.into());
        let e = Reader::from_bytes(&cfg, &b"0,w,0,4096\n"[..]).err().expect(spec);
        assert_eq!(e.kind, ErrorKind::Config, "{spec}: {e}");
        assert_eq!(e.key.as_deref(), Some(key), "{spec}: {e}");
    }
    // the largest column allowed works
    let mut cfg = TraceConfig::new("c.csv");
    cfg.format = TraceFormat::Columns;
    cfg.columns = Some("op=0,offset=1,size=63".into());
    let line = format!("w,4096{}\n", ",8192".repeat(62));
    let r = Reader::from_bytes(&cfg, line.into_bytes()).unwrap();
    assert_eq!(records(r).unwrap(), 1);
}

#[test]
fn huge_numbers_are_errors_or_saturate_never_overflow() {
    let mut cfg = TraceConfig::new("big.csv");
    cfg.format = TraceFormat::Columns;
    cfg.columns = Some("time=0:s,op=1,offset=2:4k,size=3:4k".into());
    let e = Reader::from_bytes(&cfg, &b"0,w,18446744073709551615,1\n"[..]).and_then(records).unwrap_err();
    assert!(e.message.contains("too large"), "{e}");
    let e = Reader::from_bytes(&cfg, &b"99999999999999999999,w,1,1\n"[..]).and_then(records).unwrap_err();
    assert!(e.message.contains("time"), "{e}");
    // two requests whose sizes sum past 2^64 bytes: the byte count saturates
    cfg.columns = Some("op=0,offset=1,size=2".into());
    let r = Reader::from_bytes(&cfg, &b"w,0,18446744073709551000\nw,0,18446744073709551000\n"[..]).unwrap();
    let info = trace::summarise(r, u64::MAX).unwrap();
    assert_eq!(info.write.bytes, u64::MAX);
    assert_eq!(info.footprint_bytes, None);
}

#[test]
fn footprints_follow_what_is_touched_not_the_offsets() {
    // two 4 KiB writes 8 TiB apart: counted exactly (and without 256 MiB of bits)
    let mut cfg = TraceConfig::new("far.csv");
    cfg.format = TraceFormat::Columns;
    cfg.columns = Some("op=0,offset=1,size=2".into());
    let body = format!("w,0,4096\nw,{},8192\nr,4096,4096\n", 8u64 << 40);
    let info = trace::summarise(Reader::from_bytes(&cfg, body.into_bytes()).unwrap(), u64::MAX).unwrap();
    assert_eq!(info.footprint_bytes, Some(4 * 4096));
    assert_eq!(info.write_footprint_bytes, Some(3 * 4096));
}

#[test]
fn messages_do_not_echo_control_bytes() {
    let mut cfg = TraceConfig::new("nul.csv");
    cfg.format = TraceFormat::Msr;
    let e = Reader::from_bytes(&cfg, &b"1,hm,0,Re\0ad\x1b[2J,0,4096,1\n"[..]).and_then(records).unwrap_err();
    let m = e.to_string();
    assert!(!m.contains('\0') && !m.contains('\x1b'), "{m:?}");
    assert!(m.contains("\\0"), "{m:?}");
}

#[test]
fn conversion_output_is_whole_with_the_umask_mode_and_nothing_else() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tmp("convert");
    let d = dir.path();
    let src = d.join("in.csv");
    std::fs::write(&src, MSR).unwrap();
    let out = d.join("out.iolog");
    std::fs::write(&out, b"old").unwrap();
    let n =
        trace::convert_to_file(&TraceConfig::new(src.to_str().unwrap()), out.to_str().unwrap(), 3, "/dev/x").unwrap();
    assert_eq!(n, 3);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("fio version 3 iolog\n0 /dev/x add\n0 /dev/x open\n0 /dev/x read 3129794560 65536\n"),
        "{text}"
    );
    let umask = unsafe {
        let m = libc::umask(0);
        libc::umask(m);
        m
    };
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o666 & !(umask as u32), "mode {mode:o}");
    let mut names: Vec<_> =
        std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["in.csv", "out.iolog"]);
    // a failed conversion keeps the old output and leaves nothing
    std::fs::write(&src, b"junk that is no trace\n").unwrap();
    assert!(
        trace::convert_to_file(&TraceConfig::new(src.to_str().unwrap()), out.to_str().unwrap(), 3, "/dev/x").is_err()
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), text);
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 2);
}

#[test]
fn a_zstd_stream_with_a_huge_window_is_refused() {
    // made with `zstd --long=27` from a pipe (the size unknown): the decoder would keep
    // 128 MiB of history
    let dir = tmp("zstd");
    let d = dir.path();
    let src = d.join("t.csv");
    std::fs::write(&src, MSR.repeat(100)).unwrap();
    let out = d.join("t.csv.zst");
    let zstd = |args: &[&str]| {
        std::process::Command::new("zstd")
            .args(args)
            .arg("-o")
            .arg(&out)
            .stdin(std::fs::File::open(&src).unwrap())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !zstd(&["-q", "-f", "--long=27"]) {
        eprintln!("zstd not available: skipped");
        return;
    }
    let e = trace::info(&TraceConfig::new(out.to_str().unwrap())).unwrap_err();
    assert!(e.message.contains("window of more than 32 MiB"), "{e}");
    // the usual levels read fine
    assert!(zstd(&["-q", "-f", "-19"]));
    let info = trace::info(&TraceConfig::new(out.to_str().unwrap())).unwrap();
    assert_eq!((info.source.compression, info.source.records), ("zstd", 300));
}
