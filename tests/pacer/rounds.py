#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Judge for test_completion.sh: rounds of N equal transactions of T frames
# (txn_send.py), read from pacer's output capture. In each round, every
# flow's completion time is from the round's first departure to the end of
# its own last frame; the round's mean is compared with two references for
# the same N x T frames, all ready at the round's start on a link at RATE:
# fair sharing (frame-by-frame round robin: mean N T - (N - 1) / 2 frame
# times) and SRPT (one transaction after another: T (N + 1) / 2).
#
#   rounds.py OUT.pcap --stats STATS.json [--port P] --rate RATE --flows N --frames T
#             --rounds R --from K --sender SENDER.json --lead-us H
#             [--time-scale F] [--at-most RATIO] [--at-least RATIO]
#             [--json FILE]
#
# Judged: rounds K..R (the first ones teach pacer the sizes), or K..--to.
# The median of their means (a hiccup of a busy machine spoils a round or
# two, not the figure) must be at most (or, for a negative control, at
# least) RATIO x fair's, give or take A = L + H + S: L pacer's departure
# error at p99.9, H the staging lead, S the median time the sender took to
# hand a judged round's frames over (arrivals spread over S, not all
# ready at once). --by slots: a flow completes at its last frame's place
# in the round's departure order (in frame times), which lateness cannot
# move, so A is H + S: what pacer chose, with the machine's hiccups out
# of the figure (the link's idle time is checked on its own, below).
# Always: every frame out once, each flow's frames in order, and the link
# idle within the judged rounds at most 0.1 % of that time + L for each
# stretch (its last frame late) + the staging stalls pacer counted. The
# link is busy from a round's first departure to its last, and where
# pacer falls behind the sender (a busy machine) a round starts before
# the one before it has ended: rounds that overlap make one stretch, and
# what the stretch carries, whichever round, counts as busy (run_delay_ns,
# the time pacer's workers waited for their CPUs, is printed beside it).
# Exit status: 0 all hold, 1 a check failed (named on stderr), 2 bad input.
import argparse
import json
import sys

from windows import parse_frame, parse_rate, read_pcap


def main():
    ap = argparse.ArgumentParser(description="completion order, in rounds")
    ap.add_argument("out")
    ap.add_argument("--stats", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--rate", required=True)
    ap.add_argument("--flows", type=int, required=True)
    ap.add_argument("--frames", type=int, required=True)
    ap.add_argument("--rounds", type=int, required=True)
    ap.add_argument("--from", dest="first", type=int, required=True)
    ap.add_argument("--to", dest="last", type=int)
    ap.add_argument("--sender", required=True)
    ap.add_argument("--lead-us", type=float, required=True)
    ap.add_argument("--time-scale", type=float)
    ap.add_argument("--at-most", type=float)
    ap.add_argument("--at-least", type=float)
    ap.add_argument("--title", default="")
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--by", choices=["time", "slots"], default="time",
                    help="judge completion times (time) or completion "
                    "positions in each round's departure order (slots)")
    a = ap.parse_args()
    try:
        st = json.load(open(a.stats))
        port = st["ports"][a.port]
        derr = port.get("departure_error_ns") or st["departure_error_ns"]
        late = float(derr["max"])
        late999 = float(derr["p999"])
        stall = float(port.get("stage_stall_ns", 0))
        lost = float(sum(l.get("run_delay_ns") or 0 for l in st["lcores"]))
        overhead = int(st.get("wire_overhead", 0))
        scale = a.time_scale if a.time_scale else st["tsc_hz_eal"] / st["tsc_hz"]
        spread = json.load(open(a.sender))["spread_s"]
        bps = parse_rate(a.rate)
        fout = read_pcap(a.out)
    except (OSError, ValueError, KeyError, IndexError, TypeError) as ex:
        print("rounds.py: %s" % ex, file=sys.stderr)
        return 2
    n, T = a.flows, a.frames
    fails = []
    t0 = fout[0][0] if fout else 0
    rounds = [dict() for _ in range(a.rounds)]
    last_seq = {}
    frame_ns = None
    deps = []  # every frame's departure, in order
    for t, orig, data in fout:
        h = parse_frame(data)
        if h is None or h[5] is None:
            continue
        flow, seq = h[5]
        t = (t - t0) * scale
        if seq <= last_seq.get(flow, -1):
            fails.append("flow %d out of order (%d after %d)"
                         % (flow, seq, last_seq[flow]))
        last_seq[flow] = seq
        r = seq // T
        if flow >= n or r >= a.rounds:
            fails.append("frame of flow %d round %d not sent" % (flow, r))
            continue
        ft = (orig + overhead) * 8e9 / bps
        frame_ns = ft
        deps.append((t, ft))
        rnd = rounds[r]
        rnd.setdefault("start", t)
        rnd.setdefault("n", 0)
        rnd["n"] += 1
        rnd["end"] = max(rnd.get("end", 0), t + ft)
        rnd.setdefault("done", {})[flow] = t + ft
        # the same in frame slots: the n-th frame of the round to leave
        rnd.setdefault("slot", {})[flow] = rnd["n"]
    for r, rnd in enumerate(rounds):
        if rnd.get("n", 0) != n * T:
            fails.append("round %d: %d frames out of %d"
                         % (r, rnd.get("n", 0), n * T))
    if fails:
        for f in fails[:5]:
            print("FAIL: %s: %s" % (a.title, f), file=sys.stderr)
        return 1
    fair = (n * T - (n - 1) / 2) * frame_ns
    srpt = T * (n + 1) / 2 * frame_ns
    means = []
    for r, rnd in enumerate(rounds):
        if a.by == "time":
            m = sum(d - rnd["start"] for d in rnd["done"].values()) / n
        else:
            m = sum(rnd["slot"].values()) / n * frame_ns
        means.append(m)
    last = a.last if a.last else a.rounds
    # the link busy from a round's first departure to its last (the
    # sender hands a round over faster than the rate); overlapping rounds
    # make one stretch. A stretch's idle time is its span less the time
    # the frames leaving in it take, whichever round they are of (a late
    # frame sent back to back with the next one makes up for the gap
    # before it)
    stretches = []
    for s_r, e_r in sorted((rounds[r]["start"], rounds[r]["end"])
                           for r in range(a.first - 1, last)):
        if stretches and s_r <= stretches[-1][1]:
            stretches[-1][1] = max(stretches[-1][1], e_r)
        else:
            stretches.append([s_r, e_r])
    span = idle = 0.0
    for s_r, e_r in stretches:
        busy = sum(ft for t, ft in deps if s_r <= t < e_r)
        span += e_r - s_r
        idle += max(0.0, e_r - s_r - busy)
    idle_ok = 0.001 * span + len(stretches) * late + stall
    print("%s: link idle within rounds %d-%d: %.3f ms of %.1f ms in %d stretch(es) "
          "(allowed %.3f ms: 0.1 %% + L %.1f us a stretch + staging stalls %.1f us; "
          "the workers waited %.1f ms for their CPUs)"
          % (a.title, a.first, last, idle / 1e6, span / 1e6, len(stretches),
             idle_ok / 1e6, late / 1e3, stall / 1e3, lost / 1e6))
    if idle > idle_ok:
        fails.append("link idle %.3f ms > %.3f ms within the rounds"
                     % (idle / 1e6, idle_ok / 1e6))
    judged = sorted(means[a.first - 1:last])
    m = judged[len(judged) // 2]  # the median round: a hiccup spoils one
    s_max = sorted(spread[a.first - 1:last])[len(judged) // 2] * 1e9
    # by slots, lateness does not move a frame's place in the order: only
    # what the lead and the sender's pace let leave in arrival order does
    allow = (late999 if a.by == "time" else 0) + a.lead_us * 1000 + s_max
    print("%s: N %d x %d frames, rounds %d-%d of %d; mean completion %s(median "
          "round) %.2f ms = %.3f of fair (%.2f ms); SRPT %.2f ms (%.3f); rounds "
          "%s; allowance %.2f ms (L p99.9 %.1f us, H %.0f us, sender %.2f ms)"
          % (a.title, n, T, a.first, last, a.rounds,
             "in frame slots " if a.by == "slots" else "", m / 1e6, m / fair,
             fair / 1e6, srpt / 1e6, srpt / fair,
             " ".join("%.3f" % (x / fair) for x in means),
             allow / 1e6, late999 / 1e3, a.lead_us, s_max / 1e6))
    if a.json:
        json.dump({"mean_ns": m, "fair_ns": fair, "srpt_ns": srpt,
                   "ratio": m / fair, "srpt_ratio": srpt / fair,
                   "allowance_ns": allow, "late_ns": late,
                   "rounds": [x / fair for x in means]}, open(a.json, "w"))
    if a.at_most is not None and m > a.at_most * fair + allow:
        fails.append("mean completion %.2f ms > %.2f x fair %.2f ms + A"
                     % (m / 1e6, a.at_most, fair / 1e6))
    if a.at_least is not None and m < a.at_least * fair - allow:
        fails.append("mean completion %.2f ms < %.2f x fair %.2f ms - A"
                     % (m / 1e6, a.at_least, fair / 1e6))
    for f in fails:
        print("FAIL: %s: %s" % (a.title, f), file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
