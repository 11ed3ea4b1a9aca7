#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
"""Small pcap reader, checker and rewriter for the tools tests.

Written independently of pacer-pcapgen/pacer-pcapstat (standard library
only, no scapy) so that the tests compare the tools against a second
implementation:

  pcaptool.py check FILE          JSON report: per-packet kind, timestamps,
                                  sizes, VLAN tags, marker (flow, seq),
                                  checksum verdicts, fragment reassembly
  pcaptool.py swap IN OUT I J     swap the frames of packets I and J, the
                                  timestamps staying in place
  pcaptool.py patch IN OUT I OFF HEX
                                  overwrite bytes of packet I at frame
                                  offset OFF
  pcaptool.py to-usec IN OUT      nanosecond pcap -> microsecond pcap
  pcaptool.py relink IN OUT raw|sll|sll2|user0
                                  replace the Ethernet header (and tags)
                                  by another link layer
  pcaptool.py merge A B OUT       the packets of both, by timestamp (A's
                                  first on a tie), with A's header
"""

import json
import struct
import sys

MAGIC = {
    b"\x4d\x3c\xb2\xa1": ("<", True),
    b"\xa1\xb2\x3c\x4d": (">", True),
    b"\xd4\xc3\xb2\xa1": ("<", False),
    b"\xa1\xb2\xc3\xd4": (">", False),
}
MARK_MAGIC = 0x50435247


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] not in MAGIC:
        raise SystemExit("%s: not a classic pcap" % path)
    endian, nano = MAGIC[data[:4]]
    _, _, _, _, snaplen, linktype = struct.unpack(endian + "HHiIII", data[4:24])
    pkts = []
    off = 24
    while off < len(data):
        sec, frac, caplen, wlen = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16
        pkts.append({"sec": sec, "frac": frac, "len": wlen,
                     "data": data[off:off + caplen]})
        off += caplen
    return {"endian": endian, "nano": nano, "snaplen": snaplen,
            "linktype": linktype, "pkts": pkts}


def write_pcap(path, cap):
    e = cap["endian"]
    magic = 0xA1B23C4D if cap["nano"] else 0xA1B2C3D4
    out = [struct.pack(e + "IHHiIII", magic, 2, 4, 0, 0, cap["snaplen"],
                       cap["linktype"])]
    for p in cap["pkts"]:
        out.append(struct.pack(e + "IIII", p["sec"], p["frac"], len(p["data"]),
                               p["len"]))
        out.append(p["data"])
    with open(path, "wb") as f:
        f.write(b"".join(out))


def be16(b, o):
    return (b[o] << 8) | b[o + 1]


def be32(b, o):
    return struct.unpack(">I", b[o:o + 4])[0]


def csum(data, init=0):
    if len(data) % 2:
        data = data + b"\0"
    s = init + sum(struct.unpack(">%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def l4_ok(proto, seg, pseudo):
    if proto == 17 and be16(seg, 6) == 0:
        return False  # pacer-pcapgen always fills the UDP checksum
    return csum(seg, csum(pseudo)) == 0xFFFF


def mark_of(proto, seg):
    hl = 8 if proto == 17 else (seg[12] >> 4) * 4
    pl = seg[hl:]
    if len(pl) >= 12 and be32(pl, 8) == MARK_MAGIC:
        return [be32(pl, 0), be32(pl, 4)]
    return None


class Checker:
    def __init__(self):
        self.rep = {"ip_csum_ok": 0, "ip_csum_bad": 0, "l4_csum_ok": 0,
                    "l4_csum_bad": 0, "frag_reassembled": 0, "packets": []}
        self.frags = {}

    def l4(self, proto, seg, pseudo, r):
        if proto not in (6, 17) or len(seg) < (20 if proto == 6 else 8):
            return
        r["sport"], r["dport"] = be16(seg, 0), be16(seg, 2)
        if l4_ok(proto, seg, pseudo):
            self.rep["l4_csum_ok"] += 1
        else:
            self.rep["l4_csum_bad"] += 1
            r["bad"] = "l4 checksum"
        r["mark"] = mark_of(proto, seg)

    def ipv4(self, b, off, r):
        ihl = (b[off] & 0xF) * 4
        if ihl < 20:
            r["kind"] = "bad-ihl"
            return
        if csum(b[off:off + ihl]) == 0xFFFF:
            self.rep["ip_csum_ok"] += 1
        else:
            self.rep["ip_csum_bad"] += 1
            r["bad"] = "ip checksum"
        tot, ipid, frag, proto = be16(b, off + 2), be16(b, off + 4), \
            be16(b, off + 6), b[off + 9]
        src, dst = b[off + 12:off + 16], b[off + 16:off + 20]
        if tot > len(b) - off:
            r["kind"] = "bad-len"
            return
        seg = b[off + ihl:off + tot]
        if frag & 0x3FFF:
            r["kind"] = "frag-first" if (frag & 0x1FFF) == 0 else "frag-rest"
            parts = self.frags.setdefault((src, dst, ipid, proto), {})
            parts[(frag & 0x1FFF) * 8] = (seg, bool(frag & 0x2000))
            if 0 in parts and len(parts) == 2:
                first, _ = parts[0]
                (o2, (rest, mf2)), = [(k, v) for k, v in parts.items() if k]
                if o2 == len(first) and not mf2:
                    whole = first + rest
                    pseudo = src + dst + struct.pack(">BBH", 0, proto, len(whole))
                    if l4_ok(proto, whole, pseudo):
                        self.rep["frag_reassembled"] += 1
                    else:
                        r["bad"] = "reassembled l4 checksum"
            return
        r["kind"] = ("ipv4-options" if ihl > 20 else
                     {6: "tcp4", 17: "udp4"}.get(proto, "ip4"))
        self.l4(proto, seg, src + dst + struct.pack(">BBH", 0, proto, len(seg)), r)

    def ipv6(self, b, off, r):
        plen, nh = be16(b, off + 4), b[off + 6]
        src, dst = b[off + 8:off + 24], b[off + 24:off + 40]
        end = off + 40 + plen
        p, exts = off + 40, []
        while nh in (0, 43, 60):
            hl = (b[p + 1] + 1) * 8 if p + 2 <= end else None
            if hl is None or p + hl > end:
                r["kind"] = "ipv6-ext-trunc"
                return
            if nh == 43 and b[p + 3] != 0:
                raise SystemExit("routing header with segments left")
            exts.append(nh)
            nh, p = b[p], p + hl
        r["kind"] = ("ipv6-ext" if exts else {6: "tcp6", 17: "udp6"}.get(nh, "ip6"))
        r["exts"] = exts
        seg = b[p:end]
        self.l4(nh, seg, src + dst + struct.pack(">IxxxB", len(seg), nh), r)

    def frame(self, b):
        r = {"size": len(b), "tags": [], "mpls": 0, "mark": None}
        if len(b) < 14:
            r["kind"] = "short"
            return r
        et, off = be16(b, 12), 14
        while et in (0x8100, 0x88A8, 0x9100):
            r["tags"].append([et, be16(b, off) & 0xFFF])
            et, off = be16(b, off + 2), off + 4
        if et == 0x8847:
            while True:
                r["mpls"] += 1
                off += 4
                if b[off - 2] & 1:
                    break
            et = 0x0800 if b[off] >> 4 == 4 else 0x86DD
        if et == 0x0806:
            r["kind"] = "arp"
        elif et == 0x0800:
            self.ipv4(b, off, r)
        elif et == 0x86DD:
            self.ipv6(b, off, r)
        else:
            r["kind"] = "other"
        if r["mpls"] and r.get("kind") != "udp4" and r.get("kind") != "tcp4":
            r["kind"] = "mpls?"
        elif r["mpls"]:
            r["kind"] = "mpls"
        return r


def cmd_check(path):
    cap = read_pcap(path)
    ck = Checker()
    ts = []
    mul = 1 if cap["nano"] else 1000
    for p in cap["pkts"]:
        r = ck.frame(p["data"])
        r["wire_len"] = p["len"]
        ck.rep["packets"].append(r)
        ts.append(p["sec"] * 1000000000 + p["frac"] * mul)
    ck.rep.update({"nano": cap["nano"], "linktype": cap["linktype"],
                   "snaplen": cap["snaplen"], "count": len(cap["pkts"]),
                   "ts_ns": ts})
    json.dump(ck.rep, sys.stdout)
    print()


def cmd_swap(src, dst, i, j):
    cap = read_pcap(src)
    a, b = cap["pkts"][int(i)], cap["pkts"][int(j)]
    a["data"], b["data"] = b["data"], a["data"]
    a["len"], b["len"] = b["len"], a["len"]
    write_pcap(dst, cap)


def cmd_patch(src, dst, i, off, hexbytes):
    cap = read_pcap(src)
    p = cap["pkts"][int(i)]
    d, o, new = bytearray(p["data"]), int(off), bytes.fromhex(hexbytes)
    d[o:o + len(new)] = new
    p["data"] = bytes(d)
    write_pcap(dst, cap)


def cmd_to_usec(src, dst):
    cap = read_pcap(src)
    if not cap["nano"]:
        raise SystemExit("%s is not a nanosecond pcap" % src)
    cap["nano"] = False
    for p in cap["pkts"]:
        p["frac"] //= 1000
    write_pcap(dst, cap)


def cmd_merge(a, b, dst):
    ca, cb = read_pcap(a), read_pcap(b)
    if ca["nano"] != cb["nano"]:
        raise SystemExit("merge: %s and %s differ in time units" % (a, b))
    ca["pkts"] = sorted(ca["pkts"] + cb["pkts"],
                        key=lambda p: (p["sec"], p["frac"]))
    write_pcap(dst, ca)


def l2_len(b):
    if len(b) < 14:
        raise SystemExit("relink: a frame shorter than an Ethernet header")
    et, off = be16(b, 12), 14
    while et in (0x8100, 0x88A8, 0x9100):
        et, off = be16(b, off + 2), off + 4
    return et, off


def cmd_relink(src, dst, kind):
    cap = read_pcap(src)
    cap["linktype"] = {"raw": 101, "sll": 113, "sll2": 276, "user0": 147}[kind]
    for p in cap["pkts"]:
        et, off = l2_len(p["data"])
        body = p["data"][off:]
        if kind == "sll":
            hdr = struct.pack(">HHH8sH", 4, 1, 6, p["data"][6:12], et)
        elif kind == "sll2":
            hdr = struct.pack(">HHIHBB8s", et, 0, 1, 1, 4, 6, p["data"][6:12])
        elif kind == "raw":
            hdr = b""
        else:
            hdr, body = b"", p["data"]
        p["len"] += len(hdr) + len(body) - len(p["data"])
        p["data"] = hdr + body
    write_pcap(dst, cap)


def main(argv):
    cmds = {"check": (cmd_check, 1), "swap": (cmd_swap, 4),
            "patch": (cmd_patch, 5), "to-usec": (cmd_to_usec, 2),
            "relink": (cmd_relink, 3), "merge": (cmd_merge, 3)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    cmds[argv[1]][0](*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
