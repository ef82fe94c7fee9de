"""``lsblk -J -b [-O]`` output: a flat list of block devices.

Sizes come as numbers (util-linux >= 2.33) or strings (older); both ``mountpoint`` and
``mountpoints`` (util-linux >= 2.37) are read.
"""

from __future__ import annotations

from ..errors import InputError
from ..toolio import to_int
from .jsondoc import json_object


def _devices(devs, where: str) -> list[dict]:
    """``blockdevices`` or ``children``: a list of objects, or an InputError saying where not."""
    if not isinstance(devs, list) or not all(isinstance(d, dict) for d in devs):
        raise InputError(f"lsblk: {where} is not a list of devices (is this `lsblk -J -b` output?)", key="lsblk")
    return devs


def parse_lsblk(text) -> list[dict]:
    """``lsblk -J -b [-O]`` -> a flat list of devices (children carry ``parent``)."""
    doc = json_object(text, "lsblk")
    if "blockdevices" not in doc:
        raise InputError('lsblk: no "blockdevices" list (is this `lsblk -J -b` output?)', key="lsblk")
    out = []

    def walk(devs, parent=None, where="blockdevices"):
        for d in _devices(devs, where):
            mps = d.get("mountpoints")
            if mps is None:
                mps = [d.get("mountpoint")]
            mps = [m for m in mps if m]
            name = d.get("name") or d.get("kname")
            out.append(
                {
                    "name": name,
                    "path": d.get("path") or (f"/dev/{name}" if name else None),
                    "type": d.get("type"),
                    "size": to_int(d.get("size")),
                    "mountpoints": mps,
                    "fstype": d.get("fstype"),
                    "log_sec": to_int(d.get("log-sec")),
                    "phy_sec": to_int(d.get("phy-sec")),
                    "tran": d.get("tran"),
                    "rota": d.get("rota") in (True, "1", 1),
                    "model": (d.get("model") or "").strip() or None,
                    "serial": d.get("serial"),
                    "disc_gran": to_int(d.get("disc-gran")),
                    "disc_max": to_int(d.get("disc-max")),
                    "parent": parent,
                }
            )
            if d.get("children") is not None:
                walk(d["children"], name, f"the children of {name}")

    walk(doc["blockdevices"])
    return out
