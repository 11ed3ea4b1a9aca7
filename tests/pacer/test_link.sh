#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Link down and up mid-run. pacer runs in a network namespace of its own
# (unique name, no addresses, IPv6 off: the kernel sends nothing of its
# own), net_pcap in, net_tap out: 6000 frames of 1000 bytes at 10 mbit/s
# (1250 frames/s, 4.8 s). A second in, the tap goes down for a second
# (`ip link set ... down`, what a pulled cable or a peer's reset looks like
# to the PMD), then up again. Checks:
#  - pacer says so (port 1: link down, then link up), link_changes is 2;
#  - what fell due while it was down is dropped under link_down, within
#    0.2 s worth of the time it was down (the control lcore polls the link
#    every 10 ms; the slack is for a shared 2-vCPU machine), less, below,
#    the time pacer's staging went unserved beyond its lead meanwhile
#    (stage_stall_ns, read with pacerctl before the down and after the
#    up): such a stall moves the schedule, and less falls due (with a CPU
#    hog on each vCPU, 1106 frames fell due in a 1.10 s down);
#  - forwarding resumes: a capture on the tap after the up holds frames at
#    10 mbit/s (within 1 %, kernel timestamps, lib.sh ls_check: what it
#    leaves out bounded by pacer's late count), each flow in order, and
#    ends with the last frame of the input;
#  - conservation and the pool, as everywhere.
# Needs root, iproute2 and tcpdump (skips, 77, without them).
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null || ! command -v tcpdump >/dev/null; then
    echo "SKIP: needs root, iproute2 and tcpdump"
    exit 77
fi
ctl="$(dirname "$gen")/pacerctl"
[ -x "$ctl" ] || fail "no pacerctl next to $gen"
ns="pcr-link-$$"
tap="pcrlk$$"
pid=""
dump=""
link_cleanup() {
    [ -n "$dump" ] && kill "$dump" 2>/dev/null || true
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -KILL "$pid" 2>/dev/null || true
    fi
    pcr_cleanup
}
trap link_cleanup EXIT
pcr_netns "$ns"

"$gen" -o "$tmp/in.pcap" --flows 4 --count 6000 --size 1000 2>/dev/null
ip netns exec "$ns" timeout 60 "$pacer" $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/p0.pcap" "net_tap0,iface=$tap") \
    -- --replay --rate 10mbit --horizon 6000 --mbufs 16384 --max-flows 64 \
    --stats-json "$tmp/l.json" >"$tmp/l.out" 2>"$tmp/l.err" &
pid=$!
for _ in $(seq 100); do grep -q "^pacer: lcore" "$tmp/l.out" 2>/dev/null && break; sleep 0.1; done
grep -q "^pacer: lcore" "$tmp/l.out" || fail "pacer did not start: $(cat "$tmp/l.err")"
sleep 1
stall_ns() {
    "$ctl" -s "/var/run/dpdk/$prefix/pacer.sock" show stats --json >"$tmp/st.json" ||
        fail "pacerctl show stats: $(cat "$tmp/st.json")"
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ports"][1]["stage_stall_ns"])' "$tmp/st.json"
}
stall0=$(stall_ns)
t_down=$(date +%s%N)
ip netns exec "$ns" ip link set "$tap" down
sleep 1
ip netns exec "$ns" ip link set "$tap" up
t_up=$(date +%s%N)
ip netns exec "$ns" tcpdump -i "$tap" --immediate-mode -U -s 128 -w "$tmp/after.pcap" 2>"$tmp/dump.err" &
dump=$!
for _ in $(seq 50); do grep -q "listening on" "$tmp/dump.err" 2>/dev/null && break; sleep 0.1; done
stall1=$(stall_ns)
# stop tcpdump once every flow's last frame of the input is in its
# capture (30 s at most), then pacer (SIGINT: everything is sent by then):
# the tap goes away when pacer exits, and tcpdump loses what it has not read
# from its ring when its interface disappears, which on a busy machine can
# be the last frames when pacer exits on its own right after sending them.
# Per flow: the flows take turns in staging, so the last frame out need not
# be the input's last.
cat >"$tmp/last.py" <<'PY'
import struct, sys
def frames(p):
    try:
        b = open(p, "rb").read()
    except OSError:
        return []
    e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(b):
        incl = struct.unpack(e + "I", b[off + 8:off + 12])[0]
        if off + 16 + incl > len(b):
            break
        out.append(b[off + 16:off + 16 + incl])
        off += 16 + incl
    return out
lasts = {}
for f in frames(sys.argv[1]):
    lasts[f[26:38]] = f  # IPv4 addresses and ports
got = frames(sys.argv[2])
snap = min((len(f) for f in got), default=0)
have = {f[:snap] for f in got}
sys.exit(0 if got and all(f[:snap] in have for f in lasts.values()) else 1)
PY
for _ in $(seq 300); do
    python3 "$tmp/last.py" "$tmp/in.pcap" "$tmp/after.pcap" && break
    sleep 0.1
done
kill -INT "$dump" 2>/dev/null || true
wait "$dump" 2>/dev/null || true
dump=""
rc=0
kill -INT "$pid"
for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pid" 2>/dev/null && fail "pacer still running 30 s after SIGINT"
wait "$pid" || rc=$?
pid=""
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/l.err")"
grep -q "port 1: link down: " "$tmp/l.err" || fail "no 'link down' notice: $(cat "$tmp/l.err")"
grep -q "port 1: link up: sending again" "$tmp/l.err" || fail "no 'link up' notice: $(cat "$tmp/l.err")"
! grep -q "port 0: link" "$tmp/l.err" || fail "port 0's link moved: $(cat "$tmp/l.err")"
conserved "$tmp/l.json"
down_s=$(python3 -c "print(($t_up - $t_down) / 1e9)")
stall_s=$(python3 -c "print(($stall1 - $stall0) / 1e9)")
expect "$tmp/l.json" 'd["ports"][1]["link_changes"] == 2' 'd["ports"][0]["link_changes"] == 0' \
    'd["ports"][1]["link"] == "up"' \
    'd["ports"][1]["rx_packets"] == 0' \
    "1250 * ($down_s - 0.2 - $stall_s) <= d['ports'][1]['drop_link_down'] <= 1250 * ($down_s + 0.2)" \
    'd["ports"][1]["tx_packets"] + d["ports"][1]["drop_link_down"] == 6000' \
    'd["ports"][1]["dropped_total"] == d["ports"][1]["drop_link_down"]'
"$stat" --json "$tmp/after.pcap" >"$tmp/after.json"
expect "$tmp/after.json" 'd["packets"] >= 1000' 'd["seq_errors"] == 0'
# ls_rate's left-out frames: no more than pacer counted late on port 1,
# plus 1 % of them for the kernel's receive path into tcpdump on the tap
n_after=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["packets"])' "$tmp/after.json")
ls_check "rate after the link came back" "$tmp/after.pcap" 1 "$tmp/l.json" 1 10e6 0.01 $((n_after / 100))
bps=$ls_bps
python3 "$tmp/last.py" "$tmp/in.pcap" "$tmp/after.pcap" ||
    fail "the capture after the up lacks a flow's last frame"
python3 -c "
import json
d = json.load(open('$tmp/l.json'))['ports'][1]; s = json.load(open('$tmp/after.json'))
print('ok: link down %.2f s (staging stalled %.3f s meanwhile): %d dropped as link_down, %d sent; after the up %d frames at %.0f bit/s' % ($down_s, $stall_s, d['drop_link_down'], d['tx_packets'], s['packets'], $bps))"
