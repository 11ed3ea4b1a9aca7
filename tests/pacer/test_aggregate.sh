#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# 100 flows under a 20 mbit/s port aggregate: the aggregate binds. 1400
# frames of 1514 bytes (0.85 s at 20 mbit/s), all arriving at once. Each
# flow is also given 1 mbit/s, which never binds here (a flow's share of
# the aggregate is 200 kbit/s): a flow rate and an aggregate that both bind
# are test_hierarchy.sh's. 1514-byte frames: windows.py takes the
# capture's largest frame as the frame pacer sizes a calendar bucket by
# (two to four of them), and pacer sizes them by 1514 bytes. Judged from
# the output capture (times scaled to pacer's clock, lib.sh pcap_scale):
#   - the aggregate by ls_rate (lib.sh) within 1 %, the frames it left out
#     no more than pacer itself counted late;
#   - windows of 1, 10 and 100 ms (windows.py): the aggregate within 20
#     mbit/s x (W + L) + burst (the default, 1514 bytes) + its calendar
#     bucket + one frame, each flow within 1 mbit/s x (W + L) + burst +
#     frame, L the largest departure error pacer measured (printed);
#   - every flow gets its share, 200 kbit/s, within +-5 % (first to last
#     frame of the flow, pacer-pcapstat, on the timeline ls_rate judged:
#     a stall of pacer's staging it measured, which moved every flow's
#     schedule, is not counted against a flow), all 14 of its frames, in
#     order.
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 100 --count 1400 --size 1514 2>/dev/null
run_pacer a $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") \
    -- --replay --rate 20mbit --flow-rate 1mbit --exit-on-idle 300 --mbufs 8192 --max-flows 1024
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/a.err")"
conserved "$tmp/a.json"
expect "$tmp/a.json" 'd["ports"][0]["tx_packets"] == 1400' \
    'd["ports"][0]["flows_new"] == 100' 'd["ports"][0]["dropped_total"] == 0'
capture_check "capture" "$tmp/a.json" 0 "$tmp/out.pcap" "$tmp/s.json"
ls_check "aggregate" "$tmp/out.pcap" "" "$tmp/a.json" 0 20e6 0.01
windows_judge "aggregate 20 mbit/s over 100 flows of 1 mbit/s" "$tmp/a.json" 0 1514 \
    "$tmp/out.pcap" aggregate:all:20mbit flow:flows:all:1mbit
"$stat" --json --time-scale 1 "$tmp/out.closed.pcap" >"$tmp/sc.json" ||
    fail "pacer-pcapstat $tmp/out.closed.pcap failed"
expect "$tmp/s.json" 'd["packets"] == 1400' 'd["flow_count"] == 100' \
    'all(f["packets"] == 14 and f["seq_errors"] == 0 for f in d["flows"])'
expect "$tmp/sc.json" 'd["packets"] == 1400' 'd["flow_count"] == 100' \
    'all(abs(f["rate_bps"] - 2e5) <= 0.05 * 2e5 for f in d["flows"])'
python3 -c "import json; d=json.load(open('$tmp/sc.json')); r=[f['rate_bps'] for f in d['flows']]; print('ok: aggregate %.0f bit/s first to last ($ls_bps by ls_rate, $ls_out of $ls_n left out, allowed $ls_allowed; $ls_closed ns of stalls closed), flows %.0f..%.0f bit/s' % (d['rate_bps'], min(r), max(r)))"
