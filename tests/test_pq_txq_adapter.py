"""The PQ + TxQ adapter (qosbound.systems.pq_txq_adapter): the lower layers name a bad parameter by its
attribute of Params, and the system layer reports it against the scenario field the user wrote."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.errors import ScenarioError
from qosbound.params import Params
from qosbound.progress import QUIET
from qosbound.systems import pq_txq_adapter as adapter
from qosbound.systems.pq_txq import ModelOptions, SimOptions


def params(ef_size=128.0, be=(1500.0,), arrivals="poisson", ef_rate=300e3) -> Params:
    return Params(C=2e6, Q_t=3, unit=512.0, pq_cap=4, ef_size=ef_size, ef_rate=ef_rate,
                  lam=ef_rate / (8.0 * ef_size), arrivals=arrivals, be_sizes=np.array(be, dtype=float),
                  be_probs=np.ones(len(be)) / len(be), burst=ef_size)


def test_model_layer_names_the_parameter_and_the_adapter_the_field():
    """A fractional EF size is 'ef_size' to the model layer and 'traffic.EF.size' to the user."""
    from qosbound.models.pq_txq import render

    p = params(ef_size=128.5)
    with pytest.raises(ScenarioError) as low:
        render(p, ModelOptions())
    assert low.value.field == "ef_size" and "whole number of bytes" in low.value.problem
    with pytest.raises(ScenarioError) as up:
        adapter.model_results(p, ModelOptions(), [0.01], [0.99], QUIET)
    assert up.value.field == "traffic.EF.size" and up.value.problem == low.value.problem


def test_a_method_option_is_named_in_its_section():
    """A fractional granule is an option of methods.model-checked."""
    with pytest.raises(ScenarioError) as e:
        adapter.render(params(), ModelOptions(granule=100.5))
    assert e.value.field == "methods.model-checked.granule"


def test_simulator_errors_name_the_scenario_field():
    """Bernoulli arrivals on fractional sizes: 'arrivals' in the simulator, traffic.EF.arrivals for the user,
    for the replications and for a trace alike."""
    from qosbound.validation.pq_txq_sim import setup

    p = params(ef_size=128.5, arrivals="bernoulli")
    with pytest.raises(ScenarioError) as low:
        setup(p)
    assert low.value.field == "arrivals"
    with pytest.raises(ScenarioError) as up:
        adapter.simulated_results(p, SimOptions(packets=1000, replications=2), [0.01], [0.99], QUIET)
    assert up.value.field == "traffic.EF.arrivals"
    with pytest.raises(ScenarioError) as tr:
        adapter.simulate_trace(p, 100, 1)
    assert tr.value.field == "traffic.EF.arrivals"


def test_unknown_names_and_file_errors_pass_unchanged():
    """An error naming no Params attribute and no option section, or one already tied to a file, is not
    rewritten."""
    with pytest.raises(ScenarioError) as e:
        with adapter.scenario_fields():
            raise ScenarioError("a trace needs at least one packet", field="packets")
    assert e.value.field == "packets"
    with pytest.raises(ScenarioError) as f:
        with adapter.scenario_fields("methods.simulated"):
            raise ScenarioError("bad", file="x.yaml", field="C")
    assert f.value.field == "C" and f.value.file == "x.yaml"
    assert set(adapter.PARAM_FIELDS) == set(Params.__dataclass_fields__)
