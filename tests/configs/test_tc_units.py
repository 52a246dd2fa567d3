"""tc's units (qosbound.configs.tc_units): rates, sizes and times as tc reads and refuses them."""

from __future__ import annotations

import pytest

from qosbound.configs.tc_units import TcUnitError, tc_json_rate, tc_quantity


@pytest.mark.parametrize("text, kind, value", [
    ("5mbit", "rate", 5e6), ("5Mbit", "rate", 5e6), ("100kbps", "rate", 800e3), ("1mbps", "rate", 8e6),
    ("2000", "rate", 2000.0), ("1gbit", "rate", 1e9), ("1kibit", "rate", 1024.0),
    ("1540", "size", 1540.0), ("10kb", "size", 10240.0), ("32k", "size", 32768.0), ("1mb", "size", 1048576.0),
    ("8kbit", "size", 1024.0), ("50ms", "time", 0.05), ("20", "time", 2e-5), ("1s", "time", 1.0),
])
def test_tc_units_as_tc_reads_them(text, kind, value):
    assert tc_quantity(text, kind) == pytest.approx(value, rel=1e-12)


def test_tc_units_refuse_what_tc_would_refuse():
    for text, kind in (("5 furlongs", "rate"), ("fast", "rate"), ("10xb", "size"), ("", "time")):
        with pytest.raises(TcUnitError):
            tc_quantity(text, kind)
    assert tc_json_rate(250000) == 2e6  # tc -j prints bytes per second
    with pytest.raises(TcUnitError):
        tc_json_rate("250000")
