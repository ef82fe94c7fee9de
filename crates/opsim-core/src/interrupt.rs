//! Cancellation of long runs: an [`Interrupt`] is a hook the core's loops poll, so that a
//! caller (the Python binding: Ctrl-C) can stop a run at a consistent point.
//!
//! The core has no globals and never looks at signals itself: the caller hands in a hook
//! (`Fn() -> bool`, true = stop) or a flag.  Polling costs one decrement and a branch per
//! operation; every [`Interrupt::EVERY`] operations the clock is read, and the hook is called
//! at most once per [`Interrupt::INTERVAL`].  A loop that sees the hook answer true returns
//! an [`ErrorKind::Interrupted`](crate::ErrorKind::Interrupted) error after finishing the
//! operation in hand; whole runs turn that into a result marked `interrupted`.

use crate::error::{Error, Result};
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

type Hook = Arc<dyn Fn() -> bool + Send + Sync>;

/// A cancellation hook with its polling state.  `Interrupt::default()` never stops.
#[derive(Clone, Default)]
pub struct Interrupt {
    hook: Option<Hook>,
    /// Operations until the next look at the clock.
    countdown: u32,
    /// No hook call before this instant.
    next_call: Option<Instant>,
}

impl Interrupt {
    /// Operations between two looks at the clock.
    pub const EVERY: u32 = 4096;
    /// Least time between two calls of the hook.
    pub const INTERVAL: Duration = Duration::from_millis(50);

    /// An interrupt that never stops anything.
    pub fn none() -> Self {
        Self::default()
    }

    /// Stop when `hook` returns true (it is called at most every [`Self::INTERVAL`]).
    pub fn new(hook: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        Interrupt { hook: Some(Arc::new(hook)), countdown: 0, next_call: None }
    }

    /// Stop once `flag` is set.
    pub fn from_flag(flag: Arc<AtomicBool>) -> Self {
        Self::new(move || flag.load(Ordering::Relaxed))
    }

    /// Whether a hook is set.
    pub fn is_set(&self) -> bool {
        self.hook.is_some()
    }

    /// Count one operation; now and then ask the hook.  `Err` (kind `Interrupted`) when it
    /// says stop.
    #[inline(always)]
    pub fn poll(&mut self) -> Result<()> {
        if self.countdown > 0 {
            self.countdown -= 1;
            Ok(())
        } else {
            self.slow_poll()
        }
    }

    /// [`Interrupt::poll`] for the hottest loops, with the count in the caller's local
    /// `left` (a register, not memory): start it at 1 (ask at once), call once per operation.
    #[inline(always)]
    pub fn tick(&mut self, left: &mut u32) -> Result<()> {
        *left -= 1;
        if *left == 0 {
            *left = Self::EVERY;
            self.ask()
        } else {
            Ok(())
        }
    }

    #[cold]
    #[inline(never)]
    fn slow_poll(&mut self) -> Result<()> {
        self.countdown = if self.hook.is_some() { Self::EVERY } else { u32::MAX };
        self.ask()
    }

    /// Read the clock; call the hook when [`Self::INTERVAL`] has passed since the last call.
    #[cold]
    #[inline(never)]
    fn ask(&mut self) -> Result<()> {
        let Some(hook) = &self.hook else {
            return Ok(());
        };
        let now = Instant::now();
        if self.next_call.is_some_and(|t| now < t) {
            return Ok(());
        }
        self.next_call = Some(now + Self::INTERVAL);
        if hook() {
            Err(Error::interrupted())
        } else {
            Ok(())
        }
    }

    /// One step of a loop whose every step is long (a few MiB of a table filled): read the
    /// clock now, and call the hook once [`Self::INTERVAL`] has passed since the last call.
    pub fn poll_step(&mut self) -> Result<()> {
        self.ask()
    }

    /// Ask the hook now (between rounds, before a long step), whatever the counters say.
    pub fn check(&mut self) -> Result<()> {
        self.countdown = 0;
        self.next_call = None;
        self.poll()
    }
}

impl fmt::Debug for Interrupt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.hook.is_some() { "Interrupt(hook)" } else { "Interrupt(none)" })
    }
}

/// Interrupts compare equal: they are not part of what a config or a result means.
impl PartialEq for Interrupt {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn none_never_stops() {
        let mut i = Interrupt::none();
        for _ in 0..100_000 {
            i.poll().unwrap();
        }
    }

    #[test]
    fn the_hook_is_asked_first_then_throttled() {
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let mut i = Interrupt::new(move || {
            c.fetch_add(1, Ordering::Relaxed);
            false
        });
        i.poll().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 1, "the first poll asks the hook");
        for _ in 0..3 * Interrupt::EVERY {
            i.poll().unwrap();
        }
        // within INTERVAL of the first call: the clock was read, the hook not called again
        assert_eq!(calls.load(Ordering::Relaxed), 1);
        i.check().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 2, "check asks at once");
    }

    #[test]
    fn tick_asks_at_once_then_every_n_operations() {
        let flag = Arc::new(AtomicBool::new(true));
        let mut i = Interrupt::from_flag(flag.clone());
        let mut left = 1;
        assert!(i.tick(&mut left).is_err(), "the first tick asks");
        flag.store(false, Ordering::Relaxed);
        i.check().unwrap();
        flag.store(true, Ordering::Relaxed);
        let mut left = 3;
        assert!(i.tick(&mut left).is_ok() && i.tick(&mut left).is_ok());
        // the third tick looks at the clock: within INTERVAL of the last call, no call
        assert!(i.tick(&mut left).is_ok());
        assert_eq!(left, Interrupt::EVERY);
    }

    #[test]
    fn poll_step_asks_at_once_then_once_per_interval() {
        let calls = Arc::new(AtomicU32::new(0));
        let c = calls.clone();
        let mut i = Interrupt::new(move || {
            c.fetch_add(1, Ordering::Relaxed);
            false
        });
        i.poll_step().unwrap();
        i.poll_step().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 1, "within INTERVAL: the hook is not called again");
        std::thread::sleep(Interrupt::INTERVAL);
        i.poll_step().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 2, "after INTERVAL, one step asks");
        Interrupt::none().poll_step().unwrap();
    }

    #[test]
    fn a_set_flag_stops_with_interrupted() {
        let flag = Arc::new(AtomicBool::new(false));
        let mut i = Interrupt::from_flag(flag.clone());
        i.poll().unwrap();
        flag.store(true, Ordering::Relaxed);
        let e = i.check().unwrap_err();
        assert_eq!(e.kind, ErrorKind::Interrupted);
        assert!(!e.is_input());
    }
}
