"""The package's layout (issue 13): no import cycle among opsim's modules, the CLI layer
(``opsim.commands``, ``opsim.cli``) imported by nothing else, and one version for the Python
package and the Rust core.  Imports are read from the source (every ``import`` statement,
lazy ones inside functions included), so a cycle hidden in a function body counts too."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "python" / "opsim"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PKG.rglob("*.py")}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The opsim modules ``name`` imports (a ``from X import y`` counts as X.y when that is a
    module, else X)."""
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                if f"{mod}.{a.name}" in known:
                    out.add(f"{mod}.{a.name}")
                elif mod in known:
                    out.add(mod)
    out.discard(name)
    return out


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {n: _imports(n, p, known) for n, p in mods.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _package_edges(graph):
    """Edges between a package and its own submodules are not cycles of concern: a package's
    ``__init__`` re-exporting its parts is the usual layout.  Drop them."""
    return {v: {w for w in ws if not (w.startswith(v + ".") or v.startswith(w + "."))} for v, ws in graph.items()}


def test_the_graph_is_read():
    g = _graph()
    assert ("opsim.cli" in g and "opsim.commands.simulate" in g["opsim.cli"]) or "opsim.commands" in g["opsim.cli"]
    assert "opsim._output" in g["opsim.commands.simulate"]


def test_no_import_cycle():
    assert _cycles(_package_edges(_graph())) == []


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_nothing_outside_the_cli_layer_imports_it():
    offenders = sorted(
        f"{v} -> {w}"
        for v, ws in _graph().items()
        for w in ws
        if (w == "opsim.commands" or w.startswith("opsim.commands.") or w == "opsim.cli")
        and not (v == "opsim.cli" or v.startswith("opsim.commands"))
    )
    assert offenders == []


def test_python_and_core_versions_agree():
    from opsim import _core
    from opsim._version import __version__

    assert __version__ == _core.__version__


# --------------------------------------------------------------------------- the Rust core

CORE_SRC = PKG.parent.parent / "crates" / "opsim-core" / "src"


def _without_tests(text: str) -> str:
    """Rust source without its ``#[cfg(test)]`` items (test modules sit at a file's end by
    this crate's convention; a test may use what the code it tests may not)."""
    i = text.find("#[cfg(test)]")
    return text if i < 0 else text[:i]


def _core_graph() -> dict[str, set[str]]:
    """Top-level module -> the top-level modules its code (outside tests) names as ``crate::X``."""
    import re

    mods: dict[str, list[Path]] = {}
    for p in CORE_SRC.iterdir():
        if p.name == "lib.rs":
            continue
        name = p.stem if p.is_file() else p.name
        mods[name] = [p] if p.is_file() else sorted(p.rglob("*.rs"))
    graph = {}
    for name, files in mods.items():
        text = "\n".join(_without_tests(f.read_text()) for f in files)
        text = re.sub(r"//.*", "", text)  # doc links and comments name modules without using them
        used = set(re.findall(r"\bcrate::(\w+)", text))
        for group in re.findall(r"\bcrate::\{([^}]*)\}", text):
            used.update(w.split("::")[0].strip() for w in group.split(","))
        graph[name] = {u for u in used if u in mods and u != name}
    return graph


def test_core_graph_is_read():
    g = _core_graph()
    assert {"sim", "ftl", "config", "trace", "workload", "timed"} <= set(g)
    assert "ftl" in g["sim"] and "config" in g["geometry"]


def test_no_import_cycle_among_the_core_modules():
    assert _cycles(_core_graph()) == []
