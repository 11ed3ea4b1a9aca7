#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# test_ispgen.sh PACER-ISPGEN PACER-ISP-CHECK
#
# pacer-ispgen's ISPs loaded by pacer-isp-check (lib/isp):
#   - 10,000 and 100,000 subscribers, 5 interior levels: exit 0, circuits
#     as asked, six levels (every circuit under an AP at depth 5), about
#     1,000 interior nodes for 100K, and devices and IPv4/IPv6 prefixes
#     as an independent reader (Python's csv and ipaddress) counts them
#     in the CSV; the 100K load under 2000 ms;
#   - the same seed writes the same files, another seed others;
#   - --levels 0: a flat ISP, loaded without a network;
#   - a bad rate: exit 2 and FILE:LINE: FIELD 'VALUE'; a bad option:
#     exit 2 naming it.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 PACER-ISPGEN PACER-ISP-CHECK" >&2
    exit 2
fi
gen=$1
check=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pacer-ispgen-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# value NAME FILE: the value of "NAME: value" in pacer-isp-check's summary
value() {
    sed -n "s/^$1: \([0-9.]*\).*/\1/p" "$2" | head -n 1
}

# csv_counts DIR: "circuits devices v4 v6" as Python's csv and ipaddress
# read DIR/ShapedDevices.csv, apart from lib/isp
csv_counts() {
    python3 - "$1/ShapedDevices.csv" <<'EOF'
import csv, ipaddress, re, sys
rows = [r for r in csv.reader(open(sys.argv[1], encoding="utf-8"))
        if r and not r[0].startswith("#")][1:]
v4 = v6 = 0
for r in rows:
    for t in re.split(r"[,\s]+", r[6].strip()):
        if t:
            ipaddress.IPv4Network(t, strict=False)
            v4 += 1
    for t in re.split(r"[,\s]+", r[7].strip()):
        if t:
            ipaddress.IPv6Network(t, strict=False)
            v6 += 1
print(len({r[0] for r in rows}), len(rows), v4, v6)
EOF
}

# isp N: generate N subscribers, 5 levels, into $tmp/N, check the load
isp() {
    local n=$1 d=$tmp/$1 out=$tmp/$1.out t0 t1 want got
    t0=$(date +%s.%N)
    "$gen" --subscribers "$n" --seed 7 --out "$d" 2>"$tmp/gen.err" ||
        fail "pacer-ispgen --subscribers $n: $(cat "$tmp/gen.err")"
    t1=$(date +%s.%N)
    echo "pacer-ispgen --subscribers $n: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s"
    "$check" --network "$d/network.json" --subscribers "$d/ShapedDevices.csv" \
        >"$out" 2>"$tmp/check.err" ||
        fail "pacer-isp-check on $n subscribers exited $?: $(cat "$tmp/check.err")"
    cat "$out"
    [ "$(value circuits "$out")" = "$n" ] ||
        fail "$n subscribers: pacer-isp-check says $(value circuits "$out") circuits"
    [ "$(value levels "$out")" = 6 ] ||
        fail "$n subscribers, 5 interior levels: $(value levels "$out") levels, not 6"
    [ "$(value "nodes at depth 5" "$out")" -ge 1 ] &&
        [ -z "$(value "nodes at depth 6" "$out")" ] ||
        fail "$n subscribers: nodes not 5 levels deep"
    [ "$(value "circuits under the port's root" "$out")" = 0 ] ||
        fail "$n subscribers: circuits under the port's root, not an AP"
    want=$(csv_counts "$d")
    got="$(value circuits "$out") $(value devices "$out") $(value "ipv4 prefixes" "$out") $(value "ipv6 prefixes" "$out")"
    [ "$got" = "$want" ] ||
        fail "$n subscribers: circuits devices v4 v6 $got, Python reads $want"
}

isp 10000
isp 100000
out=$tmp/100000.out
nodes=$(value nodes "$out")
[ "$nodes" -ge 700 ] && [ "$nodes" -le 1500 ] ||
    fail "100K subscribers: $nodes interior nodes, not about 1,000"
ms=$(value "load time" "$out")
awk -v ms="$ms" 'BEGIN { exit !(ms > 0 && ms < 2000) }' ||
    fail "100K subscribers loaded in $ms ms, not under 2000 ms"

# the same seed, the same files; another seed, others
"$gen" --subscribers 10000 --seed 7 --out "$tmp/again" 2>/dev/null
cmp -s "$tmp/10000/ShapedDevices.csv" "$tmp/again/ShapedDevices.csv" &&
    cmp -s "$tmp/10000/network.json" "$tmp/again/network.json" ||
    fail "--seed 7 twice: different files"
"$gen" --subscribers 10000 --seed 8 --out "$tmp/other" 2>/dev/null
! cmp -s "$tmp/10000/ShapedDevices.csv" "$tmp/other/ShapedDevices.csv" ||
    fail "--seed 7 and --seed 8: the same ShapedDevices.csv"

# flat: no interior level, every circuit under the port's root
"$gen" --subscribers 1000 --levels 0 --out "$tmp/flat" 2>/dev/null
"$check" --subscribers "$tmp/flat/ShapedDevices.csv" >"$tmp/flat.out" ||
    fail "flat ISP: pacer-isp-check exited $?"
[ "$(value circuits "$tmp/flat.out")" = 1000 ] &&
    [ "$(value levels "$tmp/flat.out")" = 1 ] &&
    [ "$(value "circuits under the port's root" "$tmp/flat.out")" = 1000 ] ||
    fail "flat ISP: $(cat "$tmp/flat.out")"

# a bad file and a bad option: exit 2, what and why
bad=$tmp/flat/ShapedDevices.csv
line=$(grep -n '^5,' "$bad" | head -n 1 | cut -d: -f1)
python3 - "$bad" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8")))
for r in rows:
    if r[0] == "5":
        r[10] = "-3"
        break
w = csv.writer(open(sys.argv[1], "w", encoding="utf-8", newline=""),
               lineterminator="\n")
w.writerows(rows)
EOF
rc=0
"$check" --subscribers "$bad" >/dev/null 2>"$tmp/bad.err" || rc=$?
[ "$rc" = 2 ] || fail "a bad rate: exit $rc, not 2"
grep -qF "$bad:$line: Download Max Mbps '-3': not a rate in Mbps" "$tmp/bad.err" ||
    fail "a bad rate: '$(cat "$tmp/bad.err")'"
rc=0
"$check" --network >/dev/null 2>"$tmp/opt.err" || rc=$?
[ "$rc" = 2 ] && grep -q -- "--network" "$tmp/opt.err" ||
    fail "--network without FILE: exit $rc, '$(cat "$tmp/opt.err")'"
rc=0
"$check" >/dev/null 2>"$tmp/opt.err" || rc=$?
[ "$rc" = 2 ] || fail "no option: exit $rc, not 2"
echo "ok"
