#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# SIGINT: receiving stops, then what is queued is sent on time
# (--drain-on-exit, the default) or dropped and counted "shutdown"
# (--no-drain-on-exit); either way every mbuf is back and the books
# balance. 400 frames of 1000 bytes at 8 mbit/s take 0.4 s; the signal
# comes about 0.15 s after the workers start, with ~250 still queued.
# "double" sends two signals 50 ms apart, as timeout(1) does (child,
# then process group): one request, still a drain. "again" (at 4 mbit/s,
# 0.8 s of departures) signals a second time 0.3 s into the drain: what
# is still queued, about 0.35 s of it, is dropped as "shutdown". In every
# mode the output capture holds exactly the frames pacer counted sent, in
# order, at the flow's rate: ls_rate (lib.sh) within 1 % (the frames it
# leaves out no more than pacer counted late) and 1, 10 and 100 ms windows
# within rate x (W + L) + burst + frame (windows.py, L pacer's own largest
# departure error): what is sent on time while draining is paced.
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 1 --count 400 --size 1000 2>/dev/null
for mode in drain drop double again; do
    extra=()
    rate=8mbit
    [ "$mode" = drop ] && extra=(--no-drain-on-exit)
    [ "$mode" = again ] && rate=4mbit
    prefix="pcr-signal-$$-$mode"
    rc=0
    "$pacer" $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/$mode.pcap") -- --replay \
        --flow-rate $rate --mbufs 4096 --max-flows 1024 --exit-on-idle 3000 "${extra[@]}" \
        --stats-json "$tmp/$mode.json" >"$tmp/$mode.out" 2>"$tmp/$mode.err" &
    pid=$!
    # signal once the workers run, 0.15 s into the 0.4 s of departures
    for _ in $(seq 100); do
        grep -q "lcore .*: rx port" "$tmp/$mode.out" 2>/dev/null && break
        sleep 0.05
    done
    sleep 0.15
    kill -INT "$pid"
    if [ "$mode" = double ]; then
        sleep 0.05
        kill -INT "$pid"
    fi
    if [ "$mode" = again ]; then
        sleep 0.3
        kill -INT "$pid"
    fi
    wait "$pid" || rc=$?
    [ "$rc" -eq 0 ] || fail "$mode: pacer exited $rc: $(cat "$tmp/$mode.err")"
    conserved "$tmp/$mode.json"
    expect "$tmp/$mode.json" 'd["ports"][0]["rx_packets"] == 400' \
        'd["ports"][0]["queued"] == 0'
    if [ "$mode" = drain ] || [ "$mode" = double ]; then
        expect "$tmp/$mode.json" 'd["ports"][0]["tx_packets"] == 400' \
            'd["ports"][0]["dropped_total"] == 0'
        grep -q "sending what is queued on time" "$tmp/$mode.err" || fail "$mode: no message"
    else
        expect "$tmp/$mode.json" 'd["ports"][0]["drop_shutdown"] > 100' \
            'd["ports"][0]["dropped_total"] == d["ports"][0]["drop_shutdown"]' \
            'd["ports"][0]["tx_packets"] + d["ports"][0]["drop_shutdown"] == 400'
        grep -q "dropping what is queued" "$tmp/$mode.err" || fail "$mode: no message"
    fi
    capture_check "$mode: capture" "$tmp/$mode.json" 0 "$tmp/$mode.pcap" "$tmp/$mode.s.json"
    ls_check "$mode: rate" "$tmp/$mode.pcap" "" "$tmp/$mode.json" 0 \
        "${rate%mbit}e6" 0.01
    windows_judge "$mode: one flow at $rate" "$tmp/$mode.json" 0 1514 "$tmp/$mode.pcap" \
        "flow:flows:all:$rate"
    echo "ok: $mode: $(python3 -c "import json; p=json.load(open('$tmp/$mode.json'))['ports'][0]; print('tx', p['tx_packets'], 'shutdown drops', p['drop_shutdown'])")"
done

# SIGSTOP: the worker's loop is away for as long as the process is stopped,
# and says so: one stall (a loop pass over 1 ms) at least as long as the
# stop, in lcores[].stalls and stall_ns (what tools/wire-test.sh allows for
# a worker held from its CPU, where the kernel counts no run delay or
# steal); the books balance after it
prefix="pcr-signal-$$-stop"
"$pacer" $(eal net_null0 net_null1) -- --rate 1gbit --mbufs 4096 --max-flows 1024 \
    --stats-json "$tmp/stop.json" >"$tmp/stop.out" 2>"$tmp/stop.err" &
pid=$!
wait_started "$tmp/stop.out" "$pid" || fail "stop: pacer did not start: $(cat "$tmp/stop.err")"
sleep 0.2
kill -STOP "$pid"
sleep 0.3
kill -CONT "$pid"
sleep 0.2
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "stop: pacer exited $rc: $(cat "$tmp/stop.err")"
conserved "$tmp/stop.json"
expect "$tmp/stop.json" 'len(d["lcores"]) == 1' \
    'd["lcores"][0]["stalls"] >= 1' \
    '3e8 <= d["lcores"][0]["stall_ns"] <= d["duration_ns"]' \
    'd["lcores"][0]["run_delay_ns"] is not None'
echo "ok: stop: $(python3 -c "import json; l=json.load(open('$tmp/stop.json'))['lcores'][0]; print('stalls', l['stalls'], 'stall_ns', l['stall_ns'], 'run_delay_ns', l['run_delay_ns'])")"
