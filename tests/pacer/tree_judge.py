#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Judge for test_tree.sh: does every node of a subscriber tree hold its
# max rate at short time scales in a net_pcap capture of pacer's
# departures, and does each get what it should over the run?
#
#   tree_judge.py --stats STATS.json --network network.json
#                 --subscribers ShapedDevices.csv [--direction download|upload]
#                 [--window MS]... [--expect NAME:RATE:TOL]... OUT.pcap
#
# The tree is read from the files here, independently of pacer: Python's
# json, csv and ipaddress (LibreQoS's own reading: ip_network(strict=False)),
# each frame's subscriber the circuit whose prefix is the longest to hold
# its destination (download) or source (upload) address, and the frame
# counted at that leaf and every node above it. For each node with frames
# and each window W (1, 10, 100 ms) the most bytes leaving within any
# [t_i, t_i + W) must stay within
#
#   bound(W) = R/8 * (W + L) + burst + bucket + frame
#
# windows.py's bound (R the node's max; bucket its calendar bucket from
# STATS, 0 for a leaf: a token bucket; L pacer's largest departure error).
# --expect NAME:RATE:TOL: the node's rate over the time it was sending
# (its bytes after the first frame over first to last departure) is
# within TOL (a fraction) of RATE, less the share of that time pacer's
# staging went unserved past its lead (STATS stage_stall_ns: a worker off
# its CPU; the calendars' time it missed is gone), never more.
# --fair TOL: every node at its weighted max-min share, worked out here
# from the files, judged as --share while every subscriber is backlogged;
# --fair-report prints the worst window of each but judges none.
# --share NAME:RATE:TOL: the same in every 100 ms window of the node's busy
# span but its first and last, give or take one frame (its weighted
# max-min fair share, which the test works out from the tree). The frames counted at each node equal
# pacer's own per-node tx_packets (STATS tree), and frames of no
# subscriber are counted apart (or, with --unmatched CIRCUIT, at that
# subscriber, as pacer's --unmatched shapes them). Per-flow order as windows.py checks it.
# Exit status: 0 all hold, 1 one did not (named on stderr), 2 bad input.
import argparse
import csv
import ipaddress
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import windows  # noqa: E402


def load_tree(network, subscribers, direction, mins=None):
    """{name: (parent or None, max bit/s, leaf?)}, [(network, leaf)];
    the subscribers' mins (bit/s) into @mins."""
    key = "downloadBandwidthMbps" if direction == "download" else "uploadBandwidthMbps"
    nodes = {}

    def walk(obj, parent):
        for name, v in obj.items():
            if not isinstance(v, dict):
                continue
            nodes[name] = (parent, round(float(v[key]) * 1e6), False)
            walk(v.get("children", {}), name)

    if network:
        walk(json.load(open(network)), None)
    col = "Download Max Mbps" if direction == "download" else "Upload Max Mbps"
    prefixes = []
    with open(subscribers, newline="", encoding="utf-8-sig") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    head = rows[0]
    ix = {h: i for i, h in enumerate(head)}
    for r in rows[1:]:
        cid = r[ix["Circuit ID"]]
        parent = r[ix["Parent Node"]] or None
        nodes[cid] = (parent, round(float(r[ix[col]]) * 1e6), True)
        if mins is not None:
            mins[cid] = float(r[ix[col.replace("Max", "Min")]]) * 1e6
        for c in ("IPv4", "IPv6"):
            for a in r[ix[c]].replace(",", " ").split():
                prefixes.append((ipaddress.ip_network(a, strict=False), cid))
    return nodes, prefixes


def weights(nodes, mins):
    """pacer's weights (src/tree.h): a leaf's min (1 Mbit/s without one),
    a node's the sum of its children's (1 Mbit/s with none)."""
    w = {n: (mins.get(n) or 1e6) for n, v in nodes.items() if v[2]}
    kids = {}
    for n, v in nodes.items():
        kids.setdefault(v[0], []).append(n)

    def get(n):
        if n not in w:
            w[n] = sum(get(c) for c in kids.get(n, [])) or 1e6
        return w[n]
    for n in nodes:
        get(n)
    return w, kids


def fair_shares(nodes, mins, busy):
    """Each node's weighted max-min share (bit/s) while the leaves in
    @busy are backlogged: at each node its capacity (its max, or what its
    parent gives it) goes to its children by weight, none above what it
    can use (its own max, or what its busy subtree can), the rest shared
    again among the others."""
    w, kids = weights(nodes, mins)
    demand = {}

    def dem(n):
        if n not in demand:
            mx = nodes[n][1] or float("inf")
            if nodes[n][2]:
                demand[n] = mx if n in busy else 0.0
            else:
                demand[n] = min(mx, sum(dem(c) for c in kids.get(n, [])))
        return demand[n]
    share = {}

    def give(n, cap):
        share[n] = cap = min(cap, dem(n))
        cs = [c for c in kids.get(n, []) if dem(c) > 0]
        while cs:
            tot = sum(w[c] for c in cs)
            capped = [c for c in cs if dem(c) <= cap * w[c] / tot]
            if not capped:
                for c in cs:
                    give(c, cap * w[c] / tot)
                return
            for c in capped:
                give(c, dem(c))
                cap -= dem(c)
            cs = [c for c in cs if c not in capped]
    for top in kids.get(None, []):
        give(top, float("inf"))
    return share


def leaf_of(prefixes, addr, cache):
    if addr in cache:
        return cache[addr]
    ip = ipaddress.ip_address(addr)
    best = None
    for net, cid in prefixes:
        if ip.version == net.version and ip in net and (
                best is None or net.prefixlen > best[0].prefixlen):
            best = (net, cid)
    cache[addr] = best[1] if best else None
    return cache[addr]


def main():
    ap = argparse.ArgumentParser(description="a subscriber tree's rates")
    ap.add_argument("pcap")
    ap.add_argument("--stats", required=True)
    ap.add_argument("--network")
    ap.add_argument("--subscribers", required=True)
    ap.add_argument("--direction", default="download")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--unmatched", help="pacer's --unmatched: frames of no subscriber count there")
    ap.add_argument("--window", type=float, action="append")
    ap.add_argument("--expect", action="append", default=[])
    ap.add_argument("--share", action="append", default=[],
                    help="NAME:RATE:TOL, in every 100 ms window")
    ap.add_argument("--fair-report", action="store_true",
                    help="as --fair 0.05, printed but not judged")
    ap.add_argument("--fair", type=float, metavar="TOL",
                    help="every node with frames at its weighted max-min share "
                         "(worked out here) within TOL in every 100 ms window "
                         "while every subscriber is backlogged")
    a = ap.parse_args()
    try:
        st = json.load(open(a.stats))
        port = st["ports"][a.port]
        late_ns = float((port.get("departure_error_ns") or
                         st["departure_error_ns"])["max"])
        burst = int(st.get("burst", 1514))
        overhead = int(st.get("wire_overhead", 0))
        scale = st["tsc_hz_eal"] / st["tsc_hz"]
        stall_ns = float(port.get("stage_stall_ns", 0))
        tree = [t for t in st["tree"]["ports"] if t["port"] == a.port][0]
        pst = {n["name"]: n for n in tree["nodes"]}
        mins = {}
        nodes, prefixes = load_tree(a.network, a.subscribers, a.direction, mins)
        raw = windows.read_pcap(a.pcap)
        expects, shares = [], []
        for e in a.expect:
            name, rate, tol = e.rsplit(":", 2)
            expects.append((name, windows.parse_rate(rate), float(tol)))
        for e in a.share:
            name, rate, tol = e.rsplit(":", 2)
            shares.append((name, windows.parse_rate(rate), float(tol)))
        share_ms = 100
    except (OSError, ValueError, KeyError, IndexError, TypeError) as ex:
        print("tree_judge.py: %s" % ex, file=sys.stderr)
        return 2
    if not raw:
        print("tree_judge.py: %s: no frames" % a.pcap, file=sys.stderr)
        return 2
    t0 = raw[0][0]
    frames = {n: [] for n in nodes}
    cache, other, bad, last_seq = {}, 0, [], {}
    order = 0
    for t, orig, data in raw:
        h = windows.parse_frame(data)
        if h is None and not a.unmatched:
            other += 1
            continue
        if h is not None and h[5] is not None:
            k = h[:5] + (h[5][0],)
            if k in last_seq and h[5][1] <= last_seq[k]:
                order += 1
            last_seq[k] = h[5][1]
        leaf = None
        if h is not None:
            leaf = leaf_of(prefixes, h[2] if a.direction == "download" else h[1], cache)
        if leaf is None:
            leaf = a.unmatched
        if leaf is None:
            other += 1
            continue
        ts = t0 + (t - t0) * scale
        n = leaf
        while n is not None:
            frames[n].append((ts, orig + overhead))
            n = nodes[n][0]
    fmax = max(o for _, o, _ in raw) + overhead
    wins = a.window or [1, 10, 100]
    print("%-14s %5s %10s %8s %12s %12s %7s" %
          ("node", "W ms", "rate", "frames", "max bytes", "bound", "ratio"))
    for name in nodes:
        fr = frames[name]
        parent, bps, leaf = nodes[name]
        if name not in pst:
            bad.append("%s: not in pacer's tree" % name)
            continue
        if pst[name]["tx_packets"] != len(fr):
            bad.append("%s: pacer counted %d sent, the capture holds %d" %
                       (name, pst[name]["tx_packets"], len(fr)))
        if pst[name]["max_bps"] != bps:
            bad.append("%s: pacer's max %d bit/s, the files say %d" %
                       (name, pst[name]["max_bps"], bps))
        if not fr or bps == 0:
            continue
        bucket = 0 if leaf else pst[name]["bucket_bytes"]
        for wms in wins:
            w = wms * 1e6
            worst = windows.max_window(fr, w)
            bound = bps / 8 * (w + late_ns) / 1e9 + burst + bucket + fmax
            ratio = worst / (bps / 8 * w / 1e9)
            print("%-14s %5g %10s %8d %12d %12.0f %7.2f%s" %
                  (name, wms, windows.fmt_rate(bps), len(fr), worst, bound,
                   ratio, "  OVER" if worst > bound else ""))
            if worst > bound:
                bad.append("%s: %d bytes in a %g ms window, bound %.0f (max %s, L %.0f ns)"
                           % (name, worst, wms, bound, windows.fmt_rate(bps), late_ns))
    for name, rate, tol in expects:
        fr = frames.get(name, [])
        if len(fr) < 2:
            bad.append("%s: %d frames, cannot judge its rate" % (name, len(fr)))
            continue
        span = fr[-1][0] - fr[0][0]
        got = (sum(b for _, b in fr) - fr[0][1]) * 8 / (span / 1e9)
        # the time the staging went unserved past its lead (the worker
        # off its CPU) is gone from every calendar: the rate may fall
        # short by that share of the span, never exceed
        lost = min(stall_ns, span) / span
        lo = rate * (1 - tol) * (1 - lost)
        ok = lo <= got <= rate * (1 + tol)
        print("%-14s rate %s over %.3f s, expected %s - %g %% (%.1f %% stalled) + %g %%: %s" %
              (name, windows.fmt_rate(got), span / 1e9, windows.fmt_rate(rate),
               tol * 100, lost * 100, tol * 100, "ok" if ok else "MISSED"))
        if not ok:
            bad.append("%s: %.0f bit/s over %.3f s, expected %.0f to %.0f (%g %%, "
                       "%.1f %% of it the staging stalled)"
                       % (name, got, span / 1e9, lo, rate * (1 + tol), tol * 100, lost * 100))
    # --fair: the shares worked out from the tree, judged like --share
    # but only up to where the first subscriber ran out
    end_all = None
    report_only = a.fair is None and a.fair_report
    if report_only:
        a.fair = 0.05
    if a.fair is not None:
        busy = {n for n in nodes if nodes[n][2] and frames[n]}
        fs = fair_shares(nodes, mins, busy)
        end_all = min(frames[n][-1][0] for n in busy)
        start_all = max(frames[n][0][0] for n in busy)
        for n in nodes:
            if frames[n] and fs.get(n, 0) > 0:
                shares.append((n, fs[n], a.fair))
                frames[n] = [(t, b) for t, b in frames[n] if start_all <= t <= end_all]
    for name, rate, tol in shares:
        fr = frames.get(name, [])
        w = share_ms * 1e6
        if len(fr) < 2 or fr[-1][0] - fr[0][0] < 3 * w:
            bad.append("%s: %d frames over %.3f s, too few to judge its share" %
                       (name, len(fr), (fr[-1][0] - fr[0][0]) / 1e9 if fr else 0))
            continue
        want = rate / 8 * w / 1e9
        # the staging's stalls took at most their own time from it
        slack_lo = rate / 8 * stall_ns / 1e9
        worst, j, t = 0.0, 0, fr[0][0] + w
        while t + 2 * w <= fr[-1][0]:
            got = sum(b for tt, b in fr if t <= tt < t + w)
            dev = (got - want) / want
            if abs(dev) > abs(worst):
                worst = dev
            if got > want * (1 + tol) + fmax or got < want * (1 - tol) - fmax - slack_lo:
                if report_only:
                    t += w
                    continue
                bad.append("%s: %d bytes in [%.0f, %.0f) ms, its share %.0f +- %g %% "
                           "and a frame" % (name, got, (t - fr[0][0]) / 1e6,
                                            (t + w - fr[0][0]) / 1e6, want, tol * 100))
                break
            t += w
        print("%-14s share %s: worst %g ms window %+.1f %%" %
              (name, windows.fmt_rate(rate), share_ms, worst * 100))
    if order:
        bad.append("%d frame(s) out of order within their flow" % order)
    print("frames of no subscriber: %d" % other)
    for e in bad:
        print("tree_judge.py: %s" % e, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
