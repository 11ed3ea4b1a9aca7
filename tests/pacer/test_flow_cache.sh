#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The flow cache in front of the flow table (src/dataplane.c,
# flow_lookup_burst()) after ageing: a flow aged out frees its table
# position, which a new flow may take; a cache slot still naming the old
# key at that position would send the old flow's next packet to the new
# flow's entry. pacer runs in a network namespace of its own (unique name,
# no addresses, IPv6 off: the kernel sends nothing of its own), net_tap in,
# net_pcap out, --flow-idle 1000. The test writes frames into the tap in
# three phases 4 s apart: 300 flows A (5 frames each, the later ones
# found in the table and so cached), 300 flows B, A again. Each phase's
# flows are aged out before the next (idle 1 s, nothing queued, no rate),
# so each phase makes 300 new flows: flows_new 900, flows_aged 900 by the
# SIGINT 4 s after the last phase, every frame sent
# (4500 in the output capture), the cache used (flow_cache_hits > 0),
# conservation and the pool. Without the cache's invalidation A's return
# finds its stale slots and makes fewer new flows (a build without it: 776).
# Needs root and iproute2 (skips, 77, without them).
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v ip >/dev/null; then
    echo "SKIP: needs root and iproute2"
    exit 77
fi
ns="pcr-fc-$$"
tap="pcrfc$$"
pid=""
trap 'if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi; pcr_cleanup' EXIT
pcr_netns "$ns"

"$gen" -o "$tmp/a.pcap" --flows 300 --count 300 --size 100 --src 198.18.1.1 --sport 1024 2>/dev/null
"$gen" -o "$tmp/b.pcap" --flows 300 --count 300 --size 100 --src 198.18.2.1 --sport 1024 2>/dev/null
ip netns exec "$ns" timeout 60 "$pacer" $(eal "net_tap0,iface=$tap" "net_pcap1,tx_pcap=$tmp/out.pcap") \
    -- --flow-idle 1000 --mbufs 4096 --max-flows 1024 \
    --stats-json "$tmp/c.json" >"$tmp/c.out" 2>"$tmp/c.err" &
pid=$!
for _ in $(seq 100); do grep -q "^pacer: lcore" "$tmp/c.out" 2>/dev/null && break; sleep 0.1; done
grep -q "^pacer: lcore" "$tmp/c.out" || fail "pacer did not start: $(cat "$tmp/c.err")"
for _ in $(seq 50); do ip netns exec "$ns" ip link show "$tap" 2>/dev/null | grep -q "state UP\|,UP" && break; sleep 0.1; done

# send.py TAP PCAP: every frame of PCAP into TAP (the kernel hands what is
# written to a tap's socket to its reader: pacer), 5 times, 20 ms apart
# (100 ms in all, well within --flow-idle): the cache fills on one in 8
# table hits, so a flow's later frames, in later RX bursts, put it there
cat >"$tmp/send.py" <<'PY'
import socket, struct, sys, time
b = open(sys.argv[2], "rb").read()
e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
for rep in range(5):
    off = 24
    while off + 16 <= len(b):
        incl = struct.unpack(e + "I", b[off + 8:off + 12])[0]
        s.send(b[off + 16:off + 16 + incl])
        off += 16 + incl
    time.sleep(0.02)
PY
for phase in a b a; do
    ip netns exec "$ns" python3 "$tmp/send.py" "$tap" "$tmp/$phase.pcap" ||
        fail "cannot write into $tap"
    sleep 4
done
# each phase's flows were aged 1-2 s after its last frame (idle 1 s, the
# sweep within another): stop, the sends all done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
pid=""
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(tail -n 3 "$tmp/c.err")"
conserved "$tmp/c.json"
expect "$tmp/c.json" 'd["ports"][0]["rx_packets"] == 4500' \
    'd["ports"][1]["tx_packets"] == 4500' \
    '0 < d["ports"][1]["flow_cache_hits"] <= 4500 - 900' \
    'd["ports"][1]["flows_new"] == 900' \
    'd["ports"][1]["flows_aged"] == 900' \
    'd["ports"][1]["flow_table_full"] == 0'
"$stat" --json "$tmp/out.pcap" >"$tmp/s.json"
expect "$tmp/s.json" 'd["packets"] == 4500'

# The rest: 6000 flows in turn (net_pcap replaying them without end) share
# the 4096 slots: a slot holding one flow hits, slots holding more thrash;
# a build without the rest found 59 % of lookups in the cache, under the
# 3/4 it needs, so after its first 65536-lookup window it rests 1M packets
# at a time, one window in 17 probing: under 10 % (3-4 % here).
"$gen" -o "$tmp/r.pcap" --flows 6000 --count 6000 --size 64 2>/dev/null
rc=0
prefix="pcr-fc-$$-rest"
timeout --preserve-status -k 20 -s INT 2 "$pacer" $(eal "net_pcap0,rx_pcap=$tmp/r.pcap,infinite_rx=1") \
    -- --mbufs 16384 --max-flows 8192 --stats-json "$tmp/r.json" >"$tmp/r.out" 2>"$tmp/r.err" || rc=$?
[ "$rc" -eq 0 ] || fail "6000 flows: pacer exited $rc: $(tail -n 3 "$tmp/r.err")"
conserved "$tmp/r.json"
expect "$tmp/r.json" 'd["ports"][0]["rx_packets"] > 2 * 65536' \
    'd["ports"][0]["flows_new"] == 6000' \
    'd["ports"][0]["flow_cache_hits"] < 0.10 * d["ports"][0]["rx_packets"]'
echo "ok: 6000 flows in turn: $(python3 -c "import json; p=json.load(open('$tmp/r.json'))['ports'][0]; print(p['flow_cache_hits'], 'of', p['rx_packets'], 'lookups from the cache')")"
echo "ok: 3 x 300 flows of 5 frames, each phase aged out before the next: 900 new, 900 aged, 4500 sent, $(python3 -c "import json; print(json.load(open('$tmp/c.json'))['ports'][1]['flow_cache_hits'])") from the cache"
