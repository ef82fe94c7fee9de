"""fio replaced by its recorded output (tests/fixtures/measure): each run 'writes' the fixture's
JSON document and per-second logs where fio would, so the measurement runner runs end to end
without a device or fio."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from opsim.measure import runner
from opsim.measure.fio import parse_fio_json

FIX = Path(__file__).parent / "fixtures" / "measure"
FIO_DOC = parse_fio_json((FIX / "randwrite4k_qd32_libaio_jsonplus.json").read_text())


def replay(monkeypatch, on_run: Callable[[list], None] | None = None) -> None:
    """Patch the runner's fio; ``on_run`` is called with each run's argv."""

    def fake_run_fio(argv, json_path, timeout=None, on_tick=None, stop=None):
        if on_run is not None:
            on_run(list(argv))
        prefix = json_path[: -len(".json")]
        for kind in ("iops", "clat"):
            shutil.copy(FIX / f"randwrite4k_qd32_libaio_{kind}.1.log", f"{prefix}_{kind}.1.log")
        shutil.copy(FIX / "randwrite4k_qd32_libaio_jsonplus.json", json_path)
        return FIO_DOC

    monkeypatch.setattr(runner, "run_fio", fake_run_fio)
    monkeypatch.setattr(runner, "fio_binary", lambda: "fio")
    monkeypatch.setattr(runner, "fio_version", lambda: FIO_DOC["fio version"])
