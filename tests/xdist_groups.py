"""How `make test` spreads the suite over the machine's cores (pytest-xdist, ``-n auto --dist loadgroup``).

Every test runs on its own, on whichever worker is free, except the tests that use the machine
itself: the QEMU guests of tests/vm/ (a guest under software emulation keeps a core busy for minutes)
and the real fio runs (``@pytest.mark.fio``).  They form one group, run one after the other on one
worker, so they never compete with each other; being the largest unit of work, the group starts
first, and the other worker(s) take the rest meanwhile.

pytest-xdist's own ``xdist_group`` mark does not work with pytest 9 (xdist 3.8 renames the item's
``_nodeid``, which pytest 9 no longer reads), so the group is named here by file, for the scheduler,
which sees only test ids: :data:`IO_FILES`.  ``check_io_files`` (called at collection) keeps the
list true: a fio test outside those files is an error."""

from __future__ import annotations

import pytest

#: the group of the tests that use the machine (guests, real fio)
IO_GROUP = "io"

#: test files whose tests all run in the io group: the guests, and every file with a fio test
IO_FILES = (
    "tests/vm/",
    "tests/calibrate/test_calibrate_roundtrip.py",
    "tests/measure/test_hardening_measure.py",
    "tests/measure/test_measure_fio.py",
    "tests/measure/test_measure_fio_progress.py",
    "tests/measure/test_measure_schema.py",
    "tests/workload/test_fio_jobs.py",
)


def group_of(nodeid: str) -> str:
    """The scheduling unit of a test: the io group, or the test itself."""
    return IO_GROUP if nodeid.startswith(IO_FILES) else nodeid


def check_io_files(items: list) -> None:
    stray = [i.nodeid for i in items if i.get_closest_marker("fio") and group_of(i.nodeid) != IO_GROUP]
    if stray:
        raise pytest.UsageError(f"fio tests outside xdist_groups.IO_FILES (add their files there): {stray[:5]}")


def make_scheduler(config, log):
    """The loadgroup scheduler with :func:`group_of` as its grouping (``pytest_xdist_make_scheduler``)."""
    from xdist.scheduler import LoadScopeScheduling

    class IoGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return IoGroupScheduling(config, log)
