#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Two classes with different rates, from a configuration file: "fast"
# (dport 5201, 8 mbit/s) and "slow" (dport 6000, 2 mbit/s), two flows each,
# 1000-byte frames. Each class's flows share its rate: 4 and 1 mbit/s per
# flow, within +-2 % (1 % rate accuracy plus the last frame of one flow of
# two at a class's end).
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 2 --count 400 --size 1000 --dport 5201 2>/dev/null
"$gen" -o "$tmp/in.pcap" --append --flows 2 --count 100 --size 1000 --dport 6000 --sport 20000 2>/dev/null
cat >"$tmp/c.cfg" <<'CFG'
[pacer]
exit-on-idle = 300
[class fast]
match = proto udp dport 5201
rate = 8mbit
[class slow]
match = proto udp dport 6000
rate = 2mbit
CFG
run_pacer c $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") \
    -- --config "$tmp/c.cfg" --mbufs 4096 --max-flows 1024
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/c.err")"
conserved "$tmp/c.json"
expect "$tmp/c.json" 'd["ports"][0]["tx_packets"] == 500' \
    '[c["tx_packets"] for c in d["ports"][0]["classes"]] == [0, 400, 100]' \
    '[c["class"] for c in d["ports"][0]["classes"]] == ["default", "fast", "slow"]'
"$stat" --json --time-scale "$(pcap_scale "$tmp/c.json")" "$tmp/out.pcap" >"$tmp/s.json"
expect "$tmp/s.json" 'd["packets"] == 500' 'd["flow_count"] == 4' \
    'all(abs(f["rate_bps"] - 4e6) <= 0.02 * 4e6 for f in d["flows"] if f["key"].endswith(":5201"))' \
    'all(abs(f["rate_bps"] - 1e6) <= 0.02 * 1e6 for f in d["flows"] if f["key"].endswith(":6000"))'
echo "ok: $(python3 -c "import json; d=json.load(open('$tmp/s.json')); print(', '.join('%s %.0f' % (f['key'], f['rate_bps']) for f in d['flows']))")"
