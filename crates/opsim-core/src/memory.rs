//! What memory a model may take: the process's own limits (RLIMIT_AS / RLIMIT_DATA, as set
//! by `ulimit -v` / `ulimit -d`), its cgroup's `memory.max`, and the machine's MemAvailable;
//! and fallible allocation of the big tables, so that running out of memory is an error,
//! never an abort.

use crate::error::{Error, Result};
use crate::interrupt::Interrupt;
use crate::units::format_size;

/// A ceiling on the memory a model may allocate, and where it comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Limit {
    pub bytes: u64,
    /// What sets it, for a message ("90% of the available memory (MemAvailable 3.2 GB)").
    pub source: String,
    /// How to raise it, for a message.
    pub raise: &'static str,
}

/// The share of a limit's headroom a model may take (the rest: the process, trace buffers,
/// the result).
const SHARE: f64 = 0.9;

fn share(headroom: u64) -> u64 {
    (headroom as f64 * SHARE) as u64
}

/// Memory the machine can give us: MemAvailable from /proc/meminfo, if readable.
pub fn available_memory() -> Option<u64> {
    meminfo_field(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemAvailable:")
}

/// A `Name:   1234 kB` field of /proc/meminfo or /proc/self/status, in bytes.
fn meminfo_field(text: &str, name: &str) -> Option<u64> {
    let rest = text.lines().find_map(|l| l.strip_prefix(name))?;
    let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
    kb.checked_mul(1024)
}

/// The soft limits on the address space and the data segment, if any (Linux).
#[cfg(target_os = "linux")]
fn rlimits() -> (Option<u64>, Option<u64>) {
    let get = |resource| {
        let mut r = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: getrlimit writes the struct we own.
        let rc = unsafe { libc::getrlimit(resource, &mut r) };
        (rc == 0 && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
    };
    (get(libc::RLIMIT_AS), get(libc::RLIMIT_DATA))
}

/// The hard limits of this process: the address-space and data-segment limits less what is
/// in use, and the cgroup's memory.max less its usage; the tightest, if any.
pub fn process_limit() -> Option<Limit> {
    let mut best: Option<Limit> = None;
    let mut consider = |limit: u64, used: u64, what: &str, raise: &'static str| {
        let headroom = limit.saturating_sub(used);
        let bytes = share(headroom);
        if !matches!(&best, Some(b) if b.bytes <= bytes) {
            best = Some(Limit {
                bytes,
                source: format!(
                    "90% of what {what} of {} leaves, {} being in use",
                    format_size(limit),
                    format_size(used)
                ),
                raise,
            });
        }
    };
    #[cfg(target_os = "linux")]
    {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let (as_limit, data_limit) = rlimits();
        if let Some(l) = as_limit {
            let used = meminfo_field(&status, "VmSize:").unwrap_or(0);
            consider(l, used, "the address-space limit (ulimit -v)", "raise the limit (ulimit -v)");
        }
        if let Some(l) = data_limit {
            let used = meminfo_field(&status, "VmData:").unwrap_or(0);
            consider(l, used, "the data-segment limit (ulimit -d)", "raise the limit (ulimit -d)");
        }
        if let Some((l, used)) = cgroup_limit() {
            consider(l, used, "the cgroup's memory limit (memory.max)", "raise the cgroup's memory.max");
        }
    }
    best
}

/// The tightest memory.max (and its usage) of this process's cgroup and its ancestors
/// (cgroup v2), or memory.limit_in_bytes (v1).
#[cfg(target_os = "linux")]
fn cgroup_limit() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let read = |p: &std::path::Path| -> Option<u64> { std::fs::read_to_string(p).ok()?.trim().parse().ok() };
    let mut best: Option<(u64, u64)> = None;
    let mut keep = |limit: u64, used: u64| {
        if !matches!(best, Some((l, u)) if l.saturating_sub(u) <= limit.saturating_sub(used)) {
            best = Some((limit, used));
        }
    };
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            // v2: the limit may be set on any ancestor
            let mut dir = std::path::Path::new("/sys/fs/cgroup").join(path);
            loop {
                if let Some(l) = read(&dir.join("memory.max")) {
                    keep(l, read(&dir.join("memory.current")).unwrap_or(0));
                }
                if dir == std::path::Path::new("/sys/fs/cgroup") || !dir.pop() {
                    break;
                }
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            let dir = std::path::Path::new("/sys/fs/cgroup/memory").join(path);
            // v1 says "no limit" with a huge number
            if let Some(l) = read(&dir.join("memory.limit_in_bytes")).filter(|&l| l < 1 << 60) {
                keep(l, read(&dir.join("memory.usage_in_bytes")).unwrap_or(0));
            }
        }
    }
    best
}

/// A size for a message, also past 16 EiB.
pub fn describe(bytes: f64) -> String {
    if bytes >= u64::MAX as f64 {
        format!("more than {}", format_size(u64::MAX))
    } else {
        format_size(bytes as u64)
    }
}

/// A vector of `n` copies of `value`, or a capacity error when the allocation fails (`what`
/// names the table).
pub fn try_vec<T: Copy>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = try_with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// Items written between two looks at the interrupt while a table is filled: a few MiB,
/// milliseconds of page faults.
pub const FILL_STEP: usize = 1 << 20;

/// [`try_vec`] for the tables of a drive of terabytes, whose filling writes gigabytes (tens
/// of seconds): filled [`FILL_STEP`] items at a time, asking `interrupt` between steps (an
/// `Interrupted` error when it says stop).  The same vector as [`try_vec`].
pub fn try_vec_polled<T: Copy>(n: usize, value: T, what: &str, interrupt: &mut Interrupt) -> Result<Vec<T>> {
    let mut v = try_with_capacity(n, what)?;
    fill_polled(&mut v, n, value, interrupt)?;
    Ok(v)
}

/// Fill `v` up to `n` items of `value` (it has room for them), [`FILL_STEP`] at a time,
/// asking `interrupt` before each step.
pub fn fill_polled<T: Copy>(v: &mut Vec<T>, n: usize, value: T, interrupt: &mut Interrupt) -> Result<()> {
    while v.len() < n {
        interrupt.poll_step()?;
        v.resize((v.len() + FILL_STEP).min(n), value);
    }
    Ok(())
}

/// An empty vector with room for `n` items, or a capacity error when the allocation fails.
pub fn try_with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        let bytes = n as f64 * std::mem::size_of::<T>() as f64;
        Error::capacity(
            "drive.user_capacity",
            format!(
                "out of memory: cannot allocate {} for the model's {what}; use a smaller user_capacity, a larger \
                 page_size (mapping unit), or a scale model (a smaller drive with the same OP and workload)",
                describe(bytes)
            ),
        )
    })?;
    Ok(v)
}

/// An empty queue with room for `n` items, or a capacity error when the allocation fails.
pub fn try_deque<T>(n: usize, what: &str) -> Result<std::collections::VecDeque<T>> {
    Ok(try_with_capacity(n, what)?.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_in_bytes() {
        let t = "MemTotal:       16000 kB\nMemAvailable:    2048 kB\n";
        assert_eq!(meminfo_field(t, "MemAvailable:"), Some(2048 * 1024));
        assert_eq!(meminfo_field(t, "VmSize:"), None);
    }

    #[test]
    fn an_impossible_allocation_is_an_error_not_an_abort() {
        let e = try_vec(usize::MAX / 8, 0u64, "test table").unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Capacity);
        assert!(e.message.contains("out of memory") && e.message.contains("test table"), "{e}");
        assert_eq!(try_vec(3, 7u32, "t").unwrap(), vec![7, 7, 7]);
    }

    #[test]
    fn a_polled_fill_is_the_same_table_and_stops_when_asked() {
        let n = 2 * FILL_STEP + 5;
        let v = try_vec_polled(n, 9u32, "t", &mut Interrupt::none()).unwrap();
        assert_eq!(v, try_vec(n, 9u32, "t").unwrap());
        // the hook says stop at its second call: one step was filled, then the error
        let calls = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let c = calls.clone();
        let mut intr = Interrupt::new(move || c.fetch_add(1, std::sync::atomic::Ordering::Relaxed) >= 1);
        let mut v: Vec<u8> = try_with_capacity(n, "t").unwrap();
        fill_polled(&mut v, FILL_STEP, 1, &mut intr).unwrap();
        std::thread::sleep(Interrupt::INTERVAL);
        let e = fill_polled(&mut v, n, 1, &mut intr).unwrap_err();
        assert_eq!(e.kind, crate::ErrorKind::Interrupted);
        assert_eq!(v.len(), FILL_STEP);
    }

    #[test]
    fn sizes_past_u64_are_described() {
        assert_eq!(describe(1e30), format!("more than {}", format_size(u64::MAX)));
        assert_eq!(describe(2.0 * (1u64 << 30) as f64), "2GiB");
    }
}
