#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Judge for test_hierarchy.sh: do the rates pacer was given hold at short
# time scales in a net_pcap capture of its departures?
#
#   windows.py --stats STATS.json [--time-scale F] [--window MS]...
#              --policy NAME:GROUP:RATE... OUT.pcap
#
# GROUP picks the frames a policy limits: "all" (the port aggregate),
# "dport=N" (a class matched by UDP/TCP destination port), or
# "flows:all" / "flows:dport=N" (every flow of that set, each against RATE
# on its own; the worst flow is reported). RATE: bit/s, or with tc's units
# bit, kbit, mbit, gbit (x1000). Windows default to 1, 10 and 100 ms.
#
# For each group and window W, max_bytes is the most bytes (the pcap's
# orig_len, plus the wire overhead from STATS, 0 by default) among frames
# whose times fall in [t_i, t_i + W), over every frame i of the group. A
# policy of rate R bit/s lets through at most
#
#   bound(W) = R/8 * (W + L) + burst + bucket + frame
#
# where burst is pacer's --burst (STATS "burst", 1514 by default), frame the
# largest frame in the capture, bucket the policy's calendar bucket (the
# shared policies, lib/policy/pcr_cal.h: STATS bucket_bytes of the port for
# NAME "aggregate", of the class NAME for a class; 0 for a flow's token
# bucket), and L the TX lateness allowed: the largest
# departure error (transmit - scheduled) pacer measured on the port, STATS
# ports[P].departure_error_ns.max (the global figure when there is no
# per-port one). The slack beyond the rate: one burst, one calendar bucket
# (docs/design.md, "The bound"), and one frame (a frame goes whole on
# partial credit; a window counts frames, not bits). A bucket above four
# 1514-byte frames (with the wire overhead), or of four 65536ths of the
# horizon at the rate where that is more, is itself a failure: pacer
# sizes them at two to four of those (a power of two of TSC time at least
# two frames long), so a coarser one would widen the bound it is judged by. L widens the window: departures are never
# early, so frames that leave within W were scheduled within W + L.
# Pacer's own measurements make L, so a busy machine (a TX lcore that lost
# its CPU) widens the bound by what it actually cost, never by a guess.
#
# Times are those of the capture since its first frame times F (see
# pcap_scale in lib.sh: net_pcap stamps with the EAL's TSC estimate, pacer
# paces with its measured one; F defaults to STATS tsc_hz_eal / tsc_hz).
#
# It also checks per-flow order: pacer-pcapgen's payload marker (flow index,
# sequence number, "PCRG") must rise within each flow (5-tuple and index).
#
# Prints one line per group and window: max bytes, bound, max/(R/8*W), L.
# Exit status: 0 all within, 1 a group over its bound or a flow out of
# order (each named on stderr), 2 bad input.
import argparse
import json
import struct
import sys

UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}


def parse_rate(s):
    s = s.strip().lower()
    for u in sorted(UNITS, key=len, reverse=True):
        if s.endswith(u):
            return float(s[:-len(u)]) * UNITS[u]
    return float(s)


def fmt_rate(bps):
    for u in ("gbit", "mbit", "kbit"):
        if bps >= UNITS[u]:
            return "%g%s" % (bps / UNITS[u], u)
    return "%gbit" % bps


def read_pcap(path):
    """[(time_ns, orig_len, frame bytes)] of a classic pcap (us or ns)."""
    b = open(path, "rb").read()
    if len(b) < 24:
        raise ValueError("%s: not a pcap" % path)
    magic = struct.unpack("<I", b[:4])[0]
    if magic in (0xa1b2c3d4, 0xa1b23c4d):
        e = "<"
    elif magic in (0xd4c3b2a1, 0x4d3cb2a1):
        e = ">"
    else:
        raise ValueError("%s: not a classic pcap (magic %#x)" % (path, magic))
    mul = 1 if struct.unpack(e + "I", b[:4])[0] == 0xa1b23c4d else 1000
    linktype = struct.unpack(e + "I", b[20:24])[0]
    if linktype != 1:
        raise ValueError("%s: link type %d, not Ethernet" % (path, linktype))
    off, out = 24, []
    while off + 16 <= len(b):
        s, frac, incl, orig = struct.unpack(e + "IIII", b[off:off + 16])
        out.append((s * 10**9 + frac * mul, orig, b[off + 16:off + 16 + incl]))
        off += 16 + incl
    return out


def parse_frame(f):
    """(proto, src, dst, sport, dport, marker) or None; marker is
    (flow index, seq) when the payload starts with pacer-pcapgen's."""
    off = 12
    et = struct.unpack(">H", f[off:off + 2])[0] if len(f) >= 14 else 0
    off += 2
    while et in (0x8100, 0x88a8) and len(f) >= off + 4:
        et = struct.unpack(">H", f[off + 2:off + 4])[0]
        off += 4
    if et == 0x0800 and len(f) >= off + 20:
        ihl = (f[off] & 15) * 4
        proto, src, dst = f[off + 9], f[off + 12:off + 16], f[off + 16:off + 20]
        l4 = off + ihl
    elif et == 0x86dd and len(f) >= off + 40:
        proto, src, dst = f[off + 6], f[off + 8:off + 24], f[off + 24:off + 40]
        l4 = off + 40
    else:
        return None
    if proto == 17:
        pay = l4 + 8
    elif proto == 6 and len(f) >= l4 + 13:
        pay = l4 + (f[l4 + 12] >> 4) * 4
    else:
        return None
    if len(f) < l4 + 4:
        return None
    sport, dport = struct.unpack(">HH", f[l4:l4 + 4])
    marker = None
    if len(f) >= pay + 12 and f[pay + 8:pay + 12] == b"PCRG":
        marker = struct.unpack(">II", f[pay:pay + 8])
    return proto, bytes(src), bytes(dst), sport, dport, marker


def max_window(frames, w):
    """Most bytes among frames (sorted (t, len)) in [t_i, t_i + w)."""
    best, j, run = 0, 0, 0
    for i, (t, _) in enumerate(frames):
        while j < len(frames) and frames[j][0] < t + w:
            run += frames[j][1]
            j += 1
        best = max(best, run)
        run -= frames[i][1]
    return best


def main():
    ap = argparse.ArgumentParser(description="rates at short time scales")
    ap.add_argument("pcap")
    ap.add_argument("--stats", required=True, help="pacer --stats-json")
    ap.add_argument("--port", type=int, default=0, help="egress port (0)")
    ap.add_argument("--time-scale", type=float,
                    help="factor on times since the first frame")
    ap.add_argument("--window", type=float, action="append",
                    help="window, ms (1, 10, 100)")
    ap.add_argument("--policy", action="append", required=True,
                    help="NAME:GROUP:RATE")
    ap.add_argument("--title", default="", help="heading for the table")
    a = ap.parse_args()

    try:
        st = json.load(open(a.stats))
        ports = st.get("ports", [])
        err = (ports[a.port] if a.port < len(ports) else {}).get(
            "departure_error_ns") or st["departure_error_ns"]
        late_ns = float(err["max"])
        burst = int(st.get("burst", 1514))
        overhead = int(st.get("wire_overhead", 0))
        scale = a.time_scale if a.time_scale else st["tsc_hz_eal"] / st["tsc_hz"]
        raw = read_pcap(a.pcap)
        port = ports[a.port]
        buckets = {"aggregate": port["bucket_bytes"]}
        for c in port.get("classes", []):
            buckets[c["class"]] = c["bucket_bytes"]
        pols = []
        for p in a.policy:
            name, rest = p.split(":", 1)
            group, rate = rest.rsplit(":", 1)
            each = group.startswith("flows:")
            sel = group[6:] if each else group
            if sel != "all" and not sel.startswith("dport="):
                raise ValueError("--policy %s: group %s" % (p, group))
            bucket = 0 if each else buckets[name]
            pols.append((name, each, None if sel == "all" else int(sel[6:]),
                         parse_rate(rate), bucket))
    except (OSError, ValueError, KeyError, IndexError, TypeError) as ex:
        print("windows.py: %s" % ex, file=sys.stderr)
        return 2
    if not raw:
        print("windows.py: %s: no frames" % a.pcap, file=sys.stderr)
        return 2
    windows = a.window or [1, 10, 100]

    t0 = raw[0][0]
    pkts, order_errors, last_seq = [], [], {}
    for n, (t, orig, data) in enumerate(raw):
        h = parse_frame(data)
        pkts.append((t0 + (t - t0) * scale, orig + overhead, h))
        if h is None or h[5] is None:
            continue
        key = h[:5] + (h[5][0],)
        seq = h[5][1]
        if key in last_seq and seq <= last_seq[key]:
            order_errors.append("frame %d: flow %d (sport %d dport %d) seq %d after %d"
                                % (n, h[5][0], h[3], h[4], seq, last_seq[key]))
        last_seq[key] = seq
    frame = max(p[1] for p in pkts)

    bad = []
    if a.title:
        print("== %s" % a.title)
    print("L (max departure error) %.0f ns, burst %d, frame %d, time scale %.6f"
          % (late_ns, burst, frame, scale))
    for name, _, _, rate, bucket in pols:
        # pacer sizes buckets for 1514-byte frames whatever the capture,
        # wider only where 65536 of them must cover the horizon (+ margin)
        ring = rate / 8 * (st.get("horizon_ms", 2000) + 11) / 1e3 / 65536
        if bucket > 4 * max(1514 + overhead, ring):
            bad.append("%s: calendar bucket of %d bytes, more than four "
                       "1514-byte frames" % (name, bucket))
    print("%-12s %10s %7s %6s %10s %10s %7s %9s %7s  %s"
          % ("policy", "rate", "window", "frames", "max_bytes", "bound",
             "ratio", "L_ns", "bucket", "verdict"))
    for name, each, dport, rate, bucket in pols:
        sets = {}
        for t, ln, h in pkts:
            if dport is not None and (h is None or h[4] != dport):
                continue
            k = h[:5] if each and h is not None else None
            sets.setdefault(k, []).append((t, ln))
        for s in sets.values():
            s.sort()
        nframes = sum(len(s) for s in sets.values())
        for wms in windows:
            w = wms * 1e6
            worst, worst_k = -1, None
            for k, s in sets.items():
                m = max_window(s, w)
                if m > worst:
                    worst, worst_k = m, k
            worst = max(worst, 0)
            bound = rate / 8 * (w + late_ns) / 1e9 + burst + bucket + frame
            ratio = worst / (rate / 8 * w / 1e9)
            over = worst > bound
            print("%-12s %10s %5gms %6d %10d %10.0f %6.2fx %9.0f %7d  %s"
                  % (name, fmt_rate(rate), wms, nframes, worst, bound,
                     ratio, late_ns, bucket, "OVER" if over else "ok"))
            if over:
                who = name
                if each and worst_k is not None:
                    who += " (worst flow sport %d dport %d)" % (worst_k[3], worst_k[4])
                bad.append("%s: %d bytes in a %g ms window, bound %.0f "
                           "(%.2fx its %s; L %.0f ns)"
                           % (who, worst, wms, bound, ratio, fmt_rate(rate), late_ns))
    for e in bad:
        print("windows.py: OVER: %s" % e, file=sys.stderr)
    for e in order_errors[:10]:
        print("windows.py: ORDER: %s" % e, file=sys.stderr)
    if order_errors:
        print("windows.py: ORDER: %d frame(s) out of order within their flow"
              % len(order_errors), file=sys.stderr)
    return 1 if bad or order_errors else 0


if __name__ == "__main__":
    sys.exit(main())
