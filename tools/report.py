#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
"""report.py STATS.json WIRE.json [OUT.pcap]: a pacer run for people.

STATS.json is pacer --stats-json; WIRE.json is pacer-pcapstat --json of the
capture of what pacer sent. Rates "achieved" are the wire's, measured from
the capture's timestamps. With OUT.pcap (that capture), the aggregate and
every class are also judged over 10 ms windows: the most bytes leaving in
any 10 ms against rate x (10 ms + L) plus the slack the rule allows (burst,
one calendar bucket of at most two frames, one frame: docs/design.md), L
the port's largest departure error: what was due while pacer was late
leaves together when it is back (on a virtual machine whose CPU is held
now and then, milliseconds), as the tests' windows.py allows.
"""
import json
import socket
import struct
import sys

WINDOW_NS = 10_000_000
ok10 = True


def frames(path, scale):
    """(time ns since the first frame x scale, bytes, key) per frame."""
    b = open(path, "rb").read()
    e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    mul = 1 if b[:4] in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d") else 1000
    off, out, t0 = 24, [], None
    while off + 16 <= len(b):
        sec, frac, incl, orig = struct.unpack(e + "IIII", b[off:off + 16])
        data = b[off + 16:off + 16 + incl]
        t = sec * 10**9 + frac * mul
        t0 = t if t0 is None else t0
        out.append((t0 + (t - t0) * scale, orig, key(data)))
        off += 16 + incl
    return [(t - t0, n, k) for t, n, k in out]


def key(d):
    """pacer-pcapstat's flow key of an untagged IPv4 TCP/UDP frame."""
    if len(d) < 38 or d[12:14] != b"\x08\x00":
        return None
    ihl = (d[14] & 15) * 4
    proto = d[23]
    l4 = {6: "tcp", 17: "udp"}.get(proto)
    if l4 is None or len(d) < 14 + ihl + 4:
        return None
    sp, dp = struct.unpack(">HH", d[14 + ihl:18 + ihl])
    return "%s %s:%u > %s:%u" % (l4, socket.inet_ntoa(d[26:30]), sp,
                                 socket.inet_ntoa(d[30:34]), dp)


def peak(fr, w=WINDOW_NS):
    """Most bytes of (t, n) leaving within any [t_i, t_i + w)."""
    best = s = j = 0
    for i in range(len(fr)):
        while j < len(fr) and fr[j][0] - fr[i][0] < w:
            s += fr[j][1]
            j += 1
        best = max(best, s)
        s -= fr[i][1]
    return best


def rate(bps):
    if not bps:
        return "unlimited"
    for div, unit in ((1e9, "Gbit"), (1e6, "Mbit"), (1e3, "Kbit")):
        if bps >= div:
            return "%.3g%s" % (bps / div, unit)
    return "%dbit" % bps


def main():
    st = json.load(open(sys.argv[1]))
    wire = json.load(open(sys.argv[2]))
    wflows = {f["key"]: f for f in wire["flows"]}
    fr = []
    if len(sys.argv) > 3:
        fr = frames(sys.argv[3], st["tsc_hz_eal"] / st["tsc_hz"])
    slack = st["burst"] + st["wire_overhead"] + 3 * (1514 + st["wire_overhead"])
    ok = True
    worst_late = 0
    for p in st["ports"]:
        rx = sum(q["rx_packets"] for q in st["ports"] if q["peer"] == p["port"])
        drops = {k: v for k, v in p.items() if k.startswith("drop_") and v}
        print("port %d (%s): received %d, sent %d, dropped %d%s, queued %d"
              % (p["port"], p["name"], rx, p["tx_packets"], p["dropped_total"],
                 " (" + ", ".join("%s %d" % kv for kv in drops.items()) + ")"
                 if drops else "", p["queued"]))
        cons = rx == p["tx_packets"] + p["dropped_total"] + p["queued"]
        ok &= cons
        flows = [f for f in st["flows"] if f["egress"] == p["port"]]
        cls_of = {f["key"]: f["class"] for f in flows}
        pfr = [x for x in fr if x[2] in cls_of]
        late = (p.get("departure_error_ns") or st["departure_error_ns"])["max"]
        worst_late = max(worst_late, late)

        def judged(bps, sel):
            """the 10 ms peak of the frames sel picks, and its verdict"""
            global ok10
            if not fr:
                return ""
            pk = peak([x for x in pfr if sel(x)])
            txt = rate(pk * 8e9 / WINDOW_NS)
            if bps:
                within = pk <= bps / 8 * (WINDOW_NS + late) / 1e9 + slack
                ok10 &= within
                txt += " (%s)" % ("ok" if within else "OVER")
            return txt

        print("  aggregate: configured %s, achieved %s on the wire%s"
              % (rate(p["rate_bps"]), rate(wire["rate_bps"]),
                 ", peak 10 ms %s" % judged(p["rate_bps"], lambda x: True)
                 if fr else ""))
        print("  %-10s %-28s %10s %10s %10s %12s %18s" % ("class", "match",
              "rate", "flow-rate", "packets", "achieved", "peak 10 ms"))
        for c in p["classes"]:
            cf = [wflows[f["key"]] for f in flows
                  if f["class"] == c["class"] and f["key"] in wflows]
            ach = ""
            if cf:
                t0 = min(f["first_ns"] for f in cf)
                t1 = max(f["last_ns"] for f in cf)
                b = sum(f["bytes"] for f in cf)
                if t1 > t0:
                    ach = rate(b * 8e9 / (t1 - t0))
            pk = judged(c["rate_bps"],
                        lambda x, n=c["class"]: cls_of[x[2]] == n)
            print("  %-10s %-28s %10s %10s %10d %12s %18s" % (
                c["class"], c["match"][:28] or "(the rest)", rate(c["rate_bps"]),
                rate(c["flow_rate_bps"]), c["tx_packets"], ach, pk))
        print("  %-44s %-10s %10s %10s %12s" % ("flow", "class", "flow-rate",
              "packets", "achieved"))
        cls = {c["class"]: c for c in p["classes"]}
        for f in sorted(flows, key=lambda f: (f["class"], f["key"])):
            w = wflows.get(f["key"], {})
            print("  %-44s %-10s %10s %10d %12s" % (
                f["key"][:44], f["class"], rate(cls[f["class"]]["flow_rate_bps"]),
                f["tx_packets"], rate(w.get("rate_bps", 0)) if w else "-"))
    e = st["departure_error_ns"]
    print("departure error (sent - scheduled): p50 %d ns, p99 %d ns, "
          "p99.9 %d ns, max %d ns over %d packets"
          % (e["p50"], e["p99"], e["p999"], e["max"], e["count"]))
    print("conservation (received == sent + dropped + queued): %s; "
          "mbufs in use at exit: %d" % ("holds" if ok else "BROKEN",
                                        st["mempool_in_use_at_exit"]))
    if fr:
        print("every rate over 10 ms windows (rate x (10 ms + L) + %d B: "
              "burst, one bucket, one frame; L the largest departure error, "
              "%.2f ms): %s" % (slack, worst_late / 1e6,
                                "holds" if ok10 else "BROKEN"))
    return 0 if ok and ok10 and st["mempool_in_use_at_exit"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
