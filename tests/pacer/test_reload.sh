#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Reload (SIGHUP, as systemctl reload sends it, and the reload command
# over the control socket) while pacer forwards a backlog:
#   - an edited file takes effect whole: the port rate, a class's rate and
#     order, a class deleted, a class added, flow-limit and the horizon, as
#     the running pacer publishes them (show stats json, show config, show
#     class); the options given on the command line still override the
#     file (--flow-rate stays the command line's);
#   - the same file again: "no change";
#   - all or nothing: a bad value, an option that needs a restart (slot),
#     classes in another order and a class whose match changed are each
#     refused with a message naming what and why (pacerctl exits 1), and
#     the rate the same file also changed stays as it was;
#   - the fast path goes on: every frame sent or counted dropped,
#     conservation, no mbuf lost, exit 0 on quit.
source "$(dirname "$0")/lib.sh"

ctl="$(dirname "$gen")/pacerctl"
[ -x "$ctl" ] || fail "no pacerctl next to $gen"
[ "$(id -u)" = 0 ] || { echo "SKIP: the runtime directory is root's"; exit 77; }

# 6000 frames of 1000 bytes on 4 UDP flows (ports 10000-10003 -> 9):
# about 5 s at 10 mbit/s, 2.4 s at 20
"$gen" -o "$tmp/in.pcap" --flows 4 --count 6000 --size 1000 2>/dev/null
"$gen" -o "$tmp/empty.pcap" --flows 1 --count 0 2>/dev/null
cfg=$tmp/p.cfg
# write_cfg RATE BULK-RATE BULK-ORDER [EXTRA...]: the file, with class bulk
# first and then the classes named in EXTRA (each "NAME MATCH" via printf)
write_cfg() {
    {
        printf '[pacer]\nrate = %s\nflow-rate = 5mbit\n%s' "$1" "${PACER_EXTRA:-}"
        printf '\n[class bulk]\nmatch = proto udp sport 10000\nrate = %s\norder = %s\n' "$2" "$3"
        shift 3
        printf '%s' "$@"
    } >"$cfg"
}
gone='
[class gone]
match = proto tcp
rate = 2mbit
'
fresh='
[class fresh]
match = proto udp dport 53
rate = 3mbit
'
write_cfg 10mbit 4mbit fair "$gone"
sock="/var/run/dpdk/$prefix/pacer.sock"
timeout 60 "$pacer" $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out0.pcap" \
    "net_pcap1,rx_pcap=$tmp/empty.pcap,tx_pcap=$tmp/out1.pcap" | sed 's/--no-telemetry//') \
    -- --config "$cfg" --flow-rate 1mbit --mbufs 16384 --max-flows 64 \
    --stats-json "$tmp/r.json" >"$tmp/r.out" 2>"$tmp/r.err" &
pid=$!
stop_on_exit "$pid"
wait_started "$tmp/r.out" "$pid" || fail "pacer did not start: $(cat "$tmp/r.err")"
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done

# run EXPECTED-STATUS ARGS...: pacerctl, output in $tmp/o, $tmp/e
run() {
    local want=$1 rc=0
    shift
    "$ctl" -s "$sock" "$@" >"$tmp/o" 2>"$tmp/e" || rc=$?
    [ "$rc" = "$want" ] || fail "pacerctl $*: exit $rc, want $want: $(cat "$tmp/o" "$tmp/e")"
}
# state: the published rates, classes and settings, as JSON in $tmp/s
state() {
    run 0 show stats --json
    cp "$tmp/o" "$tmp/s.json"
    run 0 show config
    cp "$tmp/o" "$tmp/s.cfg"
    run 0 show class
    cp "$tmp/o" "$tmp/s.class"
}
state
expect "$tmp/s.json" 'd["ports"][1]["rate_bps"] == 10000000' \
    'sorted(c["class"] for c in d["ports"][1]["classes"]) == ["bulk", "default", "gone"]'

# 1. SIGHUP with the file edited: everything the file can change
PACER_EXTRA='flow-limit = 100
horizon = 1000
' write_cfg 20mbit 6mbit completion "$fresh"
kill -HUP "$pid"
for _ in $(seq 100); do grep -q "reloaded: " "$tmp/r.out" "$tmp/r.err" && break; sleep 0.05; done
line=$(grep -h "reloaded: " "$tmp/r.out" "$tmp/r.err" | head -1)
echo "$line"
case $line in
*"reloaded: horizon 2000 ms drop -> 1000 ms drop; rate 10Mbit -> 20Mbit"*"class bulk rate 4Mbit -> 6Mbit"*"class bulk order fair -> completion"*"class gone deleted"*"class fresh added (match proto udp dport 53)"*"flow-limit 0 -> 100"*) ;;
*) fail "SIGHUP: not the reload expected: '$line'" ;;
esac
state
expect "$tmp/s.json" 'd["ports"][1]["rate_bps"] == 20000000' 'd["ports"][0]["rate_bps"] == 20000000' \
    'sorted(c["class"] for c in d["ports"][1]["classes"]) == ["bulk", "default", "fresh"]' \
    '[c["rate_bps"] for c in d["ports"][1]["classes"] if c["class"] == "bulk"] == [6000000]' \
    '[c["flow_rate_bps"] for c in d["ports"][1]["classes"] if c["class"] == "fresh"] == [1000000]'
grep -q "^flow-limit = 100$" "$tmp/s.cfg" || fail "flow-limit not 100: $(cat "$tmp/s.cfg")"
grep -q "^horizon = 1000$" "$tmp/s.cfg" || fail "horizon not 1000: $(grep horizon "$tmp/s.cfg")"
run 0 show wheel 1
grep -q "horizon 1000000000 ns" "$tmp/o" || fail "the wheel's horizon: $(cat "$tmp/o")"
grep -q "^flow-rate = 1mbit$" "$tmp/s.cfg" || fail "the command line's --flow-rate 1mbit lost: $(grep flow-rate "$tmp/s.cfg")"
grep -A4 "^\[class bulk\]" "$tmp/s.cfg" | grep -q "^order = completion$" || fail "bulk not in completion order: $(cat "$tmp/s.cfg")"
echo "ok: SIGHUP: horizon, rate, class rate and order, class deleted and added, flow-limit; the command line's --flow-rate still overrides the file's"

# 2. the same file again
run 0 reload
grep -qx "reloaded: no change" "$tmp/o" || fail "reload of the same file: $(cat "$tmp/o")"
echo "ok: reload of the same file: no change"

# 3. all or nothing: each refused, with why, and the rate it also changes kept
refuse() { # WHAT EXPECTED-MESSAGE-PART
    local why
    run 1 reload
    why=$(cat "$tmp/e")
    grep -qF "$2" "$tmp/e" || fail "$1: refused without '$2': $why"
    state
    expect "$tmp/s.json" 'd["ports"][1]["rate_bps"] == 20000000'
    echo "ok: $1: $why"
}
PACER_EXTRA='flow-limit = 100
horizon = 1000
' write_cfg 30mbit 6zbit completion "$fresh"
refuse "a bad value" "[class bulk] rate"
PACER_EXTRA='flow-limit = 100
horizon = 1000
slot = 2000
' write_cfg 30mbit 6mbit completion "$fresh"
refuse "an option that needs a restart" "slot 1000 -> 2000: a running pacer keeps these until a restart"
{ printf '[pacer]\nrate = 30mbit\nflow-limit = 100\nhorizon = 1000\n%s' "$fresh"
  printf '\n[class bulk]\nmatch = proto udp sport 10000\nrate = 6mbit\norder = completion\n'; } >"$cfg"
refuse "classes reordered" "classes fresh and bulk are in the other order"
{ printf '[pacer]\nrate = 30mbit\nflow-limit = 100\nhorizon = 1000\n\n[class newer]\nmatch = proto tcp\n'
  printf '\n[class bulk]\nmatch = proto udp sport 10000\nrate = 6mbit\norder = completion\n%s' "$fresh"; } >"$cfg"
refuse "a new class before the others" "class bulk comes after the new class newer"
{ printf '[pacer]\nrate = 30mbit\nflow-limit = 100\nhorizon = 1000\n'
  printf '\n[class bulk]\nmatch = proto udp sport 10001\nrate = 6mbit\norder = completion\n%s' "$fresh"; } >"$cfg"
refuse "a match changed" "class bulk: match 'proto udp sport 10000' -> 'proto udp sport 10001'"
grep -q "^flow-limit = 100$" "$tmp/s.cfg" || fail "flow-limit changed by a refused reload"

run 0 quit
wait $pid || fail "pacer exited $?: $(tail -5 "$tmp/r.err")"
trap pcr_cleanup EXIT
conserved "$tmp/r.json"
expect "$tmp/r.json" 'd["ports"][1]["rx_packets"] + d["ports"][0]["rx_packets"] == 6000'
echo "ok: forwarding went on through the reloads: $(python3 -c "import json; p=json.load(open('$tmp/r.json'))['ports'][1]; print(p['tx_packets'], 'sent,', p['dropped_total'], 'dropped,', p['queued'], 'queued at quit')")"
