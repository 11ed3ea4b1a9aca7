#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Two ports, paired 0<->1: what arrives on port 0 leaves on port 1 and the
# reverse, both directions at once, each egress port with its own
# aggregate from [port N]. Run with 2 lcores (one worker doing RX and TX)
# and with 3 (separate RX and TX lcores): same counts, same frames, rates
# +-1 % over about 0.5 s in each direction (lib.sh ls_check: what ls_rate
# leaves out bounded by the frames pacer counted late on the port). Then
# the same 5-tuples arriving on both ports: two flows each, one per
# direction, so each port sends exactly what arrived on the other (one
# flow entry for both once sent them all out of one port).
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/a.pcap" --flows 4 --count 2500 --size 500 2>/dev/null
"$gen" -o "$tmp/b.pcap" --flows 2 --count 700 --size 1000 --sport 20000 2>/dev/null
printf '[port 1]\nrate = 20mbit\n[port 0]\nrate = 10mbit\n' >"$tmp/p.cfg"
# 3 lcores on this 2-vCPU machine: the RX lcore shares CPU 0 with the main
# lcore (which sleeps), the TX lcore has CPU 1. Packets that meet the
# aggregate's backlog wait in per-flow staging and are stamped
# --stage-lead before they leave; a RX lcore that loses its CPU for longer
# than that lets the link idle (docs/design.md, "Stalls"). On a shared CPU
# (a busy machine's other work took it for tens of milliseconds at a
# time: 180 ms in all over the 0.6 s run, 16 mbit/s of 20) the lead must
# cover those absences, as an operator would set it: 50 ms. With 2 lcores
# the one worker does RX and TX: the default lead, its stalls measured and
# allowed for by ls_check.
for lcores in 0,1 0,1,2; do
    lspec="-l 0,1"
    lead=()
    [ "$lcores" = 0,1,2 ] && lspec="--lcores=0@0,1@1,2@0" && lead=(--stage-lead 50000)
    prefix="pcr-ports-$$-${lcores//,/}"
    out="$tmp/l${lcores//,/}"
    mkdir -p "$out"
    rc=0
    timeout 120 "$pacer" $(eal "net_pcap0,rx_pcap=$tmp/a.pcap,tx_pcap=$out/0.pcap" \
                               "net_pcap1,rx_pcap=$tmp/b.pcap,tx_pcap=$out/1.pcap" | sed "s/-l 0,1/$lspec/") \
        -- --replay --config "$tmp/p.cfg" --exit-on-idle 300 --mbufs 4096 --max-flows 1024 "${lead[@]}" \
        --stats-json "$out/s.json" >"$out/o" 2>"$out/e" || rc=$?
    [ "$rc" -eq 0 ] || fail "-l $lcores: pacer exited $rc: $(cat "$out/e")"
    conserved "$out/s.json"
    expect "$out/s.json" '[p["peer"] for p in d["ports"]] == [1, 0]' \
        '[p["rx_packets"] for p in d["ports"]] == [2500, 700]' \
        '[p["tx_packets"] for p in d["ports"]] == [700, 2500]' \
        '[p["rate_bps"] for p in d["ports"]] == [10000000, 20000000]'
    if [ "$lcores" = 0,1,2 ]; then
        grep -q "lcore 1: tx port 0; tx port 1;" "$out/o" || fail "no TX-only lcore: $(cat "$out/o")"
        grep -q "lcore 2: rx port 0 queue 0 -> port 1; rx port 1 queue 0 -> port 0;" "$out/o" ||
            fail "no RX-only lcore: $(cat "$out/o")"
    fi
    for pair in "a 1 20e6" "b 0 10e6"; do
        set -- $pair
        ls_check "-l $lcores: port $2" "$out/$2.pcap" "" "$out/s.json" "$2" "$3" 0.01
        same_flow_frames "$tmp/$1.pcap" "$out/$2.pcap" || fail "-l $lcores: $1 -> port $2: frames differ (or a flow out of order)"
    done
    echo "ok: -l $lcores: 2500 frames 0->1 at 20 mbit/s, 700 frames 1->0 at 10 mbit/s"
done

"$gen" -o "$tmp/c.pcap" --flows 4 --count 400 --size 500 2>/dev/null
prefix="pcr-ports-$$-same"
out="$tmp/same"
mkdir -p "$out"
rc=0
timeout 120 "$pacer" $(eal "net_pcap0,rx_pcap=$tmp/c.pcap,tx_pcap=$out/0.pcap" \
                           "net_pcap1,rx_pcap=$tmp/c.pcap,tx_pcap=$out/1.pcap") \
    -- --replay --config "$tmp/p.cfg" --exit-on-idle 300 --mbufs 4096 --max-flows 1024 \
    --stats-json "$out/s.json" >"$out/o" 2>"$out/e" || rc=$?
[ "$rc" -eq 0 ] || fail "same 5-tuples both ways: pacer exited $rc: $(cat "$out/e")"
conserved "$out/s.json"
expect "$out/s.json" '[p["rx_packets"] for p in d["ports"]] == [400, 400]' \
    '[p["tx_packets"] for p in d["ports"]] == [400, 400]' \
    '[p["flows_new"] for p in d["ports"]] == [4, 4]'
for port in 0 1; do
    same_flow_frames "$tmp/c.pcap" "$out/$port.pcap" || fail "same 5-tuples both ways: port $port: frames differ (or a flow out of order)"
done
echo "ok: the same 5-tuples on both ports: 400 frames each way, 4 flows per direction"
