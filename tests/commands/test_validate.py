"""Tests for qosbound/commands/validate.py (``qosbound validate``) and validation/plots.py, end to end through the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

from qosbound.cli import main
from qosbound.scenario import load, load_raw
from qosbound.systems import get_system
from qosbound.validation.trace import make_table, read_trace, write_trace
from tests.helpers import EXAMPLES, ROOT, one_line


SCN = {
    "name": "small-pq",
    "system": "pq_txq",
    "link": {"rate": "2 Mbps"},
    "txq": {"units": 3, "unit_size": "512 B"},
    "traffic": {"EF": {"rate": "300 kbps", "size": "128 B", "arrivals": "poisson"}, "BE": {"size": "512 B"}},
    "metrics": {"ccdf_at": ["3 ms"], "quantiles": [0.9]},
    "methods": {"simulated": {"packets": 60000, "replications": 2, "seed": 5}},
    "slos": [{"metric": "EF.delay.mean", "max": "50 ms"}],
}


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    p = tmp_path_factory.mktemp("scn") / "small.yaml"
    p.write_text(yaml.safe_dump(SCN))
    return p


def _run(capsys, *argv):
    code = main(["validate", *map(str, argv), "--quiet"])
    out = capsys.readouterr()
    return code, out.out, out.err


def _sim_trace(scenario, n=60000, seed=9):
    from qosbound.scenario import load
    from qosbound.systems.pq_txq import params
    from qosbound.validation.pq_txq_sim import simulate_trace

    return simulate_trace(params(load(scenario)), n, seed)


def test_simulate_json_and_plots(scenario, tmp_path, capsys):
    """--simulate --json: every row with a model value agrees, bounds hold, exit 0, PNG and SVG plots written."""
    out = tmp_path / "plots"
    code, text, _ = _run(capsys, scenario, "--simulate", "--json", "--out", out)
    doc = json.loads(text)
    assert code == 0, [r for r in doc["rows"] if r["verdict"] not in ("agrees", "within bound")]
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["EF.delay.mean"]["verdict"] == "agrees"
    assert rows["EF.delay.mean"]["model"]["method"] == "model-checked"
    assert rows["EF.delay.mean"]["bounds"][0]["metric"] == "EF.delay.worst_case_mean"
    assert rows["EF.delay.max"]["verdict"] == "within bound"
    assert rows["EF.delay.max"]["observed"]["kind"] == "lower bound"
    assert rows["EF.delay.p90"]["observed"]["interval"]["label"] == "95% CI"
    assert rows["EF.delay.p90"]["observed"]["interval"]["dof"] == 19
    for stem in ("EF_delay_ccdf", "drop_by_colour"):
        for ext in ("png", "svg"):
            assert (out / f"{stem}.{ext}").stat().st_size > 1000
    assert (out / "EF_delay_ccdf.png").read_bytes()[:4] == b"\x89PNG"
    svg = (out / "EF_delay_ccdf.svg").read_text()
    assert "<svg" in svg[:2000] and "SLO mean" in svg  # the SLO limit is drawn and named in the legend
    assert not (out / "drop_vs_load.png").exists()  # window noise is not a load sweep: no such plot


def test_ccdf_plot_is_clipped_to_what_the_data_resolve(tmp_path):
    """The y-axis stops near 1/n for an empirical curve of n delays and at the model's precision for model
    points (a model probability of 1e-56 is not drawn); SLO marks are drawn."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from qosbound.validation import plots

    captured = {}
    real_save = plots.save

    def keep(fig, out_dir, stem):
        captured["ylim"] = fig.axes[0].get_ylim()
        captured["labels"] = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        return real_save(fig, out_dir, stem)

    plots.save = keep
    try:
        d = np.random.default_rng(1).exponential(1e-3, 10_000)
        plots.delay_ccdf(d, tmp_path, model_points=[(1e-3, 0.37), (5e-3, 6.7e-3), (40e-3, 1e-56)],
                         slos=[("p99 <= 6 ms", 6e-3, 0.01), ("mean <= 2 ms", 2e-3, None)], model_floor=1e-10)
    finally:
        plots.save = real_save
    low = captured["ylim"][0]
    assert 1e-5 <= low <= 1e-4  # half of 1/n = 1e-4, not 1e-56
    assert any("SLO p99" in t for t in captured["labels"]) and any("SLO mean" in t for t in captured["labels"])
    plt.close("all")


def test_drop_plot_colours_follow_drop_precedence(tmp_path):
    from qosbound.validation import plots

    captured = {}
    real_save = plots.save

    def keep(fig, out_dir, stem):
        ax = fig.axes[0]
        captured["ticks"] = [(t.get_text(), t.get_color()) for t in ax.get_xticklabels()]
        captured["legend"] = [t.get_text() for t in ax.get_legend().get_texts()]
        return real_save(fig, out_dir, stem)

    plots.save = keep
    try:
        obs = [("AF1", c, 0.01 * (c + 1), 0.005, 0.05) for c in range(3)]
        ref = [("AF1", c, m, 0.01 * (c + 1)) for c in range(3) for m in ("closed-form", "model-checked")]
        plots.drop_by_colour(obs, ref, tmp_path)
    finally:
        plots.save = real_save
    ticks = dict(captured["ticks"])
    assert ticks["AF11"] == plots.PRECEDENCE_COLOURS[0] and ticks["AF13"] == plots.PRECEDENCE_COLOURS[2]
    assert ticks["AF12"] == plots.PRECEDENCE_COLOURS[1]
    # one legend entry per method, none covering several classes
    assert sorted(captured["legend"]) == ["closed-form", "model-checked", "trace (with its interval)"]


def test_trace_file_text_table(scenario, tmp_path, capsys):
    """--trace a Parquet trace of the same system: a readable table with a verdict per metric, exit 0."""
    p = tmp_path / "t.parquet"
    write_trace(_sim_trace(scenario), p)
    code, text, _ = _run(capsys, scenario, "--trace", p, "--out", tmp_path / "o")
    assert code == 0, text
    assert "EF.delay.mean" in text and "agrees" in text and "within bound" in text


def test_slow_trace_disagrees(scenario, tmp_path, capsys):
    """A trace whose delays are 30 % longer than the system's is reported as disagreeing (exit 1)."""
    t = _sim_trace(scenario)
    arr = t.column("arrival").to_numpy()
    dep = t.column("departure").to_numpy(zero_copy_only=False)
    drop = t.column("dropped").to_numpy(zero_copy_only=False)
    slow = make_table(flow=t.column("flow"), cls=t.column("cls"), size=t.column("size").to_numpy(), arrival=arr,
                      departure=arr + 1.3 * (dep - arr), dropped=drop)
    p = tmp_path / "slow.parquet"
    write_trace(slow, p)
    code, text, _ = _run(capsys, scenario, "--trace", p, "--json", "--out", "")
    doc = json.loads(text)
    assert code == 3  # the trace disagrees with the models; the SLO (50 ms) still holds
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["EF.delay.mean"]["verdict"] in ("disagree", "exceeds bound")


def test_pcap_pair_end_to_end(scenario, tmp_path, capsys):
    """A capture pair written from a simulated trace (ingress at arrival, egress at departure) validates
    like the trace itself: delays agree with the model; the match report counts every packet."""
    from qosbound.validation.pcap_write import udp_frame, write_capture

    t = _sim_trace(scenario, n=20000, seed=4)
    arr = t.column("arrival").to_numpy()
    dep = t.column("departure").to_numpy(zero_copy_only=False)
    cls = t.column("cls").to_pylist()
    size = t.column("size").to_numpy()
    ing, eg = [], []
    t0 = 1.6e9
    for i in range(len(arr)):
        f = udp_frame(dscp=46 if cls[i] == "EF" else 0, ip_id=i & 0xFFFF,
                      payload=i.to_bytes(4, "big") + bytes(max(int(size[i]) - 32, 0)))
        ing.append((t0 + arr[i], f))
        if np.isfinite(dep[i]):
            eg.append((t0 + dep[i], f))
    eg.sort(key=lambda x: x[0])
    a, b = tmp_path / "in.pcap", tmp_path / "out.pcapng"
    write_capture(a, ing, nano=True)
    write_capture(b, eg, fmt="pcapng")
    code, text, _ = _run(capsys, scenario, "--trace", f"{a},{b}", "--json", "--out", "")
    doc = json.loads(text)
    assert doc["source"]["match"]["matched"] == len(eg)
    assert doc["source"]["match"]["unmatched_egress"] == 0
    rows = {r["metric"]: r for r in doc["rows"]}
    assert rows["EF.delay.mean"]["verdict"] == "agrees"
    assert code == 0


@pytest.mark.parametrize("argv,match", [
    (["--trace", "missing.parquet"], "not found"),
    (["--trace", "only-one.pcap"], "pair"),
])
def test_bad_trace_inputs(scenario, capsys, argv, match):
    """Bad trace arguments exit 2 with one line naming the problem."""
    code, _, err = _run(capsys, scenario, *argv)
    assert code == 2 and match in err and len(err.strip().splitlines()) == 1


def test_ns3_needs_one_packet_units(tmp_path, capsys):
    """--ns3 on a scenario whose packets span several units is refused (exit 2) naming txq.unit_size."""
    raw = dict(SCN, traffic={"EF": {"rate": "300 kbps", "size": "128 B"}, "BE": {"size": "1024 B"}})
    p = tmp_path / "multi.yaml"
    p.write_text(yaml.safe_dump(raw))
    code, _, err = _run(capsys, p, "--ns3")
    assert code == 2 and "unit_size" in err


def test_timestamp_csv_trace(scenario, tmp_path, capsys):
    """--trace with a timestamp CSV (not the schema) is read as timestamps; EF rows come from the DSCP column."""
    t = _sim_trace(scenario, n=20000, seed=2)
    arr = t.column("arrival").to_numpy()
    dep = t.column("departure").to_numpy(zero_copy_only=False)
    cls = t.column("cls").to_pylist()
    lines = ["t_in,t_out,dscp,size"]
    for i in range(len(arr)):
        lines.append(f"{arr[i] * 1e3:.9f},{'' if not np.isfinite(dep[i]) else f'{dep[i] * 1e3:.9f}'},"
                     f"{46 if cls[i] == 'EF' else 0},128")
    p = tmp_path / "ts.csv"
    p.write_text("\n".join(lines) + "\n")
    from qosbound.validation.csv_import import read_timestamps_csv

    assert read_timestamps_csv(p, time_unit="ms").num_rows == len(arr)
    # the command reads times in seconds: the same file in seconds
    lines = ["t_in,t_out,dscp,size"] + [
        f"{arr[i]:.12f},{'' if not np.isfinite(dep[i]) else f'{dep[i]:.12f}'},{46 if cls[i] == 'EF' else 0},128"
        for i in range(len(arr))]
    p.write_text("\n".join(lines) + "\n")
    code, text, _ = _run(capsys, scenario, "--trace", p, "--json", "--out", "")
    rows = {r["metric"]: r for r in json.loads(text)["rows"]}
    assert rows["EF.delay.mean"]["verdict"] == "agrees"


def test_af_trace_rows_per_colour(tmp_path, capsys):
    """For an AF scenario the comparison is generic over metric names: per-colour drop rows read only that
    colour's packets of the trace (here AF32 drops all its packets, AF31 none)."""
    example = ROOT / "examples" / "takeo2003.yaml"
    if not example.exists():
        pytest.skip("the AF example is not in this checkout")
    n = 6000
    arr = np.arange(n) * 1e-3
    colour = (np.arange(n) // 3) % 2  # AF31 (green) and AF32 (yellow) packets in runs of three
    dropped = colour == 1
    t = make_table(flow="AF3", cls="AF3", colour=colour, size=1000, arrival=arr,
                   departure=np.where(dropped, np.nan, arr + 0.01), dropped=dropped)
    p = tmp_path / "af.parquet"
    write_trace(t, p)
    code, text, _ = _run(capsys, example, "--trace", p, "--json", "--out", "")
    rows = {r["metric"]: r for r in json.loads(text)["rows"]}
    assert rows["AF3.drop.AF32"]["observed"]["value"] == 1.0
    assert rows["AF3.drop.AF31"]["observed"]["value"] == 0.0
    assert rows["AF3.delay.AF31"]["observed"]["value"] == pytest.approx(0.01)
    assert rows["AF3.drop.AF31"]["model"] is not None
    assert code in (0, 1, 3)  # this synthetic trace is not the scenario's system: disagreeing is allowed


# `qosbound validate` reaches every system through its hooks: AF's own trace simulator, and a typed one-line refusal
# where a system has no ns-3 counterpart (it used to be found by hasattr and a branch on AF).


def test_af_simulate_trace_hook_gives_one_row_per_packet_named_by_class():
    """AF's simulate_trace hook: the class simulator's trace, flows named by the scenario's classes, colours
    0..2; a packet neither dropped nor departed is still buffered at the end, so there are at most as many as
    the class buffers hold; the same seed gives the same trace."""
    scn = load(EXAMPLES / "koehler1999.yaml")
    system = get_system("af")
    t = system.simulate_trace(scn, 5000, 3)
    assert t.num_rows >= 5000
    assert set(t.column("flow").to_pylist()) <= set(scn.classes)
    colour = t.column("colour").to_numpy()
    assert colour.min() >= 0 and colour.max() <= 2
    dropped = t.column("dropped").to_numpy(zero_copy_only=False)
    dep = t.column("departure").to_numpy(zero_copy_only=False)
    in_flight = int(np.sum(~dropped & ~np.isfinite(dep)))
    assert in_flight <= sum(c.buffer for c in scn.classes.values())
    assert t.equals(system.simulate_trace(scn, 5000, 3))


def test_validate_ns3_on_a_system_without_ns3_is_one_line_exit_2(tmp_path, capsys):
    """`validate --ns3` on a TSQ scenario is refused (exit 2) by the system's hook, in one line."""
    raw = load_raw(EXAMPLES / "tsq_audio.yaml")
    raw["methods"]["model-checked"] = {"enabled": False}  # the closed form is reference enough here
    p = tmp_path / "tsq.yaml"
    p.write_text(yaml.safe_dump(raw))
    code = main(["validate", str(p), "--ns3", "--quiet", "--out", ""])
    err = capsys.readouterr().err
    assert code == 2
    assert "the tsq system has no ns-3 model" in one_line(err)


# `qosbound validate --simulate` on the TSQ and TFRC scenarios: traces in the one schema, metrics by flow.


def _short(tmp_path, example, **sim):
    raw = load_raw(ROOT / "examples" / example)
    raw.setdefault("methods", {}).setdefault("simulated", {}).update(sim)
    p = tmp_path / example
    p.write_text(yaml.safe_dump(raw))
    return str(p)


def test_tsq_validate_reports_per_flow_trace_statistics(tmp_path, capsys):
    """The TSQ trace gives each flow group's delay and drop with intervals, judged against the models."""
    path = _short(tmp_path, "tsq_audio.yaml", duration=12.0, warmup=4.0, replications=2)
    code = main(["validate", path, "--simulate", "--json", "--quiet", "--out", str(tmp_path / "out")])
    doc = json.loads(capsys.readouterr().out)
    observed = {m["metric"]: m for m in doc["metrics"] if m["method"] == "simulated"}
    assert {"audio.delay.mean", "bulk.delay.mean", "audio.drop"} <= set(observed)
    for m in observed.values():
        assert m["interval"] is not None
    assert code in (0, 1)


def test_tfrc_validate_measures_the_delivered_rate(tmp_path, capsys):
    """The TFRC trace gives each studied flow's delivered throughput; gTFRC's sits near its target."""
    path = _short(tmp_path, "qstp_gtfrc.yaml", duration=40.0, warmup=10.0)
    code = main(["validate", path, "--simulate", "--json", "--quiet", "--out", str(tmp_path / "out")])
    doc = json.loads(capsys.readouterr().out)
    thr = {m["metric"]: m for m in doc["metrics"] if m["metric"].endswith(".throughput")}
    assert set(thr) == {"flow1.throughput", "flow2.throughput"}
    assert 300e3 < thr["flow1.throughput"]["value"] < 600e3
    assert code == 0
