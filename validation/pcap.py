"""Captures from real equipment: a pcap/pcapng pair taken at a device's ingress and egress -> a trace.

Each capture is mapped into memory (``mmap``, not copied) and walked by
compiled loops (numba) that extract, per frame: the timestamp (integer
nanoseconds), the IP version, DSCP, datagram length and a 64-bit hash of the
fields a router leaves unchanged (below). The file and interface headers are
read with :mod:`struct`; no capture library is used. The two captures of a
pair are parsed in parallel (the compiled loops release the GIL).

Formats: classic pcap in either byte order, with microsecond or nanosecond
timestamps; little-endian pcapng with enhanced packet blocks (any ``if_tsresol``).
Link types: Ethernet (VLAN tags skipped), raw IP, PPP, Linux SLL and BSD null
loopback. Big-endian pcapng sections and simple packet blocks (no timestamps)
are refused with a TraceError, as are truncated or corrupt files.

Matching. A packet's *key* is a hash of the IPv4 identification, protocol and
addresses (IPv6: next header and addresses), the transport header (ports
included) and up to the first 32 captured bytes after it: the fields a router
leaves unchanged (TTL, header checksum and DSCP may change, so they are not in
the key). Frames with equal keys are matched in order of appearance (the k-th
ingress occurrence to the k-th egress occurrence) by a hash join. An ingress
packet with no egress match is a loss (``dropped``); an egress packet with no
ingress match is *unmatched* and counted in the report, never silently
dropped. Frames that are not IPv4/IPv6, and frames captured shorter than their
datagram (still matched by what was captured), are counted in the report too.

Classification by ingress DSCP: 46 -> EF, 0 -> BE, AFxy (RFC 2597) -> class
``AFx`` with colour y-1 (AF11 green, AF12 yellow, AF13 red), CSn -> ``CSn``,
anything else ``DSCPn``. ``size`` is the IP datagram length in bytes (the
link-layer header is not counted, so captures of different link types agree).
Times are seconds from the first ingress IP packet; a matched packet leaving
before it arrives (beyond ``max_clock_skew``) is refused: the clocks disagree.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numba import njit
from qosbound import kernel_cache  # noqa: F401 -- numba keeps the kernels by its rule (before any @njit)

from qosbound import dscp
from qosbound.errors import TraceError
from qosbound.inputs import check_input_file
from qosbound.validation.trace import make_table

__all__ = ["Capture", "MatchReport", "read_capture", "import_pair", "dscp_class"]

_PCAP_MAGIC = {0xA1B2C3D4: ("<", 1000), 0xA1B23C4D: ("<", 1), 0xD4C3B2A1: (">", 1000), 0x4D3CB2A1: (">", 1)}
# Offset of the IP header for each supported link type (None: look inside the frame).
_LINK_OFFSET = {0: 4, 1: 14, 9: 2, 101: 0, 113: 16, 228: 0, 229: 0, 12: 0}


@dataclass
class Capture:
    """The per-frame fields of one capture (numpy arrays of equal length)."""

    path: str
    t_ns: np.ndarray  # int64 timestamps, ns since the epoch
    version: np.ndarray  # 4, 6, or 0 for a frame that is not IP
    dscp: np.ndarray
    length: np.ndarray  # IP datagram length, bytes
    key: np.ndarray  # uint64 match key (0 for non-IP frames)
    truncated: int  # frames captured shorter than the IP datagram (still matched by what was captured)

    def __len__(self) -> int:
        return int(self.t_ns.shape[0])


@dataclass
class MatchReport:
    """What the matcher saw: nothing is dropped without being counted here."""

    ingress: int
    egress: int
    matched: int
    lost: int  # ingress packets never seen at the egress
    unmatched_egress: int  # egress packets never seen at the ingress
    non_ip: dict[str, int] = field(default_factory=dict)  # per capture
    truncated: dict[str, int] = field(default_factory=dict)
    classes: dict[str, int] = field(default_factory=dict)
    unmatched_egress_index: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def to_json(self) -> dict:
        return {"ingress": self.ingress, "egress": self.egress, "matched": self.matched, "lost": self.lost,
                "unmatched_egress": self.unmatched_egress, "non_ip": self.non_ip, "truncated": self.truncated,
                "classes": self.classes}


# ----------------------------------------------------------------------------------------------- frame walkers

@njit(cache=True, nogil=True)
def _walk_pcap(buf, start, big, nano_mult):
    """Record offsets of a classic pcap: returns (t_ns, data_off, caplen, origlen, status, bad_offset)."""
    n = buf.shape[0]
    cap = 1024
    t = np.empty(cap, np.int64)
    off = np.empty(cap, np.int64)
    cl = np.empty(cap, np.int64)
    ol = np.empty(cap, np.int64)
    i = 0
    pos = start
    status = 0
    while pos < n:
        if pos + 16 > n:
            status = 1  # truncated record header
            break
        if big:
            sec = (buf[pos] << 24) | (buf[pos + 1] << 16) | (buf[pos + 2] << 8) | buf[pos + 3]
            frac = (buf[pos + 4] << 24) | (buf[pos + 5] << 16) | (buf[pos + 6] << 8) | buf[pos + 7]
            c = (buf[pos + 8] << 24) | (buf[pos + 9] << 16) | (buf[pos + 10] << 8) | buf[pos + 11]
            o = (buf[pos + 12] << 24) | (buf[pos + 13] << 16) | (buf[pos + 14] << 8) | buf[pos + 15]
        else:
            sec = buf[pos] | (buf[pos + 1] << 8) | (buf[pos + 2] << 16) | (buf[pos + 3] << 24)
            frac = buf[pos + 4] | (buf[pos + 5] << 8) | (buf[pos + 6] << 16) | (buf[pos + 7] << 24)
            c = buf[pos + 8] | (buf[pos + 9] << 8) | (buf[pos + 10] << 16) | (buf[pos + 11] << 24)
            o = buf[pos + 12] | (buf[pos + 13] << 8) | (buf[pos + 14] << 16) | (buf[pos + 15] << 24)
        if pos + 16 + c > n:
            status = 2  # truncated frame data
            break
        if c > 262144:
            status = 3  # implausible length: corrupt file
            break
        if i == cap:
            cap *= 2
            t = _grow(t, cap)
            off = _grow(off, cap)
            cl = _grow(cl, cap)
            ol = _grow(ol, cap)
        t[i] = sec * 1000000000 + frac * nano_mult
        off[i] = pos + 16
        cl[i] = c
        ol[i] = o
        i += 1
        pos += 16 + c
    return t[:i], off[:i], cl[:i], ol[:i], status, pos


@njit(cache=True, nogil=True)
def _grow(a, cap):
    b = np.empty(cap, a.dtype)
    b[:a.shape[0]] = a
    return b


@njit(cache=True, nogil=True)
def _u32le(buf, p):
    return buf[p] | (buf[p + 1] << 8) | (buf[p + 2] << 16) | (buf[p + 3] << 24)


@njit(cache=True, nogil=True)
def _walk_pcapng(buf):
    """Enhanced packet blocks of a little-endian pcapng: (iface, ts64, data_off, caplen, origlen, idb_offs, status, pos)."""
    n = buf.shape[0]
    cap = 1024
    ifc = np.empty(cap, np.int64)
    ts = np.empty(cap, np.int64)
    off = np.empty(cap, np.int64)
    cl = np.empty(cap, np.int64)
    ol = np.empty(cap, np.int64)
    idb = np.empty(64, np.int64)
    nidb = 0
    i = 0
    pos = 0
    status = 0
    while pos < n:
        if pos + 12 > n:
            status = 1
            break
        btype = _u32le(buf, pos)
        blen = _u32le(buf, pos + 4)
        if blen < 12 or blen % 4 != 0:
            status = 3
            break
        if pos + blen > n:
            status = 2
            break
        if btype == 0x0A0D0D0A:
            if _u32le(buf, pos + 8) != 0x1A2B3C4D:
                status = 4  # big-endian section: not supported by the fast path
                break
        elif btype == 1:
            if nidb < 64:
                idb[nidb] = pos
                nidb += 1
        elif btype == 6:
            if i == cap:
                cap *= 2
                ifc = _grow(ifc, cap)
                ts = _grow(ts, cap)
                off = _grow(off, cap)
                cl = _grow(cl, cap)
                ol = _grow(ol, cap)
            ifc[i] = _u32le(buf, pos + 8)
            ts[i] = (_u32le(buf, pos + 12) << 32) | _u32le(buf, pos + 16)
            cl[i] = _u32le(buf, pos + 20)
            ol[i] = _u32le(buf, pos + 24)
            off[i] = pos + 28
            if 28 + cl[i] > blen:
                status = 3
                break
            i += 1
        elif btype == 3:
            status = 5  # simple packet block: no timestamp
            break
        pos += blen
    return ifc[:i], ts[:i], off[:i], cl[:i], ol[:i], idb[:nidb], status, pos


@njit(cache=True, nogil=True)
def _fields(buf, off, caplen, ip_off):
    """Per frame: version, dscp, ip length, key hash, truncated flag."""
    m = off.shape[0]
    ver = np.zeros(m, np.int8)
    dscp = np.zeros(m, np.int16)
    length = np.zeros(m, np.int32)
    key = np.zeros(m, np.uint64)
    trunc = np.zeros(m, np.bool_)
    for i in range(m):
        p = off[i]
        end = p + caplen[i]
        lo = ip_off[i]
        if lo < 0:  # Ethernet: look at the ethertype, skip VLAN tags
            q = p + 12
            et = 0
            while q + 2 <= end:
                et = (buf[q] << 8) | buf[q + 1]
                if et == 0x8100 or et == 0x88A8:
                    q += 4
                else:
                    break
            if et != 0x0800 and et != 0x86DD:
                continue
            ip = q + 2
        else:
            ip = p + lo
        if ip + 20 > end:
            continue
        v = buf[ip] >> 4
        h = np.uint64(14695981039346656037)
        prime = np.uint64(1099511628211)
        if v == 4:
            ihl = (buf[ip] & 15) * 4
            ver[i] = 4
            dscp[i] = buf[ip + 1] >> 2
            length[i] = (buf[ip + 2] << 8) | buf[ip + 3]
            proto = buf[ip + 9]
            # identification, protocol, addresses
            for k in (4, 5, 9, 12, 13, 14, 15, 16, 17, 18, 19):
                h = (h ^ np.uint64(buf[ip + k])) * prime
            tp = ip + ihl
            dlen = length[i]
        elif v == 6:
            if ip + 40 > end:
                continue
            ver[i] = 6
            dscp[i] = ((buf[ip] & 15) << 2) | (buf[ip + 1] >> 6)
            length[i] = 40 + ((buf[ip + 4] << 8) | buf[ip + 5])
            proto = buf[ip + 6]
            h = (h ^ np.uint64(proto)) * prime
            for k in range(8, 40):
                h = (h ^ np.uint64(buf[ip + k])) * prime
            tp = ip + 40
            dlen = length[i]
        else:
            continue
        if ip + dlen > end:
            trunc[i] = True
        thl = 0
        if proto == 17:
            thl = 8
        elif proto == 6 and tp + 13 <= end:
            thl = (buf[tp + 12] >> 4) * 4
        # ports (first four bytes of TCP/UDP) and the start of the transport header
        stop = min(tp + thl + 32, end, ip + dlen)
        for q in range(tp, stop):
            h = (h ^ np.uint64(buf[q])) * prime
        if h == 0:
            h = np.uint64(1)
        key[i] = h
    return ver, dscp, length, key, trunc


# ----------------------------------------------------------------------------------------------- reading

def read_capture(path: str | Path) -> Capture:
    """Read a pcap or pcapng file into per-frame arrays. Raises TraceError on truncated or corrupt files."""
    if not str(path).strip():
        raise TraceError("a capture file name is empty")

    p = Path(path)
    st = check_input_file(p, "capture file (pcap or pcapng)", lambda problem: TraceError(f"{path}: {problem}"))
    try:
        if st.st_size > 0:
            import mmap

            with open(p, "rb") as f:  # mapped, not copied: the walkers read the page cache directly
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        else:
            data = b""
    except FileNotFoundError:
        raise TraceError(f"{path}: capture file not found") from None
    except OSError as e:
        raise TraceError(f"{path}: cannot read capture ({e.strerror or e.__class__.__name__})") from None
    buf = np.frombuffer(data, dtype=np.uint8)
    if len(data) < 24 and not (len(data) >= 12 and data[:4] == b"\n\r\r\n"):
        raise TraceError(f"{path}: truncated capture: {len(data)} bytes is shorter than a capture file header")
    magic_le = struct.unpack("<I", bytes(data[:4]))[0]
    if magic_le == 0x0A0D0D0A:
        return _read_pcapng(str(path), buf)
    if magic_le not in _PCAP_MAGIC:
        raise TraceError(f"{path}: not a pcap or pcapng file (magic number {data[:4].hex()})")
    endian, mult = _PCAP_MAGIC[magic_le]
    _, _, _, _, _, linktype = struct.unpack(endian + "HHiIII", data[4:24])
    linktype &= 0x0FFFFFFF
    if linktype not in _LINK_OFFSET:
        raise TraceError(f"{path}: link type {linktype} is not supported (Ethernet, raw IP, PPP, Linux SLL, null)")
    t, off, cl, ol, status, bad = _walk_pcap(buf, 24, endian == ">", mult)
    _check_status(path, status, bad, len(t))
    ip_off = _ip_offsets(linktype, len(t))
    return _capture(str(path), buf, t, off, cl, ip_off)


def _ip_offsets(linktype: int, n: int) -> np.ndarray:
    lo = _LINK_OFFSET[linktype]
    return np.full(n, -1 if linktype == 1 else lo, dtype=np.int64)


def _capture(path, buf, t, off, cl, ip_off) -> Capture:
    ver, dscp, length, key, trunc = _fields(buf, off, cl, ip_off)
    return Capture(path=path, t_ns=t, version=ver, dscp=dscp, length=length, key=key, truncated=int(trunc.sum()))


def _check_status(path, status: int, pos: int, frames: int) -> None:
    if status == 1:
        raise TraceError(f"{path}: truncated capture: the file ends inside a record header at byte {pos} "
                         f"(after {frames} complete frames)")
    if status == 2:
        raise TraceError(f"{path}: truncated capture: the record at byte {pos} claims more data than the file "
                         f"holds (after {frames} complete frames)")
    if status == 3:
        raise TraceError(f"{path}: corrupt capture: implausible record length at byte {pos}")
    if status == 4:
        raise TraceError(f"{path}: big-endian pcapng sections are not supported")
    if status == 5:
        raise TraceError(f"{path}: pcapng simple packet blocks carry no timestamps; capture with enhanced blocks")


def _read_pcapng(path: str, buf: np.ndarray) -> Capture:
    ifc, ts, off, cl, ol, idbs, status, pos = _walk_pcapng(buf)
    _check_status(path, status, pos, len(ts))
    if len(idbs) == 0 and len(ts):
        raise TraceError(f"{path}: pcapng file has packets but no interface description block")
    links, res = [], []
    raw = buf
    for o in idbs:
        blen = struct.unpack_from("<I", raw, o + 4)[0]
        linktype = struct.unpack_from("<H", raw, o + 8)[0]
        if linktype not in _LINK_OFFSET:
            raise TraceError(f"{path}: link type {linktype} is not supported")
        tsresol = 6
        q = o + 16
        while q + 4 <= o + blen - 4:
            code, olen = struct.unpack_from("<HH", raw, q)
            if code == 0:
                break
            if code == 9 and olen >= 1:
                tsresol = int(raw[q + 4])
            q += 4 + ((olen + 3) // 4) * 4
        links.append(linktype)
        res.append(tsresol)
    if len(ifc) and int(ifc.max()) >= len(links):
        raise TraceError(f"{path}: a packet names interface {int(ifc.max())}, which the file does not describe")
    t = np.empty(len(ts), np.int64)
    ip_off = np.empty(len(ts), np.int64)
    for k, (lt, r) in enumerate(zip(links, res)):
        sel = ifc == k
        if r & 0x80:
            # power-of-two resolution
            t[sel] = (ts[sel].astype(np.float64) / 2.0 ** (r & 0x7F) * 1e9).astype(np.int64)
        else:
            if r <= 9:
                t[sel] = ts[sel] * 10 ** (9 - r)
            else:
                t[sel] = ts[sel] // 10 ** (r - 9)
        ip_off[sel] = -1 if lt == 1 else _LINK_OFFSET[lt]
    return _capture(path, buf, t, off, cl, ip_off)


# ----------------------------------------------------------------------------------------------- classes

def dscp_class(code: int) -> tuple[str, int]:
    """DSCP -> (class name, colour): 46 EF, 0 BE, AFxy -> (AFx, y-1), CSn, else DSCPn (RFC 2474/2597/3246; the
    names from the one table of :mod:`qosbound.dscp`)."""
    n = dscp.name(int(code))
    if n == "DF":
        return "BE", 0
    y = dscp.af_drop_precedence(n)
    if y is not None:
        return n[:3], y - 1
    if n == "EF" or n.startswith("CS"):
        return n, 0
    return f"DSCP{int(code)}", 0


@njit(cache=True)
def _join(ka, kb):
    """For each ingress key, the index of its egress match, or -1 (hash join, in order of appearance).

    The k-th ingress frame with a given key is matched to the k-th egress frame
    with that key: egress frames with equal keys are chained in file order and
    consumed from the front.
    """
    nb = kb.shape[0]
    m = 1
    while m < 2 * nb + 2:
        m *= 2
    mask = np.uint64(m - 1)
    slot_key = np.zeros(m, np.uint64)
    head = np.full(m, -1, np.int64)
    tail = np.full(m, -1, np.int64)
    used = np.zeros(m, np.bool_)
    nxt = np.full(nb, -1, np.int64)
    mult = np.uint64(0x9E3779B97F4A7C15)
    for j in range(nb):
        k = kb[j]
        h = (k * mult) >> np.uint64(20) & mask
        while used[h] and slot_key[h] != k:
            h = (h + np.uint64(1)) & mask
        if not used[h]:
            used[h] = True
            slot_key[h] = k
            head[h] = j
        else:
            nxt[tail[h]] = j
        tail[h] = j
    na = ka.shape[0]
    out = np.full(na, -1, np.int64)
    for i in range(na):
        k = ka[i]
        h = (k * mult) >> np.uint64(20) & mask
        while used[h] and slot_key[h] != k:
            h = (h + np.uint64(1)) & mask
        if used[h] and head[h] >= 0:
            out[i] = head[h]
            head[h] = nxt[head[h]]
    return out


def import_pair(ingress: str | Path, egress: str | Path, *, max_clock_skew: float = 0.0):
    """Match an ingress and an egress capture into a trace table and a :class:`MatchReport`.

    Raises TraceError when the captures cannot be a pair: no packet in common,
    or egress times before the matching ingress times (beyond ``max_clock_skew``
    seconds: the two capture clocks disagree).
    """
    import pyarrow as pa

    # the two files are read and parsed in parallel (the compiled loops release the GIL)
    from concurrent.futures import ThreadPoolExecutor

    for name, side in ((ingress, "ingress"), (egress, "egress")):
        if not str(name).strip():
            raise TraceError(f"the {side} capture's file name is empty: a capture pair is given as INGRESS,EGRESS "
                             f"(got '{ingress},{egress}')")
    with ThreadPoolExecutor(2) as pool:
        fa, fb = pool.submit(read_capture, ingress), pool.submit(read_capture, egress)
        a, b = fa.result(), fb.result()
    if len(a) == 0:
        raise TraceError(f"{ingress}: the ingress capture holds no frames")
    a_ip = a.version > 0
    b_ip = b.version > 0
    ai = np.nonzero(a_ip)[0]
    bi = np.nonzero(b_ip)[0]
    if len(ai) == 0:
        raise TraceError(f"{ingress}: the ingress capture holds no IPv4/IPv6 packets")
    dep_idx = _join(a.key[ai], b.key[bi])
    matched_a = dep_idx >= 0
    hit = matched_a
    n_matched = int(hit.sum())
    if n_matched == 0:
        raise TraceError(f"{ingress} / {egress}: the captures do not match: no egress packet was found at the "
                         "ingress (are they taken on the same path?)")
    matched_b = np.zeros(len(bi), bool)
    matched_b[dep_idx[matched_a]] = True
    t0 = int(a.t_ns[ai].min())
    arrival = (a.t_ns[ai] - t0) * 1e-9
    departure = np.full(len(ai), np.nan)
    departure[matched_a] = (b.t_ns[bi][dep_idx[matched_a]] - t0) * 1e-9
    delay = departure[matched_a] - arrival[matched_a]
    neg = delay < -max_clock_skew
    if neg.any():
        raise TraceError(f"{ingress} / {egress}: {int(neg.sum())} matched packets leave before they arrive "
                         f"(most negative one-way delay {delay.min():.6g} s): the capture clocks are not "
                         "synchronised, or the files are swapped")
    # classes by ingress DSCP, built as a dictionary column (fast for millions of packets)
    codes = a.dscp[ai].astype(np.int64)
    present = np.nonzero(np.bincount(codes, minlength=64))[0]
    lookup = np.zeros(64, np.int32)
    lookup[present] = np.arange(len(present))
    uniq, inv = present, lookup[codes]
    names, colours = zip(*(dscp_class(int(c)) for c in uniq))
    cls = pa.DictionaryArray.from_arrays(pa.array(inv.astype(np.int32)), pa.array(list(names))).cast(pa.string())
    colour = np.asarray(colours, dtype=np.int8)[inv]
    table = make_table(flow=cls, cls=cls, colour=colour, size=a.length[ai], arrival=arrival,
                       departure=departure, dropped=~matched_a)
    counts = {}
    for nm, c in zip(names, np.bincount(inv, minlength=len(uniq))):
        counts[nm] = counts.get(nm, 0) + int(c)
    report = MatchReport(ingress=len(ai), egress=len(bi), matched=n_matched, lost=int((~matched_a).sum()),
                         unmatched_egress=int((~matched_b).sum()),
                         non_ip={str(ingress): int((~a_ip).sum()), str(egress): int((~b_ip).sum())},
                         truncated={str(ingress): a.truncated, str(egress): b.truncated}, classes=counts,
                         unmatched_egress_index=bi[~matched_b])
    return table, report
