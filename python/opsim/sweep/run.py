"""Running a sweep: serially or on Dask (a LocalCluster or a scheduler), with progress,
checkpoints of finished points, and Ctrl-C ending the run with its results kept."""

from __future__ import annotations

import contextlib
import ipaddress
import itertools
import os
import re
import signal
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import _args
from ..errors import CommandError, InputError
from .cluster import sigint_immune_workers, start_local_cluster
from .grid import Grid, Point, load_grid
from .point import _error_fields, run_point
from .store import _Store
from .table import build_table, to_frame


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did, and the table."""

    grid: Grid
    table: Any  #: pyarrow.Table, one row per point with a result, grid order
    output: str | None
    summary: dict

    @property
    def frame(self):
        df = to_frame(self.table)
        df.attrs["sweep"] = self.summary
        return df


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover
        return os.cpu_count() or 1


def _progress_bar(total: int, enabled: bool | None):
    """tqdm on stderr; ``enabled=None``: only when stderr is a terminal."""
    from tqdm import tqdm

    disable = (not sys.stderr.isatty()) if enabled is None else not enabled
    return tqdm(
        total=total, desc="opsim sweep", unit="pt", file=sys.stderr, disable=disable, dynamic_ncols=True, smoothing=0.05
    )


class _Checkpoint:
    """Write the results file at most every ``interval`` seconds, and never spend more than
    about a tenth of the time writing it."""

    def __init__(self, store: _Store, interval: float):
        self.store, self.interval = store, interval
        self.last = time.monotonic()
        self.cost = 0.0
        self.dirty = False

    def mark(self):
        self.dirty = True
        if time.monotonic() - self.last >= max(self.interval, 10 * self.cost):
            self.flush()

    def flush(self):
        if not self.dirty:
            return
        t0 = time.monotonic()
        self.store.write()
        self.last = time.monotonic()
        self.cost = self.last - t0
        self.dirty = False


def _connect(scheduler, workers, client):
    """(client, cluster or None, description).  The caller closes what it opened."""
    if client is not None:
        return (
            client,
            None,
            {"runner": "client", "scheduler": client.scheduler.address, "workers": len(client.nthreads())},
        )
    from distributed import Client

    if scheduler is not None:
        if not isinstance(scheduler, str) or "://" not in scheduler:
            raise InputError(f"scheduler: {scheduler!r} is not a scheduler address (tcp://HOST:PORT)", key="scheduler")
        _probe(scheduler)
        try:
            c = Client(scheduler, timeout="15s", set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise CommandError(f"cannot connect to the Dask scheduler at {scheduler}: {e}") from None
        except ValueError as e:
            raise InputError(f"scheduler: {e}", key="scheduler") from None
        return c, None, {"runner": "scheduler", "scheduler": scheduler, "workers": len(c.nthreads())}
    n = workers or _cpu_count()
    # Ctrl-C reaches the whole process group: the workers of our own cluster ignore it (from
    # their start: cluster.py; the plugin for any Dask restarts), so that this process saves
    # what has finished and shuts them down in order
    c, cluster = start_local_cluster(n, _ignore_sigint_plugin())
    return c, cluster, {"runner": "local-cluster", "scheduler": cluster.scheduler_address, "workers": n}


def _probe(scheduler: str, timeout: float = 5.0) -> None:
    """Fail at once when nothing accepts a TCP connection at a ``tcp://`` scheduler's address
    (Dask's client would retry for its whole timeout); other protocols are left to Dask."""
    from distributed.comm.addressing import parse_address, parse_host_port

    proto, loc = parse_address(scheduler)
    if proto != "tcp":
        return
    host, port = parse_host_port(loc.split("/", 1)[0], default_port=8786)
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        raise CommandError(f"cannot connect to the Dask scheduler at {scheduler}: {e.strerror or e}") from None


def _ignore_sigint_plugin():
    """A Dask worker plugin (run on every worker, restarted ones too) that makes the worker
    ignore SIGINT.  Built here so that importing opsim does not import distributed."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class IgnoreSigint(WorkerPlugin):
        name = "opsim-ignore-sigint"

        def setup(self, worker):
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, signal.SIG_IGN)

    return IgnoreSigint()


def _run_dask(client, todo: list[Point], record: Callable[[Point, dict], None], g: Grid) -> None:
    from distributed import as_completed

    nthreads = max(1, sum(client.nthreads().values()))
    window = max(16, 4 * nthreads)
    token = uuid.uuid4().hex[:8]
    pending = iter(todo)
    inflight: dict[str, tuple[Point, Any]] = {}

    def submit(p: Point):
        f = client.submit(
            run_point, p.config_json(), g.documents, g.base_dir, key=f"opsim-point-{p.point_id}-{token}", pure=False
        )
        inflight[f.key] = (p, f)
        return f

    ac = as_completed([submit(p) for p in itertools.islice(pending, window)], loop=client.loop)
    try:
        for fut in ac:
            p, _ = inflight.pop(fut.key)
            try:
                row = fut.result()
            except Exception as e:  # the worker died (KilledWorker), was lost, ...: record, go on
                row = _error_fields(e)
                row["opsim_version"] = None
                row["wall_seconds"] = None
            fut.release()
            record(p, row)
            nxt = next(pending, None)
            if nxt is not None:
                ac.add(submit(nxt))
    finally:
        if inflight:  # interrupted: drop what has not finished
            _quietly(lambda: client.cancel([f for _, f in inflight.values()]))


def check_run_options(workers, scheduler=None, client=None, limit=None) -> None:
    """``workers`` (0, or a count up to the CPUs this process may run on, not beside a
    cluster), ``scheduler`` (an address) and ``limit`` (0 or more): checked before the grid is
    read and before any cluster starts."""
    cpus = _cpu_count()
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 0):
        raise InputError(
            f"workers: must be 0 (serial) or a number of worker processes (got {workers!r})", key="workers"
        )
    if workers is not None and workers > cpus:
        # each worker runs one point at a time on one CPU: more than the CPUs only share them,
        # and every one is a Python process to start (seconds each on a busy machine)
        raise InputError(
            f"workers: {workers:,} worker processes on {cpus} CPU{'s' if cpus != 1 else ''}: each runs one point at a "
            f"time on one CPU, so more than {cpus} only share them and take longer to start; give {cpus} or fewer "
            "(or leave it out: one per CPU), or run a larger cluster on its own and give its scheduler",
            key="workers",
        )
    if scheduler is not None:
        check_scheduler(scheduler)
    if workers is not None and (scheduler is not None or client is not None):
        raise InputError(
            "workers: an existing cluster has its own workers; give workers or a scheduler, not both", key="workers"
        )
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InputError(f"limit: must be a number of points, 0 or more (got {limit!r})", key="limit")


#: a host name (RFC 1123 labels), when a scheduler's host is not an IP address
_HOSTNAME = re.compile(
    r"(?i)^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*\.?$"
)


def check_scheduler(scheduler) -> None:
    """A Dask scheduler address: a protocol Dask has (``tcp://``, ``tls://``, ...) and, for the
    network ones, a host that is an IP address or a host name (``256.0.0.1`` is neither: an
    address of four numbers is an IPv4 one) and a port from 1 to 65535."""
    from distributed.comm import registry
    from distributed.comm.addressing import parse_address, parse_host_port

    def bad(why: str) -> InputError:
        return InputError(f"scheduler: {scheduler!r} {why}", key="scheduler")

    if not isinstance(scheduler, str) or "://" not in scheduler:
        raise bad("is not a scheduler address (tcp://HOST:PORT)")
    proto, loc = parse_address(scheduler)
    if proto not in registry.backends:
        raise bad(f"has protocol {proto!r}; Dask has {', '.join(sorted(registry.backends))}")
    if proto in ("inproc", "ucx"):
        return
    try:
        host, port = parse_host_port(loc.split("/", 1)[0], default_port=8786)
    except ValueError as e:
        raise bad(f"is not HOST:PORT ({e})") from None
    if not 1 <= int(port) <= 65535:
        raise bad(f"has port {port}: a port is 1 to 65535")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        if re.fullmatch(r"[0-9.]+", host) or not _HOSTNAME.match(host):
            raise bad(f"has host {host!r}, which is neither an IP address nor a host name") from None


def _plan(store: _Store, g: Grid, limit: int | None) -> tuple[list[Point], dict]:
    """(the points to run, the summary's counts so far): the grid's points less those the store
    holds done (with their document when the grid keeps documents), at most ``limit``."""
    done_before = {
        pid
        for pid, r in store.rows.items()
        if r.get("status") == "ok" and (r.get("result_json") is not None or not g.documents)
    }
    todo = [p for p in g.points if p.point_id not in done_before]
    summary: dict = {
        "points": len(g.points),
        "skipped": len(done_before),
        "retried": sum(1 for p in todo if p.point_id in store.rows),
        "to_run": len(todo) if limit is None else min(limit, len(todo)),
        "computed": 0,
        "failed": 0,
        "stale_dropped": store.stale,
        "interrupted": False,
        "runner": None,
        "workers": 0,
        "scheduler": None,
        "output": store.path,
    }
    return (todo if limit is None else todo[:limit]), summary


class _Recorder:
    """Keeps each finished point's row in the store, counts it, moves the bar, checkpoints."""

    def __init__(self, store: _Store, summary: dict, check: _Checkpoint):
        self.store, self.summary, self.check = store, summary, check
        self.bar = None

    def __call__(self, p: Point, row: dict) -> None:
        self.store.rows[p.point_id] = row
        self.summary["computed"] += 1
        if row.get("status") != "ok":
            self.summary["failed"] += 1
        if self.bar is not None:
            if self.summary["failed"]:
                self.bar.set_postfix(failed=self.summary["failed"], refresh=False)
            self.bar.update(1)
        self.check.mark()


def _execute(g: Grid, todo: list[Point], record: _Recorder, summary: dict, progress, workers, scheduler, client):
    """Run ``todo`` serially (``workers=0``) or on Dask; interrupted: closes what it opened and
    re-raises (the caller decides).  The checkpoint is flushed whatever happens."""
    cl = cluster = None
    try:
        if todo and workers == 0:
            summary["runner"] = "serial"
            record.bar = _progress_bar(len(todo), progress)
            for p in todo:
                record(p, run_point(p.config_json(), g.documents, g.base_dir))
        elif todo:
            with sigint_immune_workers() if scheduler is None and client is None else contextlib.nullcontext():
                cl, cluster, info = _connect(scheduler, workers, client)
                summary.update(info)
                record.bar = _progress_bar(len(todo), progress)
                _run_dask(cl, todo, record, g)
    finally:
        if record.bar is not None:
            record.bar.close()
        if cl is not None and cl is not client:
            _quietly(cl.close)
        if cluster is not None:
            _quietly(cluster.close)
        record.check.flush()  # also when interrupted: what finished is kept


def run_sweep(
    grid,
    output: str | os.PathLike | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    client=None,
    limit: int | None = None,
    fresh: bool = False,
    progress: bool | None = False,
    checkpoint_seconds: float = 1.0,
    on_interrupt: str = "raise",
) -> SweepOutcome:
    """Run (or resume) a sweep; see :func:`sweep`.  With ``on_interrupt="return"`` a
    KeyboardInterrupt ends the run like ``limit`` does (results kept, ``summary["interrupted"]``)
    instead of propagating after the results are saved."""
    t0 = time.perf_counter()
    check_run_options(workers, scheduler, client, limit)  # before the grid is read
    g = grid if isinstance(grid, Grid) else load_grid(grid)
    output = None if output is None else _args.path("output", output)
    import pyarrow.parquet  # noqa: F401  (imported now, not in the middle of the progress bar)

    store = _Store(None if output is None else os.fspath(output), g, fresh)
    try:
        todo, summary = _plan(store, g, limit)
        check = _Checkpoint(store, checkpoint_seconds)
        check.dirty = bool(store.stale or fresh)
        try:
            _execute(g, todo, _Recorder(store, summary, check), summary, progress, workers, scheduler, client)
        except KeyboardInterrupt:
            summary["interrupted"] = True
            if on_interrupt != "return":
                raise
        ok = sum(1 for pid, r in store.rows.items() if r.get("status") == "ok")
        summary.update(
            ok=ok, errors=len(store.rows) - ok, pending=len(g.points) - ok, wall_seconds=time.perf_counter() - t0
        )
        return SweepOutcome(grid=g, table=build_table(g, store.rows), output=store.path, summary=summary)
    finally:
        store.close()


def _quietly(fn):
    with contextlib.suppress(Exception):
        fn()


def sweep(
    grid,
    output: str | os.PathLike | None = None,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    client=None,
    limit: int | None = None,
    fresh: bool = False,
    progress: bool | None = False,
):
    """Run a sweep and return its results as a pandas DataFrame (one row per point).

    ``grid``: a grid file path, TOML text or a dict with the same structure (docs/sweeps.md).
    ``output``: a Parquet file; the sweep resumes from it (points already there are skipped,
    failed ones retried) and it is rewritten atomically as points finish.  Without it
    nothing is written.  ``workers``: 0 runs the points one after another in this process;
    N (default: every CPU) starts a Dask LocalCluster of N processes.  ``scheduler``
    (``tcp://HOST:PORT``) or ``client`` (a ``distributed.Client``) runs on an existing cluster
    instead.  ``limit``: run at most this many of the points still to do, then stop.
    ``fresh``: ignore (and replace) what ``output`` holds.

    The table is the same, apart from ``wall_seconds``, however the points are run.
    ``df.attrs["sweep"]`` holds the counts (computed, skipped, failed, ...).
    """
    return run_sweep(
        grid, output, workers=workers, scheduler=scheduler, client=client, limit=limit, fresh=fresh, progress=progress
    ).frame
