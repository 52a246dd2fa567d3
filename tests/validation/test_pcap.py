"""Tests for validation/pcap.py and validation/pcap_write.py: captures written here with known timestamps."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from qosbound.errors import TraceError
from qosbound.validation.pcap import dscp_class, import_pair, read_capture
from qosbound.validation.pcap_write import LINKTYPE_RAW, udp_frame, write_capture

T0 = 1_700_000_000.0  # absolute capture times, as real equipment writes them


def _pair(tmp_path, n=200, lose=(), extra_egress=0, fmt_in="pcap", fmt_out="pcap", nano=False, dup_ids=False,
          linktype=1):
    """Ingress/egress captures with known delays: packet i leaves 100 us + i us after it arrives."""
    ing, eg, delays = [], [], {}
    for i in range(n):
        dscp = (46, 0, 10, 12, 14)[i % 5]
        f = udp_frame(dscp=dscp, ip_id=(0 if dup_ids else i), payload=i.to_bytes(4, "big") + bytes(60), link=linktype)
        ts = T0 + i * 1e-3
        ing.append((ts, f))
        if i not in lose:
            d = 100e-6 + i * 1e-6
            delays[i] = d
            eg.append((ts + d, udp_frame(dscp=0, ip_id=(0 if dup_ids else i), ttl=63,  # re-marked, TTL decremented
                                         payload=i.to_bytes(4, "big") + bytes(60), link=linktype)))
    for k in range(extra_egress):
        eg.append((T0 + 0.5 + k * 1e-3, udp_frame(ip_id=60000 + k, payload=b"stranger" + bytes(40), link=linktype)))
    eg.sort(key=lambda x: x[0])
    a, b = tmp_path / f"in.{fmt_in}", tmp_path / f"out.{fmt_out}"
    write_capture(a, ing, fmt=fmt_in, nano=nano, linktype=linktype)
    write_capture(b, eg, fmt=fmt_out, nano=nano, linktype=linktype)
    return a, b, delays


@pytest.mark.parametrize("fmt_in,fmt_out,nano,linktype", [("pcap", "pcap", False, 1), ("pcap", "pcapng", False, 1),
                                                          ("pcapng", "pcap", False, 1), ("pcap", "pcap", True, 1),
                                                          ("pcap", "pcap", False, LINKTYPE_RAW)])
def test_delays_recovered(tmp_path, fmt_in, fmt_out, nano, linktype):
    """One-way delays computed from a capture pair equal the delays written (to the file's resolution)."""
    a, b, delays = _pair(tmp_path, fmt_in=fmt_in, fmt_out=fmt_out, nano=nano, linktype=linktype)
    t, rep = import_pair(a, b)
    d = (t.column("departure").to_numpy(zero_copy_only=False) - t.column("arrival").to_numpy())
    np.testing.assert_allclose(d, [delays[i] for i in range(200)], atol=1.5e-6)
    assert rep.matched == 200 and rep.lost == 0 and rep.unmatched_egress == 0
    assert t.column("arrival").to_numpy()[0] == 0.0


def test_classes_by_ingress_dscp(tmp_path):
    """Classes and colours come from the ingress DSCP even when the egress re-marks packets."""
    a, b, _ = _pair(tmp_path, n=10)
    t, rep = import_pair(a, b)
    assert t.column("cls").to_pylist()[:5] == ["EF", "BE", "AF1", "AF1", "AF1"]
    assert t.column("colour").to_pylist()[:5] == [0, 0, 0, 1, 2]
    assert rep.classes == {"EF": 2, "BE": 2, "AF1": 6}
    assert t.column("size").to_pylist()[0] == 20 + 8 + 64


def test_loss_and_unmatched_are_reported(tmp_path):
    """Lost ingress packets are marked dropped and unknown egress packets are counted, never silently dropped."""
    a, b, _ = _pair(tmp_path, n=50, lose={3, 17, 18}, extra_egress=4)
    t, rep = import_pair(a, b)
    dropped = np.nonzero(t.column("dropped").to_numpy(zero_copy_only=False))[0].tolist()
    assert dropped == [3, 17, 18]
    assert rep.lost == 3 and rep.unmatched_egress == 4 and rep.matched == 47
    assert len(rep.unmatched_egress_index) == 4


def test_duplicate_keys_match_in_order(tmp_path):
    """Packets identical in every matched field pair up in order of appearance."""
    a, b, delays = _pair(tmp_path, n=20, dup_ids=True)
    # the payload still differs (sequence number); make it identical too
    ing = [(T0 + i * 1e-3, udp_frame(payload=bytes(64))) for i in range(5)]
    eg = [(T0 + i * 1e-3 + 5e-4, udp_frame(payload=bytes(64))) for i in range(5)]
    write_capture(a, ing)
    write_capture(b, eg)
    t, rep = import_pair(a, b)
    d = t.column("departure").to_numpy(zero_copy_only=False) - t.column("arrival").to_numpy()
    np.testing.assert_allclose(d, 5e-4, atol=1e-6)


def test_truncated_capture(tmp_path):
    """A capture cut in the middle of a record is refused, naming the byte offset."""
    a, b, _ = _pair(tmp_path, n=20)
    data = a.read_bytes()
    a.write_bytes(data[:-7])
    with pytest.raises(TraceError, match="truncated capture"):
        import_pair(a, b)
    a.write_bytes(data[:10])
    with pytest.raises(TraceError, match="truncated capture"):
        read_capture(a)


def test_mismatched_captures(tmp_path):
    """Captures with no packet in common are refused as not a pair."""
    a, _, _ = _pair(tmp_path, n=10)
    other = tmp_path / "other.pcap"
    write_capture(other, [(T0 + 1, udp_frame(sport=1, payload=b"xyz" * 10))])
    with pytest.raises(TraceError, match="do not match"):
        import_pair(a, other)


def test_swapped_captures(tmp_path):
    """Swapping ingress and egress gives negative delays, refused as unsynchronised clocks."""
    a, b, _ = _pair(tmp_path, n=10)
    with pytest.raises(TraceError, match="leave before they arrive"):
        import_pair(b, a)


def test_not_a_capture(tmp_path):
    """A file that is not pcap/pcapng is refused by its magic number."""
    p = tmp_path / "x.pcap"
    p.write_bytes(b"hello world, this is not a capture file")
    with pytest.raises(TraceError, match="not a pcap"):
        read_capture(p)


def test_snaplen_truncated_frames_still_match(tmp_path):
    """Frames cut by a snap length are counted as truncated and still matched on what was captured."""
    ing = [(T0 + i * 1e-3, udp_frame(ip_id=i, payload=bytes(1000))) for i in range(5)]
    eg = [(T0 + i * 1e-3 + 1e-4, udp_frame(ip_id=i, payload=bytes(1000))) for i in range(5)]
    a, b = tmp_path / "a.pcap", tmp_path / "b.pcap"
    write_capture(a, ing, snaplen=96)
    write_capture(b, eg, snaplen=96)
    t, rep = import_pair(a, b)
    assert rep.matched == 5 and rep.truncated[str(a)] == 5
    assert t.column("size").to_pylist()[0] == 1028


def test_non_ip_frames_counted(tmp_path):
    """ARP-like frames are counted in the report, not matched and not dropped silently."""
    a, b, _ = _pair(tmp_path, n=10)
    arp = b"\xff" * 6 + b"\x02" * 6 + b"\x08\x06" + bytes(28)
    write_capture(a, [(T0 - 1, arp)] + [(T0 + i * 1e-3, udp_frame(ip_id=i, payload=i.to_bytes(4, "big") + bytes(60)))
                                         for i in range(10)])
    t, rep = import_pair(a, b)
    assert rep.non_ip[str(a)] == 1 and t.num_rows == 10


@pytest.mark.parametrize("dscp,expected", [(46, ("EF", 0)), (0, ("BE", 0)), (10, ("AF1", 0)), (36, ("AF4", 1)),
                                           (38, ("AF4", 2)), (48, ("CS6", 0)), (45, ("DSCP45", 0))])
def test_dscp_class(dscp, expected):
    """DSCP code points map to PHB classes and colours as RFC 2597 / 3246 define them."""
    assert dscp_class(dscp) == expected


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=0, max_size=300))
def test_reader_never_crashes(tmp_path_factory, blob):
    """Arbitrary bytes after a valid pcap header either read or raise TraceError, never anything else."""
    p = tmp_path_factory.mktemp("fz") / "f.pcap"
    write_capture(p, [])
    p.write_bytes(p.read_bytes() + blob)
    try:
        read_capture(p)
    except TraceError:
        pass


@pytest.mark.parametrize("ing,eg", [("in.pcap", ""), ("", "out.pcap"), ("in.pcap", "  ")])
def test_a_pair_with_an_empty_name_says_so(tmp_path, ing, eg):
    """``--trace in.pcap,`` said only "qosbound: : cannot read capture"."""
    with pytest.raises(TraceError, match="file name is empty: a capture pair is given as INGRESS,EGRESS"):
        import_pair(ing, eg)


def test_special_files_are_not_read_as_captures(tmp_path):
    with pytest.raises(TraceError, match="not a regular file"):
        read_capture("/dev/zero")
    with pytest.raises(TraceError, match="is a directory"):
        read_capture(tmp_path)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.binary(min_size=1, max_size=8), st.sampled_from(["pcap", "pcapng"]))
def test_corrupted_captures_read_or_raise_trace_error(tmp_path_factory, pos, patch, fmt):
    """Fuzz: a valid capture (both formats) with bytes overwritten anywhere reads, or raises TraceError."""
    d = tmp_path_factory.mktemp("fzc")
    p = d / f"c.{fmt}"
    write_capture(p, [(T0 + i * 1e-3, udp_frame(dscp=46, ip_id=i, payload=bytes(40))) for i in range(20)], fmt=fmt)
    data = bytearray(p.read_bytes())
    pos %= len(data)
    data[pos:pos + len(patch)] = patch
    p.write_bytes(bytes(data))
    try:
        read_capture(p)
    except TraceError:
        pass
