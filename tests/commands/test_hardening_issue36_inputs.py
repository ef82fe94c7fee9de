"""Issue 36, items 4-6 (inputs): internal errors and unclear messages of `trace profile`,
`advise --fio`, `advise --trace` and `calibrate`, each now exit 2 naming the field, key, line
or option before any long work (or, where the input is valid, a result), and the README's own
`opsim plan` example runs."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from opsim import cli
from opsim import trace as T

ROOT = Path(__file__).resolve().parent.parent.parent
PRESET = "micron-7450-pro-960gb"


def main(argv, capsys) -> tuple[int, str, str, float]:
    t0 = time.monotonic()
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err, time.monotonic() - t0


# ------------------------------------------------------------------------- trace profile


def test_profile_of_a_trace_writing_one_block_40_times_fits(tmp_path, capsys):
    """brentq had no bracket when every written block is written many times (issue 36, 4)."""
    p = tmp_path / "one.csv"
    p.write_text("128166372003061629,hm,0,Write,8192,4096,100\n" * 40)
    code, out, err, _ = main(["trace", "profile", p], capsys)
    assert code == 0, err
    assert "fit: --skew" in out and "internal error" not in err


# ------------------------------------------------------------------------- advise --fio


def _fio(tmp_path, body: str) -> Path:
    p = tmp_path / "job.fio"
    p.write_text("[job]\nrw=randwrite\n" + body)
    return p


def test_fio_zone_of_no_bytes_exits_2_naming_the_line(tmp_path, capsys):
    job = _fio(tmp_path, "bs=4k\nnorandommap\nrandom_distribution=zoned_abs:100/0\n")
    code, _, err, _ = main(["advise", "--preset", PRESET, "--fio", job, "--min-dwpd", "1", "--no-simulate"], capsys)
    assert code == 2 and f"{job}:5: option `random_distribution`" in err and "holds no block" in err, err


def test_fio_block_of_part_of_a_sector_exits_2_before_the_screen(tmp_path, capsys):
    job = _fio(tmp_path, "bs=1\n")
    code, _, err, took = main(["advise", "--preset", PRESET, "--fio", job, "--min-iops", "1000"], capsys)
    assert code == 2 and f"{job}:3: option `bs`" in err and "512-byte sectors" in err, err
    assert took < 5, took  # was refused by the simulator after the screen


@pytest.mark.slow
@pytest.mark.parametrize("dist", ["zoned:100/10:0/90", "pareto:0.001"])
def test_a_screened_waf_never_falls_below_1(tmp_path, capsys, dist):
    """A class taking every write over a sliver of the LBAs: WAF 1 + (below the root's tolerance)
    was handed to the cost model as 0.99999998 ("waf must be >= 1")."""
    job = _fio(tmp_path, f"bs=4k\nnorandommap\nrandom_distribution={dist}\n")
    code, _, err, _ = main(["advise", "--preset", PRESET, "--fio", job, "--min-iops", "1000", "--no-simulate"], capsys)
    assert code in (0, 1) and "waf" not in err, err


@pytest.mark.slow
def test_a_steep_zipf_keeps_its_static_classes(capsys):
    """zipf:3's coldest bins take no write in floating point; dropping them left the LBA shares
    summing below 1, which the LRW model refused ("the f_i and the r_i must each sum to 1")."""
    from opsim.workload.classes import zipf_classes

    cls = zipf_classes(3.0, 234_421_875)
    assert sum(f for f, _ in cls) == pytest.approx(1.0) and sum(r for _, r in cls) == pytest.approx(1.0)
    code, _, err, _ = main(
        ["advise", "--preset", PRESET, "--skew", "zipf:3", "--min-iops", "1000", "--no-simulate"], capsys
    )
    assert code in (0, 1) and "classes" not in err, err


# ------------------------------------------------------------------------- advise --trace


def _mqsim(path: Path, n: int, writes: dict[int, int]) -> Path:
    """An MQSim trace of ``n`` 4 KiB requests, reads at spread LBAs but the ``writes`` (index: LBA)."""
    lines = []
    for i in range(n):
        lba = writes.get(i, (i * 7919 % 1_000_000) * 8)
        lines.append(f"{1000 * i} 0 {lba} 8 {0 if i in writes else 1}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_trace_whose_writes_never_overwrite_exits_2_at_once(tmp_path, capsys):
    tr = _mqsim(tmp_path / "w.trace", 24_783, {10: 8_000, 5_000: 16_000, 9_000: 24_000, 20_000: 32_000})
    code, _, err, took = main(
        ["advise", "--preset", PRESET, "--trace", tr, "--format", "mqsim", "--min-dwpd", "1", "--no-simulate"], capsys
    )
    assert code == 2 and "too few writes to fit" in err and str(tr) in err, err
    assert took < 30


def test_trace_of_4_writes_among_24783_requests_exits_2_at_once(tmp_path, capsys):
    """MQSim's wsrch-small ran 19 minutes: its replay loops the trace for hours (issue 36, 6)."""
    tr = _mqsim(tmp_path / "w.trace", 24_783, {10: 8_000, 5_000: 8_000, 9_000: 16_000, 20_000: 8_000})
    code, _, err, took = main(
        ["advise", "--preset", PRESET, "--trace", tr, "--format", "mqsim", "--min-dwpd", "1"], capsys
    )
    assert code == 2 and "too few writes to replay" in err and "24,783 requests" in err, err
    assert took < 30


@pytest.mark.slow
def test_a_trace_of_enough_writes_is_still_advised(tmp_path, capsys):
    p = tmp_path / "z.iolog"
    T.synth(str(p), skew="zipf:0.9", span=16 << 30, count=50_000, interval_ns=0)
    code, _, err, _ = main(["advise", "--preset", PRESET, "--trace", p, "--min-dwpd", "3", "--no-simulate"], capsys)
    assert code in (0, 1), err


# ------------------------------------------------------------------------- calibrate


DS = '[drive]\nnative = "480GB"\ninterface = "nvme"\ncell = "tlc"\n[datasheet]\nrand_write_iops = 20000\n'


@pytest.fixture
def no_fit(monkeypatch):
    """Fail the test if the fit starts: every refusal here comes before it."""
    import opsim.calibrate

    def fit(*a, **k):
        raise AssertionError("the fit started before the input was checked")

    monkeypatch.setattr(opsim.calibrate, "calibrate", fit)


@pytest.mark.parametrize(
    "extra,key,says",
    [
        ("", "datasheet.rand_write_iops", "faster than any host link"),  # 1e308 below
        ("dwpd = 1e30\n", "datasheet.dwpd", "faster than any host link"),
        ("tbw = 1e30\n", "datasheet.tbw", "faster than any host link"),
        ("seq_read_mbps = 1e9\n", "datasheet.seq_read_mbps", "faster than any host link"),
        ("rand_write_qd = 1000000\n", "datasheet.rand_write_qd", "at most 65536"),
        ("warranty_years = 1e9\n", "datasheet.warranty_years", "at most 100"),
        ("[calibration]\nfit_from = 3\n", "calibration.fit_from", "not a preset input's name"),
        ("[calibration]\nfrom = 3\n", "calibration.from", "unknown key"),
        ("[calibration]\nwhole = 1\n", "calibration.whole", "true or false"),
    ],
)
def test_calibrate_refuses_what_no_model_can_show(tmp_path, capsys, no_fit, extra, key, says):
    ds = tmp_path / "ds.toml"
    text = DS + extra
    if key == "datasheet.rand_write_iops":
        text = text.replace("20000", "1e308")
    ds.write_text(text)
    code, _, err, _ = main(["calibrate", "--datasheet", ds, "--bound-only"], capsys)
    assert code == 2 and key in err and says in err, err


@pytest.mark.parametrize(
    "argv,says",
    [
        (["--queue-depth", "-1"], "queue_depth: -1 is not a queue depth"),
        (["--queue-depth", "100000"], "at most 65536"),
        (["--predict", "1B"], "predict: 1B is less than one 4 KiB page"),
    ],
)
def test_calibrate_options_are_checked_before_the_fit(tmp_path, capsys, no_fit, argv, says):
    ds = tmp_path / "ds.toml"
    ds.write_text(DS)
    code, _, err, _ = main(["calibrate", "--datasheet", ds, "--bound-only", *argv], capsys)
    assert code == 2 and says in err, err


def test_calibrate_measured_json_number_of_5000_digits_exits_2_naming_the_line(tmp_path, capsys, no_fit):
    m = tmp_path / "m.json"
    m.write_text('{\n"a": 1,\n"b": ' + "7" * 5000 + "\n}\n")
    code, _, err, _ = main(["calibrate", "--measured", m], capsys)
    assert code == 2 and f"{m}:3: a number of more than" in err and "internal error" not in err, err


def test_a_sequential_read_past_pcie_gen5_is_carried_by_the_link_rate(tmp_path):
    """The datasheet's own 20 GB/s read needs no PCIe generation past the core's 5: the link
    rate is the datasheet's figure (it was `timing.pcie_gen: 6 is not a PCIe generation`)."""
    from opsim.calibrate import model as calibrate_model
    from opsim.calibrate.inputs import read_datasheet
    from opsim.sim import describe

    ds = tmp_path / "ds.toml"
    ds.write_text(DS + "seq_read_mbps = 20000\n")
    spec, _ = read_datasheet(str(ds))
    m = calibrate_model.build(spec)
    cfg = m.config({p.name: p.prior for p in m.params})
    assert "pcie_gen" not in cfg["timing"] and cfg["timing"]["link_mbps"] >= 20000
    describe(cfg, model_limits=False)  # the core takes it


# ------------------------------------------------------------------------- README


def test_the_readmes_plan_example_runs(capsys):
    text = (ROOT / "README.md").read_text()
    examples = re.findall(r"`(opsim plan --interface [^`]*)`", text)
    assert examples, "the README shows `opsim plan --interface ...`"
    for ex in examples:
        code, out, err, _ = main(ex.split()[1:], capsys)
        assert code == 0 and "target user" in out, (ex, err)


# ------------------------------------------------------------------------- probed alike


@pytest.mark.parametrize(
    "argv,says",
    [
        (["--seed", "-1"], "--seed: -1 is not a seed"),  # was run.seed's error after the screen
        (["--model-blocks", "999999999999"], "--model-blocks: 999,999,999,999 is more than"),  # was scale_blocks
    ],
)
def test_advise_options_name_themselves_before_the_screen(capsys, argv, says):
    code, _, err, took = main(["advise", "--preset", PRESET, "--min-iops", "1000", *argv], capsys)
    assert code == 2 and says in err, err
    assert took < 5, took


def test_calibrate_reports_an_unused_fit_from(tmp_path):
    """fit_from is the presets' build's: a calibration says it does not use it (it was silent)."""
    from opsim.calibrate import read_inputs

    ds = tmp_path / "ds.toml"
    ds.write_text(DS + '[calibration]\nfit_from = "micron-1100-1tb"\n')
    spec, _ = read_inputs(str(ds))
    assert "fits the file's own figures instead" in spec.unused["calibration.fit_from"]


def test_calibrate_pe_must_be_finite(tmp_path, capsys, no_fit):
    ds = tmp_path / "ds.toml"
    ds.write_text(DS)
    code, _, err, _ = main(["calibrate", "--datasheet", ds, "--bound-only", "--pe", "inf"], capsys)
    assert code == 2 and "pe: inf must be a positive finite number" in err, err


def test_calibrate_native_past_the_models_dies_names_native(tmp_path, capsys):
    """Refused when the model is built, before the fit (it named timing.dies_per_channel)."""
    ds = tmp_path / "ds.toml"
    ds.write_text(DS)
    code, _, err, took = main(["calibrate", "--datasheet", ds, "--bound-only", "--native", "1PB"], capsys)
    assert code == 2 and "native: the drive's" in err and "more than the simulator models" in err, err
    assert took < 10, took
