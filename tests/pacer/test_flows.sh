#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The flow table: one million flows (16 sources x 62500 ports, one 64-byte
# frame each) all fit the default table (1M entries): 1000000 created,
# none refused; with --flow-idle 100 every one of them is aged out before
# the 1 s idle exit. A table too small (--max-flows 1000, 1500 flows)
# refuses exactly 500, and their packets are still forwarded. Each run's
# output capture (pacer-pcapstat) holds exactly the frames pacer counted
# sent, one flow for every flow that went in (1000000 and 1500: a refused
# flow's frames still leave), each flow's frames in order.
source "$(dirname "$0")/lib.sh"

for i in $(seq 0 15); do
    "$gen" -o "$tmp/m.pcap" --append --flows 62500 --count 62500 --size 64 \
        --src "198.18.1.$((i + 1))" --sport 1024 2>/dev/null
done
run_pacer m $(eal "net_pcap0,rx_pcap=$tmp/m.pcap,tx_pcap=$tmp/mo.pcap" | sed 's/-m 512/-m 1024/') \
    -- --exit-on-idle 1000 --mbufs 8192 --flow-idle 100
[ "$rc" -eq 0 ] || fail "1M flows: pacer exited $rc: $(cat "$tmp/m.err")"
conserved "$tmp/m.json"
expect "$tmp/m.json" 'd["ports"][0]["tx_packets"] == 1000000' \
    'd["ports"][0]["flows_new"] == 1000000' \
    'd["ports"][0]["flow_table_full"] == 0' \
    'd["ports"][0]["flows_aged"] == 1000000' 'len(d["flows"]) == 0'
capture_check "1M flows: capture" "$tmp/m.json" 0 "$tmp/mo.pcap" "$tmp/mc.json" --flows-top 0
expect "$tmp/mc.json" 'd["flow_count"] == 1000000' 'd["classify"]["ok"] == 1000000'
rm -f "$tmp/m.pcap" "$tmp/mo.pcap"

prefix="$prefix-small"
"$gen" -o "$tmp/s.pcap" --flows 1500 --count 1500 --size 64 2>/dev/null
run_pacer s $(eal "net_pcap0,rx_pcap=$tmp/s.pcap,tx_pcap=$tmp/so.pcap") \
    -- --exit-on-idle 300 --mbufs 4096 --max-flows 1000
[ "$rc" -eq 0 ] || fail "small table: pacer exited $rc: $(cat "$tmp/s.err")"
conserved "$tmp/s.json"
expect "$tmp/s.json" 'd["ports"][0]["tx_packets"] == 1500' \
    'd["ports"][0]["flows_new"] == 1000' \
    'd["ports"][0]["flow_table_full"] == 500' 'len(d["flows"]) == 1000'
capture_check "small table: capture" "$tmp/s.json" 0 "$tmp/so.pcap" "$tmp/sc.json"
expect "$tmp/sc.json" 'd["flow_count"] == 1500' 'all(f["packets"] == 1 for f in d["flows"])'
echo "ok: 1000000 flows created and aged; a 1000-entry table refuses 500 of 1500, all forwarded"
