"""What the systems share (qosbound/systems/base.py): the CCDF points and quantiles a run computes."""

from __future__ import annotations

import pytest

from qosbound.errors import ScenarioError
from qosbound.scenario import build, load_raw
from qosbound.systems.base import requested_statistics
from qosbound.systems.port.metrics import requested
from qosbound.systems.pq_txq.metrics import requested_metrics
from tests.helpers import example


def test_the_statistics_slos_name_are_added_once_after_the_metrics_section_s():
    """ccdf@T and pNN statistics add their time and quantile in order; a time within 1e-12 s or a quantile within
    1e-12 of one listed is the same one; other statistics (mean, max, loss) add nothing."""
    ccdf, qs = requested_statistics([1e-3], [0.99], ["p99.9", "ccdf@2ms", "mean", "ccdf@1ms", "p99", "max",
                                                     "ccdf@3 ms", "p50", "ccdf@2 ms"])
    assert ccdf == pytest.approx([1e-3, 2e-3, 3e-3], rel=1e-12) and qs == pytest.approx([0.99, 0.999, 0.5], rel=1e-12)


def test_the_lists_given_are_copied_not_extended():
    base_ccdf, base_qs = [1e-3], [0.99]
    ccdf, qs = requested_statistics(base_ccdf, base_qs, ["ccdf@5ms", "p99.99"])
    assert base_ccdf == [1e-3] and base_qs == [0.99]
    assert ccdf == pytest.approx([1e-3, 5e-3], rel=1e-12) and qs == pytest.approx([0.99, 0.9999], rel=1e-12)


def test_a_ccdf_time_that_does_not_parse_is_a_scenario_error_on_the_metric():
    with pytest.raises(ScenarioError) as e:
        requested_statistics([], [], ["ccdf@soon"])
    assert e.value.field == "metric"


def test_pq_txq_and_port_take_the_slos_statistics_the_same_way():
    """The two systems' wrappers pass the statistics of their SLO metric names (EF.delay.X, class.delay.X)."""
    pq = build(load_raw(example("wan100")))
    ccdf, qs = requested_metrics(pq, ["EF.delay.p99.99", "EF.delay.ccdf@4ms", "EF.loss"])
    assert ccdf == pytest.approx(list(pq.metrics.ccdf_at) + [4e-3], rel=1e-12)
    assert qs == pytest.approx(list(pq.metrics.quantiles) + [0.9999], rel=1e-12)
    r = load_raw(example("port_wan100"))
    voice = r["classes"][0]["name"]
    r["slos"] = [{"metric": f"{voice}.delay.p99.99", "max": "5 ms"}, {"metric": f"{voice}.delay.ccdf@4ms", "max": 0.1},
                 {"metric": f"{voice}.loss", "max": 0.01}]
    port = build(r)
    ccdf, qs = requested(port)
    assert ccdf == pytest.approx(list(port.metrics.ccdf_at) + [4e-3], rel=1e-12)
    assert qs == pytest.approx(list(port.metrics.quantiles) + [0.9999], rel=1e-12)
