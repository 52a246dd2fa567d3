"""A dumbbell as the event loop's inputs (qosbound.validation.dumbbell_arrays): classes ordered by falling priority
with the layout that maps them back, markers shared through one table, start times and the kernel's seed drawn from
the run's seed, and bad parameters refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from qosbound.validation.dumbbell_arrays import kernel_inputs
from qosbound.validation.dumbbell_config import Class, Dumbbell, Marker, Queue, Udp


def test_classes_run_by_falling_priority_and_the_layout_maps_them_back():
    """Internal class rows follow the FIFOs (rows 0, 1) sorted by falling priority within a direction; the layout
    names each row's (direction, index) and Class, and each flow's data goes to the row of the class it named."""
    net = Dumbbell(n=2, fwd_classes=(Class("low", priority=0), Class("high", priority=2), Class("mid", priority=1)),
                   data_class=(0, 1))
    inputs, layout = kernel_inputs(net, 1)
    assert layout.order == [(0, 1), (0, 2), (0, 0)]
    assert [c.name for c in layout.classes] == ["high", "mid", "low"]
    dcls = inputs.tcp[11]
    assert [layout.classes[k].name for k in dcls] == ["low", "high"]
    assert inputs.queues[3].shape == (2 + 3, 5)  # one dropper row per FIFO and per class


def test_a_source_shares_a_flow_groups_marker_row():
    """An open-loop source with ``marker=0`` meters through the same row of the marker table as the TCP flows of
    group 0 (one token bucket), not a copy of it."""
    m = Marker("two-colour", 1e6, 1e4)
    net = Dumbbell(n=2, marker=(m, None), marker_of=(0, 0), udp=(Udp("cbr", 1e5, 500, marker=0),))
    inputs, _ = kernel_inputs(net, 1)
    kinds, states = inputs.markers
    dmark, umark = inputs.tcp[8], inputs.udp[6]
    assert list(dmark) == [0, 0] and umark[0] == 0
    assert len(kinds) == 1 and states.shape == (1, 7)


def test_start_times_and_the_kernel_seed_follow_the_run_seed():
    """Start times are drawn in [0, start_spread) from the run's seed; the same seed gives the same inputs, another
    seed other ones."""
    net = Dumbbell(n=5, start_spread=0.5)
    a, _ = kernel_inputs(net, 7)
    b, _ = kernel_inputs(net, 7)
    c, _ = kernel_inputs(net, 8)
    starts = a.tcp[5]
    assert np.all((starts >= 0) & (starts < 0.5))
    assert np.array_equal(starts, b.tcp[5]) and a.seed == b.seed
    assert not np.array_equal(starts, c.tcp[5]) and a.seed != c.seed


@pytest.mark.parametrize("net, message", [
    (Dumbbell(loss=1.0), "loss probabilities"),
    (Dumbbell(n=2, colour=(0, 3)), "colours are 0, 1 or 2"),
    (Dumbbell(n=1, fwd_classes=(Class("only"),), data_class=(2,)), "data_class: class 2 does not exist"),
    (Dumbbell(fwd=Queue(mode="fifo")), "queue mode 'fifo'"),
    (Dumbbell(n=1, trace=("tcp7",)), "trace: unknown sources"),
], ids=["loss", "colour", "class", "mode", "trace"])
def test_bad_parameters_are_refused_by_name(net, message):
    with pytest.raises(ValueError, match=message):
        kernel_inputs(net, 1)
