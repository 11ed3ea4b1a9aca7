#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Judge for test_isolation.sh: are flows that share a backlogged rate
# isolated from each other, as under fair sharing? Compares each flow's
# completion time in pacer's output capture with an ideal frame-by-frame
# round robin (and, for reference, a FIFO) of the same input at the same
# rate.
#
#   fct.py --stats STATS.json --rate RATE --lead-us H [--time-scale F]
#          [--shorts N:FACTOR] [--equal] IN.pcap OUT.pcap
#
# Arrivals are IN's timestamps, relative to its first frame (pacer reads
# the capture at least that fast: net_pcap does not pace it); departures
# OUT's, relative to its first frame, times F (see pcap_scale in lib.sh).
# A flow (UDP/TCP ports) completes when its last frame leaves; its
# completion time is that less its first frame's arrival. The references
# serve frames back to back at RATE (bytes plus STATS wire_overhead), the
# round robin one frame per backlogged flow in turn, the FIFO in arrival
# order.
#
# The allowance A = L + H + S: L the largest departure error pacer measured on
# the port (STATS ports[0].departure_error_ns.max), H the staging lead
# (a packet is stamped up to H before it leaves, so the choice of flow is
# made that early), S the time pacer's staging went unserved beyond H
# (STATS stage_stall_ns: its RX lcore lost the CPU; every flow waiting
# then finishes that much later; 0 on a quiet machine). Checks:
#   --shorts N:FACTOR  flows of at most N frames: mean and p99 completion
#                      time each <= FACTOR x the round robin's + A;
#   --equal            every flow within one quantum (two 1514-byte frames
#                      at RATE) + A of the round robin's completion time;
#   always             the link idle while anything waited (first to last
#                      departure less the time the frames take at RATE)
#                      <= 0.1 % of the span + L + the time pacer's staging
#                      went unserved beyond H (STATS stage_stall_ns); per-flow
#                      order (pacer-pcapgen markers) kept.
# Exit status: 0 all hold, 1 a check failed (named on stderr), 2 bad input.
import argparse
import json
import math
import sys
from collections import OrderedDict

from windows import parse_frame, parse_rate, read_pcap


def flows_of(frames):
    """OrderedDict key -> [(t, bytes, marker)], first arrival order."""
    out = OrderedDict()
    for t, orig, data in frames:
        h = parse_frame(data)
        if h is None:
            continue
        out.setdefault(h[:5], []).append((t, orig, h[5]))
    return out


def simulate(flows, bps, overhead, rr):
    """Departure (start) time of each flow's last frame: a link at bps
    serving frames back to back, round robin among backlogged flows (rr)
    or in arrival order."""
    keys = list(flows)
    if not rr:
        ev = sorted((t, i, b) for i, k in enumerate(keys)
                    for t, b, _ in flows[k])
        now, done = 0.0, {}
        for t, i, b in ev:
            now = max(now, t)
            done[keys[i]] = now
            now += (b + overhead) * 8e9 / bps
        return done
    nxt = {k: 0 for k in keys}
    active, done, now = [], {}, 0.0
    pending = sorted((flows[k][0][0], k) for k in keys)
    pi, cur = 0, 0
    while pi < len(pending) or active:
        while pi < len(pending) and pending[pi][0] <= now:
            active.append(pending[pi][1])
            pi += 1
        # frames of an active flow that have not arrived yet keep it out
        ready = [k for k in active if flows[k][nxt[k]][0] <= now]
        if not ready:
            cand = [flows[k][nxt[k]][0] for k in active]
            if pi < len(pending):
                cand.append(pending[pi][0])
            now = min(cand)
            continue
        # the next ready flow in round order from cur
        n = len(active)
        for j in range(n):
            k = active[(cur + j) % n]
            if flows[k][nxt[k]][0] <= now:
                cur = (cur + j) % n
                break
        t, b, _ = flows[k][nxt[k]]
        done[k] = now
        nxt[k] += 1
        now += (b + overhead) * 8e9 / bps
        if nxt[k] == len(flows[k]):
            active.pop(cur)
            if active:
                cur %= len(active)
        else:
            cur = (cur + 1) % len(active)
    return done


def stats(v):
    v = sorted(v)
    return sum(v) / len(v), v[max(0, math.ceil(0.99 * len(v)) - 1)]


def main():
    ap = argparse.ArgumentParser(description="flow isolation")
    ap.add_argument("inp")
    ap.add_argument("out")
    ap.add_argument("--stats", required=True)
    ap.add_argument("--rate", required=True)
    ap.add_argument("--lead-us", type=float, required=True)
    ap.add_argument("--time-scale", type=float)
    ap.add_argument("--shorts", help="N:FACTOR")
    ap.add_argument("--equal", action="store_true")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    try:
        st = json.load(open(a.stats))
        port = st["ports"][0]
        late = float((port.get("departure_error_ns") or
                      st["departure_error_ns"])["max"])
        stall = float(port.get("stage_stall_ns", 0))
        overhead = int(st.get("wire_overhead", 0))
        scale = a.time_scale if a.time_scale else st["tsc_hz_eal"] / st["tsc_hz"]
        bps = parse_rate(a.rate)
        fin = read_pcap(a.inp)
        fout = read_pcap(a.out)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as ex:
        print("fct.py: %s" % ex, file=sys.stderr)
        return 2
    if not fin or not fout:
        print("fct.py: no frames", file=sys.stderr)
        return 2
    t0 = fin[0][0]
    fin = [(t - t0, o, d) for t, o, d in fin]
    t0 = fout[0][0]
    fout = [((t - t0) * scale, o, d) for t, o, d in fout]
    ins, outs = flows_of(fin), flows_of(fout)
    fails = []
    if set(ins) != set(outs) or any(len(ins[k]) != len(outs[k]) for k in ins):
        fails.append("the output does not hold every input frame")
        print("FAIL: %s" % fails[0], file=sys.stderr)
        return 1
    allow = late + a.lead_us * 1000 + stall
    rr = simulate(ins, bps, overhead, True)
    fifo = simulate(ins, bps, overhead, False)
    ct = {k: outs[k][-1][0] - ins[k][0][0] for k in ins}
    ct_rr = {k: rr[k] - ins[k][0][0] for k in ins}
    ct_fifo = {k: fifo[k] - ins[k][0][0] for k in ins}
    for k in outs:
        seqs = [m[1] for _, _, m in outs[k] if m is not None]
        if seqs != sorted(seqs) or len(set(seqs)) != len(seqs):
            fails.append("flow %s out of order" % (k[3],))
    print("%s: %d flows, %d frames at %s; L %.1f us, H %.0f us, staging stalls %.1f us, "
          "allowance %.1f us" % (a.title, len(ins), len(fin), a.rate, late / 1e3,
                                 a.lead_us, stall / 1e3, allow / 1e3))
    if a.shorts:
        n, factor = a.shorts.split(":")
        n, factor = int(n), float(factor)
        sel = [k for k in ins if len(ins[k]) <= n]
        if not sel:
            print("fct.py: no flow of at most %d frames" % n, file=sys.stderr)
            return 2
        m, p = stats([ct[k] for k in sel])
        mr, pr = stats([ct_rr[k] for k in sel])
        mf, pf = stats([ct_fifo[k] for k in sel])
        print("  %d flows of <= %d frames: mean %.1f ms, p99 %.1f ms; round robin "
              "%.1f / %.1f ms; FIFO %.1f / %.1f ms; ratio %.2f / %.2f (bound %.2f + A)"
              % (len(sel), n, m / 1e6, p / 1e6, mr / 1e6, pr / 1e6, mf / 1e6,
                 pf / 1e6, m / mr, p / pr, factor))
        if m > factor * mr + allow:
            fails.append("short flows' mean completion %.1f ms > %.2f x %.1f ms + A"
                         % (m / 1e6, factor, mr / 1e6))
        if p > factor * pr + allow:
            fails.append("short flows' p99 completion %.1f ms > %.2f x %.1f ms + A"
                         % (p / 1e6, factor, pr / 1e6))
    if a.equal:
        q = 2 * (1514 + overhead) * 8e9 / bps
        for k in ins:
            d = ct[k] - ct_rr[k]
            print("  flow %d: %.2f ms, round robin %.2f ms (%+.1f us)"
                  % (k[3], ct[k] / 1e6, ct_rr[k] / 1e6, d / 1e3))
            if abs(d) > q + allow:
                fails.append("flow %d completes %+.1f us from round robin's, "
                             "beyond one quantum (%.1f us) + A"
                             % (k[3], d / 1e3, q / 1e3))
    span = fout[-1][0]
    work = sum(o + overhead for _, o, _ in fout[:-1]) * 8e9 / bps
    idle = max(0.0, span - work)
    idle_ok = 0.001 * span + late + stall
    print("  link idle %.3f ms of %.1f ms (%.3f %%; allowed %.3f ms: 0.1 %% + L + "
          "stalls %.3f ms)" % (idle / 1e6, span / 1e6, 100 * idle / span,
                               idle_ok / 1e6, stall / 1e6))
    if idle > idle_ok:
        fails.append("link idle %.3f ms > %.3f ms" % (idle / 1e6, idle_ok / 1e6))
    for f in fails:
        print("FAIL: %s: %s" % (a.title, f), file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
