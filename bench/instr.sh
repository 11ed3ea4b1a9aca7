#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# bench/instr.sh [--pacer BINARY] [--secs S] [--layout one|split]
#                [--aqm codel|off] [--keep DIR] [--json]
#
# Instructions per packet on pacer's RX path and on its TX path, counted by
# valgrind's callgrind (exact and repeatable, unlike time on a shared VM):
# pacer with pacing active (--rate 100gbit: every packet goes through the
# policies and the wheel, the rate never binds) between two net_null ports
# (64-byte frames), run under callgrind for S seconds (default 20), then
# stopped with SIGINT. Per packet:
#   rx    rx_queue_poll() + stage_serve(), inclusive (the PMD's receive,
#         parse, flow lookup, stamp, the wheel's inbox), over packets in;
#   tx    tx_port_burst(), inclusive (the wheel's dequeue and its cascade,
#         the PMD's send, the accounting), over packets out;
#   loop  what the worker's loop spends besides (its polls and checks),
#         over packets out;
#   pmd   net_null's own receive and send, over packets out (in rx and tx).
# --layout one (default): one worker does RX and TX (-l 0,1); split: a RX
# lcore and a TX lcore (--lcores=0@0,1@1,2@1). callgrind runs threads one at a time, so
# in the split layout each lcore's idle polls count too (tx's figure is an
# upper bound there); the one-worker layout's figures are the clean ones.
# The binary must run under valgrind, which has no AVX-512: without
# --pacer, build-cg (meson, -Dcpu_instruction_set=x86-64-v3) is set up and
# built first. Prints "instr LAYOUT rx|tx|loop|pmd VALUE" lines, or JSON
# lines ({"bench":"instr","case":"LAYOUT-rx",...}) with --json.
# --aqm MODE: pacer's --aqm (default: pacer's own default, codel since
# issue 35; a binary from before it knows no --aqm). The rate never binds,
# so no flow keeps a queue: with codel every packet is judged and none
# signalled, which is what the AQM costs a packet that passes.
# A benchmark: never run by meson test. About S x 2 + 20 seconds.

set -u
cd "$(dirname "$0")/.." || exit 2

PACER=
SECS=20
LAYOUT=one
KEEP=
JSON=0
AQM=
usage() { sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--pacer) [ $# -ge 2 ] || usage; PACER=$2; shift ;;
	--secs) [ $# -ge 2 ] || usage; SECS=$2; shift ;;
	--layout) [ $# -ge 2 ] || usage; LAYOUT=$2; shift ;;
	--keep) [ $# -ge 2 ] || usage; KEEP=$2; shift ;;
	--aqm) [ $# -ge 2 ] || usage; AQM=$2; shift ;;
	--json) JSON=1 ;;
	*) echo "instr.sh: unknown option '$1'" >&2; usage ;;
	esac
	shift
done
case "$SECS" in ''|*[!0-9]*|0|1|2|3|4) echo "instr.sh: bad --secs '$SECS': 5 or more" >&2; exit 2 ;; esac
case "$LAYOUT" in
one) LCORES=0,1; EXTRA=() ;;
# callgrind runs one thread at a time: where the lcores sit does not
# change a count, and three lcores on two CPUs start on any machine. The
# TX lcore waits whole time slices while the RX lcore runs, so it is
# always behind: --max-late 0, or the overload policy drops nearly all
# (seen: 50368 of 2562336 sent) and tx divides by a handful
split) LCORES=0@0,1@1,2@1; EXTRA=(--max-late 0) ;;
*) echo "instr.sh: bad --layout '$LAYOUT': one or split" >&2; exit 2 ;;
esac
case "$AQM" in
'') ;;
codel|off) EXTRA+=(--aqm "$AQM") ;;
*) echo "instr.sh: bad --aqm '$AQM': codel or off" >&2; exit 2 ;;
esac
command -v valgrind >/dev/null && command -v callgrind_annotate >/dev/null ||
	{ echo "instr.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
command -v jq >/dev/null || { echo "instr.sh: needs jq" >&2; exit 2; }

if [ -z "$PACER" ]; then
	if [ ! -d build-cg ]; then
		meson setup build-cg -Dcpu_instruction_set=x86-64-v3 \
			-Dtests=disabled >/dev/null ||
			{ echo "instr.sh: meson setup build-cg failed" >&2; exit 1; }
	fi
	ninja -C build-cg src/pacer >/dev/null ||
		{ echo "instr.sh: building build-cg/src/pacer failed" >&2; exit 1; }
	PACER=build-cg/src/pacer
fi
[ -x "$PACER" ] || { echo "instr.sh: no pacer binary at '$PACER'" >&2; exit 2; }

TMP=$(mktemp -d /tmp/pacer-instr.XXXXXX)
PREFIX=pcr-instr-$$
CHILD=
cleanup() {
	[ -n "$CHILD" ] && kill -KILL "$CHILD" 2>/dev/null
	rm -rf "/var/run/dpdk/$PREFIX"
	if [ -n "$KEEP" ]; then
		mkdir -p "$KEEP" && cp "$TMP"/* "$KEEP"/
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" "$PACER" \
	--lcores="$LCORES" --no-huge -m 512 --no-shconf --no-pci \
	--file-prefix="$PREFIX" --vdev net_null0 --vdev net_null1 -- \
	--mbufs 16384 --max-flows 4096 --flow-queue 0 --rate 100gbit \
	--control-socket none --stats-json "$TMP/stats.json" "${EXTRA[@]}" \
	>"$TMP/pacer.log" 2>&1 &
CHILD=$!
# callgrind's start-up (the EAL, the pool's memory) takes seconds: count
# from pacer's own start line
for _ in $(seq 120); do
	grep -q '^pacer: lcore' "$TMP/pacer.log" 2>/dev/null && break
	kill -0 "$CHILD" 2>/dev/null || break
	sleep 1
done
sleep "$SECS"
kill -INT "$CHILD" 2>/dev/null
for _ in $(seq 300); do
	kill -0 "$CHILD" 2>/dev/null || break
	sleep 1
done
wait "$CHILD"
rc=$?
CHILD=
if [ "$rc" != 0 ] || [ ! -s "$TMP/stats.json" ] || [ ! -s "$TMP/cg.out" ]; then
	echo "instr.sh: pacer under callgrind exited $rc; its log:" >&2
	tail -n 20 "$TMP/pacer.log" >&2
	exit 1
fi

rx=$(jq '[.ports[].rx_packets] | add' "$TMP/stats.json")
tx=$(jq '[.ports[].tx_packets] | add' "$TMP/stats.json")
[ "$tx" -gt 0 ] 2>/dev/null || { echo "instr.sh: no packets out" >&2; exit 1; }

callgrind_annotate --inclusive=yes --threshold=100 "$TMP/cg.out" \
	>"$TMP/incl.txt" 2>/dev/null
callgrind_annotate --inclusive=no --threshold=100 "$TMP/cg.out" \
	>"$TMP/self.txt" 2>/dev/null
bin=$(readlink -f "$PACER")
# incl FUNCTION: the function's inclusive count in pacer's binary
incl() {
	awk -v f=":$1 [$bin]" 'index($0, f) && substr($0, length($0) - length(f) + 1) == f {
		gsub(",", "", $1); s += $1 } END { printf "%.0f\n", s }' "$TMP/incl.txt"
}
pmd=$(awk '/librte_net_null/ { gsub(",", "", $1); s += $1 } END { printf "%.0f\n", s }' "$TMP/self.txt")
rx_ir=$(( $(incl rx_queue_poll) + $(incl stage_serve) ))
tx_ir=$(incl tx_port_burst)
main_ir=$(incl pcr_worker_main)
[ "$rx_ir" -gt 0 ] && [ "$tx_ir" -gt 0 ] ||
	{ echo "instr.sh: no rx_queue_poll/tx_port_burst in the profile (inlined?)" >&2; exit 1; }
# the split layout's TX lcore has no RX path: its loop is what its
# pcr_worker_main holds besides tx_port_burst (both lcores' loops here)
loop_ir=$((main_ir - rx_ir - tx_ir))

out() {
	if [ "$JSON" = 1 ]; then
		printf '{"bench":"instr","case":"%s-%s","value":%s,"unit":"Ir/packet","baseline":null,"baseline_value":null}\n' \
			"$LAYOUT" "$1" "$2"
	else
		echo "instr $LAYOUT $1 $2"
	fi
}
per() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
echo "instr.sh: $LAYOUT: $rx packets in, $tx out under callgrind for ${SECS} s ($PACER)" >&2
out rx "$(per "$rx_ir" "$rx")"
out tx "$(per "$tx_ir" "$tx")"
out loop "$(per "$loop_ir" "$tx")"
out pmd "$(per "$pmd" "$tx")"
