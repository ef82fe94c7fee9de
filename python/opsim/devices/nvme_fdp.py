"""NVMe Flexible Data Placement (FDP, TP4146) as nvme-cli reports it: the FDP bits of
``nvme id-ctrl`` and the configuration log of ``nvme fdp configs`` (read-only; the procedure that
uses them is :mod:`opsim.planner.fdp`)."""

from __future__ import annotations

import subprocess
from typing import Any

from .. import childproc
from ..errors import InputError
from ..toolio import extract_json, to_int
from .probe import find_tool

#: Identify Controller CTRATT bits: Flexible Data Placement supported, Endurance Groups supported
CTRATT_FDPS = 1 << 19
CTRATT_ENDGRPS = 1 << 4
#: Identify Controller OACS bit 3: Namespace Management and Attachment
OACS_NS_MGMT = 1 << 3
#: FDP configuration descriptor, FDP Attributes bit 7: the configuration is valid
FDPA_VALID = 1 << 7
#: Reclaim Unit Handle Type in the configuration log
RUH_TYPES = {1: "initially isolated", 2: "persistently isolated"}


def fdp_support(id_ctrl: Any) -> dict:
    """FDP-related Identify Controller bits from ``nvme id-ctrl -o json`` (text or parsed)."""
    d = extract_json(id_ctrl, "nvme id-ctrl")
    ctratt = to_int(d.get("ctratt"))
    oacs = to_int(d.get("oacs"))
    return {
        "ctratt": ctratt,
        "fdps": None if ctratt is None else bool(ctratt & CTRATT_FDPS),
        "endurance_groups": None if ctratt is None else bool(ctratt & CTRATT_ENDGRPS),
        "ns_management": None if oacs is None else bool(oacs & OACS_NS_MGMT),
    }


def parse_fdp_configs(text: Any) -> list[dict]:
    """``nvme fdp configs DEV --endgrp-id=N -o json``: one dict per configuration, in log order
    (the position is the index ``--enable-conf-idx`` takes)."""
    d = extract_json(text, "nvme fdp configs", accept=lambda o: isinstance(o, dict) and "configs" in o)
    configs = d.get("configs")
    if not isinstance(configs, list) or not configs:
        raise InputError("nvme fdp configs: the log lists no configuration", key="fdp_configs")
    out = []
    for i, c in enumerate(configs):
        if not isinstance(c, dict):
            raise InputError(f"nvme fdp configs: configuration {i} is not an object", key="fdp_configs")
        fdpa = to_int(c.get("fdpa"))
        ruhs = [to_int(r.get("ruht")) for r in c.get("ruhs") or [] if isinstance(r, dict)]
        out.append(
            {
                "index": i,
                "fdpa": fdpa,
                "valid": None if fdpa is None else bool(fdpa & FDPA_VALID),
                "rgif": None if fdpa is None else fdpa & 0xF,
                "nrg": to_int(c.get("nrg")),
                "nruh": to_int(c.get("nruh")),
                "nnss": to_int(c.get("nnss")),
                "runs": to_int(c.get("runs")),
                "erutl": to_int(c.get("erutl")),
                "ruh_types": [RUH_TYPES.get(t, f"type {t}") if t is not None else None for t in ruhs],
            }
        )
    return out


def read_fdp_configs(ctrl: str, endgrp: int, timeout: float = 20) -> tuple[str | None, str | None]:
    """Run ``nvme fdp configs`` (a Get Log Page: read-only); (output, None) or (None, why not)."""
    exe = find_tool("nvme")
    if exe is None:
        return None, "nvme-cli is not installed: the FDP configurations were not read"
    cmd = [exe, "fdp", "configs", ctrl, f"--endgrp-id={endgrp}", "-o", "json"]
    try:
        r = childproc.run(cmd, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"nvme fdp configs {ctrl}: {e}"
    if r.returncode != 0 or not r.stdout.strip():
        why = (r.stderr or r.stdout).strip()[:200]
        return None, f"nvme fdp configs {ctrl} failed (exit {r.returncode}): {why} (no FDP on this drive?)"
    return r.stdout, None
