"""The figures of ``qosbound reproduce qstp2008`` drawn from fabricated results: every figure written as PNG and
SVG, Fig. 4(b)'s recovery only when that experiment ran."""

from __future__ import annotations

from qosbound.reproduce.qstp2008_figures import plots
from tests.reproduce import qstp2008_fabricated as FAB


def test_every_figure_is_written(tmp_path):
    res = dict(FAB.results(), recovery=FAB.recovery())
    files = plots(res, tmp_path / "figs")
    names = sorted(p.rsplit("/", 1)[-1] for p in files)
    assert names == sorted(f"qstp2008_{f}.{e}" for f in ("fig4", "fig4b_recovery", "fig5", "fig6", "fig7")
                           for e in ("png", "svg"))
    assert all((tmp_path / "figs" / n).stat().st_size > 1000 for n in names)


def test_no_recovery_figure_without_the_recovery_experiment(tmp_path):
    files = plots(FAB.results(), tmp_path)
    assert len(files) == 8 and not any("recovery" in f.rsplit("/", 1)[-1] for f in files)
