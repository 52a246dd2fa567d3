"""``qosbound model render`` and ``qosbound model check``.

``model check`` reads and checks its inputs before Storm sees them, so a
refusal is one line naming the file, the line or the constant, and the
problem: files must be regular UTF-8 text files of bounded size; every
undefined constant needs a ``--const`` of its type (integers in int64, doubles
finite); every integer variable needs a finite range; a command's constant
probabilities must sum to 1 (DTMC/MDP); labels and reward models named by the
properties must exist; ``--precision`` lies in (0, 0.1). The number of states
is bounded above by the product of the variables' ranges: beyond
``--max-states`` (default 1e9) the check is refused before building, with the
estimate. The build and check itself runs in a child process
(:func:`qosbound.cli.isolated`): Ctrl-C stops it at once, and a crash of
Storm (e.g. SIGFPE on ``const double p = 0/0``) is one line.
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from fractions import Fraction
from pathlib import Path

from qosbound.errors import ModelError, ResourceError, ScenarioError

__all__ = ["run", "render_scenario", "read_text_file", "preflight", "check_output_dir", "max_states_budget",
           "DEFAULT_MAX_STATES", "MAX_FILE_BYTES"]

#: Largest PRISM model or property file read (bytes).
MAX_FILE_BYTES = 32 * 2**20
#: Default bound on the (estimated) number of states of a model checked from the command line.
DEFAULT_MAX_STATES = 1e9
_INT64 = 2**63 - 1


def read_text_file(path: str, what: str, max_bytes: int = MAX_FILE_BYTES, error=ModelError) -> str:
    """Read a UTF-8 text file; refuse a missing path, a directory, a device or FIFO, an oversized or binary file."""
    from qosbound.inputs import check_input_file

    check_input_file(path, what, lambda problem: error(f"{path}: {problem}"), max_bytes=max_bytes)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise error(f"{path}: cannot read the {what}: {e.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise error(f"{path}: line {line}: not UTF-8 text (byte 0x{data[e.start]:02x}); save the {what} as "
                    "UTF-8") from None


def _storm_message(e: Exception) -> str:
    """Storm's exception text on one line: the message, and the offending source line without the caret."""
    lines = [x.rstrip() for x in str(e).strip().splitlines() if x.strip()]
    lines = [x for x in lines if set(x.strip()) != {"^"}]
    if not lines:
        return e.__class__.__name__
    head = re.sub(r"^\w+Exception:\s*", "", lines[0].strip())
    rest = " ".join(x.strip() for x in lines[1:])
    return f"{head} {rest}".strip() if rest else head


def _parse_consts(items: list[str]) -> dict:
    out = {}
    for item in items:
        for part in item.split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise ScenarioError(f"'{part}': expected NAME=VALUE", field="--const")
            k, v = part.split("=", 1)
            k, v = k.strip(), v.strip()
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k):
                raise ScenarioError(f"'{k}' is not a constant name", field="--const")
            try:
                out[k] = int(v)
            except ValueError:
                try:
                    out[k] = float(v)
                except ValueError:
                    if v in ("true", "false"):
                        out[k] = v == "true"
                    else:
                        raise ScenarioError(f"{k}: '{v}' is not a number or a boolean", field="--const") from None
            if isinstance(out[k], float) and not math.isfinite(out[k]):
                raise ScenarioError(f"{k}: '{v}' is not a finite number", field="--const")
    return out


def _precision(value) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ScenarioError(f"cannot read {value!r} as a number", field="--precision") from None
    if not (math.isfinite(x) and 0 < x < 0.1):
        raise ScenarioError(f"must be a number in (0, 0.1), got {value!r}", field="--precision")
    return x


def max_states_budget(value) -> float:
    """A ``--max-states`` budget as a number (refused unless finite and >= 1); ``model check``, ``plan`` and
    ``verify`` read it alike."""
    try:
        n = float(value)
    except (TypeError, ValueError):
        raise ScenarioError(f"cannot read {value!r} as a number of states", field="--max-states") from None
    if not n >= 1 or n == float("inf"):
        raise ScenarioError(f"must be a finite number >= 1, got {value!r}", field="--max-states")
    return n


def _typed_constants(program, consts: dict, path: str) -> dict:
    """Match ``--const`` values to the program's undefined constants; every one must be given, with its type."""
    declared = {c.name: c for c in program.constants}
    undefined = [c for c in program.constants if not c.defined]
    unknown = [k for k in consts if k not in declared]
    if unknown:
        raise ModelError(f"{path}: --const {', '.join(unknown)}: the model declares no such constant "
                         f"(its constants: {', '.join(declared) or 'none'})")
    defined_given = [k for k in consts if declared[k].defined]
    if defined_given:
        raise ModelError(f"{path}: --const {', '.join(defined_given)}: already defined in the model")
    missing = [c for c in undefined if c.name not in consts]
    if missing:
        names = ", ".join(f"{c.name} ({_type_name(c)})" for c in missing)
        raise ModelError(f"{path}: undefined constant(s) {names}: give a value with --const NAME=VALUE")
    out = {}
    for c in undefined:
        v = consts[c.name]
        t = _type_name(c)
        if t == "int":
            if isinstance(v, bool) or (isinstance(v, float) and not v.is_integer()):
                raise ScenarioError(f"{c.name}: the model declares an int, got {v!r}", field="--const")
            v = int(v)
            if abs(v) > _INT64:
                raise ScenarioError(f"{c.name}: {v} is outside the 64-bit integer range", field="--const")
        elif t == "bool":
            if not isinstance(v, bool):
                raise ScenarioError(f"{c.name}: the model declares a bool, give true or false", field="--const")
        else:
            if isinstance(v, bool):
                raise ScenarioError(f"{c.name}: the model declares a {t}, got a boolean", field="--const")
            v = float(v) if isinstance(v, float) else v
        out[c.name] = v
    return out


def _type_name(c) -> str:
    t = str(c.type)
    return {"rational": "double"}.get(t, t)


def _expr(manager, v):
    import stormpy

    if isinstance(v, bool):
        return manager.boolean(v)
    if isinstance(v, int):
        return manager.integer(v)
    fr = Fraction(v)
    return manager.rational(stormpy.Rational(f"{fr.numerator}/{fr.denominator}"))


def _property_names(text: str) -> list[tuple[str, str]]:
    from qosbound.models import engine

    return engine.parse_props_text(text)


def preflight(model_path: str, model_text: str, props_text: str, consts: dict, max_states: float,
              props_path: str = "<properties>"):
    """Parse the model and the properties and check what Storm would accept silently or choke on.

    Returns the typed constants for :func:`qosbound.models.engine.check`. Raises :class:`ModelError`
    (bad model or properties), :class:`ScenarioError` (bad ``--const``) or :class:`ResourceError`
    (a state space estimated beyond ``max_states``)."""
    import stormpy

    try:
        program = stormpy.parse_prism_program(model_path, prism_compatibility=True)
    except Exception as e:  # noqa: BLE001 - Storm reports syntax errors as RuntimeError
        msg = _storm_message(e)
        m = re.match(r"Parsing error at (\d+):(\d+):\s*(.*)", msg)
        if m:
            msg = f"line {m.group(1)}, column {m.group(2)}: {m.group(3)}"
        raise ModelError(f"{model_path}: cannot parse: {msg}") from None
    typed = _typed_constants(program, consts, model_path)
    manager = program.expression_manager
    byname = {c.name: c for c in program.constants}
    try:
        inst = program.define_undefined_constants(
            {byname[k].expression_variable: _expr(manager, v) for k, v in typed.items()}).substitute_constants()
    except Exception as e:  # noqa: BLE001
        raise ModelError(f"{model_path}: cannot instantiate the constants: {_storm_message(e)}") from None
    _check_ranges(inst, model_path, max_states)
    _check_distributions(inst, model_path)
    _check_properties(program, props_text, props_path)
    return typed


def _check_ranges(program, path: str, max_states: float) -> None:
    variables = list(program.global_integer_variables)
    variables += [v for m in program.modules for v in m.integer_variables]
    nbool = len(program.global_boolean_variables) + sum(len(m.boolean_variables) for m in program.modules)
    log_states = nbool * math.log10(2)
    sizes = []
    for v in variables:
        lo, hi = v.lower_bound_expression, v.upper_bound_expression
        if "notinitialized" in str(lo) or "notinitialized" in str(hi):
            raise ModelError(f"{path}: variable '{v.name}' is an unbounded int; declare its range, "
                             f"e.g. {v.name} : [0..N]")
        try:
            a, b = lo.evaluate_as_int(), hi.evaluate_as_int()
        except Exception:  # noqa: BLE001 - a bound that is not a constant integer expression
            raise ModelError(f"{path}: the range of variable '{v.name}' is not a constant integer "
                             f"([{lo}..{hi}])") from None
        if b < a:
            raise ModelError(f"{path}: variable '{v.name}' has an empty range [{a}..{b}]")
        sizes.append((b - a + 1, v.name))
        log_states += math.log10(b - a + 1)
    if log_states > math.log10(max_states):
        big = ", ".join(f"{n}: {s:.3g} values" for s, n in sorted(sizes, reverse=True)[:3])
        raise ResourceError(f"{path}: the model may have up to 1e{log_states:.1f} states (product of the variable "
                            f"ranges; largest {big}), above the budget of {max_states:g} states: make the "
                            "ranges smaller, or raise --max-states if far fewer states are reachable")


def _check_distributions(program, path: str) -> None:
    if str(program.model_type).rsplit(".", 1)[-1] not in ("DTMC", "MDP"):
        return
    for m in program.modules:
        for c in m.commands:
            probs = [u.probability_expression for u in c.updates]
            if any(p.contains_variables() for p in probs):
                continue
            try:
                vals = [Fraction(str(p.evaluate_as_rational())) for p in probs]
            except Exception:  # noqa: BLE001
                try:
                    vals = [Fraction(p.evaluate_as_double()) for p in probs]
                except Exception:  # noqa: BLE001
                    continue
            neg = [v for v in vals if v < 0]
            total = sum(vals)
            where = f"module '{m.name}', command [{c.action_name}] with guard {c.guard_expression}"
            if neg:
                raise ModelError(f"{path}: {where}: a negative probability ({float(neg[0]):g})")
            if abs(total - 1) > Fraction(1, 10**5):  # PRISM's tolerance for a distribution's sum
                raise ModelError(f"{path}: {where}: the probabilities sum to {float(total):.10g}, not 1")


def _names(names) -> str:
    return ", ".join(f'"{n}"' for n in sorted(names)) or "none"


_QUOTED = re.compile(r'"([^"]*)"')
_REWARD = re.compile(r'R\s*\{\s*"([^"]*)"\s*\}')


def _check_properties(program, props_text: str, props_path: str) -> None:
    import stormpy

    labels = {lab.name for lab in program.labels} | {"init", "deadlock"}
    rewards = {r.name for r in program.reward_models}
    named = _property_names(props_text)
    if not named:
        raise ModelError(f"{props_path}: no properties to check")
    for name, formula in named:
        for r in _REWARD.findall(formula):
            if r not in rewards:
                raise ModelError(f"{props_path}: property '{name}' ({formula}): unknown reward model \"{r}\" "
                                 f"(the model's reward models: {_names(rewards)})")
        if re.search(r"\bR\s*(?:[<>=]|min|max)", formula) and not re.search(r"\bR\s*\{", formula):
            if not rewards:
                raise ModelError(f"{props_path}: property '{name}' ({formula}): the model has no reward model")
        body = _REWARD.sub("R", formula)
        for lab in _QUOTED.findall(body):
            if lab not in labels:
                raise ModelError(f"{props_path}: property '{name}' ({formula}): unknown label \"{lab}\" "
                                 f"(the model's labels: {_names(labels - {'init', 'deadlock'})})")
        try:
            stormpy.parse_properties(formula, program)
        except Exception as e:  # noqa: BLE001
            msg = _storm_message(e)
            m = re.match(r"Parsing error at \d+:(\d+):\s*(.*)", msg)
            if m:
                msg = f"column {m.group(1)}: {m.group(2)}"
            raise ModelError(f"{props_path}: property '{name}' ({formula}): {msg}") from None


def render_scenario(scenario_path: str, out_dir: str) -> list[Path]:
    """Write the PRISM model(s) and property file(s) of a scenario; returns the paths written."""
    from qosbound.scenario import load
    from qosbound.systems import get_system

    scn = load(scenario_path)
    system = get_system(scn.system)
    return system.render_models(scn, out_dir)


def check_output_dir(out: str, flag: str = "--out") -> None:
    """Refuse an output folder that cannot be created or written, before any work is done.

    Permission bits do not tell (root passes ``os.access`` on ``/proc`` and on a read-only mount), so the check
    is a probe: the missing folders are created, a file is created in the innermost one and removed, and the
    folders this check created are removed again (the command creates them when it writes).
    """
    p = Path(out)
    try:
        is_dir = p.is_dir()
        exists = is_dir or os.path.lexists(p)
    except OSError as e:  # e.g. a symlink loop on the way
        raise ScenarioError(f"cannot use '{out}': {e.strerror}", field=flag) from None
    if exists and not is_dir:
        raise ScenarioError(f"'{out}' exists and is not a folder", field=flag)
    created: list[Path] = []
    try:
        missing = []
        q = p
        while not q.is_dir():
            if os.path.lexists(q):
                raise ScenarioError(f"cannot create '{out}': '{q}' is not a folder", field=flag)
            missing.append(q)
            if q.parent == q:
                break
            q = q.parent
        for folder in reversed(missing):
            folder.mkdir()
            created.append(folder)
        fd, probe = tempfile.mkstemp(prefix=".qosbound-probe-", dir=p)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        what = "write into" if exists else "create"
        raise ScenarioError(f"cannot {what} '{out}': {e.strerror or e}", field=flag) from None
    finally:
        for folder in reversed(created):
            try:
                folder.rmdir()
            except OSError:
                pass


def _check_job(model: str, props: str, model_text: str, props_text: str, consts: dict, exact: bool,
               precision: float, engine_name: str, max_states: float):
    import sys

    from qosbound.models import engine

    if exact:  # exact values are rationals whose digits can exceed Python's default 4300-digit limit
        sys.set_int_max_str_digits(0)
    typed = preflight(model, model_text, props_text, consts, max_states, props)
    return engine.check(model, props, typed, exact=exact, precision=precision, engine=engine_name)


def run(args) -> int:
    from qosbound.cli import isolated

    if args.model_command == "render":
        check_output_dir(args.out)
        paths = isolated(render_scenario, args.scenario, args.out, what=f"rendering {args.scenario}")
        for p in paths:
            print(p)
        return 0
    model = args.model
    props = args.props
    precision = _precision(args.precision)
    max_states = max_states_budget(getattr(args, "max_states", DEFAULT_MAX_STATES))
    consts = _parse_consts(args.const)
    if model.endswith((".yaml", ".yml")):
        import tempfile

        tmp = tempfile.mkdtemp(prefix="qosbound-model-")
        paths = isolated(render_scenario, model, tmp, what=f"rendering {model}")
        model = str(next(p for p in paths if p.suffix == ".prism"))
        props = props or str(next(p for p in paths if p.suffix == ".props"))
    if props is None:
        guess = Path(model).with_suffix(".props")
        if not guess.exists():
            raise ModelError(f"{model}: no property file given and {guess} does not exist")
        props = str(guess)
    model_text = read_text_file(model, "PRISM model")
    props_text = read_text_file(props, "property file")
    res = isolated(_check_job, model, props, model_text, props_text, consts, args.exact, precision, args.engine,
                   max_states, what=f"model check of {model}",
                   on_crash=lambda text: ModelError(text + " -- check the model's constant expressions"))
    from qosbound.models import engine

    if args.json:
        print(json.dumps({"model": model, "properties": props, "engine": res.engine, "states": res.states,
                          "transitions": res.transitions, "build_seconds": res.build_seconds,
                          "check_seconds": res.check_seconds, "precision": res.precision,
                          "values": {k: (v if math.isfinite(v) else str(v)) for k, v in res.values.items()},
                          "intervals": {k: list(v) for k, v in res.intervals.items()},
                          "unbounded": list(res.unbounded),
                          "exact_values": {k: engine.fraction_text(v, None) for k, v in res.exact_values.items()}},
                         indent=2))
        return 0
    print(f"{model}: {res.states} states, {res.transitions} transitions, built in {res.build_seconds:.3f} s, "
          f"checked in {res.check_seconds:.3f} s on {res.engine} ({res.precision})")
    width = max(len(k) for k in res.values)
    for k, v in res.values.items():
        ex = res.exact_values.get(k)
        iv = res.intervals.get(k)
        print(f"  {k:<{width}}  {v:.12g}" + (f"  (= {engine.fraction_text(ex)})" if ex is not None else "")
              + (f"  in [{iv[0]:.12g}, {iv[1]:.12g}]" if iv is not None else "")
              + ("  (no error bound)" if k in res.unbounded else ""))
    return 0
