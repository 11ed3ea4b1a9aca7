#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Horizon drop and cap. One flow at 8 mbit/s, 300 frames of 1000 bytes
# (1 ms each), arriving at once, --burst 1500: frame 0 leaves at once,
# frame i >= 1 at (i - 0.5) ms. With a 100 ms horizon frames 0..100 fit
# (the last at 99.5 ms) and 101.. (100.5 ms on) do not. The timestamper
# drops them without charging the flow's policy, so as the arrival goes on
# one more frame fits each millisecond: 101 leave if the 300 arrive
# within half a millisecond (as they do here), one more per millisecond
# the arrival takes (slower under a sanitizer); all the others are
# dropped under "horizon", exactly. With --horizon-policy cap all 300
# leave and 199 are counted horizon_cap (the wheel caps, relative to its
# own clock) when the arrival takes under half a millisecond; as with
# drops, one fewer per millisecond the arrival takes (CI's sanitizer
# build measured 198).
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 1 --count 300 --size 1000 2>/dev/null
common=(--flow-rate 8mbit --burst 1500 --horizon 100 --exit-on-idle 300 --mbufs 4096 --max-flows 1024)
run_pacer d $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/d.pcap") -- --replay "${common[@]}"
[ "$rc" -eq 0 ] || fail "pacer (drop) exited $rc: $(cat "$tmp/d.err")"
conserved "$tmp/d.json"
expect "$tmp/d.json" '101 <= d["ports"][0]["tx_packets"] <= 111' \
    'd["ports"][0]["drop_horizon"] == 300 - d["ports"][0]["tx_packets"]' \
    'd["ports"][0]["dropped_total"] == d["ports"][0]["drop_horizon"]'
sent=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0]["tx_packets"])' "$tmp/d.json")
"$stat" --json --time-scale "$(pcap_scale "$tmp/d.json")" "$tmp/d.pcap" >"$tmp/ds.json"
# every frame sent left within the horizon of its arrival: the last one
# 100 ms + 1 ms per extra frame after the first, plus the largest
# departure error pacer measured (L: with a CPU hog on each vCPU the last
# frame left 103.0 ms after the first, 2 ms past the bound without it)
L=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0]["departure_error_ns"]["max"])' "$tmp/d.json")
expect "$tmp/ds.json" "d['packets'] == $sent" \
    "d['duration_ns'] <= (100 + ($sent - 101) + 1) * 10**6 + $L"

prefix="$prefix-cap"
run_pacer c $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/c.pcap") -- --replay "${common[@]}" --horizon-policy cap
[ "$rc" -eq 0 ] || fail "pacer (cap) exited $rc: $(cat "$tmp/c.err")"
conserved "$tmp/c.json"
expect "$tmp/c.json" 'd["ports"][0]["tx_packets"] == 300' \
    '189 <= d["ports"][0]["wheel"]["horizon_cap"] <= 199' \
    'd["ports"][0]["dropped_total"] == 0'
capped=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0]["wheel"]["horizon_cap"])' "$tmp/c.json")
echo "ok: drop $sent sent / $((300 - sent)) dropped beyond the horizon (departure error max $L ns); cap 300 sent / $capped capped"

# Exact counts, with a margin of 0.4 s for the arrival: the same 300
# frames in one flow of 8 kbit/s (1000 bytes a second). Frame 0 leaves at
# once (the burst); frame 1 would leave at 0.5 s, past the 100 ms
# horizon, and so would every later one (a dropped frame charges
# nothing) until the arrival has gone on 0.4 s: exactly 1 sent and 299
# dropped "horizon". With cap, all 300 sent and exactly 299 capped (each
# frame's departure is 0.5 s or more ahead of any wheel clock that lags
# less than 0.4 s), all of them within the horizon of their arrival.
slow=(--flow-rate 8kbit --burst 1500 --horizon 100 --exit-on-idle 300 --mbufs 4096 --max-flows 1024)
prefix="$prefix-slow"
run_pacer sd $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/sd.pcap") -- --replay "${slow[@]}"
[ "$rc" -eq 0 ] || fail "pacer (slow, drop) exited $rc: $(cat "$tmp/sd.err")"
conserved "$tmp/sd.json"
expect "$tmp/sd.json" 'd["ports"][0]["tx_packets"] == 1' \
    'd["ports"][0]["drop_horizon"] == 299' \
    'd["ports"][0]["dropped_total"] == 299'
prefix="$prefix-cap"
run_pacer sc $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/sc.pcap") -- --replay "${slow[@]}" --horizon-policy cap
[ "$rc" -eq 0 ] || fail "pacer (slow, cap) exited $rc: $(cat "$tmp/sc.err")"
conserved "$tmp/sc.json"
expect "$tmp/sc.json" 'd["ports"][0]["tx_packets"] == 300' \
    'd["ports"][0]["wheel"]["horizon_cap"] == 299' \
    'd["ports"][0]["dropped_total"] == 0'
"$stat" --json --time-scale "$(pcap_scale "$tmp/sc.json")" "$tmp/sc.pcap" >"$tmp/scs.json"
expect "$tmp/scs.json" 'd["packets"] == 300' 'd["duration_ns"] <= (100 + 100) * 10**6'
echo "ok: at 8 kbit/s exactly 1 sent / 299 dropped beyond the horizon; cap 300 sent / 299 capped"

# The horizon under a port aggregate (--rate 8mbit, no flow rate): the
# packets that meet the aggregate's backlog wait in per-flow staging
# (--stage-lead), which holds at most horizon x rate (100 ms, 100 frames
# of 1000 bytes): the others are dropped for the horizon, exactly, as
# above: 101 to 111 leave, within the horizon of their arrival, plus any
# time the staging went unserved (stage_stall_ns: what it holds leaves that
# much later; a sanitizer build on a busy machine measured 8 ms).
run_pacer a $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/a.pcap") -- --replay \
    --rate 8mbit --burst 1500 --horizon 100 --exit-on-idle 300 --mbufs 4096 --max-flows 1024
[ "$rc" -eq 0 ] || fail "pacer (aggregate) exited $rc: $(cat "$tmp/a.err")"
conserved "$tmp/a.json"
expect "$tmp/a.json" '101 <= d["ports"][0]["tx_packets"] <= 111' \
    'd["ports"][0]["staged_total"] >= 98' \
    'd["ports"][0]["drop_horizon"] == 300 - d["ports"][0]["tx_packets"]' \
    'd["ports"][0]["dropped_total"] == d["ports"][0]["drop_horizon"]'
"$stat" --json --time-scale "$(pcap_scale "$tmp/a.json")" "$tmp/a.pcap" >"$tmp/as.json"
stall=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0]["stage_stall_ns"])' "$tmp/a.json")
expect "$tmp/as.json" "d['duration_ns'] <= 101e6 + $stall" 'd["seq_errors"] == 0'
echo "ok: aggregate: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][0]["tx_packets"])' "$tmp/a.json") of 300 left (horizon x rate held in staging), the rest dropped for the horizon"
