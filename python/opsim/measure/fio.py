"""Running fio and reading what it writes, tolerating its quirks.

* JSON output: fio may print non-JSON lines (warnings, "fio: ..." notices) before the JSON
  document; :func:`parse_fio_json` skips them.
* Log files (``--write_iops_log`` etc. with ``log_avg_msec``): 4 columns before fio 3.21
  (time_ms, value, ddir, bs), 5 from 3.21 (+ prio), more from 3.37 (+ issue time / offset...).
  :func:`parse_log` reads the first four columns of any of them.
* Missing samples: the per-second series is keyed by timestamp (one bucket per second),
  so a missed interval stays a gap instead of shifting later samples.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

from .. import childproc
from ..errors import CommandError, InputError
from ..toolio import extract_json
from .fio_progress import ETA_ARGS, STALL_S, FioProgress
from .signals import signal_name

PERCENTILES = ("50", "90", "99", "99.9", "99.99")
FIO_PERCENTILE_LIST = "50:90:99:99.9:99.99"


def fio_binary() -> str:
    fio = shutil.which("fio")
    if not fio:
        raise CommandError("fio is not installed (Debian package fio; `make sysdeps` installs it)")
    return fio


def fio_version(fio: str | None = None) -> str:
    try:
        r = childproc.run([fio or fio_binary(), "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CommandError(f"fio --version failed: {e}") from None
    return r.stdout.strip() or r.stderr.strip()


def parse_fio_json(text: str, source: str = "fio output") -> dict:
    """The fio JSON document in ``text``, skipping any lines printed before it."""
    return extract_json(text, source, accept=lambda obj: isinstance(obj, dict) and "jobs" in obj)


def parse_log(path) -> list[tuple[int, float, int, int]]:
    """(time_ms, value, ddir, bs) rows of a fio log with 4, 5 or more columns."""
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split(",")]
            if len(parts) < 4:
                raise InputError(
                    f"{path}:{n}: a fio log line has at least 4 columns, found {len(parts)}", key="fio_log"
                )
            try:
                rows.append((int(parts[0]), float(parts[1]), int(parts[2]), int(parts[3])))
            except ValueError:
                raise InputError(f"{path}:{n}: not a fio log line: {line[:80]!r}", key="fio_log") from None
    return rows


def per_second_dirs(paths, reduce_jobs: str = "sum") -> dict[int, dict[int, float]]:
    """``{second: {ddir: value}}`` from the logs of one or more jobs (ddir 0 read, 1 write, 2 trim).

    A log sample at ``time_ms`` belongs to second ``round(time_ms / 1000)`` (the end of its
    one-second averaging window).  Within one log, samples in the same second (fio's final
    partial interval) are averaged; across jobs they are summed (IOPS) or averaged (latency:
    ``reduce_jobs="mean"``)."""
    acc: dict[tuple[int, int], list[float]] = {}
    for p in paths:
        per_dir: dict[tuple[int, int], list[float]] = {}
        for t, v, d, _bs in parse_log(p):
            per_dir.setdefault((round(t / 1000.0), d), []).append(v)
        for key, vs in per_dir.items():
            acc.setdefault(key, []).append(sum(vs) / len(vs))
    out: dict[int, dict[int, float]] = {}
    for (sec, d), vs in sorted(acc.items()):
        out.setdefault(sec, {})[d] = sum(vs) if reduce_jobs == "sum" else sum(vs) / len(vs)
    return out


def per_second(paths, ddirs=None, reduce_jobs: str = "sum") -> dict[int, float]:
    """Per-second values keyed by second across logs of several jobs (see :func:`per_second_dirs`);
    directions are added (IOPS) or averaged (latency), restricted to ``ddirs`` if given."""
    out = {}
    for sec, dirs in per_second_dirs(paths, reduce_jobs).items():
        vals = [v for d, v in dirs.items() if ddirs is None or d in ddirs]
        if vals:
            out[sec] = sum(vals) if reduce_jobs == "sum" else sum(vals) / len(vals)
    return out


LATENCY_KEYS = ("count", "mean", "min", "p50", "p90", "p99", "p99.9", "p99.99", "max")


class Latency:
    """Completion latencies (fio's ``clat_ns``) of one or more fio runs and directions.

    Merged exactly through fio's ``json+`` histogram (``bins``: value in ns -> count): fio
    computes its own percentiles from the same histogram (the first bucket whose cumulative
    count reaches p% of the samples), so one direction of one run reproduces fio's figures and
    a merge of several is what fio would print for them together.  Without bins (plain
    ``json`` output) one part gives fio's percentiles; several give the largest of each
    percentile (an upper bound).  A histogram bucket's value stands for every sample in the
    bucket (fio's buckets are up to 1/64 of their value wide), so the last bucket's value can lie
    above the slowest sample fio timed exactly (``max``), and the first below ``min``: each
    percentile is kept within ``[min, max]``, where the true one lies (seen on a loaded
    machine: p99.99 108,527.6 us from the bucket, max 108,112.6 us).  :meth:`summary_us` has the
    keys of the timed model's latency summaries."""

    def __init__(self) -> None:
        self.n = 0
        self.sum_ns = 0.0
        self.min_ns: float | None = None
        self.max_ns: float | None = None
        self.bins: dict[int, int] | None = {}
        self.fio_pcts: list[dict] = []

    @classmethod
    def from_clat(cls, clat: dict | None) -> Latency:
        lat = cls()
        clat = clat or {}
        n = int(clat.get("N") or 0)
        if n <= 0:
            return lat
        lat.n = n
        lat.sum_ns = float(clat.get("mean", 0.0)) * n
        lat.min_ns, lat.max_ns = float(clat.get("min", 0)), float(clat.get("max", 0))
        bins = clat.get("bins")
        lat.bins = {int(k): int(v) for k, v in bins.items()} if isinstance(bins, dict) and bins else None
        lat.fio_pcts = [{float(k): float(v) for k, v in (clat.get("percentile") or {}).items()}]
        return lat

    def merge(self, other: Latency) -> Latency:
        if other.n == 0:
            return self
        if self.n == 0:
            self.bins = None if other.bins is None else dict(other.bins)
        elif self.bins is not None and other.bins is not None:
            for k, v in other.bins.items():
                self.bins[k] = self.bins.get(k, 0) + v
        else:
            self.bins = None
        assert other.min_ns is not None and other.max_ns is not None  # set whenever n > 0
        self.n += other.n
        self.sum_ns += other.sum_ns
        self.min_ns = other.min_ns if self.min_ns is None else min(self.min_ns, other.min_ns)
        self.max_ns = other.max_ns if self.max_ns is None else max(self.max_ns, other.max_ns)
        self.fio_pcts += other.fio_pcts
        return self

    def _percentile_ns(self, p: float) -> float | None:
        if self.bins is not None:
            want = p / 100.0 * sum(self.bins.values())
            cum = 0
            for value, count in sorted(self.bins.items()):
                cum += count
                if cum >= want:
                    return float(value)
            return None
        vals = [v for pcts in self.fio_pcts for k, v in pcts.items() if abs(k - p) < 1e-6]
        return max(vals) if vals else None

    def summary_us(self) -> dict:
        """``{count, mean, min, p50, p90, p99, p99.9, p99.99, max}`` in microseconds; with no
        samples, count 0 and every value 0.0 (as the timed model reports an unused direction)."""
        if self.n == 0:
            return {k: (0 if k == "count" else 0.0) for k in LATENCY_KEYS}
        out: dict[str, float | None] = {
            "count": self.n,
            "mean": self.sum_ns / self.n / 1000.0,
            "min": (self.min_ns or 0.0) / 1000.0,
        }
        lo, hi = self.min_ns or 0.0, self.max_ns or 0.0
        for p in PERCENTILES:
            v = self._percentile_ns(float(p))
            out["p" + p] = None if v is None else min(max(v, lo), hi) / 1000.0
        out["max"] = (self.max_ns or 0.0) / 1000.0
        return out


def summarize(doc: dict) -> dict:
    """IOPS, bandwidth and latency of one fio run, over all jobs and directions.

    ``latency`` holds :class:`Latency` objects (``all``, ``read``, ``write``) for merging;
    ``latency_us`` is ``latency["all"].summary_us()``; ``directions`` has the IOPS and latency
    summary of each direction that did I/O."""
    iops = {"read": 0.0, "write": 0.0, "trim": 0.0}
    bw = 0.0
    io_bytes = {"read": 0, "write": 0, "trim": 0}
    lat = {"all": Latency(), "read": Latency(), "write": Latency(), "trim": Latency()}
    for job in doc.get("jobs", []):
        for d in ("read", "write", "trim"):
            s = job.get(d) or {}
            if not s.get("total_ios") and not s.get("io_bytes"):
                continue
            iops[d] += float(s.get("iops", 0))
            bw += float(s.get("bw_bytes", s.get("bw", 0) * 1024))
            io_bytes[d] += int(s.get("io_bytes", 0))
            part = Latency.from_clat(s.get("clat_ns"))  # merge() copies, never changes part
            lat[d].merge(part)
            lat["all"].merge(part)
    directions = {
        d: {"iops": iops[d], "latency_us": lat[d].summary_us()}
        for d in ("read", "write", "trim")
        if lat[d].n or iops[d]
    }
    errors = [j.get("error") for j in doc.get("jobs", []) if j.get("error")]
    ss = None
    for job in doc.get("jobs", []):
        if "steadystate" in job:
            ss = {
                "attained": bool(job["steadystate"].get("attained")),
                "criterion": job["steadystate"].get("criterion"),
            }
    return {
        "iops": sum(iops.values()),
        "read_iops": iops["read"],
        "write_iops": iops["write"],
        "bw_bytes": bw,
        "io_bytes": io_bytes,
        "latency": lat,
        "latency_us": lat["all"].summary_us(),
        "directions": directions,
        "fio_errors": errors,
        "fio_steadystate": ss,
        "runtime_ms": max(
            (max((j.get(d) or {}).get("runtime", 0) for d in ("read", "write", "trim")) for j in doc.get("jobs", [])),
            default=0,
        ),
    }


def size_bytes(text) -> int:
    """fio size text (``4k``, ``128k``, ``1m``, ``512``, ``4KiB``) in bytes (k = 1024, as fio reads it)."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)(?:[iI]?[bB])?\s*", str(text))
    if not m:
        raise InputError(f"bs: {text!r} is not a fio block size", key="bs")
    return int(m.group(1)) * {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}[m.group(2).lower()]


class Interrupted(Exception):
    """A stop signal (Ctrl-C, SIGTERM, SIGHUP) during a fio run; fio's process group was stopped."""

    def __init__(self, signum: int = signal.SIGINT):
        super().__init__(signal_name(signum))
        self.signum = signum


class FioFailed(CommandError):
    """fio exited non-zero, was killed, hung, wrote no JSON or reported errors."""


#: seconds fio gets to stop after SIGTERM before its process group is killed
STOP_GRACE_S = 2.0
_POLL_S = 0.1


def _killpg(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _leader_exited(pid: int) -> bool:
    """True once the process has exited, without reaping it: while it is a zombie its pid, and
    so its process group id, cannot be reused, so killing the group afterwards is safe."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _reap(proc: subprocess.Popen) -> None:
    """The leader has exited: kill whatever is left of its process group (fio's job processes
    go on writing if fio itself was killed or crashed), then reap it."""
    _killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def stop_fio(proc: subprocess.Popen, grace: float = STOP_GRACE_S) -> None:
    """Stop fio and every process of its group: SIGTERM (fio ends its jobs and exits), then
    SIGKILL to the group after ``grace`` seconds or as soon as the leader has gone."""
    _killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while not _leader_exited(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    _reap(proc)


def _tail(f, n: int = 3) -> str:
    f.seek(0)
    lines = [x.strip() for x in f.read().decode("utf-8", "replace").splitlines() if x.strip()]
    return " | ".join(lines[-n:]) if lines else "no message"


def _watch(proc: subprocess.Popen, out, timeout: float | None, on_tick, stop, stall_s: float) -> Exception | None:
    """Wait for fio's leader to exit, reading its status lines as they come (``out``: its stdout);
    the reason to stop it (a stop request, a stall, the cap) or None when it exited by itself."""
    start = last_tick = time.monotonic()
    progress, seen = FioProgress(start, stall_s), 0
    try:
        while not _leader_exited(proc.pid):
            time.sleep(_POLL_S)
            now = time.monotonic()
            if stop is not None and stop():
                return Interrupted(stop())
            text = os.pread(out.fileno(), 1 << 16, seen)
            seen += len(text)
            progress.feed(text.decode("utf-8", "replace"), now)
            if progress.stalled(now):
                return FioFailed(progress.reason(now))
            if timeout and now - start > timeout:
                return FioFailed(f"fio did not finish within {timeout:.0f} s and was stopped")
            if on_tick and now - last_tick >= 0.5:
                last_tick = now
                on_tick(now - start)
    except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM/SIGHUP outside a StopSignals block
        return Interrupted(getattr(e, "signum", signal.SIGINT))
    return None


def run_fio(
    argv: list[str], json_path: str, timeout: float | None = None, on_tick=None, stop=None, stall_s: float = STALL_S
) -> dict:
    """Run fio with ``--output-format=json+ --output=json_path`` (json+ adds the latency
    histogram bins); return the parsed document.

    fio is stopped when it stalls: no I/O reported for ``stall_s`` seconds
    (:mod:`opsim.measure.fio_progress`; a slow machine never trips it, a device that stops
    answering does); ``timeout``, when given, is a cap on the whole run besides.

    fio runs in its own session (process group), so nothing but opsim signals it, and dies
    with opsim (:mod:`opsim.childproc`: a SIGKILL of opsim ends it too).  ``stop``:
    a callable returning the number of a stop signal received (see
    :class:`opsim.measure.signals.StopSignals`) or None; it is polled every 0.1 s.  On a stop
    request, or :class:`KeyboardInterrupt` where no handler is installed, fio's group is
    stopped (:func:`stop_fio`) and :class:`Interrupted` raised.  When fio exits non-zero, is
    killed, exceeds ``timeout`` or writes no JSON: :class:`FioFailed`, after its whole
    process group is gone."""
    if stop is not None and stop():
        raise Interrupted(stop())
    full = [*argv, *ETA_ARGS, "--output-format=json+", f"--output={json_path}"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = childproc.popen(full, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        except OSError as e:
            raise FioFailed(f"cannot start fio: {e.strerror or e}") from None
        try:
            why = _watch(proc, out, timeout, on_tick, stop, stall_s)
        except BaseException:
            stop_fio(proc)
            raise
        if why is not None:
            stop_fio(proc)
            raise why
        _reap(proc)
        if proc.returncode < 0:
            raise FioFailed(f"fio was killed by {signal_name(-proc.returncode)} ({_tail(err)})")
        if proc.returncode != 0:
            raise FioFailed(f"fio exited {proc.returncode}: {_tail(err)}")
    try:
        with open(json_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise FioFailed(f"fio wrote no JSON output ({e.strerror})") from None
    try:
        doc = parse_fio_json(text, source=json_path)
    except InputError as e:
        raise FioFailed(str(e)) from None
    # keep the JSON file clean (fio may prefix notices)
    if not text.lstrip().startswith("{"):
        with open(json_path, "w") as f:
            json.dump(doc, f, indent=1)
    return doc


def log_paths(prefix: str, kind: str) -> list[str]:
    """fio names logs ``<prefix>_<kind>.<job>.log``."""
    return sorted(glob.glob(f"{glob.escape(prefix)}_{kind}.*.log")) or sorted(
        glob.glob(f"{glob.escape(prefix)}_{kind}.log")
    )


def exists(p) -> bool:
    return os.path.exists(p)
