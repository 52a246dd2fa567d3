"""qosbound/reproduce/tsq_experiments.py: a sweep's replications are kept reduced when QOSBOUND_CACHE_DIR is set,
and a sweep read back is the sweep computed, without simulating again."""

from __future__ import annotations

import numpy as np

from qosbound.reproduce import tsq_experiments as E
from qosbound.systems.solve_cache import ENV


def test_a_sweep_read_back_equals_the_sweep_simulated_and_runs_no_simulation(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "kept"))
    runs = []
    real = E.simulate

    def counting(cfg, seed=1):
        runs.append(seed)
        return real(cfg, seed=seed)

    monkeypatch.setattr(E, "simulate", counting)
    first = E.hint_sweep("audio", 3.0, 1.0, 2, hints=(4,), keep=(4,))
    assert len(runs) == 4  # two replications at hint 4 and two with PI alone
    second = E.hint_sweep("audio", 3.0, 1.0, 2, hints=(4,), keep=(4,))
    assert len(runs) == 4
    assert first["rows"] == second["rows"] and first["packets"] == second["packets"] > 0
    assert np.array_equal(first["delays"][4], second["delays"][4]) and len(first["delays"][4]) > 10
    # what is kept is the reduction, not every flow's packets: far smaller than the packets simulated
    kept = sum(f.stat().st_size for f in (tmp_path / "kept").rglob("*.pickle"))
    assert kept < 2 * first["packets"]  # the per-packet record takes more than 30 B a packet
    udp = E.udp_hint_sweep(3.0, 1.0, 1, hints=(4,))
    assert E.udp_hint_sweep(3.0, 1.0, 1, hints=(4,)) == udp and len(runs) == 6
