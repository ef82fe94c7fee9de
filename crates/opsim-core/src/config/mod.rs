//! The simulation config (TOML or JSON; see `docs/config.md`): its schema, and the checks and
//! resolutions of its tables that need no geometry.
//!
//! Parsing ([`Config::from_toml_str`]) rejects unknown keys and applies the preset
//! (`preset`).  `crate::resolve::ModelSpec::resolve` then checks every value against the
//! drive, with the checks and resolutions of this module, names the key (`drive.op`,
//! `ftl.streams`...) in its error, and returns the resolved model description
//! `Simulator::new` builds from and `describe` reports (it sits above `geometry`, which is
//! computed from the config, so it is a module of its own).  The rooms: this file (the schema
//! of `[drive]`, `[ftl]`, `[workload]`, `[run]`, `[[phase]]`), `timing` (`[timing]`),
//! `timing_resolved` (`[timing]` in ns and counts), `trace` (`[workload.trace]`), `placement`
//! (`[ftl.placement]`, `[[namespace]]`), `gc` (GC's frontier, scope and reserve), `map_cache`
//! (`[timing.map_cache]` sized), `pts` (`[workload.pts]`'s matrix), `checks` (the knobs that
//! need no drive), `preset`, `read` (the document: nesting limit, errors naming key and
//! line).  Nothing here uses the simulator, the timed model, the trace reader or the geometry.

use crate::error::{Error, Result};
use crate::units::{ByteSize, Fraction, Number};
use serde::{Deserialize, Serialize};

pub(crate) mod checks;
pub mod gc;
pub mod map_cache;
pub mod placement;
pub mod preset;
pub mod pts;
mod read;
pub mod separation;
pub mod timing;
pub mod timing_resolved;
pub mod trace;

pub use preset::drive_file;
use read::{check_nesting, config_error, date_at, date_message, json_error, toml_error, toml_ready, Nested};
pub use read::{from_json_doc, MAX_NESTING};

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// A drive preset (`opsim presets`) whose settings this config starts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    pub drive: DriveConfig,
    #[serde(default)]
    pub ftl: FtlConfig,
    #[serde(default)]
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub run: RunConfig,
    /// Composable phases (fill, age, measure...), run in order after preconditioning; when
    /// given, they replace the warm-up and measurement of `[workload]`.
    #[serde(default, rename = "phase", skip_serializing_if = "Vec::is_empty")]
    pub phases: Vec<PhaseConfig>,
    /// Tenants (`[[namespace]]`): each a slice of the LBA space with its own workload; when
    /// given, they replace `[workload]` (docs/placement.md).
    #[serde(default, rename = "namespace", skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<placement::NamespaceConfig>,
    /// The timed model (IOPS, latency over time); absent: functional simulation only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<timing::TimingConfig>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum OpBasis {
    /// (physical - user) / user: SanDisk, SK hynix, Kingston, the usual "7%/28%".
    #[default]
    User,
    /// (physical - user) / physical: "spare area" (Intel, AnandTech).
    Physical,
    /// Capacity held back as a fraction of the drive's native user capacity (Micron).
    Native,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DriveConfig {
    /// Host-visible capacity.
    pub user_capacity: Option<ByteSize>,
    /// Raw NAND capacity available to the FTL (whole blocks are used).
    pub physical_capacity: Option<ByteSize>,
    /// The drive's user capacity before any extra OP (for `op_basis = "native"`).
    pub native_capacity: Option<ByteSize>,
    /// Built-in OP of the native configuration, user basis (with `native_capacity`
    /// instead of `physical_capacity`).
    pub native_op: Option<Fraction>,
    /// OP in the basis `op_basis`.
    pub op: Option<Fraction>,
    #[serde(default)]
    pub op_basis: OpBasis,
    #[serde(default = "default_page_size")]
    pub page_size: ByteSize,
    /// Mapping units per FTL block (default 256); with `ftl.gc_unit = "superblock"` the
    /// superblock sets it and this key is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pages_per_block: Option<u32>,
    #[serde(default = "default_sector")]
    pub sector_size: u32,
    /// NAND dies (for `ftl.gc_scope` and `ftl.gc_reserve` per die or plane in the
    /// functional model; a `[timing]` table gives them as channels x dies_per_channel).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dies: Option<u32>,
    /// Planes per die (default 1 with `dies`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planes_per_die: Option<u32>,
}

fn default_page_size() -> ByteSize {
    ByteSize(4096)
}
/// `drive.pages_per_block` when not given.
pub const DEFAULT_PAGES_PER_BLOCK: u32 = 256;

impl DriveConfig {
    /// `pages_per_block`, or its default.
    pub fn pages_per_block(&self) -> u32 {
        self.pages_per_block.unwrap_or(DEFAULT_PAGES_PER_BLOCK)
    }
}
fn default_sector() -> u32 {
    512
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    #[default]
    Greedy,
    Fifo,
    Random,
    DChoices,
    CostBenefit,
    WindowedGreedy,
}

impl GcPolicy {
    pub fn name(self) -> &'static str {
        match self {
            GcPolicy::Greedy => "greedy",
            GcPolicy::Fifo => "fifo",
            GcPolicy::Random => "random",
            GcPolicy::DChoices => "d-choices",
            GcPolicy::CostBenefit => "cost-benefit",
            GcPolicy::WindowedGreedy => "windowed-greedy",
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    #[serde(default)]
    pub gc: GcPolicy,
    /// Candidates sampled by d-choices (1..=[`MAX_D`]).
    pub d: Option<u32>,
    /// Window (oldest closed blocks considered) of windowed greedy.
    pub window: Option<u32>,
    /// Garbage collection starts when fewer than this many blocks are free.
    #[serde(default = "default_low")]
    pub gc_low_watermark: u32,
    /// ... and runs until this many blocks are free.
    pub gc_high_watermark: Option<u32>,
    /// Host write frontiers (per-temperature streams); writes carry a stream id.
    #[serde(default = "default_streams")]
    pub streams: u32,
    /// Run the full invariant checker after every garbage collection (slow; for debugging).
    #[serde(default)]
    pub check_invariants: bool,
    /// Dynamic SLC cache (Micron's Dynamic Write Acceleration); absent: off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slc_cache: Option<SlcCacheConfig>,
    /// Data placement (`[ftl.placement]`: none, streams, fdp); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<placement::PlacementConfig>,
    /// Where GC copies go: their own frontier ("separate") or the host's ("shared").
    #[serde(default, skip_serializing_if = "is_default")]
    pub gc_frontier: gc::GcFrontier,
    /// Where a victim may come from: anywhere ("drive"), the write's die or plane.
    #[serde(default, skip_serializing_if = "is_default")]
    pub gc_scope: gc::GcScope,
    /// Free-block reserve, "<N> blocks per plane|die|drive" (instead of the watermarks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gc_reserve: Option<gc::GcReserve>,
    /// The unit GC collects and erases: the FTL block (`drive.pages_per_block`, "block") or
    /// a superblock striped over the NAND's dies and planes ("superblock", from `[timing]`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub gc_unit: gc::GcUnitKind,
    /// Dies a superblock stripes over (1..=dies; default every die).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superblock_dies: Option<u32>,
    /// A scale model by this factor: the superblock's pages divided by it (set by the core's
    /// scale rule, `describe::Description::scaled`; default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superblock_scale: Option<u32>,
    /// NAND pages written per host page beyond the data and GC copies (metadata, journal,
    /// parity: the WAF floor), 0..=[`MAX_META_WRITES`]; default 0 (off).  Each whole page
    /// owed is programmed into the host frontier and is invalid at once (`ftl::Ftl`).
    #[serde(default, skip_serializing_if = "is_default")]
    pub meta_writes: f64,
    /// Temperature separation of GC copies (`"none"`, `"gc-age"`); default none.
    #[serde(default, skip_serializing_if = "is_default")]
    pub separation: separation::Separation,
    /// GC classes of `separation = "gc-age"` (2..=8, default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separation_classes: Option<u32>,
}

/// The most `ftl.meta_writes`: one metadata page per host page (a WAF floor of 2).
pub const MAX_META_WRITES: f64 = 1.0;

/// `ftl.meta_writes` in 0..=[`MAX_META_WRITES`] (the config's and the cost model's check).
pub fn check_meta_writes(v: f64) -> Result<f64> {
    check_fraction("ftl.meta_writes", v, 0.0, MAX_META_WRITES, true, true)
}

pub(crate) fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// What host writes do when the SLC cache is full.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum WhenFull {
    /// Fold the oldest SLC block into native-mode blocks and keep writing in SLC mode.
    #[default]
    Fold,
    /// Write straight to native-mode (TLC) blocks until folding in idle time frees the cache.
    Direct,
}

/// `[ftl.slc_cache]`: part of the native-mode (TLC) blocks written in SLC mode (one bit per
/// cell: a block holds `1 / bits_per_cell` of its pages) and folded into native mode later.
/// The cache may use at most the free user capacity (LBAs holding no data) beyond its static
/// part, so it shrinks as the drive fills: limit (blocks) = max(min, min(max, free user
/// blocks)).  Sizes are fractions of the NAND blocks, so a scale model keeps them.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SlcCacheConfig {
    /// Off with `false` (to turn off a preset's cache).
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Most blocks in SLC mode at once (the dynamic cache's ceiling), fraction of all blocks.
    #[serde(default = "one")]
    pub max_fraction: Fraction,
    /// Static part: blocks always allowed in SLC mode, even on a full drive, fraction of all
    /// blocks (they come out of the spare area).
    #[serde(default)]
    pub min_fraction: Fraction,
    /// Bits per cell of the native mode (3 = TLC; default: from `timing.cell`, else 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bits_per_cell: Option<u32>,
    /// When the cache is full: "fold" (the oldest SLC block, then keep writing in SLC mode)
    /// or "direct" (write native-mode blocks).
    #[serde(default)]
    pub when_full: WhenFull,
    /// Timed model: fold SLC blocks in idle time (no host command outstanding for
    /// `idle_ms`, NAND and controller idle).
    #[serde(default = "default_true")]
    pub idle_fold: bool,
    #[serde(default = "default_idle_ms")]
    pub idle_ms: f64,
}

pub(super) fn default_true() -> bool {
    true
}
fn default_idle_ms() -> f64 {
    1.0
}

fn default_low() -> u32 {
    2
}
fn default_streams() -> u32 {
    1
}

impl Default for FtlConfig {
    fn default() -> Self {
        FtlConfig {
            gc: GcPolicy::Greedy,
            d: None,
            window: None,
            gc_low_watermark: default_low(),
            gc_high_watermark: None,
            streams: default_streams(),
            check_invariants: false,
            slc_cache: None,
            placement: None,
            gc_frontier: gc::GcFrontier::Separate,
            gc_scope: gc::GcScope::Drive,
            gc_reserve: None,
            gc_unit: gc::GcUnitKind::Block,
            superblock_dies: None,
            superblock_scale: None,
            meta_writes: 0.0,
            separation: separation::Separation::None,
            separation_classes: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadType {
    #[default]
    Uniform,
    Sequential,
    HotCold,
    Zipf,
    /// SNIA PTS: purge, 2x user capacity of 128 KiB sequential writes, then 4 KiB random
    /// writes in rounds until steady state.
    SniaPts,
    /// JEDEC JESD219 enterprise endurance workload (size mix and LBA zones).
    Jesd219,
    /// SK hynix's mobile pattern: repeat (sequential 1 GiB, random 200 MiB).
    SkHynix,
    /// Replay of a block trace (`[workload.trace]`).
    Trace,
    /// Zoned and log-structured writers: `active_zones` zones of `zone_size` written
    /// sequentially, each reset (one whole-zone TRIM) before it is rewritten.
    Zoned,
    /// A fio job file's job (`job`, `section`).
    Fio,
}

impl WorkloadType {
    pub fn name(self) -> &'static str {
        match self {
            WorkloadType::Uniform => "uniform",
            WorkloadType::Sequential => "sequential",
            WorkloadType::HotCold => "hot-cold",
            WorkloadType::Zipf => "zipf",
            WorkloadType::SniaPts => "snia-pts",
            WorkloadType::Jesd219 => "jesd219",
            WorkloadType::SkHynix => "sk-hynix",
            WorkloadType::Trace => "trace",
            WorkloadType::Zoned => "zoned",
            WorkloadType::Fio => "fio",
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadConfig {
    #[serde(rename = "type", default)]
    pub kind: WorkloadType,
    /// Fraction of the accessible LBAs the workload touches (from LBA 0); the rest is never
    /// written (AnandTech's "fill a fraction of the drive, test that span").
    #[serde(default = "one")]
    pub span: Fraction,
    /// Transfer size of each command.
    pub request_size: Option<ByteSize>,
    /// Alignment of random offsets (default: the request size, at most one page).
    pub align: Option<ByteSize>,
    /// Fraction of commands that are reads (e.g. 0.95 for a 95:5 mix).
    #[serde(default)]
    pub read_fraction: Fraction,
    /// hot-cold: fraction of the span that is hot (f) ...
    pub hot_fraction: Option<Fraction>,
    /// ... and fraction of writes that go to it (r).
    pub hot_write_fraction: Option<Fraction>,
    /// zipf: exponent s (> 0).
    pub zipf_exponent: Option<Number>,
    /// Fraction of commands that are TRIMs of a request-sized range.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim_fraction: Fraction,
    /// sequential: distance between the starts of consecutive requests (default: the
    /// request size; larger leaves gaps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stride: Option<ByteSize>,
    /// sequential: independent sequential streams, each in its own slice of the span.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential_streams: Option<u32>,
    /// sk-hynix: sequential bytes per cycle (default 1 GiB) ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential_chunk: Option<ByteSize>,
    /// ... random bytes per cycle (default 200 MiB) ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_chunk: Option<ByteSize>,
    /// ... and the sequential request size (default 512 KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential_request_size: Option<ByteSize>,
    /// zoned: bytes per zone (a whole number of pages and of request_size) ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_size: Option<ByteSize>,
    /// ... and zones open for writing at once (default 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_zones: Option<u32>,
    /// trace: the file and how to replay it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<trace::TraceConfig>,
    /// snia-pts: which SNIA PTS test to run (`[workload.pts]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pts: Option<PtsConfig>,
    /// fio: the job file ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// ... and the job in it (required when the file holds several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section: Option<String>,
}

/// The SNIA PTS test of `type = "snia-pts"`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum PtsTest {
    /// 4 KiB random-write rounds until the steady-state rule holds (the default).
    #[default]
    SteadyState,
    /// The IOPS test: every block size x R/W mix per round, steady state tracked on 4 KiB
    /// 100% writes (timed model only).
    Iops,
}

/// `[workload.pts]`.
#[derive(Clone, Debug, Deserialize, Serialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PtsConfig {
    #[serde(default)]
    pub test: PtsTest,
    /// IOPS test: block sizes, in the order each mix runs them (default: 512 B, 4, 8, 16,
    /// 32, 64, 128 KiB, 1 MiB, the order of `opsim measure iops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_sizes: Option<Vec<ByteSize>>,
    /// IOPS test: read/write mixes as "R/W" percentages, in the order run (default: "0/100",
    /// "5/95", "35/65", "50/50", "65/35", "95/5", "100/0", the order of `opsim measure iops`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mixes: Option<Vec<String>>,
}

fn is_zero(f: &Fraction) -> bool {
    f.0 == 0.0
}

/// One phase of a composed run.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    /// Shown in the rounds (default: "phase-N").
    pub name: Option<String>,
    pub workload: WorkloadConfig,
    /// Host writes in this phase, in multiples of the user capacity ...
    pub drive_writes: Option<f64>,
    /// ... or host commands (reads, writes and trims).
    pub ios: Option<u64>,
    /// Part of the measurement window (the measured phases must be the last ones; when no
    /// phase says so, the last phase is measured).
    #[serde(default)]
    pub measure: bool,
}

fn one() -> Fraction {
    Fraction(1.0)
}

impl Default for WorkloadConfig {
    fn default() -> Self {
        WorkloadConfig {
            kind: WorkloadType::Uniform,
            span: one(),
            request_size: None,
            align: None,
            read_fraction: Fraction(0.0),
            hot_fraction: None,
            hot_write_fraction: None,
            zipf_exponent: None,
            trim_fraction: Fraction(0.0),
            stride: None,
            sequential_streams: None,
            sequential_chunk: None,
            random_chunk: None,
            sequential_request_size: None,
            zone_size: None,
            active_zones: None,
            trace: None,
            pts: None,
            job: None,
            section: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Precondition {
    /// Start from fresh-out-of-box (all blocks erased, nothing mapped).
    None,
    /// Write the workload's span once sequentially (the usual way to fill a drive).
    #[default]
    Fill,
    /// Place valid pages per the mean-field steady state (uniform random writes only).
    Analytic,
}

/// The most threads `run.threads` asks for.
pub const MAX_THREADS: u32 = 1024;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default)]
    pub precondition: Precondition,
    /// Host writes before the measurement window, in multiples of the user capacity.
    #[serde(default = "default_warmup")]
    pub warmup_drive_writes: f64,
    /// Host writes in the measurement window, in multiples of the user capacity.
    #[serde(default = "default_measure")]
    pub measure_drive_writes: f64,
    /// Host writes per round, in multiples of the user capacity.
    #[serde(default = "default_round")]
    pub round_drive_writes: f64,
    /// snia-pts: the most rounds of the random-write stage.
    #[serde(default = "default_max_rounds")]
    pub max_rounds: u32,
    /// Refuse to build a model larger than this (default: 90% of available memory).
    pub memory_limit: Option<ByteSize>,
    /// Keep a token per physical page so reads can be checked against writes (tests).
    #[serde(default)]
    pub track_data: bool,
    /// How the commands of `[[namespace]]` tenants are interleaved: by their `share` of
    /// commands ("iops") or of bytes ("bytes"), or by trace timestamps ("timestamps").
    #[serde(default, skip_serializing_if = "is_iops")]
    pub interleave: placement::Interleave,
    /// Preconditioning fill: the share of the span written (the first part, sequentially;
    /// the rest never written), as MQSim's initial occupancy.  Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precondition_fill: Option<Fraction>,
    /// Threads of the functional model of a drive of independent GC pools (default 1;
    /// docs/parallel.md).  A result does not depend on it: it is not echoed (results
    /// report the threads used in `perf.parallel`).
    #[serde(default, skip_serializing)]
    pub threads: Option<u32>,
}

fn is_iops(i: &placement::Interleave) -> bool {
    *i == placement::Interleave::Iops
}

fn default_seed() -> u64 {
    1
}
fn default_warmup() -> f64 {
    2.0
}
fn default_measure() -> f64 {
    2.0
}
fn default_round() -> f64 {
    0.25
}
fn default_max_rounds() -> u32 {
    25
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            seed: default_seed(),
            precondition: Precondition::default(),
            warmup_drive_writes: default_warmup(),
            measure_drive_writes: default_measure(),
            round_drive_writes: default_round(),
            max_rounds: default_max_rounds(),
            memory_limit: None,
            track_data: false,
            interleave: placement::Interleave::Iops,
            precondition_fill: None,
            threads: None,
        }
    }
}

/// The largest `ftl.d`: d-choices samples this many blocks per collection.
pub const MAX_D: u32 = 1024;

/// The most entries of a list option (`workload.pts.block_sizes`, `workload.pts.mixes`).
pub const MAX_LIST: usize = 64;

impl Config {
    /// The config as results and descriptions echo it: with FTL blocks as the GC unit,
    /// `drive.pages_per_block` written out (its default included), as before superblocks.
    pub(crate) fn echoed(mut self) -> Config {
        if self.ftl.gc_unit == gc::GcUnitKind::Block {
            self.drive.pages_per_block.get_or_insert(DEFAULT_PAGES_PER_BLOCK);
        }
        self
    }

    /// A config from TOML text; a drive file it names (`preset = "./drive.toml"`) is
    /// relative to the current directory.
    pub fn from_toml_str(text: &str) -> Result<Config> {
        Self::from_toml_str_in(text, None)
    }

    /// A config from TOML text whose relative drive-file path (`preset = "./drive.toml"`) is
    /// relative to `base` (the config file's directory; None: the current directory).
    pub fn from_toml_str_in(text: &str, base: Option<&std::path::Path>) -> Result<Config> {
        let table = text.parse::<toml::Table>().map_err(|e| toml_error(None, &e, text))?;
        check_nesting(table.iter().map(|(k, v)| (format!(".{k}"), v)).collect())?;
        let cfg = if !table.contains_key("preset") {
            // no preset: deserialise the text itself so errors keep their line numbers
            serde_path_to_error::deserialize(toml::Deserializer::new(text))
                .map_err(|e| toml_error(Some(e.path()), e.inner(), text))?
        } else {
            Self::from_table(preset::apply(table, base)?)?
        };
        cfg.check_limits()?;
        Ok(cfg)
    }

    /// A config from JSON text (the Python binding's form of a dict).  Errors name the key
    /// path (`drive.op`), never a position in the JSON text.  A drive file is relative to the
    /// current directory.
    pub fn from_json_str(text: &str) -> Result<Config> {
        Self::from_json_str_in(text, None)
    }

    /// [`Config::from_json_str`] with a relative drive-file path relative to `base`.
    pub fn from_json_str_in(text: &str, base: Option<&std::path::Path>) -> Result<Config> {
        let mut de = serde_json::Deserializer::from_str(text);
        let value: serde_json::Value =
            serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(Some(e.path()), e.inner(), text))?;
        de.end().map_err(|e| json_error(None, &e, text))?;
        check_nesting(value.children())?;
        let cfg = if value.get("preset").is_some() {
            // TOML has no null: a key set to null is a key not given (as without a preset)
            let value = toml_ready(value);
            let table: toml::Table =
                serde_path_to_error::deserialize(value).map_err(|e| json_error(Some(e.path()), e.inner(), text))?;
            Self::from_table(preset::apply(table, base)?)?
        } else {
            serde_path_to_error::deserialize::<_, Config>(value)
                .map_err(|e| json_error(Some(e.path()), e.inner(), text))?
        };
        cfg.check_limits()?;
        Ok(cfg)
    }

    /// Bounds on the integers that set how much work or memory a run takes, checked when the
    /// config is read (before anything is built): a value past them would hang or exhaust
    /// memory rather than fail.
    pub fn check_limits(&self) -> Result<()> {
        if let Some(d) = self.ftl.d {
            if d > MAX_D {
                return Err(Error::config(
                    "ftl.d",
                    format!("{d} is too large; d-choices samples at most {MAX_D} blocks"),
                ));
            }
        }
        if self.namespaces.len() > placement::MAX_NAMESPACES {
            return Err(Error::config(
                "namespace",
                format!("{} namespaces; at most {}", self.namespaces.len(), placement::MAX_NAMESPACES),
            ));
        }
        let workloads = std::iter::once(("workload".to_owned(), &self.workload))
            .chain(self.phases.iter().enumerate().map(|(i, p)| (format!("phase[{i}].workload"), &p.workload)))
            .chain(self.namespaces.iter().enumerate().map(|(i, n)| (format!("namespace[{i}].workload"), &n.workload)));
        for (key, w) in workloads {
            if let Some(pts) = &w.pts {
                let lens = [
                    ("block_sizes", pts.block_sizes.as_ref().map(Vec::len)),
                    ("mixes", pts.mixes.as_ref().map(Vec::len)),
                ];
                for (name, n) in lens {
                    if let Some(n) = n.filter(|&n| n > MAX_LIST) {
                        return Err(Error::config(
                            &format!("{key}.pts.{name}"),
                            format!("{n} entries; at most {MAX_LIST}"),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Make relative trace and fio job paths relative to `base` (the config file's directory).
    pub fn resolve_paths(&mut self, base: &std::path::Path) {
        let fix = |w: &mut WorkloadConfig| {
            if let Some(t) = w.trace.as_mut() {
                let p = std::path::Path::new(&t.path);
                if p.is_relative() {
                    t.path = base.join(p).to_string_lossy().into_owned();
                }
            }
            if let Some(j) = w.job.as_mut() {
                let p = std::path::Path::new(j.as_str());
                if p.is_relative() {
                    *j = base.join(p).to_string_lossy().into_owned();
                }
            }
        };
        fix(&mut self.workload);
        for p in &mut self.phases {
            fix(&mut p.workload);
        }
        for n in &mut self.namespaces {
            fix(&mut n.workload);
        }
    }

    fn from_table(table: toml::Table) -> Result<Config> {
        serde_path_to_error::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
            let msg = e.inner().message();
            let msg = date_message(msg, date_at(&table, e.path())).unwrap_or_else(|| msg.to_owned());
            config_error(Some(e.path()), &msg, "")
        })
    }
}

pub fn check_fraction(key: &str, v: f64, lo: f64, hi: f64, lo_incl: bool, hi_incl: bool) -> Result<f64> {
    let ok_lo = if lo_incl { v >= lo } else { v > lo };
    let ok_hi = if hi_incl { v <= hi } else { v < hi };
    if !(ok_lo && ok_hi && v.is_finite()) {
        let l = if lo_incl { "[" } else { "(" };
        let h = if hi_incl { "]" } else { ")" };
        return Err(Error::config(key, format!("{v} is out of range; expected a value in {l}{lo}, {hi}{h}")));
    }
    Ok(v)
}
