//! One typed error for the whole core.  The Python binding maps each [`ErrorKind`] to a
//! class of `opsim.errors`, and the CLI maps input errors to exit code 2.

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A configuration key is unknown, missing or has an invalid value ([`Error::schema`]
    /// tells a config that does not fit the schema from a value out of range).
    Config,
    /// Capacity, OP, geometry or memory: the drive cannot be built as asked.
    Capacity,
    /// Workload parameters are invalid.
    Workload,
    /// A block trace cannot be read.
    Trace,
    /// A command the simulated device refuses (ABORT / IDNF), e.g. an LBA past the max address.
    Device,
    /// A bug: an FTL invariant was violated.
    Internal,
    /// The caller's [`Interrupt`](crate::interrupt::Interrupt) hook asked to stop (Ctrl-C).
    Interrupted,
}

/// How a [`ErrorKind::Config`] error does not fit the config schema, so that callers (the
/// sweep's grid checks) tell these apart without reading messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schema {
    /// A value of the wrong type or spelling, a missing key, an unknown preset.
    Value,
    /// A key the schema does not have.
    UnknownKey,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub kind: ErrorKind,
    /// For config errors: how the config does not fit the schema (None: it fits, but a value
    /// is out of range or contradicts another).
    pub schema: Option<Schema>,
    /// The config key (`drive.op`) or location (`trace.csv:12`) the error is about.
    pub key: Option<String>,
    pub message: String,
}

impl Error {
    pub fn new(kind: ErrorKind, key: Option<&str>, message: impl Into<String>) -> Self {
        Error { kind, schema: None, key: key.map(str::to_owned), message: message.into() }
    }
    pub fn config(key: &str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Config, Some(key), message)
    }
    /// A config error of the schema: `how` the config does not fit it.
    pub fn schema(key: &str, how: Schema, message: impl Into<String>) -> Self {
        Error { schema: Some(how), ..Self::config(key, message) }
    }
    pub fn capacity(key: &str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Capacity, Some(key), message)
    }
    pub fn workload(key: &str, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Workload, Some(key), message)
    }
    pub fn device(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Device, None, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, None, message)
    }
    /// The run was stopped by the caller's interrupt hook.
    pub fn interrupted() -> Self {
        Self::new(ErrorKind::Interrupted, None, "interrupted")
    }
    /// True for errors caused by the user's input (CLI exit code 2).
    pub fn is_input(&self) -> bool {
        !matches!(self.kind, ErrorKind::Internal | ErrorKind::Interrupted)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(k) => write!(f, "{}: {}", k, self.message),
            None => write!(f, "{}", self.message),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
