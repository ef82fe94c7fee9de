//! `[workload.trace]`: the settings of a block-trace replay (the file, its format, the
//! device kept, remapping, repetition and timing).  The reader that uses them is in
//! the `trace` module.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum TraceFormat {
    /// Detect fio iolog, blkparse, MSR and SPC from the first lines.
    #[default]
    Auto,
    Msr,
    Blkparse,
    FioIolog,
    Disksim,
    Mqsim,
    Spc,
    Columns,
}

impl TraceFormat {
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Auto => "auto",
            TraceFormat::Msr => "msr",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::FioIolog => "fio-iolog",
            TraceFormat::Disksim => "disksim",
            TraceFormat::Mqsim => "mqsim",
            TraceFormat::Spc => "spc",
            TraceFormat::Columns => "columns",
        }
    }
}

/// What to do with a request past the end of the simulated drive.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Remap {
    /// Stop with an error naming the line.
    #[default]
    Error,
    /// Offsets modulo the drive's size.
    Wrap,
    /// Offsets scaled by drive size / trace span (a pre-pass finds the span).
    Scale,
    /// As `Scale`, and a request that starts on a 4 KiB boundary in the trace still does
    /// after scaling (rounded down to one): scaled 4 KiB writes stay whole mapping units
    /// instead of straddling two (`opsim advise --trace`).
    #[serde(rename = "scale-aligned")]
    ScaleAligned,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum Timing {
    /// As fast as possible (closed loop at the configured queue depth).
    #[default]
    Afap,
    /// At the trace's timestamps (divided by `speed`), open loop.
    Trace,
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TraceConfig {
    pub path: String,
    /// Polled once per line by the reader (Ctrl-C through the binding); not a setting.
    #[serde(skip)]
    pub interrupt: crate::interrupt::Interrupt,
    #[serde(default)]
    pub format: TraceFormat,
    /// Keep only this device / volume (MSR disk number or host_disk, blkparse maj,min, fio
    /// file name, DiskSim/MQSim device number, SPC ASU, the `device` column).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default)]
    pub remap: Remap,
    /// Start again from the beginning when the trace ends (else the run ends there).
    #[serde(default)]
    pub repeat: bool,
    #[serde(default)]
    pub timing: Timing,
    /// Trace-time replay speed-up (2 = twice as fast).
    #[serde(default = "one")]
    pub speed: f64,
    /// Skip and count malformed lines instead of stopping at the first.
    #[serde(default)]
    pub skip_bad: bool,
    /// `columns` format: `time=0:ms,op=3,offset=4:bytes,size=5:bytes,device=2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub columns: Option<String>,
    /// `columns` format: field delimiter (default: comma if the line has one, else whitespace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    /// Lines to skip at the top (headers).
    #[serde(default)]
    pub skip_lines: u64,
    /// `blkparse`: the action replayed (Q, G, I, D or C; default D, issued to the device).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

impl TraceConfig {
    pub fn new(path: &str) -> Self {
        TraceConfig {
            path: path.to_owned(),
            interrupt: Default::default(),
            format: TraceFormat::Auto,
            device: None,
            remap: Remap::Error,
            repeat: false,
            timing: Timing::Afap,
            speed: 1.0,
            skip_bad: false,
            columns: None,
            delimiter: None,
            skip_lines: 0,
            action: None,
        }
    }
}
