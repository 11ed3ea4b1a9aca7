#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# 100 flows, 1 mbit/s each allowed, under a 20 mbit/s port aggregate: the
# aggregate binds. 2000 frames of 1000 bytes (0.8 s at 20 mbit/s); the
# aggregate comes out at 20 mbit/s +-1 %, and every flow gets its share,
# 200 kbit/s, within +-5 %.
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 100 --count 2000 --size 1000 2>/dev/null
run_pacer a $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") \
    -- --rate 20mbit --flow-rate 1mbit --exit-on-idle 300 --mbufs 8192 --max-flows 1024
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/a.err")"
conserved "$tmp/a.json"
expect "$tmp/a.json" 'd["ports"][0]["tx_packets"] == 2000' \
    'd["ports"][0]["flows_new"] == 100'
"$stat" --json --time-scale "$(pcap_scale "$tmp/a.json")" "$tmp/out.pcap" >"$tmp/s.json"
read -r agg late < <(ls_rate "$tmp/out.pcap" "$(pcap_scale "$tmp/a.json")")
rate_within "$agg" 20e6 0.01 "aggregate (lib.sh ls_rate)"
expect "$tmp/s.json" 'd["packets"] == 2000' 'd["flow_count"] == 100' \
    'all(abs(f["rate_bps"] - 2e5) <= 0.05 * 2e5 for f in d["flows"])' \
    'all(f["packets"] == 20 for f in d["flows"])'
python3 -c "import json; d=json.load(open('$tmp/s.json')); r=[f['rate_bps'] for f in d['flows']]; print('ok: aggregate %.0f bit/s ($agg by ls_rate, $late late left out), flows %.0f..%.0f bit/s' % (d['rate_bps'], min(r), max(r)))"
