#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# A statistics snapshot pauses the workers at a handshake
# (pcr_stats_snapshot()); a control lcore kept from its CPU meanwhile must
# not hold the departures. It used to: with the control lcore and a
# busy-polling RX lcore on one CPU, the first snapshot kept the TX lcore
# parked for two scheduler slices, and the 57 frames due in those 11 ms
# left late at once (test_ports' three-lcore case, a CI failure). Now a
# worker that is not claimed within PCR_SYNC_PARK_US (200 us) goes on, and
# the control lcore tries again.
#
# Here the test build's PACER_TEST_SNAPSHOT_STALL_MS=300 makes the first
# try of every handshake sleep 300 ms after its request, the control
# lcore's CPU lost; 6000 frames at 20 mbit/s (1.2 s) with a snapshot at the
# start and one a second (--stats-period 1):
#   - every frame out, in order per flow, conserved, the pool empty;
#   - each handshake retried (snapshot_retries at least the snapshots
#     taken while the workers ran: the first and one per stats line; on a
#     busy machine a control lcore that lost its CPU for 200 us more
#     retries one more time), none read inconsistent, every stats line
#     consistent (the conservation check printed nothing);
#   - no departure 100 ms late or more (departure_error_ns max; held for
#     the hook's 300 ms, the frames due then left up to 300 ms late), and
#     the rate by ls_check within 1 %.
source "$(dirname "$0")/lib.sh"
[ -n "$pacer_hooks" ] || fail "usage: $0 PACER PCAPGEN PCAPSTAT OFFLOAD-DOUBLE PACER-TEST-HOOKS"

"$gen" -o "$tmp/in.pcap" --flows 4 --count 6000 --size 500 2>/dev/null
rc=0
PACER_TEST_SNAPSHOT_STALL_MS=300 timeout 120 "$pacer_hooks" \
    $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") \
    -- --replay --rate 20mbit --exit-on-idle 300 --mbufs 8192 --stats-period 1 \
    --stats-json "$tmp/s.json" >"$tmp/o" 2>"$tmp/e" || rc=$?
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/e")"
grep -q "test hook: the first try of every snapshot's handshake sleeps 300 ms" "$tmp/e" ||
    fail "the hook did not say it was on: $(cat "$tmp/e")"
conserved "$tmp/s.json"
lines=$(grep -c '^\[ *[0-9.]*s\]' "$tmp/o" || true)
[ "$lines" -ge 1 ] || fail "no stats line in a 1.5 s run with --stats-period 1: $(cat "$tmp/o")"
expect "$tmp/s.json" 'd["ports"][0]["rx_packets"] == 6000' 'd["ports"][0]["tx_packets"] == 6000' \
    "d['snapshot_retries'] >= 1 + $lines" 'd["snapshot_inconsistent"] == 0' \
    'd["departure_error_ns"]["max"] < 100e6'
if grep -i "inconsistent\|conservation" "$tmp/e"; then
    fail "a stats line's check complained: $(cat "$tmp/e")"
fi
same_flow_frames "$tmp/in.pcap" "$tmp/out.pcap" || fail "frames differ (or a flow out of order)"
ls_check "rate" "$tmp/out.pcap" "" "$tmp/s.json" 0 20e6 0.01
echo "ok: 6000 frames at 20 mbit/s, $((lines + 1)) handshakes retried $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["snapshot_retries"])' "$tmp/s.json") times after the control lcore's 300 ms, none inconsistent; departure error max $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["departure_error_ns"]["max"])' "$tmp/s.json") ns"
