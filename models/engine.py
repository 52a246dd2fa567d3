"""Engine glue: parse, build and check PRISM-language models on Storm (stormpy) or on PRISM.

Storm is the default engine. Floating-point checking uses Storm's explicit
(sparse) engine with Eigen's solvers and the expected-visiting-times algorithm
for stationary distributions (see ``_environment`` for their accuracy); ``precision`` sets the
iterative solvers' tolerance and is reported as each value's interval. Exact
mode builds the model over rationals (``stormpy.build_model[Rational]``) and
returns rationals. PRISM runs when a ``prism`` executable is on PATH.

Property files hold one property per line (``"name": formula``); ``//``
comments and blank lines are skipped. Constants are passed as a mapping.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from qosbound.errors import EngineError, ModelError

__all__ = ["Built", "CheckResult", "parse_props_text", "load_program", "build", "check", "steady_state",
           "prism_available", "check_prism", "MODELS_DIR"]

MODELS_DIR = Path(__file__).resolve().parent


@dataclass
class Built:
    model: Any
    program: Any
    properties: list
    states: int
    transitions: int
    seconds: float
    exact: bool


@dataclass
class CheckResult:
    """Values of named properties in the initial state, with model size and timings."""

    values: dict[str, float]
    exact_values: dict[str, Fraction] = field(default_factory=dict)
    states: int = 0
    transitions: int = 0
    build_seconds: float = 0.0
    check_seconds: float = 0.0
    precision: str = ""
    engine: str = "storm"

    @property
    def seconds(self) -> float:
        return self.build_seconds + self.check_seconds


def _stormpy():
    try:
        import stormpy
    except ImportError:  # pragma: no cover - stormpy is a hard dependency
        raise EngineError("stormpy is not installed: pip install stormpy") from None
    return stormpy


def parse_props_text(text: str) -> list[tuple[str, str]]:
    """Split a property file into (name, formula) pairs. Unnamed properties get 'p1', 'p2', ..."""
    out = []
    n = 0
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if line.startswith("const "):
            raise ModelError("constants in property files are not supported; pass them with --const")
        line = line.rstrip(";")
        m = re.match(r'^"([^"]+)"\s*:\s*(.+)$', line)
        n += 1
        if m:
            out.append((m.group(1), m.group(2).strip()))
        else:
            out.append((f"p{n}", line))
    return out


def _read(path_or_text: str | os.PathLike) -> tuple[str, str | None]:
    s = str(path_or_text)
    if "\n" not in s and (s.endswith(".prism") or s.endswith(".props") or s.endswith(".pm")):
        p = Path(s)
        if not p.exists():
            raise ModelError(f"{s}: file not found")
        return p.read_text(encoding="utf-8"), s
    return s, None


def load_program(model: str | os.PathLike):
    """Parse a PRISM program from a path or from text (PRISM compatibility on)."""
    stormpy = _stormpy()
    text, path = _read(model)
    tmp = None
    try:
        if path is None:
            tmp = tempfile.NamedTemporaryFile("w", suffix=".prism", delete=False)
            tmp.write(text)
            tmp.close()
            path = tmp.name
        return stormpy.parse_prism_program(path, prism_compatibility=True)
    except Exception as e:
        msg = str(e).strip().splitlines()
        raise ModelError(f"{path if tmp is None else '<model text>'}: cannot parse: {msg[-1] if msg else e}") from None
    finally:
        if tmp is not None:
            os.unlink(tmp.name)


def _constants_for(program, constants: Mapping[str, Any] | None, exact: bool) -> dict:
    stormpy = _stormpy()
    out = {}
    for k, v in (constants or {}).items():
        if exact and isinstance(v, (float, Fraction)) and not isinstance(v, bool):
            fr = Fraction(v).limit_denominator(10**15) if isinstance(v, float) else v
            out[k] = stormpy.Rational(f"{fr.numerator}/{fr.denominator}")
        else:
            out[k] = v
    return out


def build(model, constants: Mapping[str, Any] | None = None, properties: list[str] | None = None, *,
          exact: bool = False, state_valuations: bool = False, program=None) -> Built:
    """Build the sparse model of a PRISM program with the given constants."""
    stormpy = _stormpy()
    prog = program if program is not None else load_program(model)
    formulas = ";".join(properties) if properties else ""
    t0 = time.perf_counter()
    try:
        props = stormpy.parse_properties(formulas, prog) if formulas else []
        prog2, props2 = stormpy.instantiate_constants(prog, _constants_for(prog, constants, exact), props)
        opts = stormpy.BuilderOptions(props2) if props2 else stormpy.BuilderOptions(build_full=True)
        if props2:
            opts.set_build_all_labels()
            opts.set_build_all_reward_models()
        if state_valuations:
            opts.set_build_state_valuations()
        if exact:
            m = stormpy.build_model[stormpy.Rational](prog2, options=opts)
        else:
            m = stormpy.build_model(prog2, options=opts)
    except ModelError:
        raise
    except Exception as e:
        msg = [x for x in str(e).strip().splitlines() if x.strip()]
        raise ModelError(f"cannot build the model: {msg[-1] if msg else e.__class__.__name__}") from None
    return Built(m, prog2, list(props2), m.nr_states, m.nr_transitions, time.perf_counter() - t0, exact)


def _environment(precision: float, exact: bool):
    """Solver settings for floating-point checking.

    Eigen's sparse solvers with the expected-visiting-times algorithm: fast, and robust on the periodic
    chains that deterministic transmission times produce (Storm's native iterative solvers can stall on
    them). Their error is not set by ``precision``: on the PQ + TxQ model it is ~1e-8 relative, measured
    against Storm's exact rational solution; callers that need an a-posteriori error estimate (e.g. the
    Little's-law identity of the PQ + TxQ model) report it. ``precision`` bounds the iterative parts.
    """
    stormpy = _stormpy()
    if exact:
        return stormpy.environments.exact()
    env = stormpy.Environment()
    env.solver().set_linear_equation_solver_type(stormpy.environments.EquationSolverType.EIGEN)
    fr = Fraction(max(precision, 1e-15)).limit_denominator(10**18)
    rat = stormpy.Rational(f"{fr.numerator}/{fr.denominator}")
    env.solver().native().precision = rat
    env.solver().min_max().precision = rat
    env.modelchecker().steady_state_distribution_algorithm = \
        stormpy.environments.SteadyStateDistributionAlgorithm.EXPECTED_VISITING_TIMES
    return env


def _to_float(v) -> float:
    try:
        return float(v)
    except TypeError:
        return float(Fraction(str(v)))


def check(model, properties, constants: Mapping[str, Any] | None = None, *, exact: bool = False,
          precision: float = 1e-10, engine: str = "storm") -> CheckResult:
    """Check named properties (a props file, its text, or a list of formulas) in the initial state."""
    if isinstance(properties, (str, os.PathLike)):
        text, _ = _read(properties)
        named = parse_props_text(text)
    else:
        named = [(f"p{i + 1}", f) if isinstance(f, str) else tuple(f) for i, f in enumerate(properties)]
    if not named:
        raise ModelError("no properties to check")
    if engine == "prism":
        return check_prism(model, named, constants)
    if engine != "storm":
        raise EngineError(f"unknown engine '{engine}'; expected storm or prism")
    stormpy = _stormpy()
    built = build(model, constants, [f for _, f in named], exact=exact)
    env = _environment(precision, exact)
    values: dict[str, float] = {}
    exact_values: dict[str, Fraction] = {}
    t0 = time.perf_counter()
    s0 = built.model.initial_states[0]
    pi = None
    for (name, _), prop in zip(named, built.properties):
        if not exact:
            if pi is None and _is_lra(prop) and _deterministic(built.model):
                pi = _stationary(built.model, env)
            v = _lra_from_stationary(built.model, prop, pi, env) if pi is not None else None
            if v is not None:
                values[name] = v
                continue
        try:
            r = stormpy.model_checking(built.model, prop, only_initial_states=True, environment=env)
        except Exception as e:
            msg = [x for x in str(e).strip().splitlines() if x.strip()]
            raise ModelError(f"property '{name}': {msg[-1] if msg else e.__class__.__name__}") from None
        v = r.get_value(s0)
        if exact:
            exact_values[name] = Fraction(str(v))
        values[name] = _to_float(v)
    kind = "exact" if exact else f"precision {precision:g}"
    return CheckResult(values, exact_values, built.states, built.transitions, built.seconds,
                       time.perf_counter() - t0, kind, "storm")


def steady_state(model, constants: Mapping[str, Any] | None = None, variables: list[str] | None = None, *,
                 exact: bool = False, precision: float = 1e-10, program=None):
    """Stationary distribution of an irreducible DTMC/CTMC, with the chosen state variables per state.

    Returns ``(valuations, pi, built)``: ``valuations`` maps each variable name to a NumPy integer array
    (one entry per state), ``pi`` is the probability vector (float64).
    """
    built = build(model, constants, None, exact=exact, state_valuations=True, program=program)
    env = _environment(precision, exact)
    t0 = time.perf_counter()
    try:
        pi = _stationary(built.model, env, exact=exact)
    except Exception as e:
        msg = [x for x in str(e).strip().splitlines() if x.strip()]
        raise ModelError(f"steady state: {msg[-1] if msg else e.__class__.__name__}") from None
    sv = built.model.state_valuations
    vals = {}
    for var in sv.get_all_variables():
        if variables is None or var.name in variables:
            try:
                vals[var.name] = np.asarray(sv.get_int64_values(var), dtype=np.int64)
            except Exception:
                vals[var.name] = np.asarray([int(bool(x)) for x in sv.get_values_states(var)], dtype=np.int64)
    built.seconds += time.perf_counter() - t0
    return vals, pi, built


def _is_lra(prop) -> bool:
    f = prop.get_raw_formula()
    name = type(f).__name__
    return name.startswith("LongRunAverageOperator") or (name.startswith("RewardOperator") and str(f).endswith("[LRA]"))


def _deterministic(model) -> bool:
    """DTMCs only: there the expected-visiting-times stationary vector is accurate (Little's law to 1e-15 on
    the PQ + TxQ model). On CTMCs it is not (2e-3 relative on an AF queue where Storm's own long-run route
    gives 6e-8), so CTMCs keep Storm's route."""
    return "DTMC" in str(model.model_type)


def _stationary(model, env, exact: bool = False) -> np.ndarray:
    """Stationary distribution (from the initial state) as float64, with the algorithm suited to the model."""
    stormpy = _stormpy()
    if "CTMC" in str(model.model_type) and not exact:
        # Eigen with expected visiting times returned wrong CTMC stationary vectors (AF queue models:
        # mean queue 49.4 for 20.8); the classic algorithm agrees with SciPy to ~4e-6 relative there. CTMCs are
        # never periodic, so the reason for visiting times does not apply to them.
        env.modelchecker().steady_state_distribution_algorithm = \
            stormpy.environments.SteadyStateDistributionAlgorithm.CLASSIC
    res = stormpy.developer.compute_steady_state_distribution_with_sparse_engine(env, model)
    vec = res.get_value_vector()
    return np.array([_to_float(x) for x in vec], dtype=np.float64) if exact else np.asarray(vec, dtype=np.float64)


def _lra_from_stationary(model, prop, pi: np.ndarray, env) -> float | None:
    """Long-run properties of a DTMC from the stationary vector (which Storm computes to ~1e-15 here,
    where its LRA route stops near 1e-4 relative on small rewards and has no precision setting in stormpy).
    Returns None for anything else (the caller then uses Storm's own model checking)."""
    stormpy = _stormpy()
    f = prop.get_raw_formula()
    name = type(f).__name__
    if name.startswith("LongRunAverageOperator"):
        sat = stormpy.model_checking(model, f.subformula, environment=env)
        states = np.fromiter((int(i) for i in sat.get_truth_values_vector()), dtype=np.int64)
        return float(pi[states].sum()) if states.size else 0.0
    if name.startswith("RewardOperator") and str(f).endswith("[LRA]"):
        m = re.search(r'R\{"([^"]+)"\}', str(f))
        rms = model.reward_models
        rm = rms[m.group(1)] if m else (next(iter(rms.values())) if len(rms) == 1 else None)
        if rm is None or rm.has_state_action_rewards or rm.has_transition_rewards or not rm.has_state_rewards:
            return None
        return float(np.dot(pi, np.asarray(rm.state_rewards, dtype=np.float64)))
    return None


def prism_available() -> bool:
    return shutil.which("prism") is not None


def check_prism(model, named: list[tuple[str, str]], constants: Mapping[str, Any] | None = None) -> CheckResult:
    """Check properties with a PRISM installation (its default engine), parsing its exported results."""
    exe = shutil.which("prism")
    if exe is None:
        raise EngineError("--engine prism needs a 'prism' executable on PATH (PRISM is not on any package registry)")
    text, _ = _read(model)
    with tempfile.TemporaryDirectory() as d:
        mp = Path(d) / "model.prism"
        mp.write_text(text)
        pp = Path(d) / "props.props"
        pp.write_text("\n".join(f'"{n}": {f}' for n, f in named) + "\n")
        out = Path(d) / "results.txt"
        cmd = [exe, str(mp), str(pp), "-exportresults", f"{out}:csv"]
        if constants:
            cmd += ["-const", ",".join(f"{k}={v}" for k, v in constants.items())]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or "Error" in proc.stdout:
            err = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "Error" in ln]
            raise ModelError(f"PRISM failed: {err[0] if err else 'exit code ' + str(proc.returncode)}")
        values: dict[str, float] = {}
        blocks = out.read_text().strip().split("\n\n") if out.exists() else []
        for (name, _), block in zip(named, blocks):
            lines = [ln for ln in block.splitlines() if ln.strip()]
            values[name] = float(lines[-1].split(",")[-1])
        states = 0
        m = re.search(r"States:\s+(\d+)", proc.stdout)
        if m:
            states = int(m.group(1))
        tr = re.search(r"Transitions:\s+(\d+)", proc.stdout)
        return CheckResult(values, {}, states, int(tr.group(1)) if tr else 0, 0.0, time.perf_counter() - t0,
                           "PRISM default", "prism")
