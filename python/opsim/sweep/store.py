"""The results file of a sweep: previous rows read back (a sweep resumes), whole-file atomic
writes, and a lock so that two sweeps never write one file (on the file a symbolic link names)."""

from __future__ import annotations

import contextlib
import os

from ..errors import InputError
from .columns import _BASE_METRICS, _ERROR_COLUMNS, _TAIL_COLUMNS, _TIMED_METRICS
from .grid import Grid
from .table import META_KEY, _write_atomic, build_table


class _Store:
    """The results file: previous rows in, atomic whole-file writes out, and a lock so two
    sweeps never write the same file."""

    def __init__(self, path: str | None, grid: Grid, fresh: bool):
        self.path = path
        self.grid = grid
        self.rows: dict[str, dict] = {}
        self.stale = 0
        self._lock: int | None = None
        self._lock_path: str | None = None
        if path is None:
            return
        # a symbolic link is followed: the lock and the writes are on the file it names, so a
        # second sweep through another name of the same file finds the lock, and the link stays
        path = os.path.realpath(path)
        self.path = path
        d = os.path.dirname(path)
        if not os.path.isdir(d):
            raise InputError(f"output: directory {d} does not exist", key="output")
        if os.path.isdir(path):
            raise InputError(f"output: {path} is a directory; give a .parquet file path", key="output")
        self._acquire_lock(path)
        if fresh or not os.path.exists(path):
            return
        try:
            self._load()
        except BaseException:
            self.close()
            raise

    def _acquire_lock(self, path: str) -> None:
        """The lock on ``path`` (the resolved results file), and the removal of temporary files
        a killed writer left."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not a POSIX system: no lock
            return
        lock_path = os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.lock")
        while True:
            try:
                fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as e:
                raise InputError(
                    f"output: cannot write in {os.path.dirname(path)}: {e.strerror}", key="output"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise InputError(
                    f"output: another opsim sweep is writing {path} (lock {lock_path})", key="output"
                ) from None
            try:  # the holder before us may have removed the file after we opened it
                same = os.stat(lock_path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._lock, self._lock_path = fd, lock_path
                break
            os.close(fd)
        # temporary files of a writer that was killed mid-write (we hold the lock: no one else writes)
        d, name = os.path.split(path)
        for f in os.listdir(d):
            if f.startswith(f".{name}.") and f.endswith(".tmp"):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(d, f))

    def close(self):
        if self._lock is not None:
            if self._lock_path is not None:  # set with the lock
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self._lock_path)
            os.close(self._lock)
            self._lock = None

    def _load(self):
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(self.path)
            meta = (pf.schema_arrow.metadata or {}).get(META_KEY)
            table = pf.read()
        except Exception as e:
            raise InputError(
                f"output: {self.path} exists but is not a readable Parquet file ({e}); "
                "give another -o or --fresh to replace it",
                key="output",
            ) from None
        if meta is None:
            raise InputError(
                f"output: {self.path} exists and is not an opsim sweep result; give another -o "
                "or --fresh to replace it",
                key="output",
            )
        ids = {p.point_id for p in self.grid.points}
        keep = (
            set(_ERROR_COLUMNS)
            | {c for c, _, _ in _BASE_METRICS + _TIMED_METRICS}
            | set(_TAIL_COLUMNS)
            | {"result_json"}
        )
        records = table.to_pylist()
        for r in records:
            pid = r.get("point_id")
            if pid in ids:
                self.rows[pid] = {k: v for k, v in r.items() if k in keep}
            else:
                self.stale += 1
        if records and not self.rows:
            raise InputError(
                f"output: {self.path} holds {len(records)} results of another grid (none of its "
                "points is in this one); give another -o, or --fresh to replace it",
                key="output",
            )

    def write(self):
        if self.path is not None:
            _write_atomic(build_table(self.grid, self.rows), self.path)
