#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# DPDK telemetry, read with the real client (dpdk-telemetry.py from
# Debian's dpdk-dev package) while pacer runs: 3 flows x 100 frames at 5
# mbit/s each; pacer runs until the test has read it and sends SIGINT (no
# idle timer: a client slowed by a busy machine once missed a 3 s window
# between the last frame and --exit-on-idle). Once everything is done,
# every command answers with its documented keys, and the counters equal
# what --stats-json says at exit. A bad parameter gets null (the
# command's error), not a crash.
source "$(dirname "$0")/lib.sh"

client=$(command -v dpdk-telemetry.py || true)
[ -n "$client" ] || fail "dpdk-telemetry.py not found (Debian package dpdk-dev)"
"$gen" -o "$tmp/in.pcap" --flows 3 --count 300 --size 500 2>/dev/null
cat >"$tmp/t.cfg" <<'CFG'
[pacer]
flow-rate = 5mbit
[class small]
match = proto udp sport 10000
rate = 20mbit
CFG
tel_prefix="$prefix"
"$pacer" $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap" | sed 's/--no-telemetry//') \
    -- --config "$tmp/t.cfg" --flow-idle 600000 --mbufs 4096 --max-flows 1024 \
    --stats-json "$tmp/t.json" >"$tmp/t.out" 2>"$tmp/t.err" &
pid=$!
trap 'kill $pid 2>/dev/null || true; pcr_cleanup' EXIT

query() {
    printf '%s\n' "$@" | timeout 20 python3 "$client" -f "$tel_prefix" 2>&1
}
# all 300 done: received, and sent or dropped under a named counter, none
# queued (on a busy machine the worker's stalls build a queue and CoDel may
# drop one: the counters must still agree with the exit's)
done_all() {
    python3 - "$1" <<'PY' 2>/dev/null
import json, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]["/pacer/stats"]
sys.exit(0 if s["rx_packets"] == 300 and s["tx_packets"] + s["dropped_total"] == 300
         and s["queued"] == 0 and s["pending"] == 0 and s["staged"] == 0 else 1)
PY
}
# wait until all 300 are done: bounded by 120 s (the frames need 0.1 s
# once pacer runs), and pacer must still be running while we wait
deadline=$((SECONDS + 120))
while :; do
    kill -0 $pid 2>/dev/null || fail "pacer exited before the queries: $(cat "$tmp/t.err")"
    query /pacer/stats,0 >"$tmp/q0" || true
    done_all "$tmp/q0" && break
    [ $SECONDS -lt $deadline ] || fail "telemetry never showed all 300 done in 120 s: $(cat "$tmp/q0")"
    sleep 0.1
done
query /pacer/stats /pacer/stats,0 /pacer/wheel /pacer/wheel,0 /pacer/classes /pacer/flows,2 \
    /pacer/config /pacer/stats,7 /pacer/flows,0 >"$tmp/q"
kill -INT $pid
wait $pid || fail "pacer exited $? after SIGINT: $(cat "$tmp/t.err")"
# telemetry on (as users run it): the EAL runtime directory is gone too
no_runtime_dir
trap pcr_cleanup EXIT
conserved "$tmp/t.json"
python3 - "$tmp/q" "$tmp/t.json" <<'PY' || fail "telemetry: see above"
import json, sys
replies = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
d = json.load(open(sys.argv[2]))
p = d["ports"][0]
assert len(replies) == 9, replies
(stats, stats0, wheel, wheel0, classes, flows, config, bad_port, bad_n) = [list(r.values())[0] for r in replies]
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("FAIL:", what)
        ok = False
port_keys = ["name", "peer", "rate_bps", "rx_packets", "rx_bytes", "tx_packets", "tx_bytes",
             "queued", "pending", "tx_retry", "offloaded", "dropped_total", "late", "early",
             "held_for_order", "flows_new", "flows_aged", "flow_table_full",
             "departure_error_p50_ns", "departure_error_p99_ns", "departure_error_max_ns"] + \
            [k for k in p if k.startswith("drop_")]
for k in port_keys:
    check(k in stats0, "/pacer/stats,0 lacks %s" % k)
check(stats["port0"] == stats0, "/pacer/stats port0 differs from /pacer/stats,0")
for k in ("tsc_hz", "tsc_hz_eal", "tsc_ppb", "consistent", "snapshot_retries",
          "snapshot_inconsistent", "forwarding", "mbufs_in_use", "mbufs"):
    check(k in stats, "/pacer/stats lacks %s" % k)
# the handshake's record so far: no more than at the exit
for k in ("snapshot_retries", "snapshot_inconsistent"):
    check(0 <= stats[k] <= d[k], "%s: telemetry %s, --stats-json %s" % (k, stats[k], d[k]))
# counters equal the exit statistics
for k in ("rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "queued", "late", "early",
          "held_for_order", "offloaded", "tx_retry", "flows_new"):
    check(stats0[k] == p[k], "%s: telemetry %s, --stats-json %s" % (k, stats0[k], p[k]))
check(stats0["dropped_total"] == p["dropped_total"], "dropped_total")
for k, v in p.items():
    if k.startswith("drop_"):
        check(stats0[k] == v, k)
# the measured frequency may be republished (> 20 ppb) between the query
# and the exit
check(abs(stats["tsc_hz"] / d["tsc_hz"] - 1) < 1e-6 and stats["tsc_hz_eal"] == d["tsc_hz_eal"],
      "tsc_hz %s vs %s" % (stats["tsc_hz"], d["tsc_hz"]))
check(stats["mbufs"] == 4096 and stats["mbufs_in_use"] == 0, "mbufs (all sent: none in use) %s" % stats)
for k in ("granularity_ns", "horizon_ns", "wheel_horizon_ns", "horizon_policy", "levels", "slots",
          "memsize", "queued", "inbox", "level0", "enqueued", "dequeued", "late", "horizon_cap",
          "spill", "cascaded", "direct"):
    check(k in wheel0, "/pacer/wheel,0 lacks %s" % k)
check(wheel["port0"] == wheel0, "/pacer/wheel port0 differs")
check(wheel0["enqueued"] == p["wheel"]["enqueued"] and wheel0["dequeued"] == p["wheel"]["dequeued"]
      and wheel0["direct"] == p["wheel"]["direct"] and wheel0["direct"] <= wheel0["dequeued"],
      "wheel counters")
check(wheel0["horizon_ns"] == d["horizon_ms"] * 10**6, "horizon_ns")
check(sorted(classes) == ["default", "small"], "classes: %s" % list(classes))
for c in d["ports"][0]["classes"]:
    t = classes[c["class"]]
    for k in ("name", "match", "rate_bps", "flow_rate_bps", "tx_packets", "tx_bytes"):
        check(k in t, "class %s lacks %s" % (c["class"], k))
    check(t["tx_packets"] == c["tx_packets"] and t["rate_bps"] == c["rate_bps"] and
          t["match"] == c["match"], "class %s: %s vs %s" % (c["class"], t, c))
check(flows["flows"] == 3 and "flow0" in flows and "flow1" in flows and "flow2" not in flows,
      "flows: %s" % flows)
keys = {f["key"]: f for f in d["flows"]}
for n in ("flow0", "flow1"):
    f = flows[n]
    for k in ("key", "class", "egress", "queued", "queued_bytes", "tx_packets", "tx_bytes", "rate_bps"):
        check(k in f, "%s lacks %s" % (n, k))
    check(f["tx_packets"] == keys[f["key"]]["tx_packets"], "%s tx_packets" % n)
check(config.get("pacer/flow_rate") == "5mbit" and config.get("class/small/match") ==
      "proto udp sport 10000" and config.get("class/small/rate") == "20mbit", "config: %s" % config)
check(bad_port is None and bad_n is None, "bad parameters: %s %s" % (bad_port, bad_n))
if not ok:
    sys.exit(1)
print("ok: /pacer/stats, /pacer/wheel, /pacer/classes, /pacer/flows, /pacer/config answer with their keys; counters match --stats-json")
PY
