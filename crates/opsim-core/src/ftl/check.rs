//! The FTL invariant checker: forward and reverse maps agree, validity bitmaps and counts
//! agree, every block is in exactly one place (free pool, a frontier, the policy's index,
//! the SLC cache's fold queue), SLC-mode blocks hold no page past what their mode holds,
//! the wear counters add up, and with GC groups every block holds only its group's logical
//! pages and sits in its own group's pool, frontiers and index.

use super::temperature::HOT;
use super::{BlockState, Ftl, Policy, NONE};

pub fn check<P: Policy>(f: &Ftl<P>) -> Result<(), String> {
    check_mapping(f)?;
    // Every block in exactly one place.
    let mut place = vec![0u8; f.blocks as usize];
    place_free_blocks(f, &mut place)?;
    place_frontier_blocks(f, &mut place)?;
    place_policy_blocks(f, &mut place)?;
    check_slc(f, &mut place)?;
    check_classes(f)?;
    for (b, &n) in place.iter().enumerate() {
        if n != 1 {
            return Err(format!(
                "block {b} ({:?}) is in {n} places (free pool, frontiers, policy index, fold queue)",
                f.meta.state[b]
            ));
        }
    }
    check_counts(f)
}

/// Forward map, reverse map, validity bitmap and valid counts agree.
fn check_mapping<P: Policy>(f: &Ftl<P>) -> Result<(), String> {
    let ppb = f.ppb as usize;
    let phys = f.blocks as usize * ppb;
    // Forward map -> reverse map and validity.
    let mut mapped = 0u64;
    for (lpn, &ppn) in f.l2p.iter().enumerate() {
        if ppn == NONE {
            continue;
        }
        mapped += 1;
        if ppn as usize >= phys {
            return Err(format!("L2P[{lpn}] = {ppn} is past the last physical page"));
        }
        if f.p2l[ppn as usize] as usize != lpn {
            return Err(format!("L2P[{lpn}] = {ppn} but P2L[{ppn}] = {}", f.p2l[ppn as usize]));
        }
        let (w, m) = f.bit(ppn);
        if f.bits[w] & m == 0 {
            return Err(format!("L2P[{lpn}] = {ppn} but page {ppn} is not marked valid"));
        }
    }
    // Validity bitmap -> counts and reverse map.
    let mut total_valid = 0u64;
    for b in 0..f.blocks as usize {
        let mut n = 0u32;
        for wi in 0..f.wpb as usize {
            let mut word = f.bits[b * f.wpb as usize + wi];
            if wi == f.wpb as usize - 1 && ppb % 64 != 0 && word >> (ppb % 64) != 0 {
                return Err(format!("block {b}: validity bits set past the last page"));
            }
            while word != 0 {
                let t = word.trailing_zeros() as usize;
                word &= word - 1;
                let ppn = b * ppb + wi * 64 + t;
                let lpn = f.p2l[ppn];
                if lpn == NONE || lpn >= f.lpns || f.l2p[lpn as usize] as usize != ppn {
                    return Err(format!("page {ppn} is marked valid but L2P does not point to it"));
                }
                if (lpn % f.groups) as usize != f.local(b as u32).0 {
                    return Err(format!(
                        "logical page {lpn} of group {} lies in block {b} of another group",
                        lpn % f.groups
                    ));
                }
                n += 1;
            }
        }
        if n != f.meta.valid[b] {
            return Err(format!("block {b}: {n} valid bits, valid count says {}", f.meta.valid[b]));
        }
        total_valid += n as u64;
    }
    if mapped != f.mapped {
        return Err(format!("{mapped} mapped logical pages, the counter says {}", f.mapped));
    }
    if total_valid != mapped {
        return Err(format!("{mapped} mapped logical pages but {total_valid} valid physical pages"));
    }
    Ok(())
}

/// The free pools: their count, and each block free, empty and in its group's pool.
fn place_free_blocks<P: Policy>(f: &Ftl<P>, place: &mut [u8]) -> Result<(), String> {
    let free: usize = f.free.iter().map(|q| q.len()).sum();
    if free != f.nfree as usize {
        return Err(format!("{free} blocks in the free pools, the count says {}", f.nfree));
    }
    for (g, &b) in f.free.iter().enumerate().flat_map(|(g, q)| q.iter().map(move |b| (g, b))) {
        if f.local(b).0 != g {
            return Err(format!("block {b} is in the free pool of group {g}, not its own"));
        }
        if f.meta.state[b as usize] != BlockState::Free {
            return Err(format!("block {b} is in the free pool but not free"));
        }
        if f.meta.valid[b as usize] != 0 {
            return Err(format!("free block {b} has valid pages"));
        }
        place[b as usize] += 1;
    }
    Ok(())
}

fn slc_flag<P: Policy>(f: &Ftl<P>, b: u32) -> bool {
    f.slc.as_ref().is_some_and(|s| s.flag[b as usize])
}

/// The frontiers: each block open, in its group, and its end what the block's mode holds.
fn place_frontier_blocks<P: Policy>(f: &Ftl<P>, place: &mut [u8]) -> Result<(), String> {
    for (i, fr) in f.frontiers().enumerate() {
        let host = i < f.host.len();
        // host frontier i and GC frontier g belong to group i % groups and g / classes
        let group = if host {
            Some(i % f.groups as usize)
        } else {
            (i < f.host.len() + f.gc.len()).then(|| (i - f.host.len()) / f.sep.classes as usize)
        };
        if fr.block != NONE && group.is_some_and(|g| f.local(fr.block).0 != g) {
            return Err(format!("frontier block {} is outside its frontier's group", fr.block));
        }
        if fr.block == NONE {
            if fr.next != 0 || fr.end != 0 {
                return Err(format!("an empty frontier has next {} and end {}", fr.next, fr.end));
            }
            continue;
        }
        if f.meta.state[fr.block as usize] != BlockState::Open {
            return Err(format!("frontier block {} is not open", fr.block));
        }
        if fr.next > fr.end {
            return Err(format!("frontier of block {} is past the end", fr.block));
        }
        let want_end = match &f.slc {
            Some(s) if host && s.flag[fr.block as usize] => s.ppb,
            _ if slc_flag(f, fr.block) => return Err(format!("GC or fold frontier block {} is in SLC mode", fr.block)),
            _ => f.ppb,
        };
        // GC and fold frontiers run to the block's end; host ones stop at `end`
        if host && fr.end != want_end {
            return Err(format!(
                "host frontier of block {} ends at {}, its mode holds {want_end} pages",
                fr.block, fr.end
            ));
        }
        place[fr.block as usize] += 1;
    }
    Ok(())
}

/// The blocks the GC policy indexes: closed, not in SLC mode.
fn place_policy_blocks<P: Policy>(f: &Ftl<P>, place: &mut [u8]) -> Result<(), String> {
    let members =
        f.group_policies().enumerate().flat_map(|(g, p)| p.members().into_iter().map(move |b| b + g as u32 * f.bpg));
    for b in members {
        if f.meta.state[b as usize] != BlockState::Closed {
            return Err(format!("block {b} is indexed by the {} policy but not closed", P::NAME));
        }
        if slc_flag(f, b) {
            return Err(format!("SLC-mode block {b} is indexed by the {} policy", P::NAME));
        }
        place[b as usize] += 1;
    }
    Ok(())
}

/// The SLC cache: the fold queue, the flags and their count, no page past the SLC mode's
/// end; without a cache, no SLC state.
fn check_slc<P: Policy>(f: &Ftl<P>, place: &mut [u8]) -> Result<(), String> {
    match &f.slc {
        Some(s) => {
            for &b in &s.queue {
                if f.meta.state[b as usize] != BlockState::Cached || !s.flag[b as usize] {
                    return Err(format!(
                        "block {b} waits to be folded but is {:?} (SLC flag {})",
                        f.meta.state[b as usize], s.flag[b as usize]
                    ));
                }
                place[b as usize] += 1;
            }
            let flagged = s.flag.iter().filter(|&&x| x).count();
            if flagged != s.count as usize {
                return Err(format!("{flagged} blocks flagged SLC, the count says {}", s.count));
            }
            for (b, &fl) in s.flag.iter().enumerate() {
                if !fl {
                    if f.meta.state[b] == BlockState::Cached {
                        return Err(format!("block {b} is cached but not in SLC mode"));
                    }
                    continue;
                }
                // no page of an SLC-mode block lies past what the mode holds
                for wi in 0..f.wpb as usize {
                    let lo = wi * 64;
                    let word = f.bits[b * f.wpb as usize + wi];
                    let past = if lo >= s.ppb as usize {
                        word
                    } else if lo + 64 > s.ppb as usize {
                        word >> (s.ppb as usize - lo)
                    } else {
                        0
                    };
                    if past != 0 {
                        return Err(format!("SLC-mode block {b} has valid pages past its {} pages", s.ppb));
                    }
                }
            }
        }
        None => {
            if f.meta.state.contains(&BlockState::Cached) || f.fold.block != NONE {
                return Err("SLC state without an SLC cache".into());
            }
        }
    }
    Ok(())
}

/// Temperature classes (`ftl.separation`): none kept when off; a free block has class 0, a
/// GC frontier's block its frontier's class + 1, a host frontier's [`HOT`] on a hot frontier
/// and 0 on any other; no class past the last.
fn check_classes<P: Policy>(f: &Ftl<P>) -> Result<(), String> {
    let t = &f.sep;
    if t.class.is_empty() {
        return if t.classes == 1 && t.host_classes == 1 { Ok(()) } else { Err("temperature classes not kept".into()) };
    }
    for (b, &c) in t.class.iter().enumerate() {
        let known = c as u32 <= t.classes || (c == HOT && t.host_classes > 1);
        if !known || (c != 0 && f.meta.state[b] == BlockState::Free) {
            return Err(format!("block {b} ({:?}) has temperature class {c}", f.meta.state[b]));
        }
    }
    for (i, fr) in f.gc.iter().enumerate() {
        let want = if t.classes > 1 { (i % t.classes as usize) as u8 + 1 } else { 0 };
        if fr.block != NONE && t.class[fr.block as usize] != want {
            return Err(format!(
                "GC frontier {i}'s block {} has class {}, not {want}",
                fr.block, t.class[fr.block as usize]
            ));
        }
    }
    for (i, fr) in f.host.iter().enumerate() {
        let want = if t.is_hot(i as u32 / f.groups) { HOT } else { 0 };
        if fr.block != NONE && t.class[fr.block as usize] != want {
            return Err(format!(
                "host frontier {i}'s block {} has class {}, not {want}",
                fr.block, t.class[fr.block as usize]
            ));
        }
    }
    Ok(())
}

/// The policies' own checks, the erase counts and the counters' relations.
fn check_counts<P: Policy>(f: &Ftl<P>) -> Result<(), String> {
    for (g, p) in f.group_policies().enumerate() {
        p.check(f.group_valid(g))?;
    }
    let erase_sum: u64 = f.meta.erase.iter().map(|&e| e as u64).sum();
    if erase_sum != f.c.erases {
        return Err(format!("erase counts add up to {erase_sum}, counter says {}", f.c.erases));
    }
    if f.c.nand_write_pages < f.c.gc_copy_pages + f.c.fold_pages {
        return Err("fewer NAND writes than GC copies and folds".into());
    }
    if f.c.gc_read_senses > f.c.gc_copy_pages {
        return Err("more GC senses than GC copies".into());
    }
    if f.c.erases < f.c.folds {
        return Err("fewer erases than folds".into());
    }
    Ok(())
}
