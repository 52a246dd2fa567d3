"""The metrics of the pq_txq system (qosbound/systems/pq_txq/metrics.py): names, kinds and per-stream results."""

from __future__ import annotations

import pytest

from qosbound.errors import ScenarioError
from qosbound.results import Kind
from qosbound.systems import pq_txq
from tests.pq_txq_helpers import aggregate_scenario, ef_streams


def test_per_stream_results_are_reported_and_bounded():
    from qosbound.progress import QUIET

    scn = aggregate_scenario(ef_streams(50, 100, 150))
    res = pq_txq.evaluate(scn, ["closed-form", "simulated"], QUIET)
    names = {r.metric for r in res}
    for i in (1, 2, 3):
        assert {f"EF.s{i}.delay.mean", f"EF.s{i}.loss"} <= names
        assert pq_txq.metric_kind(f"EF.s{i}.delay.mean") == "time"
    assert set(pq_txq.metric_names(scn)) >= {n for n in names if n != "EF.delay.cobham_mean"}
    bound = next(r for r in res if r.metric == "EF.delay.max" and r.method == "closed-form").value
    for r in res:
        if r.metric.startswith("EF.s") and r.metric.endswith("mean"):
            assert 0 < r.value < bound and r.interval.kind == Kind.CI
    with pytest.raises(ScenarioError):
        pq_txq.metric_kind("EF.sx.delay.mean")
