"""The advisor's input errors: each names the CLI option (``--min-iops``) the value came from."""

from __future__ import annotations

from ...errors import InputError, option_error


def _opt(name: str) -> str:
    return "--" + name.replace("_", "-")


#: an input error naming the option (``--min-iops: ...``)
_bad = option_error


def _as_option(option: str, fn, *args, **kw):
    """``fn(*args)``, with an input error re-raised under the command-line option's name."""
    try:
        return fn(*args, **kw)
    except InputError as e:
        raise _bad(option, str(e).split(": ", 1)[-1]) from None


def _option_for_key(key: str | None) -> str:
    k = (key or "").split(".")[-1]
    return {
        "user_capacity": "native",
        "physical_capacity": "physical",
        "gc": "gc",
        "queue_depth": "queue_depth",
        "interface": "interface",
    }.get(k, k or "preset")
