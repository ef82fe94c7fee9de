//! The simulation config (TOML or JSON; see `docs/config.md`) and its validation.
//!
//! Parsing rejects unknown keys; [`Config::resolve`] checks every value and names the key
//! (`drive.op`, `workload.hot_fraction`...) in its error.

use crate::error::{Error, Result};
use crate::units::{ByteSize, Fraction};
use serde::{Deserialize, Serialize};

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
    /// The timed model (IOPS, latency over time); absent: functional simulation only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<crate::timed::TimingConfig>,
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
    #[serde(default = "default_ppb")]
    pub pages_per_block: u32,
    #[serde(default = "default_sector")]
    pub sector_size: u32,
}

fn default_page_size() -> ByteSize {
    ByteSize(4096)
}
fn default_ppb() -> u32 {
    256
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
    /// Candidates sampled by d-choices.
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
    #[serde(default = "yes")]
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
    #[serde(default = "yes")]
    pub idle_fold: bool,
    #[serde(default = "default_idle_ms")]
    pub idle_ms: f64,
}

fn yes() -> bool {
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
    pub zipf_exponent: Option<Fraction>,
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
    /// trace: the file and how to replay it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<crate::trace::TraceConfig>,
    /// snia-pts: which SNIA PTS test to run (`[workload.pts]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pts: Option<PtsConfig>,
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
            trace: None,
            pts: None,
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
        }
    }
}

fn clean_toml_error(e: &toml::de::Error, text: &str) -> (Option<String>, String) {
    // toml's message already shows the line and the offending key; keep it on few lines.
    let msg = e.message().to_string();
    let key = Some(error_key(&msg)).filter(|k| k != "config");
    let loc = e
        .span()
        .map(|s| {
            let before = &text[..s.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map(|i| i + 1).unwrap_or(0) + 1;
            format!(" (line {line}, column {col})")
        })
        .unwrap_or_default();
    (key, format!("{msg}{loc}"))
}

impl Config {
    pub fn from_toml_str(text: &str) -> Result<Config> {
        let table = text.parse::<toml::Table>().map_err(|e| {
            let (key, msg) = clean_toml_error(&e, text);
            Error::config(key.as_deref().unwrap_or("config"), format!("invalid config: {}", msg.trim()))
        })?;
        if !table.contains_key("preset") {
            // no preset: deserialise the text itself so errors keep their line numbers
            return toml::from_str::<Config>(text).map_err(|e| {
                let (key, msg) = clean_toml_error(&e, text);
                let key = key.unwrap_or_else(|| "config".into());
                Error::config(&key, format!("invalid config: {}", msg.trim()))
            });
        }
        Self::from_table(crate::presets::apply(table)?)
    }

    pub fn from_json_str(text: &str) -> Result<Config> {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| Error::config("config", format!("invalid config: {e}")))?;
        if value.get("preset").is_some() {
            let table: toml::Table = serde_json::from_value(value)
                .map_err(|e| Error::config("config", format!("invalid config: {e}")))?;
            return Self::from_table(crate::presets::apply(table)?);
        }
        serde_json::from_value::<Config>(value).map_err(|e| {
            let msg = e.to_string();
            Error::config(&error_key(&msg), format!("invalid config: {msg}"))
        })
    }

    /// Make relative trace paths relative to `base` (the config file's directory).
    pub fn resolve_paths(&mut self, base: &std::path::Path) {
        let fix = |w: &mut WorkloadConfig| {
            if let Some(t) = w.trace.as_mut() {
                let p = std::path::Path::new(&t.path);
                if p.is_relative() {
                    t.path = base.join(p).to_string_lossy().into_owned();
                }
            }
        };
        fix(&mut self.workload);
        for p in &mut self.phases {
            fix(&mut p.workload);
        }
    }

    fn from_table(table: toml::Table) -> Result<Config> {
        toml::Value::Table(table).try_into::<Config>().map_err(|e| {
            let msg = e.to_string();
            Error::config(&error_key(&msg), format!("invalid config: {}", msg.trim()))
        })
    }
}

/// The key an unknown-/missing-field message names, else "config".
fn error_key(msg: &str) -> String {
    msg.split('`')
        .nth(1)
        .filter(|_| msg.contains("unknown field") || msg.contains("missing field"))
        .unwrap_or("config")
        .to_owned()
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
