//! opsim-core: a fast, exact, page-mapped SSD FTL simulator for over-provisioning studies.
//!
//! Pure Rust, no Python.  Start with [`sim::Simulator`]:
//!
//! ```
//! let mut sim = opsim_core::Simulator::from_toml(r#"
//!     [drive]
//!     user_capacity = "64MiB"
//!     op = 0.28
//!     pages_per_block = 64
//!     [run]
//!     warmup_drive_writes = 1.0
//!     measure_drive_writes = 1.0
//! "#).unwrap();
//! let r = sim.run().unwrap();
//! assert!(r.waf > 1.0 && r.waf < 4.0);
//! ```

// `x % n == 0` is kept where it reads as arithmetic (`u64::is_multiple_of`, 1.87, is the
// workspace rust-version; a sweep to it is not worth the churn).
#![allow(clippy::manual_is_multiple_of)]

pub mod atomic;
pub mod config;
pub mod describe;
pub mod error;
pub mod ftl;
pub mod geometry;
pub mod interrupt;
pub mod meanfield;
pub mod memory;
pub mod op;
pub mod par;
pub mod presets;
pub mod quote;
pub mod resolve;
pub mod rng;
pub mod sim;
pub mod steady;
pub mod timed;
pub mod trace;
pub mod units;
pub mod userfile;
pub mod workload;

pub use config::Config;
pub use error::{Error, ErrorKind, Result};
pub use interrupt::Interrupt;
pub use sim::{SimResult, Simulator};
