"""The package's layout (issues 13 and 37): no import cycle among opsim's modules, the CLI layer
(``opsim.commands``, ``opsim.cli``) imported by nothing else, few imports inside functions, and
one version for the Python package and the Rust core.  Imports are read from the source (every
``import`` statement, lazy ones inside functions included), so a cycle hidden in a function body
counts too; so does one through a package's ``__init__``: importing ``a.b.c`` runs ``a.b``'s
``__init__``, and a package's ``__init__`` re-exporting its parts imports them.  The layers
themselves are pyproject.toml's import-linter contract (``make lint``; ARCHITECTURE.md)."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).parent.resolve().parent.parent / "python" / "opsim"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    """Every module: the Python files and the compiled core (``opsim._core``, whose stub is
    ``_core.pyi``; it imports nothing of opsim's)."""
    return {_module_name(p): p for p in [*PKG.rglob("*.py"), *PKG.glob("*.pyi")]}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The opsim modules ``name`` imports (a ``from X import y`` counts as X.y when that is a
    module, else X)."""
    if path.suffix == ".pyi":
        return set()
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
    # importing a.b.c runs the packages a.b on the way (but not the importer's own packages,
    # which are being imported already when it runs)
    for mod in list(out):
        parts = mod.split(".")
        out.update(".".join(parts[:i]) for i in range(2, len(parts)))
    return {m for m in out if m != name and not name.startswith(m + ".")}


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


def test_the_graph_is_read():
    g = _graph()
    assert ("opsim.cli" in g and "opsim.commands.simulate" in g["opsim.cli"]) or "opsim.commands" in g["opsim.cli"]
    assert "opsim._output" in g["opsim.commands.simulate"]


def test_no_import_cycle():
    """Counting a package's edges to its submodules: a submodule importing its own package's
    ``__init__`` (``from . import calibrate``) that re-exports a module importing the submodule
    is a cycle too."""
    assert _cycles(_graph()) == []


def test_a_cycle_through_a_package_init_is_found():
    graph = {
        "opsim.p": {"opsim.p.a"},  # the __init__ re-exports a
        "opsim.p.a": {"opsim.p.b"},
        "opsim.p.b": {"opsim.p"},  # b imports the package (from . import x)
    }
    assert _cycles(graph) == [["opsim.p", "opsim.p.a", "opsim.p.b"]]


def test_the_graph_counts_packages_on_the_way():
    """``from ..calibrate.model import x`` imports the package ``opsim.calibrate`` too."""
    g = _graph()
    assert {"opsim.calibrate.model", "opsim.calibrate"} <= g["opsim.validation.waf_floor"]


#: imports inside functions: only where a lazy import buys a command's start-up time (heavy
#: libraries a command does not need, a command's own implementation) or lets ``import opsim`` work
#: without the compiled core; each says so (ruff PLC0415 in ``make lint``)
MAX_LOCAL_IMPORTS = 63  # 60, then calibrate's scipy (fit, the priors' t, the profile's ends): 1.05 -> 0.29 s


def _local_imports() -> list[str]:
    out = []
    for path in PKG.rglob("*.py"):
        for fn in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out += [
                    f"{path.relative_to(PKG)}:{n.lineno}"
                    for n in ast.walk(fn)
                    if isinstance(n, (ast.Import, ast.ImportFrom))
                ]
    return sorted(set(out))


def test_few_imports_inside_functions():
    local = _local_imports()
    assert local, "the finder finds none: it is broken"
    assert len(local) <= MAX_LOCAL_IMPORTS, local


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


#: the longest function (tests aside): the brief's rule, beside ruff's statement count (PLR0915)
MAX_FUNCTION_LINES = 120


def test_no_function_above_120_lines():
    long = []
    for path in [*PKG.rglob("*.py"), *(PKG.parent.parent / "tools").rglob("*.py")]:
        for fn in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
                if fn.end_lineno - first + 1 > MAX_FUNCTION_LINES:
                    long.append(f"{path.name}:{fn.lineno} {fn.name} ({fn.end_lineno - first + 1} lines)")
    assert long == []


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
