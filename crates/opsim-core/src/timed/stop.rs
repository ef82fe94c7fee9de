//! Where a driving loop stops: the bound the event loop (and the functional run's hot loop)
//! checks after every command.

/// Where a hot loop stops: absolute host write bytes and command counts.
#[derive(Clone, Copy, Debug)]
pub struct Stop {
    pub write_bytes: u64,
    pub cmds: u64,
}
