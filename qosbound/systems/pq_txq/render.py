"""The PRISM model of a ``pq_txq`` scenario and its property file (``qosbound model render``), errors naming the
scenario's fields."""

from __future__ import annotations

from qosbound.models.pq_txq import render as render_model
from qosbound.models.pq_txq import write_files as write
from qosbound.systems.pq_txq.params import params, scenario_fields
from qosbound.systems.pq_txq.route import check_model_size
from qosbound.systems.pq_txq.schema import Scenario

__all__ = ["render", "write_files", "render_models"]


def render(p, opts, scenario_name: str = ""):
    """The scenario's rendered PRISM model (:func:`qosbound.models.pq_txq.render`), errors naming its fields."""
    with scenario_fields("methods.model-checked"):
        return render_model(p, opts, scenario_name)


def write_files(rendered, out_dir):
    """Write a rendered model and its property file (:func:`qosbound.models.pq_txq.write_files`)."""
    return write(rendered, out_dir)


def render_models(scn: Scenario, out_dir) -> list:
    """Write the scenario's PRISM model and property file (``qosbound model render``)."""
    check_model_size(scn)
    rendered = render(params(scn), scn.methods.model_checked, scn.name)
    return list(write_files(rendered, out_dir))
