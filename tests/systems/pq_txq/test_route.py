"""Which chain answers model-checked for a pq_txq scenario (qosbound/systems/pq_txq/route.py), and its refusals."""

from __future__ import annotations

import pytest

from qosbound.errors import ResourceError
from qosbound.systems import pq_txq
from tests.pq_txq_helpers import aggregate_scenario, ef_streams


def test_model_refuses_cbr_aggregates_and_models_merged_poisson():
    scn = aggregate_scenario(ef_streams(100, 200))
    with pytest.raises(ResourceError) as e:
        pq_txq.check_model_size(scn)
    assert "credit counter per stream" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ResourceError):
        pq_txq.check_model_size(aggregate_scenario(ef_streams(100, phases=["1 ms"])))
    # several Poisson streams are one Poisson stream: the model's state bound is that of the single form
    from qosbound.models.pq_txq_size import predicted_states

    agg = pq_txq.params(aggregate_scenario(ef_streams(100, 200, arrivals="poisson")))
    one = pq_txq.params(aggregate_scenario({"rate": "300 kbit/s", "size": "128 B", "arrivals": "poisson"}))
    opts = scn.methods.model_checked
    pq_txq.check_model_size(aggregate_scenario(ef_streams(100, 200, arrivals="poisson")))
    assert predicted_states(agg, opts) == predicted_states(one, opts)
