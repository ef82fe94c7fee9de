//! Preconditioning before the measured rounds: none, a sequential fill, or the analytic
//! placement of a uniform random steady state.

use super::functional::Amount;
use super::Simulator;
use crate::config::{GcPolicy, Precondition, WorkloadType};
use crate::error::{Error, Result};
use crate::meanfield;
use crate::rng::Rng;
use crate::workload;

impl Simulator {
    /// Write the workload's span sequentially `passes` times in `request`-byte commands; a
    /// pass writes the first `share` of it (1: all).
    pub(super) fn fill(&mut self, passes: u64, request: u64, share: f64, phase: &str) -> Result<()> {
        // a fill writes every address once a pass, whatever reads or trims the workload mixes in
        let mut wl = self.build_workload(WorkloadType::Sequential, Some(request))?.writes_only();
        let span_bytes = match &wl.pattern {
            workload::Pattern::Sequential(s) => {
                s.span * if wl.pages { self.geo.page_size } else { self.geo.sector_size as u64 }
            }
            _ => unreachable!(),
        };
        for _ in 0..passes {
            let bytes = span_bytes as f64 * share;
            self.run_rounds(&mut wl, Amount::DriveWrites(bytes / self.geo.user_bytes as f64), phase)?;
        }
        Ok(())
    }

    /// Analytic preconditioning for uniform random writes that each rewrite one page.
    pub(super) fn precondition_analytic(&mut self) -> Result<()> {
        let key = "run.precondition";
        let kind = self.cfg.workload.kind;
        let wl = if kind == WorkloadType::Uniform { Some(self.build_workload(kind, None)?) } else { None };
        let span = wl.as_ref().and_then(|w| w.uniform_page_span(self.geo.sectors_per_page()));
        if let Some(why) = meanfield::analytic_refusal(kind, span.is_some(), self.cfg.ftl.gc) {
            return Err(Error::config(key, why));
        }
        let span_pages = span.expect("analytic_refusal accepts a page span only");
        let b = self.geo.pages_per_block as usize;
        // the SLC cache's static part is held out of the native-mode pool GC works in
        let slc_static = self.slc.map(|s| s.min_blocks).unwrap_or(0);
        let pool = crate::geometry::gc_pool_blocks(&self.geo, self.gc.reserve_blocks(), slc_static);
        let rho = span_pages as f64 / (pool as f64 * b as f64);
        let counts: Vec<u32> = match self.cfg.ftl.gc {
            GcPolicy::Greedy | GcPolicy::DChoices | GcPolicy::Random => {
                let occ = match self.cfg.ftl.gc {
                    GcPolicy::Greedy => meanfield::greedy(rho, b),
                    GcPolicy::Random => meanfield::dchoices(rho, b, 1),
                    _ => meanfield::dchoices(rho, b, self.cfg.ftl.d.unwrap_or(2)),
                }
                .ok_or_else(|| Error::config(key, "the mean-field model has no steady state for this load"))?;
                let per_level = meanfield::round_counts(&occ.x, pool);
                let mut c = Vec::with_capacity(pool as usize);
                for (j, &n) in per_level.iter().enumerate() {
                    c.extend(std::iter::repeat_n(j as u32, n as usize));
                }
                // Interleave levels so that blocks of one level are not all adjacent.
                let mut r = Rng::stream(self.cfg.run.seed, 0x7072);
                for i in (1..c.len()).rev() {
                    c.swap(i, r.below(i as u64 + 1) as usize);
                }
                c
            }
            GcPolicy::Fifo => {
                let x = meanfield::fifo_victim_fraction(rho);
                // Oldest block first: block of age a (in closes) keeps exp(-a (1-x) / (rho N)).
                (0..pool)
                    .map(|i| {
                        let age = (pool - i) as f64;
                        (b as f64 * libm::exp(-age * (1.0 - x) / (rho * pool as f64))).round() as u32
                    })
                    .collect()
            }
            _ => unreachable!("the policies analytic_refusal accepts"),
        };
        let mut counts = counts;
        if !meanfield::fix_total(&mut counts, span_pages, b as u32) {
            return Err(Error::config(key, "cannot lay out the span in the available blocks"));
        }
        let lpns: Vec<u32> = (0..span_pages as u32).collect();
        with_ftl!(&mut self.ftl, f => f.place_layout(&lpns, &counts))?;
        self.mark_round_start();
        Ok(())
    }

    /// Apply the configured preconditioning (none, sequential fill, or analytic) without
    /// running the workload; used by benchmarks and by callers that drive rounds themselves.
    pub fn precondition(&mut self) -> Result<()> {
        let page = self.geo.page_size;
        match self.cfg.run.precondition {
            Precondition::None => Ok(()),
            Precondition::Fill => {
                let req = (128 * 1024u64).max(page);
                if self.placement.as_ref().is_some_and(|p| !p.namespaces.is_empty()) {
                    return self.fill_namespaces(req - req % page, "precondition");
                }
                let share = self.cfg.run.precondition_fill.map_or(1.0, |f| f.0);
                self.fill(1, req - req % page, share, "precondition")
            }
            Precondition::Analytic => self.precondition_analytic(),
        }
    }
}
