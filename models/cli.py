"""``qosbound model render`` and ``qosbound model check``."""

from __future__ import annotations

import json
from pathlib import Path

from qosbound.errors import ModelError, ScenarioError
from qosbound.models import engine

__all__ = ["run", "render_scenario"]


def _parse_consts(items: list[str]) -> dict:
    out = {}
    for item in items:
        for part in item.split(","):
            if not part.strip():
                continue
            if "=" not in part:
                raise ModelError(f"--const '{part}': expected NAME=VALUE")
            k, v = part.split("=", 1)
            k, v = k.strip(), v.strip()
            try:
                out[k] = int(v)
            except ValueError:
                try:
                    out[k] = float(v)
                except ValueError:
                    if v in ("true", "false"):
                        out[k] = v == "true"
                    else:
                        raise ModelError(f"--const {k}: '{v}' is not a number or a boolean") from None
    return out


def render_scenario(scenario_path: str, out_dir: str) -> list[Path]:
    """Write the PRISM model(s) and property file(s) of a scenario; returns the paths written."""
    from qosbound.scenario import load
    from qosbound.systems import get_system

    scn = load(scenario_path)
    system = get_system(scn.system)
    if not hasattr(system, "render_models"):
        raise ScenarioError(f"system '{scn.system}' has no PRISM model to render", file=scenario_path,
                            field="system")
    return system.render_models(scn, out_dir)


def run(args) -> int:
    if args.model_command == "render":
        paths = render_scenario(args.scenario, args.out)
        for p in paths:
            print(p)
        return 0
    model = args.model
    props = args.props
    if model.endswith((".yaml", ".yml")):
        import tempfile

        tmp = tempfile.mkdtemp(prefix="qosbound-model-")
        paths = render_scenario(model, tmp)
        model = str(next(p for p in paths if p.suffix == ".prism"))
        props = props or str(next(p for p in paths if p.suffix == ".props"))
    if props is None:
        guess = Path(model).with_suffix(".props")
        if not guess.exists():
            raise ModelError(f"{model}: no property file given and {guess} does not exist")
        props = str(guess)
    consts = _parse_consts(args.const)
    res = engine.check(model, props, consts, exact=args.exact, precision=args.precision, engine=args.engine)
    if args.json:
        print(json.dumps({"model": model, "properties": props, "engine": res.engine, "states": res.states,
                          "transitions": res.transitions, "build_seconds": res.build_seconds,
                          "check_seconds": res.check_seconds, "precision": res.precision,
                          "values": res.values,
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
