"""Unclear messages and silent acceptance (issue 23, item 8): every error names the option or
key (never a position inside a JSON document opsim made), the Python API raises only
documented opsim errors, a Simulator shared by threads works, reasons are the true ones, and
bad input is refused instead of passed over."""

from __future__ import annotations

import os
import shutil
import threading
import time

import pytest

import opsim
import opsim.sim as S
import opsim.trace as T
from opsim.cli import main
from opsim.errors import InputError
from opsim.units import parse_size

FIX = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "traces")
MSR = os.path.join(FIX, "msr_hm_0.csv")
DRIVE = '[drive]\nuser_capacity = "64MiB"\nop = 0.25\n'


def cli(capsys, *args) -> tuple[int, str]:
    """(exit code, stderr) of ``opsim ARGS`` run in this process."""
    try:
        code = main([str(a) for a in args])
    except SystemExit as e:  # argparse
        code = e.code
    return code, capsys.readouterr().err


def refused(capsys, *args) -> str:
    code, err = cli(capsys, *args)
    assert code == 2, err
    assert err.count("\n") == 1 or err.startswith("usage:"), err
    assert "internal error" not in err and "line 1 column" not in err, err
    return err


def toml(tmp_path, text: str, name="c.toml") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


# ---- internal JSON positions: errors name the option


def test_skip_lines_negative_names_the_option_on_the_cli(capsys):
    err = refused(capsys, "trace", "info", MSR, "--skip-lines=-5")
    assert "--skip-lines" in err and "negative" in err


def test_trace_options_from_a_config_name_the_key_not_a_json_position(capsys, tmp_path):
    shutil.copy(MSR, tmp_path / "t.csv")
    cfg = toml(tmp_path, DRIVE + '[workload]\ntype = "trace"\n[workload.trace]\npath = "t.csv"\nskip_lines = -5\n')
    err = refused(capsys, "simulate", cfg)
    assert "skip_lines" in err and "non-negative integer" in err and "column" not in err


@pytest.mark.parametrize(
    "opts,key",
    [
        ({"skip_lines": -5}, "trace.skip_lines"),
        ({"skip_bad": "yes"}, "trace.skip_bad"),
        ({"speed": float("nan")}, "trace.speed"),
        ({"skip_lines": b"3"}, "trace.skip_lines"),
        ({"bogus": 1}, "trace.bogus"),
    ],
)
def test_trace_api_options_name_the_key(opts, key):
    with pytest.raises(InputError) as ei:
        T.info(MSR, **opts)
    assert ei.value.key == key and str(ei.value).startswith(key), str(ei.value)
    assert "line 1" not in str(ei.value)


def test_cost_model_errors_name_the_key():
    model = S.describe({"drive": {"user_capacity": "64MiB", "op": 0.25}, "timing": {"interface": "nvme"}})
    with pytest.raises(InputError) as ei:
        S.costs(model["cost_model"], {"write_fraction": "x", "units_per_io": 1, "bytes_per_io": 4096}, 1.0)
    assert ei.value.key == "mix.write_fraction" and "column" not in str(ei.value), str(ei.value)


# ---- the Python API raises documented errors naming the argument


@pytest.mark.parametrize(
    "call,key",
    [
        (lambda tmp: T.head(MSR, -1), "n"),
        (lambda tmp: T.convert(MSR, tmp / "o.iolog", version=256), "version"),
        (lambda tmp: S.steady_state([1.0] * 6, window=-1), "window"),
        (lambda tmp: S.steady_state("abc"), "values"),
        (lambda tmp: S.steady_state([1.0, "x"]), "values[1]"),
        (lambda tmp: T.info(os.fsencode(MSR)), "path"),
        (lambda tmp: T.info(MSR + "\0"), "path"),
        (lambda tmp: S.describe({"drive": {"user_capacity": "64MiB", "op": 0.25}}, users=[2**64]), "users[0]"),
    ],
)
def test_api_arguments_raise_input_error_naming_the_argument(call, key, tmp_path):
    with pytest.raises(InputError) as ei:
        call(tmp_path)
    assert ei.value.key == key, str(ei.value)
    assert not (tmp_path / "o.iolog").exists()


# ---- threads sharing one Simulator


def test_eight_threads_sharing_a_simulator_are_serialised():
    s = opsim.Simulator({"drive": {"user_capacity": "64MiB", "op": 0.25}, "run": {"track_data": True}})
    errors: list[BaseException] = []
    started = threading.Event()

    def long_call():
        try:
            started.set()
            s.run_for(16 << 30)  # about 0.3 s in the core, without the GIL
        except BaseException as e:
            errors.append(e)

    def work(i):
        try:
            for j in range(20):
                s.write((i * 20 + j) * 8, 8)
                s.read_token(j)
                _ = s.free_blocks
        except BaseException as e:
            errors.append(e)

    first = threading.Thread(target=long_call)
    first.start()
    started.wait()
    time.sleep(0.05)  # the long call is in the core now: the others call while it runs
    threads = [threading.Thread(target=work, args=(i,)) for i in range(7)]
    for t in threads:
        t.start()
    for t in [first, *threads]:
        t.join(60)
    assert not errors, [f"{type(e).__name__}: {e}" for e in errors]
    s.check()  # the drive is consistent after the concurrent calls
    assert s.counters["host_write_cmds"] >= 7 * 20


# ---- the true reason


def test_exponent_notation_in_a_size_is_named(capsys, tmp_path):
    with pytest.raises(InputError, match="exponent notation is not accepted"):
        parse_size("1e30TB")
    err = refused(capsys, "simulate", toml(tmp_path, '[drive]\nuser_capacity = "1e30TB"\nop = 0.25\n'))
    assert "drive.user_capacity" in err and "exponent notation" in err and "unknown unit" not in err


def test_a_toml_date_is_called_a_date(capsys, tmp_path):
    err = refused(capsys, "simulate", toml(tmp_path, "[drive]\nuser_capacity = 1979-05-27\nop = 0.25\n"))
    assert "drive.user_capacity" in err and "a date (1979-05-27) is not a valid value" in err
    assert "map" not in err and "expected a size" in err


def test_zipf_exponent_expects_a_number(capsys, tmp_path):
    cfg = toml(tmp_path, DRIVE + '[workload]\ntype = "zipf"\nzipf_exponent = "abc"\n')
    err = refused(capsys, "simulate", cfg)
    assert "workload.zipf_exponent" in err and "expected a number" in err and "fraction" not in err


# ---- silent acceptance


@pytest.mark.parametrize(
    "content,why",
    [
        ("{not json", "no JSON document"),
        ("[1, 2]", "expected a JSON object"),
        ("{}", 'no "blockdevices" list'),
        ('{"blockdevices": "sda"}', "not a list of devices"),
        ('{"blockdevices": [{"name": "sda", "children": 5}]}', "children of sda"),
    ],
)
def test_plan_records_refuse_an_invalid_lsblk_json(capsys, tmp_path, content, why):
    (tmp_path / "lsblk.json").write_text(content)
    err = refused(capsys, "plan", "/dev/sdz", "--records", tmp_path)
    assert f"{tmp_path / 'lsblk.json'}" in err and why in err


def test_duplicate_keys_in_columns_are_refused(capsys, tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("0,w,0,4096,8192\n")
    err = refused(capsys, "trace", "info", p, "--format", "columns", "--columns", "op=1,offset=2,size=3,offset=4")
    assert "workload.trace.columns.offset" in err and "given twice" in err


BLK = b"  8,0    0        1     0.000000000  4242  D   W 2048 + 8 [fio]\n"


@pytest.mark.parametrize(
    "garbled",
    [
        b"  8,0    0        2     0.000001000  4242  \x00\xff  W 4096 + 8 [fio]\n",
        b"\xff\xfe8,0    0        3     0.000002000  4242  D   W 4096 + 8 [fio]\n",
    ],
)
def test_a_blkparse_line_garbled_by_binary_bytes_is_a_bad_line(capsys, tmp_path, garbled):
    p = tmp_path / "b.txt"
    p.write_bytes(BLK + garbled + BLK)
    err = refused(capsys, "trace", "info", p, "--format", "blkparse")
    assert f"{p}:2" in err and "binary byte" in err
    d = T.info(p, format="blkparse", skip_bad=True)
    assert (d["records"], d["skipped_bad_lines"]) == (2, 1)


# ---- found by running every command's options with bad values


def test_integers_past_64_bits_are_too_large(capsys):
    err = refused(capsys, "trace", "info", MSR, "--skip-lines", str(2**70))
    assert "--skip-lines" in err and "too large" in err
    with pytest.raises(InputError) as ei:
        T.info(MSR, skip_lines=2**70)
    assert ei.value.key == "trace.skip_lines" and "too large" in str(ei.value), str(ei.value)
    assert "floating point" not in str(ei.value)
    with pytest.raises(InputError) as ei:
        S.describe({"drive": {"user_capacity": "64MiB", "op": 0.25}, "run": {"seed": 2**70}})
    assert ei.value.key == "run.seed" and "too large" in str(ei.value), str(ei.value)
    with pytest.raises(InputError) as ei:
        S.describe({"drive": {"user_capacity": 2**70, "op": 0.25}})
    assert "too large" in str(ei.value) and "not a whole" not in str(ei.value), str(ei.value)


def test_endurance_huge_tbw_is_computed_not_an_internal_error(capsys):
    code, err = cli(capsys, "endurance", "--capacity", "480GB", "--tbw", "1e30")
    assert code == 0, err


@pytest.mark.parametrize("opt", ["--physical", "--native", "--user", "--op", "--waf", "--d"])
def test_endurance_projection_options_without_pe_are_refused(capsys, opt):
    err = refused(capsys, "endurance", "--capacity", "480GB", "--tbw", "500", opt, "7")
    assert opt in err and "--pe" in err


def test_sweep_workers_past_the_cap_is_an_input_error(tmp_path):
    """sweep(workers=2**64) would try to start that many processes: refused before any work."""
    import opsim
    from opsim.errors import InputError

    with pytest.raises(InputError, match="workers"):
        opsim.sweep({"drive": {"user_capacity": "64MiB"}, "sweep": {"grid": {"drive.op": [0.07]}}}, workers=2**64)
