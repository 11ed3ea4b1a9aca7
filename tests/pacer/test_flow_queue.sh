#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# --flow-queue: by default one flow that overloads a port holds at most
# 100 ms of queue at the tightest rate it is under, as fq's flow_limit
# bounds a flow, where it used to hold the whole horizon (2 s).
#
# One UDP flow of 1514-byte frames offered without end (net_pcap
# infinite_rx: far above the rate) to a 50 mbit/s port, sampled over the
# control socket while it runs:
#   - defaults: the port never holds more than 100 ms x 50 mbit/s =
#     625000 bytes = 412 frames (the bound is on the flow's bytes at each
#     arrival, so it holds in every sample, whatever the timing), and it
#     is full (>= 400) in most samples; the excess is counted
#     drop_flow_queue, none drop_horizon. CoDel (on by default) signals
#     the flow too (drop_aqm: it carries no ECN), but a flow that does
#     not respond outruns CoDel's drops: --flow-queue is its hard bound
#     (the issue's "the UDP overload case keeps its bounded queue");
#     every drop is one of the two;
#   - --flow-rate 5mbit: the flow's own rate is the tightest, 100 ms of it
#     = 62500 bytes = 41 frames;
#   - --flow-queue 0: the old behaviour, up to the horizon: more than 8000
#     frames, at most what the port's policy lets within it: 2 s x 50
#     mbit/s + the burst + one bucket of its calendar (bucket_bytes) + the
#     frame leaving, in 1514-byte frames (8262 with a 3028-byte bucket);
#     the excess drop_horizon;
# conservation and every mbuf back in each run; the start line says it.
source "$(dirname "$0")/lib.sh"

ctl="$(dirname "$gen")/pacerctl"
[ -x "$ctl" ] || fail "no pacerctl next to $gen"
[ "$(id -u)" = 0 ] || { echo "SKIP: the runtime directory is root's"; exit 77; }

"$gen" -o "$tmp/in.pcap" --flows 1 --count 1000 --size 1514 2>/dev/null
"$gen" -o "$tmp/empty.pcap" --flows 1 --count 0 2>/dev/null

# run NAME MIN MAX PACER-ARGS...: pacer under the endless flow; samples of
# port 1's queued gauge for about 2 s; every one <= MAX, the median >= MIN
run() {
    local name=$1 lo=$2 hi=$3 sock i
    shift 3
    prefix="pcr-fq-$$-$name"
    sock="/var/run/dpdk/$prefix/pacer.sock"
    timeout 60 "$pacer" $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,infinite_rx=1" \
        "net_pcap1,rx_pcap=$tmp/empty.pcap,tx_pcap=$tmp/$name.pcap" | sed 's/--no-telemetry//') \
        -- --rate 50mbit --mbufs 16384 --max-flows 64 --stats-json "$tmp/$name.json" "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid=$!
    stop_on_exit "$pid"
    wait_started "$tmp/$name.out" "$pid" || fail "$name: pacer did not start: $(cat "$tmp/$name.err")"
    for i in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
    sleep 0.3   # the queue builds within 100 ms
    : >"$tmp/$name.samples"
    for i in $(seq 20); do
        "$ctl" -s "$sock" show stats --json >"$tmp/s" || fail "$name: pacerctl: $(cat "$tmp/s")"
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["ports"][1]["queued"])' "$tmp/s" \
            >>"$tmp/$name.samples"
        sleep 0.1
    done
    "$ctl" -s "$sock" quit >/dev/null || fail "$name: quit"
    wait "$pid" || fail "$name: pacer exited $?: $(tail -3 "$tmp/$name.err")"
    trap pcr_cleanup EXIT
    conserved "$tmp/$name.json"
    python3 - "$tmp/$name.samples" "$lo" "$hi" "$name" <<'PY' || fail "$name: queued outside [$lo, $hi]"
import sys
v = sorted(int(x) for x in open(sys.argv[1]))
lo, hi, name = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
med = v[len(v) // 2]
print("%s: port 1 queued over %d samples: min %d, median %d, max %d (median >= %d, all <= %d)"
      % (name, len(v), v[0], med, v[-1], lo, hi))
sys.exit(0 if v[-1] <= hi and med >= lo else 1)
PY
}

run default 400 412
grep -q "^pacer: a flow holds at most 100 ms of queue" "$tmp/default.out" ||
    fail "no start line for --flow-queue: $(grep -c . "$tmp/default.out")"
expect "$tmp/default.json" 'd["ports"][1]["drop_flow_queue"] > 10000' 'd["ports"][1]["drop_horizon"] == 0' \
    'd["ports"][1]["drop_aqm"] > 0' \
    'd["ports"][1]["dropped_total"] == d["ports"][1]["drop_flow_queue"] + d["ports"][1]["drop_aqm"]'
run flowrate 38 41 --flow-rate 5mbit
expect "$tmp/flowrate.json" 'd["ports"][1]["drop_flow_queue"] > 10000'
run off 8000 99999 --flow-queue 0
expect "$tmp/off.json" 'd["ports"][1]["drop_flow_queue"] == 0' 'd["ports"][1]["drop_horizon"] > 10000' \
    'max(int(x) for x in open("'"$tmp/off.samples"'")) <= (2 * 50e6 / 8 + 1514 + d["ports"][1]["bucket_bytes"]) // 1514 + 1'
echo "ok: one overloading flow holds 100 ms of queue at its tightest rate by default (412 frames at 50 mbit/s, 41 at a 5 mbit/s flow rate), the horizon's 8256 with --flow-queue 0"
