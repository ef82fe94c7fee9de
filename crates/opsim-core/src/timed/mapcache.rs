//! Mapping-table caching (DFTL-style, Gupta et al. 2009) for DRAM-limited and DRAM-less
//! drives: `[timing.map_cache]`, off unless given.
//!
//! The L2P table (one 4-byte entry per mapping unit) is split into translation pages of
//! `translation_page` bytes (default one mapping unit: 4 KiB = 1024 entries).  DRAM holds
//! `cached_pages` of them in an LRU.  Every host command looks up the translation pages of
//! its logical pages:
//! * hit: no NAND work (the page moves to the front of the LRU);
//! * miss: the page is read from NAND (tR + its transfer, native mode) on die
//!   `translation page % dies`, and the command's data access (the NAND read of a host read,
//!   the programs of a host write) starts after it; the least recently used page makes room,
//!   and if it is dirty it is programmed first on its own die (its mapping units, unpadded,
//!   at the aggregated per-unit program time, like other per-unit programs);
//! * writes and TRIMs mark their translation pages dirty.
//!
//! Not modelled (docs/timed.md): GC's and folds' own mapping updates of the pages they copy,
//! garbage collection of translation blocks, the NAND space translation pages take, the
//! global translation directory (in SRAM), periodic flushes of dirty pages, and a cache
//! warm at the start of the timed run (it starts empty).
//!
//! Per command: one index lookup (translation page -> slot) and an intrusive doubly-linked
//! LRU in `Vec`s, O(1) per translation page touched.

use super::{Device, TimedState};
pub use crate::config::map_cache::{describe_memory, memory_estimate, MapCacheParams, ENTRY_BYTES};
use serde::Serialize;

const NIL: u32 = u32::MAX;

/// Lookups, hits, translation-page reads (= misses) and programs (dirty evictions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MapStats {
    pub lookups: u64,
    pub hits: u64,
    pub reads: u64,
    pub writes: u64,
}

impl MapStats {
    pub fn minus(&self, o: &MapStats) -> MapStats {
        MapStats {
            lookups: self.lookups - o.lookups,
            hits: self.hits - o.hits,
            reads: self.reads - o.reads,
            writes: self.writes - o.writes,
        }
    }
    pub fn add(&mut self, o: &MapStats) {
        self.lookups += o.lookups;
        self.hits += o.hits;
        self.reads += o.reads;
        self.writes += o.writes;
    }
    pub fn hit_ratio(&self) -> Option<f64> {
        (self.lookups > 0).then(|| self.hits as f64 / self.lookups as f64)
    }
}

/// A round's (or the measurement window's) figures.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MapRound {
    /// Translation-page lookups (one per translation page a command touches), hits, and
    /// their ratio.
    pub lookups: u64,
    pub hits: u64,
    pub hit_ratio: Option<f64>,
    /// Translation pages read from NAND (misses) and programmed (dirty evictions).
    pub map_reads: u64,
    pub map_writes: u64,
    /// WAF counting translation-page programs: (NAND bytes programmed for data + bytes of
    /// translation pages programmed) / host bytes written.  `waf` stays the FTL's.
    pub waf_with_map: Option<f64>,
}

impl MapRound {
    pub fn new(d: &MapStats, nand_write_bytes: u64, host_write_bytes: u64, translation_page_bytes: u64) -> MapRound {
        MapRound {
            lookups: d.lookups,
            hits: d.hits,
            hit_ratio: d.hit_ratio(),
            map_reads: d.reads,
            map_writes: d.writes,
            waf_with_map: (host_write_bytes > 0)
                .then(|| (nand_write_bytes + d.writes * translation_page_bytes) as f64 / host_write_bytes as f64),
        }
    }

    /// The counts back.
    pub fn stats(&self) -> MapStats {
        MapStats { lookups: self.lookups, hits: self.hits, reads: self.map_reads, writes: self.map_writes }
    }
}

/// `timed.map_cache` in the result: the cache's size and the measurement window's figures
/// (flattened), and the whole timed run's (`total`, warm-up and cold misses included).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct MapCacheReport {
    #[serde(flatten)]
    pub params: MapCacheParams,
    #[serde(flatten)]
    pub window: MapRound,
    /// The FTL's WAF over the window (the top-level `waf`), for comparison.
    pub waf: f64,
    pub total: MapRound,
}

impl MapCacheReport {
    pub fn new(p: &MapCacheParams, window: MapRound, waf: f64, total: MapRound) -> Self {
        MapCacheReport { params: p.clone(), window, waf, total }
    }
}

/// The LRU of cached translation pages.
pub(super) struct MapCache {
    entries: u64,
    units: u64,
    capacity: usize,
    /// Translation page -> slot (NIL: not cached).
    slot_of: Vec<u32>,
    /// Per slot: its translation page, LRU links (towards the front, towards the back),
    /// dirty flag.  Slots are added until the capacity is reached.
    page: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    dirty: Vec<bool>,
    /// Most and least recently used slots.
    head: u32,
    tail: u32,
    pub(super) stats: MapStats,
}

impl MapCache {
    pub(super) fn new(p: &MapCacheParams) -> Self {
        MapCache {
            entries: p.entries_per_page,
            units: p.units_per_page,
            capacity: p.cached_pages as usize,
            slot_of: vec![NIL; p.translation_pages as usize],
            page: Vec::new(),
            prev: Vec::new(),
            next: Vec::new(),
            dirty: Vec::new(),
            head: NIL,
            tail: NIL,
            stats: MapStats::default(),
        }
    }

    #[inline]
    fn unlink(&mut self, s: u32) {
        let (p, n) = (self.prev[s as usize], self.next[s as usize]);
        if p != NIL {
            self.next[p as usize] = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.prev[n as usize] = p;
        } else {
            self.tail = p;
        }
    }

    #[inline]
    fn push_front(&mut self, s: u32) {
        self.prev[s as usize] = NIL;
        self.next[s as usize] = self.head;
        if self.head != NIL {
            self.prev[self.head as usize] = s;
        } else {
            self.tail = s;
        }
        self.head = s;
    }

    /// Look up translation page `tp` (marking it dirty for a write): `None` on a hit;
    /// on a miss `Some(evicted)`, the dirty page it evicted, if any.
    #[inline]
    pub(super) fn access(&mut self, tp: u32, write: bool) -> Option<Option<u32>> {
        self.stats.lookups += 1;
        let s = self.slot_of[tp as usize];
        if s != NIL {
            self.stats.hits += 1;
            self.dirty[s as usize] |= write;
            if s != self.head {
                self.unlink(s);
                self.push_front(s);
            }
            return None;
        }
        self.stats.reads += 1;
        let mut evicted = None;
        let s = if self.page.len() < self.capacity {
            self.page.push(tp);
            self.prev.push(NIL);
            self.next.push(NIL);
            self.dirty.push(write);
            (self.page.len() - 1) as u32
        } else {
            let s = self.tail;
            self.unlink(s);
            let old = self.page[s as usize];
            self.slot_of[old as usize] = NIL;
            if self.dirty[s as usize] {
                self.stats.writes += 1;
                evicted = Some(old);
            }
            self.page[s as usize] = tp;
            self.dirty[s as usize] = write;
            s
        };
        self.slot_of[tp as usize] = s;
        self.push_front(s);
        Some(evicted)
    }

    /// The cached pages, most recently used first, with their dirty flags (tests).
    #[cfg(test)]
    fn lru_order(&self) -> Vec<(u32, bool)> {
        let mut out = Vec::with_capacity(self.page.len());
        let mut s = self.head;
        while s != NIL {
            out.push((self.page[s as usize], self.dirty[s as usize]));
            s = self.next[s as usize];
        }
        out
    }

    /// Check the index and the links agree (tests).
    #[cfg(test)]
    fn check(&self) -> std::result::Result<(), String> {
        let order = self.lru_order();
        if order.len() != self.page.len() {
            return Err(format!("the LRU list holds {} of {} slots", order.len(), self.page.len()));
        }
        let mut back = Vec::new();
        let mut s = self.tail;
        while s != NIL {
            back.push(self.page[s as usize]);
            s = self.prev[s as usize];
        }
        back.reverse();
        if back != order.iter().map(|x| x.0).collect::<Vec<_>>() {
            return Err("the LRU's backward links disagree with its forward links".into());
        }
        let indexed = self.slot_of.iter().filter(|&&s| s != NIL).count();
        if indexed != self.page.len() {
            return Err(format!("{indexed} pages indexed, {} cached", self.page.len()));
        }
        for (i, &tp) in self.page.iter().enumerate() {
            if self.slot_of[tp as usize] != i as u32 {
                return Err(format!("page {tp} in slot {i} is indexed at {}", self.slot_of[tp as usize]));
            }
        }
        Ok(())
    }
}

impl Device {
    /// Read a translation page of `units` mapping units from `die` (one tR, native mode, the
    /// mean tR with page times; as a host read when `host`, which may suspend
    /// program/erase work); returns when it is in DRAM.
    #[inline]
    fn map_read(&mut self, die: usize, ready: u64, units: u64, host: bool) -> u64 {
        let t_r = self.r.t_read_ns;
        let out = if host { self.host_read_at(die, 0, ready, t_r).1 } else { self.read(die, ready, t_r) };
        if units <= 1 {
            return out;
        }
        let c = self.channel_of(die);
        self.ch.channel_first(c, out, (units - 1) * self.r.xfer_ns)
    }

    /// Program an evicted dirty translation page of `units` mapping units on `die`
    /// (unpadded, native mode: each unit its transfer and the aggregated per-unit program
    /// time, the mean page's with page times); returns the end.
    #[inline]
    fn map_program(&mut self, die: usize, ready: u64, units: u64) -> u64 {
        let busy = self.prog_ns_any(false, false);
        let mut end = ready;
        for _ in 0..units {
            end = self.program(die, ready, busy);
        }
        end
    }
}

impl TimedState {
    /// Look up the translation pages of logical pages `[first, first + count)` at `t` (the
    /// firmware handles the command): misses read their page, dirty evictions program
    /// theirs.  Returns when the last missed page is in DRAM (`t` when every lookup hits
    /// or the cache is off).  `write`: writes and TRIMs dirty their pages; `host_read`:
    /// the reads go as host reads (program/erase suspend).
    #[inline(always)]
    pub(super) fn map_lookup(&mut self, first: u64, count: u64, write: bool, host_read: bool, t: u64) -> u64 {
        if self.map.is_none() {
            return t; // off: one test in the hot loop
        }
        self.map_lookup_cached(first, count, write, host_read, t)
    }

    #[inline(never)]
    fn map_lookup_cached(&mut self, first: u64, count: u64, write: bool, host_read: bool, t: u64) -> u64 {
        let Some(m) = self.map.as_mut() else { return t };
        if count == 0 {
            return t;
        }
        let dies = self.dev.r.dies as u64;
        let (a, b) = (first / m.entries, (first + count - 1) / m.entries);
        let mut ready = t;
        for tp in a..=b {
            if let Some(evicted) = m.access(tp as u32, write) {
                if let Some(old) = evicted {
                    self.dev.map_program((old as u64 % dies) as usize, t, m.units);
                }
                ready = ready.max(self.dev.map_read((tp % dies) as usize, t, m.units, host_read));
            }
        }
        ready
    }

    /// The cache's counts so far (None when it is off).
    pub fn map_stats(&self) -> Option<MapStats> {
        self.map.as_ref().map(|m| m.stats)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::timing::MapCacheConfig;
    use crate::units::{ByteSize, Fraction};

    fn params(pages: u64, cached: u64) -> MapCacheParams {
        MapCacheParams {
            translation_page_bytes: 4096,
            entries_per_page: 1024,
            units_per_page: 1,
            translation_pages: pages,
            cached_pages: cached,
            cache_bytes: cached * 4096,
            table_bytes: pages * 4096,
            model_memory_bytes: memory_estimate(pages, cached),
        }
    }

    #[test]
    fn lru_hits_misses_and_dirty_evictions() {
        let mut m = MapCache::new(&params(10, 3));
        assert_eq!(m.access(1, false), Some(None)); // cold misses fill the slots
        assert_eq!(m.access(2, true), Some(None));
        assert_eq!(m.access(3, false), Some(None));
        assert_eq!(m.lru_order(), vec![(3, false), (2, true), (1, false)]);
        assert_eq!(m.access(1, false), None); // hit: 1 to the front
        assert_eq!(m.lru_order(), vec![(1, false), (3, false), (2, true)]);
        assert_eq!(m.access(4, false), Some(Some(2))); // evicts 2, dirty: a program
        assert_eq!(m.access(5, true), Some(None)); // evicts 3, clean
        assert_eq!(m.lru_order(), vec![(5, true), (4, false), (1, false)]);
        assert_eq!(m.access(1, true), None); // a hit from the tail; a write dirties it
        assert_eq!(m.access(4, false), None);
        assert_eq!(m.lru_order(), vec![(4, false), (1, true), (5, true)]);
        assert_eq!(m.stats, MapStats { lookups: 8, hits: 3, reads: 5, writes: 1 });
        m.check().unwrap();
    }

    #[test]
    fn one_slot_cache() {
        let mut m = MapCache::new(&params(4, 1));
        assert_eq!(m.access(0, true), Some(None));
        assert_eq!(m.access(0, false), None);
        assert_eq!(m.access(1, false), Some(Some(0)));
        assert_eq!(m.access(2, false), Some(None));
        m.check().unwrap();
        assert_eq!(m.lru_order(), vec![(2, false)]);
    }

    #[test]
    fn random_accesses_keep_index_and_links_consistent() {
        let mut m = MapCache::new(&params(64, 17));
        let mut rng = crate::rng::Rng::stream(3, 9);
        let mut model: Vec<(u32, bool)> = Vec::new(); // a plain LRU list as the oracle
        for _ in 0..20_000 {
            let tp = (rng.f64() * 64.0) as u32;
            let write = rng.f64() < 0.3;
            let got = m.access(tp, write);
            let expect = match model.iter().position(|x| x.0 == tp) {
                Some(i) => {
                    let (p, d) = model.remove(i);
                    model.insert(0, (p, d || write));
                    None
                }
                None => {
                    let ev = if model.len() == 17 { model.pop().and_then(|(p, d)| d.then_some(p)) } else { None };
                    model.insert(0, (tp, write));
                    Some(ev)
                }
            };
            assert_eq!(got, expect);
        }
        assert_eq!(m.lru_order(), model);
        m.check().unwrap();
    }

    #[test]
    fn resolve_sizes_and_errors() {
        let cfg = |size: Option<u64>, fraction: Option<f64>, tp: Option<u64>| MapCacheConfig {
            enabled: true,
            size: size.map(ByteSize),
            fraction: fraction.map(Fraction),
            translation_page: tp.map(ByteSize),
        };
        // 1 GiB of 4 KiB units: 262144 entries, 256 translation pages of 4 KiB
        let lpns = 1u64 << 18;
        let p = cfg(Some(64 << 10), None, None).resolve(4096, lpns, 16384).unwrap().unwrap();
        assert_eq!((p.entries_per_page, p.translation_pages, p.cached_pages, p.units_per_page), (1024, 256, 16, 1));
        let p = cfg(None, Some(0.25), None).resolve(4096, lpns, 16384).unwrap().unwrap();
        assert_eq!(p.cached_pages, 64);
        let p = cfg(Some(1 << 30), None, Some(8192)).resolve(4096, lpns, 16384).unwrap().unwrap();
        assert_eq!((p.entries_per_page, p.translation_pages, p.cached_pages, p.units_per_page), (2048, 128, 128, 2));
        let key = |c: MapCacheConfig| c.resolve(4096, lpns, 16384).unwrap_err().key.unwrap();
        assert_eq!(key(cfg(None, None, None)), "timing.map_cache.size");
        assert_eq!(key(cfg(Some(4096), Some(0.5), None)), "timing.map_cache.fraction");
        assert_eq!(key(cfg(Some(100), None, None)), "timing.map_cache.size");
        assert_eq!(key(cfg(None, Some(0.0), None)), "timing.map_cache.fraction");
        assert_eq!(key(cfg(None, Some(1.5), None)), "timing.map_cache.fraction");
        assert_eq!(key(cfg(Some(4096), None, Some(6000))), "timing.map_cache.translation_page");
        assert_eq!(key(cfg(Some(4096), None, Some(32768))), "timing.map_cache.translation_page");
        let off = MapCacheConfig { enabled: false, ..cfg(None, None, None) };
        assert_eq!(off.resolve(4096, lpns, 16384).unwrap(), None);
    }
}
