#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Rounds of equal transactions, sent as raw frames on an interface (the
# namespace end of a veth pair whose other end pacer reads): each round,
# N UDP flows (the same N every round, as persistent connections) send T
# frames each, interleaved frame by frame, as fast as the socket takes them;
# then a pause, so each transaction ends (pacer: 1 ms without an arrival)
# and the next round's first arrival tells pacer so.
#
#   txn_send.py IFACE --flows N --frames T --rounds R --gap-ms G --out JSON
#   txn_send.py IFACE --long L --flows M --frames K --short-mbps X --secs S
#               [--warm W] --out JSON
#
#   txn_send.py IFACE --open websearch|longshort --load L --rate-mbps R
#               --secs S [--long N] [--seed X] --out JSON
#
# The third form: flows arriving on their own (Poisson), each sending its
# transaction at once (open_loop() below; the judge is fct_open.py).
# The second form: W transactions of K frames 2 ms apart (flows 1000 and
# up), then flow 0 sends L frames at once, then flows 1..M send
# transactions of K frames in turn, paced to X mbit/s, for S seconds (the
# starvation guard's case).
#
# --go FILE (any form): open the socket, then wait (60 s at most) for FILE
# to exist before the first frame. A test starts the sender first, then
# pacer, and makes FILE once pacer is up: the interpreter's start (0.4 s
# through a pyenv shim, more on a busy machine) is then paid before pacer
# starts, not out of its --exit-on-idle, which counts from its start (a
# sender that took longer than that found pacer gone, 0 frames received).
#
# Frames: 1514 bytes, IPv4 198.18.0.1 -> 198.18.0.2 (RFC 2544 benchmarking
# space), UDP source port 10000 + flow, destination 9 (discard), payload
# with pacer-pcapgen's marker (flow, sequence = round x T + frame, "PCRG")
# so the judge (fct.py --rounds) knows each frame's round. JSON: for each
# round, how long its frames took to send (the judge allows it).
import argparse
import json
import os
import socket
import struct
import sys
import time

SIZE = 1514
SPORT_BASE = 10000


def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return ~s & 0xffff


def frame(flow, seq):
    pay_len = SIZE - 14 - 20 - 8
    pay = struct.pack(">II4s", flow, seq, b"PCRG") + bytes(pay_len - 12)
    udp = struct.pack(">HHHH", SPORT_BASE + flow, 9, 8 + pay_len, 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 8 + pay_len, 0, 0, 64,
                     17, 0, bytes([198, 18, 0, 1]), bytes([198, 18, 0, 2]))
    ip = ip[:10] + struct.pack(">H", csum(ip)) + ip[12:]
    eth = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]) + b"\x08\x00"
    return eth + ip + udp + pay


def send(s, fr):
    while True:
        try:
            s.send(fr)
            return
        except BlockingIOError:
            time.sleep(0.0001)


# DCTCP's web-search flow sizes (packets of 1460 bytes, cumulative
# probability), as pFabric and Homa use them; linear between the points
WEBSEARCH = [(1, 0.0), (1, 0.15), (2, 0.2), (3, 0.3), (5, 0.4), (7, 0.53),
             (40, 0.6), (72, 0.7), (137, 0.8), (267, 0.9), (1187, 0.97),
             (2107, 1.0)]


def websearch_frames(rng):
    """A flow size from WEBSEARCH, in 1514-byte frames (1460 payload)."""
    u = rng.random()
    for (x0, p0), (x1, p1) in zip(WEBSEARCH, WEBSEARCH[1:]):
        if u <= p1:
            x = x0 if p1 == p0 else x0 + (x1 - x0) * (u - p0) / (p1 - p0)
            return max(1, int(round(x)))
    return WEBSEARCH[-1][0]


def websearch_mean():
    m = 0.0
    for (x0, p0), (x1, p1) in zip(WEBSEARCH, WEBSEARCH[1:]):
        m += (p1 - p0) * (x0 + x1) / 2
    return m


def open_loop(s, a):
    """Flows that arrive on their own (Poisson), each a new 5-tuple sending
    its whole transaction at once: --open websearch (sizes above, at
    --load of --rate-mbps) or longshort (flow 1 sends --long frames first;
    flows of 1-30 frames arrive at --load). First a sync frame (flow
    50000) on the idle link: its departure in pacer's capture ties the
    sender's clock to the capture's. JSON: each flow's start (s after the
    sync frame) and frames."""
    import random
    rng = random.Random(a.seed)
    send(s, frame(50000, 0))
    t_sync = time.monotonic()
    time.sleep(0.02)
    flows = []
    if a.open == "websearch":
        size, mean = (lambda: websearch_frames(rng)), websearch_mean()
    else:
        size, mean = (lambda: rng.randint(1, 30)), 15.5
        start = time.monotonic()
        for j in range(a.long):
            send(s, frame(1, j))
        flows.append({"flow": 1, "start": start - t_sync, "frames": a.long})
    gap = mean * SIZE * 8 / (a.load * a.rate_mbps * 1e6)
    due = time.monotonic()
    t_end = due + a.secs
    fid = 2
    while True:
        due += rng.expovariate(1.0 / gap)
        if due >= t_end or fid >= 50000:
            break
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        n = size()
        start = time.monotonic()
        for j in range(n):
            send(s, frame(fid, j))
        flows.append({"flow": fid, "start": start - t_sync, "frames": n})
        fid += 1
    json.dump({"flows": flows, "rate_mbps": a.rate_mbps, "load": a.load},
              open(a.out, "w"))
    return 0


def long_and_short(s, a):
    """First --warm transactions of --frames frames, one every 2 ms, on
    flows 1000 and up (so that pacer learns their size); then flow 0 sends
    --long frames at once; then flows 1..--flows send transactions of
    --frames frames in turn, paced to --short-mbps, for --secs seconds."""
    for k in range(a.warm):
        for j in range(a.frames):
            send(s, frame(1000 + k, j))
        time.sleep(0.002)
    for j in range(a.long):
        send(s, frame(0, j))
    per = a.frames * SIZE * 8 / (a.short_mbps * 1e6)
    t0 = time.monotonic()
    k, seq = 0, [0] * (a.flows + 1)
    while True:
        due = t0 + k * per
        now = time.monotonic()
        if now - t0 >= a.secs:
            break
        if due > now:
            time.sleep(due - now)
        f = 1 + k % a.flows
        for _ in range(a.frames):
            send(s, frame(f, seq[f]))
            seq[f] += 1
        k += 1
    json.dump({"transactions": k, "secs": time.monotonic() - t0},
              open(a.out, "w"))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("iface")
    ap.add_argument("--flows", type=int, default=1)
    ap.add_argument("--frames", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=0)
    ap.add_argument("--gap-ms", type=float, default=0)
    ap.add_argument("--long", type=int, default=0)
    ap.add_argument("--open", choices=["websearch", "longshort"])
    ap.add_argument("--load", type=float, default=0.7)
    ap.add_argument("--rate-mbps", type=float, default=100)
    ap.add_argument("--seed", type=int, default=1)
    # the flows' UDP source ports start here: another base, other hashes
    # (a multi-queue receiver spreads flows by one)
    ap.add_argument("--sport-base", type=int, default=10000)
    ap.add_argument("--warm", type=int, default=0)
    ap.add_argument("--short-mbps", type=float, default=0)
    ap.add_argument("--secs", type=float, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--go")
    a = ap.parse_args()
    global SPORT_BASE
    SPORT_BASE = a.sport_base
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
    s.bind((a.iface, 0))
    if a.go:
        end = time.monotonic() + 60
        while not os.path.exists(a.go):
            if time.monotonic() > end:
                print("txn_send.py: no %s after 60 s" % a.go, file=sys.stderr)
                return 1
            time.sleep(0.001)
    if a.open:
        return open_loop(s, a)
    if a.long:
        return long_and_short(s, a)
    spread = []
    for r in range(a.rounds):
        frames = [frame(f, r * a.frames + j)
                  for j in range(a.frames) for f in range(a.flows)]
        t0 = time.monotonic()
        for fr in frames:
            send(s, fr)
        spread.append(time.monotonic() - t0)
        time.sleep(a.gap_ms / 1000)
    json.dump({"spread_s": spread}, open(a.out, "w"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
