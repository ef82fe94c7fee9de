//! Tenants: the command stream of several namespaces, each driven by its own workload over
//! its own slice of the LBA space, interleaved by share of commands, by share of bytes, or
//! by trace timestamps.  A tenant's writes carry its placement handle (per workload stream).

use super::{self as workload, Pattern, Workload};
use crate::config::placement::{Interleave, Namespace};
use crate::error::{Error, Result};
use crate::op::Op;
use crate::rng::Rng;

/// One tenant: its workload, where its namespace starts, and its handle map.
#[derive(Debug)]
pub struct Tenant {
    wl: Workload,
    /// First unit of the namespace, in the tenants' units.
    base: u64,
    /// Tenant units per unit of the stream (sectors per page when the tenant works in pages
    /// and the stream in sectors, else 1).
    scale: u64,
    /// Handle of each workload stream (empty: the workload's own stream).
    handles: Vec<u32>,
    /// Timestamp interleaving: the tenant's next command, once read.
    pending: Option<Op>,
    done: bool,
}

#[derive(Debug)]
pub struct Tenants {
    tenants: Vec<Tenant>,
    /// Cumulative choice thresholds (scaled to 2^64); empty with timestamps.
    cum: Vec<u64>,
    /// Commands handed out per tenant.
    pub commands: Vec<u64>,
    /// The stream has ended (a tenant's trace, or with timestamps every trace).
    ended: bool,
}

impl Tenants {
    /// The next command, or None at the end of the stream (a tenant's trace ended, or with
    /// timestamps every tenant's trace).
    pub fn next_op(&mut self, rng: &mut Rng) -> Result<Option<Op>> {
        if self.ended {
            return Ok(None); // the end is final: no tenant is read past it
        }
        let op = self.next_inner(rng);
        if !matches!(op, Ok(Some(_))) {
            self.ended = true;
        }
        op
    }

    fn next_inner(&mut self, rng: &mut Rng) -> Result<Option<Op>> {
        let i = if self.cum.is_empty() {
            match self.earliest(rng)? {
                Some(i) => i,
                None => return Ok(None),
            }
        } else if self.cum.len() == 1 {
            0
        } else {
            let r = rng.next_u64();
            self.cum.iter().position(|&c| r < c).unwrap_or(self.cum.len() - 1)
        };
        let t = &mut self.tenants[i];
        let op = match t.pending.take() {
            Some(op) => op,
            None => match next_of(t, rng)? {
                Some(op) => op,
                None => return Ok(None),
            },
        };
        self.commands[i] += 1;
        let stream = match t.handles.len() {
            0 => op.stream,
            n => t.handles[(op.stream as usize).min(n - 1)],
        };
        Ok(Some(Op {
            kind: op.kind,
            start: t.base + op.start * t.scale,
            len: op.len * t.scale as u32,
            stream,
            t_ns: op.t_ns,
        }))
    }

    /// Timestamp interleaving: the tenant whose next command comes first (ties: the first
    /// tenant), or None when every trace has ended.
    fn earliest(&mut self, rng: &mut Rng) -> Result<Option<usize>> {
        let mut best: Option<(u64, usize)> = None;
        for (i, t) in self.tenants.iter_mut().enumerate() {
            if t.pending.is_none() && !t.done {
                t.pending = next_of(t, rng)?;
                t.done = t.pending.is_none();
            }
            if let Some(op) = &t.pending {
                if best.is_none_or(|(b, _)| op.t_ns < b) {
                    best = Some((op.t_ns, i));
                }
            }
        }
        Ok(best.map(|b| b.1))
    }

    /// Whether the stream can end (a tenant replays a trace).
    pub fn finite(&self) -> bool {
        self.tenants.iter().any(|t| t.wl.finite())
    }

    /// Trace replay figures of the tenants' traces: (records, passes, skipped bad lines).
    pub fn trace_figures(&self) -> Option<(u64, u64, u64)> {
        let mut any = false;
        let mut f = (0, 0, 0);
        for t in &self.tenants {
            if let Pattern::Trace(tr) = &t.wl.pattern {
                any = true;
                f.0 += tr.records();
                f.1 += tr.passes;
                f.2 += tr.skipped_bad();
            }
        }
        any.then_some(f)
    }
}

/// A tenant's next command; None (and the error kept) at its end.
fn next_of(t: &mut Tenant, rng: &mut Rng) -> Result<Option<Op>> {
    let op = t.wl.next(rng);
    if op.len == 0 {
        t.done = true;
        return match t.wl.finish() {
            Ok(()) => Ok(None),
            Err(e) => Err(e),
        };
    }
    Ok(Some(op))
}

/// The tenants' stream: the namespaces' workloads (built with `build(ns, sectors)`), in
/// pages when every tenant works in pages.
pub fn build(
    namespaces: &[Namespace],
    interleave: Interleave,
    sectors_per_page: u64,
    sector_size: u64,
    mut build: impl FnMut(&Namespace, usize) -> Result<Workload>,
) -> Result<Workload> {
    let mut wls = Vec::with_capacity(namespaces.len());
    for (i, ns) in namespaces.iter().enumerate() {
        let wl = build(ns, i).map_err(|mut e| {
            if let Some(k) = e.key.as_mut() {
                if k.starts_with("workload") {
                    *k = format!("namespace[{i}].{k}");
                }
            }
            e
        })?;
        wls.push(wl);
    }
    let pages = wls.iter().all(|w| w.pages);
    let mut weights = Vec::with_capacity(namespaces.len());
    for (i, (ns, wl)) in namespaces.iter().zip(&wls).enumerate() {
        weights.push(match interleave {
            Interleave::Iops => ns.share,
            Interleave::Timestamps => 0.0,
            Interleave::Bytes => {
                let unit = if wl.pages { sectors_per_page * sector_size } else { sector_size };
                let mean = wl.mean_request_units().ok_or_else(|| {
                    Error::config(
                        &format!("namespace[{i}].workload.type"),
                        "has no fixed mean request size; interleave by \"iops\" (run.interleave)",
                    )
                })?;
                ns.share / (mean * unit as f64)
            }
        });
    }
    let cum = if interleave == Interleave::Timestamps { vec![] } else { workload::cumulative_weights(&weights) };
    let tenants = namespaces
        .iter()
        .zip(wls)
        .map(|(ns, wl)| {
            let scale = if !pages && wl.pages { sectors_per_page } else { 1 };
            let base = if pages { ns.first_sector / sectors_per_page } else { ns.first_sector };
            Tenant { wl, base, scale, handles: ns.handles.clone(), pending: None, done: false }
        })
        .collect();
    let n = namespaces.len();
    Ok(Workload::of_pattern(
        Pattern::Tenants(Box::new(Tenants { tenants, cum, commands: vec![0; n], ended: false })),
        pages,
    ))
}
