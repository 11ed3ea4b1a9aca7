#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Two classes with different rates, from a configuration file: "fast"
# (dport 5201, 8 mbit/s) and "slow" (dport 6000, 2 mbit/s), two flows each,
# 1514-byte frames (windows.py takes the capture's largest frame as the
# frame pacer sizes a calendar bucket by, two to four of them: pacer sizes
# them by 1514 bytes), 0.6 s of departures, no port aggregate (classes
# under an aggregate are test_hierarchy.sh's). Judged from the output capture (times scaled to
# pacer's clock, lib.sh pcap_scale):
#   - windows of 1, 10 and 100 ms (windows.py): each class within its rate
#     x (W + L) + burst (the default, 1514 bytes) + its calendar bucket +
#     one frame, L the largest departure error pacer measured (printed);
#   - each class's rate by ls_rate (lib.sh) over its own frames, within
#     1 %, the frames left out no more than pacer counted late;
#   - each class's flows share its rate: 4 and 1 mbit/s per flow, within
#     +-2 % (1 % rate accuracy plus the last frame of one flow of two at a
#     class's end), first to last frame of each flow (pacer-pcapstat, on
#     the timeline ls_rate judged the class on: a stall of pacer's staging
#     it measured, which moved the class's schedule, is not counted
#     against a flow);
#   - every frame, each flow's in order.
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 2 --count 400 --size 1514 --dport 5201 2>/dev/null
"$gen" -o "$tmp/in.pcap" --append --flows 2 --count 100 --size 1514 --dport 6000 --sport 20000 2>/dev/null
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
    -- --replay --config "$tmp/c.cfg" --mbufs 4096 --max-flows 1024
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/c.err")"
conserved "$tmp/c.json"
expect "$tmp/c.json" 'd["ports"][0]["tx_packets"] == 500' \
    '[c["tx_packets"] for c in d["ports"][0]["classes"]] == [0, 400, 100]' \
    '[c["class"] for c in d["ports"][0]["classes"]] == ["default", "fast", "slow"]'
capture_check "capture" "$tmp/c.json" 0 "$tmp/out.pcap" "$tmp/s.json"
scale=$(pcap_scale "$tmp/c.json")
pcap_dport "$tmp/out.pcap" "$tmp/fast.pcap" 5201
pcap_dport "$tmp/out.pcap" "$tmp/slow.pcap" 6000
ls_check "class fast" "$tmp/fast.pcap" "$scale" "$tmp/c.json" 0 8e6 0.01
fast="$ls_bps ($ls_out of $ls_n left out, allowed $ls_allowed)"
ls_check "class slow" "$tmp/slow.pcap" "$scale" "$tmp/c.json" 0 2e6 0.01
slow="$ls_bps ($ls_out of $ls_n left out, allowed $ls_allowed)"
windows_judge "classes fast 8 mbit/s, slow 2 mbit/s" "$tmp/c.json" 0 1514 "$tmp/out.pcap" \
    fast:dport=5201:8mbit slow:dport=6000:2mbit
expect "$tmp/s.json" 'd["packets"] == 500' 'd["flow_count"] == 4'
for c in fast slow; do
    "$stat" --json --time-scale 1 "$tmp/$c.closed.pcap" >"$tmp/$c.json" ||
        fail "pacer-pcapstat $tmp/$c.closed.pcap failed"
done
expect "$tmp/fast.json" 'd["flow_count"] == 2' \
    'all(abs(f["rate_bps"] - 4e6) <= 0.02 * 4e6 for f in d["flows"])'
expect "$tmp/slow.json" 'd["flow_count"] == 2' \
    'all(abs(f["rate_bps"] - 1e6) <= 0.02 * 1e6 for f in d["flows"])'
echo "ok: class fast $fast bit/s, slow $slow bit/s by ls_rate; per flow: $(python3 -c "import json, sys; print(', '.join('%s %.0f' % (f['key'], f['rate_bps']) for a in sys.argv[1:] for f in json.load(open(a))['flows']))" "$tmp/fast.json" "$tmp/slow.json")"
