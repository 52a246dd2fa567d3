"""Every field of every imported example port says where it came from: a configuration line that exists, or a
platform default of the documented table (with its citation)."""

from __future__ import annotations

import re

import pytest

from qosbound.configs import load_configs
from qosbound.configs.defaults import table
from tests.configs_helpers import CONFIG_EXAMPLES

TRAFFIC = CONFIG_EXAMPLES / "traffic" / "home-prio-tbf.yaml"
EXAMPLES = sorted(p for p in CONFIG_EXAMPLES.iterdir() if p.is_file())


def leaves(d, path=""):
    """Field paths of a scenario (classes by name), down to the values (a traffic entry is one value)."""
    if isinstance(d, dict):
        for k, v in d.items():
            if k == "traffic":
                yield f"{path}.{k}".lstrip(".")
            else:
                yield from leaves(v, f"{path}.{k}".lstrip("."))
    elif isinstance(d, list) and d and all(isinstance(x, dict) and "name" in x for x in d):
        for x in d:
            yield from leaves({k: v for k, v in x.items()}, f"{path}.{x['name']}")
    else:
        yield path


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_field_has_provenance(path):
    ports = load_configs([path], TRAFFIC)
    assert ports
    for p in ports:
        fields = [f for f in leaves(p.scenario) if f.split(".")[0] in ("link", "txq", "classes")]
        missing = [f for f in fields if f not in p.provenance]
        assert not missing, (p.name, missing)
        for f in fields:
            prov = p.provenance[f]
            refs = re.findall(r"(\S+):(\d+)", prov)
            assert refs or "assumed" in prov, (f, prov)
            for file, line in refs:
                lines = open(file).read().split("\n")
                assert 1 <= int(line) <= len(lines) and lines[int(line) - 1].strip(), (f, prov)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_assumption_is_a_documented_default_with_a_citation(path):
    t = table()
    for p in load_configs([path], TRAFFIC):
        for a in p.assumptions:
            entry = t[a["platform"]][a["default"]]
            assert a["citation"] == entry["citation"] and a["citation"]
            assert p.provenance[a["field"]].count("assumed") >= 1


def test_the_default_table_cites_every_value_and_states_its_confidence():
    for family, entries in table().items():
        for key, e in entries.items():
            if isinstance(e, dict) and "value" in e:
                assert e.get("citation") and e.get("meaning"), (family, key)
                assert e.get("confidence") in ("documented", "typical"), (family, key)


def test_the_docs_list_every_platform_default():
    """docs/configs.md has a row for every key of the defaults table (the table is the reference; the page
    explains it)."""
    from tests.helpers import DOCS

    page = (DOCS / "configs.md").read_text()
    raw_keys = {(fam, key) for fam, entries in _raw_table().items() for key, e in entries.items()
                if isinstance(e, dict) and "value" in e}
    missing = [k for k in raw_keys if f"| {k[0]} | `{k[1]}` |" not in page]
    assert not missing, missing


def _raw_table():
    import yaml

    from qosbound.configs.defaults import DEFAULTS_FILE

    return yaml.safe_load(DEFAULTS_FILE.read_text())
