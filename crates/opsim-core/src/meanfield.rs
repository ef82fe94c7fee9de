//! Mean-field steady state of garbage collection under uniform random single-page writes,
//! used by analytic preconditioning (the idea MQSim uses: start measured rounds already in
//! steady state instead of writing the drive many times over).
//!
//! Model (Van Houdt 2013, "A mean field model for a class of garbage collection algorithms
//! in flash-based solid state drives"): N blocks of b pages, load rho = user pages / pages
//! in circulation.  Each host write invalidates a uniformly chosen valid page; each GC takes
//! a victim and returns a full block.  With x_j the fraction of blocks holding j valid pages,
//! V the victim's valid count and c = (b - E[V]) / (rho b), the fixed point satisfies
//!     c j x_j = P(V < j),   j = 1..b.
//! d-choices: P(V >= j) = S_j^d with S_j = sum_{k>=j} x_k.  Greedy (d -> infinity): victims
//! come from one level j*+1 (and, with probability q, from j* as soon as a block drops to
//! it), giving x_j = 1/(c j) above it.  WA = b / (b - E[V]).
//!
//! An independent implementation in Python (`opsim.models`) is the oracle the simulator
//! is tested against; this one only shapes the initial layout.

use crate::config::{GcPolicy, WorkloadType};

/// Why analytic preconditioning cannot lay out the steady state of a workload of `kind` whose
/// requests each rewrite one uniformly chosen page (`single_page`: a whole page, or an aligned
/// part of one, [`crate::workload::Workload::uniform_page_span`]) under GC policy `gc`, or
/// None: the model covers uniform random single-page writes under greedy, d-choices, random
/// and FIFO GC.
pub fn analytic_refusal(kind: WorkloadType, single_page: bool, gc: GcPolicy) -> Option<String> {
    if kind != WorkloadType::Uniform {
        return Some("\"analytic\" supports workload type \"uniform\" only".into());
    }
    if !single_page {
        return Some(
            "\"analytic\" needs requests that each write within one page (request_size = page_size, or \
                     an aligned part of a page over whole pages)"
                .into(),
        );
    }
    match gc {
        GcPolicy::Greedy | GcPolicy::DChoices | GcPolicy::Random | GcPolicy::Fifo => None,
        other => Some(format!("\"analytic\" does not support gc = \"{}\"", other.name())),
    }
}

/// Steady-state block occupancy: `x[j]` = fraction of blocks with j valid pages, and WA.
#[derive(Clone, Debug)]
pub struct Occupancy {
    pub x: Vec<f64>,
    pub waf: f64,
}

fn harmonic(n: usize) -> f64 {
    (1..=n).map(|k| 1.0 / k as f64).sum()
}

/// Greedy, closed form.
pub fn greedy(rho: f64, b: usize) -> Option<Occupancy> {
    let bf = b as f64;
    let hb = harmonic(b);
    // H(js + 1) summed as it goes (the same additions in the same order as `harmonic`: linear
    // in b, for superblocks of 100K pages and more)
    let mut h = 0.0;
    for js in 0..b {
        h += 1.0 / (js + 1) as f64;
        let den = rho * bf / (js as f64 + 1.0) - 1.0;
        if den.abs() < 1e-15 {
            continue;
        }
        let q = (bf - js as f64 - 1.0 - rho * bf * (hb - h)) / den;
        if q > 0.0 && q <= 1.0 + 1e-12 {
            let c = (q + bf - js as f64 - 1.0) / (rho * bf);
            let mut x = vec![0.0; b + 1];
            x[js + 1] = q / (c * (js as f64 + 1.0));
            for (j, xj) in x.iter_mut().enumerate().skip(js + 2) {
                *xj = 1.0 / (c * j as f64);
            }
            let ev = js as f64 + 1.0 - q;
            return Some(Occupancy { x, waf: bf / (bf - ev) });
        }
    }
    None
}

/// S_j for a given c (d-choices recursion from j = b down to 1); returns (S_1..S_b).
fn dchoices_tails(c: f64, b: usize, d: u32) -> Vec<f64> {
    let mut s = vec![0.0; b + 2];
    for j in (1..=b).rev() {
        let k = 1.0 / (c * j as f64);
        let rhs = s[j + 1] + k;
        // solve g(S) = S + k S^d - rhs = 0 on [s[j+1], 1]
        let (mut lo, mut hi) = (s[j + 1], 1.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            let g = mid + k * libm::pow(mid, d as f64) - rhs;
            if g > 0.0 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        s[j] = 0.5 * (lo + hi);
    }
    s
}

/// d-choices (d = 1 is the random policy).
pub fn dchoices(rho: f64, b: usize, d: u32) -> Option<Occupancy> {
    let bf = b as f64;
    let mass = |c: f64| dchoices_tails(c, b, d)[1..=b].iter().sum::<f64>();
    let (mut lo, mut hi) = (1e-9f64, 1.0 / rho);
    if mass(hi) > rho * bf {
        return None;
    }
    for _ in 0..200 {
        let mid = libm::sqrt(lo * hi);
        if mass(mid) > rho * bf {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let c = libm::sqrt(lo * hi);
    let s = dchoices_tails(c, b, d);
    let mut x = vec![0.0; b + 1];
    x[0] = 1.0 - s[1];
    for j in 1..=b {
        x[j] = s[j] - s[j + 1];
    }
    let ev: f64 = (1..=b).map(|j| libm::pow(s[j], d as f64)).sum();
    Some(Occupancy { x, waf: bf / (bf - ev) })
}

/// FIFO: victim valid fraction x solves x = exp(-(1 - x) / rho) (Desnoyers 2012).
pub fn fifo_victim_fraction(rho: f64) -> f64 {
    // g(x) = x - exp(-(1-x)/rho) is concave, negative at 0, zero at the trivial root x = 1
    // and largest at x_m = 1 + rho ln rho: the non-trivial root lies in [0, x_m].
    let g = |x: f64| x - libm::exp(-(1.0 - x) / rho);
    let (mut lo, mut hi) = (0.0f64, 1.0 + rho * libm::log(rho));
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if g(mid) > 0.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    0.5 * (lo + hi)
}

/// Round fractions `x` (sum 1) to integer block counts summing to `n` (largest remainder).
pub fn round_counts(x: &[f64], n: u64) -> Vec<u64> {
    let raw: Vec<f64> = x.iter().map(|&v| v.max(0.0) * n as f64).collect();
    let mut out: Vec<u64> = raw.iter().map(|&v| v.floor() as u64).collect();
    let assigned: u64 = out.iter().sum();
    let mut rem: Vec<(usize, f64)> = raw.iter().enumerate().map(|(i, &v)| (i, v - v.floor())).collect();
    rem.sort_by(|a, b| b.1.partial_cmp(&a.1).unwrap().then(a.0.cmp(&b.0)));
    for k in 0..(n.saturating_sub(assigned)) as usize {
        out[rem[k % rem.len()].0] += 1;
    }
    out
}

/// Adjust per-block valid counts so they sum to `total` exactly, one page at a time spread
/// across blocks, keeping every count in 0..=b.
pub fn fix_total(counts: &mut [u32], total: u64, b: u32) -> bool {
    let mut sum: i64 = counts.iter().map(|&c| c as i64).sum();
    let target = total as i64;
    let n = counts.len();
    if n == 0 {
        return target == 0;
    }
    // stride through the blocks so the change is spread out; 37 is prime, so the stride
    // visits every block unless n is a multiple of 37, where it would cycle through n/37
    let step = if n % 37 == 0 { 1 } else { 37 };
    let mut i = 0usize;
    let mut idle = 0usize;
    while sum != target && idle < 2 * n {
        if sum < target && counts[i] < b {
            counts[i] += 1;
            sum += 1;
            idle = 0;
        } else if sum > target && counts[i] > 0 {
            counts[i] -= 1;
            sum -= 1;
            idle = 0;
        } else {
            idle += 1;
        }
        i = (i + step) % n;
    }
    sum == target
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_is_one_over_one_minus_rho() {
        let rho = 1.0 / 1.28;
        let o = dchoices(rho, 64, 1).unwrap();
        assert!((o.waf - 1.0 / (1.0 - rho)).abs() / o.waf < 1e-6, "{}", o.waf);
    }

    #[test]
    fn dchoices_approaches_greedy() {
        let rho = 1.0 / 1.28;
        let g = greedy(rho, 32).unwrap();
        let d = dchoices(rho, 32, 400).unwrap();
        assert!((g.waf - d.waf).abs() / g.waf < 0.01, "greedy {} d=400 {}", g.waf, d.waf);
        let s: f64 = g.x.iter().sum();
        assert!((s - 1.0).abs() < 1e-9);
        let m: f64 = g.x.iter().enumerate().map(|(j, v)| j as f64 * v).sum();
        assert!((m - rho * 32.0).abs() < 1e-9);
    }

    #[test]
    fn greedy_beats_fifo_and_fifo_beats_random() {
        let rho = 1.0 / 1.07;
        let g = greedy(rho, 64).unwrap().waf;
        let x = fifo_victim_fraction(rho);
        let f = 1.0 / (1.0 - x);
        let r = 1.0 / (1.0 - rho);
        assert!(g < f && f < r, "{g} {f} {r}");
    }

    #[test]
    fn rounding_and_totals() {
        let c = round_counts(&[0.2, 0.3, 0.5], 7);
        assert_eq!(c.iter().sum::<u64>(), 7);
        let mut v = vec![10u32; 10];
        assert!(fix_total(&mut v, 95, 16));
        assert_eq!(v.iter().map(|&c| c as u64).sum::<u64>(), 95);
        assert!(v.iter().all(|&c| c <= 16));
    }

    #[test]
    fn totals_reach_every_block_when_the_count_is_a_multiple_of_the_stride() {
        // 74 blocks: a stride of 37 alone would only ever visit blocks 0 and 37
        for n in [37usize, 74, 111] {
            let mut v = vec![200u32; n];
            let total = n as u64 * 256 - 3;
            assert!(fix_total(&mut v, total, 256), "n={n}");
            assert_eq!(v.iter().map(|&c| c as u64).sum::<u64>(), total);
            let mut w = vec![56u32; n];
            assert!(fix_total(&mut w, 2, 256), "n={n}");
            assert_eq!(w.iter().map(|&c| c as u64).sum::<u64>(), 2);
        }
    }
}
