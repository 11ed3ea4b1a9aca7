#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Horizon drop and cap, exact counts. One flow at 8 mbit/s, 300 frames of
# 1000 bytes (1 ms each), arriving at once, --burst 1500: frame 0 leaves at
# once, frame i >= 1 at (i - 0.5) ms. With a 100 ms horizon frames 0..100
# fit (the last at 99.5 ms) and 101..299 (100.5 ms on) do not: 199 are
# dropped under "horizon", or with --horizon-policy cap all 300 leave and
# 199 are counted horizon_cap.
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 1 --count 300 --size 1000 2>/dev/null
common=(--flow-rate 8mbit --burst 1500 --horizon 100 --exit-on-idle 300 --mbufs 4096 --max-flows 1024)
run_pacer d $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/d.pcap") -- "${common[@]}"
[ "$rc" -eq 0 ] || fail "pacer (drop) exited $rc: $(cat "$tmp/d.err")"
conserved "$tmp/d.json"
expect "$tmp/d.json" 'd["ports"][0]["tx_packets"] == 101' \
    'd["ports"][0]["dropped"]["horizon"] == 199' \
    'd["ports"][0]["dropped_total"] == 199'
[ "$("$stat" --json "$tmp/d.pcap" | python3 -c 'import json,sys; print(json.load(sys.stdin)["packets"])')" = 101 ] ||
    fail "drop: the capture does not hold 101 frames"

prefix="$prefix-cap"
run_pacer c $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/c.pcap") -- "${common[@]}" --horizon-policy cap
[ "$rc" -eq 0 ] || fail "pacer (cap) exited $rc: $(cat "$tmp/c.err")"
conserved "$tmp/c.json"
expect "$tmp/c.json" 'd["ports"][0]["tx_packets"] == 300' \
    'd["ports"][0]["wheel"]["horizon_cap"] == 199' \
    'd["ports"][0]["dropped_total"] == 0'
echo "ok: drop 101 sent / 199 dropped; cap 300 sent / 199 capped"
