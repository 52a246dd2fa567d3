"""Marker colour fractions under Poisson input: the slotted chain's limit against the numba marker."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from pathlib import Path

from qosbound.analytic.markers import poisson_fractions, slotted_marker, slotted_trtcm
from qosbound.validation.markers import mark_stream, new_state

ROOT = Path(__file__).resolve().parents[1]


def test_general_chain_equals_the_trtcm_chain():
    """slotted_trtcm (the chain of models/marker.prism, argument order p, ip, ic, pbs, cbs, g) is the colour-blind
    trTCM case of the general slotted chain (C gains ic up to cbs, P gains ip up to pbs)."""
    for p, ip, ic, pbs, cbs, g in [(0.3, 2, 1, 16, 12, 4), (0.05, 3, 2, 20, 9, 3), (0.9, 1, 1, 5, 5, 2)]:
        a = slotted_marker("trtcm", p, g, ic, cbs, ip, pbs)
        b = slotted_trtcm(p, ip, ic, pbs, cbs, g)
        np.testing.assert_allclose(a, b, atol=1e-12)


CASES = [
    ("trtcm", dict(cir=6e5, cbs=3000, second_depth=3000, pir=9e5), (6e5, 3000, 9e5, 3000), False, (1, 0, 0)),
    ("srtcm", dict(cir=6e5, cbs=3000, second_depth=3000), (6e5, 3000, 3000, 0), False, (1, 0, 0)),
    ("trtcm", dict(cir=4e5, cbs=2000, second_depth=5000, pir=8e5), (4e5, 2000, 8e5, 5000), True, (0.5, 0.3, 0.2)),
    ("srtcm", dict(cir=8e5, cbs=2000, second_depth=6000), (8e5, 2000, 6000, 0), True, (0.6, 0.3, 0.1)),
]


@pytest.mark.parametrize("kind,kw,state,aware,pre", CASES)
def test_poisson_fractions_match_the_simulated_marker(kind, kw, state, aware, pre):
    """RFC 2697/2698 markers fed Poisson packets: numerical fractions agree with simulation within the
    numerical error estimate plus four standard errors of the simulated fractions."""
    f, err = poisson_fractions(kind, 1e6, 1000, aware=aware, pre=pre, **kw)
    assert f.sum() == pytest.approx(1.0) and np.all(f >= 0)
    rng = np.random.default_rng(11)
    n, lam = 400_000, 1e6 / 8000
    times = np.cumsum(rng.exponential(1 / lam, n))
    precol = rng.choice(3, n, p=pre).astype(np.int64)
    colours = mark_stream(kind, new_state(kind, *state), times, np.full(n, 1000.0), pre=precol, aware=aware)
    sim = np.bincount(colours, minlength=3) / n
    se = np.sqrt(sim * (1 - sim) / n)
    assert np.all(np.abs(f - sim) <= err + 4 * se + 1e-4), (f, err, sim)


def test_light_load_is_all_green_and_overload_tends_to_the_cbr_limit():
    """Far below CIR nearly every packet is green; far above, the fractions approach the smooth-input ones."""
    f, _ = poisson_fractions("trtcm", 1e5, 500, 1e6, 4000, 4000, pir=2e6)
    assert f[0] > 0.999
    f, err = poisson_fractions("trtcm", 8e6, 500, 1e6, 1000, 1000, pir=2e6)
    np.testing.assert_allclose(f, [1 / 8, 1 / 8, 6 / 8], atol=0.02 + err.max())


def test_af_scenario_with_fixed_sizes_uses_the_poisson_solution():
    """An AF class marked by a two-colour bucket, Poisson fixed-size input: colour results carry the
    discretisation-error interval and agree with the srTCM green fraction."""
    from qosbound.scenario import build
    from qosbound.systems.af import colour_fraction_error, colour_fractions

    raw = yaml.safe_load((ROOT / "examples" / "qstp2008.yaml").read_text())
    name = next(iter(raw["traffic"]))
    raw["traffic"][name]["sizes"] = "fixed"
    scn = build(raw)
    t = scn.traffic[name]
    f, src = colour_fractions(t)
    assert "Poisson input" in src and f[1] == 0.0 and f.sum() == pytest.approx(1.0)
    g, _ = poisson_fractions("srtcm", t.rate, t.size, t.marker.cir, t.marker.cbs, t.size)
    assert f[0] == pytest.approx(g[0])
    assert colour_fraction_error(t).max() > 0
