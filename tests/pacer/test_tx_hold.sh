#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# TX retry and hold: the port (through pacer's PACER_TEST_TX_BUDGET hook, a
# TX callback in front of the real PMD) takes 20 packets and then refuses
# everything. 50 frames arrive at once, unpaced: the first burst of 32 is
# cut to 20, the other 12 are kept and retried (tx_retry > 0), and once the
# port has made no progress for --tx-hold 50 ms the 30 left are dropped
# under tx_drop: exactly 20 sent, 30 dropped, none lost. Then a port that
# takes only a share of each burst (below).
source "$(dirname "$0")/lib.sh"
# the PACER_TEST_* hooks are in the test build only: the pacer that is
# installed ignores the variable (all 50 sent, no hook line)
[ -x "$pacer_hooks" ] || fail "no pacer-test-hooks (the fifth argument, tests/pacer/meson.build)"
"$gen" -o "$tmp/in.pcap" --flows 1 --count 50 --size 200 2>/dev/null
PACER_TEST_TX_BUDGET=20 run_pacer plain $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/plain.pcap") \
    -- --tx-hold 50 --exit-on-idle 300 --mbufs 4096 --max-flows 64
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/plain.err")"
! grep -q "test hook" "$tmp/plain.err" "$tmp/plain.out" || fail "the installed pacer has a test hook: $(grep "test hook" "$tmp/plain.err")"
expect "$tmp/plain.json" 'd["ports"][0]["tx_packets"] == 50'
echo "ok: the pacer without test hooks ignores PACER_TEST_TX_BUDGET"
pacer=$pacer_hooks

export PACER_TEST_TX_BUDGET=20
run_pacer t $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") \
    -- --tx-hold 50 --exit-on-idle 300 --mbufs 4096 --max-flows 64
unset PACER_TEST_TX_BUDGET
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/t.err")"
grep -q "test hook: accepts 20 packets" "$tmp/t.err" || fail "hook not active: $(cat "$tmp/t.err")"
conserved "$tmp/t.json"
expect "$tmp/t.json" 'd["ports"][0]["tx_packets"] == 20' \
    'd["ports"][0]["tx_retry"] > 0' \
    'd["ports"][0]["drop_tx_drop"] == 30' \
    'd["ports"][0]["dropped_total"] == 30'
[ "$("$stat" --json "$tmp/out.pcap" | python3 -c 'import json,sys; print(json.load(sys.stdin)["packets"])')" = 20 ] ||
    fail "the capture does not hold the 20 frames sent"
echo "ok: 20 sent, $(python3 -c "import json; print(json.load(open('$tmp/t.json'))['ports'][0]['tx_retry'])") retries, 30 dropped after the hold"

# TX backpressure: the port (PACER_TEST_TX_SHARE=50) takes half of each
# burst and none of every fourth, for the whole run. 3000 frames of 8 flows
# paced at 100 mbit/s: every one is sent (the rest of each burst waits and
# is retried, tx_retry counting each refusal), none dropped, each flow's
# frames in their order (pacer-pcapgen sequence numbers; with one aggregate
# policy and every packet stamped on arrival, --stage-lead 0, the whole
# capture is the input, in order: the flows do not take turns), the pool
# whole.
"$gen" -o "$tmp/in8.pcap" --flows 8 --count 3000 --size 200 2>/dev/null
export PACER_TEST_TX_SHARE=50
run_pacer s $(eal "net_pcap0,rx_pcap=$tmp/in8.pcap,tx_pcap=$tmp/out8.pcap") \
    -- --rate 100mbit --stage-lead 0 --exit-on-idle 300 --mbufs 8192 --max-flows 64
unset PACER_TEST_TX_SHARE
[ "$rc" -eq 0 ] || fail "share: pacer exited $rc: $(cat "$tmp/s.err")"
grep -q "test hook: accepts 50 % of each burst" "$tmp/s.err" || fail "share hook not active: $(cat "$tmp/s.err")"
conserved "$tmp/s.json"
expect "$tmp/s.json" 'd["ports"][0]["tx_packets"] == 3000' \
    'd["ports"][0]["tx_retry"] > 0' \
    'd["ports"][0]["dropped_total"] == 0'
"$stat" --json "$tmp/out8.pcap" >"$tmp/s8.json"
expect "$tmp/s8.json" 'd["packets"] == 3000' 'd["seq_errors"] == 0'
# one aggregate policy, stamped on arrival: departures rise in arrival
# order, so the whole capture keeps the input's order, not only each flow's
same_frames "$tmp/in8.pcap" "$tmp/out8.pcap" || fail "share: output is not the input, in order"
echo "ok: half of each burst taken: 3000 of 3000 sent in input order, $(python3 -c "import json; print(json.load(open('$tmp/s.json'))['ports'][0]['tx_retry'])") retries, none dropped"
