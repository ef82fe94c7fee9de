//! fio's random offset distributions, generated the way fio generates them (block numbers
//! in `0..nranges`), including its approximations.  Bit-exact fio random streams are not the
//! goal (opsim draws from its own generator); the access distribution is.
//!
//! Sources (axboe/fio): `lib/zipf.c` (zipf_init, zipf_next, pareto_init, pareto_next),
//! `lib/gauss.c` (gauss_init, gauss_next), `hash.h` (`__hash_u64`, the 64-bit golden-ratio
//! multiply), `io_u.c` (`__get_next_rand_offset`, `__get_next_rand_offset_zoned`,
//! `__get_next_rand_offset_zoned_abs`), `lib/axmap.c` (`axmap_next_free`).

use crate::rng::Rng;

/// fio's `ZIPF_MAX_GEN`: zeta(n) is summed over at most this many terms (lib/zipf.c).
pub const ZIPF_MAX_GEN: u64 = 10_000_000;
/// fio's `GOLDEN_RATIO_64` (hash.h): `__hash_u64(v) = v * GOLDEN_RATIO_64`.
pub const GOLDEN_RATIO_64: u64 = 0x61C8_8646_80B5_83EB;
/// fio's `FRAND32_MAX` (lib/rand.h): its 32-bit Tausworthe generator's largest value.
const FRAND32_MAX: f64 = 4_294_967_295.0;

#[inline]
pub fn hash_u64(v: u64) -> u64 {
    v.wrapping_mul(GOLDEN_RATIO_64)
}

/// A 32-bit draw, as fio's `__rand` on its 32-bit Tausworthe state.
#[inline]
fn rand32(rng: &mut Rng) -> u64 {
    rng.next_u64() >> 32
}

/// fio's zipf (lib/zipf.c): Gray et al.'s closed-form approximation ("Quickly generating
/// billion-record synthetic databases", SIGMOD 1994) with zeta(n) summed over at most
/// [`ZIPF_MAX_GEN`] terms, the rank hashed with `__hash_u64` and rotated by a random
/// offset, modulo n: ranks collide and some blocks are never drawn, as in fio.
#[derive(Clone, Debug)]
pub struct FioZipf {
    n: u64,
    theta: f64,
    zeta2: f64,
    zetan: f64,
    rand_off: u64,
}

impl FioZipf {
    pub fn new(n: u64, theta: f64, rng: &mut Rng) -> FioZipf {
        let to_gen = n.min(ZIPF_MAX_GEN);
        let mut zetan = 0.0;
        for i in 0..to_gen {
            zetan += libm::pow(1.0 / (i + 1) as f64, theta);
        }
        FioZipf { n, theta, zeta2: 1.0 + libm::pow(0.5, theta), zetan, rand_off: rand32(rng) }
    }
    /// A block in `0..n`.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let n = self.n;
        let alpha = 1.0 / (1.0 - self.theta);
        let eta = (1.0 - libm::pow(2.0 / n as f64, 1.0 - self.theta)) / (1.0 - self.zeta2 / self.zetan);
        let rand_uni = rand32(rng) as f64 / FRAND32_MAX;
        let rand_z = rand_uni * self.zetan;
        let val: u64 = if rand_z < 1.0 {
            1
        } else if rand_z < 1.0 + libm::pow(0.5, self.theta) {
            2
        } else {
            1 + (n as f64 * libm::pow(eta * rand_uni - eta + 1.0, alpha)) as u64
        };
        hash_u64(val - 1).wrapping_add(self.rand_off) % n
    }
}

/// fio's pareto (lib/zipf.c): `(n - 1) * u^(log h / log(1 - h))`, hashed and rotated as zipf.
#[derive(Clone, Debug)]
pub struct FioPareto {
    n: u64,
    pow: f64,
    rand_off: u64,
}

impl FioPareto {
    pub fn new(n: u64, h: f64, rng: &mut Rng) -> FioPareto {
        FioPareto { n, pow: libm::log(h) / libm::log(1.0 - h), rand_off: rand32(rng) }
    }
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let u = rand32(rng) as f64 / FRAND32_MAX;
        let v = ((self.n - 1) as f64 * libm::pow(u, self.pow)) as u64;
        hash_u64(v).wrapping_add(self.rand_off) % self.n
    }
}

/// fio's normal (lib/gauss.c): the mean of 12 uniform draws in `0..=n` (rounded up), plus a
/// uniform deviation of `stddev = ceil(n * dev / 100)` (at most n/2) halved until it fits,
/// hashed with `__hash_u64`, modulo n (no random rotation: fio's default center).
#[derive(Clone, Debug)]
pub struct FioGauss {
    n: u64,
    stddev: u64,
}

impl FioGauss {
    pub fn new(n: u64, dev: f64) -> FioGauss {
        let mut stddev = 0;
        if dev != 0.0 {
            stddev = libm::ceil(n as f64 * dev / 100.0) as u64;
            stddev = stddev.min(n / 2);
        }
        FioGauss { n, stddev }
    }
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        const ITERS: u64 = 12;
        let mut sum: u64 = 0;
        for _ in 0..ITERS {
            sum += rand32(rng) % (self.n + 1);
        }
        sum = sum.div_ceil(ITERS); // fio: (sum + GAUSS_ITERS - 1) / GAUSS_ITERS
        if self.stddev != 0 {
            // gauss_dev: an int in [-stddev/2, stddev/2)
            let r = rand32(rng) as f64;
            let vr = (self.stddev as f64 * (r / (FRAND32_MAX + 1.0))) as i64;
            let mut dev = vr - (self.stddev / 2) as i64;
            // fio adds the int to the unsigned sum: a negative sum wraps and is halved too
            // (fio loops forever when the mean is n and the deviation has halved to 0: stop)
            while dev != 0 && ((sum as i128 + dev as i128) < 0 || (sum as i128 + dev as i128) as u64 >= self.n) {
                dev /= 2;
            }
            sum = (sum as i64 + dev) as u64;
        }
        hash_u64(sum) % self.n
    }
}

/// `zoned` / `zoned_abs`: fio's 100-entry table (io_u.c, `__get_next_rand_offset_zoned*`):
/// a draw v in 1..=100 picks the zone; the block is uniform inside it.  Entries are (start
/// block, blocks) of the zone, in units of the block alignment.
#[derive(Clone, Debug)]
pub struct ZoneTable {
    pub by_v: Vec<(u64, u64)>,
}

impl ZoneTable {
    /// From (access %, size %) pairs over `lastb` blocks (fio's `zoned`).
    pub fn percent(split: &[(u32, u32)], lastb: u64) -> ZoneTable {
        let mut by_v = Vec::with_capacity(100);
        let mut size_prev = 0u64;
        for &(acc, sz) in split {
            let stotal = size_prev;
            let send = size_prev + sz as u64;
            let offset = stotal * lastb / 100;
            let blocks = lastb * (send - stotal) / 100;
            for _ in 0..acc {
                by_v.push((offset, blocks));
            }
            size_prev = send;
        }
        ZoneTable { by_v }
    }
    /// From (access %, bytes) pairs, `ba` bytes a block (fio's `zoned_abs`).
    pub fn absolute(split: &[(u32, u64)], ba: u64) -> ZoneTable {
        let mut by_v = Vec::with_capacity(100);
        let mut size_prev = 0u64;
        for &(acc, sz) in split {
            let stotal = size_prev / ba;
            let send = (size_prev + sz) / ba;
            for _ in 0..acc {
                by_v.push((stotal, send - stotal));
            }
            size_prev += sz;
        }
        ZoneTable { by_v }
    }
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let (start, blocks) = self.by_v[rng.below(100) as usize];
        start + rng.below(blocks.max(1))
    }
}

/// fio's random map (`lib/axmap.c`): which blocks were done this pass.  A drawn block that
/// was done moves to the next free one after it (wrapping to 0), as `axmap_next_free`; a
/// full map starts a new pass (fio's `fio_file_reset` when a time-based job runs out of
/// blocks).  One bit a block plus one bit per 64 blocks (a word full): n/8 + n/512 bytes.
#[derive(Clone, Debug)]
pub struct RandomMap {
    n: u64,
    bits: Vec<u64>,
    full: Vec<u64>,
    free: u64,
}

impl RandomMap {
    /// Bytes a map of `n` blocks takes.
    pub fn bytes(n: u64) -> u64 {
        n.div_ceil(64) * 8 + n.div_ceil(4096) * 8
    }
    pub fn new(n: u64) -> RandomMap {
        let words = n.div_ceil(64) as usize;
        RandomMap { n, bits: vec![0; words], full: vec![0; words.div_ceil(64)], free: n }
    }
    #[inline]
    fn is_set(&self, b: u64) -> bool {
        self.bits[(b / 64) as usize] >> (b % 64) & 1 == 1
    }
    /// The first free block at or after `from` (no wrap), if any.
    fn first_free_from(&self, from: u64) -> Option<u64> {
        if from >= self.n {
            return None;
        }
        let mut w = (from / 64) as usize;
        let masked = !self.bits[w] & (!0u64 << (from % 64));
        if masked != 0 {
            let b = w as u64 * 64 + masked.trailing_zeros() as u64;
            return (b < self.n).then_some(b);
        }
        w += 1;
        while w < self.bits.len() {
            let sw = w / 64;
            let fm = self.full[sw] >> (w % 64);
            if fm == !0u64 >> (w % 64) {
                // the rest of this summary word is full
                w = (sw + 1) * 64;
                continue;
            }
            if !self.bits[w] != 0 {
                let b = w as u64 * 64 + (!self.bits[w]).trailing_zeros() as u64;
                return (b < self.n).then_some(b);
            }
            w += 1;
        }
        None
    }
    /// `b` if free, else the next free block after it (wrapping); a new pass when full.
    #[inline]
    pub fn take(&mut self, b: u64) -> u64 {
        if self.free == 0 {
            self.reset();
        }
        if !self.is_set(b) {
            return b;
        }
        self.first_free_from(b + 1).or_else(|| self.first_free_from(0)).unwrap_or(b)
    }
    /// Mark blocks `b..b + k` done (those inside the map).
    #[inline]
    pub fn mark(&mut self, b: u64, k: u64) {
        for x in b..(b + k).min(self.n) {
            let w = (x / 64) as usize;
            let m = 1u64 << (x % 64);
            if self.bits[w] & m == 0 {
                self.bits[w] |= m;
                self.free -= 1;
                if self.bits[w] == !0 || (w + 1 == self.bits.len() && self.last_word_full(w)) {
                    self.full[w / 64] |= 1 << (w % 64);
                }
            }
        }
    }
    fn last_word_full(&self, w: usize) -> bool {
        let used = self.n - w as u64 * 64;
        used < 64 && self.bits[w] == (1u64 << used) - 1
    }
    fn reset(&mut self) {
        self.bits.iter_mut().for_each(|x| *x = 0);
        self.full.iter_mut().for_each(|x| *x = 0);
        self.free = self.n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Share of draws landing on the hottest `frac` of blocks.
    fn top_share(counts: &mut [u64], frac: f64) -> f64 {
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let total: u64 = counts.iter().sum();
        let k = (counts.len() as f64 * frac).round() as usize;
        counts[..k].iter().sum::<u64>() as f64 / total as f64
    }

    #[test]
    fn zipf_follows_the_closed_form_and_collides_like_fio() {
        let n = 16_384u64;
        let mut rng = Rng::new(3);
        let z = FioZipf::new(n, 0.8, &mut rng);
        let mut counts = vec![0u64; n as usize];
        for _ in 0..2_000_000 {
            counts[z.next(&mut rng) as usize] += 1;
        }
        // the unhashed ranks' share of the top 10%: the closed form's CDF at 0.1n, and the
        // hash only moves ranks (collisions merge a few)
        let s10 = top_share(&mut counts, 0.10);
        let zeta = |m: u64| (1..=m).map(|i| (i as f64).powf(-0.8)).sum::<f64>();
        let exact = zeta(n / 10) / zeta(n);
        assert!((s10 - exact).abs() < 0.03, "top 10%: {s10} vs zipf {exact}");
    }

    #[test]
    fn the_hash_permutes_powers_of_two_and_collides_otherwise() {
        let image = |n: u64| {
            let mut hit = vec![false; n as usize];
            for r in 0..n {
                hit[(hash_u64(r) % n) as usize] = true;
            }
            hit.iter().filter(|&&h| h).count() as u64
        };
        assert_eq!(image(16_384), 16_384);
        // not a power of two: ranks collide and some blocks are never drawn, as in fio
        assert!(image(10_000) < 9_000, "{}", image(10_000));
    }

    #[test]
    fn pareto_and_gauss_stay_in_range() {
        let n = 1000;
        let mut rng = Rng::new(1);
        let p = FioPareto::new(n, 0.2, &mut rng);
        let g = FioGauss::new(n, 5.0);
        for _ in 0..100_000 {
            assert!(p.next(&mut rng) < n);
            assert!(g.next(&mut rng) < n);
        }
        let g0 = FioGauss::new(7, 0.0);
        for _ in 0..1000 {
            assert!(g0.next(&mut rng) < 7);
        }
    }

    #[test]
    fn zone_tables() {
        let t = ZoneTable::percent(&[(60, 10), (30, 20), (10, 70)], 1000);
        assert_eq!(t.by_v.len(), 100);
        assert_eq!(t.by_v[0], (0, 100));
        assert_eq!(t.by_v[60], (100, 200));
        assert_eq!(t.by_v[99], (300, 700));
        let a = ZoneTable::absolute(&[(70, 8192), (30, 4096)], 4096);
        assert_eq!(a.by_v[0], (0, 2));
        assert_eq!(a.by_v[70], (2, 1));
    }

    #[test]
    fn random_map_visits_every_block_once_a_pass() {
        for n in [1u64, 63, 64, 65, 5000, 70_000] {
            let mut m = RandomMap::new(n);
            let mut rng = Rng::new(n);
            for pass in 0..2 {
                let mut seen = vec![false; n as usize];
                for _ in 0..n {
                    let b = m.take(rng.below(n));
                    assert!(!seen[b as usize], "n {n} pass {pass}: block {b} twice");
                    seen[b as usize] = true;
                    m.mark(b, 1);
                }
            }
        }
    }
}
