"""`qosbound sweep`: grids read in the parameter's units, invalid points recorded, the table and plots, the
exit codes, the cache (a rerun is all hits), and identical tables whatever the executor."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
import yaml

from tests.helpers import one_line
from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.scenario import build, load, load_raw
from qosbound.sweep import Cache, parse_vary, prepare, run, table_rows
from qosbound.sweep.execute import point_seed
from qosbound.sweep.grid import get_param, set_param

ROOT = Path(__file__).resolve().parents[1]
FERRARI = str(ROOT / "examples" / "ferrari2001.yaml")
GTFRC = str(ROOT / "examples" / "qstp_gtfrc.yaml")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def sweep(capsys, *argv):
    code = main(["sweep", *argv, "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


# ---- grids -----------------------------------------------------------------------------------------------
def test_linear_grid_in_the_parameters_units():
    """LO..HI:N gives N evenly spaced SI values, both ends included, whatever units the ends carry."""
    raw = load_raw(FERRARI)
    ax = parse_vary(raw, "traffic.EF.rate=100 kbit/s..0.5Mbps:5")
    assert ax.kind == "rate" and ax.unit == "bit/s" and ax.column == "traffic.EF.rate [bit/s]"
    assert ax.values == pytest.approx((1e5, 2e5, 3e5, 4e5, 5e5), rel=1e-12)
    size = parse_vary(raw, "traffic.BE.sizes.0.size=100B..1400B:14")
    assert size.values[0] == 100 and size.values[-1] == 1400 and size.values[1] == pytest.approx(200)


def test_log_grid_and_lists():
    raw = load_raw(FERRARI)
    ax = parse_vary(raw, "traffic.EF.rate=10kbit/s..1Mbps:3:log")
    assert ax.log and ax.values == pytest.approx((1e4, 1e5, 1e6), rel=1e-12)
    lst = parse_vary(raw, "pq.capacity=5,10,20")
    assert lst.values == (5, 10, 20) and all(isinstance(v, int) for v in lst.values)


def test_list_index_in_a_parameter_path():
    """A number in the path indexes a list; setting it copies the mapping and leaves the original alone."""
    raw = load_raw(FERRARI)
    assert get_param(raw, "traffic.BE.sizes.1.size") == "1024 B"
    new = set_param(raw, "traffic.BE.sizes.1.size", 700.0)
    assert get_param(new, "traffic.BE.sizes.1.size") == 700.0
    assert get_param(raw, "traffic.BE.sizes.1.size") == "1024 B"
    with pytest.raises(ScenarioError, match="no parameter 'traffic.BE.sizes.7.size'"):
        get_param(raw, "traffic.BE.sizes.7.size")


@pytest.mark.parametrize("vary, words", [
    ("traffic.EF.nosuch=1..2:2", "no parameter 'traffic.EF.nosuch'"),
    ("traffic.EF.rate=1Mbps..2Mbps", "expected LO..HI:N"),
    ("traffic.EF.rate=1Mbps..2Mbps:0", "empty"),
    ("traffic.EF.rate=1Mbps..2Mbps:x", "must be an integer"),
    ("traffic.EF.rate=1 ms..2 ms:3", "wrong units"),
    ("traffic.EF.rate=0bit/s..1Mbps:3:log", "log grid needs LO and HI above zero"),
    ("pq.capacity=1..10:3", "is an integer"),
    ("traffic.EF.rate", "expected PARAM=LO..HI:N"),
    ("traffic.EF.rate=1Mbps,,2Mbps", "empty value"),
    ("name=1..2:2", "cannot vary"),
])
def test_bad_grid_is_one_line_naming_the_flag(capsys, tmp_path, vary, words):
    code, out, err = sweep(capsys, FERRARI, "--vary", vary, "--out", str(tmp_path / "o"), "--no-cache")
    line = one_line(err)
    assert code == 2 and "--vary" in line and words in line, line
    assert not (tmp_path / "o" / "sweep.csv").exists()


def test_the_same_parameter_twice_is_refused(capsys, tmp_path):
    code, _, err = sweep(capsys, FERRARI, "--vary", "pq.capacity=5,6", "--vary", "pq.capacity=7,8",
                         "--out", str(tmp_path), "--no-cache")
    assert code == 2 and "varied twice" in one_line(err)


@pytest.mark.parametrize("extra, flag, words", [
    (["--workers", "0"], "--workers", "between 1 and 1024"),
    (["--workers", "two"], "--workers", "number of worker processes"),
    (["--out", "/proc/no/such"], "--out", "cannot create"),
    (["--methods", "closed-form,guessed"], "--methods", "unknown method 'guessed'"),
])
def test_bad_options_are_one_line(capsys, tmp_path, extra, flag, words):
    argv = [FERRARI, "--vary", "pq.capacity=5,6", "--no-cache", "--out", str(tmp_path / "o"), *extra]
    code, _, err = sweep(capsys, *argv)
    line = one_line(err)
    assert code == 2 and flag in line and words in line, line


# ---- one sweep, end to end ---------------------------------------------------------------------------------
def test_closed_form_sweep_table_plots_and_cache(capsys, tmp_path):
    """Every point's closed-form values equal the system's own evaluation of that point; an EF rate filling
    the link is an invalid point with its reason, not a crash; a rerun is all cache hits."""
    out, cache = tmp_path / "out", tmp_path / "cache"
    argv = [FERRARI, "--vary", "traffic.EF.rate=200kbit/s,1Mbps,2Mbps", "--methods", "closed-form",
            "--out", str(out), "--cache", str(cache)]
    code, stdout, _ = sweep(capsys, *argv)
    assert code == 1  # the scenario's p99 SLO needs a method that gives quantiles: 'missing' fails
    assert stdout.startswith("inputs as understood\n  link.rate ")  # the scenario as read, before any point
    assert "\ngrid\n  traffic.EF.rate (rate): 200 kbit/s, 1 Mbit/s, 2 Mbit/s\n" in stdout
    assert "\nferrari2001: 3 points, 0 from cache, 3 computed" in stdout
    rows = read_csv(out / "sweep.csv")
    assert list(rows[0])[:4] == ["traffic.EF.rate [bit/s]", "metric", "method", "value"]
    invalid = [r for r in rows if r["status"] == "invalid"]
    assert [float(r["traffic.EF.rate [bit/s]"]) for r in invalid] == [2e6]
    assert invalid[0]["reason"] and "\n" not in invalid[0]["reason"]
    from qosbound.systems import get_system

    system = get_system("pq_txq")
    for rate in (2e5, 1e6):
        scn = build(set_param(load_raw(FERRARI), "traffic.EF.rate", rate), FERRARI)
        want = {r.metric: r for r in system.evaluate(scn, ["closed-form"], None)}
        got = {r["metric"]: r for r in rows if r["traffic.EF.rate [bit/s]"] == repr(rate) and r["value"]}
        assert set(got) == set(want)
        for m, r in want.items():
            assert float(got[m]["value"]) == r.value and got[m]["unit"] == r.unit
            assert got[m]["kind"] == r.interval.label()
    wc = [r for r in rows if r["metric"] == "EF.delay.worst_case_mean" and r["status"] == "ok"]
    assert wc and all(r["slo"].startswith("EF.delay.worst_case_mean <= 25 ms: ") for r in wc)
    assert [r["slo"].split(": ")[1] for r in wc] == ["holds" if float(r["value"]) <= 0.025 else "violated"
                                                     for r in wc]
    for m in {r["metric"] for r in rows if r["value"]}:
        for ext in ("png", "svg"):
            assert (out / f"{m}.{ext}").stat().st_size > 1000
    # axes in the units a reader expects: rates of 200 kbit/s..1 Mbit/s in Mbit/s, delays of ms in ms
    svg = (out / "EF.delay.worst_case_mean.svg").read_text()
    assert "traffic.EF.rate [Mbit/s]" in svg and "EF.delay.worst_case_mean [ms]" in svg
    import pyarrow.parquet as pq

    table = pq.read_table(out / "sweep.parquet")
    assert table.num_rows == len(rows) and table.schema.field("value").type == "double"
    # a rerun: every point from the cache, the same table
    before = (out / "sweep.csv").read_text()
    code2, stdout2, _ = sweep(capsys, *argv)
    assert code2 == code and "\nferrari2001: 3 points, 3 from cache, 0 computed" in stdout2
    assert (out / "sweep.csv").read_text() == before


def test_exit_codes_follow_the_slos_over_the_grid(capsys, tmp_path):
    """gTFRC's friendliness SLO holds for RTTs up to 30 ms and fails at 40 ms: exit 0 on the first grid, 1 on
    the wider one, which names the first failing point."""
    code, stdout, _ = sweep(capsys, GTFRC, "--vary", "flows.flow1.rtt=20ms..30ms:3", "--methods", "closed-form",
                            "--out", str(tmp_path), "--no-cache", "--no-plots")
    assert code == 0, stdout
    assert "SLO flow1.rate >= target: holds at 3 of 3 valid points" in stdout
    assert "SLO flow1.friendliness <= 1.25: holds at 3 of 3 valid points" in stdout
    code, stdout, _ = sweep(capsys, GTFRC, "--vary", "flows.flow1.rtt=20ms..40ms:3", "--methods", "closed-form",
                            "--out", str(tmp_path), "--no-cache", "--no-plots")
    assert code == 1, stdout
    assert "SLO flow1.friendliness <= 1.25: holds at 2 of 3 valid points, fails at 1 (first at flows.flow1.rtt = " \
           "40 ms)" in stdout


def test_seed_comes_from_the_point():
    """The simulation seed is a function of the scenario's seed and the point, not of where it runs."""
    assert point_seed(2001, {"a": 1.0}) == point_seed(2001, {"a": 1.0})
    assert point_seed(2001, {"a": 1.0}) != point_seed(2001, {"a": 2.0})
    assert point_seed(2001, {"a": 1.0}) != point_seed(2002, {"a": 1.0})
    sw = prepare(load(FERRARI), ["pq.capacity=5,10"], ["simulated"])
    seeds = [r["methods"]["simulated"]["seed"] for r in sw.raws]
    assert len(set(seeds)) == 2 and len(set(sw.keys)) == 2


def _small_sim_scenario(tmp_path) -> str:
    raw = load_raw(FERRARI)
    raw["methods"]["simulated"] = {"packets": 20000, "replications": 2, "seed": 7}
    p = tmp_path / "small.yaml"
    p.write_text(yaml.safe_dump(raw))
    return str(p)


def test_one_and_two_dask_workers_give_identical_tables(tmp_path):
    """Closed form and a (small) simulation on a 2 x 2 grid: serially in this process and on two Dask worker
    processes, the tables are identical to the last digit."""
    pytest.importorskip("distributed")
    scn = load(_small_sim_scenario(tmp_path))
    vary = ["traffic.EF.rate=200kbit/s,400kbit/s", "pq.capacity=5,10"]
    one = run(prepare(scn, vary, ["closed-form", "simulated"]), cache=Cache(None), workers=1, show_progress=False)
    two = run(prepare(scn, vary, ["closed-form", "simulated"]), cache=Cache(None), workers=2, show_progress=False)
    assert one.executor == "this process" and two.executor == "2 Dask workers"
    rows1, rows2 = table_rows(one), table_rows(two)
    sims = [r for r in rows1 if r["method"] == "simulated" and r["value"] is not None]
    assert len({r["traffic.EF.rate [bit/s]"] for r in sims}) == 2 and all(math.isfinite(r["value"]) for r in sims)
    assert rows1 == rows2


def test_model_checked_point_equals_plan(capsys, tmp_path):
    """A small model-checked sweep: at the scenario's own EF rate every value is the plan's, and at each point
    the model's mean EF delay lies below the closed form's worst case of it (eq. (7))."""
    import json

    methods = "closed-form,model-checked"
    code, _, _ = sweep(capsys, FERRARI, "--vary", "traffic.EF.rate=150kbit/s,300kbit/s", "--methods", methods,
                       "--out", str(tmp_path), "--no-cache", "--no-plots")
    assert code in (0, 1, 3)
    rows = [r for r in read_csv(tmp_path / "sweep.csv") if r["value"]]
    main(["plan", FERRARI, "--methods", methods, "--json", "--quiet"])
    plan = {(m["metric"], m["method"]): m["value"] for m in json.loads(capsys.readouterr().out)["metrics"]}
    at = {(r["metric"], r["method"]): float(r["value"]) for r in rows
          if float(r["traffic.EF.rate [bit/s]"]) == 3e5}
    assert at and at == plan
    for rate in (1.5e5, 3e5):
        here = {(r["metric"], r["method"]): r for r in rows if float(r["traffic.EF.rate [bit/s]"]) == rate}
        mean = here[("EF.delay.mean", "model-checked")]
        assert float(mean["value"]) <= float(here[("EF.delay.worst_case_mean", "closed-form")]["value"])
        assert mean["kind"] == "numerical" and mean["agreement"] in ("agree", "approximate")


def test_plot_axes_take_the_prefix_of_their_largest_value():
    """0.0127 s is drawn in ms, 2e5..1e6 bit/s in Mbit/s, 850 bit/s in bit/s; units without prefixes and
    empty or zero data keep the SI unit."""
    from qosbound.units import display_scale

    assert display_scale([0.003, 0.0127], "s") == (1e-3, "ms")
    assert display_scale([2e-6, 4e-5], "s") == (1e-6, "µs")
    assert display_scale([2e5, 1e6], "bit/s") == (1e6, "Mbit/s")
    assert display_scale([850.0], "bit/s") == (1.0, "bit/s")
    assert display_scale([0.2, 0.5], "1") == (1.0, "1")
    assert display_scale([], "s") == (1.0, "s") and display_scale([0.0], "s") == (1.0, "s")


def test_plot_legends_name_the_kind_and_tails_use_a_log_axis(capsys, tmp_path):
    """A bound was drawn under the legend 'closed-form' alone, and drop probabilities on a linear axis (1e-12 on
    zero): now each line is named by its method and kind, and a drop probability's axis is logarithmic."""
    out = tmp_path / "out"
    code, _, _ = sweep(capsys, str(ROOT / "examples" / "takeo2003.yaml"), "--vary",
                       "traffic.AF2.rate=100kbit/s..400kbit/s:3", "--methods", "closed-form", "--out", str(out),
                       "--no-cache")
    assert code in (0, 1)
    drop = (out / "AF2.drop.AF21.svg").read_text()
    assert "closed-form: approximation" in drop and "AF2.drop.AF21 (log)" in drop
    rate = (out / "AF2.rate.svg").read_text()  # a CBWFQ share: exact, on a linear axis
    assert "closed-form: exact" in rate and "(log)" not in rate
    out2 = tmp_path / "out2"
    sweep(capsys, FERRARI, "--vary", "traffic.EF.rate=200kbit/s,1Mbps", "--methods", "closed-form", "--out",
          str(out2), "--no-cache")
    assert "closed-form: upper bound" in (out2 / "EF.delay.worst_case_mean.svg").read_text()


def test_which_metrics_go_on_a_log_axis():
    from qosbound.sweep.run import _log_axis
    from qosbound.systems import get_system

    pq = get_system("pq_txq")
    assert _log_axis(pq, "EF.loss", [1e-12, 1e-3]) and _log_axis(pq, "EF.delay.ccdf@10ms", [0.2, 0.3])
    assert not _log_axis(pq, "EF.delay.p99", [1e-3, 1e-1])  # a time: linear
    assert not _log_axis(pq, "EF.loss", [0.0, 0.0])  # nothing positive to draw
    assert not _log_axis(pq, "EF.aggregation_degree", [0.2, 0.5]) and _log_axis(pq, "EF.aggregation_degree",
                                                                                 [1e-4, 0.5])
