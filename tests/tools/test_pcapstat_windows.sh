#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Burst windows, gaps and rates on a capture small enough to do by hand
# (times relative to the first packet, T = 1e18 ns):
#   4 x 1000 bytes at 0, 100, 200, 300 ns  (a burst)
#   4 x  500 bytes at 10000, 11000, 12000, 13000 ns  (--append)
# gaps: 100 100 100 9700 1000 1000 1000 -> min 100, p50 1000 (4th of 7),
#       p99 9700 (7th), max 9700
# rate: (4000 + 1500) bytes * 8 / 13000 ns = 44000/13000 Gbit/s
# most bytes in [t, t + W):
#   W = 1000: 4000 (t = 0)      W = 5000: 4000     W = 10001: 4500
#   (0 .. 10000)                W = 20000: 6000 (everything)
source "$(dirname "$0")/lib.sh"

T=1000000000000000000
gen_quiet -o "$tmp/w.pcap" --count 4 --size 1000 --gap-ns 100 --start-ns $T
gen_quiet -o "$tmp/w.pcap" --append --count 4 --size 500 --gap-ns 1000 \
    --start-ns $((T + 10000)) --sport 10001
grep -q '^pacer-pcapgen: appended 4 packets' "$tmp/gen.err" || fail "append summary: $(cat "$tmp/gen.err")"

W="--window 1000 --window 5000 --window 10001 --window 20000"
# shellcheck disable=SC2086
stat_json "$tmp/a.json" $W "$tmp/w.pcap"
expect "$tmp/a.json" 'd["packets"] == 8' 'd["bytes"] == 6000' \
    'd["duration_ns"] == 13000' \
    'd["rate_bps"] == round(44000 * 1e9 / 13000, 1)' \
    'd["rate_ref_bps"] == d["rate_bps"]' \
    'd["gap_ns"] == {"min": 100, "p50": 1000, "p99": 9700, "max": 9700}' \
    '[w["window_ns"] for w in d["windows"]] == [1000, 5000, 10001, 20000]' \
    '[w["max_bytes"] for w in d["windows"]] == [4000, 4000, 4500, 6000]' \
    'all(abs(w["burst_above_rate_bytes"] - max(0, w["max_bytes"] - 44000e9 / 13000 * w["window_ns"] / 8e9)) <= 0.05 for w in d["windows"])' \
    '[(f["key"], f["packets"], f["bytes"]) for f in d["flows"]] == [("udp 198.18.0.1:10000 > 198.19.0.1:5201", 4, 4000), ("udp 198.18.0.1:10001 > 198.19.0.1:5201", 4, 2000)]' \
    'd["flows"][0]["rate_bps"] == round(3000 * 8 * 1e9 / 300, 1)' \
    'd["flows"][0]["gap_ns"] == {"min": 100, "p50": 100, "p99": 100, "max": 100}' \
    'd["flows"][1]["rate_bps"] == 4e9' \
    'd["flows"][1]["gap_ns"] == {"min": 1000, "p50": 1000, "p99": 1000, "max": 1000}'
echo "ok: windows against the achieved rate"

# --time-scale 2: every time pcapstat reports is scaled, the flows' too
# (each flow's first_ns/last_ns once came from the raw timestamps while
# the packets were rescaled: a raw first_ns beside a scaled last_ns, and a
# flow's rate from the two). Scaled, the second flow spans 20000 .. 26000
# ns (rate 1500 * 8 / 6000 ns = 2 Gbit/s, half the unscaled 4); the first
# 0 .. 600 (half its unscaled rate); gaps and gaps_below doubled.
# shellcheck disable=SC2086
stat_json "$tmp/t.json" --time-scale 2 --ideal-gap-ns 2000 $W "$tmp/w.pcap"
python3 - "$tmp/a.json" "$tmp/t.json" $T <<'PY' || fail "--time-scale 2: see above"
import json, sys
a, t = (json.load(open(p)) for p in sys.argv[1:3])
T = int(sys.argv[3])
fa = {f["key"]: f for f in a["flows"]}
ft = {f["key"]: f for f in t["flows"]}
k1, k2 = "udp 198.18.0.1:10000 > 198.19.0.1:5201", "udp 198.18.0.1:10001 > 198.19.0.1:5201"
checks = [
    ("capture first_ns/last_ns", (t["first_ns"], t["last_ns"], t["duration_ns"]), (T, T + 26000, 26000)),
    ("capture rate halved", t["rate_bps"], round(a["rate_bps"] / 2, 1)),
    ("flow 1 first_ns/last_ns", (ft[k1]["first_ns"], ft[k1]["last_ns"]), (T, T + 600)),
    ("flow 2 first_ns/last_ns", (ft[k2]["first_ns"], ft[k2]["last_ns"]), (T + 20000, T + 26000)),
    ("flow 1 rate halved", ft[k1]["rate_bps"], round(fa[k1]["rate_bps"] / 2, 1)),
    ("flow 2 rate halved", (ft[k2]["rate_bps"], fa[k2]["rate_bps"]), (2e9, 4e9)),
    ("flow 2 gaps doubled", ft[k2]["gap_ns"], {"min": 2000, "p50": 2000, "p99": 2000, "max": 2000}),
    ("capture gaps doubled", t["gap_ns"], {"min": 200, "p50": 2000, "p99": 19400, "max": 19400}),
    ("gaps_below 2000 (200 200 200 19400 2000 2000 2000)", t["gaps_below"], 3),
    ("windows on scaled times (20000 ns now holds only the burst)", [w["max_bytes"] for w in t["windows"]], [4000, 4000, 4000, 4000]),
]
bad = [(n, got, want) for n, got, want in checks if got != want]
for n, got, want in bad:
    print("FAIL: --time-scale 2: %s: %r, want %r" % (n, got, want), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
echo "ok: --time-scale 2: every reported time scaled, per-flow rates halved"

# against --rate 1gbit: 125 bytes per us
# shellcheck disable=SC2086
stat_json "$tmp/r.json" $W --rate 1gbit "$tmp/w.pcap"
expect "$tmp/r.json" 'd["rate_ref_bps"] == 1e9' \
    '[w["burst_above_rate_bytes"] for w in d["windows"]] == [3875.0, 3375.0, 3249.9, 3500.0]'
# a rate above every window's peak: no burst
# shellcheck disable=SC2086
stat_json "$tmp/r.json" $W --rate 100gbit "$tmp/w.pcap"
expect "$tmp/r.json" '[w["burst_above_rate_bytes"] for w in d["windows"]] == [0.0, 0.0, 0.0, 0.0]'
echo "ok: windows against --rate"

# tc spellings of --rate, pacer's grammar (lib/parse): bps is bytes/s as
# for tc and pacer, kibit powers of 1024
for r in "2.5gbit 2.5e9" "2500mbit 2.5e9" "2500000kbit 2.5e9" "2500000000bit 2.5e9" \
    "2500000000 2.5e9" "0.0025tbit 2.5e9" "10Mbit 1e7" "1.5KBIT 1500" "10mbps 8e7" "1kibit 1024"; do
    set -- $r
    stat_json "$tmp/r.json" --rate "$1" "$tmp/w.pcap"
    expect "$tmp/r.json" "d['rate_ref_bps'] == $2"
done
echo "ok: --rate spellings"

# gaps below an ideal gap; --skip of the burst
stat_json "$tmp/g.json" --ideal-gap-ns 1000 "$tmp/w.pcap"
expect "$tmp/g.json" 'd["gaps_below"] == 3'
stat_json "$tmp/g.json" --ideal-gap-ns 1001 "$tmp/w.pcap"
expect "$tmp/g.json" 'd["gaps_below"] == 6'
stat_json "$tmp/s.json" --skip 4 --window 1000 --window 1001 "$tmp/w.pcap"
expect "$tmp/s.json" 'd["packets"] == 4' 'd["rate_bps"] == 4e9' \
    '[w["max_bytes"] for w in d["windows"]] == [500, 1000]' \
    '[w["burst_above_rate_bytes"] for w in d["windows"]] == [0.0, 499.5]'
echo "ok: --ideal-gap-ns, --skip"

# timestamps going backwards: gap 0 and counted; windows in time order
python3 - "$tmp/w.pcap" "$tmp/back.pcap" "$tool" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("pcaptool", sys.argv[3])
pt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pt)
cap = pt.read_pcap(sys.argv[1])
# move the last packet (13000 ns) to the front
cap["pkts"].insert(0, cap["pkts"].pop())
pt.write_pcap(sys.argv[2], cap)
PY
# shellcheck disable=SC2086
stat_json "$tmp/b.json" $W "$tmp/back.pcap"
expect "$tmp/b.json" 'd["ts_backwards"] == 1' 'd["packets"] == 8' \
    'd["gap_ns"]["min"] == 0' 'd["duration_ns"] == 0' 'd["rate_bps"] == 0' \
    '[w["max_bytes"] for w in d["windows"]] == [4000, 4000, 4500, 6000]'
echo "ok: timestamps going backwards"
