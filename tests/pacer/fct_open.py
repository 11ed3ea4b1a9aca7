#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Judge for open-loop workloads (txn_send.py --open): flows arriving on
# their own, each sending its whole transaction at once. Each flow's
# arrival is its start as the sender logged it, put on the capture's clock
# by the sync frame (sent on the idle link first: its departure is the
# sender's time 0 plus pacer's forwarding delay, tens of us); its
# completion, the end of its last frame in pacer's output capture. The
# references serve the same flows (all of a flow's frames there at its
# arrival) on a link at the rate, frame by frame: fair sharing (round
# robin among the flows that have frames) and SRPT (the flow with the
# fewest frames left; the optimum for the mean).
#
#   fct_open.py OUT.pcap --stats STATS.json --port P --sender SENDER.json
#               [--time-scale F] [--json FILE] [--title T]
#   fct_open.py --tcp SERVER.json --sender CLIENT.json [--json FILE] [--title T]
#
# The second form judges transactions over TCP (txn_tcp.py, through
# tools/wire-test.sh's hosts): a flow's arrival is when the client began
# it, its completion when the server had its last byte, both on
# CLOCK_MONOTONIC, less the path's own latency L: the median over the
# client's one-frame probes on the idle path of (completion - arrival -
# one frame time). That is what the sync frame takes away in the first
# form (the forwarding delay), here with both hosts' stacks in it, so
# the references (a link at the rate, frame by frame, frames of the
# client's frame size) compare with what the path adds to them.
#
# Prints, for pacer and both references: mean completion time, mean
# slowdown (completion time over the flow's own time on an idle link),
# p99 slowdown of flows under 100 KB; the flows of at most 30 frames'
# mean completion time and the longest flow's (the long-and-short case).
# --json writes them. Exit status 0, or 1 when a flow's frames are
# missing or out of order, 2 on bad input.
import argparse
import heapq
import json
import sys
from collections import deque

from windows import parse_frame, read_pcap

FRAME = 1514


def sim_fair(flows, ft):
    """{flow: completion} under frame-by-frame round robin."""
    ev = sorted((f["arrival"], f["flow"], f["frames"]) for f in flows)
    rr, left, done = deque(), {}, {}
    now, i = 0.0, 0
    while i < len(ev) or rr:
        if not rr:
            now = max(now, ev[i][0])
        while i < len(ev) and ev[i][0] <= now:
            rr.append(ev[i][1])
            left[ev[i][1]] = ev[i][2]
            i += 1
        f = rr.popleft()
        now += ft
        left[f] -= 1
        if left[f] == 0:
            done[f] = now
        else:
            # arrivals during this frame go ahead of it in the round
            while i < len(ev) and ev[i][0] <= now:
                rr.append(ev[i][1])
                left[ev[i][1]] = ev[i][2]
                i += 1
            rr.append(f)
    return done


def sim_srpt(flows, ft):
    """{flow: completion} under preemptive SRPT, frame by frame."""
    ev = sorted((f["arrival"], f["flow"], f["frames"]) for f in flows)
    h, done = [], {}
    now, i = 0.0, 0
    while i < len(ev) or h:
        if not h:
            now = max(now, ev[i][0])
        while i < len(ev) and ev[i][0] <= now:
            heapq.heappush(h, (ev[i][2], ev[i][0], ev[i][1]))
            i += 1
        n, a, f = heapq.heappop(h)
        now += ft
        if n == 1:
            done[f] = now
        else:
            heapq.heappush(h, (n - 1, a, f))
    return done


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, max(0, int(p * len(v) + 0.5) - 1))] if v else 0


def metrics(flows, done, ft):
    fct = {f["flow"]: done[f["flow"]] - f["arrival"] for f in flows}
    slow = {f["flow"]: fct[f["flow"]] / (f["frames"] * ft) for f in flows}
    small = [slow[f["flow"]] for f in flows if f["frames"] * FRAME < 100000]
    short = [fct[f["flow"]] for f in flows if f["frames"] <= 30]
    longest = max(flows, key=lambda f: f["frames"])
    return {
        "mean_ms": sum(fct.values()) / len(fct) / 1e6,
        "mean_slowdown": sum(slow.values()) / len(slow),
        "p99_slowdown_small": pct(small, 0.99),
        "short_mean_ms": sum(short) / len(short) / 1e6 if short else 0,
        "longest_ms": fct[longest["flow"]] / 1e6,
    }


def report(a, flows, res):
    for k in ("pacer", "fair", "srpt"):
        m = res[k]
        if m is None:
            continue
        print("%s: %-5s %d flows: mean %.2f ms, mean slowdown %.2f, p99 slowdown "
              "(< 100 KB) %.2f, flows <= 30 frames mean %.2f ms, longest %.1f ms"
              % (a.title, k, len(flows), m["mean_ms"], m["mean_slowdown"],
                 m["p99_slowdown_small"], m["short_mean_ms"], m["longest_ms"]))
    if a.json:
        json.dump(res, open(a.json, "w"))


def tcp(a):
    """The second form (txn_tcp.py's logs)."""
    try:
        cl = json.load(open(a.sender))
        done = json.load(open(a.tcp))["done"]
        ft = cl["frame"] * 8e9 / (cl["rate_mbps"] * 1e6)
        lat = sorted((done[str(p["flow"])] - p["start"]) * 1e9 - ft for p in cl["probes"])
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as ex:
        print("fct_open.py: %s" % ex, file=sys.stderr)
        return 2
    if not lat:
        print("fct_open.py: no probes in %s" % a.sender, file=sys.stderr)
        return 2
    base = lat[(len(lat) - 1) // 2]
    flows = cl["flows"]
    t0 = min(f["start"] for f in flows)
    for f in flows:
        f["arrival"] = (f["start"] - t0) * 1e9
    missing = [f["flow"] for f in flows if str(f["flow"]) not in done]
    last = {f["flow"]: (done[str(f["flow"])] - t0) * 1e9 - base
            for f in flows if str(f["flow"]) in done}
    res = {"flows": len(flows), "path_latency_us": base / 1e3,
           "pacer": metrics(flows, last, ft) if not missing else None,
           "fair": metrics(flows, sim_fair(flows, ft), ft),
           "srpt": metrics(flows, sim_srpt(flows, ft), ft),
           "reordered": 0, "missing": len(missing)}
    print("%s: path latency (one-frame probes on the idle path, less a frame time) "
          "%.1f us, p10 %.1f, p90 %.1f" % (a.title, base / 1e3, lat[len(lat) // 10] / 1e3,
                                          lat[len(lat) * 9 // 10] / 1e3))
    report(a, flows, res)
    if missing:
        print("FAIL: %s: %d transactions not completed" % (a.title, len(missing)), file=sys.stderr)
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description="open-loop completion times")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--tcp")
    ap.add_argument("--stats")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--sender", required=True)
    ap.add_argument("--time-scale", type=float)
    ap.add_argument("--json")
    ap.add_argument("--title", default="")
    a = ap.parse_args()
    if a.tcp:
        return tcp(a)
    if not a.out or not a.stats:
        ap.error("OUT.pcap and --stats are needed without --tcp")
    try:
        st = json.load(open(a.stats))
        scale = a.time_scale if a.time_scale else st["tsc_hz_eal"] / st["tsc_hz"]
        snd = json.load(open(a.sender))
        overhead = int(st.get("wire_overhead", 0))
        fout = read_pcap(a.out)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as ex:
        print("fct_open.py: %s" % ex, file=sys.stderr)
        return 2
    ft = (FRAME + overhead) * 8e9 / (snd["rate_mbps"] * 1e6)
    t0 = fout[0][0] if fout else 0
    last, cnt, seqs, sync = {}, {}, {}, None
    bad = 0
    for t, _, data in fout:
        h = parse_frame(data)
        if h is None or h[5] is None:
            continue
        flow, seq = h[5]
        t = (t - t0) * scale
        if flow == 50000:
            sync = t
            continue
        if seq != seqs.get(flow, -1) + 1:
            bad += 1
        seqs[flow] = seq
        last[flow] = t + ft
        cnt[flow] = cnt.get(flow, 0) + 1
    if sync is None:
        print("fct_open.py: no sync frame in the capture", file=sys.stderr)
        return 2
    flows = snd["flows"]
    for f in flows:
        f["arrival"] = sync + f["start"] * 1e9
    missing = [f["flow"] for f in flows if cnt.get(f["flow"], 0) != f["frames"]]
    res = {"flows": len(flows),
           "pacer": metrics(flows, last, ft) if not missing else None,
           "fair": metrics(flows, sim_fair(flows, ft), ft),
           "srpt": metrics(flows, sim_srpt(flows, ft), ft),
           "reordered": bad, "missing": len(missing)}
    report(a, flows, res)
    if missing or bad:
        print("FAIL: %s: %d flows incomplete, %d frames out of order"
              % (a.title, len(missing), bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
