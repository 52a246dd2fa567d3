"""The pq_txq scenario schema and the Params it gives (qosbound/systems/pq_txq/schema.py, params.py).

EF aggregates of the PQ + TxQ system (Ferrari, Pau & Raffaelli 2001, section V): the scenario forms
(``streams``, ``calls``/``call``) and their refusals.
"""

from __future__ import annotations

import pytest
import yaml

from qosbound.cli import main
from qosbound.errors import ScenarioError
from qosbound.scenario import build, load_raw
from qosbound.systems import pq_txq
from qosbound.systems.pq_txq import params as scenario_params
from tests.helpers import example, one_line
from tests.pq_txq_helpers import aggregate_scenario, be60_raw, ef_streams


def test_single_stream_form_unchanged():
    """The one-stream form gives the Params it always gave: no streams, its own arrivals and burst."""
    for arrivals, burst in (("poisson", 10 * 128.0), ("cbr", 128.0), ("bernoulli", 10 * 128.0)):
        p = pq_txq.params(aggregate_scenario({"rate": "300 kbit/s", "size": "128 B", "arrivals": arrivals}))
        assert p.ef_streams == () and p.arrivals == arrivals and p.burst == burst
        assert p.ef_rate == 300e3 and p.lam == pytest.approx(300e3 / 1024)
        assert "EF.aggregation_degree" not in pq_txq.metric_names(
            aggregate_scenario({"rate": "300 kbit/s", "size": "128 B", "arrivals": arrivals}))


def test_calls_form_is_n_identical_cbr_streams():
    scn = aggregate_scenario({"calls": 7, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "cbr"}})
    p = pq_txq.params(scn)
    assert scn.traffic.EF.rate == pytest.approx(560e3) and scn.traffic.EF.size == 200.0
    assert p.ef_streams == ((80e3, "cbr", -1.0),) * 7 and p.arrivals == "aggregate"
    assert p.burst == 7 * 200.0 and p.cbr_streams == 7  # N CBR streams: a bucket of N packets
    # identical calls are exchangeable: no per-stream metrics, the aggregation degree is reported
    names = pq_txq.metric_names(scn)
    assert "EF.aggregation_degree" in names and not any(n.startswith("EF.s") for n in names)


def test_poisson_streams_merge_and_mixed_streams_use_the_pq_capacity():
    p = pq_txq.params(aggregate_scenario(ef_streams(100, 200, arrivals="poisson")))
    assert p.arrivals == "poisson" and p.ef_rate == 300e3 and p.burst == 10 * 128.0 and p.cbr_streams == 0
    ef = ef_streams(100, 200)
    ef["streams"][1]["arrivals"] = "poisson"
    p = pq_txq.params(aggregate_scenario(ef))
    assert p.arrivals == "aggregate" and p.burst == 10 * 128.0 and p.cbr_streams == 0


@pytest.mark.parametrize("ef, field, words", [
    ({"calls": 0, "call": {"rate": "80 kbit/s", "size": "200 B"}}, "traffic.EF.calls", "positive integer"),
    ({"calls": 2.5, "call": {"rate": "80 kbit/s", "size": "200 B"}}, "traffic.EF.calls", "positive integer"),
    ({"calls": 3}, "traffic.EF", "go together"),
    ({"calls": 30, "call": {"rate": "80 kbit/s", "size": "200 B"}}, "traffic.EF.calls", ">= 1"),
    ({"calls": 3, "call": {"rate": "80 kbit/s", "size": "200 B", "arrivals": "poisson"}}, "traffic.EF",
     "CBR stream with a random phase"),
    ({"rate": "300 kbit/s", "size": "128 B", "streams": [{"rate": "1 kbit/s", "size": "128 B"}]}, "traffic.EF",
     "exactly one of"),
    ({"streams": []}, "traffic.EF", "empty"),
    ({"streams": [{"rate": "1 kbit/s", "size": "128 B"}, {"rate": "1 kbit/s", "size": "200 B"}]}, "traffic.EF",
     "different packet sizes"),
    ({"streams": [{"rate": "1 Mbit/s", "size": "128 B"}, {"rate": "1.5 Mbit/s", "size": "128 B"}]},
     "traffic.EF.streams", "unstable"),
    ({"streams": [{"rate": "1 kbit/s", "size": "128 B", "arrivals": "poisson", "phase": "1 ms"}]},
     "traffic.EF.streams", "phase is given only to a CBR"),
    ({"streams": [{"rate": "1 kbit/s", "size": "128 B", "phase": "soon"}]}, "traffic.EF.streams", ""),
    ({"streams": [{"rate": "-1 kbit/s", "size": "128 B"}]}, "traffic.EF.streams", ""),
    ({"streams": [{"rate": "1 kbit/s", "size": "128 B"}], "arrivals": "cbr"}, "traffic.EF", "belongs to each"),
])
def test_bad_aggregates_are_one_line_scenario_errors(ef, field, words):
    with pytest.raises(ScenarioError) as e:
        aggregate_scenario(ef)
    msg = str(e.value)
    assert "\n" not in msg and words in msg
    assert (e.value.field or "").startswith(field), e.value.field


# Best effort with a load in the PQ + TxQ system: the ``traffic.BE.rate`` field, the example that uses it, and its
# refusals.


def write(tmp_path, raw, name="s.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(raw))
    return str(p)


def test_example_loads_with_its_load():
    """wan100_be60: 60 Mbit/s of IMIX best effort, total utilisation 70 %; the default stays saturated."""
    p = scenario_params(build(load_raw(example("wan100_be60.yaml"))))
    assert p.be_rate == pytest.approx(60e6) and not p.be_saturated
    assert p.rho + p.rho_be == pytest.approx(0.7)
    assert p.be_lam == pytest.approx(60e6 / (8 * float(p.be_probs @ p.be_sizes)))
    sat = load_raw(example("wan100.yaml"))
    sat["traffic"]["BE"].pop("saturated")  # neither saturated nor a rate: saturated, as before
    q = scenario_params(build(sat))
    assert q.be_saturated and q.be_rate is None and q.be_lam == 0.0


@pytest.mark.parametrize("be,field,message", [
    ({"saturated": True, "rate": "60 Mbps"}, "traffic.BE", "not both"),
    ({"saturated": False}, "traffic.BE", "needs a BE load"),
    ({"rate": "0 Mbps"}, "traffic.BE.rate", "must be positive"),
    ({"rate": "60 MB"}, "traffic.BE.rate", "wrong units"),
    ({"rate": "90 Mbps"}, "traffic.BE.rate", "total utilisation"),
    ({"rate": "95 Mbps"}, "traffic.BE.rate", "1.05 >= 1"),
])
def test_bad_be_load_is_one_line_exit_2(tmp_path, capsys, be, field, message):
    """A BE load with saturated: true, saturated: false without a load, a non-positive or mis-dimensioned
    rate, and a total utilisation >= 1 are refused on the BE field with one line and exit 2."""
    raw = be60_raw()
    sizes = raw["traffic"]["BE"]["sizes"]
    raw["traffic"]["BE"] = {**be, "sizes": sizes}
    code = main(["plan", write(tmp_path, raw), "--methods", "closed-form", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    line = one_line(err)
    assert f"field '{field}'" in line and message in line
