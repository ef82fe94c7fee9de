//! The summary of a trace: counts and bytes by kind, the span, the footprint (distinct 4 KiB
//! blocks, in bounded memory), alignment, the most frequent sizes.

use super::{empty_error, Reader, TraceConfig, TraceSource};
use crate::error::Result;
use crate::op::OpKind;
use serde::Serialize;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct KindStats {
    pub ios: u64,
    pub bytes: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TraceInfo {
    #[serde(flatten)]
    pub source: TraceSource,
    pub read: KindStats,
    pub write: KindStats,
    pub trim: KindStats,
    pub write_fraction: f64,
    /// Lowest byte offset and highest end offset.
    pub min_offset: u64,
    pub max_end: u64,
    /// The line of the first request ending at `max_end` (0: none).
    pub max_end_line: u64,
    /// Distinct 4 KiB blocks touched (any kind) and written, in bytes; None if the span is too
    /// large to count exactly.
    pub footprint_bytes: Option<u64>,
    pub write_footprint_bytes: Option<u64>,
    pub duration_s: f64,
    /// Requests not 4 KiB aligned in offset or size.
    pub unaligned_4k: u64,
    /// (size in bytes, count), the most frequent sizes, at most 16, largest count first.
    pub top_sizes: Vec<(u64, u64)>,
    pub skipped_bad_lines: u64,
    pub first_bad_line: Option<(u64, String)>,
}

/// The 4 KiB blocks touched, as bitmaps of [`CHUNK_WORDS`] words made only where a block is
/// set, so memory follows what the trace touches, not the offsets it names.
struct BitSet {
    /// Chunk index -> (bits set in it, the bits).
    chunks: std::collections::HashMap<u64, (u64, Box<[u64; CHUNK_WORDS]>)>,
    count: u64,
    limit_chunks: usize,
    overflow: bool,
}

/// Words per chunk: 8 KiB of bits, 256 MiB of offsets.
const CHUNK_WORDS: usize = 1024;
const CHUNK_BITS: u64 = CHUNK_WORDS as u64 * 64;

impl BitSet {
    fn new(limit_bytes: usize) -> Self {
        BitSet { chunks: Default::default(), count: 0, limit_chunks: limit_bytes / (CHUNK_WORDS * 8), overflow: false }
    }
    fn set_range(&mut self, first: u64, last: u64) {
        if self.overflow {
            return;
        }
        if (last - first) / CHUNK_BITS + 1 > self.limit_chunks as u64 {
            self.overflow = true;
        }
        let mut b = first;
        while !self.overflow && b <= last {
            let (c, i) = (b / CHUNK_BITS, (b % CHUNK_BITS) as usize);
            if !self.chunks.contains_key(&c) && self.chunks.len() >= self.limit_chunks {
                self.overflow = true;
                break;
            }
            let (set, words) = self.chunks.entry(c).or_insert_with(|| (0, Box::new([0; CHUNK_WORDS])));
            let end = (last - b).min(CHUNK_BITS - 1 - i as u64) as usize + i; // last bit in this chunk
            let mut j = if *set == CHUNK_BITS { end + 1 } else { i }; // a full chunk: nothing to do
            while j <= end {
                let w = j / 64;
                let hi = if end / 64 == w { end % 64 } else { 63 };
                let mask = (u64::MAX >> (63 - hi)) & (u64::MAX << (j % 64));
                let new = (mask & !words[w]).count_ones() as u64;
                *set += new;
                self.count += new;
                words[w] |= mask;
                j = w * 64 + hi + 1;
            }
            match b.checked_add((end - i) as u64 + 1) {
                Some(n) => b = n,
                None => break,
            }
        }
        if self.overflow {
            self.chunks = Default::default();
        }
    }
    fn bytes(&self) -> Option<u64> {
        (!self.overflow).then_some(self.count * 4096)
    }
}

/// Read the whole trace (streaming) and summarise it.
pub fn info(cfg: &TraceConfig) -> Result<TraceInfo> {
    summarise(Reader::open(cfg)?, u64::MAX)
}

/// Summarise the first `max_records` requests of `r` (all of them: `u64::MAX`).  Memory
/// stays bounded: the size histogram keeps 4096 sizes, the footprints 32 MiB of bits each.
pub fn summarise(mut r: Reader, max_records: u64) -> Result<TraceInfo> {
    let (mut rd, mut wr, mut tr) =
        (KindStats { ios: 0, bytes: 0 }, KindStats { ios: 0, bytes: 0 }, KindStats { ios: 0, bytes: 0 });
    let (mut lo, mut hi, mut last_t) = (u64::MAX, 0u64, 0u64);
    let mut hi_line = 0u64;
    let mut unaligned = 0;
    let mut sizes: std::collections::HashMap<u64, u64> = std::collections::HashMap::new();
    // 32 MiB of bits covers 1 TiB touched exactly
    let mut touched = BitSet::new(32 << 20);
    let mut written = BitSet::new(32 << 20);
    while r.records < max_records {
        let Some(x) = r.next_record()? else { break };
        let s = match x.kind {
            OpKind::Read => &mut rd,
            OpKind::Write => &mut wr,
            OpKind::Trim => &mut tr,
        };
        s.ios += 1;
        s.bytes = s.bytes.saturating_add(x.len);
        lo = lo.min(x.offset);
        if x.offset + x.len > hi {
            hi = x.offset + x.len;
            hi_line = r.line;
        }
        last_t = last_t.max(x.t_ns);
        if x.offset % 4096 != 0 || x.len % 4096 != 0 {
            unaligned += 1;
        }
        if sizes.len() < 4096 || sizes.contains_key(&x.len) {
            *sizes.entry(x.len).or_insert(0) += 1;
        }
        let (a, b) = (x.offset / 4096, (x.offset + x.len - 1) / 4096);
        touched.set_range(a, b);
        if x.kind == OpKind::Write {
            written.set_range(a, b);
        }
    }
    if r.records == 0 {
        return Err(empty_error(&r));
    }
    let mut top: Vec<(u64, u64)> = sizes.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    top.truncate(16);
    let total = rd.ios + wr.ios + tr.ios;
    Ok(TraceInfo {
        source: r.source(),
        write_fraction: wr.ios as f64 / total as f64,
        read: rd,
        write: wr,
        trim: tr,
        min_offset: lo,
        max_end: hi,
        max_end_line: hi_line,
        footprint_bytes: touched.bytes(),
        write_footprint_bytes: written.bytes(),
        duration_s: last_t as f64 / 1e9,
        unaligned_4k: unaligned,
        top_sizes: top,
        skipped_bad_lines: r.skipped_bad,
        first_bad_line: r.first_bad.clone(),
    })
}
