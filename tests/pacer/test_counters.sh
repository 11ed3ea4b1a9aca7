#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# One name per port counter everywhere. The table (show counters: name,
# kind, unit, meaning) is read from a running pacer over its control
# socket; then every counter of it must appear under that same name, for
# every port, in each rendering:
#   - the prompt's show port stats ("name: value"),
#   - show stats json and the --stats-json file (a key of each port),
#   - telemetry (/pacer/stats,N, read with dpdk-telemetry.py),
#   - show stats prometheus (pacer_NAME{port="N",...}, with a TYPE line:
#     gauge for the table's gauges, counter otherwise),
# with one value: the renderings read while pacer idles (everything sent
# or dropped) agree on every counter (gauges may move), and the drop_ counters sum
# to dropped_total. No rendering may carry a port counter the table lacks
# under another name (the old nested "dropped" object, "spill" for a drop).
source "$(dirname "$0")/lib.sh"

ctl="$(dirname "$gen")/pacerctl"
[ -x "$ctl" ] || fail "no pacerctl next to $gen"
client=$(command -v dpdk-telemetry.py || true)
[ -n "$client" ] || fail "dpdk-telemetry.py not found (Debian package dpdk-dev)"
[ "$(id -u)" = 0 ] || { echo "SKIP: the runtime directory is root's"; exit 77; }

# 300 frames in on port 0, out on port 1 at 10 mbit/s with a 20 ms
# horizon: about 25 sent, the rest dropped beyond the horizon. No flow ages
# out while the views are read (--flow-idle 10 min): with a CPU hog on each
# vCPU the reads took longer than the default 3 s, and telemetry, read
# last, saw flows_aged 3 where the others had 0. Stopped by SIGINT once
# every view is read (not --exit-on-idle: the reads take what they take).
"$gen" -o "$tmp/in.pcap" --flows 3 --count 300 --size 1000 2>/dev/null
"$gen" -o "$tmp/empty.pcap" --flows 1 --count 0 2>/dev/null
sock="/var/run/dpdk/$prefix/pacer.sock"
timeout 60 "$pacer" $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out0.pcap" \
    "net_pcap1,rx_pcap=$tmp/empty.pcap,tx_pcap=$tmp/out1.pcap" | sed 's/--no-telemetry//') \
    -- --rate 10mbit --horizon 20 --mbufs 4096 --max-flows 64 \
    --flow-idle 600000 \
    --stats-json "$tmp/c.json" >"$tmp/c.out" 2>"$tmp/c.err" &
pid=$!
stop_on_exit "$pid"
wait_started "$tmp/c.out" "$pid" || fail "pacer did not start: $(cat "$tmp/c.err")"
for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done

# wait (bounded) until nothing is queued: every frame sent or dropped
for _ in $(seq 100); do
    "$ctl" -s "$sock" show stats --json >"$tmp/j" 2>/dev/null || true
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d["ports"][1]["queued"] == 0 and d["ports"][1]["tx_packets"] > 0 else 1)' "$tmp/j" 2>/dev/null && break
    sleep 0.1
done
"$ctl" -s "$sock" show counters >"$tmp/table" || fail "show counters: $(cat "$tmp/table")"
"$ctl" -s "$sock" show port stats all >"$tmp/prompt" || fail "show port stats: $(cat "$tmp/prompt")"
"$ctl" -s "$sock" show stats --json >"$tmp/json" || fail "show stats --json"
"$ctl" -s "$sock" show stats --prometheus >"$tmp/prom" || fail "show stats --prometheus"
printf '%s\n' /pacer/stats,0 /pacer/stats,1 | timeout 20 python3 "$client" -f "$prefix" >"$tmp/tel" 2>&1 ||
    fail "dpdk-telemetry.py: $(cat "$tmp/tel")"
kill -INT "$pid"
wait $pid || fail "pacer exited $?: $(cat "$tmp/c.err")"
trap pcr_cleanup EXIT
conserved "$tmp/c.json"

python3 - "$tmp" <<'PY' || fail "counter names: see above"
import json, re, sys
tmp = sys.argv[1]
ok = True
def check(cond, what):
    global ok
    if not cond:
        print("FAIL:", what)
        ok = False

rows = [l.split(None, 3) for l in open(tmp + "/table").read().splitlines()[1:] if l.strip()]
table = {r[0]: r[1] for r in rows}
check(len(table) >= 30 and all(len(r) == 4 and r[1] in ("counter", "gauge", "drop") for r in rows),
      "show counters: %d rows, want name kind unit meaning each: %s" % (len(rows), rows[:3]))
drops = [n for n, k in table.items() if k == "drop"]
check(all(n.startswith("drop_") for n in drops) and len(drops) >= 10, "drop counters: %s" % drops)
check("drop_spill" not in table and "drop_wheel_full" in table, "the wheel's drop is drop_wheel_full")

# the prompt: "name: value", per port block
prompt = {}
blocks = re.split(r"(?m)^  ######## port (\d+) \(", open(tmp + "/prompt").read())
for i in range(1, len(blocks), 2):
    prompt[int(blocks[i])] = {m.group(1): int(m.group(2))
                              for m in re.finditer(r"(\w+): (\d+)\b", blocks[i + 1])}
jshow = {p["port"]: p for p in json.load(open(tmp + "/json"))["ports"]}
jfile = {p["port"]: p for p in json.load(open(tmp + "/c.json"))["ports"]}
# the client prints each reply, {"/pacer/stats": {...}}, in query order
tel, text, dec, pos = {}, open(tmp + "/tel").read(), json.JSONDecoder(), 0
while len(tel) < 2 and text.find("{", pos) >= 0:
    obj, pos = dec.raw_decode(text, text.find("{", pos))
    if "/pacer/stats" in obj:
        tel[len(tel)] = obj["/pacer/stats"]
# Prometheus names counters NAME_total (dropped_total is one already);
# the table's name is what is left
def unprom(n):
    return n if n in table or not n.endswith("_total") else n[:-6]
prom, ptype, psfx = {}, {}, {}
for n, t in re.findall(r"(?m)^# TYPE pacer_(\w+) (\w+)$", open(tmp + "/prom").read()):
    ptype[unprom(n)], psfx[unprom(n)] = t, n.endswith("_total")
for m in re.finditer(r'(?m)^pacer_(\w+)\{port="(\d+)",name="[^"]*"\} (\d+)$', open(tmp + "/prom").read()):
    prom.setdefault(int(m.group(2)), {})[unprom(m.group(1))] = int(m.group(3))
for what, r in (("show port stats", prompt), ("show stats json", jshow), ("--stats-json", jfile),
                ("telemetry", tel), ("prometheus", prom)):
    check(sorted(r) == [0, 1], "%s: ports %s, want 0 and 1" % (what, sorted(r)))
for p in (0, 1):
    for n, kind in table.items():
        vals = {}
        for what, r in (("show port stats", prompt), ("show stats json", jshow),
                        ("telemetry", tel), ("prometheus", prom)):
            if n not in r.get(p, {}):
                check(False, "port %d: %s has no %s" % (p, what, n))
            else:
                vals[what] = r[p][n]
        check(n in jfile.get(p, {}), "port %d: --stats-json has no %s" % (p, n))
        # a gauge (the staging lead) may move between the reads
        check(kind == "gauge" or len(set(vals.values())) <= 1, "port %d: %s differs: %s" % (p, n, vals))
        want = "gauge" if kind == "gauge" else "counter"
        check(ptype.get(n) == want, "prometheus: %s has TYPE %s, want %s" % (n, ptype.get(n), want))
        check(psfx.get(n) == (want == "counter"),
              "prometheus: %s: a counter's name ends in _total, a gauge's not" % n)
    # nothing renamed beside the table: no key of a port's JSON that looks
    # like a counter and is not in it (the rest are documented non-counters)
    other = {"port", "name", "peer", "rate_bps", "link", "bucket_bytes", "classify", "wheel",
             "classes", "deleted_classes", "departure_error_ns", "queue_delay_ns", "tx_offload",
             "nic_clock"}
    extra = set(jfile[p]) - set(table) - other
    check(not extra, "port %d: --stats-json keys outside the table: %s" % (p, sorted(extra)))
    extra = set(tel[p]) - set(table) - {"name", "peer", "rate_bps", "link", "departure_error_p50_ns",
                                         "departure_error_p99_ns", "departure_error_max_ns",
                                         "queue_delay_p50_ns", "queue_delay_p99_ns", "queue_delay_max_ns"}
    check(not extra, "port %d: telemetry keys outside the table: %s" % (p, sorted(extra)))
    check(jfile[p]["dropped_total"] == sum(jfile[p][n] for n in drops), "port %d: drop_ sum" % p)
d1 = jfile[1]
check(d1["drop_horizon"] > 0 and d1["tx_packets"] + d1["dropped_total"] == 300,
      "port 1: 300 frames, some beyond the horizon: tx %d dropped %d" % (d1["tx_packets"], d1["dropped_total"]))
print("ok: %d port counters (%d drop reasons), one name each in show port stats, show stats json, "
      "--stats-json, telemetry and prometheus, equal values; port 1 sent %d, dropped %d beyond the horizon"
      % (len(table), len(drops), d1["tx_packets"], d1["drop_horizon"]))
sys.exit(0 if ok else 1)
PY
