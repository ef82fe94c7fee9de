import os
import signal
import sys
from pathlib import Path

import pytest

import xdist_groups
from support import drive_config

# The tests live in one folder a room of the package (tests/<room>/); a test may import another's
# helpers by module name (``from test_smart_waf import MICRON``), as when they shared one folder.
sys.path[:0] = sorted(
    str(d)
    for d in Path(__file__).parent.iterdir()
    if d.is_dir() and d.name not in ("artifacts", "fixtures", "vm", "__pycache__")
)

# A test run started in the background of a non-interactive shell inherits SIGINT ignored, and
# so would every opsim it starts (an ignored signal survives exec): the Ctrl-C tests need it live.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")


@pytest.fixture
def cfg_factory():
    return drive_config


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") == "loadgroup":  # make test's: the io group on one worker (tests/xdist_groups.py)
        return xdist_groups.make_scheduler(config, log)
    return None


def pytest_collection_modifyitems(config, items):
    xdist_groups.check_io_files(items)
    if os.environ.get("PYTEST_XDIST_WORKER"):  # the long tests first, so that none is left for the end
        items.sort(key=lambda i: i.get_closest_marker("slow") is None)
