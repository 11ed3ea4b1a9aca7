#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# tools/soak.sh [MINUTES] [BUILDDIR]: pacer under the most load this
# machine can offer for MINUTES (default 30): net_pcap replays 8 flows of
# mixed sizes forever (infinite_rx=1), far above the rates; a CLI script
# changes the port rate and the flows' rate every 3 s (a cycle of 6
# settings), adds and deletes a class now and then. Every second it reads
# /pacer/stats with dpdk-telemetry.py and the process's RSS, and fails if
#   - a counter goes backwards,
#   - rx != tx + dropped + queued in a consistent snapshot,
#   - nothing was sent in the last 5 s (forwarding stopped),
#   - RSS grew by more than 16 MiB after the first minute (a leak),
#   - mbufs in use exceed the pool, or are not 0 at exit,
#   - pacer does not exit 0 on SIGTERM at the end.
# Writes BUILDDIR/soak/samples.csv and prints a summary. Not a CI test.
set -euo pipefail

minutes=${1:-30}
top=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$top/build}
out=$build/soak
pacer=$build/src/pacer
gen=$build/tools/pacer-pcapgen
prefix="pcr-soak-$$"
client=$(command -v dpdk-telemetry.py)
mkdir -p "$out"
pid=
cleanup() {
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
}
trap cleanup EXIT

"$gen" -o "$out/in.pcap" --flows 8 --count 8000 --size-min 64 --size-max 1514 --seed 7 2>/dev/null
# the script: 6 settings, 3 s apart, for as long as the soak lasts
rates=("50mbit 5mbit" "200mbit 20mbit" "10mbit 1mbit" "1gbit unlimited" "100mbit 40mbit" "20mbit 2mbit")
{
    echo "start"
    steps=$(( minutes * 60 / 3 + 2 ))
    for ((i = 0; i < steps; i++)); do
        set -- ${rates[$((i % ${#rates[@]}))]}
        echo "set port 0 rate $1"
        echo "set class default flow-rate $2"
        if (( i % 20 == 5 )); then echo "add class soak$i match proto udp sport 10000-10003 rate 30mbit"; fi
        if (( i % 20 == 15 )); then echo "del class soak$((i - 10))"; fi
        echo "sleep 3000"
    done
} >"$out/soak.cmd"

"$pacer" -l 0,1 --no-huge -m 1024 --no-pci --no-shconf --file-prefix="$prefix" \
    --vdev "net_pcap0,rx_pcap=$out/in.pcap,tx_pcap=/dev/null,infinite_rx=1" -- \
    --cmdline-file "$out/soak.cmd" --horizon 100 --mbufs 65535 --max-flows 4096 \
    --stats-json "$out/final.json" >"$out/pacer.out" 2>"$out/pacer.err" &
pid=$!
sleep 3

python3 - "$client" "$prefix" "$pid" "$minutes" "$out/samples.csv" <<'PY'
import json, subprocess, sys, time
client, prefix, pid, minutes, csv = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
def stats():
    r = subprocess.run(["python3", client, "-f", prefix], input="/pacer/stats\n",
                       capture_output=True, text=True, timeout=20)
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)["/pacer/stats"]
    raise SystemExit("FAIL: no answer from telemetry: %r %r" % (r.stdout[-300:], r.stderr[-300:]))
def rss():
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0
keys = ["rx_packets", "tx_packets", "dropped_total", "drop_horizon", "tx_bytes"]
prev, last_tx_change, rss0, fails = None, time.time(), None, []
end = time.time() + minutes * 60
n = 0
with open(csv, "w") as f:
    f.write("t,rx_packets,tx_packets,dropped_total,queued,mbufs_in_use,rss_bytes,consistent\n")
    t0 = time.time()
    while time.time() < end:
        s = stats()
        p = s["port0"]
        r = rss()
        t = time.time() - t0
        n += 1
        f.write("%.1f,%d,%d,%d,%d,%d,%d,%d\n" % (t, p["rx_packets"], p["tx_packets"], p["dropped_total"],
                                               p["queued"], s["mbufs_in_use"], r, s["consistent"]))
        f.flush()
        if s["consistent"] and p["rx_packets"] != p["tx_packets"] + p["dropped_total"] + p["queued"]:
            fails.append("t=%.0f: conservation: rx %d != tx %d + dropped %d + queued %d" %
                         (t, p["rx_packets"], p["tx_packets"], p["dropped_total"], p["queued"]))
        if s["mbufs_in_use"] > s["mbufs"]:
            fails.append("t=%.0f: %d mbufs in use of %d" % (t, s["mbufs_in_use"], s["mbufs"]))
        if prev is not None:
            for k in keys:
                if p[k] < prev[k]:
                    fails.append("t=%.0f: %s went back %d -> %d" % (t, k, prev[k], p[k]))
            if p["tx_packets"] != prev["tx_packets"]:
                last_tx_change = time.time()
        if time.time() - last_tx_change > 5:
            fails.append("t=%.0f: nothing sent for 5 s" % t)
        if t > 60 and rss0 is None:
            rss0 = r
        if rss0 is not None and r > rss0 + 16 * 2**20:
            fails.append("t=%.0f: RSS %d > %d + 16 MiB" % (t, r, rss0))
        if fails:
            break
        prev = p
        time.sleep(max(0, 1 - (time.time() - t0 - t)))
print("soak: %d samples over %.1f min; last: rx %d tx %d dropped %d queued %d, RSS %.1f MiB (after 1 min %.1f MiB)" %
      (n, (time.time() - t0) / 60, p["rx_packets"], p["tx_packets"], p["dropped_total"], p["queued"],
       r / 2**20, (rss0 or r) / 2**20))
if fails:
    print("FAIL:", *fails[:5], sep="\n  ")
    sys.exit(1)
PY
kill -TERM "$pid"
rc=0
timeout 30 tail --pid="$pid" -f /dev/null || true
wait "$pid" || rc=$?
pid=
[ "$rc" -eq 0 ] || { echo "FAIL: pacer exited $rc at SIGTERM: $(tail -n 3 "$out/pacer.err")"; exit 1; }
python3 - "$out/final.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
p = d["ports"][0]
ok = d["mempool_in_use_at_exit"] == 0 and d["consistent"] and \
     p["rx_packets"] == p["tx_packets"] + p["dropped_total"] + p["queued"] and \
     p["early"] == 0
print("soak: at exit rx %d tx %d dropped %s queued %d, mbufs in use %d, early %d, held for order %d: %s" %
      (p["rx_packets"], p["tx_packets"], {k: v for k, v in p.items() if k.startswith("drop_") and v}, p["queued"],
       d["mempool_in_use_at_exit"], p["early"], p["held_for_order"], "ok" if ok else "FAIL"))
sys.exit(0 if ok else 1)
PY
