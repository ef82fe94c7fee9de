//! Namespaces and placement in a run: the tenants' workload, the preconditioning fill of
//! each namespace, and the per-namespace, per-handle and FDP-statistics figures of a result.

use super::functional::Amount;
use super::Simulator;
use crate::config::placement::{Namespace, PlacementMode};
use crate::config::WorkloadType;
use crate::error::Result;
use crate::ftl::PlacementCounters;
use crate::workload::Workload;
use serde::Serialize;

/// One namespace's figures over the measurement window.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct NamespaceReport {
    pub name: String,
    pub first_lba: u64,
    pub sectors: u64,
    pub capacity_bytes: u64,
    /// Its share of the command stream (0 with timestamp interleaving).
    pub share: f64,
    /// Placement handles of its writes, per workload stream (empty with mode none).
    pub placement: Vec<u32>,
    pub host_write_bytes: u64,
    /// NAND bytes programmed with its data: host writes, GC copies, folds.
    pub nand_write_bytes: u64,
    pub gc_copy_bytes: u64,
    /// nand_write_bytes / host_write_bytes; the host-byte-weighted mean over namespaces is
    /// the drive's WAF.
    pub waf: f64,
}

/// One reclaim unit handle's (or stream's) figures over the measurement window.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct HandleReport {
    pub handle: u32,
    pub host_write_bytes: u64,
    /// Host bytes programmed plus the handle's data moved by GC and its metadata pages.
    pub nand_write_bytes: u64,
    /// The handle's data moved by garbage collection (the FDP "media reallocated" event).
    pub media_reallocated_bytes: u64,
    /// Reclaim units opened for its host writes.
    pub reclaim_units_opened: u64,
    /// Blocks holding its data at the end of the run (host blocks, and GC destinations when
    /// persistently isolated).
    pub blocks: u64,
    pub waf: f64,
}

/// The NVMe FDP statistics log page (0x22) of the endurance group, over the drive's life.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FdpStats {
    /// HBMW: bytes written by the host (no metadata in the model).
    pub host_bytes_with_metadata_written: u64,
    /// MBMW: bytes programmed to the media (host writes, GC copies, folds).
    pub media_bytes_with_metadata_written: u64,
    /// MBE: bytes of the blocks erased.
    pub media_bytes_erased: u64,
}

/// Placement in a result.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct PlacementReport {
    pub mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolation: Option<&'static str>,
    /// Handles (streams) in use; 0 with mode none.
    pub handles: u32,
    /// Blocks of the shared GC / fold destinations holding data at the end.
    pub shared_blocks: u64,
}

impl Simulator {
    /// The tenants' workload of every namespace (None: no namespaces).
    pub(super) fn build_tenants(&self) -> Result<Option<Workload>> {
        let Some(pl) = self.placement.as_ref().filter(|p| !p.namespaces.is_empty()) else { return Ok(None) };
        self.tenants_of(&pl.namespaces, |ns| ns.workload.clone(), None).map(Some)
    }

    fn tenants_of(
        &self,
        namespaces: &[Namespace],
        config: impl Fn(&Namespace) -> crate::config::WorkloadConfig,
        request: Option<u64>,
    ) -> Result<Workload> {
        let pl = self.placement.as_ref().expect("placement");
        let (ss, ps) = (self.geo.sector_size as u64, self.geo.page_size);
        crate::workload::tenants::build(namespaces, pl.interleave, self.geo.sectors_per_page(), ss, |ns, _| {
            let w = config(ns);
            let kind = if request.is_some() { WorkloadType::Sequential } else { w.kind };
            let streams = if ns.handles.is_empty() { self.cfg.ftl.streams } else { ns.handles.len() as u32 };
            Ok(crate::workload::build(&w, kind, ns.sectors, ss, ps, streams, request)?.with_interrupt(&self.interrupt))
        })
    }

    /// The preconditioning fill with namespaces: each namespace written once sequentially
    /// (through its placement), one after the other; capacity outside them stays unwritten.
    pub(super) fn fill_namespaces(&mut self, request: u64, phase: &str) -> Result<()> {
        let pl = self.placement.as_ref().expect("placement");
        let spans: Vec<Namespace> = pl.namespaces.clone();
        let seq = crate::config::WorkloadConfig { kind: WorkloadType::Sequential, ..Default::default() };
        let page_sectors = self.geo.sectors_per_page();
        for ns in spans {
            // the largest command up to `request` that divides the namespace: every page written
            let pages = ns.sectors / page_sectors;
            let per = (1..=(request / self.geo.page_size).max(1)).rev().find(|k| pages % k == 0).unwrap_or(1);
            let req = per * self.geo.page_size;
            let mut wl = self.tenants_of(std::slice::from_ref(&ns), |_| seq.clone(), Some(req))?;
            let bytes = ns.sectors * self.geo.sector_size as u64;
            self.run_rounds(&mut wl, Amount::DriveWrites(bytes as f64 / self.geo.user_bytes as f64), phase)?;
        }
        Ok(())
    }

    /// Placement counters now (None: off).
    pub(super) fn placement_counters(&self) -> Option<PlacementCounters> {
        with_drive!(&self.ftl, f => f.placement_counters().cloned())
    }

    /// The per-namespace and per-handle figures of the window that started with `start`.
    pub(super) fn placement_report(
        &self,
        start: Option<&PlacementCounters>,
    ) -> (Vec<NamespaceReport>, Vec<HandleReport>, Option<PlacementReport>, Option<FdpStats>) {
        let (Some(pl), Some(now)) = (self.placement.as_ref(), self.placement_counters()) else {
            return (vec![], vec![], None, None);
        };
        let d = match start {
            Some(s) => now.minus(s),
            None => now.clone(),
        };
        let page = self.geo.page_size;
        let ss = self.geo.sector_size as u64;
        let waf = |nand: u64, host: u64| if host == 0 { f64::NAN } else { nand as f64 / host as f64 };
        let mut namespaces: Vec<NamespaceReport> = pl
            .namespaces
            .iter()
            .enumerate()
            .map(|(i, ns)| NamespaceReport {
                name: ns.name.clone(),
                first_lba: ns.first_sector,
                sectors: ns.sectors,
                capacity_bytes: ns.sectors * ss,
                share: ns.share,
                placement: ns.handles.clone(),
                host_write_bytes: d.ns_host_write_bytes[i],
                nand_write_bytes: d.ns_nand_write_pages[i] * page,
                gc_copy_bytes: d.ns_gc_copy_pages[i] * page,
                waf: waf(d.ns_nand_write_pages[i] * page, d.ns_host_write_bytes[i]),
            })
            .collect();
        // writes outside every namespace (direct host commands)
        let n = pl.namespaces.len();
        if !namespaces.is_empty() && (d.ns_host_write_bytes[n] > 0 || d.ns_nand_write_pages[n] > 0) {
            let used: u64 = pl.namespaces.iter().map(|ns| ns.sectors).sum();
            namespaces.push(NamespaceReport {
                name: "(unallocated)".into(),
                first_lba: used,
                sectors: self.max_sectors.saturating_sub(used),
                capacity_bytes: self.max_sectors.saturating_sub(used) * ss,
                share: 0.0,
                placement: vec![],
                host_write_bytes: d.ns_host_write_bytes[n],
                nand_write_bytes: d.ns_nand_write_pages[n] * page,
                gc_copy_bytes: d.ns_gc_copy_pages[n] * page,
                waf: waf(d.ns_nand_write_pages[n] * page, d.ns_host_write_bytes[n]),
            });
        }
        let (blocks, shared) = with_ftl!(&self.ftl, f => f.placement_blocks()).unwrap_or_default();
        let handles = (0..d.handle_host_write_pages.len())
            .map(|h| {
                let host = d.handle_host_write_pages[h] * page;
                let nand = host + (d.handle_media_reallocated_pages[h] + d.handle_meta_pages[h]) * page;
                HandleReport {
                    handle: h as u32,
                    host_write_bytes: host,
                    nand_write_bytes: nand,
                    media_reallocated_bytes: d.handle_media_reallocated_pages[h] * page,
                    reclaim_units_opened: d.handle_reclaim_units[h],
                    blocks: blocks.get(h).copied().unwrap_or(0),
                    waf: waf(nand, host),
                }
            })
            .collect();
        let report =
            PlacementReport {
                mode: pl.mode.name(),
                isolation: (pl.mode == PlacementMode::Fdp).then(|| {
                    if pl.persistent() {
                        "persistently"
                    } else {
                        "initially"
                    }
                }),
                handles: pl.handles,
                shared_blocks: shared,
            };
        let fdp = (pl.mode == PlacementMode::Fdp).then(|| {
            let c = self.counters();
            FdpStats {
                host_bytes_with_metadata_written: c.host_write_bytes,
                media_bytes_with_metadata_written: c.nand_write_pages * page,
                media_bytes_erased: c.erases * page * self.geo.pages_per_block as u64,
            }
        });
        (namespaces, handles, Some(report), fdp)
    }
}
