#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# pacer-pcapstat on a perfectly paced capture: 3 flows x 100 packets of
# 1000 bytes, 8000 ns apart. Every figure is exact:
#   rate     = 299 * 1000 * 8 bit / (299 * 8000 ns)      = 1e9 bit/s
#   per flow = 99 * 1000 * 8 bit / (99 * 24000 ns)       = 333333333.3 bit/s
#   windows  = 1 ms holds 125 packets (125000 bytes = 1e9 * 1e-3 / 8: no
#              burst); 100 us holds 13 packets, 500 bytes above 12500.
source "$(dirname "$0")/lib.sh"

start=1700000000000000000
gen_quiet -o "$tmp/paced.pcap" --flows 3 --count 300 --size 1000 --gap-ns 8000
grep -qx 'pacer-pcapgen: wrote 300 packets (0 malformed), 300000 bytes, 3 flows, .*paced.pcap' \
    "$tmp/gen.err" || fail "summary line: $(cat "$tmp/gen.err")"

stat_json "$tmp/s.json" "$tmp/paced.pcap"
[ "$(wc -l <"$tmp/s.json")" -eq 1 ] || fail "--json is not one line"
expect "$tmp/s.json" \
    'd["file"].endswith("paced.pcap")' \
    'd["packets"] == 300' 'd["bytes"] == 300000' 'd["wire_bytes"] == 300000' \
    "d['first_ns'] == $start" "d['last_ns'] == $start + 299 * 8000" \
    'd["duration_ns"] == 299 * 8000' \
    'd["rate_bps"] == 1e9' \
    'd["gap_ns"] == {"min": 8000, "p50": 8000, "p99": 8000, "max": 8000}' \
    'd["seq_errors"] == 0' 'd["gaps_below"] == 0' 'd["ts_backwards"] == 0' \
    'd["classify"] == {"ok": 300, "l3_only": 0, "non_ip": 0, "truncated": 0, "bad_header": 0}' \
    'd["rate_ref_bps"] == 1e9' \
    'd["windows"] == [{"window_ns": 1000000, "max_bytes": 125000, "burst_above_rate_bytes": 0.0}, {"window_ns": 100000, "max_bytes": 13000, "burst_above_rate_bytes": 500.0}]' \
    'd["flow_count"] == 3 and len(d["flows"]) == 3' \
    '[f["key"] for f in d["flows"]] == ["udp 198.18.0.1:%d > 198.19.0.1:5201" % p for p in (10000, 10001, 10002)]' \
    'all(f["packets"] == 100 and f["bytes"] == 100000 for f in d["flows"])' \
    'all(f["rate_bps"] == 333333333.3 for f in d["flows"])' \
    'all(f["gap_ns"] == {"min": 24000, "p50": 24000, "p99": 24000, "max": 24000} for f in d["flows"])' \
    'all(f["seq_errors"] == 0 for f in d["flows"])' \
    "[f['first_ns'] for f in d['flows']] == [$start, $start + 8000, $start + 16000]" \
    "[f['last_ns'] for f in d['flows']] == [$start + 297 * 8000, $start + 298 * 8000, $start + 299 * 8000]"
echo "ok: 3 x 100 x 1000 bytes at 8000 ns"

# a microsecond copy of the same capture gives the same figures
python3 "$tool" to-usec "$tmp/paced.pcap" "$tmp/paced-us.pcap"
stat_json "$tmp/us.json" "$tmp/paced-us.pcap"
expect "$tmp/us.json" 'd["packets"] == 300' 'd["rate_bps"] == 1e9' \
    'd["gap_ns"]["p50"] == 8000' 'd["duration_ns"] == 299 * 8000' \
    "d['first_ns'] == $start"
echo "ok: microsecond pcap"

# wire overhead: rates and windows use len + 24, bytes stay the lengths
stat_json "$tmp/wo.json" --wire-overhead 24 "$tmp/paced.pcap"
expect "$tmp/wo.json" 'd["bytes"] == 300000' 'd["wire_bytes"] == 300 * 1024' \
    'd["wire_overhead"] == 24' 'd["rate_bps"] == 1.024e9' \
    'd["windows"][0]["max_bytes"] == 125 * 1024' \
    'd["windows"][0]["burst_above_rate_bytes"] == 0.0' \
    'all(f["bytes"] == 100000 for f in d["flows"])'
echo "ok: --wire-overhead"

# --skip drops the warm-up entirely; --flows-top limits the list only
stat_json "$tmp/skip.json" --skip 150 --flows-top 2 "$tmp/paced.pcap"
expect "$tmp/skip.json" 'd["packets"] == 150' 'd["skipped"] == 150' \
    'd["bytes"] == 150000' "d['first_ns'] == $start + 150 * 8000" \
    'd["rate_bps"] == 1e9' 'd["flow_count"] == 3' 'len(d["flows"]) == 2' \
    'all(f["packets"] == 50 for f in d["flows"])'
stat_json "$tmp/all.json" --skip 300 "$tmp/paced.pcap"
expect "$tmp/all.json" 'd["packets"] == 0' 'd["rate_bps"] == 0' \
    'd["flows"] == []' 'd["windows"][0]["max_bytes"] == 0'
stat_json "$tmp/top0.json" --flows-top 0 "$tmp/paced.pcap"
expect "$tmp/top0.json" 'd["flows"] == []' 'd["flow_count"] == 3'
echo "ok: --skip, --flows-top"

# --ideal-gap-ns counts gaps strictly below
stat_json "$tmp/ig.json" --ideal-gap-ns 8000 "$tmp/paced.pcap"
expect "$tmp/ig.json" 'd["gaps_below"] == 0' 'd["ideal_gap_ns"] == 8000'
stat_json "$tmp/ig.json" --ideal-gap-ns 8001 "$tmp/paced.pcap"
expect "$tmp/ig.json" 'd["gaps_below"] == 299'
echo "ok: --ideal-gap-ns"

# flows are sorted by bytes: a flow of larger packets comes first
gen_quiet -o "$tmp/mix.pcap" --flows 1 --count 10 --size 200 --sport 20000
gen_quiet -o "$tmp/mix.pcap" --append --flows 1 --count 5 --size 1500 --sport 30000
stat_json "$tmp/mix.json" "$tmp/mix.pcap"
expect "$tmp/mix.json" \
    '[(f["key"], f["packets"], f["bytes"]) for f in d["flows"]] == [("udp 198.18.0.1:30000 > 198.19.0.1:5201", 5, 7500), ("udp 198.18.0.1:20000 > 198.19.0.1:5201", 10, 2000)]'
echo "ok: flows sorted by bytes"

# one packet: no gaps, no rate
gen_quiet -o "$tmp/one.pcap" --count 1
stat_json "$tmp/one.json" "$tmp/one.pcap"
expect "$tmp/one.json" 'd["packets"] == 1' 'd["rate_bps"] == 0' \
    'd["gap_ns"] == {"min": 0, "p50": 0, "p99": 0, "max": 0}' \
    'd["flows"][0]["rate_bps"] == 0' 'd["windows"][1]["max_bytes"] == 1000'
echo "ok: single packet"

# the table names the same figures
"$stat" "$tmp/paced.pcap" >"$tmp/table.txt"
grep -q '^packets  *300 ' "$tmp/table.txt" || fail "table: packets"
grep -q '^rate  *1000000000.0 bit/s' "$tmp/table.txt" || fail "table: rate"
grep -q 'min 8000  p50 8000  p99 8000  max 8000' "$tmp/table.txt" || fail "table: gaps"
[ "$(grep -c 'udp 198.18.0.1:1000[012] > 198.19.0.1:5201$' "$tmp/table.txt")" -eq 3 ] ||
    fail "table: flows"
echo "ok: table output"

# link layers other than Ethernet give the same flows
gen_quiet -o "$tmp/l2.pcap" --flows 2 --count 20 --vlan 3 --qinq 4 \
    --malformed ipv6-ext --malformed frag --malformed arp --malformed-every 3
stat_json "$tmp/eth.json" "$tmp/l2.pcap"
expect "$tmp/eth.json" 'd["flow_count"] == 5' \
    'd["classify"] == {"ok": 16, "l3_only": 2, "non_ip": 2, "truncated": 0, "bad_header": 0}'
for l in raw sll sll2; do
    python3 "$tool" relink "$tmp/l2.pcap" "$tmp/$l.pcap" "$l"
    stat_json "$tmp/$l.json" "$tmp/$l.pcap"
    python3 - "$tmp/eth.json" "$tmp/$l.json" <<'PY' || fail "link type $l: flows differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
strip = lambda d: [(f["key"], f["packets"]) for f in d["flows"]]
sys.exit(not (strip(a) == strip(b) and a["classify"] == b["classify"]))
PY
done
echo "ok: raw IP, Linux cooked v1/v2"

# --time-scale: every time since the first packet scaled (net_pcap's EAL
# clock to measured time); 0.5 halves the gaps and doubles the rate.
stat_json "$tmp/h.json" --time-scale 0.5 "$tmp/paced.pcap"
expect "$tmp/h.json" 'd["rate_bps"] == 2e9' "d['first_ns'] == $start" \
    'd["duration_ns"] == 299 * 4000' \
    'd["gap_ns"] == {"min": 4000, "p50": 4000, "p99": 4000, "max": 4000}'
expect_usage_error "--time-scale 3" "--time-scale 3: not a number in 0.5 .. 2" \
    "$stat" --time-scale 3 "$tmp/paced.pcap"
expect_usage_error "--time-scale x" "--time-scale x" "$stat" --time-scale x "$tmp/paced.pcap"
echo "ok: --time-scale"
