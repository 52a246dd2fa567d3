"""The exact PQ + TxQ chain against the ring-count chain (models/pq_txq_ring.py) as the tx-ring grows.

Prints three tables (one core: see _common):

1. for Q_t = 5 ... 256 and 1 ... 4 BE sizes (a packet-unit ring of 1536-byte units, PQ 10, Poisson EF 300 kbit/s of
   128 B at 2 Mbit/s: Ferrari et al.'s test bed with one packet per unit): the exact chain's state bound, and where it is at most ``--exact-max`` states its built
   states, build + solve seconds and peak memory; the ring chain's states, seconds and peak memory; the ratios;
2. the ring chain against the exact one where both fit (relative error of mean, p99, p99.9);
3. the targets: wan100 (100 Mbit/s, tx-ring 64 x 1500 B, IMIX, PQ 64, EF 10 %) and agg1g (1 Gbit/s, tx-ring 256)
   and a few other ports: p99, p99.9, mean and loss by the ring chain (approximation) and, where its MDP fits
   BOUND_STATES, by the ring bound (models/pq_txq_ring_bound.py), with their times, beside the packet
   simulator's value and its 95 % interval (8 x 1e6 EF packets), and the ratios to it.

With ``--survey`` instead, the accuracy survey (approximation, bound and reference side by side, and the errors):

4. small rings against the exact chain (the staged chain with one position per stage, itself equal to the PRISM
   chain): five configurations (Ferrari et al.'s sizes; EF the size of the smallest BE packet; one 1536-byte BE
   size; IMIX with EF at 40 % and 70 %) at Q_t = 3 ... 8, the approximation with one stage and the bound with one
   stage and with the front run;
5. high EF shares against the simulator: 100 Mbit/s, ring 32, PQ 64, IMIX, EF at 50 ... 80 % of the link.

Every measurement runs in a forked child; memory is the child's peak resident set. Run:
python benchmarks/bench_ring.py [--quick] [--exact-max N]
python benchmarks/bench_ring.py --survey [--quick]
python benchmarks/bench_ring.py --ports [--quick]   (table 3 alone)
python benchmarks/bench_ring.py --grid [--quick]    (the published grid: bound / simulated, approximation / simulated)
python benchmarks/bench_ring.py --why [--quick]     (where the bound is loose: the 1 Gbit/s 128-ring of the grid)
python benchmarks/bench_ring.py --timing CHECKOUT [--rounds N]  (plan wan100 here against another checkout, e.g.
    the main branch's: wall and CPU seconds side by side, and their ratio)
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import resource
import time

try:
    from benchmarks import _common  # noqa: F401  (one BLAS thread)
except ImportError:  # run as a script from benchmarks/
    import _common  # noqa: F401
try:
    from benchmarks._result import emit, figure
except ImportError:  # run as a script from benchmarks/
    from _result import emit, figure

from qosbound.models import ring_abstraction
from qosbound.scenario import build, load
from qosbound.systems.pq_txq import ModelOptions, params

SIZES = {1: [(1536, 1.0)], 2: [(512, 0.6), (1536, 0.4)], 3: [(512, 0.5), (1024, 0.3), (1536, 0.2)],
         4: [(512, 0.4), (1024, 0.3), (1280, 0.2), (1536, 0.1)]}
IMIX = [(40, 7 / 12), (576, 4 / 12), (1500, 1 / 12)]


def instance(QT, K, PQ=10):
    raw = {"name": f"qt{QT}-k{K}", "system": "pq_txq", "link": {"rate": "2 Mbps"},
           "txq": {"units": QT, "unit_size": "1536 B"}, "pq": {"capacity": PQ},
           "traffic": {"EF": {"rate": "300 kbit/s", "size": "128 B", "arrivals": "poisson"},
                       "BE": {"saturated": True, "sizes": [{"size": f"{s} B", "p": p} for s, p in SIZES[K]]}}}
    return params(build(raw))


def port(name, rate, QT, PQ, ef_rate, ef_size=200, be=IMIX):
    raw = {"name": name, "system": "pq_txq", "link": {"rate": rate},
           "txq": {"units": QT, "unit_size": f"{max([ef_size] + [s for s, _ in be])} B"}, "pq": {"capacity": PQ},
           "traffic": {"EF": {"rate": ef_rate, "size": f"{ef_size} B", "arrivals": "poisson"},
                       "BE": {"saturated": True, "sizes": [{"size": f"{s} B", "p": p} for s, p in be]}},
           "metrics": {"ccdf_at": ["1 ms"], "quantiles": [0.99, 0.999]}}
    return build(raw)


def in_child(fn, *args):
    """(fn(*args), seconds, peak resident MB) measured in a forked child."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        os.close(r)
        try:
            t0 = time.perf_counter()
            out = fn(*args)
            dt = time.perf_counter() - t0
            res = (out, dt, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, None)
        except Exception as e:  # noqa: BLE001  (reported in the table)
            res = (None, 0.0, 0.0, f"{type(e).__name__}: {e}")
        with os.fdopen(w, "wb") as f:
            pickle.dump(res, f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    out, dt, mb, err = pickle.loads(data) if data else (None, 0.0, 0.0, "the child died")
    if err:
        raise RuntimeError(err)
    return out, dt, mb


def exact(p):
    from qosbound.models.pq_txq import delay_distribution, render

    dd, built = delay_distribution(render(p, ModelOptions()))
    return built.states, dd.mean(), dd.quantile(0.99), dd.quantile(0.999)


def ring(p, stages=1):
    """One stage (the polynomial chain), or ``stages=None``: as many as ``plan`` takes (STAGED_STATES)."""
    from qosbound.models.pq_txq_ring import solve

    s = solve(p, [], [0.99, 0.999], stages=stages)
    return s.states, s.mean, s.quantiles[0.99], s.quantiles[0.999], s.loss, s.ccdf_grid.size, s.stages


ABSTRACTION = {1: lambda QT: ("stages(1)", lambda: ring_abstraction.stages(QT, 1)),
               2: lambda QT: ("front_run", lambda: ring_abstraction.front_run(QT, 1))}


def bound(p, which=None):
    """The ring bound as ``model-checked`` computes it (every abstraction that fits, capped by the closed-form
    maximum delay), or ``which`` = 1 (one stage) / 2 (the front run) alone: (states, mean, p99, p99.9, loss,
    the abstractions solved)."""
    from qosbound.models.pq_txq_ring_bound import solve_bound
    from qosbound.systems.pq_txq.ring_results import closed_form_max

    only = [ABSTRACTION[which](int(p.Q_t))] if which else None
    b = solve_bound(p, [], [0.99, 0.999], only=only, max_delay=closed_form_max(p))
    return b.states, b.mean, b.quantiles[0.99], b.quantiles[0.999], b.loss, "+".join(n for n, *_ in b.solved)


def has_bound(p):
    from qosbound.models.pq_txq_ring_bound import BOUND_STATES
    from qosbound.models.pq_txq_ring_bound_budget import smallest_states

    return smallest_states(p) <= BOUND_STATES


def size_table(qts, exact_max):
    """Print the tables; return the largest exact chain built: (Q_t, BE sizes, exact states, ring states, exact s,
    ring s), or None."""
    from qosbound.models.pq_txq_size import predicted_states

    print("Exact chain and ring-count chain (2 Mbit/s, 1536-byte units = one packet each, PQ 10, EF 300 kbit/s "
          "Poisson of 128 B)")
    print(f"{'Q_t':>4} {'BE':>3} {'exact bound':>12} {'exact st':>9} {'exact s':>8} {'exact MB':>8} "
          f"{'ring st':>8} {'ring s':>7} {'ring MB':>8} {'states x':>9} {'time x':>8} {'S':>3} {'staged st':>9} "
          f"{'staged s':>8}")
    cmp_rows, largest = [], None
    for QT in qts:
        for K in SIZES:
            p = instance(QT, K)
            bound, _ = predicted_states(p, ModelOptions())
            (rs, rmean, r99, r999, _, _, _), rt, rmb = in_child(ring, p)
            (ss, smean, s99, s999, _, _, S), st, _ = in_child(ring, p, None)
            if bound <= exact_max:
                (es, emean, e99, e999), et, emb = in_child(exact, p)
                cmp_rows.append((QT, K, rmean / emean - 1, r99 / e99 - 1, r999 / e999 - 1, S, smean / emean - 1,
                                 s99 / e99 - 1, s999 / e999 - 1))
                ex = f"{es:>9} {et:>8.2f} {emb:>8.0f}"
                if largest is None or es > largest[2]:
                    largest = (QT, K, es, rs, et, rt)
                ratio = f"{es / rs:>9.3g} {et / rt:>8.3g}"
            else:
                ex = f"{'-':>9} {'-':>8} {'-':>8}"
                ratio = f"{bound / rs:>9.3g} {'-':>8}"
            print(f"{QT:>4} {K:>3} {float(bound):>12.3g} {ex} {rs:>8} {rt:>7.2f} {rmb:>8.0f} {ratio} {S:>3} {ss:>9} "
                  f"{st:>8.2f}", flush=True)
    print("'exact bound' = the state bound known before building; '-' = above --exact-max (not built); "
          "'exact s' = render + Storm parse, build and stationary solve + the delay distribution; 'ring s' = chain, "
          "solve and delay distribution; 'states x' = exact states (or bound) / ring states; 'time x' = exact "
          "seconds / ring seconds. "
          "Memory = peak resident set of the forked child (Python + numpy + Storm). 'S' = the stages plan takes "
          "(the most within 1e4 states; S = Q_t is the exact chain), with their states and seconds.")
    print()
    print("Ring-count chain against the exact chain (relative error): one stage (an approximation), and the stages "
          "plan takes (S = Q_t: exact)")
    print(f"{'Q_t':>4} {'BE':>3} {'mean':>9} {'p99':>9} {'p99.9':>9} {'S':>3} {'mean':>9} {'p99':>9} {'p99.9':>9}")
    for QT, K, a, b, c, S, d, e, f in cmp_rows:
        print(f"{QT:>4} {K:>3} {a:>+9.4f} {b:>+9.4f} {c:>+9.4f} {S:>3} {d:>+9.4f} {e:>+9.4f} {f:>+9.4f}")
    return largest


def simulate(scn, packets, reps):
    from qosbound.progress import QUIET
    from qosbound.systems.pq_txq.simulated import simulated_results

    opts = scn.methods.simulated.model_copy(update={"packets": packets, "replications": reps, "seed": 7})
    return {r.metric: (r.value, r.interval.low, r.interval.high)
            for r in simulated_results(params(scn), opts, [], [0.99, 0.999], QUIET)}


def target_table(packets, reps):
    """Print the ports' table; return, per port, the seconds of the ring chain and of the bound (None where its
    MDP is too large) and the p99 of the approximation, of the bound and of the simulator."""
    from qosbound.models.pq_txq_size import predicted_states

    ports = [("wan100 (target)", load("examples/wan100.yaml")), ("agg1g", load("examples/agg1g.yaml")),
             ("10M ring 16 EF 30 %", port("p10", "10 Mbps", 16, 32, "3 Mbit/s")),
             ("100M ring 32 EF 40 %", port("p100", "100 Mbps", 32, 64, "40 Mbit/s")),
             ("1G ring 128 EF 25 % 1000 B, 2 BE", port("p1g", "1 Gbps", 128, 128, "250 Mbit/s", 1000,
                                                         [(64, 0.6), (1500, 0.4)]))]
    print()
    print(f"Ports: the ring-count chain (approximation) and the ring bound against the packet simulator ({reps} x "
          f"{packets:g} EF packets, 95 % interval)")
    out = {}
    for name, scn in ports:
        p = params(scn)
        exact_bound, _ = predicted_states(p, ModelOptions())
        (rs, rmean, r99, r999, rloss, lat, S), rt, rmb = in_child(ring, p, None)
        sim, st, _ = in_child(simulate, scn, packets, reps)
        bnd = None
        if has_bound(p):
            bnd, bt, bmb = in_child(bound, p)
        print(f"{name}: exact chain bound {float(exact_bound):.3g} states; ring chain ({S} stage(s), as plan) {rs} "
              f"states, {rt:.2f} s, {rmb:.0f} MB (lattice {lat} points); "
              + (f"ring bound ({bnd[5]}) {bnd[0]} states, {bt:.2f} s, {bmb:.0f} MB; " if bnd else
                 "ring bound: its MDP is above BOUND_STATES; ")
              + f"simulator {st:.1f} s")
        for i, (label, v, key) in enumerate((("mean", rmean, "EF.delay.mean"), ("p99", r99, "EF.delay.p99"),
                                             ("p99.9", r999, "EF.delay.p99.9"), ("loss", rloss, "EF.loss"))):
            sv, lo, hi = sim[key]
            print(_row(label, v, bnd[1 + i] if bnd else None, sv, lo, hi, key == "EF.loss"))
        out[name] = {"ring_s": rt, "bound_s": bt if bnd else None, "approx_p99": r99,
                     "bound_p99": bnd[2] if bnd else None, "sim_p99": sim["EF.delay.p99"][0]}
    return out


def _rel(v, ref):
    return f"{v / ref - 1:+.4f}" if ref else "n/a"


def _row(label, approx, bnd, ref, lo=None, hi=None, is_loss=False):
    """One metric: approximation, bound and reference (with its interval) and the ratios to the reference."""
    unit, f = ("", 1.0) if is_loss else (" ms", 1e3)
    iv = f" [{lo * f:.6g}, {hi * f:.6g}]" if lo is not None else ""
    b = f"  bound {bnd * f:.6g}{unit}" if bnd is not None else ""
    rb = f"  bound/ref {bnd / ref:.4f}" if bnd is not None and ref else ""
    return (f"   {label:>6}: approx {approx * f:.6g}{unit}{b}  reference {ref * f:.6g}{unit}{iv}  "
            f"approx rel {_rel(approx, ref)}{rb}")


SURVEY = {"ferrari": ("300 kbit/s", 128, SIZES[3], 10, "2 Mbps"),
          "ef-as-small-be": ("400 kbit/s", 512, [(512, 0.5), (1536, 0.5)], 8, "2 Mbps"),
          "large-be": ("300 kbit/s", 128, [(1536, 1.0)], 10, "2 Mbps"),
          "imix-ef40": ("4 Mbit/s", 200, IMIX, 12, "10 Mbps"),
          "imix-ef70": ("7 Mbit/s", 200, IMIX, 16, "10 Mbps")}


def survey_small(qts):
    print("Small rings: the approximation (one stage) and the bound (one stage; the front run) against the exact chain "
          "(one position per stage); relative error of mean, p99, p99.9, and loss ratio")
    print(f"{'config':>15} {'Q_t':>3} | {'approx mean':>11} {'p99':>8} {'p99.9':>8} {'loss x':>7} | "
          f"{'bound1 mean':>11} {'p99':>8} {'p99.9':>8} {'loss x':>7} | {'bound2 mean':>11} {'p99':>8} {'p99.9':>8} "
          f"{'loss x':>7} | {'s':>5}")
    worst = {"approx": 0.0, "b1": math.inf, "b2": math.inf}
    for cfg, (rate, size, be, PQ, link) in SURVEY.items():
        for QT in qts:
            scn = port(cfg, link, QT, PQ, rate, size, be)
            p = params(scn)
            (es, em, e99, e999, el, _, _), et, _ = in_child(ring, p, QT)
            (_, am, a99, a999, al, _, _), _, _ = in_child(ring, p, 1)
            b1, bt, _ = in_child(bound, p, 1)
            b2 = in_child(bound, p, 2)[0] if QT > 2 else b1
            cells = []
            for key, (m, q1, q2, loss) in (("approx", (am, a99, a999, al)), ("b1", b1[1:5]), ("b2", b2[1:5])):
                errs = (m / em - 1, q1 / e99 - 1, q2 / e999 - 1)
                if key == "approx":
                    worst[key] = max(worst[key], max(abs(x) for x in errs))
                else:  # the smallest error of a bound (never negative unless the bound is wrong)
                    worst[key] = min(worst[key], min(errs), (loss - el) / el if el > 1e-12 else math.inf)
                lx = f"{loss / el:7.3f}" if el > 1e-12 else f"{'-':>7}"
                cells.append(f"{errs[0]:>+11.4f} {errs[1]:>+8.4f} {errs[2]:>+8.4f} {lx}")
            print(f"{cfg:>15} {QT:>3} | " + " | ".join(cells) + f" | {bt:>5.2f}", flush=True)
    print("'loss x' = model loss / exact loss ('-': the exact loss is below 1e-12). Smallest relative error of a "
          f"bound over all rows and metrics (negative would be a bug): one stage {worst['b1']:+.2e}, two stages "
          f"{worst['b2']:+.2e}; the approximation's largest |error|: {worst['approx']:.4f}.")


def survey_high_ef(packets, reps):
    print()
    print(f"High EF shares: 100 Mbit/s, ring 32, PQ 64, IMIX, EF 200 B; approximation (stages as plan), bound "
          f"(stages as plan) against the simulator ({reps} x {packets:g} EF packets, 95 % interval)")
    for share in (50, 60, 70, 80):
        scn = port(f"ef{share}", "100 Mbps", 32, 64, f"{share} Mbit/s")
        p = params(scn)
        (rs, rmean, r99, r999, rloss, _, S), rt, _ = in_child(ring, p, None)
        bnd, bt, _ = in_child(bound, p)
        sim, st, _ = in_child(simulate, scn, packets, reps)
        print(f"EF {share} %: approximation {S} stage(s) {rs} states {rt:.2f} s; bound ({bnd[5]}) {bnd[0]} "
              f"states {bt:.2f} s; simulator {st:.1f} s")
        for i, (label, v, key) in enumerate((("mean", rmean, "EF.delay.mean"), ("p99", r99, "EF.delay.p99"),
                                             ("p99.9", r999, "EF.delay.p99.9"), ("loss", rloss, "EF.loss"))):
            sv, lo, hi = sim[key]
            print(_row(label, v, bnd[1 + i], sv, lo, hi, key == "EF.loss"), flush=True)


#: The published grid (``--grid``): the kinds of port where the bound was loose or the approximation far off
#: (issue 18): lossy, small PQ, EF large and small against BE, bimodal BE; and two realistic ports.
GRID = [("10M ring 16 PQ 4, EF 40 B 30 % (lossy)", ("10 Mbps", 16, 4, "3 Mbit/s", 40, IMIX)),
        ("10M ring 16 PQ 16, EF 1200 B 30 %", ("10 Mbps", 16, 16, "3 Mbit/s", 1200, IMIX)),
        ("1G ring 128 PQ 64, EF 1500 B 5 %, BE 40/1500 0.9/0.1", ("1 Gbps", 128, 64, "50 Mbit/s", 1500,
                                                                  [(40, 0.9), (1500, 0.1)])),
        ("100M ring 64 PQ 8, EF 40 B 5 %, BE 40/1500 0.1/0.9", ("100 Mbps", 64, 8, "5 Mbit/s", 40,
                                                               [(40, 0.1), (1500, 0.9)])),
        ("2M ring 4 PQ 4, EF 200 B 40 %, BE 40/1500 (lossy)", ("2 Mbps", 4, 4, "800 kbit/s", 200,
                                                              [(40, 0.5), (1500, 0.5)])),
        ("10M ring 16 PQ 32, EF 200 B 30 %, IMIX", ("10 Mbps", 16, 32, "3 Mbit/s", 200, IMIX)),
        ("wan100: 100M ring 64 PQ 64, EF 10 %, IMIX", ("100 Mbps", 64, 64, "10 Mbit/s", 200, IMIX))]


def grid_table(packets, reps):
    """bound / simulated and approximation / simulated for mean, p99, p99.9 and loss over GRID, and the range of
    each ratio (the figures docs/pq_txq.md and the approximation's ``neglects`` text quote)."""
    print(f"Grid: the ring bound (as model-checked computes it) and the ring-count chain (stages as plan) over the "
          f"packet simulator ({reps} x {packets:g} EF packets, 95 % interval)")
    ratios = {"bound": {k: [] for k in ("mean", "p99", "p99.9", "loss")},
              "approx": {k: [] for k in ("mean", "p99", "p99.9", "loss")}}
    for name, (link, QT, PQ, rate, size, be) in GRID:
        scn = port(name, link, QT, PQ, rate, size, be)
        p = params(scn)
        (rs, rmean, r99, r999, rloss, _, S), rt, _ = in_child(ring, p, None)
        bnd, bt, _ = in_child(bound, p) if has_bound(p) else (None, 0.0, 0.0)
        sim, st, _ = in_child(simulate, scn, packets, reps)
        print(f"{name}: approximation {S} stage(s), {rs} states, {rt:.1f} s; "
              + (f"bound ({bnd[5]}, {bnd[0]} states) {bt:.1f} s; " if bnd else "no bound (above BOUND_STATES); ")
              + f"simulator {st:.1f} s", flush=True)
        for i, (label, v, key) in enumerate((("mean", rmean, "EF.delay.mean"), ("p99", r99, "EF.delay.p99"),
                                             ("p99.9", r999, "EF.delay.p99.9"), ("loss", rloss, "EF.loss"))):
            sv, lo, hi = sim[key]
            print(_row(label, v, bnd[1 + i] if bnd else None, sv, lo, hi, key == "EF.loss"), flush=True)
            if sv > 0 and (key != "EF.loss" or sv > 1e-4):  # (a loss seen a few times has no useful ratio)
                ratios["approx"][label].append(v / sv)
                if bnd:
                    ratios["bound"][label].append(bnd[1 + i] / sv)
    for kind, per in ratios.items():
        cells = ", ".join(f"{k} {min(v):.2f}-{max(v):.2f} x" for k, v in per.items() if v)
        print(f"{kind} / simulated over the grid: {cells}")


def _abstraction_at(p, ab, t):
    """At the delay ``t`` (s): (the certified bound on P(D > t), the Lagrangian search's estimate -- a lower bound
    on the best certificate this abstraction allows, up to the policies' evaluation accuracy -- and the states)."""
    from qosbound.models.pq_txq_ring_bound_budget import process_dims
    from qosbound.models.pq_txq_ring_bound_search import BoundProcess
    from qosbound.models.pq_txq_ring_rewards import DepartureRewards

    sv = DepartureRewards(p)
    try:
        b = BoundProcess(sv, ab, process_dims(p).cut)
    except ValueError:
        b = BoundProcess(sv, ab, None)
    X = int(math.floor(t / (sv.slot_g / sv.M)))
    v, _, est = b.mdp.lagrange_bound(b.rew(sv.per_ccdf(X)), b.acc, b.C)
    return v, est, b.mdp.size


def why_table(packets, reps):
    """Why the bound is loose on the grid's 1 Gbit/s 128-ring (1500-B EF against mostly 40-B BE): at the simulated
    p99 and p99.9, the front run's certified CCDF bound and the estimate of the best certificate it allows; then
    the same port scaled down (the ring's drain time and the EF share kept, Q_t = 16), where the front run with
    the same K is tight. A best certificate above 1 - q means no search can prove the simulated quantile with
    that abstraction: the looseness is the abstraction's, not the search's."""
    name, (link, QT, PQ, rate, size, be) = GRID[2]
    for label, qt, lk, r in ((name, QT, link, rate), ("the same port scaled to Q_t = 16", 16, "125 Mbps",
                                                         "6.25 Mbit/s")):
        scn = port(label, lk, qt, PQ, r, size, be)
        p = params(scn)
        sim, _, _ = in_child(simulate, scn, packets, reps)
        print(f"{label}: simulated p99 {sim['EF.delay.p99'][0] * 1e6:.1f} us, p99.9 "
              f"{sim['EF.delay.p99.9'][0] * 1e6:.1f} us", flush=True)
        for q, key in ((0.99, "EF.delay.p99"), (0.999, "EF.delay.p99.9")):
            (v, est, n), sec, _ = in_child(_abstraction_at, p, ring_abstraction.front_run(qt, 4), sim[key][0])
            print(f"  front_run(4), {n} states, at the simulated {key}: P(D > t) certified <= {v:.3g}, best "
                  f"certificate >= {est:.3g} (1 - q = {1 - q:.3g}; {sec:.0f} s)", flush=True)


def plan_seconds(pythonpath: str, scenario: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process and its children) of ``python -m qosbound plan SCENARIO --quiet``
    with ``pythonpath`` first on the path (this checkout, or another one: e.g. the main branch's)."""
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=pythonpath)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "qosbound", "plan", scenario, "--quiet"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def timing_table(other: str, rounds: int):
    """``plan examples/wan100.yaml`` here and in ``other`` (a checkout, e.g. the main branch's), alternated
    ``rounds`` times in one run, so both see the same load: the ratio is what is compared, not the seconds."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    print(f"plan examples/wan100.yaml: this checkout against {other} ({rounds} rounds, alternated)")
    rows = []
    for _ in range(rounds):
        a = plan_seconds(here, os.path.join(here, "examples/wan100.yaml"))
        b = plan_seconds(other, os.path.join(other, "examples/wan100.yaml"))
        rows.append((a, b))
        print(f"  this: {a[0]:6.1f} s wall, {a[1]:6.1f} s CPU   other: {b[0]:6.1f} s wall, {b[1]:6.1f} s CPU   "
              f"ratio wall {a[0] / b[0]:.2f}, CPU {a[1] / b[1]:.2f}", flush=True)
    cpu = sorted(a[1] / b[1] for a, b in rows)
    print(f"CPU ratio this / other: median {cpu[len(cpu) // 2]:.2f} (range {cpu[0]:.2f}-{cpu[-1]:.2f})")


def main():
    import qosbound.models.pq_txq  # noqa: F401  (imported here: the children time the work, not the imports)
    import qosbound.models.pq_txq_ring  # noqa: F401
    import qosbound.models.pq_txq_ring_bound  # noqa: F401
    import qosbound.systems.pq_txq.simulated  # noqa: F401

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="Q_t up to 64, a smaller simulation")
    ap.add_argument("--exact-max", type=float, default=1e5, help="build the exact chain up to this state bound")
    ap.add_argument("--survey", action="store_true", help="the accuracy survey instead: small rings against the "
                    "exact chain, high EF shares against the simulator (approximation, bound, reference, errors)")
    ap.add_argument("--ports", action="store_true", help="only the ports table (approximation, bound, simulator)")
    ap.add_argument("--grid", action="store_true", help="only the published grid of bound / simulated and "
                    "approximation / simulated ratios")
    ap.add_argument("--timing", metavar="CHECKOUT", help="only the timing of plan examples/wan100.yaml here "
                    "against another checkout (e.g. the main branch's), side by side")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of --timing")
    ap.add_argument("--why", action="store_true", help="where the bound is loose (the 1 Gbit/s 128-ring of the "
                    "grid): the abstraction's best certificate at the simulated quantiles, and the port scaled down")
    args = ap.parse_args()
    if args.timing:
        timing_table(args.timing, args.rounds)
        return
    if args.why:
        why_table(250_000 if args.quick else 1_000_000, 4 if args.quick else 8)
        return
    if args.grid:
        grid_table(250_000 if args.quick else 1_000_000, 4 if args.quick else 8)
        return
    if args.ports:
        target_table(250_000 if args.quick else 1_000_000, 4 if args.quick else 8)
        return
    if args.survey:
        import qosbound.models.pq_txq_ring_bound  # noqa: F401

        survey_small((3, 5, 7) if args.quick else (3, 4, 5, 6, 7, 8))
        survey_high_ef(250_000 if args.quick else 1_000_000, 4 if args.quick else 8)
        return
    qts = (5, 8, 16, 32, 64) if args.quick else (5, 8, 16, 32, 64, 128, 256)
    largest = size_table(qts, args.exact_max)
    ports = target_table(250_000 if args.quick else 1_000_000, 4 if args.quick else 8)
    figures = []
    if largest:
        QT, K, es, rs, et, rt = largest
        figures += [figure("exact_states", f"exact chain, Q_t = {QT}, {K} BE sizes: states", es, "states"),
                    figure("states_ratio", "exact / ring-count chain states", es / rs, "x"),
                    figure("time_ratio", "exact / ring-count chain seconds", et / rt, "x")]
    wan = ports["wan100 (target)"]
    figures += [figure("wan_ring_s", "wan100: ring-count chain", wan["ring_s"], "s")]
    if wan["bound_s"] is not None:
        figures += [figure("wan_bound_s", "wan100: ring bound", wan["bound_s"], "s"),
                    figure("wan_bound_p99_ratio", "wan100: p99 bound / simulated", wan["bound_p99"] / wan["sim_p99"],
                           "x")]
    figures += [figure("wan_approx_p99_ratio", "wan100: p99 approximation / simulated",
                       wan["approx_p99"] / wan["sim_p99"], "x")]
    emit(*figures)


if __name__ == "__main__":
    main()
