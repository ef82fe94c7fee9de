"""Every public function of the Python API called with wrong types and out-of-range values.

The functions are enumerated from ``__all__`` of ``opsim``, ``opsim.sim`` and ``opsim.trace``,
plus every public method of ``Simulator`` and ``SimResult``: a function added later is called
too (and this test fails until it has a valid baseline call in ``BASE`` when it needs one).
Each argument in turn is replaced by each wrong value; the call must either work or raise
one of the documented exceptions of ``opsim.errors`` (never a bare TypeError, ValueError,
OverflowError, AttributeError or PyO3's RuntimeError).
"""

from __future__ import annotations

import inspect
import math
import os

import pytest

import opsim
import opsim.sim
import opsim.trace
from opsim import errors

pytest.importorskip("opsim._core")

DOCUMENTED = tuple(getattr(errors, n) for n in errors.__all__)
BAD = [None, "abc", "", b"abc", math.nan, math.inf, -math.inf, -1, -(2**70), 2**64, 1.5, [], [None], {}, {"x": 1}]
FIX = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "traces", "msr_hm_0.csv")
CFG = {
    "drive": {"user_capacity": "64MiB", "op": 0.25},
    "run": {"max_rounds": 5, "warmup_drive_writes": 0.5, "measure_drive_writes": 1, "round_drive_writes": 0.25},
}
#: the keyword options of the trace functions (``**opts``: a ``[workload.trace]`` table)
TRACE_OPTIONS = ["format", "device", "skip_bad", "columns", "delimiter", "skip_lines", "action", "speed", "bogus"]


def _model():
    return opsim.sim.describe(CFG | {"timing": {"interface": "nvme", "queue_depth": 4}})["cost_model"]


#: valid arguments for the parameters that have no default (lazily: some need the core)
BASE = {
    "simulate": lambda tmp: {"config": CFG},
    "sweep": lambda tmp: {"grid": CFG | {"sweep": {"grid": {"drive.op": [0.25]}}}, "workers": 0},
    "describe": lambda tmp: {"config": CFG},
    "costs": lambda tmp: {
        "model": _model(),
        "mix": {"write_fraction": 0.5, "units_per_io": 1, "bytes_per_io": 4096},
        "waf_gc": 1.5,
    },
    "steady_state": lambda tmp: {"values": [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]},
    "options": lambda tmp: {"path": FIX},
    "info": lambda tmp: {"path": FIX},
    "head": lambda tmp: {"path": FIX, "n": 3},
    "frame": lambda tmp: {"path": FIX, "n": 3},
    "convert": lambda tmp: {"path": FIX, "out": str(tmp / "out.iolog")},
    "synth": lambda tmp: {"out": str(tmp / "s.iolog"), "span": 1 << 20, "count": 10},
    "Simulator": lambda tmp: {"config": CFG},
    "SimResult": lambda tmp: {"data": opsim.simulate(CFG).data},
    # Simulator methods
    "write": lambda tmp: {"lba": 0, "sectors": 8},
    "read": lambda tmp: {"lba": 0, "sectors": 8},
    "trim": lambda tmp: {"lba": 0, "sectors": 8},
    "read_token": lambda tmp: {"lba": 0},
    "set_max_address": lambda tmp: {"sectors": 1000},
    "run_for": lambda tmp: {"host_bytes": 1 << 20},
}
#: arguments not fuzzed here: matplotlib owns ``ax`` and the styling keywords of a plot (its
#: ``kind`` is fuzzed); a sweep's ``workers``, ``scheduler`` and ``client`` start or reach a
#: Dask cluster (a wrong type is refused by tests/sweep/test_sweep.py; a huge count would start
#: that many processes)
NOT_FUZZED = {"SimResult.plot": {"ax", "options"}, "opsim.sweep": {"workers", "scheduler", "client"}}


def _functions():
    """(name, callable or a factory of a bound method) for the whole public API."""
    out = {}
    for mod in (opsim, opsim.sim, opsim.trace):
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            if callable(obj):
                out[f"{mod.__name__}.{name}"] = (name, obj)
    for cls, make in ((opsim.sim.Simulator, lambda: opsim.sim.Simulator(CFG)), (opsim.sim.SimResult, None)):
        for name, fn in inspect.getmembers(cls, inspect.isfunction):
            if not name.startswith("_"):
                out[f"{cls.__name__}.{name}"] = (name, (make or (lambda: opsim.simulate(CFG)), fn))
    return sorted(out.items())


def _target(obj):
    if isinstance(obj, tuple):
        make, fn = obj
        inst = make()
        return getattr(inst, fn.__name__), fn
    return obj, obj


def _calls(qual, name, obj, tmp_path):
    """Every (description, callable, kwargs) with one argument replaced by a wrong value."""
    fn, sig_of = _target(obj)
    sig = inspect.signature(sig_of)
    params = [p for p in sig.parameters.values() if p.name != "self"]
    required = {p.name for p in params if p.default is p.empty and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
    base = BASE[name](tmp_path) if name in BASE else {}
    missing = required - set(base)
    assert not missing, f"{qual}: add a valid baseline for {sorted(missing)} to BASE in this test"
    names = [p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    if any(p.kind == p.VAR_KEYWORD for p in params) and name in ("options", "info", "head", "frame", "convert"):
        names += TRACE_OPTIONS
    names = [n for n in names if n not in NOT_FUZZED.get(qual, set())]
    for arg in names:
        for bad in BAD:
            yield f"{qual}({arg}={bad!r})", fn, base | {arg: bad}


def _check(desc, fn, kwargs):
    try:
        fn(**kwargs)
    except DOCUMENTED:
        pass
    except Exception as e:
        pytest.fail(f"{desc} raised {type(e).__name__}: {e}")


API = _functions()


def test_the_enumeration_finds_the_api():
    names = {q for q, _ in API}
    for q in ("opsim.simulate", "opsim.sim.steady_state", "opsim.trace.head", "Simulator.run_for", "SimResult.plot"):
        assert q in names, q


@pytest.mark.parametrize("qual,entry", API, ids=[q for q, _ in API])
def test_wrong_arguments_raise_only_documented_errors(qual, entry, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name, obj = entry
    if isinstance(obj, tuple):
        # one instance per call: a refused call must not depend on what an earlier one did
        make, fn = obj
        for desc, _, kwargs in _calls(qual, name, obj, tmp_path):
            _check(desc, getattr(make(), fn.__name__), kwargs)
    else:
        for desc, fn, kwargs in _calls(qual, name, obj, tmp_path):
            _check(desc, fn, kwargs)


def test_out_of_range_values_name_the_argument(tmp_path):
    cases = [
        (lambda: opsim.trace.head(FIX, -1), "n"),
        (lambda: opsim.trace.convert(FIX, tmp_path / "o.iolog", version=256), "version"),
        (lambda: opsim.sim.steady_state([1.0] * 6, window=-1), "window"),
        (lambda: opsim.sim.steady_state("abc"), "values"),
        (lambda: opsim.trace.info(os.fsencode(FIX)), "path"),
        (lambda: opsim.trace.info(FIX, skip_lines=-5), "trace.skip_lines"),
        (lambda: opsim.sim.costs(_model(), {"write_fraction": "x"}, 1.0), "mix.write_fraction"),
        (lambda: opsim.sim.describe(CFG, users=[-1]), "users[0]"),
        (lambda: opsim.sim.Simulator(CFG).set_max_address(10, volatile="no"), "volatile"),
    ]
    for call, key in cases:
        with pytest.raises(errors.InputError) as ei:
            call()
        assert ei.value.key == key, (key, str(ei.value))
        assert str(ei.value).startswith(key), str(ei.value)
        assert "line 1 column" not in str(ei.value)
