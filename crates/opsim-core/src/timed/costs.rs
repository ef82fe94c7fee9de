//! The timed model's charges, in one place: the per-unit NAND, channel, link and firmware
//! times the event loop's `Device` charges, and from them the mean time each resource
//! (controller, host link, NAND dies, flash channels) spends per IO of a workload mix at a
//! given WAF.  The busiest resource bounds the steady IOPS (operational bottleneck law);
//! queueing is not modelled, so the bound is an upper one and the event model gives the
//! achieved figure.  The advisor's analytic screen asks this function; it restates nothing.

use super::mixed::{mixed_iops, Station};
use super::{PageTiming, Resolved};
use crate::config::gc::GcUnitKind;
use crate::error::{Error, Result};
use crate::geometry::GcUnit;
use serde::{Deserialize, Serialize};

/// Per-unit charges resolved from the timing, in integer nanoseconds as the event loop
/// charges them (`Device` takes its own from here).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct UnitCosts {
    /// Die time to program one mapping unit aggregated into a program (tPROG / units).
    pub prog_unit_ns: u64,
    /// The same in SLC mode (native timing without an SLC cache).
    pub slc_prog_unit_ns: u64,
    /// SLC-mode read (tR without an SLC cache).
    pub slc_read_ns: u64,
    /// An SLC-mode program: (units per program, tPROG).
    pub slc_program: (u64, u64),
}

impl UnitCosts {
    pub fn new(r: &Resolved) -> Self {
        let prog_unit_ns = (r.t_prog_ns / r.units_per_program as u64).max(1);
        let (slc_prog_unit_ns, slc_read_ns, slc_program) = match &r.slc {
            Some(s) => (
                (s.t_prog_ns / s.units_per_program as u64).max(1),
                s.t_read_ns,
                (s.units_per_program as u64, s.t_prog_ns),
            ),
            None => (prog_unit_ns, r.t_read_ns, (r.units_per_program as u64, r.t_prog_ns)),
        };
        UnitCosts { prog_unit_ns, slc_prog_unit_ns, slc_read_ns, slc_program }
    }
}

/// Costs by page type (with `t_read_page_us` or `t_prog_page_us`): per type, tR, the
/// program time of one unit aggregated (the page's time / its units) and padded (the whole
/// page); the times not given stay uniform.  `pad_mean_ns`: a padded program of a unit whose
/// page is not known (the mean page).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct KindCosts {
    pub kinds: usize,
    pub read_ns: [u64; 4],
    pub prog_unit_ns: [u64; 4],
    pub prog_pad_ns: [u64; 4],
    pub pad_mean_ns: u64,
}

impl KindCosts {
    pub fn new(r: &Resolved, p: &PageTiming) -> Self {
        let mut c = KindCosts {
            kinds: p.bits as usize,
            read_ns: [r.t_read_ns; 4],
            prog_unit_ns: [UnitCosts::new(r).prog_unit_ns; 4],
            prog_pad_ns: [r.t_prog_ns; 4],
            pad_mean_ns: r.t_prog_ns,
        };
        if let Some(v) = &p.t_read_ns {
            c.read_ns[..v.len()].copy_from_slice(v);
        }
        if let Some(v) = &p.t_prog_ns {
            for (k, &t) in v.iter().enumerate() {
                c.prog_unit_ns[k] = (t / p.units_per_page as u64).max(1);
                c.prog_pad_ns[k] = t;
            }
            c.pad_mean_ns = (r.t_prog_ns as f64 / v.len() as f64).round() as u64;
        }
        c
    }

    /// The mean of a per-type cost over a word line (every type holds as many units).
    fn mean(&self, v: &[u64; 4]) -> f64 {
        v[..self.kinds].iter().sum::<u64>() as f64 / self.kinds as f64
    }
}

/// A superblock as its erase is charged: the dies of its stripe, each of which erases one
/// NAND block on every plane at once (one multi-plane erase, tBERS), and the scale model's
/// factor (1: the full drive), a unit holding 1/`scale` of the stripe's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuperblockErase {
    pub dies: u32,
    pub scale: u32,
}

impl SuperblockErase {
    /// The erase of the GC unit `u`: None for an FTL block.
    pub fn of(u: &GcUnit) -> Option<SuperblockErase> {
        match u.kind {
            GcUnitKind::Block => None,
            GcUnitKind::Superblock => Some(SuperblockErase { dies: u.dies.unwrap_or(1), scale: u.scale.max(1) }),
        }
    }
}

/// Share of a physical block erase (tBERS) each die spends per GC unit erased (the timed
/// model stripes every unit over all `dies`).  An FTL block of `ftl_block_units` spans that
/// many units / dies on each die, one tBERS per `block_units` (a NAND block on one plane),
/// at most one per die.  A superblock (`sb`) costs one multi-plane erase on each die of its
/// stripe: `sb.dies / dies` per die, and 1/`sb.scale` of that in a scale model, so a scale
/// model and its full drive charge the same erase time per page.
#[inline]
pub(crate) fn erase_share(ftl_block_units: u64, dies: u32, block_units: u64, sb: Option<SuperblockErase>) -> f64 {
    match sb {
        None => (ftl_block_units as f64 / dies as f64 / block_units as f64).min(1.0),
        Some(s) => s.dies as f64 / dies as f64 / s.scale as f64,
    }
}

/// Host link time of `bytes` (integer ns, as a command is charged).
#[inline]
pub(crate) fn link_ns(bytes: u64, link_ps_per_byte: u64) -> u64 {
    bytes * link_ps_per_byte / 1000
}

/// What the cost model needs of a drive: the resolved timing and how the drive writes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostModel {
    pub timing: Resolved,
    /// Write cache on: units are aggregated into programs; off: each pays a padded program.
    pub write_cache: bool,
    /// Steady state with an SLC cache that has a static part and folds when full: every host
    /// unit is programmed in SLC mode, then read in SLC mode and programmed in native mode.
    pub slc_folds: bool,
    /// A fresh drive with an SLC cache (a burst): every host unit is programmed in SLC mode
    /// and none is folded yet.  `describe` never sets it (its cost model is the steady
    /// state's); a caller costing a burst does.
    #[serde(default, skip_serializing_if = "is_false")]
    pub slc_burst: bool,
    /// Mapping units per FTL block (superblock): pages per block.
    pub ftl_block_units: u64,
    /// With `ftl.gc_unit = "superblock"`: its stripe and scale, which set the erase charge
    /// ([`erase_share`]); absent for FTL blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superblock: Option<SuperblockErase>,
    /// `ftl.meta_writes`: metadata pages programmed per host unit, beyond the data and GC
    /// copies (each a transfer and an aggregated unit program, and its share of erases).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub meta_writes: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

fn is_false(v: &bool) -> bool {
    !*v
}

/// A workload mix, per IO on average.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mix {
    /// Share of IOs that are writes (0..=1); the rest are reads.
    pub write_fraction: f64,
    /// Mapping units (pages) an IO touches, on average.
    pub units_per_io: f64,
    /// Bytes an IO moves over the host link, on average.
    pub bytes_per_io: f64,
    /// The reads are sequential: an IO's units are consecutive physical pages (striped over
    /// the dies), so with `read_whole_pages` the units on one NAND page share a sense.
    #[serde(default)]
    pub sequential: bool,
    /// Commands in flight (the host's queue depth).  With it, random reads are also bound by
    /// their latency at that depth ([`read_latency_iops`]); without it, by throughput alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth: Option<u32>,
}

/// Largest `mix.queue_depth` the latency bound takes (its mean-value analysis is linear in it).
pub const MAX_QUEUE_DEPTH: u32 = 1 << 20;

/// Senses (tR) per read IO of `u` units: one per unit; with `read_whole_pages` and
/// sequential reads, one per NAND page the IO's consecutive physical pages touch
/// ([`pages_touched`]).
pub(crate) fn senses_per_read(r: &Resolved, u: f64, sequential: bool) -> f64 {
    match &r.reads {
        Some(rt) if rt.read_whole_pages && sequential => pages_touched(u, r.dies as u64, rt.page_units as u64),
        _ => u,
    }
}

/// Senses (tR) per GC copy at garbage-collection WAF `waf_gc`: one per copy; with
/// `read_whole_pages`, one per multi-plane page (`ReadTiming::gc_sense_units`) holding a
/// valid unit of the victim, as the event model counts them (`Ftl::set_sense_layout`).  A
/// victim's valid share is `v = 1 - 1 / waf_gc` (each collected block yields `v / (1 - v)`
/// copies per page freed); with its valid units spread independently over its pages of `p`
/// units, a page holds one or more with probability `1 - (1 - v)^p`, so the senses per copy
/// are `(1 - (1 - v)^p) / (p v)`.
pub(crate) fn senses_per_copy(r: &Resolved, waf_gc: f64) -> f64 {
    match &r.reads {
        Some(rt) if rt.read_whole_pages && waf_gc > 1.0 => {
            let (v, p) = (1.0 - 1.0 / waf_gc, rt.gc_sense_units() as f64);
            (1.0 - (1.0 - v).powf(p)) / (p * v)
        }
        _ => 1.0,
    }
}

/// NAND pages `u` consecutive physical pages touch, on average, with `dies` dies striped
/// (ppn % dies) and `p` units per NAND page.  The pages of every die at one page index make
/// a stripe of `dies x p` consecutive physical pages, one page per die, so a run of `l`
/// physical pages inside a stripe touches `min(l, dies)` pages.  A whole `u` averages over
/// the starts of IOs laid out back to back from a stripe's start (`c x u`, as sequential
/// writes leave them; more than 65,536 distinct starts: as a fractional `u`); a fractional
/// `u` averages over every start: `m + (u - m) / p` with
/// `m = min(u, dies)` (Hermite's identity).
pub(crate) fn pages_touched(u: f64, dies: u64, p: u64) -> f64 {
    let stripe = dies * p;
    let whole = u.fract() == 0.0 && (1.0..=1e12).contains(&u);
    if !whole || stripe / gcd(u as u64 % stripe, stripe) > 1 << 16 {
        let m = u.min(dies as f64);
        return m + (u - m) / p as f64;
    }
    let u = u as u64;
    let touched = |a: u64| {
        let first = u.min(stripe - a);
        let rest = u - first;
        first.min(dies) + rest / stripe * dies + (rest % stripe).min(dies)
    };
    let starts = stripe / gcd(u % stripe, stripe);
    (0..starts).map(|c| touched(c * (u % stripe) % stripe)).sum::<u64>() as f64 / starts as f64
}

fn gcd(a: u64, b: u64) -> u64 {
    if a == 0 {
        b
    } else {
        gcd(b % a, a)
    }
}

/// One resource's load.
#[derive(Clone, Debug, Serialize)]
pub struct ResourceCost {
    pub resource: &'static str,
    /// Time the resource spends per IO (ns; per die or channel for the NAND array's).
    pub ns_per_io: f64,
    /// IOPS the resource alone allows: 1e9 / `ns_per_io`.
    pub iops: f64,
}

/// Per-IO costs and the bottleneck bound.
#[derive(Clone, Debug, Serialize)]
pub struct Costs {
    /// Every resource with a positive load, in the order controller, host link, NAND dies,
    /// flash channels; then, for random reads at a `queue_depth`, their latency at that depth
    /// ([`READ_LATENCY`]: `ns_per_io` is 1e9 / its IOPS, not one resource's time).
    pub resources: Vec<ResourceCost>,
    /// The busiest resource (the first of equals) and the IOPS it allows.
    pub bottleneck: &'static str,
    pub iops: f64,
}

/// The resources' names, as reports print them.
pub const CONTROLLER: &str = "controller";
pub const HOST_LINK: &str = "host link";
pub const NAND_DIES: &str = "NAND dies";
pub const FLASH_CHANNELS: &str = "flash channels";
pub const READ_LATENCY: &str = "read latency";

/// Random reads' IOPS with `n` commands in flight, by mean-value analysis of a closed
/// queueing network (Reiser and Lavenberg, JACM 27(2), 1980).  `stations`: (one read's total
/// demand in ns, number of identical servers it is spread over at random); each server is a
/// single FCFS queue carrying `d / k` a read.  A read routed to a server waits for the
/// commands already there, the one in service for its residual time, which is half the
/// service for a fixed service time and all of it for an exponential one: with `c2` the
/// service times' squared coefficient of variation (0: fixed, as every charge of the event
/// model is; 1: exponential, where the analysis is exact),
/// `R(n) = d (1 + Q(n - 1) + (c2 - 1) / 2 U(n - 1))` per station kind, with `U = X d / k`
/// each server's utilisation (the residual-life correction for FCFS servers of general
/// service: Reiser, "Mean-value analysis and convolution method for queue-dependent servers
/// in closed queueing networks", Performance Evaluation 1(1), 1981; Lazowska et al.,
/// "Quantitative System Performance", 1984, sec. 6.4.2), `X(n) = n / sum R(n)` and
/// `Q(n) = X(n) R(n) / k`.  Below the busiest server's bound for every `n` and approaching
/// it as `n` grows; at `n = 1`, one read's unloaded time.
pub(crate) fn read_latency_iops(n: u32, stations: &[(f64, f64)], c2: f64) -> f64 {
    let mut q = vec![0.0f64; stations.len()];
    let mut u = vec![0.0f64; stations.len()];
    let mut r = vec![0.0f64; stations.len()];
    let mut x = 0.0;
    for i in 1..=n {
        for (k, &(d, _)) in stations.iter().enumerate() {
            r[k] = d * (1.0 + q[k] + (c2 - 1.0) / 2.0 * u[k]);
        }
        x = i as f64 / r.iter().sum::<f64>();
        for (k, &(d, servers)) in stations.iter().enumerate() {
            q[k] = x * r[k] / servers;
            u[k] = x * d / servers;
        }
    }
    x * 1e9
}

/// Time per IO on each resource for `mix` at garbage-collection WAF `waf_gc` (NAND pages
/// programmed per host page for the data and its GC copies, >= 1: without the metadata pages
/// of `m.meta_writes`, which are charged on top), charged as the event loop charges: controller firmware
/// per command and per copied or folded page; the host link per byte; on the dies, host
/// units programmed (aggregated, or padded with the write cache off; in SLC mode when the
/// cache folds), folds (SLC read, native program), GC copies (read: a sense per copy, or per
/// victim page with `read_whole_pages` ([`senses_per_copy`]); program on their die),
/// erases (every die's share of each FTL block) and host reads (a sense per unit, or per
/// NAND page a sequential read touches with `read_whole_pages`, shared by the die's
/// `read_planes` independent groups), metadata pages (transfer and program, as the event
/// loop's `Device::meta`); on the channels, every unit moved (GC copies and folds twice).
pub fn costs(m: &CostModel, mix: &Mix, waf_gc: f64) -> Result<Costs> {
    let w = mix.write_fraction;
    if !(w.is_finite() && (0.0..=1.0).contains(&w)) {
        return Err(Error::workload("mix.write_fraction", format!("{w} is out of range 0..=1")));
    }
    for (k, v) in [("mix.units_per_io", mix.units_per_io), ("mix.bytes_per_io", mix.bytes_per_io)] {
        if !(v.is_finite() && v > 0.0) {
            return Err(Error::workload(k, format!("{v} must be a positive number")));
        }
    }
    if !(waf_gc.is_finite() && waf_gc >= 1.0) {
        return Err(Error::workload("waf", format!("{waf_gc} must be a number >= 1")));
    }
    if let Some(n) = mix.queue_depth.filter(|&n| n == 0 || n > MAX_QUEUE_DEPTH) {
        return Err(Error::workload("mix.queue_depth", format!("{n} is out of range 1..={MAX_QUEUE_DEPTH}")));
    }
    let r = &m.timing;
    if r.dies == 0 || r.channels == 0 || r.units_per_program == 0 || r.block_units == 0 || m.ftl_block_units == 0 {
        return Err(Error::config("timing", "dies, channels, units per program and block sizes must be positive"));
    }
    let uc = UnitCosts::new(r);
    let kinds = r.pages.as_ref().map(|p| KindCosts::new(r, p));
    let u = mix.units_per_io;
    let copies = u * (waf_gc - 1.0);
    let folds = if m.slc_folds { u } else { 0.0 };
    crate::config::check_meta_writes(m.meta_writes)?;
    let meta = u * m.meta_writes;
    let xfer = r.xfer_ns as f64;
    let prog_unit = uc.prog_unit_ns as f64;
    // a host unit's program: at its place on the die, i.e. the mean over the page types
    let slc_host = m.slc_folds || m.slc_burst;
    let host_prog = match (slc_host, m.write_cache, &kinds) {
        (true, true, _) => uc.slc_prog_unit_ns as f64,
        (true, false, _) => uc.slc_program.1 as f64,
        (false, true, Some(k)) => k.mean(&k.prog_unit_ns),
        (false, true, None) => prog_unit,
        (false, false, Some(k)) => k.mean(&k.prog_pad_ns),
        (false, false, None) => r.t_prog_ns as f64,
    };
    let host_read = match &kinds {
        Some(k) => k.mean(&k.read_ns),
        None => r.t_read_ns as f64,
    };
    // a read sense occupies one of the die's independent read groups
    let read_groups = r.reads.as_ref().map_or(1.0, |x| x.read_planes as f64);
    let senses = senses_per_read(r, u, mix.sequential);
    let dies = r.dies as f64;
    let erases = (u + copies + meta) / m.ftl_block_units as f64;
    let erase_die_ns = r.t_erase_ns as f64 * erase_share(m.ftl_block_units, r.dies, r.block_units, m.superblock) * dies;
    // a write's NAND work, on the dies and on the channels
    let die_write = u * (xfer + host_prog)
        + folds * (uc.slc_read_ns as f64 + xfer + prog_unit)
        + copies * (senses_per_copy(r, waf_gc) * r.t_read_ns as f64 + xfer + prog_unit)
        + meta * (xfer + prog_unit)
        + erases * erase_die_ns;
    let ch_write = (u + meta) * xfer + (copies + folds) * 2.0 * xfer;
    let die_ns = w * die_write + (1.0 - w) * senses * host_read / read_groups;
    let ch_ns = w * ch_write + (1.0 - w) * u * xfer;
    let loads = [
        (CONTROLLER, r.fw_ns as f64 + w * ((copies + folds) * r.gc_fw_ns as f64 + erases * r.gc_reclaim_ns as f64)),
        (HOST_LINK, mix.bytes_per_io * r.link_ps_per_byte as f64 / 1000.0),
        (NAND_DIES, die_ns / dies),
        (FLASH_CHANNELS, ch_ns / r.channels as f64),
    ];
    let mut resources: Vec<ResourceCost> = loads
        .iter()
        .filter(|(_, v)| *v > 0.0)
        .map(|&(name, v)| ResourceCost { resource: name, ns_per_io: v, iops: 1e9 / v })
        .collect();
    // random reads at a queue depth: each holds a command slot from the controller through
    // its sense on one read group and its transfer on one channel to the host link, so their
    // latency bounds them too
    if let Some(n) = mix.queue_depth.filter(|_| w < 1.0 && !mix.sequential) {
        let link = mix.bytes_per_io * r.link_ps_per_byte as f64 / 1000.0;
        let channels = r.channels as f64;
        let iops = if w == 0.0 {
            let stations =
                [(r.fw_ns as f64, 1.0), (link, 1.0), (senses * host_read, dies * read_groups), (u * xfer, channels)];
            read_latency_iops(n, &stations, 0.0) / (1.0 - w)
        } else {
            // in a mix every command holds a slot (a write until its data is in the write
            // buffer), and the writes' NAND work, done after they complete, holds the dies,
            // channels and controller the reads wait for (`mixed`: a mixed network)
            let stations = [
                Station { demand: r.fw_ns as f64, servers: 1.0, open: w * (copies + folds) * r.gc_fw_ns as f64 },
                Station { demand: link, servers: 1.0, open: 0.0 },
                Station {
                    demand: (1.0 - w) * senses * host_read,
                    servers: dies * read_groups,
                    open: w * die_write / dies,
                },
                Station { demand: (1.0 - w) * u * xfer, servers: channels, open: w * ch_write / channels },
            ];
            mixed_iops(n, &stations, 0.0)
        };
        resources.push(ResourceCost { resource: READ_LATENCY, ns_per_io: 1e9 / iops, iops });
    }
    let mut worst = &resources[0];
    for c in &resources[1..] {
        if c.ns_per_io > worst.ns_per_io {
            worst = c;
        }
    }
    Ok(Costs { bottleneck: worst.resource, iops: worst.iops, resources })
}

#[cfg(test)]
mod tests {
    use super::super::Device;
    use super::*;
    use crate::config::timing::TimingConfig;

    fn resolved(extra: &str) -> Resolved {
        let t: TimingConfig = toml::from_str(&format!(
            "channels = 2\ndies_per_channel = 2\nplanes = 2\ncell = \"tlc\"\nnand_page_size = \"48KiB\"\nnand_block_size = \"12MiB\"\nt_read_us = 60\nt_prog_us = 1800\n{extra}"
        ))
        .unwrap();
        let mut r = t.resolve(4096).unwrap();
        t.resolve_slc(&mut r, 3).unwrap();
        r
    }

    fn model(r: Resolved, write_cache: bool, slc_folds: bool) -> CostModel {
        CostModel {
            timing: r,
            write_cache,
            slc_folds,
            slc_burst: false,
            ftl_block_units: 256,
            superblock: None,
            meta_writes: 0.0,
        }
    }

    fn mix(w: f64) -> Mix {
        Mix { write_fraction: w, units_per_io: 1.0, bytes_per_io: 4096.0, sequential: false, queue_depth: None }
    }

    fn load(c: &Costs, name: &str) -> f64 {
        c.resources.iter().find(|x| x.resource == name).map_or(0.0, |x| x.ns_per_io)
    }

    /// The per-unit charges are the event loop's own: a mean over every position of what
    /// `Device` charges a host unit equals the model's host program and read.
    #[test]
    fn unit_charges_are_the_devices() {
        for extra in ["", "t_read_page_us = [50, 100, 150]\nt_prog_page_us = [400, 1200, 2000]"] {
            let r = resolved(extra);
            let d = Device::new(r.clone(), true, 256, None);
            let period = (r.dies * r.units_per_program) as u64;
            let mean = |f: &dyn Fn(u32) -> u64| (0..period as u32).map(f).sum::<u64>() as f64 / period as f64;
            let (agg, pad, read) = (
                mean(&|p| d.prog_ns(p, false, false)),
                mean(&|p| d.prog_ns(p, true, false)),
                mean(&|p| d.read_ns(p, false)),
            );
            let xfer = r.xfer_ns as f64;
            let dies = r.dies as f64;
            // reads only: the die time is the mean read
            let c = costs(&model(r.clone(), true, false), &mix(0.0), 1.0).unwrap();
            assert!((load(&c, NAND_DIES) * dies - read).abs() < 1e-9, "{extra}");
            // writes without GC: transfer + program + the erase share of 1/256 of a block
            let erase = r.t_erase_ns as f64 * erase_share(256, r.dies, r.block_units, None) * dies / 256.0;
            let c = costs(&model(r.clone(), true, false), &mix(1.0), 1.0).unwrap();
            assert!((load(&c, NAND_DIES) * dies - (xfer + agg + erase)).abs() < 1e-6, "{extra}");
            let c = costs(&model(r.clone(), false, false), &mix(1.0), 1.0).unwrap();
            assert!((load(&c, NAND_DIES) * dies - (xfer + pad + erase)).abs() < 1e-6, "{extra}");
            // SLC: the device's SLC-mode charges
            let c = costs(&model(r.clone(), true, true), &mix(1.0), 1.0).unwrap();
            let fold = d.slc_read_ns as f64 + xfer + d.prog_unit_ns as f64;
            let want = xfer + d.prog_ns(0, false, true) as f64 + fold + erase;
            assert!((load(&c, NAND_DIES) * dies - want).abs() < 1e-6, "{extra}");
            // an SLC burst: the SLC-mode program, no fold
            let c = costs(&CostModel { slc_burst: true, ..model(r.clone(), true, false) }, &mix(1.0), 1.0).unwrap();
            let want = xfer + d.prog_ns(0, false, true) as f64 + erase;
            assert!((load(&c, NAND_DIES) * dies - want).abs() < 1e-6, "{extra}");
        }
    }

    /// The erase charged per page written: a superblock drive and its scale models by the
    /// core's rule (each superblock `k` times smaller) charge the same, and it is one
    /// multi-plane erase per die of the stripe; FTL blocks keep one tBERS per NAND block.
    #[test]
    fn superblock_erase_per_page_is_the_scale_models() {
        let text = "[drive]\nuser_capacity = \"16GiB\"\nop = 0.25\n[ftl]\ngc_unit = \"superblock\"\n\
                    [timing]\nnand_block_size = \"12MiB\"\nplanes = 2\nchannels = 8\ndies_per_channel = 2\n";
        let full = crate::describe::describe(crate::Config::from_toml_str(text).unwrap(), false).unwrap();
        let erase_per_page = |d: &crate::describe::Description| {
            let m = d.cost_model.clone().unwrap();
            let load = |waf| load(&costs(&m, &mix(1.0), waf).unwrap(), NAND_DIES);
            // copies cost (read + transfer + program) per page, erases per page written
            let copy =
                m.timing.t_read_ns as f64 + m.timing.xfer_ns as f64 + UnitCosts::new(&m.timing).prog_unit_ns as f64;
            let per_copy = (load(2.0) - load(1.0)) * m.timing.dies as f64;
            per_copy - copy
        };
        let r = full.timing.as_ref().unwrap();
        // the full superblock: 98,304 pages, one tBERS on each of its 16 dies
        let want = r.t_erase_ns as f64 * 16.0 / 98_304.0;
        assert_eq!(full.cost_model.as_ref().unwrap().superblock, Some(SuperblockErase { dies: 16, scale: 1 }));
        assert!((erase_per_page(&full) / want - 1.0).abs() < 1e-9, "{} vs {want}", erase_per_page(&full));
        for k in [2u64, 4, 64, 1024] {
            let cfg = full.scaled_config(&full.scaled(k, None).unwrap());
            let model = crate::describe::describe(cfg, false).unwrap();
            assert_eq!(model.drive.pages_per_block as u64 * k, 98_304);
            let got = erase_per_page(&model);
            assert!((got / want - 1.0).abs() < 1e-9, "scale {k}: {got} vs {want} ns of erase per page");
        }
        // a stripe over 4 of the 16 dies: one tBERS on each of the 4, per 24,576 pages
        let part = text.replace("[timing]", "superblock_dies = 4\n[timing]");
        let d = crate::describe::describe(crate::Config::from_toml_str(&part).unwrap(), false).unwrap();
        assert!((erase_per_page(&d) / want - 1.0).abs() < 1e-9);
        // FTL blocks as before: a 256-page block is 1/12 of a 3,072-unit NAND block
        assert_eq!(erase_share(256, 16, 3072, None), 256.0 / 16.0 / 3072.0);
        assert_eq!(erase_share(3072 * 32, 16, 3072, None), 1.0);
    }

    /// `ftl.meta_writes`: each metadata unit costs the dies a transfer and an aggregated
    /// program (the device's `meta` charge) and its share of erases, the channels a transfer;
    /// the controller and the host link nothing.  Out of range: refused naming the key.
    #[test]
    fn meta_writes_cost_a_transfer_a_program_and_their_erases() {
        for extra in ["", "t_read_page_us = [50, 100, 150]\nt_prog_page_us = [400, 1200, 2000]"] {
            let r = resolved(extra);
            let d = Device::new(r.clone(), true, 256, None);
            let (xfer, dies) = (r.xfer_ns as f64, r.dies as f64);
            let erase = r.t_erase_ns as f64 * erase_share(256, r.dies, r.block_units, None) * dies / 256.0;
            for waf_gc in [1.0, 2.5] {
                let plain = costs(&model(r.clone(), true, false), &mix(1.0), waf_gc).unwrap();
                let mut m = model(r.clone(), true, false);
                m.meta_writes = 0.25;
                let with = costs(&m, &mix(1.0), waf_gc).unwrap();
                let die = (load(&with, NAND_DIES) - load(&plain, NAND_DIES)) * dies;
                let want = 0.25 * (xfer + d.prog_unit_ns as f64 + erase);
                assert!((die - want).abs() < 1e-6, "{extra} {waf_gc}: {die} vs {want}");
                let ch = (load(&with, FLASH_CHANNELS) - load(&plain, FLASH_CHANNELS)) * r.channels as f64;
                assert!((ch - 0.25 * xfer).abs() < 1e-9);
                assert_eq!(load(&with, CONTROLLER), load(&plain, CONTROLLER));
                assert_eq!(load(&with, HOST_LINK), load(&plain, HOST_LINK));
                assert!(with.iops < plain.iops);
            }
        }
        for bad in [-0.1, 1.5, f64::NAN] {
            let mut m = model(resolved(""), true, false);
            m.meta_writes = bad;
            assert_eq!(costs(&m, &mix(1.0), 1.0).unwrap_err().key.as_deref(), Some("ftl.meta_writes"));
        }
        // a cost model written before the knob reads as off
        let m = model(resolved(""), true, false);
        let mut v = serde_json::to_value(&m).unwrap();
        assert!(v.get("meta_writes").is_none());
        v.as_object_mut().unwrap().remove("meta_writes");
        let back: CostModel = serde_json::from_value(v).unwrap();
        assert_eq!(back.meta_writes, 0.0);
    }

    #[test]
    fn gc_copies_load_every_resource_they_use() {
        let r = resolved("gc_fw_us = 3");
        let m = model(r.clone(), true, false);
        let (a, b) = (costs(&m, &mix(1.0), 1.0).unwrap(), costs(&m, &mix(1.0), 3.0).unwrap());
        assert!((load(&b, CONTROLLER) - load(&a, CONTROLLER) - 2.0 * 3000.0).abs() < 1e-9);
        let ch = 2.0 * 2.0 * r.xfer_ns as f64 / r.channels as f64;
        assert!((load(&b, FLASH_CHANNELS) - load(&a, FLASH_CHANNELS) - ch).abs() < 1e-9);
        // the event loop truncates each command's link time to whole ns
        assert!((load(&a, HOST_LINK) - link_ns(4096, r.link_ps_per_byte) as f64).abs() < 1.0);
        assert!(b.iops < a.iops);
    }

    /// Mean-value analysis against its closed forms: one read's unloaded time at one command;
    /// with exponential service, `k` identical servers alone keep `n / (n + k - 1)` of their
    /// bound (the product form of `n` commands routed at random over `k` queues: a server is
    /// idle in `(k - 1) / (n + k - 1)` of the states).  Fixed service times (the event model's)
    /// queue less, so more IOPS at every depth; both rise in `n`, stay below the busiest
    /// server's bound and approach it.
    #[test]
    fn read_latency_is_the_closed_networks() {
        let st = [(500.0, 1.0), (60_000.0, 64.0), (3_000.0, 8.0)];
        for c2 in [0.0, 1.0] {
            assert!((read_latency_iops(1, &st, c2) - 1e9 / 63_500.0).abs() < 1e-6);
        }
        for (n, k) in [(1u32, 1.0), (16, 64.0), (256, 256.0), (1000, 7.0)] {
            let x = read_latency_iops(n, &[(60_000.0, k)], 1.0);
            let want = k / 60e-6 * n as f64 / (n as f64 + k - 1.0);
            assert!((x / want - 1.0).abs() < 1e-9, "n {n} k {k}: {x} vs {want}");
        }
        let bound = 64.0 / 60e-6;
        let mut last = [0.0, 0.0];
        for n in [1, 2, 8, 64, 256, 4096, 65_536] {
            let x = [read_latency_iops(n, &st, 0.0), read_latency_iops(n, &st, 1.0)];
            assert!(x[0] > last[0] && x[1] > last[1] && x[0] < bound, "{n}: {x:?}");
            assert!(n == 1 || x[0] > x[1], "{n}: {x:?}");
            last = x;
        }
        assert!(last[1] > 0.99 * bound, "{last:?}");
    }

    /// With a queue depth, random reads gain the latency bound (and it can bind); writes,
    /// sequential reads and mixes without a depth keep the throughput bounds alone.
    #[test]
    fn queue_depth_bounds_random_reads_only() {
        let m = model(resolved("read_planes = 2\nfw_overhead_us = 0.1"), true, false);
        let with = |mut x: Mix, n| {
            x.queue_depth = Some(n);
            costs(&m, &x, 1.0).unwrap()
        };
        let plain = costs(&m, &read_mix(1.0, false), 1.0).unwrap();
        assert!(plain.resources.iter().all(|r| r.resource != READ_LATENCY));
        // 4 dies x 2 groups: at one command, one read's unloaded time binds
        let one = with(read_mix(1.0, false), 1);
        assert_eq!(one.bottleneck, READ_LATENCY);
        assert!(one.iops < 0.2 * plain.iops);
        let deep = with(read_mix(1.0, false), 4096);
        assert!(deep.iops < plain.iops && deep.iops > 0.99 * plain.iops, "{} vs {}", deep.iops, plain.iops);
        for x in [mix(1.0), read_mix(32.0, true)] {
            let c = with(x.clone(), 1);
            assert!(c.resources.iter().all(|r| r.resource != READ_LATENCY));
            assert_eq!(c.iops, costs(&m, &x, 1.0).unwrap().iops);
        }
        for n in [0, MAX_QUEUE_DEPTH + 1] {
            let mut x = read_mix(1.0, false);
            x.queue_depth = Some(n);
            assert_eq!(costs(&m, &x, 1.0).unwrap_err().key.as_deref(), Some("mix.queue_depth"));
        }
    }

    /// A read/write mix at a queue depth: every command holds a slot and the writes' NAND
    /// work holds the dies the reads wait for, so the bound falls below both the reads' own
    /// latency bound (scaled to the mix) and the throughput bounds, the more so the more the
    /// writes cost (a higher WAF); reads alone keep the closed network's figure exactly.
    #[test]
    fn a_mix_at_a_queue_depth_waits_behind_the_writes_nand_work() {
        let m = model(resolved("read_planes = 2\nfw_overhead_us = 1"), true, false);
        let at = |w: f64, waf: f64| {
            let mut x = mix(w);
            x.queue_depth = Some(32);
            costs(&m, &x, waf).unwrap()
        };
        let lat = |c: &Costs| c.resources.iter().find(|r| r.resource == READ_LATENCY).unwrap().iops;
        let reads = lat(&at(0.0, 1.0));
        let mut last = f64::INFINITY;
        for waf in [1.0, 2.0, 4.0] {
            let c = at(0.3, waf);
            let plain = costs(&m, &mix(0.3), waf).unwrap();
            assert!(lat(&c) < reads / 0.7 && lat(&c) < plain.iops && lat(&c) < last, "waf {waf}");
            assert_eq!(c.bottleneck, READ_LATENCY);
            last = lat(&c);
        }
    }

    #[test]
    fn bad_mix_is_refused_with_its_key() {
        let m = model(resolved(""), true, false);
        let e = costs(
            &m,
            &Mix { write_fraction: 1.5, units_per_io: 1.0, bytes_per_io: 1.0, sequential: false, queue_depth: None },
            1.0,
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("mix.write_fraction"));
        let e = costs(&m, &mix(0.5), 0.5).unwrap_err();
        assert_eq!(e.key.as_deref(), Some("waf"));
        let e = costs(
            &m,
            &Mix { write_fraction: 0.5, units_per_io: 0.0, bytes_per_io: 1.0, sequential: false, queue_depth: None },
            1.0,
        )
        .unwrap_err();
        assert_eq!(e.key.as_deref(), Some("mix.units_per_io"));
    }

    fn read_mix(units: f64, sequential: bool) -> Mix {
        Mix { write_fraction: 0.0, units_per_io: units, bytes_per_io: units * 4096.0, sequential, queue_depth: None }
    }

    /// `cmds` read commands of `units` units all issued at 0 through the event model's
    /// charges (firmware, senses and data out, link): ns per command at saturation.
    /// Sequential: units `c x units ..` back to back; random: scattered pages.
    fn drain(r: &Resolved, cmds: u64, units: u32, sequential: bool) -> f64 {
        let mut d = Device::new(r.clone(), true, 256, None);
        let mut end = 0;
        let mut x: u64 = 12345;
        for c in 0..cmds {
            let t = d.firmware(0);
            d.begin_read();
            let mut ready = t;
            for i in 0..units {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let p = if sequential { c as u32 * units + i } else { (x >> 33) as u32 % (1 << 24) };
                ready = ready.max(d.host_read(p, t, d.read_ns(p, false)));
            }
            end = end.max(d.link(ready, units as u64 * 4096));
        }
        end as f64 / cmds as f64
    }

    #[test]
    fn pages_a_sequential_read_touches() {
        // 32 units over 16 dies, 4-unit pages, back to back: 2 units a die, in one page
        assert_eq!(pages_touched(32.0, 16, 4), 16.0);
        // 32 units over 4 dies: 8 a die, 2 pages each
        assert_eq!(pages_touched(32.0, 4, 4), 8.0);
        // 6 units over 4 dies, 4-unit pages (a stripe of 16): starts 0, 6, 12, 2, 8, 14, 4, 10
        let want = [4, 4, 4 + 2, 4, 4, 2 + 4, 4, 4].iter().sum::<u64>() as f64 / 8.0;
        assert_eq!(pages_touched(6.0, 4, 4), want);
        // a fractional mean: every start
        assert!((pages_touched(2.5, 4, 4) - 2.5).abs() < 1e-12);
        assert!((pages_touched(32.5, 4, 4) - (4.0 + 28.5 / 4.0)).abs() < 1e-12);
    }

    /// Sequential 128 KiB reads with independent planes and whole-page reads: the event
    /// model's saturated rate matches `costs()`, whichever resource bounds it.
    #[test]
    fn sequential_read_bandwidth_event_model_vs_costs() {
        let base = "read_planes = 2\nread_whole_pages = true\nfw_overhead_us = 0.1\n";
        for (extra, bound) in [
            ("channel_mbps = 100000\nlink_mbps = 100000", NAND_DIES),
            ("channel_mbps = 200\nlink_mbps = 100000", FLASH_CHANNELS),
            ("channel_mbps = 100000\nlink_mbps = 1000", HOST_LINK),
        ] {
            let r = resolved(&format!("{base}{extra}"));
            let c = costs(&model(r.clone(), true, false), &read_mix(32.0, true), 1.0).unwrap();
            assert_eq!(c.bottleneck, bound, "{extra}");
            let ns = drain(&r, 4000, 32, true);
            let rel = ns * c.iops / 1e9;
            assert!((1.0..1.03).contains(&rel), "{extra}: event {ns} ns per IO, costs {} ns: {rel}", 1e9 / c.iops);
        }
        // the dies' bound: 4 dies x 2 planes of 16 KiB per 60 us
        let r = resolved(&format!("{base}channel_mbps = 100000\nlink_mbps = 100000"));
        let c = costs(&model(r, true, false), &read_mix(32.0, true), 1.0).unwrap();
        let mbps = c.iops * 131072.0 / 1e6;
        assert!((mbps - 4.0 * 2.0 * 16384.0 / 60.0).abs() < 1.0, "{mbps}");
        // without whole pages, 32 senses an IO; without plane groups, twice the die time
        let r = resolved("channel_mbps = 100000\nlink_mbps = 100000\nfw_overhead_us = 0.1");
        let c1 = costs(&model(r, true, false), &read_mix(32.0, true), 1.0).unwrap();
        assert!((c1.iops * 32.0 / 8.0 * 2.0 - c.iops).abs() < 1e-6 * c.iops);
    }

    /// Random 4 KiB reads at saturation: the event model reaches the dies' bound within a
    /// few %, which independent plane groups raise by their number.
    #[test]
    fn random_read_iops_event_model_vs_costs() {
        let mut last = 0.0;
        for planes in [1, 2] {
            let r = resolved(&format!(
                "read_planes = {planes}\nfw_overhead_us = 0.1\nchannel_mbps = 100000\nlink_mbps = 100000"
            ));
            let c = costs(&model(r.clone(), true, false), &read_mix(1.0, false), 1.0).unwrap();
            assert_eq!(c.bottleneck, NAND_DIES);
            assert!((c.iops - 4.0 * planes as f64 / 60e-6).abs() < 1e-6 * c.iops);
            let iops = 1e9 / drain(&r, 40_000, 1, false);
            assert!(iops <= c.iops * 1.001 && iops > 0.95 * c.iops, "planes {planes}: {iops} vs {}", c.iops);
            assert!(iops > 1.9 * last);
            last = iops;
        }
    }
}
