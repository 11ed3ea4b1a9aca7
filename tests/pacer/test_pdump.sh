#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Live capture: dpdk-dumpcap against a running pacer writes its departures
# (rte_pdump in pacer; dumpcap is a secondary process). dumpcap attaches
# through the shared configuration and hugepage memory, so this test runs
# pacer the way a deployment does, with hugepages: it reserves 256 x 2 MiB
# for the run (restored after) and mounts a hugetlbfs of its own. Skips
# (77) without root, dpdk-dumpcap or hugepages.
#
# Port 0 reads a capture (net_pcap), port 1 is net_null (no-rx): a
# secondary process probes every vdev again, and a net_pcap's tx_pcap
# would be opened for writing by dumpcap too, truncating pacer's file.
# pacer holds forwarding (a script that sleeps); dumpcap attaches to port
# 1; `pacerctl start`; 1000 frames of one flow leave port 1 at 10 mbit/s.
# Checks: dumpcap's pcapng holds exactly the input's 1000 frames, in order;
# its timestamps (taken as each burst goes to the PMD) are spaced by the
# rate: median gap within 10 % of one frame time, and the whole run within
# 2 % of 999 frame times plus the lateness pacer measured (its departure
# error max); pacer exits 0 (quit) with every packet counted and no mbuf
# lost; and no runtime directory is left.
source "$(dirname "$0")/lib.sh"

ctl="$(dirname "$gen")/pacerctl"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (hugepages)"; exit 77; }
command -v dpdk-dumpcap >/dev/null || { echo "SKIP: no dpdk-dumpcap"; exit 77; }
command -v tcpdump >/dev/null || { echo "SKIP: no tcpdump (reads the pcapng)"; exit 77; }

nr=/proc/sys/vm/nr_hugepages
prefix="pcr-pdump-$$"
old=$(cat "$nr")
mnt="$tmp/huge"
pid=""
dump=""
pdump_cleanup() {
    set +e
    [ -n "$dump" ] && kill -KILL "$dump" 2>/dev/null
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    [ -n "$dump" ] && wait "$dump" 2>/dev/null
    [ -n "$pid" ] && wait "$pid" 2>/dev/null
    # hugepage files left by a killed pacer go with the mount
    mountpoint -q "$mnt" && umount "$mnt"
    echo "$old" >"$nr"
    rm -rf "/var/run/dpdk/$prefix"
    pcr_cleanup
}
trap pdump_cleanup EXIT
echo $((old + 256)) >"$nr" 2>/dev/null || true
if [ "$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)" -lt 256 ]; then
    echo "SKIP: cannot reserve 256 hugepages"
    exit 77
fi
mkdir -p "$mnt"
mount -t hugetlbfs -o pagesize=2M nodev "$mnt" || { echo "SKIP: cannot mount hugetlbfs"; exit 77; }

"$gen" -o "$tmp/in.pcap" --flows 1 --count 1000 --size 1000 2>/dev/null
printf 'sleep 60000\n' >"$tmp/hold.cmd"
# port 0 sends nothing here, so no tx_pcap (net_pcap drops what it would
# send): dpdk-dumpcap, a secondary process, opens its ports' pcap files
# too, and DPDK 22.11's net_pcap there opened the tx_pcap path cut at
# its first dot (strace: openat "/tmp/pacer-test.", O_CREAT|O_TRUNC),
# leaving a 24-byte capture outside the scratch directory every run
# dumpcap maps pacer's memory at the addresses pacer chose. The EAL asks
# for them at 4 GiB (its default base); under ASan that range is the
# shadow gap, the kernel places the 16 GiB reservation just below the
# libraries instead, and dumpcap's own libraries may sit there ("Cannot
# get a virtual area at requested address", CI). 32 TiB is free in a
# plain process and in ASan's high memory alike.
"$pacer" -l 0,1 --huge-dir "$mnt" --no-pci --file-prefix="$prefix" \
    --base-virtaddr=0x200000000000 \
    --log-level=lib.eal:warning \
    --vdev "net_pcap0,rx_pcap=$tmp/in.pcap" \
    --vdev "net_null1,no-rx=1" -- --replay \
    --rate 10mbit --mbufs 4096 --max-flows 64 --cmdline-file "$tmp/hold.cmd" \
    --stats-json "$tmp/p.json" >"$tmp/p.out" 2>"$tmp/p.err" &
pid=$!
wait_started "$tmp/p.out" "$pid" || fail "pacer did not start: $(cat "$tmp/p.err")"
# the live capture line comes after the control socket's: wait for it
# (bounded), not for the socket's (a busy machine once printed it after
# the look)
for _ in $(seq 400); do grep -q "^pacer: live capture" "$tmp/p.out" && break; sleep 0.05; done
grep -q "^pacer: live capture on (dpdk-dumpcap --file-prefix=$prefix -i PORT)" "$tmp/p.out" ||
    fail "no live capture line: $(grep -i capture "$tmp/p.out" "$tmp/p.err")"

dpdk-dumpcap --file-prefix="$prefix" -i 1 -c 1000 -w "$tmp/cap.pcapng" \
    >"$tmp/d.out" 2>"$tmp/d.err" &
dump=$!
for _ in $(seq 200); do
    grep -q "^File: " "$tmp/d.out" "$tmp/d.err" 2>/dev/null && break
    kill -0 "$dump" 2>/dev/null || break
    sleep 0.05
done
grep -q "^File: " "$tmp/d.out" "$tmp/d.err" || fail "dumpcap did not attach: $(cat "$tmp/d.out" "$tmp/d.err")"
"$ctl" --file-prefix "$prefix" start >/dev/null || fail "pacerctl start failed"
# 1000 frames at 10 mbit/s take 0.8 s; dumpcap stops at the 1000th
for _ in $(seq 600); do kill -0 "$dump" 2>/dev/null || break; sleep 0.1; done
kill -0 "$dump" 2>/dev/null && fail "dumpcap still capturing after 60 s: $(cat "$tmp/d.out" "$tmp/d.err")"
rc=0
wait "$dump" || rc=$?
dump=""
[ "$rc" = 0 ] || fail "dumpcap exited $rc: $(cat "$tmp/d.out" "$tmp/d.err")"
"$ctl" --file-prefix "$prefix" quit >/dev/null || fail "pacerctl quit failed"
rc=0
wait "$pid" || rc=$?
pid=""
[ "$rc" = 0 ] || fail "pacer exited $rc: $(tail -5 "$tmp/p.err")"
conserved "$tmp/p.json"
expect "$tmp/p.json" 'd["ports"][1]["tx_packets"] == 1000'
# with the shared configuration, the EAL's files in the runtime directory
# (config, fbarray_*, hugepage_info, mp_socket) go with pacer too
no_runtime_dir

tcpdump -r "$tmp/cap.pcapng" -nn -tt --time-stamp-precision=nano -x 2>/dev/null >"$tmp/cap.txt"
tcpdump -r "$tmp/in.pcap" -nn -tt --time-stamp-precision=nano -x 2>/dev/null >"$tmp/in.txt"
python3 - "$tmp/cap.txt" "$tmp/in.txt" "$tmp/p.json" <<'PY' || fail "the live capture: see above"
import json, re, sys
def frames(path):
    out, cur = [], None
    for line in open(path):
        m = re.match(r'^(\d+\.\d+) ', line)
        if m:
            cur = [int(m.group(1).replace('.', '')), []]
            out.append(cur)
        elif cur is not None and line.startswith('\t0x'):
            cur[1].append(line.split(':', 1)[1].replace(' ', '').strip())
    return [(t, ''.join(h)) for t, h in out]
cap, ref = frames(sys.argv[1]), frames(sys.argv[2])
p1 = json.load(open(sys.argv[3]))["ports"][1]
err = p1["departure_error_ns"]
# a stall of pacer's staging (its RX lcore off its CPU for longer than
# the lead, measured) moves the schedule: the span may be longer by it
# (with a CPU hog on each vCPU: 1059.8 ms for 799.2, the departure error
# max 7.6 ms), never shorter
stall = p1.get("stage_stall_ns", 0)
ok = True
if len(cap) != 1000 or len(ref) != 1000:
    print("FAIL: %d frames captured live, %d in the input, want 1000 each" % (len(cap), len(ref)))
    sys.exit(1)
if [h for _, h in cap] != [h for _, h in ref]:
    print("FAIL: the live capture's frames differ from the input (or their order)")
    ok = False
frame_ns = 1000 * 8 * 1000000000 // 10000000      # 1000-byte frames at 10 mbit/s
gaps = sorted(b[0] - a[0] for a, b in zip(cap, cap[1:]))
p50 = gaps[len(gaps) // 2]
span = cap[-1][0] - cap[0][0]
want = 999 * frame_ns
print("live capture: 1000 frames, gap p50 %d ns (one frame %d ns), span %.3f ms (999 frames %.3f ms), pacer's departure error max %d ns, staging stalls %d ns"
      % (p50, frame_ns, span / 1e6, want / 1e6, err["max"], stall))
if abs(p50 - frame_ns) > frame_ns / 10:
    print("FAIL: gap p50 not within 10 % of one frame time"); ok = False
if want - span > want * 0.02 + err["max"] or span - want > want * 0.02 + err["max"] + stall:
    print("FAIL: span not within 2 % + the departure error max (+ the staging's stalls, longer) of 999 frame times"); ok = False
sys.exit(0 if ok else 1)
PY
echo "ok: dpdk-dumpcap captured pacer's 1000 departures live, paced at the rate"
