#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# One flow paced at 10 mbit/s: 700 frames of 1514 bytes (1211.2 us apart at
# 10 mbit/s, 0.85 s in all) arrive at once from a pcap; the departures
# come out at 10 mbit/s +-1 % and no gap is below the ideal gap minus one
# slot (1 us). 1514-byte frames and the default burst (1514 bytes) give an
# idle flow exactly one frame of credit, so even the first gap is ideal.
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 1 --count 700 --size 1514 2>/dev/null
ideal=$((1514 * 8 * 100))   # ns per frame at 10 mbit/s

# attempt N: one run; the counts, the rate and "never early" must hold in
# every run; "at most 5 % of the frames more than 20 us behind the
# schedule" measures the machine as much as pacer (a shared 2-vCPU VM
# deschedules the TX lcore now and then), so it may fail in 2 of 3 runs.
attempt() {
    prefix="pcr-rate-one-flow-$$-$1"
    run_pacer r $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") \
        -- --flow-rate 10mbit --exit-on-idle 300 --mbufs 4096 --max-flows 1024
    [ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/r.err")"
    no_runtime_dir
    conserved "$tmp/r.json"
    expect "$tmp/r.json" 'd["ports"][0]["tx_packets"] == 700' \
        'd["ports"][0]["dropped_total"] == 0'
    # net_pcap's timestamps are in EAL-clock time: scaled back (lib.sh pcap_scale)
    scale=$(pcap_scale "$tmp/r.json")
    "$stat" --json --time-scale "$scale" --ideal-gap-ns $((ideal - 1000)) "$tmp/out.pcap" >"$tmp/s.json"
    expect "$tmp/s.json" 'd["packets"] == 700' 'd["seq_errors"] == 0'
    read -r lsr late < <(ls_rate "$tmp/out.pcap" "$scale")
    rate_within "$lsr" 10e6 0.01 "rate (lib.sh ls_rate)"
    python3 - "$tmp/out.pcap" "$ideal" 1000 "$scale" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
ideal, slot, scale = int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
e = "<" if b[:4] == b"\x4d\x3c\xb2\xa1" else ">"
off, ts = 24, []
while off + 16 <= len(b):
    s, ns, incl, _ = struct.unpack(e + "IIII", b[off:off + 16])
    ts.append(s * 10**9 + ns)
    off += 16 + incl
ts = [ts[0] + round((t - ts[0]) * scale) for t in ts]
s0 = min(t - i * ideal for i, t in enumerate(ts))
late = [t - i * ideal - s0 for i, t in enumerate(ts)]
bad = [(i, ts[i + 1] - ts[i], late[i]) for i in range(len(ts) - 1)
       if ts[i + 1] - ts[i] < ideal - slot - late[i]]
n_late = sum(1 for x in late if x > 20000)
print("gaps: min %d ns, %d of %d packets > 20 us late (max %d ns)" %
      (min(y - x for x, y in zip(ts, ts[1:])), n_late, len(ts), max(late)))
if bad:
    print("FAIL: gaps below ideal - slot - lateness:", bad[:5])
    sys.exit(1)
if n_late > len(ts) // 20:
    print("late: %d packets more than 20 us behind the schedule" % n_late)
    sys.exit(3)
PY
}

for i in 1 2 3; do
    rc=0
    attempt "$i" || rc=$?
    [ "$rc" -eq 0 ] && break
    [ "$rc" -eq 3 ] || fail "gaps: see above"
    echo "run $i: too many late frames (the TX lcore lost its CPU?); again"
done
[ "$rc" -eq 0 ] || fail "3 runs with more than 5 % of the frames over 20 us late"
echo "ok: 700 packets at $lsr bit/s (ls_rate; $late late frames left out; ideal gap $ideal ns)"
