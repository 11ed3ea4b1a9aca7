#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# isp_report.py DIR: isp-demo.sh's report. From pacer's --stats-json
# ("tree"): the 8 nodes that sent the most on each port. From the output
# captures: each subscriber that had traffic (found by the address
# isp-demo.sh gave its frames), its max against the rate it got (bytes
# after its first frame over first to last departure, in pacer's time:
# net_pcap stamps with the EAL's TSC estimate, tsc_hz_eal / tsc_hz).
# Exit 1 if one got more than its max (+1 %): what pacer guarantees; one
# more than 3 % under it is shown with the time pacer's staging went
# unserved (its worker off the CPU: a busy machine), which is gone from
# every node's calendar and cannot be made up.
import csv
import json
import struct
import sys


def frames(path):
    b = open(path, "rb").read()
    mul = 1 if struct.unpack("<I", b[:4])[0] == 0xa1b23c4d else 1000
    off = 24
    while off + 16 <= len(b):
        s, frac, incl, orig = struct.unpack("<IIII", b[off:off + 16])
        yield s * 10**9 + frac * mul, orig, b[off + 16:off + 16 + incl]
        off += 16 + incl


def main():
    d = sys.argv[1]
    st = json.load(open(d + "/stats.json"))
    scale = st["tsc_hz_eal"] / st["tsc_hz"]
    subs = {}
    for r in csv.DictReader(l for l in open(d + "/ShapedDevices.csv", encoding="utf-8-sig")
                            if not l.startswith("#")):
        for a in r["IPv4"].replace(",", " ").split():
            subs[a.split("/")[0]] = r
    bad = 0
    for t in st["tree"]["ports"]:
        nodes = sorted(t["nodes"], key=lambda n: -n["tx_bytes"])[:8]
        print("\n  port %d (%s): the top nodes by bytes sent" % (t["port"], t["direction"]))
        print("    %-14s %-8s %12s %14s" % ("node", "", "max", "tx_bytes"))
        for n in nodes:
            print("    %-14s %-8s %10.0f M %14d" % (n["name"], "subscr." if n["leaf"] else "node",
                                                    n["max_bps"] / 1e6, n["tx_bytes"]))
    stalled = [float(p["stage_stall_ns"]) for p in st["ports"]]
    for side, cap, col, port in (("download", "down.out.pcap", "Download Max Mbps", 0),
                                 ("upload", "up.out.pcap", "Upload Max Mbps", 1)):
        per = {}
        for ts, orig, f in frames(d + "/" + cap):
            if len(f) < 34 or f[12:14] != b"\x08\x00":
                continue
            a = ".".join(str(x) for x in (f[30:34] if side == "download" else f[26:30]))
            per.setdefault(a, []).append((ts, orig))
        print("\n  %s: each subscriber's max against its rate on the wire" % side)
        for a, fr in sorted(per.items()):
            r = subs.get(a)
            if r is None or len(fr) < 2:
                continue
            span = (fr[-1][0] - fr[0][0]) * scale / 1e9
            got = (sum(o for _, o in fr) - fr[0][1]) * 8 / span / 1e6
            mx = float(r[col])
            over = got > 1.01 * mx
            bad += over
            print("    %-6s %-24s max %7.1f Mbps, got %7.2f Mbps (%+.2f %%)%s"
                  % (r["Circuit ID"], r["Circuit Name"][:24], mx, got, (got / mx - 1) * 100,
                     "  <-- over its max" if over else
                     "  (pacer's staging went unserved %.0f ms of its %.0f ms: gone)" %
                     (stalled[port] / 1e6, span * 1e3)
                     if got < 0.97 * mx else ""))
    print()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
