"""The typed boundary (issue 13): ``python/opsim/_core.pyi`` matches the compiled extension,
checked by mypy's stubtest against the module as built (every function, its parameters and
defaults, the Simulator class and its members)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PYTHON_DIR = Path(__file__).parent.resolve().parent.parent / "python"


@pytest.mark.slow
def test_core_stub_matches_the_extension():
    pytest.importorskip("mypy")
    p = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "opsim._core"],
        cwd=PYTHON_DIR,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stdout + p.stderr


def test_package_is_marked_typed():
    assert (PYTHON_DIR / "opsim" / "py.typed").is_file()
