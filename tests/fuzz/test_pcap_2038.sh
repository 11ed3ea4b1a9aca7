#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# test_pcap_2038.sh PACER-PCAPGEN PACER-PCAPSTAT
#
# Timestamps past 2^31 s (2038-01-19): a pcap record's seconds are an
# unsigned 32-bit field, which libpcap hands over sign-extended. pcapgen
# writes them (--start-ns up to 2^32 s); pcapstat must read them back as
# written and pcapgen --append must continue after them. Before the fix
# pcapstat read 3e18 ns as 17151776777709551616 and --append refused the
# file ("its last timestamp ... leaves no room"). Found by
# fuzz_pcapgen_append (corpus/pcapgen_append/regress-ts-after-2038).
set -euo pipefail

gen=$1
stat=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pacer-2038.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

"$gen" -o "$tmp/a.pcap" --count 2 --gap-ns 1000 --start-ns 3000000000000000000 2>/dev/null
"$gen" -o "$tmp/a.pcap" --append --count 2 --gap-ns 1000 2>/dev/null
"$stat" --json "$tmp/a.pcap" >"$tmp/a.json"
python3 - "$tmp/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want = (3000000000000000000, 3000000000000003000, 4, 0)
got = (d["first_ns"], d["last_ns"], d["packets"], d["ts_backwards"])
if got != want:
    print("FAIL: first_ns, last_ns, packets, ts_backwards = %s, want %s" % (got, want))
    sys.exit(1)
print("ok: 4 packets from 3e18 ns, appended in order")
PY
