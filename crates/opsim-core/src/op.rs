//! One host command: what it does (`OpKind`) and where (`Op`); the vocabulary the trace
//! readers, the workload generators and the simulators share.  A leaf: it uses nothing
//! from the crate.

/// The most write streams or placement handles a command may name (the FTL tags each logical
/// page with its handle in one byte).
pub const MAX_HANDLES: u32 = 64;

/// What a host command does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Write,
    Read,
    Trim,
}

/// One host command, in units (whole pages, or 512-byte sectors when the workload is not
/// page-aligned), as a workload generator or a trace replay hands it to the simulator.
#[derive(Clone, Copy, Debug)]
pub struct Op {
    pub kind: OpKind,
    /// First unit (page or sector).
    pub start: u64,
    /// Units transferred; 0 marks the end of a finite stream (a trace without `repeat`).
    pub len: u32,
    pub stream: u32,
    /// Trace arrival time in ns from the start of the replay (0 for synthetic workloads).
    pub t_ns: u64,
}
