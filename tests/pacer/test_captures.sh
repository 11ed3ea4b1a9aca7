#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The real captures in ../shared/testdata pass through with every frame
# accounted for: all of them sent (no limits: nothing may be dropped), the
# same frames in the same order (byte for byte), the classifier's counts
# adding up to what arrived.
source "$(dirname "$0")/lib.sh"

data="$top/../shared/testdata"
if [ ! -d "$data" ]; then
    echo "SKIP: $data is absent"
    exit 77
fi
found=0
for f in "$data"/*.pcap; do
    [ -e "$f" ] || continue
    found=$((found + 1))
    name=$(basename "$f" .pcap)
    frames=$(python3 "$top/tests/tools/pcaptool.py" check "$f" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["packets"]))')
    prefix="pcr-captures-$$-$found"
    run_pacer "$name" $(eal "net_pcap0,rx_pcap=$f,tx_pcap=$tmp/$name.out.pcap") \
        -- --exit-on-idle 300 --mbufs 4096 --max-flows 4096
    [ "$rc" -eq 0 ] || fail "$name: pacer exited $rc: $(cat "$tmp/$name.err")"
    conserved "$tmp/$name.json"
    expect "$tmp/$name.json" "d['ports'][0]['rx_packets'] == $frames" \
        "d['ports'][0]['tx_packets'] == $frames" \
        "sum(d['ports'][0]['classify'].values()) == $frames"
    same_frames "$f" "$tmp/$name.out.pcap" || fail "$name: frames differ"
    echo "ok: $name: $frames frames in, $frames out, identical"
done
[ "$found" -gt 0 ] || { echo "SKIP: no pcap in $data"; exit 77; }
