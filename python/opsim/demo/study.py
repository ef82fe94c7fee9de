"""The drive the demo studies (the default or a drive file), its two workloads and the
config of every run: each OP level under each workload."""

from __future__ import annotations

from dataclasses import dataclass

from .. import presets
from ..errors import InputError, OpsimError
from .levels import NAND, PRESET, SECTOR, levels, levels_for, marketed_gb

#: (key, label, workload table, run table)
WORKLOADS = [
    (
        "random-write",
        "4 KiB random write, QD32",
        {"type": "uniform", "read_fraction": 0.0},
        {"precondition": "fill", "warmup_drive_writes": 2, "measure_drive_writes": 1.5, "round_drive_writes": 0.25},
    ),
    (
        "read-heavy",
        "4 KiB random 95:5 read:write, QD32",
        {"type": "uniform", "read_fraction": 0.95},
        {
            "precondition": "analytic",
            "warmup_drive_writes": 0.1,
            "measure_drive_writes": 0.5,
            "round_drive_writes": 0.1,
        },
    ),
]


@dataclass(frozen=True)
class Study:
    """The drive the demo studies: the default (the Samsung 840 Pro preset as the seeds'
    256 GB-class drive) or a drive file."""

    preset: str  #: what the configs' ``preset`` names: a preset, or a drive file's absolute path
    nand: int  #: bytes of NAND
    levels: list  #: (label, user sectors, source), native first
    drive: str  #: the drive in the titles ("a 256 GB-class SSD")
    nand_text: str  #: its NAND ("256 GiB of NAND")
    native_text: str  #: what "held back" is of ("the native 256 GB LBAs")
    default_scale: int  #: --scale when not given
    drive_file: str | None = None

    @property
    def what(self) -> str:
        """The preset or drive file, as the titles name it."""
        return f"preset {PRESET}" if self.drive_file is None else f"drive file {self.drive_file}"


def default_study() -> Study:
    return Study(
        preset=PRESET,
        nand=NAND,
        levels=levels(),
        drive="a 256 GB-class SSD",
        nand_text="256 GiB of NAND",
        native_text="the native 256 GB LBAs",
        default_scale=16,
    )


def drive_study(path: str) -> Study:
    """The study of the drive file at ``path``; errors (exit 2) name ``--drive`` and the file."""
    try:
        p = presets.drive_file(path, key="drive")
        user, nand = presets.user_bytes(p["path"]), presets.physical_bytes(p["path"])
    except OpsimError as e:
        raise InputError(f"--drive: {e.detail}", key="drive", detail=e.detail) from None
    if nand <= user:
        raise InputError(f"--drive: {path}: the NAND ({nand:,} bytes) is not more than the user capacity", key="drive")
    native = user // SECTOR
    return Study(
        preset=p["path"],
        nand=nand,
        levels=levels_for(native, nand),
        drive=presets.title(p),
        nand_text=f"{nand / 2**30:g} GiB of NAND",
        native_text=f"the native {marketed_gb(native * SECTOR)} GB LBAs",
        default_scale=max(1, round(nand / (16 * 2**30))),
        drive_file=p["path"],
    )


def configs(study: Study, scale: int, seed: int, pages_per_block: int | None = None) -> list[tuple[int, str, dict]]:
    """(level index, workload key, config) for every run of ``study`` on its 1/``scale``
    model (``pages_per_block``: the FTL block, default the preset's)."""
    page = 4096
    out = []
    for i, (_label, sectors, _source) in enumerate(study.levels):
        user_model = sectors * SECTOR // scale // page * page
        drive = {"user_capacity": user_model, "physical_capacity": study.nand // scale}
        if pages_per_block:
            drive["pages_per_block"] = pages_per_block
        for key, _wl_label, wl, run_t in WORKLOADS:
            out.append(
                (
                    i,
                    key,
                    {
                        "preset": study.preset,
                        "drive": dict(drive),
                        "workload": dict(wl),
                        "run": {"seed": seed, **run_t},
                    },
                )
            )
    return out
