//! Synthetic traces: `count` commands of one of the core's own workload generators (uniform,
//! hot-cold, zipf, sequential, JESD219) over a span, written as a fio iolog v3 by the iolog
//! writer of `trace convert` (`trace::fio`).  It lives here, not in `trace`, because `workload`
//! already uses `trace` (the core's modules form no cycle).  A trace made this way has a known skew: the
//! tests and the validation of `opsim advise --trace` replay it against the generator itself.
//!
//! The generator is the simulator's ([`crate::workload::build`]) over a drive of `span`
//! bytes in 512-byte sectors and 4 KiB pages, seeded with `seed`: the same seed and settings
//! give the same file, byte for byte.

use crate::config::{WorkloadConfig, WorkloadType};
use crate::error::{Error, Result};
use crate::rng::Rng;
use crate::trace::{check_iolog_args, write_records, Record};
use std::io::Write;

/// The sector and page the generator works in (the offsets written are bytes).
pub const SYNTH_SECTOR: u64 = 512;
pub const SYNTH_PAGE: u64 = 4096;
/// At most this many commands (a 2^32-command iolog is ~150 GB of text).
pub const SYNTH_MAX_COUNT: u64 = 1 << 32;

/// What to generate.
#[derive(Clone, Debug)]
pub struct SynthSpec {
    pub workload: WorkloadConfig,
    /// The address span in bytes (a whole number of 4 KiB pages).
    pub span: u64,
    pub count: u64,
    pub seed: u64,
    /// Time between two commands in the trace, in nanoseconds (0: all at time 0).
    pub interval_ns: u64,
    /// Polled every 65,536 commands (Ctrl-C through the binding).
    pub interrupt: crate::interrupt::Interrupt,
}

/// Refuse, naming the setting, what cannot be generated, before any work.
pub fn check(spec: &SynthSpec) -> Result<()> {
    use WorkloadType as T;
    let k = spec.workload.kind;
    if !matches!(k, T::Uniform | T::HotCold | T::Zipf | T::Sequential | T::Jesd219) {
        return Err(Error::config(
            "workload.type",
            format!(
                "\"{}\" is not a synthetic generator a trace can be made of (uniform, hot-cold, zipf, sequential, jesd219)",
                k.name()
            ),
        ));
    }
    if spec.span == 0 || spec.span % SYNTH_PAGE != 0 {
        return Err(Error::config("span", format!("{} bytes is not a positive multiple of 4096", spec.span)));
    }
    if spec.span > (1u64 << 60) {
        return Err(Error::config("span", format!("{} bytes is more than 1 EiB", spec.span)));
    }
    if spec.count == 0 || spec.count > SYNTH_MAX_COUNT {
        return Err(Error::config("count", format!("{} is outside 1..={SYNTH_MAX_COUNT}", spec.count)));
    }
    Ok(())
}

/// Write the synthetic trace as a fio iolog v3 on `target`; returns the commands written.
pub fn write_synth(spec: &SynthSpec, out: &mut dyn Write, target: &str) -> Result<u64> {
    check(spec)?;
    check_iolog_args(3, target)?;
    let w = &spec.workload;
    let mut wl = super::build(w, w.kind, spec.span / SYNTH_SECTOR, SYNTH_SECTOR, SYNTH_PAGE, 1, None)?;
    let unit = if wl.pages { SYNTH_PAGE } else { SYNTH_SECTOR };
    let mut rng = Rng::new(spec.seed);
    let mut i = 0u64;
    let mut intr = spec.interrupt.clone();
    write_records(out, 3, target, || {
        if i == spec.count {
            return Ok(None);
        }
        if i % 65_536 == 0 {
            intr.check()?;
        }
        let op = wl.next(&mut rng);
        let r = Record {
            t_ns: i.saturating_mul(spec.interval_ns),
            kind: op.kind,
            offset: op.start * unit,
            len: op.len as u64 * unit,
            stream: 0,
        };
        i += 1;
        Ok(Some(r))
    })
}

/// [`write_synth`] into `out_path`, atomically (nothing is left behind on error).
pub fn synth_to_file(spec: &SynthSpec, out_path: &str, target: &str) -> Result<u64> {
    check(spec)?;
    let io = |e: std::io::Error| Error::config("output", format!("cannot write {out_path}: {e}"));
    crate::atomic::write_file(std::path::Path::new(out_path), io, |f| write_synth(spec, f, target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::testing::{all as all_records, write_tmp};
    use crate::trace::TraceConfig;

    fn spec(doc: &str, span: u64, count: u64) -> SynthSpec {
        let workload: WorkloadConfig = serde_json::from_str(doc).unwrap();
        SynthSpec { workload, span, count, seed: 7, interval_ns: 10_000, interrupt: Default::default() }
    }

    #[test]
    fn hot_cold_trace_has_its_split_and_replays() {
        let s = spec(r#"{"type":"hot-cold","hot_fraction":0.2,"hot_write_fraction":0.8}"#, 64 << 20, 20_000);
        let mut buf = Vec::new();
        assert_eq!(write_synth(&s, &mut buf, "/dev/x").unwrap(), 20_000);
        let (_dir, p) = write_tmp("synth_hc.iolog", &buf);
        let recs = all_records(&TraceConfig::new(&p)).unwrap();
        assert_eq!(recs.len(), 20_000);
        let hot = recs.iter().filter(|r| r.offset < (64 << 20) / 5).count() as f64 / 20_000.0;
        assert!((hot - 0.8).abs() < 0.02, "hot share {hot}");
        assert!(recs.iter().all(|r| r.len == 4096 && r.offset % 4096 == 0 && r.offset + 4096 <= 64 << 20));
        assert_eq!(recs[3].t_ns, 30_000);
        // the same seed: the same bytes
        let mut again = Vec::new();
        write_synth(&s, &mut again, "/dev/x").unwrap();
        assert_eq!(buf, again);
    }

    #[test]
    fn refuses_what_it_cannot_make() {
        let mut s = spec(r#"{"type":"uniform"}"#, 1 << 20, 10);
        s.span = 1000;
        assert!(check(&s).unwrap_err().to_string().contains("span"));
        s.span = 1 << 20;
        s.count = 0;
        assert!(check(&s).unwrap_err().to_string().contains("count"));
        let t = spec(r#"{"type":"sk-hynix"}"#, 1 << 20, 10);
        assert!(check(&t).unwrap_err().to_string().contains("workload.type"));
        let big = spec(r#"{"type":"uniform","request_size":"2MiB"}"#, 1 << 20, 10);
        assert!(write_synth(&big, &mut Vec::new(), "/dev/x").unwrap_err().to_string().contains("request_size"));
    }
}
