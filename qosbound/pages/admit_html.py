"""The ``admit`` page (:func:`admit_page`): per scenario, the answer of the admission search, its inputs as
understood and the margins it evaluated."""

from __future__ import annotations

from qosbound.pages import plots
from qosbound.pages.html_common import Page, code_badge, esc, frame, html_table, overall_verdict, q
from qosbound.pages.reading import is_failing_code, scenario_view
from qosbound.pages.scenarios_html import inputs_block

__all__ = ["admit_section", "admit_page"]


def _admit_answer(d: dict) -> str:
    unit = d.get("unit") or "1"

    def qq(x):
        return q(x, unit, 6) if unit != "1" else (f"{x:.6g}" if isinstance(x, (int, float)) else "-")

    if d.get("error"):
        return f'<p class="error" role="alert"><strong>Not evaluated.</strong> {esc(d["error"])}</p>'
    if d.get("value") is None:
        return (f'<p class="verdict st-fail">✗ no value of {esc(d.get("parameter"))} meets every SLO '
                f'({esc(d.get("message"))}; method {esc(d.get("method"))})</p>')
    stop = (f"binding SLO: {d['binding_slo']}" if d.get("binding_slo") else "no SLO binds")
    msg = f"; {d['message']}" if d.get("message") else ""
    return (f'<p class="verdict st-ok">✓ {esc(d.get("direction"))} {esc(d.get("parameter"))} with every SLO '
            f'holding = <strong>{esc(qq(d.get("value")))}</strong> (method {esc(d.get("method"))}, {esc(stop)}, '
            f'{esc(d.get("evaluations"))} evaluations{esc(msg)})</p>')


def admit_section(page: Page, d: dict) -> str:
    view = scenario_view(d)
    unit = d.get("unit") or "1"
    out = [f'<section class="scenario{" failing" if is_failing_code(d.get("exit_code")) else ""}" '
           f'id="{esc(view.anchor)}" aria-labelledby="{esc(view.anchor)}-h" data-scenario="{esc(view.suite)}">',
           f'<h2 id="{esc(view.anchor)}-h">{esc(view.suite)} {code_badge(d.get("exit_code"))}</h2>',
           _admit_answer(d)]
    if d.get("error"):
        out.append("</section>")
        return "".join(out)
    s = d.get("search")
    if s:
        def qq(x):
            return "-" if x is None else (q(x, s.get("unit"), 6) if s.get("unit") not in (None, "1") else f"{x:g}")

        rows = "".join(f'<tr><th scope="row">{esc(k)}</th><td>{esc(v)}</td></tr>' for k, v in (
            ("parameter", s.get("parameter")), ("kind", s.get("kind") or "a parameter"),
            ("now", qq(s.get("current"))), ("searched from (--min)", qq(s.get("min"))),
            ("searched up to (--max)", qq(s.get("max")))))
        out.append(html_table("The search as understood", ["search", "as understood"], f"<tbody>{rows}</tbody>"))
    for note in d.get("notes") or []:
        out.append(f'<p class="note">note: {esc(note)}</p>')
    hist = d.get("history") or []
    if hist:
        uid = page.uid("admit")
        svg = plots.admit_svg(hist, d.get("parameter", ""), unit, d.get("value"), uid, f"{uid}-cap")
        out.append(f'<figure>{svg}<figcaption id="{uid}-cap">Every value the search evaluated and the smallest '
                   "slack of an SLO there, relative to its limit (at or above 0: every SLO holds); the answer as a "
                   "vertical line.</figcaption></figure>")
        def slack(h):
            return "invalid scenario" if h.get("margin") is None else f"{h['margin']:.4g}"

        rows = "".join(f'<tr><td class="num">{esc(q(h.get("value"), unit, 6) if unit != "1" else h.get("value"))}'
                       f'</td><td class="num">{esc(slack(h))}</td></tr>' for h in hist)
        out.append(f"<details><summary>The {len(hist)} evaluations</summary>"
                   + html_table("", ["value", "smallest slack / limit"], f"<tbody>{rows}</tbody>",
                            label=f"evaluations of {view.suite}") + "</details>")
    out.append(inputs_block(view))
    out.append("</section>")
    return "".join(out)


def admit_page(doc: dict, source: str, generated: str) -> str:
    docs = doc["scenarios"] if isinstance(doc.get("scenarios"), list) else [doc]

    def key(d):
        code = d.get("exit_code", 0 if d.get("value") is not None else 1)
        return (0 if d.get("error") else 1 if d.get("value") is None else 2, code)

    docs = sorted(docs, key=key)
    page = Page()
    body = []
    if len(docs) > 1:
        failing = sum(1 for d in docs if d.get("error") or d.get("value") is None)
        body.append(overall_verdict(doc, len(docs), failing))
        rows = []
        for d in docs:
            v = scenario_view(d)
            unit = d.get("unit") or "1"
            val = ("not evaluated" if d.get("error") else "none feasible" if d.get("value") is None else
                   q(d["value"], unit, 6) if unit != "1" else f"{d['value']:.6g}")
            cls = ' class="fail"' if d.get("error") or d.get("value") is None else ""
            rows.append(f'<tr{cls}><th scope="row"><a href="#{esc(v.anchor)}">{esc(v.suite)}</a></th>'
                        f'<td>{code_badge(d.get("exit_code"))}</td><td class="num">{esc(val)}</td>'
                        f'<td>{esc(d.get("method") or "-")}</td><td class="wrap">{esc(d.get("binding_slo") or "-")}</td>'
                        f'<td class="num">{esc(d.get("evaluations", "-"))}</td></tr>')
        param = doc.get("parameter") or docs[0].get("parameter")
        body.append(f'<nav aria-label="Scenarios">' + html_table(
            f"{esc(param)}: {len(docs)} scenarios, failing first",
            ["scenario", "verdict", "value", "method", "binding SLO", "evaluations"], f"<tbody>{''.join(rows)}</tbody>",
            label="index of scenarios") + "</nav>")
    body += [admit_section(page, d) for d in docs]
    name = scenario_view(docs[0]).suite if len(docs) == 1 else source
    return frame(f"qosbound admit: {name}", f"qosbound admit: {esc(name)}", "".join(body), generated)
