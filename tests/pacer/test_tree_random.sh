#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The subscriber tree held and measured on random trees (issue 36, item
# 7): for seeds 1 and 2, four interior levels of random fan-out (1 to 3),
# each node's max a random 30-100 % of what its children could take, 1 to
# 3 subscribers under each bottom node with a random max (1-8 mbit/s) and
# min (0.5-3, or none), each with 1 to 4 flows of random frame sizes
# (200-1500 bytes) and a second of backlog at its max, all arriving at
# once. Fair order: tree_judge.py holds every node within max x (W + L) +
# burst + bucket + frame at W = 1, 10, 100 ms and counts every node's
# frames against pacer's; it also works out every node's weighted max-min
# share (water-filling by weight, node by node) and prints how far the
# worst 100 ms window is from it, not judged: on these trees a branch
# whose own deeper nodes hold it back loses the parent's room to a
# sibling that can place first (seed 1: 5.4 against 7.1 mbit/s), which
# the simple cases of test_tree.sh do not show (issue 36, item 7).
# Completion order (the class's order = completion): the bounds and the
# counts.
# Then LibreQoS's shape: pacer-ispgen's six levels (200 subscribers),
# traffic to 20 of them, the bounds and the counts. Every run conserved.
source "$(dirname "$0")/lib.sh"

judge=$here/tree_judge.py
ispgen=$top/tools/pacer-ispgen

gen_tree() { # SEED DIR: network.json, subs.csv, runs.txt (count sizes addr)
    python3 - "$1" "$2" <<'PY'
import json, random, sys
rnd = random.Random(int(sys.argv[1]))
d = sys.argv[2]
subs, runs, k = [], [], [0]

def node(level, parent):
    k[0] += 1
    name = "N%d_%d" % (level, k[0])
    if level == 4:
        cap = 0
        for _ in range(rnd.randint(1, 3)):
            i = len(subs) + 1
            mx = rnd.randint(2, 16) / 2
            mn = min(mx, rnd.choice([0, 0.5, 1, 2, 3]))
            subs.append((str(i), name, "198.19.%d.%d" % (i // 250, i % 250 + 1), mn, mx))
            cap += mx
    else:
        kids = {}
        cap = 0
        for _ in range(rnd.randint(1, 3)):
            kn, kv, kc = node(level + 1, name)
            kids[kn] = kv
            cap += kc
    mx = max(1, round(cap * rnd.uniform(0.3, 1.0), 1))
    v = {"downloadBandwidthMbps": mx, "uploadBandwidthMbps": mx}
    if level < 4:
        v["children"] = kids
    return name, v, min(cap, mx)

net = {}
for _ in range(2):
    n, v, _c = node(1, None)
    net[n] = v
json.dump(net, open(d + "/network.json", "w"), indent=1)
with open(d + "/subs.csv", "w") as f:
    f.write("Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,IPv6,"
            "Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max Mbps,Comment\n")
    for cid, par, addr, mn, mx in subs:
        f.write("%s,,d%s,,%s,,%s,,%g,%g,%g,%g,\n" % (cid, cid, par, addr, mn, mn, mx, mx))
        flows = rnd.randint(1, 4)
        # a second at its max, 850 bytes a frame on average
        runs.append("%d %d %s" % (flows, max(20, int(mx * 1e6 / 8 / 850)), addr))
open(d + "/runs.txt", "w").write("\n".join(runs) + "\n")
print(len(subs))
PY
}

# pcap_of RUNS OUT: every subscriber's backlog, random sizes, one file
pcap_of() {
    local sport=10000 app=() fl n addr
    rm -f "$2"
    while read -r fl n addr; do
        "$gen" -o "$2" "${app[@]}" --size-min 200 --size-max 1500 --seed "$sport" \
            --gap-ns 1000 --flows "$fl" --count "$n" --sport "$sport" --dst "$addr" 2>/dev/null
        app=(--append)
        sport=$((sport + 10))
    done <"$1"
}

# run_tree NAME DIR JUDGE-ARGS... -- PACER-ARGS...
run_tree() {
    local name=$1 d=$2 n jargs=()
    shift 2
    while [ "$1" != "--" ]; do jargs+=("$1"); shift; done
    shift
    n=$(python3 -c 'import sys; print(sum(int(l.split()[1]) for l in open(sys.argv[1])))' "$d/runs.txt")
    run_pacer "$name" $(eal "net_pcap0,rx_pcap=$d/in.pcap,tx_pcap=$d/$name.pcap") \
        -- --replay --mbufs 32768 --max-flows 4096 --exit-on-idle 300 \
        --network "$d/network.json" --subscribers "$d/subs.csv" "$@"
    if [ "$rc" -ne 0 ]; then
        note "$name: pacer exited $rc: $(cat "$tmp/$name.err")"
        return
    fi
    conserved "$tmp/$name.json" || note "$name: not conserved"
    expect "$tmp/$name.json" "d['ports'][0]['tx_packets'] == $n" 'd["ports"][0]["dropped_total"] == 0' ||
        note "$name: every frame sent"
    python3 "$judge" --stats "$tmp/$name.json" --network "$d/network.json" \
        --subscribers "$d/subs.csv" "${jargs[@]}" "$d/$name.pcap" >"$tmp/$name.judge" ||
        note "$name: $(grep -v '^ ' "$tmp/$name.judge" | tail -5) (tree_judge.py: $tmp/$name.judge)"
    [ -z "$(grep ' share ' "$tmp/$name.judge")" ] ||
        echo "$name: weighted max-min shares of $(grep -c ' share ' "$tmp/$name.judge") nodes (measured, not judged: issue 36), worst 100 ms windows $(grep ' share ' "$tmp/$name.judge" |
            sed 's/.*window \([-+0-9.]*\) %.*/\1/' | sort -g | sed -n '1p;$p' | tr '\n' ' ')%"
}

printf '[class default]\norder = completion\n' >"$tmp/completion.cfg"
for seed in 1 2; do
    d=$tmp/s$seed
    mkdir -p "$d"
    nsubs=$(gen_tree "$seed" "$d")
    pcap_of "$d/runs.txt" "$d/in.pcap"
    echo "seed $seed: $nsubs subscribers"
    run_tree "fair$seed" "$d" --fair-report --
    run_tree "compl$seed" "$d" -- --config "$tmp/completion.cfg"
done

# LibreQoS's shape: six levels, 20 of 200 subscribers busy
d=$tmp/lq
mkdir -p "$d"
"$ispgen" --subscribers 200 --seed 3 --ipv6-share 0 --multi-device-share 0 --out "$d" >/dev/null
cp "$d/ShapedDevices.csv" "$d/subs.csv"
python3 - "$d" <<'PY'
import csv, sys
d = sys.argv[1]
rows = list(csv.DictReader(l for l in open(d + "/subs.csv") if not l.startswith("#")))
with open(d + "/runs.txt", "w") as f:
    for r in rows[::10]:
        mx = float(r["Download Max Mbps"])
        f.write("2 %d %s\n" % (max(20, int(min(mx, 20) * 1e6 / 8 / 850 * 0.25)), r["IPv4"].split()[0]))
PY
pcap_of "$d/runs.txt" "$d/in.pcap"
run_tree libreqos "$d" --

notes_done "ok: random trees: every node within its bound and its count, both orders; LibreQoS's six levels within their bounds"
