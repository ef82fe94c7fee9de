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

import glob
import json
import os
import shutil
import signal
import subprocess
import time

from ..errors import CommandError, InputError
from ..toolio import extract_json

PERCENTILES = ("50", "90", "99", "99.9", "99.99")
FIO_PERCENTILE_LIST = "50:90:99:99.9:99.99"


def fio_binary() -> str:
    fio = shutil.which("fio")
    if not fio:
        raise CommandError("fio is not installed (Debian package fio; `make sysdeps` installs it)")
    return fio


def fio_version(fio: str | None = None) -> str:
    try:
        r = subprocess.run([fio or fio_binary(), "--version"], capture_output=True, text=True, timeout=30)
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
                raise InputError(f"{path}:{n}: a fio log line has at least 4 columns, found {len(parts)}",
                                 key="fio_log")
            try:
                rows.append((int(parts[0]), float(parts[1]), int(parts[2]), int(parts[3])))
            except ValueError:
                raise InputError(f"{path}:{n}: not a fio log line: {line[:80]!r}", key="fio_log") from None
    return rows


def per_second(paths, ddirs=None, reduce_jobs: str = "sum") -> dict[int, float]:
    """Per-second values keyed by second (round(time_ms / 1000)) across logs of several jobs.

    Within one log, samples in the same second (fio's final partial interval) are averaged;
    across jobs they are summed (IOPS, bandwidth) or averaged (latency: ``reduce_jobs="mean"``)."""
    total: dict[int, list[float]] = {}
    for p in paths:
        per: dict[int, list[float]] = {}
        per_dir: dict[tuple[int, int], list[float]] = {}
        for t, v, d, _bs in parse_log(p):
            if ddirs is not None and d not in ddirs:
                continue
            per_dir.setdefault((int(round(t / 1000.0)), d), []).append(v)
        for (sec, _d), vs in per_dir.items():
            per.setdefault(sec, []).append(sum(vs) / len(vs))
        for sec, vs in per.items():
            # directions add up for IOPS; for latency keep the mean
            val = sum(vs) if reduce_jobs == "sum" else sum(vs) / len(vs)
            total.setdefault(sec, []).append(val)
    return {s: (sum(v) if reduce_jobs == "sum" else sum(v) / len(v)) for s, v in sorted(total.items())}


def _pct_from(clat: dict) -> dict:
    pcts = clat.get("percentile") or {}
    out = {}
    for want in PERCENTILES:
        val = None
        for k, v in pcts.items():
            try:
                if abs(float(k) - float(want)) < 1e-6:
                    val = v
                    break
            except ValueError:
                continue
        out["p" + want] = None if val is None else val / 1000.0
    out["max"] = clat.get("max", 0) / 1000.0 if clat.get("N", 1) else None
    out["mean"] = clat.get("mean", 0) / 1000.0 if clat.get("N", 1) else None
    return out


def summarize(doc: dict) -> dict:
    """IOPS, bandwidth and latency (microseconds) of one fio run, over all jobs and directions.

    Latency percentiles are the worst (largest) over directions and jobs; with
    ``group_reporting`` there is one job."""
    iops = bw = 0.0
    io_bytes = {"read": 0, "write": 0, "trim": 0}
    lat: dict = {}
    per_dir = {}
    for job in doc.get("jobs", []):
        for d in ("read", "write", "trim"):
            s = job.get(d) or {}
            if not s.get("total_ios") and not s.get("io_bytes"):
                continue
            iops += float(s.get("iops", 0))
            bw += float(s.get("bw_bytes", s.get("bw", 0) * 1024))
            io_bytes[d] += int(s.get("io_bytes", 0))
            p = _pct_from(s.get("clat_ns") or {})
            per_dir[d] = {"iops": float(s.get("iops", 0)), "latency_us": p}
            for k, v in p.items():
                if v is not None and k != "mean":
                    lat[k] = max(lat.get(k) or 0.0, v)
    lat_out = {k: lat.get(k) for k in ["p" + p for p in PERCENTILES] + ["max"]}
    errors = [j.get("error") for j in doc.get("jobs", []) if j.get("error")]
    ss = None
    for job in doc.get("jobs", []):
        if "steadystate" in job:
            ss = {"attained": bool(job["steadystate"].get("attained")), "criterion": job["steadystate"].get("criterion")}
    return {"iops": iops, "bw_bytes": bw, "io_bytes": io_bytes, "latency_us": lat_out, "directions": per_dir,
            "fio_errors": errors, "fio_steadystate": ss,
            "runtime_ms": max((max((j.get(d) or {}).get("runtime", 0) for d in ("read", "write", "trim"))
                               for j in doc.get("jobs", [])), default=0)}


class Interrupted(Exception):
    """Ctrl-C during a fio run (fio was stopped cleanly)."""


def run_fio(argv: list[str], json_path: str, timeout: float | None = None, on_tick=None) -> dict:
    """Run fio with ``--output-format=json --output=json_path``; return the parsed document.

    Ctrl-C: fio (in our process group) receives SIGINT too; we wait for it to exit and
    write its JSON, then raise :class:`Interrupted`."""
    full = [*argv, "--output-format=json", f"--output={json_path}"]
    try:
        proc = subprocess.Popen(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        raise CommandError(f"cannot start fio: {e}") from None
    interrupted = False
    start = time.monotonic()
    try:
        while True:
            try:
                proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if on_tick:
                    on_tick(time.monotonic() - start)
                if timeout and time.monotonic() - start > timeout:
                    proc.send_signal(signal.SIGINT)
                    try:
                        proc.wait(timeout=30)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                    raise CommandError(f"fio did not finish within {timeout:.0f} s")
    except KeyboardInterrupt:
        interrupted = True
        try:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    out, err = proc.communicate()
    if interrupted:
        raise Interrupted()
    if proc.returncode != 0:
        msg = (err or out or "").strip().splitlines()
        raise CommandError(f"fio exited {proc.returncode}: {' | '.join(msg[-3:]) if msg else 'no message'}")
    try:
        with open(json_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise CommandError(f"fio wrote no JSON output ({e.strerror})") from None
    try:
        doc = parse_fio_json(text, source=json_path)
    except InputError as e:
        raise CommandError(str(e)) from None
    # keep the JSON file clean (fio may prefix notices)
    if not text.lstrip().startswith("{"):
        with open(json_path, "w") as f:
            json.dump(doc, f, indent=1)
    return doc


def log_paths(prefix: str, kind: str) -> list[str]:
    """fio names logs ``<prefix>_<kind>.<job>.log``."""
    return sorted(glob.glob(f"{glob.escape(prefix)}_{kind}.*.log")) or \
        sorted(glob.glob(f"{glob.escape(prefix)}_{kind}.log"))


def exists(p) -> bool:
    return os.path.exists(p)
