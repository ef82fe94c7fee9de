//! `type = "zoned"`: zoned (ZNS-style) and log-structured writers.
//!
//! The span is cut into whole zones of `zone_size` bytes (a remainder at its end is never
//! written).  `active_zones` zones are open at a time; each is written sequentially from its
//! start in `request_size` commands.  Each command goes to an active zone chosen uniformly at
//! random (the seeded run RNG), so the open zones' writes interleave.  A zone that fills is
//! closed and a random zone that is not active opens in its place; a zone is reset before its
//! first write: one TRIM command of the whole zone.  The first zones open the same way (a
//! random choice, each reset first), over whatever the preconditioning left; opening millions
//! of them asks the run's interrupt as it goes (Ctrl-C stops the run there).

use super::zone_set::ZoneSet;
use crate::config::WorkloadConfig;
use crate::error::{Error, Result};
use crate::interrupt::Interrupt;
use crate::op::{Op, OpKind};
use crate::rng::Rng;

/// One open zone: which zone, how far it is written, and whether its reset is still due.
#[derive(Clone, Debug)]
struct Open {
    zone: u64,
    written: u64,
    reset_due: bool,
}

/// The zoned writer's state (in the workload's units: pages or sectors).
#[derive(Clone, Debug)]
pub struct ZoneWriter {
    /// Units per zone.
    pub zone_units: u64,
    /// Whole zones in the span.
    pub zones: u64,
    /// Units per write command.
    len: u32,
    /// Zones open at once.
    want: usize,
    open: Vec<Open>,
    /// The active zones.
    active: ZoneSet,
    /// Zones opened so far (resets issued or due).
    pub opened: u64,
    /// Asked while the first zones open (Ctrl-C).
    interrupt: Interrupt,
    /// The interrupt stopped the opening of the first zones: the writer makes no more commands.
    stopped: bool,
}

impl ZoneWriter {
    /// A writer over `zones` zones of `zone_units` units, `active` open at once, writing
    /// `len` units per command; the first zones open at the first command (drawn from the
    /// run's RNG).
    pub fn new(zones: u64, zone_units: u64, active: u64, len: u32) -> ZoneWriter {
        ZoneWriter {
            zone_units,
            zones,
            len,
            want: active as usize,
            open: Vec::with_capacity(active as usize),
            active: ZoneSet::new(zones),
            opened: 0,
            interrupt: Interrupt::none(),
            stopped: false,
        }
    }

    /// Let `interrupt` stop the opening of the first zones (millions of them take a while).
    pub fn set_interrupt(&mut self, interrupt: Interrupt) {
        self.interrupt = interrupt;
    }

    /// Open the first zones: `want` random distinct zones, each reset first.  Stopped by the
    /// interrupt: an `Interrupted` error, and the writer makes no more commands.
    #[cold]
    fn open_first(&mut self, rng: &mut Rng) -> Result<()> {
        while self.open.len() < self.want {
            if let Err(e) = self.interrupt.poll() {
                self.stopped = true;
                return Err(e);
            }
            let zone = self.pick_inactive(rng);
            self.activate(zone);
            self.open.push(Open { zone, written: 0, reset_due: true });
        }
        Ok(())
    }

    fn activate(&mut self, z: u64) {
        self.active.insert(z);
        self.opened += 1;
    }

    /// A zone that is not active, uniformly: by rejection while at least half the zones are
    /// inactive, else the k-th inactive zone (both exact, both deterministic).
    fn pick_inactive(&self, rng: &mut Rng) -> u64 {
        let inactive = self.zones - self.open.len() as u64;
        debug_assert!(inactive > 0);
        if inactive * 2 >= self.zones {
            loop {
                let z = rng.below(self.zones);
                if !self.active.contains(z) {
                    return z;
                }
            }
        }
        self.active.nth_inactive(rng.below(inactive))
    }

    /// The next command: a zone's reset (one TRIM of the whole zone) or its next write; an
    /// `Interrupted` error once the interrupt stopped the opening of the first zones.
    #[inline]
    pub fn next_op(&mut self, rng: &mut Rng) -> Result<Op> {
        if self.open.len() < self.want {
            if self.stopped {
                return Err(Error::interrupted());
            }
            self.open_first(rng)?;
        }
        let i = if self.open.len() == 1 { 0 } else { rng.below(self.open.len() as u64) as usize };
        let zu = self.zone_units;
        let o = &mut self.open[i];
        let base = o.zone * zu;
        if o.reset_due {
            o.reset_due = false;
            return Ok(Op { kind: OpKind::Trim, start: base, len: zu as u32, stream: 0, t_ns: 0 });
        }
        let start = base + o.written;
        o.written += self.len as u64;
        if o.written == zu {
            // full: close it and open a random zone that is neither active nor this one
            // (it stays marked during the pick); with every zone active, this one reopens
            let closed = o.zone;
            let zone = if self.zones > self.open.len() as u64 { self.pick_inactive(rng) } else { closed };
            self.active.remove(closed);
            self.activate(zone);
            self.open[i] = Open { zone, written: 0, reset_due: true };
        }
        Ok(Op { kind: OpKind::Write, start, len: self.len, stream: 0, t_ns: 0 })
    }
}

/// The zones of a `zoned` workload over `span_units` units of `unit` bytes, with requests of
/// `len` units: (zones, units per zone, active zones), checked.
pub fn zones_of(w: &WorkloadConfig, span_units: u64, unit: u64, len: u64, page_size: u64) -> Result<(u64, u64, u64)> {
    let key = "workload.zone_size";
    let zone = w.zone_size.ok_or_else(|| Error::workload(key, "is required for type \"zoned\""))?.0;
    let req = len * unit;
    if zone == 0 || zone % page_size != 0 || zone % req != 0 {
        return Err(Error::workload(
            key,
            format!(
                "{zone} bytes is not a positive multiple of the {page_size}-byte page and of the \
                 {req}-byte request_size"
            ),
        ));
    }
    let zone_units = zone / unit;
    let zones = span_units / zone_units;
    if zones == 0 {
        return Err(Error::workload(
            key,
            format!("{zone} bytes is larger than the workload span ({} bytes)", span_units * unit),
        ));
    }
    if zone_units > u32::MAX as u64 {
        return Err(Error::workload(key, format!("{zone} bytes is too large: a zone's reset is one TRIM command")));
    }
    let active = w.active_zones.unwrap_or(1) as u64;
    if active == 0 || active > zones {
        return Err(Error::workload(
            "workload.active_zones",
            format!("{active} is out of range; expected 1..={zones} (the zones in the span)"),
        ));
    }
    Ok((zones, zone_units, active))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Commands of `w` and what they show: per zone, the writes since its last reset must be
    /// sequential from its start, and each reset a single TRIM of the whole zone.
    fn drive(w: &mut ZoneWriter, rng: &mut Rng, n: usize) -> Vec<Op> {
        (0..n).map(|_| w.next_op(rng).unwrap()).collect()
    }

    #[test]
    fn writes_are_sequential_within_a_zone_after_one_whole_zone_trim() {
        for active in [1u64, 3, 8] {
            let (zones, zu, len) = (10u64, 16u64, 4u32);
            let mut w = ZoneWriter::new(zones, zu, active, len);
            let mut rng = Rng::new(8);
            // per zone: Some(next expected offset) once reset; None: not open
            let mut next: Vec<Option<u64>> = vec![None; zones as usize];
            let (mut trims, mut writes) = (0u64, 0u64);
            for op in drive(&mut w, &mut rng, 20_000) {
                let z = op.start / zu;
                match op.kind {
                    OpKind::Trim => {
                        assert_eq!((op.start, op.len as u64), (z * zu, zu), "a reset trims the whole zone");
                        assert!(next[z as usize].is_none(), "zone {z} reset while open");
                        next[z as usize] = Some(0);
                        trims += 1;
                    }
                    OpKind::Write => {
                        let off = next[z as usize].expect("a write to a zone not reset first");
                        assert_eq!((op.start - z * zu, op.len), (off, len), "sequential inside zone {z}");
                        next[z as usize] = if off + len as u64 == zu { None } else { Some(off + len as u64) };
                        writes += 1;
                    }
                    OpKind::Read => panic!("no reads"),
                }
                let open = next.iter().filter(|n| n.is_some()).count() as u64;
                assert!(open <= active, "{open} zones open, at most {active}");
            }
            // every reset is followed by zu/len writes (except the zones still open)
            assert!(writes >= (trims - active) * (zu / len as u64), "active {active}: {trims} {writes}");
            assert!(trims > zones, "zones reopen");
        }
    }

    #[test]
    fn active_zones_never_overlap_and_all_zones_open() {
        for (zones, active) in [(5u64, 5u64), (200, 150), (200, 3), (64, 63), (130, 129)] {
            let mut w = ZoneWriter::new(zones, 4, active, 1);
            let mut rng = Rng::new(12);
            let mut seen = vec![false; zones as usize];
            for _ in 0..50_000 {
                w.next_op(&mut rng).unwrap();
                let mut z: Vec<u64> = w.open.iter().map(|o| o.zone).collect();
                z.sort_unstable();
                z.dedup();
                assert_eq!(z.len() as u64, active, "zones {zones}, active {active}: overlapping zones");
                for &x in &z {
                    assert!(x < zones && w.active.contains(x));
                    seen[x as usize] = true;
                }
                assert_eq!(w.active.count(), active);
            }
            assert!(seen.iter().all(|&s| s), "zones {zones}, active {active}: every zone opens some time");
        }
    }

    #[test]
    fn replacement_zone_is_uniform_over_inactive_zones() {
        // 6 zones, 2 active: the replacement of a closed zone is one of the 4 zones neither
        // open nor just closed, uniformly, so every zone is reset equally often
        let mut w = ZoneWriter::new(6, 1, 2, 1);
        let mut rng = Rng::new(4);
        let mut counts = [0u64; 6];
        for _ in 0..120_000 {
            let op = w.next_op(&mut rng).unwrap();
            if op.kind == OpKind::Trim {
                counts[op.start as usize] += 1;
            }
        }
        let total: u64 = counts.iter().sum();
        for c in counts {
            let p = c as f64 / total as f64;
            assert!((p - 1.0 / 6.0).abs() < 0.01, "{counts:?}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_commands() {
        let run = |seed: u64| {
            let mut rng = Rng::new(seed);
            let mut w = ZoneWriter::new(50, 8, 4, 2);
            drive(&mut w, &mut rng, 5_000).iter().map(|o| (o.kind == OpKind::Trim, o.start, o.len)).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn zones_are_whole_and_checked() {
        use crate::units::ByteSize;
        let cfg = |zone: u64, active: Option<u32>| WorkloadConfig {
            kind: crate::config::WorkloadType::Zoned,
            zone_size: Some(ByteSize(zone)),
            active_zones: active,
            ..Default::default()
        };
        // 100 pages of 4 KiB, zones of 12 KiB (3 pages): 33 zones, the last page never written
        assert_eq!(zones_of(&cfg(12288, None), 100, 4096, 1, 4096).unwrap(), (33, 3, 1));
        assert_eq!(zones_of(&cfg(12288, Some(33)), 100, 4096, 1, 4096).unwrap(), (33, 3, 33));
        let key = |zone, active, len| zones_of(&cfg(zone, active), 100, 4096, len, 4096).unwrap_err().key.unwrap();
        assert_eq!(key(0, None, 1), "workload.zone_size");
        assert_eq!(key(6144, None, 1), "workload.zone_size"); // not whole pages
        assert_eq!(key(12288, None, 2), "workload.zone_size"); // not whole 8 KiB requests
        assert_eq!(key(404 * 1024, None, 1), "workload.zone_size"); // past the span
        assert_eq!(key(12288, Some(0), 1), "workload.active_zones");
        assert_eq!(key(12288, Some(34), 1), "workload.active_zones");
        let none = WorkloadConfig { kind: crate::config::WorkloadType::Zoned, ..Default::default() };
        assert_eq!(zones_of(&none, 100, 4096, 1, 4096).unwrap_err().key.as_deref(), Some("workload.zone_size"));
        // zones past the remainder are never touched
        let mut w = ZoneWriter::new(33, 3, 4, 1);
        let mut rng = Rng::new(5);
        assert!(drive(&mut w, &mut rng, 10_000).iter().all(|o| o.start + o.len as u64 <= 99));
    }

    #[test]
    fn the_interrupt_stops_the_opening_of_the_first_zones_for_good() {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let mut w = ZoneWriter::new(1 << 20, 1, (1 << 20) - 10, 1);
        w.set_interrupt(Interrupt::from_flag(flag.clone()));
        let mut rng = Rng::new(1);
        assert_eq!(w.next_op(&mut rng).unwrap_err().kind, crate::ErrorKind::Interrupted);
        assert!(w.open.len() < w.want, "stopped before every zone opened");
        flag.store(false, std::sync::atomic::Ordering::Relaxed);
        let (opened, draws) = (w.opened, rng.next_u64());
        assert_eq!(w.next_op(&mut rng).unwrap_err().kind, crate::ErrorKind::Interrupted, "no more commands");
        assert_eq!(w.opened, opened);
        // and no draw was taken: the rng goes on where it was
        let mut again = Rng::new(1);
        let mut w2 = ZoneWriter::new(1 << 20, 1, (1 << 20) - 10, 1);
        w2.set_interrupt(Interrupt::from_flag(std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true))));
        let _ = w2.next_op(&mut again);
        assert_eq!(again.next_u64(), draws);
    }

    /// Nearly every zone open (4 Mi zones, all but 16 active): the opening scanned the bitmap
    /// for each pick past half (2 Mi scans of 64 Ki words: minutes); now about a second.
    #[test]
    fn opening_nearly_every_zone_is_fast() {
        let zones = 1u64 << 22;
        let mut w = ZoneWriter::new(zones, 1, zones - 16, 1);
        let mut rng = Rng::new(3);
        let t = std::time::Instant::now();
        let ops = drive(&mut w, &mut rng, 100_000);
        assert!(t.elapsed() < std::time::Duration::from_secs(10), "{:?}", t.elapsed());
        assert_eq!(w.active.count(), zones - 16);
        assert!(ops.iter().all(|o| o.start < zones));
    }
}
