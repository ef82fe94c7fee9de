"""The output directory of ``opsim measure``: an earlier measurement's files, refused or (with
``--replace``) deleted before the new run writes its own."""

from __future__ import annotations

import os
import re

from ..errors import ConfigError

#: the files a measurement writes in its output directory (the scratch file aside):
#: result.json, SMART snapshots, and each round's fio JSON and logs (finished or ``.partial``)
RESULT_FILES = re.compile(
    r"(result|smart-before|smart-after|smart-(before|after)-\d{3})\.json"
    r"|(round-\d{3}(-\w+-r\d+w\d+)?|fill|precondition)(\.partial)?(\.json|_[a-z]+(\.\d+)?\.log)"
)


def previous_results(outdir: str, replace: bool) -> list[str]:
    """The files of an earlier measurement in ``outdir``: refused without ``replace`` (a run
    would mix its rounds with the old ones and replace result.json); with it, returned for
    :func:`clear` to delete."""
    try:
        found = sorted(n for n in os.listdir(outdir) if RESULT_FILES.fullmatch(n))
    except OSError:  # not there yet (check_writable_dir has checked the rest)
        return []
    if found and not replace:
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        raise ConfigError(
            f"--output-dir: {outdir} already holds a measurement's results ({found[0]}{more}); give "
            "another directory, or add --replace to delete them and measure again",
            key="output-dir",
        )
    return found


def clear(outdir: str, names: list[str]) -> None:
    """Delete an earlier measurement's files, result.json first."""
    for n in sorted(names, key=lambda n: n != "result.json"):
        os.remove(os.path.join(outdir, n))
