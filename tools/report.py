#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
"""report.py STATS.json WIRE.json: a pacer run for people.

STATS.json is pacer --stats-json; WIRE.json is pacer-pcapstat --json of the
capture of what pacer sent. Rates "achieved" are the wire's, measured from
the capture's timestamps.
"""
import json
import sys


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
    ok = True
    for p in st["ports"]:
        rx = sum(q["rx_packets"] for q in st["ports"] if q["peer"] == p["port"])
        drops = {k: v for k, v in p["dropped"].items() if v}
        print("port %d (%s): received %d, sent %d, dropped %d%s, queued %d"
              % (p["port"], p["name"], rx, p["tx_packets"], p["dropped_total"],
                 " (" + ", ".join("%s %d" % kv for kv in drops.items()) + ")"
                 if drops else "", p["queued"]))
        cons = rx == p["tx_packets"] + p["dropped_total"] + p["queued"]
        ok &= cons
        print("  aggregate: configured %s, achieved %s on the wire"
              % (rate(p["rate_bps"]), rate(wire["rate_bps"])))
        print("  %-10s %-28s %10s %10s %10s %12s" % ("class", "match", "rate",
              "flow-rate", "packets", "achieved"))
        flows = [f for f in st["flows"] if f["egress"] == p["port"]]
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
            print("  %-10s %-28s %10s %10s %10d %12s" % (
                c["class"], c["match"][:28] or "(the rest)", rate(c["rate_bps"]),
                rate(c["flow_rate_bps"]), c["tx_packets"], ach))
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
    return 0 if ok and st["mempool_in_use_at_exit"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
