"""The configuration importers never crash: on any text -- arbitrary, or a real configuration cut, spliced and
garbled -- the outcome is imported ports or a typed error (:class:`~qosbound.errors.QosboundError`), never another
exception."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from qosbound.configs import import_configs
from qosbound.configs.detect import detect_format
from qosbound.configs.ios_parse import parse_ios
from qosbound.configs.ios_semantics import ios_ports
from qosbound.configs.json_lines import JSONLineError, loads_with_lines
from qosbound.configs.junos_tree import JunosSyntaxError, parse_curly, parse_set
from qosbound.configs.source import ConfigText
from qosbound.configs.tc_parse import parse_tc_script
from qosbound.configs.traffic import TrafficSpec
from qosbound.errors import QosboundError
from tests.configs_helpers import CONFIG_EXAMPLES, MALFORMED

SOURCES = [p.read_text(errors="replace") for p in sorted(CONFIG_EXAMPLES.iterdir()) if p.is_file()] + \
    [p.read_text(errors="replace") for p in sorted(MALFORMED.iterdir()) if p.suffix != ".gz"]
TOKENS = ["{", "}", ";", "[", "]", "!", "#", "\t", "\r\n", "  ", "class", "policy-map", "class-map", "interface",
          "priority", "percent", "bandwidth", "remaining", "ratio", "police", "cir", "rate", "bc", "be", "shape",
          "average", "service-policy", "output", "input", "queue-limit", "random-detect", "dscp", "precedence",
          "set", "qos-group", "match", "any", "tc", "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "1:10",
          "parent", "htb", "prio", "tbf", "red", "gred", "pfifo", "limit", "burst", "5mbit", "10kb", "-1", "0",
          "1e400", "nan", "99999999999999999999", "ef", "af41", "cs9", "set class-of-service", "schedulers",
          "transmit-rate", "remainder", "fill-level", "drop-probability", "interpolate", '"', "'", "\\", "$X",
          "${Y}", '{"qos": {', '"cir": "x"', "end-policy-map", "banner motd ^C", "^C", "exit", "end"]


@st.composite
def garbled(draw):
    """A real configuration cut at a random place, with random tokens spliced in and lines dropped."""
    text = draw(st.sampled_from(SOURCES))
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["drop", "splice", "dup", "cut"]))
        if action == "drop":
            del lines[i]
        elif action == "dup":
            lines.insert(i, lines[i])
        elif action == "cut":
            lines = lines[:i + 1]
            lines[-1] = lines[-1][:draw(st.integers(0, len(lines[-1])))]
        else:
            words = lines[i].split(" ")
            j = draw(st.integers(0, len(words)))
            words.insert(j, draw(st.sampled_from(TOKENS)))
            lines[i] = " ".join(words)
    return "\n".join(lines)


def _import(tmp_path_factory, text: str, suffix: str = ".cfg"):
    d = tmp_path_factory.mktemp("fz")
    p = d / f"x{suffix}"
    p.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        import_configs([p])
    except QosboundError:
        pass


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=garbled())
def test_garbled_real_configurations_give_ports_or_typed_errors(tmp_path_factory, text):
    _import(tmp_path_factory, text)


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_arbitrary_text_gives_ports_or_typed_errors(tmp_path_factory, text):
    _import(tmp_path_factory, text)


@settings(max_examples=200)
@given(words=st.lists(st.sampled_from(TOKENS), max_size=40))
def test_each_parser_alone_raises_only_its_typed_errors(words):
    """The parsers below the dispatcher: IOS (every dialect, with semantics), tc scripts, Junos (both forms),
    JSON with lines."""
    text = " ".join(words).replace(" ; ", ";\n").replace(" ! ", "\n")
    cfg = ConfigText("f", text)
    for dialect in ("ios", "ios-xe", "ios-xr"):
        try:
            ios_ports(parse_ios(cfg, dialect), TrafficSpec())
        except QosboundError:
            pass
    try:
        parse_tc_script(cfg)
    except QosboundError:
        pass
    for parse in (parse_curly, parse_set):
        try:
            parse(text)
        except JunosSyntaxError:
            pass
    try:
        loads_with_lines(text)
    except JSONLineError:
        pass
    try:
        detect_format(cfg)
    except QosboundError:
        pass
