"""Issue 12 items 9 to 11 (core and binding): memory refusals that name the memory and the
process limits, a read-only trace that has no WAF, and a simulator left unusable by a panic.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest

import opsim
from opsim.errors import CapacityError, InputError, InternalError

FIXTURES = Path(__file__).parent.parent / "fixtures" / "traces"


def cli(*args: str, preexec_fn=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "opsim.cli", *args],
        capture_output=True,
        text=True,
        preexec_fn=preexec_fn,
        timeout=120,
        check=False,
    )


# ---------------------------------------------------------------- item 9: memory


def test_address_space_limit_refuses_a_2tib_drive_with_advice(tmp_path):
    cfg = tmp_path / "big.toml"
    cfg.write_text('[drive]\nuser_capacity = "2TiB"\nop = 0.07\n')

    def limit():  # ulimit -v 3 GiB: the model (about 4.6 GB) does not fit
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    p = cli("simulate", str(cfg), preexec_fn=limit)
    assert p.returncode == 2, (p.returncode, p.stderr)
    err = p.stderr
    assert "drive.user_capacity" in err and "of memory" in err
    assert "address-space limit (ulimit -v)" in err
    assert "smaller user_capacity" in err and "scale model" in err


def test_100pb_is_refused_for_its_memory():
    with pytest.raises(CapacityError) as e:
        opsim.simulate({"drive": {"user_capacity": "100PB", "op": 0.07}})
    msg = str(e.value)
    assert e.value.key == "drive.user_capacity"
    assert "needs about" in msg and "TB of memory" in msg and "more than the limit of" in msg, msg
    assert "NAND block" not in msg


def test_past_the_32_bit_page_numbers_is_a_clear_capacity_error():
    # memory allowed: the mapping tables' 2^32 pages are the limit, said with the numbers
    for drive, key in [
        ({"physical_capacity": "18000PB", "op": 0.07}, "drive.page_size"),
        ({"user_capacity": "100PB", "op": 0.07, "page_size": "1MiB"}, "drive.user_capacity"),
    ]:
        with pytest.raises(CapacityError) as e:
            opsim.simulate({"drive": drive, "run": {"memory_limit": "18000PB"}})
        assert e.value.key == key
        assert "2^32-page limit" in str(e.value) and "physical pages" in str(e.value)


# ---------------------------------------------------------------- item 10: read-only traces


@pytest.fixture
def reads_only(tmp_path) -> Path:
    """A valid MSR trace of reads only, and a config replaying it on a fresh drive."""
    src = (FIXTURES / "msr_hm_0.csv").read_text().splitlines()
    lines = [",".join([*f[:3], "Read", *f[4:]]) for f in (line.split(",") for line in src)]
    (tmp_path / "reads.csv").write_text("\n".join(lines) + "\n")
    cfg = tmp_path / "reads.toml"
    cfg.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = 0.28\n[workload]\ntype = "trace"\n'
        '[workload.trace]\npath = "reads.csv"\nremap = "wrap"\n'
        '[run]\nprecondition = "none"\nwarmup_drive_writes = 0\n'
    )
    return cfg


@pytest.mark.slow
def test_a_read_only_trace_simulates_with_an_undefined_waf(reads_only, tmp_path):
    p = cli("simulate", str(reads_only), "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["waf"] is None and d["measure_window"]["host_write_bytes"] == 0
    assert d["trace"]["records"] > 0 and d["counters"]["host_read_bytes"] > 0
    p = cli("simulate", str(reads_only))
    assert p.returncode == 0, p.stderr
    assert "undefined: no host writes in the measurement window" in p.stdout
    r = opsim.simulate(reads_only)
    assert r.waf is None
    assert repr(r).startswith("SimResult(waf=None,")
    # report and plots of it
    res = tmp_path / "reads.json"
    res.write_text(json.dumps(d))
    p = cli("report", str(res), "-o", str(tmp_path / "r.html"))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "r.html").stat().st_size > 0
    for kind in ("waf-op", "endurance"):
        p = cli("plot", kind, str(res), "-o", str(tmp_path / f"{kind}.png"))
        assert p.returncode == 2 and "WAF undefined" in p.stderr, (kind, p.stderr)
    p = cli("plot", "wear", str(res), "-o", str(tmp_path / "wear.png"))
    assert p.returncode == 0, p.stderr


# ---------------------------------------------------------------- item 11: the binding


SMALL = {"drive": {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 64}, "run": {"precondition": "none"}}


def test_a_panic_leaves_the_simulator_unusable():
    s = opsim.Simulator(SMALL)
    s.write(0, 8)
    if not hasattr(s._s, "_test_panic"):
        pytest.fail("the extension was built without its test hooks (opsim-py feature test-hooks)")
    with pytest.raises(InternalError) as e:
        s._s._test_panic()
    assert "panicked" in str(e.value) and "unusable" in str(e.value)
    for call in (
        lambda: s.write(0, 8),
        lambda: s.read(0, 8),
        s.power_cycle,
        lambda: s.counters,
        lambda: s.run_for(4096),
        s.check,
        lambda: s.max_address,
    ):
        with pytest.raises(InternalError, match="unusable after an internal error"):
            call()
    # another simulator is not affected
    opsim.Simulator(SMALL).write(0, 8)


def test_power_cycle_is_guarded_and_keeps_working():
    s = opsim.Simulator(SMALL)
    s.set_max_address(1000, volatile=True)
    s.power_cycle()
    assert s.max_address == 64 * 2**20 // 512


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda s: s.write(-1, 8), "lba"),
        (lambda s: s.write(0, -8), "sectors"),
        (lambda s: s.write(0, 8, -1), "stream"),
        (lambda s: s.write(0, 8, 2**32), "stream"),
        (lambda s: s.read(2**64, 8), "lba"),
        (lambda s: s.trim(0, -1), "sectors"),
        (lambda s: s.read_token(-5), "lba"),
        (lambda s: s.set_max_address(-1), "sectors"),
        (lambda s: s.run_for(-4096), "host_bytes"),
        (lambda s: s.write("0", 8), "lba"),
    ],
)
def test_bad_arguments_are_input_errors_naming_them(call, name):
    s = opsim.Simulator(SMALL)
    with pytest.raises(InputError) as e:
        call(s)
    assert e.value.key == name and str(e.value).startswith(f"{name}: ")
    s.write(0, 8)  # nothing happened to the drive


def test_on_interrupt_is_checked():
    with pytest.raises(InputError, match="on_interrupt"):
        opsim.simulate(SMALL, on_interrupt="ignore")


def test_the_binding_raises_only_typed_errors():
    """Issue 24: `counters` and `describe` raised PyO3's bare RuntimeError when their result
    could not be serialised; every error of the binding goes through `py_error` to a typed
    opsim error (InternalError there)."""
    src = Path(__file__).parent.parent.parent / "crates" / "opsim-py" / "src"
    for f in sorted(src.rglob("*.rs")):
        text = f.read_text()
        for name in ("PyRuntimeError", "PyValueError", "PyTypeError", "PyException"):
            assert name not in text, f"{f.name} raises {name}; use py_error (typed opsim errors)"
