#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# seq_errors: reordering within a flow, seen through pacer-pcapgen's
# payload marker. Packet i of the 3-flow capture belongs to flow i % 3 and
# carries sequence number i / 3.
source "$(dirname "$0")/lib.sh"

gen_quiet -o "$tmp/o.pcap" --flows 3 --count 300 --size 200 --gap-ns 1000
stat_json "$tmp/o.json" "$tmp/o.pcap"
expect "$tmp/o.json" 'd["seq_errors"] == 0'

# swap 3 (flow 0, seq 1) and 297 (flow 0, seq 99): flow 0 reads
# 0 99 2 3 ... 98 1 -> two packets lower than their predecessor
python3 "$tool" swap "$tmp/o.pcap" "$tmp/s1.pcap" 3 297
stat_json "$tmp/s1.json" "$tmp/s1.pcap"
expect "$tmp/s1.json" 'd["seq_errors"] == 2' 'd["packets"] == 300' \
    '[(f["key"].split()[1], f["seq_errors"]) for f in d["flows"]] == [("198.18.0.1:10000", 2), ("198.18.0.1:10001", 0), ("198.18.0.1:10002", 0)]' \
    'd["rate_bps"] == 299 * 200 * 8 * 1e9 / 299000'
echo "ok: swap within flow 0 -> 2 errors, on flow 0"

# swap 10 (flow 1, seq 3) and 13 (flow 1, seq 4): one error on flow 1
python3 "$tool" swap "$tmp/o.pcap" "$tmp/s2.pcap" 10 13
stat_json "$tmp/s2.json" "$tmp/s2.pcap"
expect "$tmp/s2.json" 'd["seq_errors"] == 1' \
    '[f["seq_errors"] for f in d["flows"]] == [0, 1, 0]'
echo "ok: adjacent swap within flow 1 -> 1 error"

# swap 10 (flow 1) and 11 (flow 2): order across flows is not reordering
python3 "$tool" swap "$tmp/o.pcap" "$tmp/s3.pcap" 10 11
stat_json "$tmp/s3.json" "$tmp/s3.pcap"
expect "$tmp/s3.json" 'd["seq_errors"] == 0'
echo "ok: swap across flows -> 0 errors"

# a marker whose flow index is not the flow's is not the flow's sequence:
# packet 30 (flow 0, seq 10) rewritten to flow index 7, seq 0
off=$((14 + 20 + 8))
python3 "$tool" patch "$tmp/o.pcap" "$tmp/p1.pcap" 30 $off 0000000700000000
stat_json "$tmp/p1.json" "$tmp/p1.pcap"
expect "$tmp/p1.json" 'd["seq_errors"] == 0'
# ... while the same packet with its own flow index and seq 0 is an error
python3 "$tool" patch "$tmp/o.pcap" "$tmp/p2.pcap" 30 $off 0000000000000000
stat_json "$tmp/p2.json" "$tmp/p2.pcap"
expect "$tmp/p2.json" 'd["seq_errors"] == 1'
# ... and without the magic it is no marker at all
python3 "$tool" patch "$tmp/o.pcap" "$tmp/p3.pcap" 30 $off 000000000000000000000000
stat_json "$tmp/p3.json" "$tmp/p3.pcap"
expect "$tmp/p3.json" 'd["seq_errors"] == 0'
echo "ok: marker recognition"

# the same through TCP over IPv6 with two VLAN tags (marker after the TCP
# header): swap 3 and 297 again
gen_quiet -o "$tmp/t.pcap" --flows 3 --count 300 --size 200 --proto tcp \
    --ipv6 --vlan 10 --qinq 20
python3 "$tool" swap "$tmp/t.pcap" "$tmp/t1.pcap" 3 297
stat_json "$tmp/t0.json" "$tmp/t.pcap"
stat_json "$tmp/t1.json" "$tmp/t1.pcap"
expect "$tmp/t0.json" 'd["seq_errors"] == 0' 'd["flow_count"] == 3' \
    'd["flows"][0]["key"] == "tcp [2001:db8::1]:10000 > [2001:db8::2]:5201"'
expect "$tmp/t1.json" 'd["seq_errors"] == 2'
echo "ok: tcp/ipv6/qinq"

# --seq-start, and an append whose sequence starts again: one error per flow
gen_quiet -o "$tmp/a.pcap" --flows 2 --count 6 --seq-start 100
gen_quiet -o "$tmp/a.pcap" --append --flows 2 --count 6
stat_json "$tmp/a.json" "$tmp/a.pcap"
expect "$tmp/a.json" 'd["packets"] == 12' 'd["seq_errors"] == 2' \
    '[f["seq_errors"] for f in d["flows"]] == [1, 1]'
echo "ok: --seq-start + --append"

# malformed packets carry no marker and do not disturb the count
gen_quiet -o "$tmp/m.pcap" --flows 2 --count 100 --malformed jumbo \
    --malformed ipv4-options --malformed mpls --malformed bad-len
stat_json "$tmp/m.json" "$tmp/m.pcap"
expect "$tmp/m.json" 'd["seq_errors"] == 0' 'd["flow_count"] == 2'
echo "ok: malformed packets and markers"
