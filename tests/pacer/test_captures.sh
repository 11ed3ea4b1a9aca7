#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The real captures in ../shared/testdata pass through with every frame
# accounted for: all of them sent (no limits: nothing may be dropped), the
# same frames in the same order (byte for byte), the classifier's counts
# adding up to what arrived. Skipped (77) only where ../shared itself is
# absent (a checkout without the project's shared folder); where it is
# there, a missing testdata folder or one without a capture is a failure.
source "$(dirname "$0")/lib.sh"

shared="$top/../shared"
data="$shared/testdata"
if [ ! -d "$shared" ]; then
    echo "SKIP: $shared is absent (no shared folder beside the checkout)"
    exit 77
fi
[ -d "$data" ] || fail "$shared is there but $data is not"
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
[ "$found" -gt 0 ] || fail "no capture (*.pcap) in $data"
