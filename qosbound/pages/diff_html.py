"""The ``diff`` page (:func:`diff_page`): a headline (SLOs broken, exit code), then each port of the two
configurations, those with a broken SLO first."""

from __future__ import annotations

from qosbound.pages.html_common import badge, esc, frame, html_table
from qosbound.pages.reading import EXIT_MEANING

__all__ = ["diff_page"]


def _diff_port(d: dict, k: int) -> str:
    """One port of a ``diff`` document: what was refused, the configuration's changes with their lines, the SLOs
    that changed state, the answers before and after."""
    tag = " (new port)" if d.get("new_only") else " (removed)" if d.get("removed") else ""
    parts = [f'<section id="port-{k}" aria-labelledby="port-{k}-h"><h2 id="port-{k}-h">{esc(d["port"])}{esc(tag)}</h2>']
    for err in d.get("refused", []):
        parts.append(f'<p class="verdict st-fail">{badge("error", "✗ refused")} {esc(err)}</p>')
    if d["slo_changes"]:
        body = "".join(f'<tr><th scope="row">{esc(c["slo"])}</th><td>{badge(c["before"])}</td>'
                       f'<td>{badge(c["after"])}'
                       + (" (broken by this change)" if c["slo"] in d["broken"] else "") + "</td></tr>"
                       for c in sorted(d["slo_changes"], key=lambda c: c["slo"] not in d["broken"]))
        parts.append(html_table("SLOs that change state", ["SLO", "before", "after"], f"<tbody>{body}</tbody>"))
    if d["changes"]:
        body = "".join(f'<tr><th scope="row"><code>{esc(c["field"])}</code></th><td>{esc(c["before"])}</td>'
                       f'<td>{esc(c["after"])}</td><td><code>{esc(c["line"])}</code></td></tr>' for c in d["changes"])
        parts.append(html_table("Configuration changes", ["field", "before", "after", "line"],
                                f"<tbody>{body}</tbody>"))
    if d["answers"]:
        body = "".join(f'<tr><th scope="row">{esc(a["metric"])}</th><td>{esc(a["method"])}</td>'
                       f'<td>{esc(a["before"])}</td><td>{esc(a["after"])}</td></tr>' for a in d["answers"])
        parts.append(html_table("Answers before and after", ["metric", "method", "before", "after"],
                            f"<tbody>{body}</tbody>"))
    if not (d["slo_changes"] or d["changes"] or d["answers"] or d.get("refused")):
        parts.append('<p class="small">No change.</p>')
    return "".join(parts) + "</section>"


def diff_page(doc: dict, source: str, generated: str) -> str:
    """The page of ``qosbound diff``: a headline (SLOs broken, exit code), then each port, the ports with a broken
    SLO first, then the ones that changed, then the unchanged ones."""
    ports = sorted(doc["ports"], key=lambda d: (not d["broken"], not (d["changes"] or d["slo_changes"]
                                                                      or d["answers"] or d["refused"])))
    broken = sum(len(d["broken"]) for d in ports)
    code = doc.get("exit_code")
    cls = "st-ok" if code == 0 else "st-fail"
    head = (f'<p class="verdict {cls}" role="status">{"✓" if code == 0 else "✗"} {broken} SLO'
            f'{"s" if broken != 1 else ""} broken; exit {esc(code)}: '
            f'{esc(EXIT_MEANING.get(code, "see the exit codes"))}</p>'
            f'<p>{esc(doc["old"])} → {esc(doc["new"])}; methods: {esc(", ".join(doc["methods"]))}</p>')
    body = "".join(f'<tr><th scope="row"><a href="#port-{k}">{esc(d["port"])}</a></th>'
                   f'<td>{len(d["changes"])}</td><td>{", ".join(esc(n) for n in d["broken"]) or "-"}</td></tr>'
                   for k, d in enumerate(ports))
    index = html_table("Ports", ["port", "configuration changes", "SLOs broken"], f"<tbody>{body}</tbody>")
    sections = "".join(_diff_port(d, k) for k, d in enumerate(ports))
    return frame(f"qosbound diff: {source}", f"qosbound diff: {esc(source)}", head + index + sections, generated)
