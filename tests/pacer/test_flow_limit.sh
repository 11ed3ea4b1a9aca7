#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# flow_limit: 32 frames of flow A (sport 10000) at 1 mbit/s arrive in one
# RX burst with --flow-limit 10: 10 are queued, 22 dropped under
# "flow_limit" before the TX side runs. Then 10 frames of flow B (sport
# 20000), the same limit, in the next RX burst, while A still has frames
# queued (A's credit, 1514 bytes, lets its first 8 go at once, then one
# every 1.6 ms): B is not limited by A, all 10 of its frames are sent (a
# limit shared by the port, with A's last two still queued, would have
# dropped at least two of B's).
# Judged from the output capture too: exactly the 20 frames pacer counted
# sent, A's first 10 (sequence 0-9: the first to arrive are the ones
# queued) and all of B's, each flow in order, each within 1 mbit/s x (W +
# L) + burst + frame over 1, 10 and 100 ms windows (windows.py, L pacer's
# own largest departure error).
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 1 --count 32 --size 200 2>/dev/null
"$gen" -o "$tmp/in.pcap" --append --flows 1 --count 10 --size 200 --sport 20000 2>/dev/null
run_pacer f $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") \
    -- --flow-rate 1mbit --flow-limit 10 --exit-on-idle 300 --mbufs 4096 --max-flows 1024
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/f.err")"
conserved "$tmp/f.json"
expect "$tmp/f.json" 'd["ports"][0]["rx_packets"] == 42' \
    'd["ports"][0]["tx_packets"] == 20' \
    'd["ports"][0]["drop_flow_limit"] == 22' \
    'd["ports"][0]["dropped_total"] == 22' \
    'sorted(f["tx_packets"] for f in d["flows"]) == [10, 10]'
capture_check "capture" "$tmp/f.json" 0 "$tmp/out.pcap" "$tmp/s.json"
python3 "$top/tests/tools/pcaptool.py" check "$tmp/out.pcap" >"$tmp/c.json"
expect "$tmp/c.json" \
    '[p["mark"][1] for p in d["packets"] if p["sport"] == 10000] == list(range(10))' \
    '[p["mark"][1] for p in d["packets"] if p["sport"] == 20000] == list(range(10))' ||
    fail "capture: not A's first 10 and all 10 of B's (see above)"
windows_judge "two flows at 1 mbit/s, --flow-limit 10" "$tmp/f.json" 0 1514 \
    "$tmp/out.pcap" flow:flows:all:1mbit
echo "ok: A: 10 sent (sequence 0-9), 22 dropped by flow_limit; B: all 10 sent, not limited by A"

# The same under a port aggregate of 1 mbit/s and no flow rate: what A
# cannot send at once waits in per-flow staging (--stage-lead), which the
# limit covers as well: again 10 of A's kept (the first), 22 dropped, all
# 10 of B's sent, each flow in order; the aggregate within its bound.
run_pacer g $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/outg.pcap") \
    -- --rate 1mbit --flow-limit 10 --exit-on-idle 300 --mbufs 4096 --max-flows 1024
[ "$rc" -eq 0 ] || fail "aggregate: pacer exited $rc: $(cat "$tmp/g.err")"
conserved "$tmp/g.json"
expect "$tmp/g.json" 'd["ports"][0]["rx_packets"] == 42' \
    'd["ports"][0]["tx_packets"] == 20' \
    'd["ports"][0]["staged_total"] >= 10' \
    'd["ports"][0]["drop_flow_limit"] == 22' \
    'd["ports"][0]["dropped_total"] == 22' \
    'sorted(f["tx_packets"] for f in d["flows"]) == [10, 10]'
python3 "$top/tests/tools/pcaptool.py" check "$tmp/outg.pcap" >"$tmp/cg.json"
expect "$tmp/cg.json" \
    '[p["mark"][1] for p in d["packets"] if p["sport"] == 10000] == list(range(10))' \
    '[p["mark"][1] for p in d["packets"] if p["sport"] == 20000] == list(range(10))' ||
    fail "aggregate: capture: not A's first 10 and all 10 of B's (see above)"
windows_judge "aggregate 1 mbit/s, --flow-limit 10, staged" "$tmp/g.json" 0 1514 \
    "$tmp/outg.pcap" aggregate:all:1mbit
echo "ok: aggregate: A: 10 sent, 22 dropped by flow_limit, staging included; B: all 10 sent"
