"""The opsim exception hierarchy.

One hierarchy serves the Rust core (the binding maps every core error kind to one of
these classes) and the pure-Python parts (planner, measurement harness).  Every
class carries an exit code for the CLI: 2 for bad input, 1 for anything else.

    OpsimError                       exit 1
    ├── InputError (ValueError)      exit 2   bad input of any kind
    │   ├── ConfigError                       a config key or value
    │   │   ├── SchemaError                   a value of the wrong type or spelling
    │   │   │   └── UnknownKeyError           a key the schema does not have
    │   │   ├── CapacityError                 sizes, OP, geometry, memory
    │   │   └── WorkloadError                 workload parameters
    │   ├── TraceError                        a trace file (names file and line)
    │   └── DeviceError                       a device path or a refused device action
    ├── CommandError                 exit 1   an external tool (fio, smartctl...) failed
    └── InternalError                exit 1   a bug in opsim (invariant violation, Rust panic)
"""

from __future__ import annotations


class OpsimError(Exception):
    """Base class of every error opsim raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, *, key: str | None = None, detail: str | None = None):
        super().__init__(message)
        self.key = key
        #: the message without the key in front (``str(e)`` is "key: detail" for core errors)
        self.detail = message if detail is None else detail


class InputError(OpsimError, ValueError):
    """The user's input is wrong; the message names the field, key or line."""

    exit_code = 2


class ConfigError(InputError):
    """A configuration key is unknown, missing or has an impossible value."""


class SchemaError(ConfigError):
    """The config does not fit the schema: a value of the wrong type or spelling, a missing
    key, an unknown preset (the core's ``Schema::Value``)."""


class UnknownKeyError(SchemaError):
    """The config names a key the schema does not have."""


class CapacityError(ConfigError):
    """Sizes, OP or geometry are impossible, or the model would not fit in memory."""


class WorkloadError(ConfigError):
    """Workload parameters are invalid."""


class TraceError(InputError):
    """A block trace cannot be read (the message names the file and line)."""


class DeviceError(InputError):
    """A device path is invalid, or an action on a device was refused for safety."""


class CommandError(OpsimError):
    """An external command (fio, smartctl, nvme, hdparm...) failed."""


class InternalError(OpsimError):
    """A bug in opsim: an invariant was violated or the Rust core panicked."""


def option_error(option: str, msg: str) -> InputError:
    """An input error naming the command-line option its value came from: ``--read-write: ...``
    for ``option`` ``read_write`` (the error's key)."""
    return InputError(f"--{option.replace('_', '-')}: {msg}", key=option)


__all__ = [
    "CapacityError",
    "CommandError",
    "ConfigError",
    "DeviceError",
    "InputError",
    "InternalError",
    "OpsimError",
    "SchemaError",
    "TraceError",
    "UnknownKeyError",
    "WorkloadError",
]
