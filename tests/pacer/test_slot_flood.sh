#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# A flood into one slot, with exact counts. The wheel's clock is held at
# its start (tick 0) for 300 ms (PACER_TEST_WHEEL_HOLD_MS, a stalled
# consumer) while 2000 frames of one flow at 800 bit/s arrive; with
# --horizon 1000 and --horizon-policy cap, frame 0 leaves at its arrival
# (within the horizon: pacer starts in far less than 1 s) and frames 1..
# (10 s apart by the rate) are all capped into the last slot of the
# horizon, tick 999999 of 1 us, and its neighbour 1000000 is in the same
# level-0 block. A level-0 slot holds 512 (the wheel's default
# slot_capacity): 512 stay, 512 spill into the next slot, the other 975
# are dropped "spill" (both slots full), exactly. What leaves is frame 0
# and the first 1024 capped, byte for byte in input order.
source "$(dirname "$0")/lib.sh"
# the PACER_TEST_* hooks are in the test build only
[ -x "$pacer_hooks" ] || fail "no pacer-test-hooks (the fifth argument, tests/pacer/meson.build)"
pacer=$pacer_hooks

"$gen" -o "$tmp/in.pcap" --flows 1 --count 2000 --size 1000 2>/dev/null
"$gen" -o "$tmp/first.pcap" --flows 1 --count 1025 --size 1000 2>/dev/null
rc=0
PACER_TEST_WHEEL_HOLD_MS=300 run_pacer f $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") -- --replay \
    --flow-rate 800bit --burst 1500 --horizon 1000 --horizon-policy cap \
    --exit-on-idle 300 --mbufs 4096 --max-flows 1024
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/f.err")"
grep -q "wheel clock held" "$tmp/f.err" || fail "the test hook did not take: $(cat "$tmp/f.err")"
conserved "$tmp/f.json"
expect "$tmp/f.json" 'd["ports"][0]["rx_packets"] == 2000' \
    'd["ports"][0]["wheel"]["horizon_cap"] == 1999' \
    'd["ports"][0]["wheel"]["spill"] == 512' \
    'd["ports"][0]["drop_wheel_full"] == 1999 - 2 * 512' \
    'd["ports"][0]["dropped_total"] == d["ports"][0]["drop_wheel_full"]' \
    'd["ports"][0]["tx_packets"] == 1 + 2 * 512'
same_frames "$tmp/out.pcap" "$tmp/first.pcap"
echo "ok: 2000 in, 1999 capped into one slot, 512 spilled, 975 dropped (both slots full), 1025 sent in order"
