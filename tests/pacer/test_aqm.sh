#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The AQM through the appliance (issue 35; lib/aqm is held to RFC 8289's
# pseudocode in tests/aqm). A replayed capture arrives all at once, so a
# port paced at 10 mbit/s builds a queue that grows for the whole run (held
# in its flows' staging, stamped within the lead of leaving): CoDel is
# above target from the fifth millisecond and signals from the 105th, then
# sooner and sooner. With --aqm codel:
#  1. ECN-capable flows, every encapsulation (IPv4 ECT(0); IPv4 ECT(1)
#     behind 802.1Q; IPv6 ECT(0) behind QinQ; IPv4 ECT(0) behind 802.1Q,
#     TCP): every frame leaves (nothing dropped), in order; the frames
#     pacer counted marked carry CE, the others their ECT as sent; an IPv4
#     header's checksum is the one a reader computes from scratch; DSCP and
#     every other byte as sent; marks only on frames that waited more than
#     the target (their departure less the first frame's, as they all
#     arrived at once: within a millisecond);
#  2. not ECN-capable: CoDel's signals are drops (drop_aqm), each given
#     back to the rates it was charged: the rest leave at exactly the rate
#     (ls_check, 1 %), in order, and rx == tx + dropped;
#  3. a burst that never waits the target: nothing signalled;
#  4. --ce-threshold 1000: ECT(1) frames that waited more than 1 ms are
#     marked (aqm_ce_marked) long before CoDel's first signal; ECT(0) ones
#     are not, by it;
#  5. --aqm off: none of it (drop-tail as before), and `set aqm codel` at
#     run time turns it on; save config writes it back.
#  6. the defaults: CoDel without --aqm (the start line says so; here
#     with --flow-queue 0, which would cut the replay to 100 ms first);
#     --replay turns it and --flow-queue off (every frame leaves), and
#     --aqm codel after it turns CoDel back on.
#  7. a flow under its own rate alone (nothing staged): as 2.
# Conservation and every mbuf back in each run.
source "$(dirname "$0")/lib.sh"

T=1000   # frame bytes
N=1500   # frames in a run: 1.2 s at 10 mbit/s

# run NAME PCAP ARGS...: pace PCAP at 10 mbit/s (the port's aggregate)
# with --aqm codel unless ARGS say otherwise
run() {
    local name=$1 pcap=$2
    shift 2
    run_pacer "$name" $(eal "net_pcap0,rx_pcap=$pcap,tx_pcap=$tmp/$name.out.pcap") \
        -- --flow-queue 0 --rate 10mbit --aqm codel --mbufs 16384 \
        --exit-on-idle 300 --control-socket none "$@"
    [ "$rc" -eq 0 ] || fail "$name: pacer exited $rc: $(tail -5 "$tmp/$name.err")"
    conserved "$tmp/$name.json"
}

# check NAME IN.pcap: the capture against the input, frame by frame
check() {
    python3 - "$here" "$1" "$tmp/$1.out.pcap" "$2" "$tmp/$1.json" "${3:-5000}" <<'PY'
import json, struct, sys
sys.path.insert(0, sys.argv[1])
from windows import read_pcap, parse_frame
name, out_p, in_p, st_p, target_us = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6])
st = json.load(open(st_p))
ps = st["ports"][0]
scale = st.get("tsc_hz_eal", 1) / st.get("tsc_hz", 1)

def l3(f):
    off, et = 14, struct.unpack(">H", f[12:14])[0]
    while et in (0x8100, 0x88a8):
        et = struct.unpack(">H", f[off + 2:off + 4])[0]
        off += 4
    return off, et == 0x86dd

def ecn(f):
    o, v6 = l3(f)
    return (f[o + 1] >> 4) & 3 if v6 else f[o + 1] & 3

def csum_ok(f):
    o, v6 = l3(f)
    if v6:
        return True
    ihl = (f[o] & 15) * 4
    s = sum(struct.unpack(">%dH" % (ihl // 2), f[o:o + ihl]))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return s == 0xffff

inp = {parse_frame(f)[:5] + (parse_frame(f)[5],): f for _, _, f in read_pcap(in_p)}
out = read_pcap(out_p)
t0 = out[0][0]
bad, marked, last, early = [], 0, {}, 0
for t, _, f in out:
    h = parse_frame(f)
    k = h[:5] + (h[5],)
    g = inp.get(k)
    if g is None:
        bad.append("a frame not in the input: %r" % (k,)); continue
    flow = h[:5] + (h[5][0],)
    if h[5][1] <= last.get(flow, -1):
        bad.append("flow %r out of order" % (flow,))
    last[flow] = h[5][1]
    o, v6 = l3(f)
    diff = [i for i in range(len(f)) if f[i] != g[i]]
    allowed = {o + 1} if v6 else {o + 1, o + 10, o + 11}
    if set(diff) - allowed:
        bad.append("bytes changed beyond TOS and checksum: %r" % sorted(set(diff) - allowed))
    if not csum_ok(f):
        bad.append("IPv4 checksum wrong after the mark")
    if diff:
        if ecn(f) != 3 or ecn(g) == 0:
            bad.append("changed but not ECT -> CE (%d -> %d)" % (ecn(g), ecn(f)))
        if (f[o + 1] >> 2 if not v6 else ((f[o] & 15) << 2) | (f[o + 1] >> 6)) != \
           (g[o + 1] >> 2 if not v6 else ((g[o] & 15) << 2) | (g[o + 1] >> 6)):
            bad.append("DSCP changed")
        marked += 1
        # it waited (all arrived at once) more than the target
        if (t - t0) * scale < target_us * 1e3 - 1e6:
            early += 1
if early:
    bad.append("%d frames marked that left within the target of the first" % early)
want = ps["aqm_marked"] + ps["aqm_ce_marked"]
if marked != want:
    bad.append("%d frames carry CE that pacer did not mark: %d marked, pacer counted %d"
               % (marked - want, marked, want))
print("%s: %d frames out, %d marked CE (aqm_marked %d, aqm_ce_marked %d), drop_aqm %d, "
      "queue delay p50 %.1f ms max %.1f ms"
      % (name, len(out), marked, ps["aqm_marked"], ps["aqm_ce_marked"], ps["drop_aqm"],
         ps["queue_delay_ns"]["p50"] / 1e6, ps["queue_delay_ns"]["max"] / 1e6))
for b in bad[:10]:
    print("FAIL: %s: %s" % (name, b))
sys.exit(1 if bad else 0)
PY
}

# 1. ECN-capable, every encapsulation
"$gen" -o "$tmp/ect.pcap" --flows 1 --count $((N / 4)) --size $T --tos 2 2>/dev/null
"$gen" -o "$tmp/ect.pcap" --append --flows 1 --count $((N / 4)) --size $T --tos 1 --vlan 7 --sport 20000 2>/dev/null
"$gen" -o "$tmp/ect.pcap" --append --flows 1 --count $((N / 4)) --size $T --tos 186 --ipv6 --vlan 8 --qinq 9 --sport 30000 2>/dev/null
"$gen" -o "$tmp/ect.pcap" --append --flows 1 --count $((N / 4)) --size $T --tos 2 --proto tcp --vlan 10 --sport 40000 2>/dev/null
run ect "$tmp/ect.pcap"
expect "$tmp/ect.json" "d['ports'][0]['tx_packets'] == $N" 'd["ports"][0]["drop_aqm"] == 0' \
    'd["ports"][0]["aqm_marked"] >= 4 * 5' \
    '[c["aqm_marked"] for c in d["ports"][0]["classes"]] == [d["ports"][0]["aqm_marked"]]'
check ect "$tmp/ect.pcap" || fail "1: ECT marks (see above)"

# 2. not ECN-capable: drops, given back
"$gen" -o "$tmp/drop.pcap" --flows 1 --count $N --size $T 2>/dev/null
run drop "$tmp/drop.pcap"
expect "$tmp/drop.json" 'd["ports"][0]["drop_aqm"] >= 10' 'd["ports"][0]["aqm_marked"] == 0' \
    "d['ports'][0]['tx_packets'] + d['ports'][0]['drop_aqm'] == $N" \
    'd["ports"][0]["dropped_total"] == d["ports"][0]["drop_aqm"]'
check drop "$tmp/drop.pcap" || fail "2: frames after drops (see above)"
# given back: the next frame takes a dropped one's place, so the frames
# that are left leave a frame time apart, and the run takes as many frame
# times as frames were sent: an unfilled hole for each of the drop_aqm
# frames (37 here: 30 ms) would show, beyond what pacer's worker lost to
# other threads meanwhile (its stalls, and the staging's: the link idled)
# holes NAME PART: the run NAME's frames leave a frame time apart at 10
# mbit/s, the drops' places taken
holes() {
    python3 - "$here" "$tmp/$1.out.pcap" "$tmp/$1.json" "$2" <<'PY' || fail "$2: drops left holes (see above)"
import json, sys
sys.path.insert(0, sys.argv[1])
from windows import read_pcap
d = json.load(open(sys.argv[3]))
p = d["ports"][0]
sc = d["tsc_hz_eal"] / d["tsc_hz"]
fr = read_pcap(sys.argv[2])
ft = 1000 * 8e9 / 10e6
excess = (fr[-1][0] - fr[0][0]) * sc - (len(fr) - 1) * ft
lost = p["stage_stall_ns"] + sum(l["stall_ns"] for l in d["lcores"])
print("%s: %d frames, %d dropped by the AQM; the run took %.2f ms more than %d frame times "
      "(allowed: %.2f ms the worker lost + 2 frame times; holes would add %.1f ms)"
      % (sys.argv[4], len(fr), p["drop_aqm"], excess / 1e6, len(fr) - 1, lost / 1e6,
         p["drop_aqm"] * ft / 1e6))
sys.exit(0 if excess <= lost + 2 * ft else 1)
PY
}
holes drop 2

# 3. a burst that waits less than the target: 4 frames, 3.2 ms at 10 mbit/s
"$gen" -o "$tmp/short.pcap" --flows 1 --count 4 --size $T --tos 2 2>/dev/null
run short "$tmp/short.pcap"
# (the sojourn a held frame is stamped with grows by any time the worker
# was kept from its loop meanwhile: that much more is allowed)
expect "$tmp/short.json" 'd["ports"][0]["tx_packets"] == 4' 'd["ports"][0]["aqm_marked"] == 0' \
    'd["ports"][0]["drop_aqm"] == 0' \
    'd["ports"][0]["queue_delay_ns"]["max"] < 5e6 + d["ports"][0]["stage_stall_ns"] + sum(l["stall_ns"] for l in d["lcores"])'

# 4. ce-threshold: ECT(1) marked over 1 ms, ECT(0) not by it
"$gen" -o "$tmp/ce.pcap" --flows 1 --count 300 --size $T --tos 1 2>/dev/null
"$gen" -o "$tmp/ce.pcap" --append --flows 1 --count 300 --size $T --tos 2 --sport 20000 2>/dev/null
run ce "$tmp/ce.pcap" --ce-threshold 1000
# 600 frames, 480 ms: CoDel's first signal comes at 105 ms
expect "$tmp/ce.json" 'd["ports"][0]["aqm_ce_marked"] >= 250' 'd["ports"][0]["drop_aqm"] == 0'
check ce "$tmp/ce.pcap" 1 || fail "4: ce-threshold marks (see above)"
python3 - "$here" "$tmp/ce.out.pcap" <<'PY' || fail "4: ce-threshold marked ECT(0) frames beyond CoDel's own"
import sys
sys.path.insert(0, sys.argv[1])
from windows import read_pcap, parse_frame
ce0 = sum(1 for _, _, f in read_pcap(sys.argv[2])
          if parse_frame(f)[3] == 20000 and f[15] & 3 == 3)
print("4: ECT(0) frames marked (CoDel's own only): %d" % ce0)
sys.exit(0 if ce0 <= 10 else 1)
PY

# 5. off, then on at run time; saved
printf 'set aqm codel\nsave config %s\n' "$tmp/saved.cfg" >"$tmp/on.cmd"
run off "$tmp/drop.pcap" --aqm off
# (the queue delay histogram is kept with the AQM off too: every packet,
# and the queue it lets stand, 200 ms and more here)
expect "$tmp/off.json" "d['ports'][0]['tx_packets'] == $N" 'd["ports"][0]["drop_aqm"] == 0' \
    "d['ports'][0]['queue_delay_ns']['count'] == $N" 'd["ports"][0]["queue_delay_ns"]["max"] > 100e6'
run on "$tmp/drop.pcap" --aqm off --cmdline-file "$tmp/on.cmd"
expect "$tmp/on.json" 'd["ports"][0]["drop_aqm"] >= 10' \
    '[c["aqm"] for c in d["ports"][0]["classes"]] == ["codel"]'
grep -qx "aqm = codel" "$tmp/saved.cfg" || fail "5: save config: no 'aqm = codel': $(grep aqm "$tmp/saved.cfg")"
# 6. the defaults, and --replay
def() {
    local name=$1
    shift
    run_pacer "$name" $(eal "net_pcap0,rx_pcap=$tmp/drop.pcap,tx_pcap=$tmp/$name.out.pcap") \
        -- --rate 10mbit --mbufs 16384 --exit-on-idle 300 --control-socket none "$@"
    [ "$rc" -eq 0 ] || fail "$name: pacer exited $rc: $(tail -5 "$tmp/$name.err")"
    conserved "$tmp/$name.json"
}
def dflt --flow-queue 0
grep -q "^pacer: AQM codel per flow: target 5000 us, interval 100000 us" "$tmp/dflt.out" ||
    fail "6: no AQM start line by default: $(grep AQM "$tmp/dflt.out")"
expect "$tmp/dflt.json" 'd["ports"][0]["drop_aqm"] >= 10' \
    '[c["aqm"] for c in d["ports"][0]["classes"]] == ["codel"]'
def replay --replay
grep -q "^pacer: AQM off: a flow's queue is bounded by the horizon only (--replay)" "$tmp/replay.out" ||
    fail "6: no replay start line: $(grep AQM "$tmp/replay.out")"
expect "$tmp/replay.json" "d['ports'][0]['tx_packets'] == $N" 'd["ports"][0]["dropped_total"] == 0'
def replayon --replay --aqm codel
expect "$tmp/replayon.json" 'd["ports"][0]["drop_aqm"] >= 10' 'd["ports"][0]["drop_flow_queue"] == 0'
echo "6: drop_aqm by default $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['ports'][0]['drop_aqm'])" "$tmp/dflt.json"), none with --replay, with --replay --aqm codel $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['ports'][0]['drop_aqm'])" "$tmp/replayon.json")"
# 7. a flow under its own rate alone (no port or class rate: nothing is
# staged, every packet stamped on arrival, up to 1.2 s ahead): CoDel
# judges each as it is stamped, a drop given back to the flow's token
# bucket, so the same as 2 holds
run flowonly "$tmp/drop.pcap" --rate 0 --flow-rate 10mbit
expect "$tmp/flowonly.json" 'd["ports"][0]["drop_aqm"] >= 10' 'd["ports"][0]["staged_total"] == 0' \
    "d['ports'][0]['tx_packets'] + d['ports'][0]['drop_aqm'] == $N" \
    'd["ports"][0]["dropped_total"] == d["ports"][0]["drop_aqm"]'
check flowonly "$tmp/drop.pcap" || fail "7: frames after drops (see above)"
holes flowonly 7

echo "ok: AQM: ECT marked CE on every encapsulation with valid checksums, Not-ECT dropped and given back (rate exact), nothing under target, ce-threshold, on/off at run time, on by default and off with --replay, under a flow rate alone"
