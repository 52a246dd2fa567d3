"""Engine glue: parse, build and check PRISM-language models on Storm (stormpy) or on PRISM.

Storm is the default engine. Storm parses and builds the model. In floating
point, long-run (steady-state) properties of DTMCs and CTMCs are then solved by a
direct sparse solve with a TRUE error bracket per value (``models/stationary.py``:
Storm's iterative long-run routes were seen 1e-6..5e-1 relative off at
"precision 1e-10"); other properties use Storm's sparse engine, whose iterative
tolerance ``precision`` is a stopping rule, not an error bound (reported as such).
Exact mode builds the model over rationals (``stormpy.build_model[Rational]``) and
returns rationals. PRISM runs when a ``prism`` executable is on PATH.

Property files hold one property per line (``"name": formula``); ``//``
comments and blank lines are skipped. Constants are passed as a mapping.
"""

from __future__ import annotations

import math
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

from qosbound.errors import EngineError, ModelError, ResourceError
from qosbound.models import stationary

__all__ = ["Built", "CheckResult", "parse_props_text", "load_program", "build", "check", "steady_state",
           "prism_available", "check_prism", "prism_options", "rational_to_fraction", "fraction_text", "MODELS_DIR"]

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
    stationary: Any = None


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
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)  # TRUE brackets (float route)
    unbounded: list[str] = field(default_factory=list)  # properties whose error no one bounds

    @property
    def seconds(self) -> float:
        return self.build_seconds + self.check_seconds



def _storm_error(prefix: str, e: BaseException) -> Exception:
    """One-line error for a failure inside Storm: the line that says what is wrong (Storm's own ``ERROR (file:
    line):`` prefix removed) and the offending source line when Storm quotes it (never a lone caret). Memory
    exhaustion (``std::bad_alloc``) is a resource error, not bad input."""
    lines = [x.strip() for x in str(e).splitlines() if x.strip() and not set(x.strip()) <= set("^~ ")]
    if any("bad_alloc" in x or "out of memory" in x.lower() for x in lines) or isinstance(e, MemoryError):
        return ResourceError(f"{prefix}: Storm ran out of memory; make the model smaller (or allow more memory with "
                             "--max-memory)")
    pick = next((i for i, x in enumerate(lines) if "error" in x.lower()), len(lines) - 1)
    if pick < 0:
        return ModelError(f"{prefix}: {e.__class__.__name__}")
    text = re.sub(r"^ERROR \([^)]*\):\s*", "", lines[pick])
    if pick + 1 < len(lines) and "error" not in lines[pick + 1].lower():
        text += f" -- at: {lines[pick + 1]}"
    return ModelError(f"{prefix}: {text}")

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
        # PRISM compatibility turns a CTMC's PRISM-style commands ("[] g -> rate : u") into Storm's Markovian
        # ones and warns about it on every parse; that conversion is what we ask for, so the parse runs at
        # Storm's error log level (other warnings of later steps still print).
        dev = stormpy.developer
        level = dev.get_log_level()
        dev.set_log_level(dev.LogLevel.ERR)
        try:
            return stormpy.parse_prism_program(path, prism_compatibility=True)
        finally:
            dev.set_log_level(level)
    except Exception as e:
        raise _storm_error(f"{path if tmp is None else '<model text>'}: cannot parse", e) from None
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
        raise _storm_error("cannot build the model", e) from None
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


def _big_int(digits: str) -> int:
    """A decimal integer string of any length (Python refuses > 4300 digits in one conversion)."""
    digits = digits.strip()
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    if not digits.isdigit():
        raise EngineError(f"not an integer: {digits[:40]!r}")
    if len(digits) > 10_000_000:
        raise EngineError(f"exact value with {len(digits)} digits is too large to convert")
    step = 4000
    if len(digits) <= step:
        return sign * int(digits)
    # divide and conquer: O(n^1.6) with Python's Karatsuba, fine for the sizes above
    def conv(s: str) -> int:
        if len(s) <= step:
            return int(s)
        half = len(s) // 2
        return conv(s[:-half]) * 10 ** half + conv(s[-half:])
    return sign * conv(digits)


def rational_to_fraction(v) -> Fraction:
    """A Storm rational (or anything printing as 'p/q' or 'p') as a Fraction, without Python's 4300-digit
    limit on integer string conversion."""
    text = str(v).strip()
    num, _, den = text.partition("/")
    return Fraction(_big_int(num), _big_int(den) if den else 1)


def _int_text(n: int) -> str:
    """Decimal text of an int of any size (Python refuses > 4300 digits in one conversion)."""
    if n < 0:
        return "-" + _int_text(-n)
    if n.bit_length() < 13_000:
        return str(n)
    k = int(n.bit_length() * 0.30103) // 2
    hi, lo = divmod(n, 10 ** k)
    return _int_text(hi) + _int_text(lo).rjust(k, "0")


def fraction_text(fr: Fraction, max_digits: int | None = 60) -> str:
    """'p/q' for a Fraction; with ``max_digits``, a summary instead when p or q is longer than that."""
    digits = int(max(fr.numerator.bit_length(), fr.denominator.bit_length()) * 0.30103) + 1
    if max_digits is not None and digits > max_digits:
        return f"a rational with ~{digits}-digit numerator/denominator; --json prints it in full"
    return f"{_int_text(fr.numerator)}/{_int_text(fr.denominator)}"


def _to_float(v) -> float:
    try:
        return float(v)
    except TypeError:
        return float(rational_to_fraction(v))


def check(model, properties, constants: Mapping[str, Any] | None = None, *, exact: bool = False,
          precision: float = 1e-10, engine: str = "storm") -> CheckResult:
    """Check named properties (a props file, its text, or a list of formulas) in the initial state.

    Floating point on Storm: long-run properties (``S=? [ phi ]`` and ``R{"r"}=? [ S ]`` with state rewards)
    of DTMCs and CTMCs come from a direct sparse solve with a TRUE error bracket
    (:mod:`qosbound.models.stationary`), returned in ``intervals``; every other property is Storm's own
    result, whose error Storm does not bound (its name is listed in ``unbounded``).
    """
    if isinstance(properties, (str, os.PathLike)):
        text, _ = _read(properties)
        named = parse_props_text(text)
    else:
        named = [(f"p{i + 1}", f) if isinstance(f, str) else tuple(f) for i, f in enumerate(properties)]
    if not named:
        raise ModelError("no properties to check")
    if not (precision > 0 and math.isfinite(precision)):
        raise ModelError(f"precision must be a positive number, got {precision!r}")
    if engine == "prism":
        return check_prism(model, named, constants, precision=precision)
    if engine != "storm":
        raise EngineError(f"unknown engine '{engine}'; expected storm or prism")
    stormpy = _stormpy()
    built = build(model, constants, [f for _, f in named], exact=exact)
    env = _environment(precision, exact)
    values: dict[str, float] = {}
    exact_values: dict[str, Fraction] = {}
    intervals: dict[str, tuple[float, float]] = {}
    unbounded: list[str] = []
    t0 = time.perf_counter()
    s0 = built.model.initial_states[0]
    st = None
    st_failed = ""
    for (name, _), prop in zip(named, built.properties):
        if not exact and _is_lra(prop) and _deterministic(built.model) and not st_failed:
            if st is None:
                try:
                    st = stationary.solve(built.model)
                except EngineError as e:
                    st_failed = str(e)
            if st is not None:
                f = _lra_function(built.model, prop, env)
                if f is not None:
                    v, lo, hi = st.value(f)
                    values[name], intervals[name] = v, (lo, hi)
                    continue
        try:
            r = stormpy.model_checking(built.model, prop, only_initial_states=True, environment=env)
        except Exception as e:
            raise _storm_error(f"property '{name}'", e) from None
        v = r.get_value(s0)
        if exact:
            exact_values[name] = rational_to_fraction(v)
            values[name] = float(exact_values[name])
        else:
            values[name] = _to_float(v)
            unbounded.append(name)
    if exact:
        kind = "exact"
    elif intervals and not unbounded:
        kind = "direct solve, a-posteriori bracket"
    elif intervals:
        kind = f"direct solve with bracket for {len(intervals)}; Storm iterative (no error bound) for the rest"
    else:
        kind = f"Storm iterative, tolerance {precision:g} (no error bound)" + (f"; {st_failed}" if st_failed else "")
    res = CheckResult(values, exact_values, built.states, built.transitions, built.seconds,
                      time.perf_counter() - t0, kind, "storm")
    res.intervals = intervals
    res.unbounded = unbounded
    return res


def steady_state(model, constants: Mapping[str, Any] | None = None, variables: list[str] | None = None, *,
                 exact: bool = False, precision: float = 1e-10, program=None):
    """Stationary distribution of a DTMC/CTMC with one bottom SCC, with the chosen state variables per state.

    Returns ``(valuations, pi, built)``: ``valuations`` maps each variable name to a NumPy integer array
    (one entry per state), ``pi`` is the probability vector (float64). In floating point ``built.stationary``
    is the :class:`qosbound.models.stationary.Stationary` solve, whose ``value(f)`` brackets any long-run
    average ``pi f``; in exact mode ``pi`` is Storm's rational solution rounded to float64.
    """
    built = build(model, constants, None, exact=exact, state_valuations=True, program=program)
    t0 = time.perf_counter()
    if exact:
        env = _environment(precision, exact)
        try:
            res = _stormpy().developer.compute_steady_state_distribution_with_sparse_engine(env, built.model)
        except Exception as e:
            raise _storm_error("steady state", e) from None
        pi = np.array([_to_float(x) for x in res.get_value_vector()], dtype=np.float64)
    else:
        built.stationary = stationary.solve(built.model)
        pi = built.stationary.x
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
    """DTMCs and CTMCs (one transition distribution per state): the direct stationary solve applies."""
    t = str(model.model_type)
    return "DTMC" in t or "CTMC" in t


def _lra_function(model, prop, env) -> np.ndarray | None:
    """The state function whose long-run average the property asks for (an indicator for ``S=? [ phi ]``,
    the state rewards for ``R=? [ S ]``), or None when it is something else (action or transition rewards)."""
    stormpy = _stormpy()
    f = prop.get_raw_formula()
    name = type(f).__name__
    if name.startswith("LongRunAverageOperator"):
        sat = stormpy.model_checking(model, f.subformula, environment=env)
        out = np.zeros(model.nr_states)
        out[np.fromiter((int(i) for i in sat.get_truth_values_vector()), dtype=np.int64)] = 1.0
        return out
    if name.startswith("RewardOperator") and str(f).endswith("[LRA]"):
        m = re.search(r'R\{"([^"]+)"\}', str(f))
        rms = model.reward_models
        rm = rms[m.group(1)] if m else (next(iter(rms.values())) if len(rms) == 1 else None)
        if rm is None or rm.has_state_action_rewards or rm.has_transition_rewards or not rm.has_state_rewards:
            return None
        return np.asarray(rm.state_rewards, dtype=np.float64)
    return None


def prism_available() -> bool:
    return shutil.which("prism") is not None


def prism_options(text: str) -> list[str]:
    """Options a model asks PRISM to be run with: its ``// prism-options: ...`` header line (see
    models/wred.prism: Gauss-Seidel where PRISM's default Jacobi does not converge)."""
    m = re.search(r"^\s*//\s*prism-options:\s*(.+)$", text, flags=re.M)
    if not m:
        return []
    opts = m.group(1).split("//", 1)[0].split()
    for o in opts:
        if not re.fullmatch(r"-?[A-Za-z0-9_.+-]+", o):
            raise ModelError(f"prism-options: unexpected token {o!r}")
    return opts


def check_prism(model, named: list[tuple[str, str]], constants: Mapping[str, Any] | None = None, *,
                precision: float = 1e-10) -> CheckResult:
    """Check properties with a PRISM installation (its default engine), parsing its exported results.

    PRISM runs with ``-epsilon precision`` (its iterative methods' relative convergence threshold -- a
    stopping rule, not an error bound) and with the options of the model's ``// prism-options:`` line.
    Build and check times are PRISM's own ("Time for model construction", "Time for model checking").
    """
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
        cmd = [exe, str(mp), str(pp), "-exportresults", f"{out}:csv", "-epsilon", repr(float(precision))]
        cmd += prism_options(text)
        if constants:
            cmd += ["-const", ",".join(f"{k}={v}" for k, v in constants.items())]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0 or re.search(r"^Error", proc.stdout, flags=re.M):
            err = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "Error" in ln]
            raise ModelError(f"PRISM failed: {err[0] if err else 'exit code ' + str(proc.returncode)}")
        values: dict[str, float] = {}
        blocks = out.read_text().strip().split("\n\n") if out.exists() else []
        if len(blocks) != len(named):
            raise ModelError(f"PRISM returned {len(blocks)} results for {len(named)} properties")
        for (name, _), block in zip(named, blocks):
            lines = [ln for ln in block.splitlines() if ln.strip()]
            values[name] = float(lines[-1].split(",")[-1])
        m = re.search(r"States:\s+(\d+)", proc.stdout)
        states = int(m.group(1)) if m else 0
        tr = re.search(r"Transitions:\s+(\d+)", proc.stdout)
        built_s = sum(float(x) for x in re.findall(r"Time for model construction:\s+([0-9.eE+-]+)", proc.stdout))
        checked_s = sum(float(x) for x in re.findall(r"Time for model checking:\s+([0-9.eE+-]+)", proc.stdout))
        if not built_s and not checked_s:
            checked_s = wall
        res = CheckResult(values, {}, states, int(tr.group(1)) if tr else 0, built_s, checked_s,
                          f"PRISM default engine, -epsilon {precision:g} (stopping rule, no error bound)"
                          + (f", {' '.join(prism_options(text))}" if prism_options(text) else ""), "prism")
        res.unbounded = [n for n, _ in named]
        return res
