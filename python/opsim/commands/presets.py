"""``opsim presets [NAME | FILE]``: the drive presets, every parameter with its source; a drive
file (a TOML file in the presets' schema) shown the same way."""

from __future__ import annotations

from .._output import Output, table
from ..presets import get, load, title


def register(sub, common):
    p = sub.add_parser(
        "presets",
        parents=[common],
        help="list drive presets (the seeds' drives), or show one with every parameter's source",
    )
    p.add_argument(
        "name",
        nargs="?",
        metavar="NAME|FILE",
        help="a preset to show in full, or a drive file (a path that contains / or ends in .toml)",
    )
    p.set_defaults(func=run)


def run(args) -> Output:
    presets = load()
    if not args.name:
        rows = []
        for p in presets:
            s = p["settings"]
            d, t = s["drive"], s.get("timing", {})
            fitted = [k for k, v in p["meta"]["sources"].items() if str(v).startswith("fitted")]
            rows.append(
                [
                    p["name"],
                    str(d["user_capacity"]),
                    str(d.get("physical_capacity", "-")),
                    t.get("interface", "-"),
                    t.get("cell", "-"),
                    t.get("channels", 0) * t.get("dies_per_channel", 0),
                    ", ".join(fitted) or "-",
                ]
            )
        text = table(
            ["preset", "user", "NAND", "interface", "cell", "dies", "fitted"],
            rows,
            title='Drive presets (use: preset = "NAME" at the top of a config, or preset = "./drive.toml" for a '
            "drive file in the same schema; `opsim presets NAME` shows every source)",
        )
        return Output(data={"presets": presets}, text=text)
    p = get(args.name)
    sources = p["meta"].get("sources", {})
    rows = []
    for section, values in p["settings"].items():
        for k, v in values.items():
            key = f"{section}.{k}"
            rows.append([key, str(v), sources.get(key, "-")])
    heading = title(p) + (f"\n(drive file {p['path']})" if "path" in p else "")
    text = table(["parameter", "value", "source"], rows, align="lrl", title=heading)
    return Output(data=p, text=text)
