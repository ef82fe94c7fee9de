//! Thin PyO3 bindings over opsim-core.
//!
//! Results cross the boundary as JSON text (serde on the Rust side, `json` on the Python
//! side): one schema, no duplicated field lists.  Every entry point releases the GIL while
//! the core runs, catches panics, and maps core errors to the classes of `opsim.errors`
//! (which is pure Python, so the pure-Python parts of opsim share the same hierarchy).
//!
//! Ctrl-C: the core's long loops poll an [`Interrupt`] whose hook briefly takes the GIL back
//! and runs Python's signal handlers; when one raises (KeyboardInterrupt), the core stops at
//! a consistent point and the exception is raised here (whole runs may instead return what
//! was done, marked `interrupted`).

use opsim_core::error::Schema;
use opsim_core::{Config, Error, ErrorKind, Interrupt, Simulator};
use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

fn py_error(py: Python<'_>, e: &Error) -> PyErr {
    let class = match e.kind {
        ErrorKind::Interrupted => return PyKeyboardInterrupt::new_err(e.to_string()),
        ErrorKind::Config => match e.schema {
            None => "ConfigError",
            Some(Schema::Value) => "SchemaError",
            Some(Schema::UnknownKey) => "UnknownKeyError",
        },
        ErrorKind::Capacity => "CapacityError",
        ErrorKind::Workload => "WorkloadError",
        ErrorKind::Trace => "TraceError",
        ErrorKind::Device => "DeviceError",
        ErrorKind::Internal => "InternalError",
    };
    let build = || -> PyResult<PyErr> {
        let module = py.import("opsim.errors")?;
        let cls = module.getattr(class)?;
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("key", e.key.clone())?;
        kwargs.set_item("detail", e.message.clone())?;
        let inst = cls.call((e.to_string(),), Some(&kwargs))?;
        Ok(PyErr::from_value(inst))
    };
    build().unwrap_or_else(|err| err)
}

/// Python's signals seen from the core: an [`Interrupt`] hook that runs the signal handlers
/// (taking the GIL for a moment) and keeps the exception one raised, to raise it once the
/// core has stopped.
#[derive(Clone, Default)]
struct Signals(Arc<Mutex<Option<PyErr>>>);

impl Signals {
    fn slot(&self) -> std::sync::MutexGuard<'_, Option<PyErr>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn interrupt(&self) -> Interrupt {
        self.interrupt_or(None)
    }

    /// [`Signals::interrupt`], also stopping once `stop.is_set()` (a `threading.Event` another
    /// thread sets: a run on a thread other than the main one never sees a signal).
    fn interrupt_or(&self, stop: Option<Py<PyAny>>) -> Interrupt {
        let me = self.clone();
        Interrupt::new(move || {
            Python::attach(|py| match py.check_signals() {
                Ok(()) => stop
                    .as_ref()
                    .is_some_and(|s| s.bind(py).call_method0("is_set").and_then(|v| v.is_truthy()).unwrap_or(false)),
                Err(e) => {
                    *me.slot() = Some(e);
                    true
                }
            })
        })
    }

    /// The exception that stopped the core (a plain KeyboardInterrupt when none was kept).
    fn take(&self) -> PyErr {
        self.slot().take().unwrap_or_else(|| PyKeyboardInterrupt::new_err("interrupted"))
    }
}

/// What a call into the core gave: its result, or the message of a panic.
type Caught<T> = Result<opsim_core::Result<T>, String>;

/// Run `f` without the GIL, catching panics.
fn detached<T: Send>(py: Python<'_>, f: impl FnOnce() -> opsim_core::Result<T> + Send) -> Caught<T> {
    py.detach(|| catch_unwind(AssertUnwindSafe(f))).map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into())
    })
}

/// A core result as Python sees it: `Interrupted` raises what the signal handler raised.
fn to_py<T>(py: Python<'_>, signals: &Signals, r: opsim_core::Result<T>) -> PyResult<T> {
    match r {
        Ok(v) => Ok(v),
        Err(e) if e.kind == ErrorKind::Interrupted => Err(signals.take()),
        Err(e) => Err(py_error(py, &e)),
    }
}

/// Run `f` without the GIL with an interrupt on Python's signals, turning errors and panics
/// into Python exceptions.
fn guarded<T: Send>(py: Python<'_>, f: impl FnOnce(Interrupt) -> opsim_core::Result<T> + Send) -> PyResult<T> {
    guarded_with(py, &Signals::default(), f)
}

/// [`guarded`] with the interrupt of `signals` (kept by the caller for later calls).
fn guarded_with<T: Send>(
    py: Python<'_>,
    signals: &Signals,
    f: impl FnOnce(Interrupt) -> opsim_core::Result<T> + Send,
) -> PyResult<T> {
    let intr = signals.interrupt();
    match detached(py, move || f(intr)) {
        Ok(r) => to_py(py, signals, r),
        Err(msg) => Err(py_error(py, &Error::internal(format!("the Rust core panicked: {msg}")))),
    }
}

/// A whole run's result as JSON.  Interrupted, the result is kept (marked `interrupted`)
/// when `keep_interrupted`, else the signal handler's exception is raised.
fn run_result(py: Python<'_>, signals: &Signals, r: opsim_core::SimResult, keep_interrupted: bool) -> PyResult<String> {
    if r.interrupted {
        let e = signals.take();
        if !(keep_interrupted && e.is_instance_of::<PyKeyboardInterrupt>(py)) {
            return Err(e);
        }
    }
    to_json(&r).map_err(|e| py_error(py, &e))
}

fn to_json<T: serde::Serialize>(v: &T) -> opsim_core::Result<String> {
    serde_json::to_string(v).map_err(|e| Error::internal(format!("cannot serialise result: {e}")))
}

/// A config from text; a relative drive-file path (`preset = "./drive.toml"`) is relative to
/// `base_dir` (the config file's directory), or to the current directory when None.
fn parse_config(text: &str, format: &str, base_dir: Option<&str>) -> opsim_core::Result<Config> {
    let base = base_dir.map(std::path::Path::new);
    match format {
        "toml" => Config::from_toml_str_in(text, base),
        "json" => Config::from_json_str_in(text, base),
        other => Err(Error::config("format", format!("unknown config format {other:?}"))),
    }
}

/// Run a whole simulation; returns the result as JSON text.  Relative trace and drive-file
/// paths are taken relative to `base_dir` when given (the config file's directory), else to
/// the current directory.  Ctrl-C stops the
/// run: with `keep_interrupted` the rounds done are returned (`"interrupted": true`), else
/// KeyboardInterrupt is raised.  `threads`: `run.threads` (docs/parallel.md).  `stop`: an
/// object whose `is_set()` stops the run as Ctrl-C does (a `threading.Event`, for a run on a
/// thread other than the main one).
#[pyfunction]
#[pyo3(signature = (config, format = "json", base_dir = None, keep_interrupted = false, threads = None, stop = None))]
fn simulate(
    py: Python<'_>,
    config: String,
    format: &str,
    base_dir: Option<String>,
    keep_interrupted: bool,
    threads: Option<u32>,
    stop: Option<Py<PyAny>>,
) -> PyResult<String> {
    let format = format.to_owned();
    let signals = Signals::default();
    let intr = signals.interrupt_or(stop);
    let r = detached(py, move || {
        let mut cfg = parse_config(&config, &format, base_dir.as_deref())?;
        if threads.is_some() {
            cfg.run.threads = threads;
        }
        if let Some(b) = base_dir {
            cfg.resolve_paths(std::path::Path::new(&b));
        }
        let mut sim = Simulator::new_interruptible(cfg, intr)?;
        sim.run()
    })
    .map_err(|msg| py_error(py, &Error::internal(format!("the Rust core panicked: {msg}"))))?;
    let r = to_py(py, &signals, r)?;
    run_result(py, &signals, r, keep_interrupted)
}

/// Validate a config and describe the drive it builds without building its model: the
/// config resolved, geometry, OP in every basis, SLC cache, timing and cost model; JSON
/// text.  `model_limits`: refuse what the simulator cannot model (memory, 32-bit tables);
/// `users`: also the OP in every basis at each of these user capacities (bytes), `levels`;
/// `scale_blocks`: also each level's `scale_model` (and the drive's own, `scale_model`): a drive
/// of that many blocks giving GC the same OP (`Description::scale_model`);
/// `base_dir`: what a relative drive-file path is relative to (default: the current directory);
/// `scale`: also `scaled`, the scale model that many times smaller (`Description::scaled`, the
/// core's scale rule), of a full-size drive of `scale_user` user bytes (default its own).
#[pyfunction]
#[pyo3(signature = (config, format = "json", model_limits = true, users = None, base_dir = None, scale_blocks = None, scale = None, scale_user = None))]
#[allow(clippy::too_many_arguments)]
fn describe(
    py: Python<'_>,
    config: String,
    format: &str,
    model_limits: bool,
    users: Option<Vec<u64>>,
    base_dir: Option<String>,
    scale_blocks: Option<u32>,
    scale: Option<u64>,
    scale_user: Option<u64>,
) -> PyResult<String> {
    let format = format.to_owned();
    guarded(py, move |_| {
        let d = opsim_core::describe::describe(parse_config(&config, &format, base_dir.as_deref())?, model_limits)?;
        let mut v = json_value(&d)?;
        if let Some(k) = scale {
            v["scaled"] = json_value(&d.scaled(k, scale_user)?)?;
        }
        let scale = |op: &opsim_core::describe::OpBases| -> opsim_core::Result<serde_json::Value> {
            match scale_blocks {
                Some(b) => json_value(&d.scale_model(b, op.seen_by_gc)?),
                None => Ok(serde_json::Value::Null),
            }
        };
        if scale_blocks.is_some() {
            v["scale_model"] = scale(&d.op)?;
        }
        if let Some(us) = users {
            let mut levels = Vec::with_capacity(us.len());
            for &u in &us {
                let op = d.op_at(u)?;
                let mut level = json_value(&op)?;
                if scale_blocks.is_some() {
                    level["scale_model"] = scale(&op)?;
                }
                levels.push(level);
            }
            v["levels"] = serde_json::Value::Array(levels);
        }
        to_json(&v)
    })
}

fn json_value<T: serde::Serialize>(x: &T) -> opsim_core::Result<serde_json::Value> {
    serde_json::to_value(x).map_err(|e| Error::internal(format!("cannot serialise result: {e}")))
}

fn from_json<T: serde::de::DeserializeOwned>(key: &str, text: &str) -> opsim_core::Result<T> {
    opsim_core::config::from_json_doc(text, key)
}

/// The timed model's time per IO on each resource for a workload mix (`mix`: JSON
/// `{write_fraction, units_per_io, bytes_per_io}`) at garbage-collection WAF `waf_gc`, and
/// the bottleneck IOPS bound; `model` is a description's `cost_model` (JSON).  JSON text.
#[pyfunction]
fn costs(py: Python<'_>, model: String, mix: String, waf_gc: f64) -> PyResult<String> {
    guarded(py, move |_| {
        let m: opsim_core::timed::costs::CostModel = from_json("cost_model", &model)?;
        let mix: opsim_core::timed::costs::Mix = from_json("mix", &mix)?;
        to_json(&opsim_core::timed::costs::costs(&m, &mix, waf_gc)?)
    })
}

/// The core's size parser (`480GB`, `4GiB`, `1.5TB`, bytes); errors name `key`.
#[pyfunction]
#[pyo3(signature = (text, key = "size"))]
fn parse_size(py: Python<'_>, text: String, key: &str) -> PyResult<u64> {
    let key = key.to_owned();
    guarded(py, move |_| opsim_core::units::parse_size(&text).map_err(|e| Error::config(&key, e)))
}

/// The core's fraction parser (`0.07`, `"7%"`); errors name `key`.
#[pyfunction]
#[pyo3(signature = (text, key = "fraction"))]
fn parse_fraction(py: Python<'_>, text: String, key: &str) -> PyResult<f64> {
    let key = key.to_owned();
    guarded(py, move |_| opsim_core::units::parse_fraction(&text).map_err(|e| Error::config(&key, e)))
}

/// The SNIA PTS steady-state rule applied to a series; JSON text.
#[pyfunction]
#[pyo3(signature = (values, eligible = None, window = 5, max_range = 0.20, max_excursion = 0.10))]
fn steady_state(
    py: Python<'_>,
    values: Vec<f64>,
    eligible: Option<Vec<bool>>,
    window: usize,
    max_range: f64,
    max_excursion: f64,
) -> PyResult<String> {
    if let Some(e) = &eligible {
        if e.len() != values.len() {
            return Err(py_error(py, &Error::config("eligible", "must have one entry per value")));
        }
    }
    if window < 2 {
        return Err(py_error(py, &Error::config("window", "must be at least 2")));
    }
    guarded(py, move |_| {
        let rule = opsim_core::steady::SteadyRule { window, max_range, max_excursion };
        to_json(&opsim_core::steady::detect(&values, eligible.as_deref(), rule))
    })
}

/// Every drive preset (name, title, family, sources, settings) as JSON text.
#[pyfunction]
fn presets(py: Python<'_>) -> PyResult<String> {
    guarded(py, |_| {
        let mut out = Vec::new();
        for name in opsim_core::presets::names() {
            let mut t = opsim_core::presets::table(name)?;
            let meta = t.remove("preset");
            out.push(serde_json::json!({"name": name, "meta": meta, "settings": t}));
        }
        to_json(&out)
    })
}

/// One drive file (a TOML file in the presets' schema) as JSON text, in the shape of one entry
/// of `presets()` (name, meta, settings) plus `path`, the file's absolute path.  A relative
/// `path` is relative to `base_dir` when given, else to the current directory.
#[pyfunction]
#[pyo3(signature = (path, base_dir = None))]
fn drive_file(py: Python<'_>, path: String, base_dir: Option<String>) -> PyResult<String> {
    guarded(py, move |_| {
        let f = opsim_core::config::drive_file(&path, base_dir.as_deref().map(std::path::Path::new))?;
        let path = f.path.to_string_lossy();
        to_json(&serde_json::json!({"name": f.name, "path": path, "meta": f.meta, "settings": f.settings}))
    })
}

/// A fio job file's job as opsim runs it (`[workload] type = "fio"`), as JSON text: the
/// core's reading of the file (`opsim advise --fio` maps it to the advisor's workload).
#[pyfunction]
#[pyo3(signature = (path, section = None))]
fn fio_job(py: Python<'_>, path: String, section: Option<String>) -> PyResult<String> {
    guarded(py, move |_| to_json(&opsim_core::workload::fio::summary(&path, section.as_deref())?))
}

/// Writes per block (of the job's smallest write size) of `writes` write commands of a fio
/// job generated by the core on a drive of `drive_bytes`: its access histogram.
#[pyfunction]
#[pyo3(signature = (path, drive_bytes, writes, section = None, seed = 1))]
fn fio_write_counts(
    py: Python<'_>,
    path: String,
    drive_bytes: u64,
    writes: u64,
    section: Option<String>,
    seed: u64,
) -> PyResult<Vec<u64>> {
    guarded(py, move |_| opsim_core::workload::fio::write_counts(&path, section.as_deref(), drive_bytes, writes, seed))
}

/// A drive you can send individual commands to.  After a panic in the core its state is
/// unknown: the drive is dropped and every later call raises InternalError.
#[pyclass(name = "Simulator", module = "opsim._core")]
struct PySimulator {
    inner: Option<Simulator>,
    signals: Signals,
}

const UNUSABLE: &str = "the simulator is unusable after an internal error (a panic in the Rust core left it in an unknown state); create a new Simulator";

impl PySimulator {
    fn sim(&mut self) -> PyResult<&mut Simulator> {
        match self.inner.as_mut() {
            Some(s) => Ok(s),
            None => Python::attach(|py| Err(py_error(py, &Error::internal(UNUSABLE)))),
        }
    }

    /// Run `f` on the drive without the GIL; a panic drops the drive.
    fn call<T: Send>(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&mut Simulator) -> opsim_core::Result<T> + Send,
    ) -> PyResult<T> {
        let signals = self.signals.clone();
        let s = self.sim()?;
        match detached(py, move || f(s)) {
            Ok(r) => to_py(py, &signals, r),
            Err(msg) => {
                self.inner = None;
                Err(py_error(py, &Error::internal(format!("the Rust core panicked: {msg}; {UNUSABLE}"))))
            }
        }
    }
}

#[pymethods]
impl PySimulator {
    /// A drive from a config; a relative drive-file path is relative to `base_dir` when given
    /// (the config file's directory), else to the current directory.
    #[new]
    #[pyo3(signature = (config, format = "json", base_dir = None))]
    fn new(py: Python<'_>, config: String, format: &str, base_dir: Option<String>) -> PyResult<Self> {
        let format = format.to_owned();
        let signals = Signals::default();
        let sim = guarded_with(py, &signals, move |intr| {
            Simulator::new_interruptible(parse_config(&config, &format, base_dir.as_deref())?, intr)
        })?;
        Ok(PySimulator { inner: Some(sim), signals })
    }

    #[pyo3(signature = (lba, sectors, stream = 0))]
    fn write(&mut self, py: Python<'_>, lba: u64, sectors: u64, stream: u32) -> PyResult<()> {
        self.call(py, |s| s.write(lba, sectors, stream))
    }
    fn read(&mut self, py: Python<'_>, lba: u64, sectors: u64) -> PyResult<()> {
        self.call(py, |s| s.read(lba, sectors))
    }
    fn trim(&mut self, py: Python<'_>, lba: u64, sectors: u64) -> PyResult<()> {
        self.call(py, |s| s.trim(lba, sectors))
    }
    fn read_token(&mut self, py: Python<'_>, lba: u64) -> PyResult<Option<u64>> {
        self.call(py, |s| s.read_token(lba))
    }
    fn security_erase(&mut self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |s| {
            s.security_erase();
            Ok(())
        })
    }
    #[pyo3(signature = (sectors, volatile = false))]
    fn set_max_address(&mut self, py: Python<'_>, sectors: u64, volatile: bool) -> PyResult<()> {
        self.call(py, |s| s.set_max_address(sectors, volatile))
    }
    fn power_cycle(&mut self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |s| {
            s.power_cycle();
            Ok(())
        })
    }
    fn check(&mut self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |s| s.check())
    }
    /// Counters as JSON text.
    fn counters(&mut self, py: Python<'_>) -> PyResult<String> {
        let s = self.sim()?;
        to_json(&s.counters()).map_err(|e| py_error(py, &e))
    }
    /// The threads the drive runs on and why (`perf.parallel`, docs/parallel.md) as JSON text.
    fn parallelism(&mut self, py: Python<'_>) -> PyResult<String> {
        let s = self.sim()?;
        to_json(s.parallelism()).map_err(|e| py_error(py, &e))
    }
    #[getter]
    fn max_address(&mut self) -> PyResult<u64> {
        Ok(self.sim()?.max_address_sectors())
    }
    #[getter]
    fn free_blocks(&mut self) -> PyResult<u32> {
        Ok(self.sim()?.free_blocks())
    }
    #[getter]
    fn mapped_pages(&mut self) -> PyResult<u64> {
        Ok(self.sim()?.mapped_pages())
    }
    /// Describe the drive (geometry and OP) as JSON text.
    fn describe(&mut self, py: Python<'_>) -> PyResult<String> {
        let s = self.sim()?;
        let v = serde_json::json!({"config": s.config(), "drive": s.drive_report(), "op": s.op_report()});
        to_json(&v).map_err(|e| py_error(py, &e))
    }
    /// Apply the configured preconditioning only (Ctrl-C: KeyboardInterrupt).
    fn precondition(&mut self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |s| s.precondition())
    }
    /// Drive the configured workload for `host_bytes` more host bytes (no rounds recorded;
    /// Ctrl-C: KeyboardInterrupt, the drive stays usable).
    fn run_for(&mut self, py: Python<'_>, host_bytes: u64) -> PyResult<()> {
        self.call(py, |s| s.run_for(host_bytes))
    }
    /// Run the configured job on this drive; JSON text.  Ctrl-C: as `simulate`.
    #[pyo3(signature = (keep_interrupted = false))]
    fn run(&mut self, py: Python<'_>, keep_interrupted: bool) -> PyResult<String> {
        let r = self.call(py, |s| s.run())?;
        let signals = self.signals.clone();
        run_result(py, &signals, r, keep_interrupted)
    }
    /// Test hook: panic inside the core's call path (to test what a panic leaves).
    #[cfg(feature = "test-hooks")]
    fn _test_panic(&mut self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |_| panic!("deliberate panic (test hook)"))
    }
}

/// The trace options (JSON the Python API made from keyword arguments); errors name the
/// option (`trace.skip_lines`), never a position in that JSON.
fn trace_config(json: &str, interrupt: Interrupt) -> opsim_core::Result<opsim_core::trace::TraceConfig> {
    let mut cfg: opsim_core::trace::TraceConfig = from_json("trace", json)?;
    cfg.interrupt = interrupt;
    Ok(cfg)
}

/// Summarise a block trace (streaming); `trace` is the JSON of a `[workload.trace]` table.
#[pyfunction]
fn trace_info(py: Python<'_>, trace: String) -> PyResult<String> {
    guarded(py, move |intr| to_json(&opsim_core::trace::info(&trace_config(&trace, intr)?)?))
}

/// The write profile of a trace (streaming): JSON of the core's `TraceProfile`.  `progress`,
/// if given, is called about once a second with (records, lines, seconds).  Ctrl-C ends the
/// pass: what was counted is returned, marked `"partial": true`.
#[pyfunction]
#[pyo3(signature = (trace, max_memory = None, progress = None))]
fn trace_profile(
    py: Python<'_>,
    trace: String,
    max_memory: Option<u64>,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    use opsim_core::trace::{profile_with, ProfileOptions, Reader, DEFAULT_MAX_MEMORY};
    let signals = Signals::default();
    let intr = signals.interrupt();
    let r = detached(py, move || {
        let opts = ProfileOptions { max_memory: max_memory.unwrap_or(DEFAULT_MAX_MEMORY) };
        let mut report = |p: opsim_core::trace::Progress| {
            if let Some(f) = &progress {
                Python::attach(|py| {
                    let _ = f.call1(py, (p.records, p.lines, p.elapsed_s));
                });
            }
        };
        profile_with(Reader::open(&trace_config(&trace, intr)?)?, &opts, &mut report)
    });
    match r {
        Ok(Ok(p)) => {
            if p.partial {
                let e = signals.take();
                if !e.is_instance_of::<PyKeyboardInterrupt>(py) {
                    return Err(e);
                }
            }
            to_json(&p).map_err(|e| py_error(py, &e))
        }
        Ok(Err(e)) => to_py(py, &signals, Err(e)),
        Err(msg) => Err(py_error(py, &Error::internal(format!("the Rust core panicked: {msg}")))),
    }
}

/// The first `n` requests of a trace: JSON [[time_ns, kind, offset, bytes], ...].
#[pyfunction]
fn trace_head(py: Python<'_>, trace: String, n: usize) -> PyResult<String> {
    guarded(py, move |intr| to_json(&opsim_core::trace::head(&trace_config(&trace, intr)?, n)?))
}

/// Write a block trace as a fio iolog (version 2 or 3) replaying on `target`, atomically.
/// Returns the number of requests written.
#[pyfunction]
#[pyo3(signature = (trace, out, version = 3, target = String::from("/dev/sdX")))]
fn trace_convert(py: Python<'_>, trace: String, out: String, version: u8, target: String) -> PyResult<u64> {
    guarded(py, move |intr| opsim_core::trace::convert_to_file(&trace_config(&trace, intr)?, &out, version, &target))
}

/// Write `count` commands of a synthetic workload (`workload`: the JSON of a `[workload]`
/// table of type uniform, hot-cold, zipf, sequential or jesd219) over `span` bytes as a fio
/// iolog v3 on `target`, atomically; `interval_ns` apart.  Returns the commands written.
#[pyfunction]
#[pyo3(signature = (workload, span, count, out, seed = 1, interval_ns = 10_000, target = String::from("/dev/sdX")))]
#[allow(clippy::too_many_arguments)]
fn trace_synth(
    py: Python<'_>,
    workload: String,
    span: u64,
    count: u64,
    out: String,
    seed: u64,
    interval_ns: u64,
    target: String,
) -> PyResult<u64> {
    guarded(py, move |intr| {
        let workload = from_json("workload", &workload)?;
        let spec = opsim_core::workload::synth::SynthSpec { workload, span, count, seed, interval_ns, interrupt: intr };
        opsim_core::workload::synth::synth_to_file(&spec, &out, &target)
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("MAX_THREADS", opsim_core::par::MAX_THREADS)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(costs, m)?)?;
    m.add_function(wrap_pyfunction!(parse_size, m)?)?;
    m.add_function(wrap_pyfunction!(parse_fraction, m)?)?;
    m.add_function(wrap_pyfunction!(steady_state, m)?)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(drive_file, m)?)?;
    m.add_function(wrap_pyfunction!(fio_job, m)?)?;
    m.add_function(wrap_pyfunction!(fio_write_counts, m)?)?;
    m.add_function(wrap_pyfunction!(trace_info, m)?)?;
    m.add_function(wrap_pyfunction!(trace_convert, m)?)?;
    m.add_function(wrap_pyfunction!(trace_head, m)?)?;
    m.add_function(wrap_pyfunction!(trace_profile, m)?)?;
    m.add_function(wrap_pyfunction!(trace_synth, m)?)?;
    m.add_class::<PySimulator>()?;
    Ok(())
}
