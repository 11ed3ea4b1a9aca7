#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Send-on-timestamp, through a NIC double (offload_double.c: the real
# pacer with ethdev calls wrapped so net_pcap offers the offload and has a
# NIC clock the double knows exactly: NIC = NIC0 + (TSC - TSC0) * 2/5, a
# 64-bit counter that wraps during the run). 2 flows x 300 frames of 1514
# bytes at 10 mbit/s each (1211.2 us apart), --offload-horizon 500 us:
#  - every packet not yet due when handed over carries the Tx timestamp
#    flag, and its stamp is its departure time in NIC time through the fit
#    (within 50 ticks = 125 TSC cycles of the exact conversion);
#  - none is handed over more than 500 us before its departure; one due
#    already goes unflagged (the first of each flow, and any the TX lcore
#    reached late because it lost its CPU: at least half are offloaded);
#  - the plain pacer on the same vdev says it paces in software.
source "$(dirname "$0")/lib.sh"
double=$4

"$gen" -o "$tmp/in.pcap" --flows 2 --count 600 --size 1514 2>/dev/null
opts=(--flow-rate 10mbit --offload-horizon 500 --exit-on-idle 300 --mbufs 4096 --max-flows 1024)

# the plain pacer: net_pcap has no such offload
run_pacer soft $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/soft.pcap") -- --replay "${opts[@]}"
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/soft.err")"
grep -q "port 0 (net_pcap0): pacing in software (the PMD has no send-on-timestamp offload)" "$tmp/soft.out" ||
    fail "no software-pacing line: $(cat "$tmp/soft.out")"
conserved "$tmp/soft.json"
expect "$tmp/soft.json" 'd["ports"][0]["tx_offload"] is False' \
    'd["ports"][0]["offloaded"] == 0' 'd["ports"][0]["nic_clock"] is None' \
    'd["ports"][0]["tx_packets"] == 600'

# the double
pacer=$double
PACER_DOUBLE_LOG=$tmp/log run_pacer hw $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/hw.pcap") -- --replay "${opts[@]}"
[ "$rc" -eq 0 ] || fail "pacer-offload-double exited $rc: $(cat "$tmp/hw.err")"
grep -q "offload double: port 0: send-on-timestamp asked for" "$tmp/hw.err" ||
    fail "the offload was not asked for: $(cat "$tmp/hw.err")"
grep -q "port 0 (net_pcap0): send-on-timestamp: the NIC holds packets up to 500 us ahead of departure" "$tmp/hw.out" ||
    fail "no offload line: $(cat "$tmp/hw.out")"
conserved "$tmp/hw.json"
expect "$tmp/hw.json" 'd["ports"][0]["tx_offload"] is True' \
    'd["ports"][0]["tx_packets"] == 600' \
    'abs(d["ports"][0]["nic_clock"]["ticks_per_cycle"] / 0.4 - 1) < 1e-6'
python3 - "$tmp/log" "$tmp/hw.json" <<'PY' || fail "offload records: see above"
import json, sys
lines = open(sys.argv[1]).read().split("\n")
h = lines[0].split()
tsc0, nic0, num, den = int(h[1]), int(h[3]), int(h[5]), int(h[7])
d = json.load(open(sys.argv[2]))
p = d["ports"][0]
horizon = 500e-6 * d["tsc_hz"]
recs = [tuple(int(x) for x in l.split()) for l in lines[1:] if l]
assert len(recs) == 600, len(recs)
flagged = [r for r in recs if r[3]]
bad = []
worst = 0
for port, hand, dep, flag, stamp in recs:
    if flag:
        want = (nic0 + (dep - tsc0) * num // den) % 2**64
        err = (stamp - want + 2**63) % 2**64 - 2**63
        worst = max(worst, abs(err))
        if abs(err) > 50:
            bad.append(("stamp off by %d ticks" % err, hand, dep))
        if hand < dep - horizon - 100:
            bad.append(("handed over %.1f us early" % ((dep - hand) / d["tsc_hz"] * 1e6), hand, dep))
    elif dep > hand:
        bad.append(("not due yet but unflagged", hand, dep))
if bad:
    print("FAIL:", len(bad), "bad records, e.g.", bad[:5])
    sys.exit(1)
if len(flagged) != p["offloaded"] or len(flagged) < 300:
    print("FAIL: %d flagged, pacer counted %d offloaded" % (len(flagged), p["offloaded"]))
    sys.exit(1)
stamps = [r[4] for r in flagged]
if not (min(stamps) < 2**62 and max(stamps) > 2**64 - 2**62):
    print("FAIL: the NIC clock did not wrap during the run")
    sys.exit(1)
lead = sorted((r[2] - r[1]) / d["tsc_hz"] * 1e6 for r in flagged)
print("ok: %d of 600 offloaded, stamps within %d ticks (bound 50) of the exact conversion across the NIC clock's wrap, "
      "hand-over lead p50 %.0f us max %.0f us (horizon 500 us)" %
      (len(flagged), worst, lead[len(lead) // 2], lead[-1]))
PY
