//! The `[timing]` table resolved to the units the model charges: nanoseconds per operation,
//! counts of dies, channels and mapping units (`Resolved`, with its page-type and SLC-mode
//! parts), and the checks and arithmetic that turn the schema (`timing`) into it.  The timed
//! model (`timed`) charges it.

use super::map_cache;
use super::timing::{Cell, ChannelOrder, Interface, TimingConfig};
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// Largest table of page types (`dies x units_per_program` entries, a byte each).
const MAX_PAGE_PERIOD: u64 = 1 << 24;

/// Timing parameters resolved to nanoseconds and counts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Resolved {
    pub dies: u32,
    pub channels: u32,
    pub units_per_program: u32,
    pub t_read_ns: u64,
    pub t_prog_ns: u64,
    pub t_erase_ns: u64,
    /// Physical block, in mapping units.
    pub block_units: u64,
    /// Channel time to move one mapping unit.
    pub xfer_ns: u64,
    /// Host link time per byte, in picoseconds.
    pub link_ps_per_byte: u64,
    pub fw_ns: u64,
    pub gc_fw_ns: u64,
    /// Controller time per GC unit reclaimed (`timing.gc_reclaim_us`).
    #[serde(default, skip_serializing_if = "crate::config::is_default")]
    pub gc_reclaim_ns: u64,
    /// Program/erase suspend latency, when host reads may suspend die work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspend_ns: Option<u64>,
    pub buffer_units: u64,
    pub outstanding: u32,
    /// NAND program bandwidth limit, mapping units per second, with no GC.
    pub program_units_per_s: f64,
    pub link_mbps: f64,
    /// SLC-mode timing, with an SLC cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc: Option<SlcTiming>,
    /// Per-page-type times (`t_read_page_us`, `t_prog_page_us`), when given.  `t_read_ns`
    /// is then their mean (GC copies' reads) and `t_prog_ns` their sum (a word line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pages: Option<PageTiming>,
    /// Independent plane reads and whole-page reads (`read_planes`, `read_whole_pages`),
    /// when either is on (absent: the planes read together, every unit sensed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reads: Option<ReadTiming>,
    /// The order a flash channel moves transfers in (not part of the cost model, which has
    /// no channel order: not written out).
    #[serde(skip, default)]
    pub channel_order: ChannelOrder,
    /// The mapping-table cache, when on (not read back: the cost model does not use it).
    #[serde(skip_serializing_if = "Option::is_none", skip_deserializing)]
    pub map_cache: Option<map_cache::MapCacheParams>,
}

/// Page types of a word line: a program unit (`units_per_program` mapping units on a die)
/// is one word line on every plane, `bits` pages each; its first `units_per_page` units
/// are in the lowest page (LSB), the next in the second, and so on.  A mapping unit's page
/// type follows from its position among its die's units.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PageTiming {
    pub bits: u32,
    /// Mapping units per page type in a program unit (one page on every plane).
    pub units_per_page: u32,
    /// Read time of each page type, lowest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_read_ns: Option<Vec<u64>>,
    /// Program time of each page type (page by page), lowest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t_prog_ns: Option<Vec<u64>>,
}

/// Where a mapping unit is read from.  A unit at position `k = ppn / dies` on its die is at
/// `j = k % units_per_program` in its program unit (a word line on every plane); the program
/// unit is laid out page by page (LSB first, as `PageTiming`), each page plane 0 first:
/// `page_units` units of one plane's page, then the next plane's.  One sense (tR) reads one
/// page of one plane: the unit's NAND page is `k / page_units`, its plane
/// `(j / page_units) % planes`, its read group `plane x read_planes / planes`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ReadTiming {
    /// Independent read plane groups per die (1..=planes).
    pub read_planes: u32,
    /// A command's units in one NAND page are sensed once.
    pub read_whole_pages: bool,
    pub planes: u32,
    /// Mapping units one sense reads: `nand_page_size / page_size / bits` (one page of a
    /// word line on one plane), or the whole word line of a plane when it does not split
    /// into whole mapping units per page.
    pub page_units: u32,
}

impl ReadTiming {
    /// Mapping units one GC sense reads: a multi-plane read of one page on every plane of the
    /// die (the units of one page type of a word line on all planes), as a controller reads
    /// a victim (docs/timed.md, "GC copies read whole pages").
    #[inline(always)]
    pub fn gc_sense_units(&self) -> u32 {
        self.page_units * self.planes
    }

    /// `(read group, NAND page on its die)` of the unit at physical page `ppn`.
    #[inline(always)]
    pub fn place(&self, ppn: u32, dies: u32, units_per_program: u32) -> (usize, u64) {
        let k = ppn / dies;
        let plane = (k % units_per_program) / self.page_units % self.planes;
        ((plane * self.read_planes / self.planes) as usize, (k / self.page_units) as u64)
    }
}

/// SLC-mode NAND timing: a program writes `units_per_program` mapping units (a native
/// program unit divided by the bits per cell) in `t_prog_ns`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SlcTiming {
    pub units_per_program: u32,
    pub t_read_ns: u64,
    pub t_prog_ns: u64,
    /// SLC program bandwidth limit, mapping units per second.
    pub program_units_per_s: f64,
}

/// `v` when it is a positive number; else an error naming `k`.
fn positive(k: &str, v: f64) -> Result<f64> {
    if v.is_finite() && v > 0.0 {
        Ok(v)
    } else {
        Err(Error::config(k, format!("{v} must be a positive number")))
    }
}

impl TimingConfig {
    pub fn resolve(&self, page_size: u64) -> Result<Resolved> {
        self.check_bounds()?;
        self.check_queues_and_dies()?;
        let nand_page = self.check_nand_sizes(page_size)?;
        let (tr, tp, te) = self.cell.typical_us();
        let tr = positive("timing.t_read_us", self.t_read_us.unwrap_or(tr))?;
        let tp = positive("timing.t_prog_us", self.t_prog_us.unwrap_or(tp))?;
        let te = positive("timing.t_erase_us", self.t_erase_us.unwrap_or(te))?;
        let ch = positive("timing.channel_mbps", self.channel_mbps)?;
        let fw = self.fw_overhead_us;
        for (k, v) in [
            ("timing.fw_overhead_us", fw),
            ("timing.gc_fw_us", self.gc_fw_us),
            ("timing.gc_reclaim_us", self.gc_reclaim_us),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(Error::config(k, format!("{v} must be >= 0")));
            }
        }
        let link = self.link_mbps()?;
        self.check_run_knobs()?;
        self.check_urgent()?;
        let dies = self.channels * self.dies_per_channel;
        let upp = (nand_page / page_size) as u32 * self.planes;
        let pages = self.page_timing(nand_page / page_size, upp, dies)?;
        let reads = self.read_timing(nand_page / page_size);
        let buffer_units = self.write_buffer.0 / page_size;
        if self.write_cache && buffer_units == 0 {
            return Err(Error::config("timing.write_buffer", "must hold at least one page with the write cache on"));
        }
        let mut t_read_ns = (tr * 1000.0).round() as u64;
        let mut t_prog_ns = (tp * 1000.0).round() as u64;
        if let Some(v) = pages.as_ref().and_then(|p| p.t_read_ns.as_ref()) {
            t_read_ns = (v.iter().sum::<u64>() as f64 / v.len() as f64).round() as u64;
        }
        let mut tp_s = tp * 1e-6;
        if let Some(v) = pages.as_ref().and_then(|p| p.t_prog_ns.as_ref()) {
            t_prog_ns = v.iter().sum();
            tp_s = t_prog_ns as f64 * 1e-9;
        }
        Ok(Resolved {
            dies,
            channels: self.channels,
            units_per_program: upp,
            t_read_ns,
            t_prog_ns,
            t_erase_ns: (te * 1000.0).round() as u64,
            block_units: (self.nand_block_size.0 / page_size).max(1),
            xfer_ns: (page_size as f64 / ch * 1000.0).round().max(1.0) as u64,
            link_ps_per_byte: (1e6 / link).round().max(1.0) as u64,
            fw_ns: (fw * 1000.0).round() as u64,
            gc_fw_ns: (self.gc_fw_us * 1000.0).round() as u64,
            gc_reclaim_ns: (self.gc_reclaim_us * 1000.0).round() as u64,
            suspend_ns: self.suspend_ns()?,
            buffer_units,
            outstanding: if self.interface == Interface::Nvme {
                self.queue_depth * self.nvme_queues
            } else {
                self.queue_depth
            },
            program_units_per_s: dies as f64 * upp as f64 / tp_s,
            link_mbps: link,
            slc: None,
            pages,
            reads,
            channel_order: self.channel_order.unwrap_or_default(),
            map_cache: None,
        })
    }

    /// The queue depth and NVMe queues against the interface, and the counts of channels,
    /// dies per channel and planes.
    fn check_queues_and_dies(&self) -> Result<()> {
        if self.queue_depth == 0 || self.queue_depth > 65536 {
            return Err(Error::config("timing.queue_depth", format!("{} is out of range 1..=65536", self.queue_depth)));
        }
        if self.interface == Interface::Sata && self.queue_depth > 32 {
            return Err(Error::config(
                "timing.queue_depth",
                format!("{}: SATA NCQ allows at most 32", self.queue_depth),
            ));
        }
        if self.interface == Interface::Sata && self.nvme_queues != 1 {
            return Err(Error::config("timing.nvme_queues", "is only used with interface = \"nvme\""));
        }
        if self.nvme_queues == 0 || self.nvme_queues > 1024 {
            return Err(Error::config("timing.nvme_queues", "is out of range 1..=1024"));
        }
        for (k, v) in [
            ("timing.channels", self.channels),
            ("timing.dies_per_channel", self.dies_per_channel),
            ("timing.planes", self.planes),
        ] {
            if v == 0 || v > 1024 {
                return Err(Error::config(k, format!("{v} is out of range 1..=1024")));
            }
        }
        Ok(())
    }

    /// The NAND page (whole mapping units of `page_size`) and block (whole NAND pages);
    /// the NAND page's bytes.
    fn check_nand_sizes(&self, page_size: u64) -> Result<u64> {
        let nand_page = self.nand_page_size.0;
        if nand_page < page_size || nand_page % page_size != 0 {
            return Err(Error::config(
                "timing.nand_page_size",
                format!("{nand_page} bytes is not a multiple of the mapping unit drive.page_size ({page_size})"),
            ));
        }
        if self.nand_block_size.0 < nand_page || self.nand_block_size.0 % nand_page != 0 {
            return Err(Error::config("timing.nand_block_size", "must be a whole number of NAND pages"));
        }
        Ok(nand_page)
    }

    /// The host link's MB/s: given, SATA's 600, or the PCIe generation x lanes.
    fn link_mbps(&self) -> Result<f64> {
        Ok(match (self.link_mbps, self.interface) {
            (Some(l), _) => positive("timing.link_mbps", l)?,
            (None, Interface::Sata) => 600.0,
            (None, Interface::Nvme) => {
                let per_lane = match self.pcie_gen {
                    1 => 250.0,
                    2 => 500.0,
                    3 => 985.0,
                    4 => 1969.0,
                    5 => 3938.0,
                    g => return Err(Error::config("timing.pcie_gen", format!("{g} is not a PCIe generation 1..=5"))),
                };
                if !matches!(self.pcie_lanes, 1 | 2 | 4 | 8 | 16) {
                    return Err(Error::config(
                        "timing.pcie_lanes",
                        format!("{} is not 1, 2, 4, 8 or 16", self.pcie_lanes),
                    ));
                }
                per_lane * self.pcie_lanes as f64
            }
        })
    }

    /// The series interval, the round length and the arrival rate: positive.
    fn check_run_knobs(&self) -> Result<()> {
        positive("timing.series_interval_s", self.series_interval_s)?;
        if let Some(r) = self.round_s {
            positive("timing.round_s", r)?;
        }
        if let Some(r) = self.arrival_iops {
            positive("timing.arrival_iops", r)?;
        }
        Ok(())
    }

    /// The urgent state's keys: in range, and only with `urgent_free_pct`.
    fn check_urgent(&self) -> Result<()> {
        if let Some(u) = self.urgent_free_pct {
            if !(u > 0.0 && u < 100.0) {
                return Err(Error::config("timing.urgent_free_pct", format!("{u} is out of range (0, 100)")));
            }
        }
        if !(self.urgent_perf_pct > 0.0 && self.urgent_perf_pct <= 100.0) {
            return Err(Error::config(
                "timing.urgent_perf_pct",
                format!("{} is out of range (0, 100]", self.urgent_perf_pct),
            ));
        }
        let urgent_keys = [
            ("timing.urgent_reference_blocks", self.urgent_reference_blocks.is_some()),
            ("timing.urgent_exit_pct", self.urgent_exit_pct.is_some()),
            ("timing.urgent_sustain_mbps", self.urgent_sustain_mbps.is_some()),
            ("timing.urgent_sustain_window_s", self.urgent_sustain_window_s.is_some()),
            ("timing.urgent_gc", self.urgent_gc.is_some()),
        ];
        if self.urgent_free_pct.is_none() {
            if let Some((k, _)) = urgent_keys.iter().find(|(_, set)| *set) {
                return Err(Error::config(k, "is only used with timing.urgent_free_pct (the urgent state is off)"));
            }
        }
        if self.urgent_reference_blocks == Some(0) {
            return Err(Error::config("timing.urgent_reference_blocks", "must be at least 1"));
        }
        if let (Some(x), Some(n)) = (self.urgent_exit_pct, self.urgent_free_pct) {
            if !(x >= n && x < 100.0) {
                return Err(Error::config(
                    "timing.urgent_exit_pct",
                    format!("{x} is out of range [urgent_free_pct = {n}, 100)"),
                ));
            }
        }
        if let Some(m) = self.urgent_sustain_mbps {
            positive("timing.urgent_sustain_mbps", m)?;
        }
        if let Some(w) = self.urgent_sustain_window_s {
            positive("timing.urgent_sustain_window_s", w)?;
        }
        Ok(())
    }

    /// The read layout when `read_planes` > 1 or `read_whole_pages` (bounds checked before):
    /// a sense reads one page of a plane's word line of `units_per_plane` units.
    fn read_timing(&self, units_per_plane: u64) -> Option<ReadTiming> {
        let read_planes = self.read_planes.unwrap_or(1);
        let read_whole_pages = self.read_whole_pages.unwrap_or(false);
        if read_planes == 1 && !read_whole_pages {
            return None;
        }
        let bits = self.cell.bits() as u64;
        let page = if units_per_plane % bits == 0 { units_per_plane / bits } else { units_per_plane };
        Some(ReadTiming { read_planes, read_whole_pages, planes: self.planes, page_units: page as u32 })
    }

    /// The program/erase suspend latency in ns, when given (>= 0).
    fn suspend_ns(&self) -> Result<Option<u64>> {
        match self.suspend_us {
            Some(v) if v.is_finite() && v >= 0.0 => Ok(Some((v * 1000.0).round() as u64)),
            Some(v) => Err(Error::config("timing.suspend_us", format!("{v} must be >= 0"))),
            None => Ok(None),
        }
    }

    /// The per-page-type times, checked: one value per bit of the cell, each positive, and
    /// a NAND page (`nand_page_size`: a word line) of `units_per_plane` mapping units that
    /// splits into whole mapping units per page type.
    fn page_timing(&self, units_per_plane: u64, upp: u32, dies: u32) -> Result<Option<PageTiming>> {
        let bits = self.cell.bits();
        let check = |k: &str, v: &Option<Vec<f64>>| -> Result<Option<Vec<u64>>> {
            let Some(v) = v else { return Ok(None) };
            if v.len() != bits as usize {
                return Err(Error::config(
                    k,
                    format!(
                        "{} needs {bits} value{} ({}), got {}",
                        self.cell.name(),
                        if bits == 1 { "" } else { "s" },
                        self.cell.page_names(),
                        v.len()
                    ),
                ));
            }
            v.iter()
                .enumerate()
                .map(|(i, &x)| {
                    if x.is_finite() && x > 0.0 {
                        Ok((x * 1000.0).round().max(1.0) as u64)
                    } else {
                        Err(Error::config(k, format!("value {} ({x}) must be a positive number", i + 1)))
                    }
                })
                .collect::<Result<Vec<u64>>>()
                .map(Some)
        };
        let read = check("timing.t_read_page_us", &self.t_read_page_us)?;
        let prog = check("timing.t_prog_page_us", &self.t_prog_page_us)?;
        let key = if read.is_some() { "timing.t_read_page_us" } else { "timing.t_prog_page_us" };
        if read.is_none() && prog.is_none() {
            return Ok(None);
        }
        if units_per_plane % bits as u64 != 0 {
            return Err(Error::config(
                key,
                format!(
                    "needs timing.nand_page_size (one word line: {units_per_plane} mapping units) to split into {bits} pages ({}) of whole mapping units",
                    self.cell.page_names()
                ),
            ));
        }
        if dies as u64 * upp as u64 > MAX_PAGE_PERIOD {
            return Err(Error::config(
                key,
                format!("dies x units per program ({dies} x {upp}) is above {MAX_PAGE_PERIOD}"),
            ));
        }
        Ok(Some(PageTiming { bits, units_per_page: upp / bits, t_read_ns: read, t_prog_ns: prog }))
    }

    /// Add the SLC-mode timing (for a cache whose native mode stores `bits` per cell).
    pub fn resolve_slc(&self, r: &mut Resolved, bits: u32) -> Result<()> {
        let (tr, tp, _) = Cell::Slc.typical_us();
        let tr = positive("timing.t_read_slc_us", self.t_read_slc_us.unwrap_or(tr))?;
        let tp = positive("timing.t_prog_slc_us", self.t_prog_slc_us.unwrap_or(tp))?;
        let upp = (r.units_per_program / bits.max(1)).max(1);
        r.slc = Some(SlcTiming {
            units_per_program: upp,
            t_read_ns: (tr * 1000.0).round() as u64,
            t_prog_ns: (tp * 1000.0).round() as u64,
            program_units_per_s: r.dies as f64 * upp as f64 / (tp * 1e-6),
        });
        Ok(())
    }
}
