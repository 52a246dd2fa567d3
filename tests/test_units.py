"""The unit grammar (qosbound.units): every accepted spelling, the near misses it refuses, and a round trip.

The grammar is docs/units.md; these tests read like its table. Values are compared exactly where the grammar
promises exactness (decimal prefixes are applied in decimal, so '3 mbit/s' is exactly 3e6 bit/s).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qosbound.errors import ScenarioError
from qosbound.units import (ACCEPTED, DIALECTS, UNITS, format_exact, format_quantity, parse_quantity, read_quantity)

# ---- what the "done means" says, literally ----------------------------------------------------------


def test_tc_mbit_per_second_is_megabit_not_millibit():
    """`rate: 3 mbit/s` was read as 3 millibit/s (EF at 0.003 bit/s, every SLO passing)."""
    assert parse_quantity("3 mbit/s", "rate") == 3e6


@pytest.mark.parametrize("text,value", [("10Mb/s", 10e6), ("1 Gb/s", 1e9)])
def test_ieee_spellings_are_bit_rates(text, value):
    """IEEE 802.3 writes Mb/s and Gb/s; they were refused as 'wrong units' (read as barn)."""
    assert parse_quantity(text, "rate") == value


def test_bytes_per_second_are_converted_and_the_reading_says_so():
    """`10 MB/s` is 80 Mbit/s; the reading keeps the unit written, so the echo can show the conversion."""
    r = read_quantity("10 MB/s", "rate")
    assert r.value == 80e6 and r.unit.bytes_rate and r.unit.symbol == "MB/s" and r.text == "10 MB/s"


@pytest.mark.parametrize("value,kind,example", [
    (20, "time", "'20 ms'"), ("20", "time", "'20 ms'"), (0.01, "time", "'0.01 s'"),
    (5, "rate", "'5 Mbit/s'"), ("2000000", "rate", "'2000000 bit/s'"), (1500, "size", "'1500 B'"),
])
def test_a_bare_time_rate_or_size_is_refused_where_units_are_required(value, kind, example):
    """In SLO limits and search ranges a bare number is an error naming the field and the accepted forms."""
    with pytest.raises(ScenarioError) as e:
        parse_quantity(value, kind, field="slos[0].max", bare_si=False)
    assert e.value.field == "slos[0].max"
    assert "has no unit" in e.value.problem and example in e.value.problem and ACCEPTED[kind] in e.value.problem


@pytest.mark.parametrize("value,kind", [(0.01, "probability"), ("1e-3", "probability"), (4000, "count")])
def test_probabilities_and_counts_stay_bare(value, kind):
    assert parse_quantity(value, kind, bare_si=False) == float(value)


@pytest.mark.parametrize("value,kind,si", [(2000000, "rate", 2e6), ("0.02", "time", 0.02), (1500, "size", 1500.0)])
def test_scenario_fields_keep_reading_bare_numbers_in_si(value, kind, si):
    """A scenario field documented as a bare SI number (`rate: 2000000`) keeps working."""
    r = read_quantity(value, kind)
    assert r.value == si and r.bare


# ---- every accepted spelling --------------------------------------------------------------------------------

#: (text, kind, SI value): one row per spelling the grammar accepts (docs/units.md's table, row by row).
ACCEPTED_SPELLINGS = [
    # rates: bits per second, the prefix letter in any case
    ("1 bit/s", "rate", 1.0), ("1 bits/s", "rate", 1.0), ("1 b/s", "rate", 1.0), ("1 bps", "rate", 1.0),
    ("2 kbit/s", "rate", 2e3), ("2 Kbit/s", "rate", 2e3), ("2 kbps", "rate", 2e3), ("2 Kbps", "rate", 2e3),
    ("2 kb/s", "rate", 2e3), ("2 Kb/s", "rate", 2e3),
    ("3 Mbit/s", "rate", 3e6), ("3 mbit/s", "rate", 3e6), ("3 Mbps", "rate", 3e6), ("3 mbps", "rate", 3e6),
    ("3 Mb/s", "rate", 3e6), ("3 mb/s", "rate", 3e6), ("3 Mbits/s", "rate", 3e6),
    ("4 Gbit/s", "rate", 4e9), ("4 gbit/s", "rate", 4e9), ("4 Gbps", "rate", 4e9), ("4 gbps", "rate", 4e9),
    ("4 Gb/s", "rate", 4e9), ("5 Tbit/s", "rate", 5e12), ("5 Tbps", "rate", 5e12), ("5 Tb/s", "rate", 5e12),
    # tc's rate words, as tc writes them
    ("7 bit", "rate", 7.0), ("7 kbit", "rate", 7e3), ("7 mbit", "rate", 7e6), ("7 gbit", "rate", 7e9),
    ("7 tbit", "rate", 7e12),
    # bytes per second, converted to bits
    ("1 B/s", "rate", 8.0), ("1 byte/s", "rate", 8.0), ("1 bytes/s", "rate", 8.0), ("1 kB/s", "rate", 8e3),
    ("1 KB/s", "rate", 8e3), ("10 MB/s", "rate", 80e6), ("1 GB/s", "rate", 8e9), ("1 TB/s", "rate", 8e12),
    ("1 KiB/s", "rate", 8192.0), ("1 MiB/s", "rate", 8 * 2.0 ** 20),
    # sizes
    ("1500 B", "size", 1500.0), ("1 byte", "size", 1.0), ("2 bytes", "size", 2.0), ("1 kB", "size", 1e3),
    ("1 KB", "size", 1e3), ("1 MB", "size", 1e6), ("1 GB", "size", 1e9), ("1 TB", "size", 1e12),
    ("1 KiB", "size", 1024.0), ("1 MiB", "size", 2.0 ** 20), ("1 GiB", "size", 2.0 ** 30),
    ("1 TiB", "size", 2.0 ** 40), ("16 bit", "size", 2.0), ("16 bits", "size", 2.0), ("8 kbit", "size", 1e3),
    ("8 Kbit", "size", 1e3), ("8 Mbit", "size", 1e6), ("8 mbit", "size", 1e6), ("8 Gbit", "size", 1e9),
    # times
    ("2 s", "time", 2.0), ("2 sec", "time", 2.0), ("1 second", "time", 1.0), ("2 seconds", "time", 2.0),
    ("10 ms", "time", 0.01), ("10 msec", "time", 0.01), ("250 us", "time", 250e-6),
    ("250 µs", "time", 250e-6), ("250 μs", "time", 250e-6), ("250 usec", "time", 250e-6),
    ("5 ns", "time", 5e-9), ("5 nsec", "time", 5e-9), ("2 min", "time", 120.0), ("1 minute", "time", 60.0),
    ("2 minutes", "time", 120.0),
    # probabilities and packet rates
    ("1 %", "probability", 0.01), ("0.5", "probability", 0.5), ("100 pps", "packet_rate", 100.0),
    ("2 kpps", "packet_rate", 2e3), ("3 Mpps", "packet_rate", 3e6), ("3 mpps", "packet_rate", 3e6),
    ("5 packets/s", "packet_rate", 5.0), ("5 pkt/s", "packet_rate", 5.0), ("5 1/s", "packet_rate", 5.0),
]


@pytest.mark.parametrize("text,kind,value", ACCEPTED_SPELLINGS)
def test_every_accepted_spelling(text, kind, value):
    assert parse_quantity(text, kind) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("text,kind,value", [("10Mbit/s", "rate", 1e7), ("  10   Mbit/s ", "rate", 1e7),
                                             ("1.5e3kbit/s", "rate", 1.5e6), ("+2 ms", "time", 0.002),
                                             (".5 s", "time", 0.5), ("1E3 B", "size", 1e3)])
def test_whitespace_between_number_and_unit_is_optional(text, kind, value):
    assert parse_quantity(text, kind) == value


#: The grammar restated independently of qosbound.units (docs/units.md): prefixes and stems per kind.
_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9, "t": 1e12, "T": 1e12,
           "Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40}
_STEMS = {"rate": {"bit/s": 1.0, "bits/s": 1.0, "b/s": 1.0, "bps": 1.0, "bit": 1.0, "B/s": 8.0, "byte/s": 8.0,
                   "bytes/s": 8.0},
          "size": {"B": 1.0, "byte": 1.0, "bytes": 1.0, "bit": 0.125, "bits": 0.125},
          "packet_rate": {"pps": 1.0}}
_WHOLE = {"time": {"s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0, "ms": 1e-3, "msec": 1e-3, "us": 1e-6,
                   "µs": 1e-6, "μs": 1e-6, "usec": 1e-6, "ns": 1e-9, "nsec": 1e-9, "min": 60.0, "minute": 60.0,
                   "minutes": 60.0},
          "probability": {"%": 0.01}, "packet_rate": {"packets/s": 1.0, "pkt/s": 1.0, "1/s": 1.0}}


def _independent(spelling: str, kind: str) -> float | None:
    """What the documented grammar says ``1 <spelling>`` is, or None if it does not accept it."""
    if spelling in _WHOLE.get(kind, {}):
        return _WHOLE[kind][spelling]
    for stem, f in _STEMS.get(kind, {}).items():
        if spelling.endswith(stem):
            prefix = spelling[: -len(stem)]
            if prefix not in _PREFIX:
                continue
            if prefix.endswith("i") and stem not in ("B", "B/s"):
                continue  # binary prefixes for bytes only
            if stem in ("B", "byte", "bytes", "B/s", "byte/s", "bytes/s") and prefix in ("m", "g", "t"):
                continue  # mB would be milli: refused; bytes take k K M G T
            if kind == "rate" and stem == "bit" and prefix not in ("", "k", "m", "g", "t"):
                continue  # tc's rate words in tc's lowercase only: 'Mbit' is an amount of data
            return _PREFIX[prefix] * f
    return None


@pytest.mark.parametrize("spelling", sorted(UNITS))
def test_every_spelling_of_the_table_means_what_the_docs_say(spelling):
    """Each spelling of the grammar's table, in each of its kinds, is worth what the documented rules say."""
    for kind, unit in UNITS[spelling].items():
        want = _independent(spelling, kind)
        assert want is not None, f"{spelling!r} as a {kind} is not in the documented grammar"
        assert parse_quantity(f"8 {spelling}", kind) == pytest.approx(8 * want, rel=1e-15), (spelling, kind)


def test_the_documented_grammar_is_all_in_the_table():
    """Conversely every (prefix, stem) the docs allow is a spelling of the table."""
    for kind, stems in _STEMS.items():
        for stem in stems:
            for prefix in _PREFIX:
                if _independent(prefix + stem, kind) is not None:
                    assert kind in UNITS.get(prefix + stem, {}), (prefix + stem, kind)
    for kind, words in _WHOLE.items():
        for w in words:
            assert kind in UNITS.get(w, {}), (w, kind)


def test_no_rate_or_size_is_ever_milli():
    """No spelling of a rate or a size has a factor below its unit (bits for sizes): 'm' is mega there."""
    for spelling, kinds in UNITS.items():
        for kind, unit in kinds.items():
            if kind == "rate":
                assert unit.factor >= 1, spelling
            if kind == "size":
                assert unit.factor >= 0.125, spelling


# ---- refusals -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,kind,words", [
    ("3 mB", "size", "'m' (milli) is not a prefix of a size or rate; write 'MB'"),
    ("3 mB/s", "rate", "'m' (milli) is not a prefix"),
    ("10 Mbit", "rate", "a size (an amount of data), not a rate: a rate is per second, e.g. '10 Mbit/s'"),
    ("2 MB", "rate", "a size (an amount of data), not a rate"),
    ("5 furlongs", "time", "unknown unit 'furlongs'"),
    ("1e999 Mbit/s", "rate", "is not a finite number"),
    ("1e9999999 B", "size", "is not a finite number"),
    ("1e99999999999999999999999 bit/s", "rate", "is not a finite number"),
    ("9" * 400 + " B", "size", "is not a finite number"),
    ("nan ms", "time", "is not a finite number"),
    ("inf", "rate", "is not a finite number"),
    ("-inf ms", "time", "is not a finite number"),
    ("10 Mb", "size", "'Mb' is ambiguous"),
    ("10 MBps", "rate", "'MBps' is ambiguous"),
    ("10 Bps", "rate", "'Bps' is ambiguous"),
    ("12 bit", "size", "a whole number of bytes"),
    ("10 ms", "rate", "a time, not a rate"),
    ("10 Mbit/s", "size", "a rate, not a size"),
    ("10 ms", "probability", "a time, not a probability"),
    ("5 %", "count", "a probability, not a count"),
    ("5 Ms", "time", "time units are lowercase"),
    ("1,5 Mbit/s", "rate", "decimal separator"),
    ("100m", "rate", "a prefix without a unit (Junos and tc shorthand): write 'Mbit/s'"),
    ("64k", "size", "write 'kB' or 'kbit'"),
    ("2 h", "time", "give times in s, ms, us, ns or min"),
    ("abc", "rate", "cannot read 'abc' as a rate"),
    ("", "rate", "empty"),
    (True, "count", "yes/no"),
    ([1, 2], "size", "got list"),
    (float("nan"), "time", "not a finite number"),
])
def test_near_misses_are_refused_with_their_reason(text, kind, words):
    with pytest.raises(ScenarioError) as e:
        parse_quantity(text, kind, field="link.rate")
    assert words in e.value.problem and e.value.field == "link.rate", e.value.problem
    assert "\n" not in e.value.problem


# ---- tc's own dialect -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,kind,value", [("10 kbps", "rate", 80e3), ("1 mbps", "rate", 8e6),
                                             ("1 Mbps", "rate", 8e6), ("10 Kbit", "rate", 1e4),
                                             ("10 kb", "size", 1e4), ("2 mb", "size", 2e6), ("3 k", "size", 3e3),
                                             ("10 mbit", "rate", 1e7)])
def test_the_tc_dialect_reads_tcs_own_byte_meanings(text, kind, value):
    """Inside a tc import (and only there) kbps/mbps are bytes per second and kb/mb bytes, as tc(8) says."""
    assert parse_quantity(text, kind, dialect="tc") == value
    assert "tc" in DIALECTS


def test_outside_tc_kbps_is_bits():
    assert parse_quantity("10 kbps", "rate") == 1e4


# ---- round trip -----------------------------------------------------------------------------------------------

_FINITE = st.floats(min_value=-1e300, max_value=1e300, allow_nan=False, allow_infinity=False)


@given(x=_FINITE, kind=st.sampled_from(["time", "rate", "size", "packet_rate"]))
def test_format_exact_then_parse_gives_the_value_back(x, kind):
    """Formatting a value in the unit a person reads and parsing the text back loses nothing."""
    assert parse_quantity(format_exact(x, kind), kind) == x


@given(x=st.floats(min_value=1e-12, max_value=1e15, allow_nan=False))
def test_format_quantity_then_parse_is_close(x):
    """The report's rounded form (4 digits) reads back within its rounding."""
    for kind, unit in (("time", "s"), ("rate", "bit/s"), ("size", "B")):
        back = parse_quantity(format_quantity(x, unit), kind)
        assert math.isclose(back, x, rel_tol=5e-4), (x, unit, format_quantity(x, unit))


@pytest.mark.parametrize("value,kind,text", [(8e7, "rate", "80 Mbit/s"), (0.0125, "time", "12.5 ms"),
                                             (65535.0, "size", "65535 B"), (2.5e6, "size", "2.5 MB"),
                                             (1e-300, "time", "1e-291 ns")])
def test_format_exact_reads_as_people_write(value, kind, text):
    assert format_exact(value, kind) == text
