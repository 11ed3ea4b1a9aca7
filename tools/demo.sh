#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# demo.sh BUILDDIR: the main job. Generates a sample capture (flows of three
# classes), runs pacer on it through a net_pcap vdev with
# config/pacer.cfg, and prints a report: per class and per flow the
# configured rate against the rate achieved on the wire (the output
# capture), drops by reason, departure error percentiles. Then the second
# example (tools/isp-demo.sh): a generated 10,000-subscriber ISP paced by
# pacer's subscriber tree, both directions, and its top nodes.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-$top/build}
out=${PACER_DEMO_DIR:-$top/build/demo}
mkdir -p "$out"
gen=$builddir/tools/pacer-pcapgen
rm -f "$out/in.pcap" "$out/out.pcap"

# video: udp to 5201, 3 flows; bulk: tcp, 2 flows; other: udp to 9000, 2 flows
"$gen" -o "$out/in.pcap" --flows 3 --count 3000 --size 1200 --dport 5201 2>/dev/null
"$gen" -o "$out/in.pcap" --append --flows 2 --count 1000 --size 1500 --proto tcp --sport 30000 --dport 80 2>/dev/null
"$gen" -o "$out/in.pcap" --append --flows 2 --count 1000 --size 800 --sport 40000 --dport 9000 2>/dev/null

echo "pacer demo: $(ls -l "$out/in.pcap" | awk '{print $5}') bytes of sample traffic, config/pacer.cfg:"
grep -E '^(\[|rate|flow-rate|match)' "$top/config/pacer.cfg" | sed 's/^/    /'
echo

# a capture arrives all at once (net_pcap reads it as fast as pacer takes
# it): --replay lets each flow queue all of its part, with no AQM judging
# the queue it makes and no --flow-queue bound, which live flows have
"$builddir/src/pacer" -l 0,1 --no-huge -m 1024 --no-pci --no-shconf --no-telemetry \
    --file-prefix="pacer-demo-$$" --log-level=lib.eal:warning \
    --vdev "net_pcap0,rx_pcap=$out/in.pcap,tx_pcap=$out/out.pcap" -- \
    --config "$top/config/pacer.cfg" --replay --exit-on-idle 300 --max-flows 65536 \
    --stats-json "$out/stats.json" >"$out/pacer.log"
"$builddir/tools/pacer-pcapstat" --json "$out/out.pcap" >"$out/wire.json"
python3 "$top/tools/report.py" "$out/stats.json" "$out/wire.json" "$out/out.pcap"
echo
echo "files: $out/{in.pcap,out.pcap,stats.json,wire.json,pacer.log}"

# the second example: a 10,000-subscriber ISP, both directions
echo
"$top/tools/isp-demo.sh" "$builddir"
