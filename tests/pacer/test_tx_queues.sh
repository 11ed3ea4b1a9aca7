#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# More than one TX queue a port (--tx-queues, issue 20 item 2): each queue
# has its own wheel, a flow leaves by one of them (chosen by its hash at
# its first packet), and the rates, charged at stamping, hold over all of
# them. net_pcap gives a port one TX queue for each tx_pcap, each its own
# capture. 16 flows x 250 frames of 1000 bytes into port 0, out of port 1
# at --rate 40mbit (the port's aggregate) by 2 queues:
#   - one worker serving both queues: every frame out, each flow in one
#     capture only, in its order (pacer-pcapstat's seq_errors), both
#     captures used; the two captures merged by time hold the aggregate
#     (ls_rate within 1 %, as test_aggregate);
#   - 2 RX + 2 TX lcores on the two CPUs (oversubscribed: correctness only,
#     the rate is the scheduler's): each TX lcore serves one queue of each
#     port, every frame out, each flow in one capture, in order;
#   - --tx-queues 9 is refused (exit 2, nothing started), and 2 queues on
#     a port the PMD gives one (one tx_pcap) stop the start with the reason.
# Conservation and every mbuf back in every run.
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 16 --count 4000 --size 1000 2>/dev/null
"$gen" -o "$tmp/empty.pcap" --flows 1 --count 0 2>/dev/null

# run NAME EAL-ARGS...: both ports with two TX queues (captures NAME-pP-qQ)
run() {
    local name=$1 ealv
    shift
    read -r -a ealv <<<"$(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/$name-p0-q0.pcap,tx_pcap=$tmp/$name-p0-q1.pcap" \
        "net_pcap1,rx_pcap=$tmp/empty.pcap,tx_pcap=$tmp/$name-p1-q0.pcap,tx_pcap=$tmp/$name-p1-q1.pcap")"
    [ $# -gt 0 ] && ealv=("$@" "${ealv[@]:2}")
    run_pacer "$name" "${ealv[@]}" -- --tx-queues 2 --rate 40mbit --replay \
        --mbufs 8192 --max-flows 1024 --exit-on-idle 300 --control-socket none
    [ "$rc" -eq 0 ] || fail "$name: pacer exited $rc: $(tail -n 5 "$tmp/$name.err")"
    conserved "$tmp/$name.json"
    expect "$tmp/$name.json" 'd["ports"][1]["tx_packets"] == 4000' \
        'd["ports"][1]["dropped_total"] == 0'
    # every flow in one queue's capture only, in its order, both used
    python3 - "$tmp" "$name" "$stat" <<'PY' || fail "$name: the queues' captures"
import json, subprocess, sys
tmp, name, stat = sys.argv[1:4]
seen, counts = {}, []
for q in (0, 1):
    s = json.loads(subprocess.check_output([stat, "--json", "%s/%s-p1-q%d.pcap" % (tmp, name, q)]))
    if s["seq_errors"] != 0:
        sys.exit("queue %d: %d frames out of their flow's order" % (q, s["seq_errors"]))
    counts.append(s["packets"])
    for f in s["flows"]:
        k = f["key"]
        if k in seen:
            sys.exit("a flow left by both queues: %s" % (k,))
        seen[k] = q
if 0 in counts or sum(counts) != 4000 or len(seen) != 16:
    sys.exit("queues carried %s frames of %d flows (want 4000 of 16, both queues used)" % (counts, len(seen)))
print("ok: %s: queue 0 %d frames, queue 1 %d, 16 flows each by one queue, in order" % (name, counts[0], counts[1]))
PY
}

run one
# the aggregate over both queues: merged by time
python3 - "$tmp/one-p1-q0.pcap" "$tmp/one-p1-q1.pcap" "$tmp/one-merged.pcap" <<'PY'
import struct, sys
recs, hdr = [], None
for p in sys.argv[1:3]:
    b = open(p, "rb").read()
    hdr = hdr or b[:24]
    off = 24
    while off + 16 <= len(b):
        ts, tf, incl, orig = struct.unpack("<IIII", b[off:off + 16])
        recs.append(((ts, tf), b[off:off + 16 + incl]))
        off += 16 + incl
recs.sort(key=lambda r: r[0])
with open(sys.argv[3], "wb") as o:
    o.write(hdr)
    for _, r in recs:
        o.write(r)
PY
ls_check "aggregate over two TX queues" "$tmp/one-merged.pcap" "" "$tmp/one.json" 1 40e6 0.01
echo "ok: aggregate $ls_bps bit/s over both queues (ls_rate; $ls_out of $ls_n left out, allowed $ls_allowed)"

run split "--lcores=0@0,1@1,2@0,3@1,4@0"
grep -q "tx port 1 queue 0;" "$tmp/split.out" && grep -q "tx port 1 queue 1;" "$tmp/split.out" ||
    fail "split: the TX queues' lcores: $(grep '^pacer: lcore' "$tmp/split.out")"
[ "$(grep -c '^pacer: lcore .*tx port' "$tmp/split.out")" = 2 ] ||
    fail "split: not two TX lcores: $(grep '^pacer: lcore' "$tmp/split.out")"

run_pacer bad $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/bad.pcap") -- --tx-queues 9
[ "$rc" -eq 2 ] && grep -q "tx-queues" "$tmp/bad.err" ||
    fail "--tx-queues 9: exit $rc, $(cat "$tmp/bad.err")"
run_pacer few $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/few.pcap") -- --tx-queues 2 --mbufs 8192 --max-flows 64
[ "$rc" -ne 0 ] && grep -q "tx-queues 2: the PMD has 1 TX queues at most" "$tmp/few.err" ||
    fail "--tx-queues 2 on a one-queue port: exit $rc, $(tail -n 3 "$tmp/few.err")"
no_runtime_dir
echo "ok: --tx-queues 9 refused; 2 queues on a one-queue port: $(grep -o 'tx-queues 2: .*' "$tmp/few.err")"
