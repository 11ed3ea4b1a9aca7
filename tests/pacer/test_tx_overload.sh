#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# A TX lcore that cannot keep up (issue 20, item 3). Three lcores on the two
# CPUs (main and the RX lcore share CPU 0, the TX lcore has CPU 1), two
# net_null ports offering millions of 64-byte frames a second, and a TX
# side made slow on purpose: the test build's PACER_TEST_TX_COST_NS=2000
# hook spins 2 us a packet in front of the PMD's send, so the one TX lcore
# sends at most 500K packets a second over both ports. Three runs:
#   floor  --rate 20mbit a port (39K frames a second each, 16 % of the TX
#          lcore): it keeps up; its departure error p99 is this layout's
#          own lateness on this machine, and nothing says it fell behind
#          (unless the machine is so busy that it did: a p99 past the
#          10 ms at which pacer says so);
#   off    --rate 100gbit (never binds: all of it due at once) with
#          --max-late 0: every packet is sent, tens of milliseconds late
#          (as many as the mbuf pool holds), and pacer says so once a port;
#   on     the same with --max-late 2000: pacer says so once a port, refuses
#          at RX (and drops at dequeue) what would leave more than 2 ms
#          late, counted under drop_late (besides which only the PMD's
#          no-mbuf drops while the pool was empty: until the TX lcore is
#          behind, 2 ms past the bound, the queue can hold it all), and
#          the departure error p99 of what it sends stays within 2 ms +
#          one burst's send time (32 x 2 us) + the floor's p99 + two
#          slots (+ 1/16: the histogram's resolution);
#   tight  the same with --max-late 50, under four of the units the TX
#          lcore publishes its lateness in: one line a port (the state
#          does not flap), more than 100000 packets sent a port (a unit
#          does not refuse what leaves on time), p99 within its bound.
# Every run: conservation, every mbuf back.
source "$(dirname "$0")/lib.sh"
[ -x "$pacer_hooks" ] || fail "no pacer-test-hooks (the fifth argument, tests/pacer/meson.build)"
pacer=$pacer_hooks

cost_ns=2000
max_late_us=2000
slot_ns=1000

# run NAME SECONDS PACER-ARGS...: the overload layout for SECONDS, then
# SIGINT (drain what is queued on time)
run() {
    local name=$1 secs=$2 ealv
    shift 2
    read -r -a ealv <<<"$(eal net_null0 net_null1)"
    ealv=("--lcores=0@0,1@1,2@0" "${ealv[@]:2}")
    rc=0
    PACER_TEST_TX_COST_NS=$cost_ns timeout --preserve-status -k 20 -s INT "$secs" \
        "$pacer" "${ealv[@]}" -- --mbufs 16384 --max-flows 1024 --slot "$slot_ns" \
        --control-socket none --stats-json "$tmp/$name.json" "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
    [ "$rc" -eq 0 ] || fail "$name: pacer exited $rc: $(tail -n 5 "$tmp/$name.err")"
    grep -q "test hook: sending costs $cost_ns ns" "$tmp/$name.err" ||
        fail "$name: the TX cost hook is not on: $(cat "$tmp/$name.err")"
    grep -q "lcore 1: tx port 0; tx port 1;" "$tmp/$name.out" ||
        fail "$name: not one TX lcore for both ports: $(grep '^pacer: lcore' "$tmp/$name.out")"
    conserved "$tmp/$name.json"
}
# behind_lines NAME: how many "cannot keep up" lines each port got
behind_lines() {
    echo "$(grep -c 'port 0: the TX lcore cannot keep up' "$tmp/$1.err")" \
         "$(grep -c 'port 1: the TX lcore cannot keep up' "$tmp/$1.err")"
}

run floor 3 --rate 20mbit --max-late 0
expect "$tmp/floor.json" 'all(p["drop_late"] == 0 for p in d["ports"])' \
    'all(p["tx_packets"] > 30000 for p in d["ports"])'
floor_p99=$(python3 -c "import json; print(max(p['departure_error_ns']['p99'] for p in json.load(open('$tmp/floor.json'))['ports']))")
floor_max=$(python3 -c "import json; print(max(p['departure_error_ns']['max'] for p in json.load(open('$tmp/floor.json'))['ports']))")
[ "$floor_max" -gt 5000000 ] || [ "$(behind_lines floor)" = "0 0" ] ||
    fail "floor: the TX lcore kept up (at worst $floor_max ns late), yet: $(grep 'keep up' "$tmp/floor.err")"

run off 3 --rate 100gbit --max-late 0
[ "$(behind_lines off)" = "1 1" ] ||
    fail "off: not one 'cannot keep up' line a port: $(grep 'keep up' "$tmp/off.err")"
grep -q 'nothing is refused' "$tmp/off.err" || fail "off: the line does not say nothing is refused"
# overloaded for real: the median departure is many bounds late
expect "$tmp/off.json" 'all(p["drop_late"] == 0 for p in d["ports"])' \
    "all(p['departure_error_ns']['p50'] > 5 * $max_late_us * 1000 for p in d['ports'])"

# bounded NAME US: the overload with --max-late US: pacer says so once a
# port, naming the bound; it refuses (drop_late, and no other drop but
# the PMD's no-mbuf ones), still sends, and the departure error p99 of
# what it sends stays within US + one burst's send time (32 x cost) + the
# floor's p99 + two slots, + 1/16 (pacer's histogram reads a value to
# within that: lib/hist, 16 buckets a power of two). Sets bound.
bounded() {
    local name=$1 us=$2
    run "$name" 3 --rate 100gbit --max-late "$us"
    [ "$(behind_lines "$name")" = "1 1" ] ||
        fail "$name: not one 'cannot keep up' line a port: $(grep 'keep up' "$tmp/$name.err")"
    # it names the bound as what was exceeded, and how late it is now
    # apart: once "0.0 ms late, more than --max-late 10000 us" (issue 34)
    grep -Eq "it sent what was due more than --max-late $us us late for longer than that \(now [0-9]+\.[0-9] ms late\); refusing at RX" \
        "$tmp/$name.err" ||
        fail "$name: the line does not name the bound: $(grep 'keep up' "$tmp/$name.err")"
    bound=$(((us * 1000 + 32 * cost_ns + floor_p99 + 2 * slot_ns) * 17 / 16))
    expect "$tmp/$name.json" 'all(p["drop_late"] > 0 for p in d["ports"])' \
        'all(p["dropped_total"] == p["drop_late"] + p["drop_no_mbuf"] for p in d["ports"])' \
        'all(p["tx_packets"] > 100000 for p in d["ports"])' \
        "all(p['departure_error_ns']['p99'] <= $bound for p in d['ports'])"
}
# a bound under four of tx_behind_tsc's largest units (PCR_BEHIND_QUANTUM,
# 25 us at 2.6 GHz): one unit, what a TX lcore that is behind publishes
# at least, must not make the RX lcores refuse what leaves on time (more
# than 100000 sent a port), and the state must not flap (one line a port)
bounded tight 50
bounded on "$max_late_us"
python3 - "$tmp" "$floor_p99" "$bound" <<'PY'
import json, sys
t = sys.argv[1]
off = json.load(open(t + "/off.json"))["ports"]
on = json.load(open(t + "/on.json"))["ports"]
tight = json.load(open(t + "/tight.json"))["ports"]
print("ok: floor p99 %s ns; --max-late 0: p50 %.1f ms, p99 %.1f ms, nothing refused; --max-late 2000: p99 %.2f ms (bound %.2f), %d refused, %d sent; --max-late 50: p99 %.1f us, %d refused, %d sent" % (
    sys.argv[2], off[0]["departure_error_ns"]["p50"] / 1e6, off[0]["departure_error_ns"]["p99"] / 1e6,
    max(p["departure_error_ns"]["p99"] for p in on) / 1e6, int(sys.argv[3]) / 1e6,
    sum(p["drop_late"] for p in on), sum(p["tx_packets"] for p in on),
    max(p["departure_error_ns"]["p99"] for p in tight) / 1e3,
    sum(p["drop_late"] for p in tight), sum(p["tx_packets"] for p in tight)))
PY
