"""How large a datasheet's figure or a prediction's option may be, asked of the core.

A figure the simulator could not reach at any value of its parameters (4 KiB random writes at
1e308 IOPS, a rating of 1e30 drive writes a day) is refused when it is read, naming its key,
rather than fitted for seconds to a model that cannot show it.  The bound is the core's own:
a rate figure needs a host link at least that fast, and the core's range of
``timing.link_mbps`` is the fastest link it models; the host writes an endurance rating stands
for, spread over the warranty, need such a link too; a queue depth is the core's
``timing.queue_depth`` (commands in flight).  No bound is restated here: each check builds the
timing table the figure needs and lets the core's config parser accept or refuse it.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..sim import describe

#: the drive the checks describe: any valid one (only its timing table is in question)
_DRIVE = {"user_capacity": 1 << 30, "physical_capacity": 1 << 31}
SECONDS_PER_DAY = 86_400
#: no drive is warranted longer (a check of the input, not of the model: the warranty only
#: spreads the rated writes over time)
MAX_WARRANTY_YEARS = 100


def core_refusal(timing: dict) -> str | None:
    """The core's reason for refusing ``timing`` (its range, after the key), or None."""
    try:
        describe({"drive": dict(_DRIVE), "timing": timing}, model_limits=False)
    except ConfigError as e:
        return str(getattr(e, "detail", None) or e).split("; ", 1)[-1]
    return None


def link_refusal(mbps: float) -> str | None:
    """Why no host link the core models carries ``mbps`` MB/s, or None when one does."""
    why = core_refusal({"interface": "nvme", "link_mbps": min(max(mbps, 1.0), 1e300) if mbps == mbps else 1e300})
    return None if why is None else f"faster than any host link the simulator models ({why})"


def queue_depth_refusal(qd) -> str | None:
    """Why ``qd`` is not a queue depth the core runs (a whole number of commands in flight from
    1 up to its bound), or None."""
    if isinstance(qd, bool) or not isinstance(qd, int) or qd < 1:
        return f"{qd!r} is not a queue depth (a whole number of commands in flight, 1 or more)"
    why = core_refusal({"interface": "nvme", "queue_depth": qd})
    return None if why is None else f"{qd}: more commands in flight than the simulator runs ({why})"
