#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The subscriber tree (issue 36): an ISP's nodes from LibreQoS's
# network.json, its subscribers from ShapedDevices.csv, each packet's
# subscriber found by longest-prefix match and every node on its path
# holding its max rate. Four levels under the port:
#
#   Site_A 20 (up 10) > AP_1 8 (4)  > alice 5 (2) 2 flows, bob 5 (2) 2 flows
#                     > AP_2 10 (5) > AP_2a 6 (3) > carol 10 (5) a /24
#   Site_B 6 (3)      > dave 3 (1.5): IPv4 and an IPv6 /48
#   (port)            > erin 2 (1): 198.19.4.0/24, frank 1 (0.5): .9 in it
#   (nobody)          > 198.19.9.9: unshaped, goes by the classes
#
# 1000-byte frames, every backlog arriving at once (--replay). Download:
# what leaves by port 0, the port that faces the subscribers, by
# destination. Judged from the output capture by tree_judge.py (the tree
# read again with Python's json, csv and ipaddress): every node within
# max x (W + L) + burst + bucket + frame at W = 1, 10, 100 ms; the
# bottleneck of each path at its rate within 3 % over its run (AP_1 8,
# alice and bob 4 each: two flows each, round robin; AP_2a 6, dave 3,
# erin 2, frank 1 though its /32 is inside erin's /24); each node's sent
# count in pacer's statistics equal to the capture's; per-flow order;
# conserved. Upload: the same frames from the subscribers (source
# addresses) leaving by port 1, the one that faces the Internet, at the
# upload rates. --unmatched erin: the frames of no subscriber counted and
# shaped as erin's. Bad input: a bad file, a tree too deep, a port that
# does not exist, --unmatched of nobody, of a node, without a tree: exit
# 2, the message naming it, nothing started.
source "$(dirname "$0")/lib.sh"

judge=$here/tree_judge.py

cat >"$tmp/network.json" <<'JSON'
{
  "Site_A": {"downloadBandwidthMbps": 20, "uploadBandwidthMbps": 10, "type": "Site",
    "children": {
      "AP_1": {"downloadBandwidthMbps": 8, "uploadBandwidthMbps": 4, "type": "AP"},
      "AP_2": {"downloadBandwidthMbps": 10, "uploadBandwidthMbps": 5, "type": "AP",
        "children": {
          "AP_2a": {"downloadBandwidthMbps": 6, "uploadBandwidthMbps": 3, "type": "AP"}}}}},
  "Site_B": {"downloadBandwidthMbps": 6, "uploadBandwidthMbps": 3, "type": "Site"}
}
JSON
cat >"$tmp/subs.csv" <<'CSV'
Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment
alice,Alice,a1,router,AP_1,,198.19.1.1,,1,1,5,2,
bob,Bob,b1,router,AP_1,,198.19.1.2,,1,1,5,2,
carol,Carol,c1,router,AP_2a,,198.19.2.0/24,,1,1,10,5,
dave,Dave,d1,router,Site_B,,198.19.3.1,2001:db8:3::/48,1,1,3,1.5,
erin,Erin,e1,router,,,198.19.4.0/24,,1,1,2,1,
frank,Frank,f1,router,,,198.19.4.9,,0.5,0.5,1,0.5,
CSV

# gen_all DIR-FLAG OUT: every subscriber's backlog, the subscriber's
# address as destination (--dst) or source (--src)
gen_all() {
    local side=$1 out=$2 app=()
    local runs=(
        "--flows 2 --count 320 --sport 10000 198.19.1.1"
        "--flows 2 --count 320 --sport 11000 198.19.1.2"
        "--flows 1 --count 240 --sport 12000 198.19.2.7"
        "--flows 1 --count 60 --sport 13000 198.19.3.1"
        "--flows 1 --count 60 --sport 13100 --ipv6 2001:db8:3::5"
        "--flows 1 --count 150 --sport 14000 198.19.4.1"
        "--flows 1 --count 75 --sport 15000 198.19.4.9"
        "--flows 1 --count 50 --sport 16000 198.19.9.9"
    )
    local r args addr
    for r in "${runs[@]}"; do
        read -ra args <<<"$r"
        addr=${args[-1]}
        unset 'args[-1]'
        if [ "$side" = dst ]; then
            [[ $addr == *:* ]] && args+=(--src 2001:db8:ff::1)
        else
            [[ $addr == *:* ]] && args+=(--dst 2001:db8:ff::1)
        fi
        "$gen" -o "$out" "${app[@]}" --size 1000 --gap-ns 1000 "${args[@]}" "--$side" "$addr" 2>/dev/null
        app=(--append)
    done
}
total=1275

# --- download: port 0 faces the subscribers -----------------------------
gen_all dst "$tmp/down.pcap"
run_pacer down $(eal "net_pcap0,rx_pcap=$tmp/down.pcap,tx_pcap=$tmp/down.out.pcap") \
    -- --replay --mbufs 8192 --max-flows 1024 --exit-on-idle 300 \
    --network "$tmp/network.json" --subscribers "$tmp/subs.csv"
[ "$rc" -eq 0 ] || fail "download: pacer exited $rc: $(cat "$tmp/down.err")"
grep -q "subscriber tree: 5 nodes, 6 subscribers (6 IPv4 and 1 IPv6 prefixes), 4 levels; port 0 faces the subscribers;" \
    "$tmp/down.out" || fail "download: no tree line: $(cat "$tmp/down.out")"
conserved "$tmp/down.json" || fail "download: not conserved"
expect "$tmp/down.json" "d['ports'][0]['tx_packets'] == $total" \
    'd["ports"][0]["dropped_total"] == 0' 'd["tree"]["subscribers"] == 6' ||
    fail "download: every frame sent"
python3 "$judge" --stats "$tmp/down.json" --network "$tmp/network.json" \
    --subscribers "$tmp/subs.csv" --direction download \
    --expect AP_1:8mbit:0.03 --expect alice:4mbit:0.03 --expect bob:4mbit:0.03 \
    --expect AP_2a:6mbit:0.03 --expect dave:3mbit:0.03 --expect erin:2mbit:0.03 \
    --expect frank:1mbit:0.03 "$tmp/down.out.pcap" || note "download: the tree's rates (above)"

# --- --unmatched: traffic of no subscriber shaped as erin ---------------
# erin (2 mbit/s) now carries its 150 frames and the 50 of 198.19.9.9:
# 200 frames at 2 mbit/s; everything else as before
run_pacer unm $(eal "net_pcap0,rx_pcap=$tmp/down.pcap,tx_pcap=$tmp/unm.out.pcap") \
    -- --replay --mbufs 8192 --max-flows 1024 --exit-on-idle 300 \
    --network "$tmp/network.json" --subscribers "$tmp/subs.csv" --unmatched erin
[ "$rc" -eq 0 ] || fail "unmatched: pacer exited $rc: $(cat "$tmp/unm.err")"
grep -q "traffic of no subscriber is shaped as subscriber erin (--unmatched)" "$tmp/unm.out" ||
    note "unmatched: no line saying so"
conserved "$tmp/unm.json" || fail "unmatched: not conserved"
expect "$tmp/unm.json" "d['ports'][0]['tx_packets'] == $total" \
    '[n["tx_packets"] for n in d["tree"]["ports"][0]["nodes"] if n["name"] == "erin"] == [200]' ||
    note "unmatched: erin's 150 frames and the 50 of nobody"
python3 "$judge" --stats "$tmp/unm.json" --network "$tmp/network.json" \
    --subscribers "$tmp/subs.csv" --direction download --unmatched erin \
    --expect erin:2mbit:0.03 --expect frank:1mbit:0.03 "$tmp/unm.out.pcap" >"$tmp/unm.judge" ||
    note "unmatched: the tree's rates: $(cat "$tmp/unm.judge")"

# --- upload: port 0 faces the subscribers, what they send leaves by 1 ----
gen_all src "$tmp/up.pcap"
"$gen" -o "$tmp/empty.pcap" --count 0 2>/dev/null
run_pacer up $(eal "net_pcap0,rx_pcap=$tmp/up.pcap,tx_pcap=$tmp/up.out0.pcap" \
    "net_pcap1,rx_pcap=$tmp/empty.pcap,tx_pcap=$tmp/up.out.pcap") \
    -- --replay --mbufs 8192 --max-flows 1024 --exit-on-idle 300 \
    --network "$tmp/network.json" --subscribers "$tmp/subs.csv" --subscriber-port 0
[ "$rc" -eq 0 ] || fail "upload: pacer exited $rc: $(cat "$tmp/up.err")"
conserved "$tmp/up.json" || fail "upload: not conserved"
expect "$tmp/up.json" "d['ports'][1]['tx_packets'] == $total" \
    'd["ports"][1]["dropped_total"] == 0' || fail "upload: every frame sent"
python3 "$judge" --stats "$tmp/up.json" --network "$tmp/network.json" \
    --subscribers "$tmp/subs.csv" --direction upload --port 1 \
    --expect AP_1:4mbit:0.03 --expect alice:2mbit:0.03 --expect bob:2mbit:0.03 \
    --expect AP_2a:3mbit:0.03 --expect dave:1.5mbit:0.03 --expect erin:1mbit:0.03 \
    --expect frank:0.5mbit:0.03 "$tmp/up.out.pcap" || note "upload: the tree's rates (above)"

# --- shares: children of a busy node by weight, not by flows --------------
# AP_3 10: gina 20 flows, hank 1 flow (min 1 each): 5 and 5.
# AP_4 8: ivy min 6, jack min 2 (max 8 each): 6 and 2.
# Site_C 8 > AP_5 (kim) and AP_6 (lee, max, moe, ned), min 1 each: the
# APs weigh 1 and 4 (the mins below them), 1.6 each subscriber.
# Every share judged in each 100 ms window (tree_judge.py --share),
# within 5 % and a frame.
cat >"$tmp/net2.json" <<'JSON'
{
  "AP_3": {"downloadBandwidthMbps": 10, "uploadBandwidthMbps": 10},
  "AP_4": {"downloadBandwidthMbps": 8, "uploadBandwidthMbps": 8},
  "Site_C": {"downloadBandwidthMbps": 8, "uploadBandwidthMbps": 8,
    "children": {
      "AP_5": {"downloadBandwidthMbps": 8, "uploadBandwidthMbps": 8},
      "AP_6": {"downloadBandwidthMbps": 8, "uploadBandwidthMbps": 8}}}
}
JSON
cat >"$tmp/subs2.csv" <<'CSV'
Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment
gina,,g,,AP_3,,198.19.5.1,,1,1,10,10,20 flows
hank,,h,,AP_3,,198.19.5.2,,1,1,10,10,1 flow
ivy,,i,,AP_4,,198.19.6.1,,6,6,8,8,
jack,,j,,AP_4,,198.19.6.2,,2,2,8,8,
kim,,k,,AP_5,,198.19.7.1,,1,1,8,8,
lee,,l,,AP_6,,198.19.7.2,,1,1,8,8,
max,,m,,AP_6,,198.19.7.3,,1,1,8,8,
moe,,o,,AP_6,,198.19.7.4,,1,1,8,8,
ned,,n,,AP_6,,198.19.7.5,,1,1,8,8,
CSV
rm -f "$tmp/shares.pcap"
app=()
sport=20000
for r in "20 600 198.19.5.1" "1 600 198.19.5.2" "1 720 198.19.6.1" "1 240 198.19.6.2" \
         "1 160 198.19.7.1" "1 160 198.19.7.2" "1 160 198.19.7.3" "1 160 198.19.7.4" \
         "1 160 198.19.7.5"; do
    read -r fl cnt dst <<<"$r"
    "$gen" -o "$tmp/shares.pcap" "${app[@]}" --size 1000 --gap-ns 1000 --flows "$fl" \
        --count "$cnt" --sport "$sport" --dst "$dst" 2>/dev/null
    app=(--append)
    sport=$((sport + 100))
done
run_pacer shares $(eal "net_pcap0,rx_pcap=$tmp/shares.pcap,tx_pcap=$tmp/shares.out.pcap") \
    -- --replay --mbufs 8192 --max-flows 1024 --exit-on-idle 300 \
    --network "$tmp/net2.json" --subscribers "$tmp/subs2.csv"
[ "$rc" -eq 0 ] || fail "shares: pacer exited $rc: $(cat "$tmp/shares.err")"
conserved "$tmp/shares.json" || fail "shares: not conserved"
expect "$tmp/shares.json" "d['ports'][0]['tx_packets'] == 2960" \
    'd["ports"][0]["dropped_total"] == 0' || fail "shares: every frame sent"
python3 "$judge" --stats "$tmp/shares.json" --network "$tmp/net2.json" \
    --subscribers "$tmp/subs2.csv" --direction download \
    --share gina:5mbit:0.05 --share hank:5mbit:0.05 --share ivy:6mbit:0.05 \
    --share jack:2mbit:0.05 --share AP_5:1.6mbit:0.05 --share AP_6:6.4mbit:0.05 \
    --share lee:1.6mbit:0.05 --share ned:1.6mbit:0.05 \
    "$tmp/shares.out.pcap" || note "shares: by weight, not by flows (above)"

# --- what an operator reads: show node/tree/top, Prometheus, telemetry -----
# The shares case again, read once every frame is sent: exact counts.
cat >"$tmp/views.cmd" <<'CMD'
start
sleep 3000
show node gina
show tree Site_C
show top nodes 3 by bytes
show stats prometheus
show node nope
show tree depth 12
CMD
run_pacer views $(eal "net_pcap0,rx_pcap=$tmp/shares.pcap,tx_pcap=$tmp/views.out.pcap" | sed 's/--no-telemetry//') \
    -- --replay --mbufs 8192 --max-flows 1024 --exit-on-idle 300 \
    --network "$tmp/net2.json" --subscribers "$tmp/subs2.csv" --cmdline-file "$tmp/views.cmd"
[ "$rc" -eq 0 ] || fail "views: pacer exited $rc: $(cat "$tmp/views.err")"
expect "$tmp/views.json" "d['ports'][0]['tx_packets'] == 2960" || fail "views: every frame sent"
grep -Eq "^ +0 download +10Mbit +1Mbit +600 +600000 " "$tmp/views.out" ||
    note "show node gina: no row of 600 frames, 600000 bytes: $(cat "$tmp/views.out")"
grep -q "gina (subscriber), depth 2, under AP_3, 0 children" "$tmp/views.out" ||
    note "show node gina: no heading"
for row in "Site_C node 8Mbit 800000" "AP_5 node 8Mbit 160000" "kim subscriber 8Mbit 160000" \
           "AP_6 node 8Mbit 640000" "ned subscriber 8Mbit 160000"; do
    read -r n t m b <<<"$row"
    grep -Eq "^ +$n +$t +$m +[0-9.]+[KMG]?bit +$b\$" "$tmp/views.out" || note "show tree Site_C: no row '$row'"
done
awk '/top 3 nodes by bytes/ {on = 1; next} on && /^  [A-Za-z]/ && $1 != "node" {print $1; if (++k == 3) exit}' \
    "$tmp/views.out" | tr '\n' ' ' | grep -q "^AP_3 AP_4 Site_C $" ||
    note "show top nodes 3 by bytes: not AP_3 AP_4 Site_C: $(cat "$tmp/views.out")"
grep -q '^pacer_node_tx_bytes_total{port="0",node="AP_3",type="node"} 1200000$' "$tmp/views.out" ||
    note "Prometheus: no AP_3 series of 1200000 bytes"
[ "$(grep -c '^pacer_node_tx_bytes_total{.*type="subscriber"}' "$tmp/views.out")" -eq 9 ] ||
    note "Prometheus: not the 9 subscribers (the top 10 by rate)"
grep -q "error: node 'nope': no such node or Circuit ID in the tree" "$tmp/views.out" ||
    note "show node nope: no error naming it"
grep -q "error: depth 12: 12 is out of range \[1, 9\]" "$tmp/views.out" ||
    note "show tree depth 12: no error naming it"
# telemetry, while pacer runs (no --exit-on-idle: SIGINT once read)
client=$(command -v dpdk-telemetry.py || true)
[ -n "$client" ] || fail "dpdk-telemetry.py not found (Debian package dpdk-dev)"
"$pacer" $(eal "net_pcap0,rx_pcap=$tmp/shares.pcap,tx_pcap=$tmp/tel.out.pcap" | sed 's/--no-telemetry//') \
    -- --replay --mbufs 8192 --max-flows 1024 --network "$tmp/net2.json" \
    --subscribers "$tmp/subs2.csv" --stats-json "$tmp/tel.json" >"$tmp/tel.out" 2>"$tmp/tel.err" &
tpid=$!
stop_on_exit "$tpid"
deadline=$((SECONDS + 120))
while :; do
    kill -0 $tpid 2>/dev/null || fail "telemetry: pacer exited: $(cat "$tmp/tel.err")"
    printf '/pacer/node,gina\n' | timeout 20 python3 "$client" -f "$prefix" >"$tmp/tel.q" 2>&1 || true
    grep -q '"tx_packets": 600' "$tmp/tel.q" && break
    [ $SECONDS -lt $deadline ] || fail "telemetry: /pacer/node,gina never showed 600 sent: $(cat "$tmp/tel.q")"
    sleep 0.2
done
printf '/pacer/node,nope\n/pacer/node,AP_3\n' | timeout 20 python3 "$client" -f "$prefix" >"$tmp/tel.q2" 2>&1
kill -INT $tpid
wait $tpid || fail "telemetry: pacer exited $?: $(cat "$tmp/tel.err")"
python3 - "$tmp/tel.q" "$tmp/tel.q2" <<'PY' || note "telemetry: /pacer/node (above)"
import json, sys
g = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")][-1]["/pacer/node"]
q = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
nope, ap3 = q[0]["/pacer/node"], q[1]["/pacer/node"]
assert g["name"] == "gina" and g["parent"] == "AP_3" and g["type"] == "subscriber", g
assert g["port0"]["tx_bytes"] == 600000 and g["port0"]["max_bps"] == 10**7 and g["port0"]["weight_bps"] == 10**6, g
assert nope is None, nope
assert ap3["children"] == 2 and ap3["port0"]["tx_bytes"] == 1200000, ap3
PY

# --- bad input: exit 2, named, nothing started ----------------------------
bad() {
    local what=$1 want=$2
    shift 2
    run_pacer bad $(eal "net_pcap0,rx_pcap=$tmp/empty.pcap,tx_pcap=$tmp/bad.pcap") -- "$@"
    [ "$rc" -eq 2 ] || note "$what: exit $rc, want 2: $(cat "$tmp/bad.err")"
    grep -qF -- "$want" "$tmp/bad.err" || note "$what: no '$want' in: $(cat "$tmp/bad.err")"
    ! grep -q "pacer: lcore" "$tmp/bad.out" || note "$what: workers started"
}
sed 's/"downloadBandwidthMbps": 8,/"downloadBandwidthMbps": -8,/' "$tmp/network.json" >"$tmp/neg.json"
bad "a negative rate" "node 'Site_A/AP_1': downloadBandwidthMbps" --network "$tmp/neg.json"
sed 's/,5,2,$/,5,x,/' "$tmp/subs.csv" >"$tmp/badrate.csv"
bad "a bad rate" "badrate.csv:2: Upload Max Mbps 'x'" --network "$tmp/network.json" \
    --subscribers "$tmp/badrate.csv"
python3 - "$tmp/deep.json" <<'PY'
import json, sys
# L1 > L2 > ... > L9: nine interior levels
node = {"downloadBandwidthMbps": 10, "uploadBandwidthMbps": 10}
for i in range(8, 0, -1):
    node = {"downloadBandwidthMbps": 10, "uploadBandwidthMbps": 10,
            "children": {"L%d" % (i + 1): node}}
json.dump({"L1": node}, open(sys.argv[1], "w"))
PY
bad "a tree too deep" "node 'L9' is 9 levels deep" --network "$tmp/deep.json"
bad "no such port" "--subscriber-port 3: there is no such port (ports 0..0)" \
    --network "$tmp/network.json" --subscribers "$tmp/subs.csv" --subscriber-port 3
bad "--unmatched of nobody" "--unmatched zed: no subscriber has this Circuit ID" \
    --network "$tmp/network.json" --subscribers "$tmp/subs.csv" --unmatched zed
bad "--unmatched a node" "--unmatched AP_1: a node, not a subscriber (give a Circuit ID)" \
    --network "$tmp/network.json" --subscribers "$tmp/subs.csv" --unmatched AP_1
bad "--unmatched without a tree" "--unmatched erin: there is no subscriber tree" --unmatched erin
notes_done "ok: the subscriber tree: every node within its bound, the bottlenecks at their rates, both directions; bad files refused"
