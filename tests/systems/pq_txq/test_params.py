"""The PQ + TxQ parameters (qosbound.systems.pq_txq.params): the lower layers name a bad parameter by its
attribute of Params (or the formula's own name), and the system layer reports it against the scenario field the
user wrote."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.errors import ScenarioError
from qosbound.analytic import pq_txq as formulas
from qosbound.progress import QUIET
from qosbound.systems.pq_txq import closed_form, model_checked, render, simulated
from qosbound.systems.pq_txq.params import PARAM_FIELDS, Params, scenario_fields
from qosbound.systems.pq_txq.schema import ModelOptions, SimOptions


def params(ef_size=128.0, be=(1500.0,), arrivals="poisson", ef_rate=300e3) -> Params:
    return Params(C=2e6, Q_t=3, unit=512.0, pq_cap=4, ef_size=ef_size, ef_rate=ef_rate,
                  lam=ef_rate / (8.0 * ef_size), arrivals=arrivals, be_sizes=np.array(be, dtype=float),
                  be_probs=np.ones(len(be)) / len(be), burst=ef_size)


def test_model_layer_names_the_parameter_and_the_adapter_the_field():
    """A fractional EF size is 'ef_size' to the model layer and 'traffic.EF.size' to the user."""
    from qosbound.models.pq_txq import render as render_model

    p = params(ef_size=128.5)
    with pytest.raises(ScenarioError) as low:
        render_model(p, ModelOptions())
    assert low.value.field == "ef_size" and "whole number of bytes" in low.value.problem
    with pytest.raises(ScenarioError) as up:
        model_checked.model_results(p, ModelOptions(), [0.01], [0.99], QUIET)
    assert up.value.field == "traffic.EF.size" and up.value.problem == low.value.problem


def test_a_method_option_is_named_in_its_section():
    """A fractional granule is an option of methods.model-checked."""
    with pytest.raises(ScenarioError) as e:
        render.render(params(), ModelOptions(granule=100.5))
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
        simulated.simulated_results(p, SimOptions(packets=1000, replications=2), [0.01], [0.99], QUIET)
    assert up.value.field == "traffic.EF.arrivals"
    with pytest.raises(ScenarioError) as tr:
        simulated.simulate_trace(p, 100, 1)
    assert tr.value.field == "traffic.EF.arrivals"


def test_unknown_names_and_file_errors_pass_unchanged():
    """An error naming no Params attribute and no option section, or one already tied to a file, is not
    rewritten."""
    with pytest.raises(ScenarioError) as e:
        with scenario_fields():
            raise ScenarioError("a trace needs at least one packet", field="packets")
    assert e.value.field == "packets"
    with pytest.raises(ScenarioError) as f:
        with scenario_fields("methods.simulated"):
            raise ScenarioError("bad", file="x.yaml", field="C")
    assert f.value.field == "C" and f.value.file == "x.yaml"
    assert set(PARAM_FIELDS) == set(Params.__dataclass_fields__)


def test_the_formulas_name_the_line_rate_and_the_system_the_field():
    """A line rate whose transmission times underflow is 'C' to the closed forms and 'link.rate' to the user."""
    p = Params(C=1e-300, Q_t=3, unit=512.0, pq_cap=4, ef_size=128.0, ef_rate=1e-301, lam=1e-301 / 1024.0,
               arrivals="poisson", be_sizes=np.array([1500.0]), be_probs=np.array([1.0]), burst=128.0)
    with pytest.raises(ScenarioError) as low:
        formulas.check_range(p)
    assert low.value.field == "C" and "transmission time" in low.value.problem
    with pytest.raises(ScenarioError) as up:
        closed_form.closed_form_results(p)
    assert up.value.field == "link.rate" and up.value.problem == low.value.problem
