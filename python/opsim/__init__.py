"""opsim: how much of this SSD should you hold back as spare area, and what will it buy you?

The simulator lives in the Rust extension ``opsim._core``; everything that does not need it
(the planner, analytic models, measurement harness) imports without it.
"""

from __future__ import annotations

import importlib

from ._version import __version__
from .errors import (
    CapacityError,
    CommandError,
    ConfigError,
    DeviceError,
    InputError,
    InternalError,
    OpsimError,
    TraceError,
    WorkloadError,
)

#: the public API (tests/package/test_api_fuzz.py calls every function here with wrong arguments)
__all__ = [
    "CapacityError",
    "CommandError",
    "ConfigError",
    "DeviceError",
    "InputError",
    "InternalError",
    "OpsimError",
    "SimResult",
    "Simulator",
    "TraceError",
    "WorkloadError",
    "__version__",
    "simulate",
    "sweep",
]


def __getattr__(name):
    # Lazy: importing opsim must not require the compiled core.
    if name in ("simulate", "SimResult", "Simulator"):
        from . import sim as _sim  # noqa: PLC0415

        return getattr(_sim, name)
    if name == "sweep":  # opsim.sweep(grid) -> DataFrame: the package, callable (opsim/sweep/__init__.py)
        return importlib.import_module(".sweep", __name__)
    raise AttributeError(f"module 'opsim' has no attribute {name!r}")
