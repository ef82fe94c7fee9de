"""Starting a sweep's Dask LocalCluster so that Ctrl-C stops it within a second or two.

Ctrl-C reaches the whole process group.  A worker process still importing Python when it
arrives would die with a KeyboardInterrupt traceback, and the cluster's start-up would go on
(and the process's exit would wait for it).  So:

* the workers are forked from multiprocessing's fork server started with SIGINT ignored
  (``distributed.worker.multiprocessing-method = "forkserver"``): a process forked from it
  keeps SIGINT ignored from its first instruction (the fork server hands its children the
  handlers it started with), where a spawned one would only ignore it once Dask's worker
  plugin runs;
* the cluster is built in a helper thread while this thread waits, so that Ctrl-C is
  raised here at once; then the worker processes started so far are killed, which makes
  the cluster's start fail and close itself, and the interrupt goes on.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from multiprocessing import forkserver

from ..errors import CommandError

#: after Ctrl-C during start-up: how long to keep killing new worker processes while the
#: start-up unwinds (the command then exits with what it has)
ABANDON_SECONDS = 1.5
#: multiprocessing's name for the processes Dask's nannies start
_WORKER_NAME = "Dask Worker process"


@contextlib.contextmanager
def sigint_immune_workers():
    """While active, Dask starts worker processes that ignore SIGINT from their start."""
    import dask
    from distributed.utils import get_mp_context  # distributed's config defaults first: set() restores them

    with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver"}):
        get_mp_context()  # sets the fork server's preload (distributed and its packages)
        # started with SIGINT ignored; a no-op when it runs already
        if threading.current_thread() is threading.main_thread():
            old = signal.signal(signal.SIGINT, signal.SIG_IGN)
            try:
                forkserver.ensure_running()
            finally:
                signal.signal(signal.SIGINT, old)
        yield


def start_local_cluster(n: int, plugin):
    """(client, cluster) of a LocalCluster of ``n`` one-thread worker processes with ``plugin``
    registered; Ctrl-C while it starts stops it within :data:`ABANDON_SECONDS` and re-raises."""
    from distributed import Client, LocalCluster

    box: dict = {}
    done = threading.Event()

    def start() -> None:
        try:
            cluster = LocalCluster(
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
            )
            box["cluster"] = cluster
            client = Client(cluster, set_as_default=False)
            box["client"] = client
            client.register_plugin(plugin)
        except Exception as e:
            box["error"] = e
        finally:
            done.set()

    before = {p.pid for p in multiprocessing.active_children() if p.pid is not None}
    threading.Thread(target=start, name="opsim sweep: cluster start-up", daemon=True).start()
    try:
        while not done.wait(0.05):  # an Event, not Thread.join: Ctrl-C in join can lose the thread's state
            pass
    except KeyboardInterrupt:
        _abandon(done, before)
        raise
    if "error" in box:
        for k in ("client", "cluster"):
            if k in box:
                with contextlib.suppress(Exception):
                    box[k].close()
        raise CommandError(f"cannot start a Dask LocalCluster with {n} workers: {box['error']}")
    return box["client"], box["cluster"]


def _abandon(done: threading.Event, before: set[int]) -> None:
    """Kill the worker processes the interrupted start-up has started (and those it starts
    while it unwinds), for at most :data:`ABANDON_SECONDS`; Dask's own complaints about the
    workers it lost are silenced meanwhile."""
    quiet = [logging.getLogger(n) for n in logging.root.manager.loggerDict if n.startswith("distributed")]
    quiet.append(logging.getLogger("distributed"))
    levels = [(lg, lg.level) for lg in quiet]
    for lg in quiet:
        lg.setLevel(logging.CRITICAL + 1)
    t0 = time.monotonic()
    try:
        while not done.is_set() and time.monotonic() - t0 < ABANDON_SECONDS:
            for p in multiprocessing.active_children():
                if p.pid not in before and p.name.startswith(_WORKER_NAME) and p.pid is not None:
                    with contextlib.suppress(OSError):
                        os.kill(p.pid, signal.SIGKILL)
            done.wait(0.05)
    finally:
        if done.is_set():
            for lg, level in levels:
                lg.setLevel(level)
