"""Write pcap / pcapng captures with known timestamps (for tests and examples).

The test suite makes its own captures with these functions rather than
downloading any: a list of ``(timestamp_seconds, frame_bytes)`` goes to a
classic pcap (microsecond or nanosecond resolution) or a pcapng file, and
:func:`udp_frame` builds an Ethernet/IPv4/UDP (or IPv6) frame with a chosen
DSCP, IP identification and payload.
"""

from __future__ import annotations

import struct
from pathlib import Path

import dpkt

__all__ = ["udp_frame", "write_capture", "LINKTYPE_ETHERNET", "LINKTYPE_RAW"]

LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101

_MAC_A = b"\x02\x00\x00\x00\x00\x01"
_MAC_B = b"\x02\x00\x00\x00\x00\x02"


def _ip4(text: str) -> bytes:
    return bytes(int(x) for x in text.split("."))


def udp_frame(*, src: str = "10.0.0.1", dst: str = "10.0.0.2", sport: int = 5000, dport: int = 6000,
              dscp: int = 0, ip_id: int = 0, payload: bytes = b"", ttl: int = 64, ipv6: bool = False,
              link: int = LINKTYPE_ETHERNET) -> bytes:
    """One UDP datagram as a frame of the given link type (Ethernet or raw IP)."""
    udp = dpkt.udp.UDP(sport=sport, dport=dport, data=payload)
    udp.ulen = len(udp)
    if ipv6:
        s6 = bytes(14) + _ip4(src)[-2:] if "." in src else bytes(16)
        d6 = bytes(14) + _ip4(dst)[-2:] if "." in dst else bytes(16)
        ip = dpkt.ip6.IP6(src=s6, dst=d6, nxt=dpkt.ip.IP_PROTO_UDP, hlim=ttl, data=udp, plen=len(udp))
        ip.fc = (dscp << 2) & 0xFF
        ethertype = dpkt.ethernet.ETH_TYPE_IP6
    else:
        ip = dpkt.ip.IP(src=_ip4(src), dst=_ip4(dst), p=dpkt.ip.IP_PROTO_UDP, id=ip_id & 0xFFFF, ttl=ttl,
                        tos=(dscp << 2) & 0xFF, data=udp)
        ip.len = len(ip)
        ethertype = dpkt.ethernet.ETH_TYPE_IP
    raw = bytes(ip)
    if link == LINKTYPE_RAW:
        return raw
    return _MAC_B + _MAC_A + struct.pack("!H", ethertype) + raw


def write_capture(path: str | Path, packets, *, fmt: str = "pcap", nano: bool = False,
                  linktype: int = LINKTYPE_ETHERNET, snaplen: int = 65535) -> None:
    """Write ``(timestamp_s, frame)`` pairs as ``fmt`` 'pcap' or 'pcapng'.

    Frames longer than ``snaplen`` are stored truncated (captured length below
    the original length), as a capture device with that snap length would.
    Timestamps are written exactly: pass nanosecond-resolution times with
    ``nano=True`` (pcap) -- pcapng files use microseconds.
    """
    with open(path, "wb") as f:
        if fmt == "pcap":
            w = dpkt.pcap.Writer(f, snaplen=snaplen, linktype=linktype, nano=nano)
            for ts, frame in packets:
                _write_pcap_record(f, ts, frame, snaplen, nano)
            del w
        elif fmt == "pcapng":
            w = dpkt.pcapng.Writer(f, snaplen=snaplen, linktype=linktype)
            for ts, frame in packets:
                if len(frame) > snaplen:
                    raise ValueError("pcapng writer: truncation is only supported for pcap")
                w.writepkt(frame, ts=ts)
        else:
            raise ValueError(f"unknown capture format {fmt!r}")


def _write_pcap_record(f, ts: float, frame: bytes, snaplen: int, nano: bool) -> None:
    # Integer split of the timestamp so the file holds exactly the intended time.
    scale = 1_000_000_000 if nano else 1_000_000
    ticks = int(round(ts * scale))
    sec, frac = divmod(ticks, scale)
    cap = frame[:snaplen]
    f.write(struct.pack("<IIII", sec, frac, len(cap), len(frame)))
    f.write(cap)
