#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The rate tests' judge (lib.sh ls_rate, ls_check) on departures written
# here, where the right answer is known: 2500 frames of 500 bytes at
# 20 mbit/s (one every 200 us), the first 4 let go at once by the bucket
# (up to 700 us behind the line), and then, as a TX lcore that lost its
# CPU and a staging stall leave them (shapes seen in test_ports' kept
# runs on a busy machine):
#   - at frame 27, 11.3 ms of nothing, then the 57 frames due meanwhile at
#     once (late, pacer counts them), and on time again after;
#   - at frame 1242 the same for 9 frames;
#   - at frame 2237 the schedule itself 216 us later from there on (the
#     link idled while the staging went unserved), pacer having measured
#     1.067 ms of such stalls over the run.
# ls_rate must close the 216 us step and nothing else (closed 216 us; the
# late bursts move no schedule), leave out exactly the 4 + 57 + 9 frames
# behind, and read 20 mbit/s. Spent on the burst at frame 27 (the window
# of 32 frames after a gap ended inside the 57-frame catch-up) the stall
# time closed nothing real: the 23 frames before that burst and the 263
# after the step were left out too. ls_check then passes with pacer's
# counts and fails when the step was not measured (no stall time to
# close it), and on a run whose rate is 2 % off.
source "$(dirname "$0")/lib.sh"

# write_pcap OUT P_US STEP_US: the departures above, nanosecond pcap
write_pcap() {
    python3 - "$@" <<'PY'
import struct, sys
out, per, step = sys.argv[1], float(sys.argv[2]) * 1000, float(sys.argv[3]) * 1000
n, size = 2500, 500
line = lambda k: k * per - 700e3          # the schedule: the bucket's 4 ahead
t = [max(0.0, line(k)) for k in range(n)]
for first, last in ((27, 83), (1242, 1250)):
    # late: nothing from frame first on until all up to last are due, then
    # those at once (0.3 us apart), the last 60 us after its time
    go = line(last) + 60e3
    for k in range(first, last + 1):
        t[k] = go + (k - first) * 300
for k in range(2237, n):
    t[k] = line(k) + step
base = 1_700_000_000 * 10**9
w = [struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 65535, 1)]
for x in t:
    ts = base + int(round(x))
    w.append(struct.pack("<IIII", ts // 10**9, ts % 10**9, 60, size) + bytes(60))
open(out, "wb").write(b"".join(w))
PY
}

# stats JSON for ls_check: port 0's late count and measured stalls
write_stats() {
    printf '{"ports": [{"late": %s, "stage_stalls": %s, "stage_stall_ns": %s}]}\n' \
        "$2" "$3" "$4" >"$1"
}

write_pcap "$tmp/run.pcap" 200 216

# ls_rate with the stall time pacer measured
r=$(ls_rate "$tmp/run.pcap" 1 1067399 "" 2>"$tmp/runs") || fail "ls_rate failed: $(cat "$tmp/runs")"
read -r bps out n closed <<<"$r"
python3 - "$bps" "$out" "$n" "$closed" <<'PY' || fail "ls_rate: $r ($(cat "$tmp/runs"))"
import sys
bps, out, n, closed = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
ok = n == 2500 and out == 4 + 57 + 9 and abs(closed - 216e3) < 1e3 and abs(bps - 20e6) < 20e6 * 1e-4
sys.exit(0 if ok else 1)
PY
grep -q "left out 3 run(s) of frames: 0-3 .*, 27-83 .*, 1242-1250 " "$tmp/runs" ||
    fail "ls_rate left out other frames than 0-3, 27-83 and 1242-1250: $(cat "$tmp/runs")"
echo "ok: ls_rate: $bps bit/s, left out $out of $n (the bucket's 4 and the two late bursts), closed $closed ns"

# ls_check: pacer counted 100 late (the bursts and frames a few us late),
# 3 stalls, 1.067 ms
write_stats "$tmp/s.json" 100 3 1067399
(ls_check "measured stalls" "$tmp/run.pcap" 1 "$tmp/s.json" 0 20e6 0.01) >"$tmp/o" 2>&1 ||
    fail "ls_check failed with the stalls measured: $(cat "$tmp/o")"
# the step not measured: its 263 frames stay behind, more than pacer's late
# count allows
write_stats "$tmp/s0.json" 100 0 0
# (a subshell: ls_check's fail exits)
if (ls_check "step not measured" "$tmp/run.pcap" 1 "$tmp/s0.json" 0 20e6 0.01) >"$tmp/o0" 2>&1; then
    fail "ls_check passed a 216 us step pacer did not measure: $(cat "$tmp/o0")"
fi
grep -q "FAIL: step not measured: ls_rate left out 333 of 2500 frames, more than the 100 allowed" "$tmp/o0" ||
    fail "ls_check on the unmeasured step: $(cat "$tmp/o0")"
# 2 % slow: 204 us a frame
write_pcap "$tmp/slow.pcap" 204 216
if (ls_check "2 % slow" "$tmp/slow.pcap" 1 "$tmp/s.json" 0 20e6 0.01) >"$tmp/o2" 2>&1; then
    fail "ls_check passed a rate 2 % off: $(cat "$tmp/o2")"
fi
grep -q "FAIL: 2 % slow: 196078" "$tmp/o2" || fail "ls_check on the slow run: $(cat "$tmp/o2")"
echo "ok: ls_check passes the run with pacer's counts, fails the unmeasured step and a 2 % slow rate"
