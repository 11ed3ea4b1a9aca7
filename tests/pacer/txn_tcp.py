#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Transactions over TCP between two hosts (tools/wire-test.sh --fct): the
# client sends each transaction as one message on a persistent connection,
# the server logs when the message's last byte arrived and answers one
# byte, which frees the connection for the next transaction. Both log
# CLOCK_MONOTONIC, one clock for every network namespace of the machine,
# so a transaction's completion time is the server's time of its last
# byte minus the client's time of its arrival.
#
#   txn_tcp.py server ADDR PORT --out JSON --ready FILE
#   txn_tcp.py client ADDR PORT --load L --rate-mbps R --secs S --seed X
#              --mss M --frame F --out JSON [--conns C] [--probes P]
#
# The client: first P probes, one-frame transactions 5 ms apart on the idle
# path (the judge takes the path's own latency from them); then web-search
# sizes (DCTCP's distribution, txn_send.py's WEBSEARCH, in frames of M
# payload bytes) arriving as a Poisson process at L of R mbit/s (in frames
# of F bytes on the wire) for S seconds. A transaction of n frames is n x M
# bytes: an 8-byte header (id, length) and zeros, so TCP sends it in n
# full segments (TCP_NODELAY: no segment waits for an ACK). Connections
# (C opened before the clock starts) are used least recently used first,
# so a connection rests between transactions as long as the load allows
# (pacer ends a transaction after 1 ms idle); when every one is busy a new
# one is opened, its handshake inside the transaction's time. Last, a
# message with id 0xffffffff tells the server to write its log and exit.
# JSON: the client's {"flows": [{flow, start, frames}], "probes": [...]},
# the server's {"done": {id: time}}; times in seconds of CLOCK_MONOTONIC.
import argparse
import collections
import json
import os
import random
import selectors
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from txn_send import websearch_frames, websearch_mean  # noqa: E402

QUIT = 0xffffffff
HDR = struct.Struct(">II")


def server(a):
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.addr, a.port))
    ls.listen(1024)
    ls.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, None)
    done = {}
    buf = bytearray(1 << 18)
    view = memoryview(buf)
    with open(a.ready, "w") as f:
        f.write("ready\n")
    while True:
        for key, _ in sel.select():
            if key.data is None:
                c, _ = ls.accept()
                c.setblocking(False)
                c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                # state: header bytes so far, then bytes left of the message
                sel.register(c, selectors.EVENT_READ, {"hdr": b"", "left": 0, "id": 0})
                continue
            c, st = key.fileobj, key.data
            try:
                n = c.recv_into(buf)
            except (BlockingIOError, InterruptedError):
                continue
            except ConnectionError:
                n = 0
            if n == 0:
                sel.unregister(c)
                c.close()
                continue
            off = 0
            while off < n:
                if st["left"] == 0:
                    take = min(HDR.size - len(st["hdr"]), n - off)
                    st["hdr"] += bytes(view[off:off + take])
                    off += take
                    if len(st["hdr"]) < HDR.size:
                        break
                    st["id"], length = HDR.unpack(st["hdr"])
                    st["hdr"] = b""
                    if st["id"] == QUIT:
                        json.dump({"done": done}, open(a.out, "w"))
                        return 0
                    st["left"] = length - HDR.size
                    if st["left"] > 0:
                        continue
                else:
                    take = min(st["left"], n - off)
                    st["left"] -= take
                    off += take
                    if st["left"] > 0:
                        break
                done[str(st["id"])] = time.monotonic()
                c.send(b"\x01")


class Conn:
    def __init__(self, addr, port):
        self.s = socket.create_connection((addr, port))
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.s.setblocking(False)
        self.out = None   # memoryview of what is left to send
        self.off = 0


def message(tid, nbytes):
    return memoryview(HDR.pack(tid, nbytes) + bytes(nbytes - HDR.size))


def client(a):
    rng = random.Random(a.seed)
    gap = websearch_mean() * a.frame * 8 / (a.load * a.rate_mbps * 1e6)
    idle = collections.deque(Conn(a.addr, a.port) for _ in range(a.conns))
    sel = selectors.DefaultSelector()
    busy, opened = 0, a.conns
    flows, probes = [], []

    def start(tid, frames):
        nonlocal busy, opened
        t = time.monotonic()
        if not idle:
            idle.append(Conn(a.addr, a.port))
            opened += 1
        c = idle.popleft()
        c.out, c.off = message(tid, frames * a.mss), 0
        sel.register(c.s, selectors.EVENT_WRITE, c)
        busy += 1
        return t

    def step(timeout):
        nonlocal busy
        for key, ev in sel.select(timeout):
            c = key.data
            if ev & selectors.EVENT_WRITE:
                try:
                    c.off += c.s.send(c.out[c.off:c.off + (1 << 20)])
                except (BlockingIOError, InterruptedError):
                    continue
                if c.off == len(c.out):
                    c.out = None
                    sel.modify(c.s, selectors.EVENT_READ, c)
            elif ev & selectors.EVENT_READ:
                if c.s.recv(16):
                    sel.unregister(c.s)
                    idle.append(c)
                    busy -= 1

    def drain(limit):
        end = time.monotonic() + limit
        while busy and time.monotonic() < end:
            step(0.1)
        if busy:
            raise SystemExit("txn_tcp.py: %d transactions unanswered after %g s" % (busy, limit))

    for k in range(a.probes):
        probes.append({"flow": 1000000 + k, "start": start(1000000 + k, 1), "frames": 1})
        drain(5)
        time.sleep(0.005)
    due = time.monotonic()
    end = due + a.secs
    tid = 1
    while True:
        due += rng.expovariate(1.0 / gap)
        if due >= end:
            break
        while True:
            now = time.monotonic()
            if now >= due:
                break
            step(due - now)
        n = websearch_frames(rng)
        flows.append({"flow": tid, "start": start(tid, n), "frames": n})
        tid += 1
    drain(60)
    q = idle.popleft()
    q.s.setblocking(True)
    q.s.sendall(HDR.pack(QUIT, HDR.size))
    json.dump({"flows": flows, "probes": probes, "rate_mbps": a.rate_mbps, "load": a.load,
               "mss": a.mss, "frame": a.frame, "conns": opened},
              open(a.out, "w"))
    return 0


def main():
    ap = argparse.ArgumentParser(description="TCP transactions for completion times")
    ap.add_argument("mode", choices=["server", "client"])
    ap.add_argument("addr")
    ap.add_argument("port", type=int)
    ap.add_argument("--out", required=True)
    ap.add_argument("--ready")
    ap.add_argument("--load", type=float, default=0.7)
    ap.add_argument("--rate-mbps", type=float, default=100)
    ap.add_argument("--secs", type=float, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mss", type=int, default=1448)
    ap.add_argument("--frame", type=int, default=1514)
    ap.add_argument("--conns", type=int, default=64)
    ap.add_argument("--probes", type=int, default=20)
    a = ap.parse_args()
    if a.mode == "server":
        if not a.ready:
            ap.error("server needs --ready FILE")
        return server(a)
    return client(a)


if __name__ == "__main__":
    sys.exit(main())
