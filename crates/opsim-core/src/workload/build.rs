//! A [`Workload`] from its `[workload]` table: every key checked (range, and whether the
//! type uses it), the request shape, the address pattern and the JESD219 tables.

use super::{fio, Pattern, Sequential, SizeMix, SkHynix, TraceFeed, Uniform, Workload, Zipf, Zone, Zoned};
use crate::config::{WorkloadConfig, WorkloadType};
use crate::error::{Error, Result};

fn frac(key: &str, v: Option<crate::units::Fraction>, lo_excl: f64, hi_excl: f64) -> Result<f64> {
    let v = v.ok_or_else(|| Error::workload(key, "is required for this workload type"))?.0;
    if !(v > lo_excl && v < hi_excl) {
        return Err(Error::workload(key, format!("{v} is out of range; expected a value in ({lo_excl}, {hi_excl})")));
    }
    Ok(v)
}

fn to_threshold(p: f64) -> u64 {
    if p >= 1.0 {
        u64::MAX
    } else {
        (p * 18446744073709551616.0) as u64
    }
}

/// Cumulative thresholds (scaled to 2^64) of positive weights (normalised to sum to 1).
pub(crate) fn cumulative_weights(w: &[f64]) -> Vec<u64> {
    let total: f64 = w.iter().sum();
    let p: Vec<f64> = w.iter().map(|x| x / total).collect();
    cumulative(&p)
}

/// Cumulative thresholds (scaled to 2^64) of probabilities summing to 1.
fn cumulative(p: &[f64]) -> Vec<u64> {
    let mut acc = 0.0;
    let mut v: Vec<u64> = p
        .iter()
        .map(|x| {
            acc += x;
            to_threshold(acc)
        })
        .collect();
    if let Some(l) = v.last_mut() {
        *l = u64::MAX;
    }
    v
}

/// JEDEC JESD219 enterprise endurance workload: transfer sizes (bytes, % of IOs) ...
pub const JESD219_SIZES: [(u64, f64); 12] = [
    (512, 4.0),
    (1024, 1.0),
    (1536, 1.0),
    (2048, 1.0),
    (2560, 1.0),
    (3072, 1.0),
    (3584, 1.0),
    (4096, 67.0),
    (8192, 10.0),
    (16384, 7.0),
    (32768, 3.0),
    (65536, 3.0),
];
/// ... and LBA zones (fraction of the user LBAs from LBA 0, fraction of accesses).
pub const JESD219_ZONES: [(f64, f64); 3] = [(0.05, 0.50), (0.15, 0.30), (0.80, 0.20)];

/// Split `span_units` into zones of the given fractions (boundaries on `align`), with the
/// given access probabilities; every zone must hold at least one request of `min_len`.
fn zoned(span_units: u64, parts: &[(f64, f64)], align: u64, len: u64, streams: &[u32], key: &str) -> Result<Zoned> {
    let mut zones = Vec::with_capacity(parts.len());
    let mut base = 0u64;
    let mut acc = 0.0;
    for (i, &(f, _)) in parts.iter().enumerate() {
        acc += f;
        let end =
            if i + 1 == parts.len() { span_units } else { ((span_units as f64 * acc).round() as u64 / align) * align };
        let units = end.saturating_sub(base);
        if units < len {
            return Err(Error::workload(key, "leaves a region smaller than one request"));
        }
        zones.push(Zone { base, units, slots: (units - len) / align + 1, stream: streams[i] });
        base = end;
    }
    let probs: Vec<f64> = parts.iter().map(|p| p.1).collect();
    Ok(Zoned { zones, cum: cumulative(&probs), align })
}

/// Build the workload over the first `accessible_sectors` sectors of the drive.
/// `kind_override` replaces the configured type (the PTS stages use it).
pub fn build(
    w: &WorkloadConfig,
    kind: WorkloadType,
    accessible_sectors: u64,
    sector_size: u64,
    page_size: u64,
    streams: u32,
    request_override: Option<u64>,
) -> Result<Workload> {
    let (rf, tf) = check_fractions(w)?;
    // Internal stages (sequential fill, PTS) override the type; only the configured type
    // is checked for keys it does not use.
    let strict = kind == w.kind;
    let unused = |key: &str, present: bool| -> Result<()> {
        if present && strict {
            Err(Error::workload(key, format!("is not used by workload type \"{}\"", kind.name())))
        } else {
            Ok(())
        }
    };
    check_unused_keys(w, kind, &unused)?;
    let mix = |read: f64, trim: f64| {
        (if read > 0.0 { to_threshold(read) } else { 0 }, if read + trim > 0.0 { to_threshold(read + trim) } else { 0 })
    };
    let (read_threshold, trim_threshold) = mix(rf, tf);

    if kind == WorkloadType::Trace {
        return build_trace(w, accessible_sectors, sector_size, streams);
    }
    if kind == WorkloadType::Fio {
        return fio::build(w, accessible_sectors, sector_size, page_size);
    }
    let shape = Shape::new(w, kind, accessible_sectors, sector_size, page_size, request_override, &unused)?;
    let (pattern, sizes) = pattern(w, kind, &shape, page_size, streams)?;
    Ok(Workload {
        len: shape.len as u32,
        read_threshold,
        trim_threshold,
        sizes,
        ..Workload::of_pattern(pattern, shape.pages)
    })
}

/// `workload.span`, `read_fraction` and `trim_fraction` in range: the read and trim fractions.
fn check_fractions(w: &WorkloadConfig) -> Result<(f64, f64)> {
    let span = w.span.0;
    if !(span > 0.0 && span <= 1.0) {
        return Err(Error::workload("workload.span", format!("{span} is out of range; expected (0, 1]")));
    }
    let rf = w.read_fraction.0;
    if !(0.0..1.0).contains(&rf) {
        return Err(Error::workload("workload.read_fraction", format!("{rf} is out of range; expected [0, 1)")));
    }
    let tf = w.trim_fraction.0;
    if !(0.0..1.0).contains(&tf) || rf + tf >= 1.0 {
        return Err(Error::workload(
            "workload.trim_fraction",
            format!("{tf} is out of range; expected [0, 1) with read_fraction + trim_fraction < 1"),
        ));
    }
    Ok((rf, tf))
}

/// Keys of other workload types given to this one: refused (by `unused`).
fn check_unused_keys(w: &WorkloadConfig, kind: WorkloadType, unused: &impl Fn(&str, bool) -> Result<()>) -> Result<()> {
    use WorkloadType as T;
    unused("workload.hot_fraction", w.hot_fraction.is_some() && kind != T::HotCold)?;
    unused("workload.hot_write_fraction", w.hot_write_fraction.is_some() && kind != T::HotCold)?;
    unused("workload.zipf_exponent", w.zipf_exponent.is_some() && kind != T::Zipf)?;
    unused("workload.stride", w.stride.is_some() && kind != T::Sequential)?;
    unused("workload.sequential_streams", w.sequential_streams.is_some() && kind != T::Sequential)?;
    for (k, v) in [
        ("workload.sequential_chunk", w.sequential_chunk.is_some()),
        ("workload.random_chunk", w.random_chunk.is_some()),
        ("workload.sequential_request_size", w.sequential_request_size.is_some()),
    ] {
        unused(k, v && kind != T::SkHynix)?;
    }
    unused("workload.zone_size", w.zone_size.is_some() && kind != T::Zoned)?;
    unused("workload.active_zones", w.active_zones.is_some() && kind != T::Zoned)?;
    if kind == T::Zoned {
        // the zoned writer makes its own commands: writes, and a TRIM per zone reset
        for (k, v) in [
            ("workload.align", w.align.is_some()),
            ("workload.read_fraction", w.read_fraction.0 > 0.0),
            ("workload.trim_fraction", w.trim_fraction.0 > 0.0),
        ] {
            unused(k, v)?;
        }
    }
    if matches!(kind, T::Trace | T::Fio) {
        // a trace or a fio job file gives the region, the request sizes and the mix
        for (k, v) in [
            ("workload.request_size", w.request_size.is_some()),
            ("workload.align", w.align.is_some()),
            ("workload.read_fraction", w.read_fraction.0 > 0.0),
            ("workload.trim_fraction", w.trim_fraction.0 > 0.0),
            ("workload.span", w.span.0 != 1.0),
        ] {
            unused(k, v)?;
        }
    }
    unused("workload.job", w.job.is_some() && kind != T::Fio)?;
    unused("workload.section", w.section.is_some() && kind != T::Fio)?;
    unused("workload.trace", w.trace.is_some() && kind != T::Trace)
}

/// A trace replay: no request shape or mix of its own (the trace has them).
fn build_trace(w: &WorkloadConfig, accessible_sectors: u64, sector_size: u64, streams: u32) -> Result<Workload> {
    let tc = w.trace.as_ref().ok_or_else(|| {
        Error::workload("workload.trace", "is required for type \"trace\" (a table with at least path)")
    })?;
    let feed = TraceFeed::open(tc, accessible_sectors, sector_size, streams)?;
    Ok(Workload::of_pattern(Pattern::Trace(Box::new(feed)), false))
}

/// A synthetic workload's requests: their size and alignment in units (pages when both are
/// page multiples, else sectors) over the span.
struct Shape {
    /// JESD219 with its own size mix (in sectors).
    jedec_sizes: bool,
    pages: bool,
    unit: u64,
    span_units: u64,
    len: u64,
    align_u: u64,
    slots: u64,
}

impl Shape {
    fn new(
        w: &WorkloadConfig,
        kind: WorkloadType,
        accessible_sectors: u64,
        sector_size: u64,
        page_size: u64,
        request_override: Option<u64>,
        unused: &impl Fn(&str, bool) -> Result<()>,
    ) -> Result<Shape> {
        use WorkloadType as T;
        let default_req = if kind == T::SkHynix { page_size.max(4096) } else { page_size };
        let req = request_override.unwrap_or_else(|| w.request_size.map(|r| r.0).unwrap_or(default_req));
        if req == 0 || req % sector_size != 0 {
            return Err(Error::workload(
                "workload.request_size",
                format!("{req} bytes is not a positive multiple of the {sector_size}-byte sector"),
            ));
        }
        let align = if request_override.is_some() {
            req.min(page_size)
        } else {
            w.align.map(|a| a.0).unwrap_or(req.min(page_size))
        };
        if align == 0 || align % sector_size != 0 {
            return Err(Error::workload(
                "workload.align",
                format!("{align} bytes is not a positive multiple of the sector size"),
            ));
        }
        // JESD219 with its own size mix works in sectors
        let jedec_sizes = kind == T::Jesd219 && w.request_size.is_none() && request_override.is_none();
        if jedec_sizes {
            unused("workload.align", w.align.is_some())?;
        }
        let pages = !jedec_sizes && req % page_size == 0 && align % page_size == 0;
        let unit = if pages { page_size } else { sector_size };
        let span_units = ((accessible_sectors * sector_size) as f64 * w.span.0 / unit as f64).floor() as u64;
        let len = req / unit;
        let align_u = align / unit;
        if len > span_units {
            return Err(Error::workload(
                "workload.request_size",
                format!("{req} bytes is larger than the workload span"),
            ));
        }
        if len > u32::MAX as u64 {
            return Err(Error::workload("workload.request_size", "is too large"));
        }
        let slots = (span_units - len) / align_u + 1;
        Ok(Shape { jedec_sizes, pages, unit, span_units, len, align_u, slots })
    }
}

/// The address pattern of a synthetic workload type (and JESD219's size mix).
fn pattern(
    w: &WorkloadConfig,
    kind: WorkloadType,
    sh: &Shape,
    page_size: u64,
    streams: u32,
) -> Result<(Pattern, Option<SizeMix>)> {
    use WorkloadType as T;
    let (unit, span_units, len, align_u) = (sh.unit, sh.span_units, sh.len, sh.align_u);
    let mut sizes = None;
    let pattern = match kind {
        T::Uniform | T::SniaPts => Pattern::Uniform(Uniform { base: 0, slots: sh.slots, align: align_u }),
        T::Sequential => sequential(w, sh)?,
        T::HotCold => {
            let f = frac("workload.hot_fraction", w.hot_fraction, 0.0, 1.0)?;
            let r = frac("workload.hot_write_fraction", w.hot_write_fraction, 0.0, 1.0)?;
            let hot_stream = if streams >= 2 { 1 } else { 0 };
            Pattern::Zoned(zoned(
                span_units,
                &[(f, r), (1.0 - f, 1.0 - r)],
                align_u,
                len,
                &[hot_stream, 0],
                "workload.hot_fraction",
            )?)
        }
        T::Jesd219 => {
            let jedec_sizes = sh.jedec_sizes;
            let z = zoned(
                span_units,
                &JESD219_ZONES,
                if jedec_sizes { 4096 / unit } else { align_u },
                if jedec_sizes { 65536 / unit } else { len },
                &[0, 0, 0],
                "workload.span",
            )?;
            if jedec_sizes {
                let p: Vec<f64> = JESD219_SIZES.iter().map(|s| s.1 / 100.0).collect();
                sizes = Some(SizeMix {
                    cum: cumulative(&p),
                    len: JESD219_SIZES.iter().map(|s| (s.0 / unit) as u32).collect(),
                    align: JESD219_SIZES.iter().map(|s| if s.0 >= 4096 { (4096 / unit) as u32 } else { 1 }).collect(),
                });
            }
            Pattern::Zoned(z)
        }
        T::Zipf => {
            let s = w
                .zipf_exponent
                .ok_or_else(|| Error::workload("workload.zipf_exponent", "is required for type \"zipf\""))?
                .0;
            if !(s > 0.0 && s <= 10.0) {
                return Err(Error::workload(
                    "workload.zipf_exponent",
                    format!("{s} is out of range; expected (0, 10]"),
                ));
            }
            Pattern::Zipf(Zipf::new(0, sh.slots, align_u, s))
        }
        T::SkHynix => sk_hynix(w, sh, page_size)?,
        T::Zoned => {
            let (zones, zone_units, active) = super::zoned::zones_of(w, span_units, unit, len, page_size)?;
            Pattern::ZoneWriter(Box::new(super::zoned::ZoneWriter::new(zones, zone_units, active, len as u32)))
        }
        T::Trace | T::Fio => unreachable!(),
    };
    Ok((pattern, sizes))
}

/// `sequential`: `sequential_streams` cursors, each over its region, stepping by `stride`.
fn sequential(w: &WorkloadConfig, sh: &Shape) -> Result<Pattern> {
    let (unit, span_units, len) = (sh.unit, sh.span_units, sh.len);
    let stride = match w.stride {
        Some(s) if s.0 == 0 || s.0 % unit != 0 => {
            return Err(Error::workload(
                "workload.stride",
                format!("{} bytes is not a positive multiple of the {unit}-byte unit", s.0),
            ))
        }
        Some(s) => s.0 / unit,
        None => len,
    };
    let k = w.sequential_streams.unwrap_or(1);
    if k == 0 || k as u64 > span_units / len {
        return Err(Error::workload(
            "workload.sequential_streams",
            format!("{k} is out of range; expected 1..={}", span_units / len),
        ));
    }
    let region = span_units / k as u64;
    Ok(Pattern::Sequential(Sequential {
        base: 0,
        span: span_units,
        stride,
        region,
        cursors: vec![0; k as usize],
        next: 0,
    }))
}

/// `sk-hynix`: sequential chunks of large requests alternating with random chunks.
fn sk_hynix(w: &WorkloadConfig, sh: &Shape, page_size: u64) -> Result<Pattern> {
    let page_multiple = |key: &str, v: u64| -> Result<u64> {
        if v == 0 || v % page_size != 0 {
            Err(Error::workload(key, format!("{v} bytes is not a positive multiple of the {page_size}-byte page")))
        } else {
            Ok(v / page_size)
        }
    };
    if !sh.pages {
        return Err(Error::workload("workload.request_size", "sk-hynix needs page-multiple requests"));
    }
    let seq_len = page_multiple(
        "workload.sequential_request_size",
        w.sequential_request_size.map(|x| x.0).unwrap_or(512 * 1024).max(page_size),
    )?;
    let seq_chunk = page_multiple("workload.sequential_chunk", w.sequential_chunk.map(|x| x.0).unwrap_or(1 << 30))?;
    let rand_chunk = page_multiple("workload.random_chunk", w.random_chunk.map(|x| x.0).unwrap_or(200 << 20))?;
    if seq_len > sh.span_units || seq_len > u32::MAX as u64 {
        return Err(Error::workload("workload.sequential_request_size", "is larger than the workload span"));
    }
    Ok(Pattern::SkHynix(SkHynix {
        span: sh.span_units,
        seq_len: seq_len as u32,
        rand_len: sh.len as u32,
        seq_chunk,
        rand_chunk,
        cursor: 0,
        filled: 0,
        left: seq_chunk,
        in_seq: true,
    }))
}
