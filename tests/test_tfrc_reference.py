"""The constants of TFRC, gTFRC and the QSTP testbed in the code match qosbound/data/rfc5348.yaml."""

from __future__ import annotations

from importlib.resources import files

import pytest
import yaml

from qosbound.analytic import tfrc as T
from qosbound.reproduce.qstp2008 import CASES
from qosbound.validation.qstp_sim import QstpConfig
from qosbound.validation.tfrc_sender import WEIGHTS, T_MBI

DATA = yaml.safe_load((files("qosbound") / "data" / "rfc5348.yaml").read_text(encoding="utf-8"))
RFC = DATA["rfc5348"]
BED = DATA["qstp2008_testbed"]


def test_rfc_defaults_in_the_equation():
    """b = 1 and t_RTO = 4R are the defaults of tfrc_rate (RFC 5348 3.1, 4.3)."""
    s, R, p = 1500.0, 0.05, 0.02
    assert float(T.tfrc_rate(s, R, p)) == pytest.approx(
        float(T.tfrc_rate(s, R, p, RFC["b"]["value"], RFC["t_rto_factor"]["value"] * R)), rel=1e-15)


def test_rfc_constants_in_the_sender():
    """The sender's weights and t_mbi are RFC 5348's (5.4, 4.3); the SymPy floor uses the same t_mbi."""
    assert list(WEIGHTS) == pytest.approx(RFC["loss_interval_weights"]["value"])
    assert T_MBI == RFC["t_mbi"]["value"] == int(T.T_MBI)


def test_testbed_defaults_are_the_papers():
    """QstpConfig's defaults are Jourjon et al.'s testbed (section 5.1); the reproduction's cases are Fig. 4 and 5."""
    cfg = QstpConfig()
    assert cfg.bucket == BED["bucket_bytes"]["value"]
    assert list(cfg.rio) == pytest.approx(BED["rio"]["value"])
    assert cfg.buffer == BED["buffer_packets"]["value"]
    assert cfg.capacity == BED["capacity_bit_s"]["value"]
    assert cfg.rtt == pytest.approx(BED["rtt_s"]["value"])
    assert [list(c) for c in CASES] == [BED["fig5_targets_bit_s"]["value"], BED["fig4_targets_bit_s"]["value"]]
