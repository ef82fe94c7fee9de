//! The FTL's event counters: 64-bit, never reset, differenced between snapshots.

use serde::Serialize;

/// Event counters.  All 64-bit; never reset except by [`Ftl::reset_counters`] (not used by
/// the simulator, which takes differences).
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Counters {
    pub host_write_cmds: u64,
    pub host_write_bytes: u64,
    /// Pages programmed on behalf of host writes (a partial-page write programs a whole page).
    pub host_write_pages: u64,
    pub host_read_cmds: u64,
    pub host_read_bytes: u64,
    pub trim_cmds: u64,
    pub trimmed_pages: u64,
    /// Pages programmed in all (host + GC).
    pub nand_write_pages: u64,
    /// Pages read from NAND: host reads of mapped pages, read-modify-write and GC reads.
    pub nand_read_pages: u64,
    pub gc_copy_pages: u64,
    /// NAND senses the GC copies took when the timed model reads whole pages
    /// ([`Ftl::set_sense_layout`]): the distinct NAND pages (die, page) among each victim's
    /// valid pages; 0 when not counted.
    #[serde(skip_serializing_if = "is_zero")]
    pub gc_read_senses: u64,
    /// Victims collected by garbage collection.
    pub gc_victims: u64,
    pub erases: u64,
    /// Partial-page host writes that had to read the old page (read-modify-write).
    pub rmw_pages: u64,
    /// Host reads of pages that were never written or were trimmed.
    pub unmapped_read_pages: u64,
    /// SLC cache: valid pages folded from SLC-mode blocks into native-mode blocks (each
    /// read once and programmed once; included in the NAND page counts).
    #[serde(skip_serializing_if = "is_zero")]
    pub fold_pages: u64,
    /// SLC cache: SLC-mode blocks folded and erased (included in `erases`).
    #[serde(skip_serializing_if = "is_zero")]
    pub folds: u64,
    /// Metadata pages (`ftl.meta_writes`): programmed into host frontiers, invalid at once
    /// (included in `nand_write_pages`).
    #[serde(skip_serializing_if = "is_zero")]
    pub meta_pages: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// `minus(&self, o)`: every named counter of `self` less `o`'s (the counts between two
/// snapshots), for [`Counters`] and the timed device's work counts.  The list must name every
/// field (the struct literal does not compile otherwise).
macro_rules! fieldwise_minus {
    ($vis:vis, $t:ident { $($f:ident),* $(,)? }) => {
        #[inline(always)]
        $vis fn minus(&self, o: &$t) -> $t {
            $t { $($f: self.$f - o.$f),* }
        }
    };
}
pub(crate) use fieldwise_minus;

impl Counters {
    fieldwise_minus!(
        pub,
        Counters {
            host_write_cmds,
            host_write_bytes,
            host_write_pages,
            host_read_cmds,
            host_read_bytes,
            trim_cmds,
            trimmed_pages,
            nand_write_pages,
            nand_read_pages,
            gc_copy_pages,
            gc_read_senses,
            gc_victims,
            erases,
            rmw_pages,
            unmapped_read_pages,
            fold_pages,
            folds,
            meta_pages
        }
    );

    /// Host commands of every kind (writes, reads, trims).
    #[inline(always)]
    pub fn commands(&self) -> u64 {
        self.host_write_cmds + self.host_read_cmds + self.trim_cmds
    }

    /// NAND bytes programmed over host bytes written (page_size converts pages to bytes).
    pub fn waf(&self, page_size: u64) -> f64 {
        if self.host_write_bytes == 0 {
            return f64::NAN;
        }
        (self.nand_write_pages * page_size) as f64 / self.host_write_bytes as f64
    }
}
