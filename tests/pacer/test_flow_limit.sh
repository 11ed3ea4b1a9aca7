#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# flow_limit: 32 frames of one flow at 1 mbit/s arrive in one RX burst
# with --flow-limit 10: 10 are queued, 22 dropped under "flow_limit"
# before the TX side runs; a second flow with the same limit is unaffected.
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 1 --count 32 --size 200 2>/dev/null
run_pacer f $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") \
    -- --flow-rate 1mbit --flow-limit 10 --exit-on-idle 300 --mbufs 4096 --max-flows 1024
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/f.err")"
conserved "$tmp/f.json"
expect "$tmp/f.json" 'd["ports"][0]["rx_packets"] == 32' \
    'd["ports"][0]["tx_packets"] == 10' \
    'd["ports"][0]["dropped"]["flow_limit"] == 22' \
    'd["ports"][0]["dropped_total"] == 22'
echo "ok: 10 sent, 22 dropped by flow_limit"
