#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# bench/run.sh [--json] [--reps N] [--secs S] [--quick] [--rx-lcores "N..."]
#              [--only throughput|sched|accuracy|conformance|memory|lcores]
#
# Issue 7's benchmarks, first increment (docs/BENCHMARKS.md):
#   throughput  pacer with pacing active (--rate 1.1x what it forwards
#               unpaced in the same rep, --flow-rate 2x each flow's share)
#               against dpdk-testpmd io forwarding on the same vdevs, in
#               the same rep, on the same 2 lcores (main + 1 forwarding).
#   sched       build/bench/pacer-bench-sched: rte_sched against the
#               wheel + policy path, ns per packet enqueue+dequeue.
#   accuracy    pacer's departure error percentiles (its --stats-json)
#               at 1 mbit/s, 100 mbit/s, 1 gbit/s, slot 1 us.
#   conformance the rate over every 1 s window against --rate (10 mbit/s,
#               100 mbit/s, 1 gbit/s), worst window of all reps.
#   memory      resident size against horizon and slot width, the
#               wheel's own memory, RSS with the mbuf pool left out.
#   lcores      pacer with N RX lcores for each N of --rx-lcores (default
#               1): total and per-RX-lcore Mpps, and the machine's CPUs.
# Every figure is a median over --reps reps; every ratio is against a
# baseline measured in the same rep. Prints one JSON object per
# measurement ({"bench","case","value","unit","baseline","baseline_value"})
# and a `goal NAME: value V target T (met|missed)` line per goal on stdout;
# a progress log (every rep's figures) goes to stderr.
# --json is what issue 7 names; the output is JSON lines either way.
# Never run by meson test. About 7 minutes with the defaults.

set -u
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build}
PACER=$BUILD/src/pacer
PCAPGEN=$BUILD/tools/pacer-pcapgen
SCHED=$BUILD/bench/pacer-bench-sched
TESTPMD=${TESTPMD:-dpdk-testpmd}
JSON=0
REPS=3
SECS=5
ONLY=all
QUICK=0
RX_LCORES=1

while [ $# -gt 0 ]; do
	case "$1" in
	--json) JSON=1 ;;
	--reps) REPS=$2; shift ;;
	--secs) SECS=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--rx-lcores) RX_LCORES=$2; shift ;;
	--quick) QUICK=1; REPS=1; SECS=3 ;;
	-h|--help) sed -n '4,29p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run.sh: unknown option '$1' (--help)" >&2; exit 2 ;;
	esac
	shift
done
case "$REPS" in ''|*[!0-9]*|0) echo "run.sh: bad --reps '$REPS'" >&2; exit 2 ;; esac
for n in $RX_LCORES; do
	case "$n" in ''|*[!0-9]*|0) echo "run.sh: bad --rx-lcores '$RX_LCORES': numbers of RX lcores, 1 or more" >&2; exit 2 ;; esac
done
case "$SECS" in ''|*[!0-9]*|0|1|2) echo "run.sh: bad --secs '$SECS': 3 or more" >&2; exit 2 ;; esac
for f in "$PACER" "$PCAPGEN"; do
	[ -x "$f" ] || { echo "run.sh: $f missing: ninja -C $BUILD" >&2; exit 2; }
done
command -v "$TESTPMD" >/dev/null || { echo "run.sh: $TESTPMD not found (apt-get install dpdk)" >&2; exit 2; }

TMP=$(mktemp -d /tmp/pcr-bench.XXXXXX) || exit 2
CHILD=
cleanup() {
	[ -n "$CHILD" ] && kill -INT "$CHILD" 2>/dev/null && wait "$CHILD" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "run.sh: $*" >&2; }
GOALS=()

# emit BENCH CASE VALUE UNIT BASELINE BASELINE_VALUE (null for none)
emit() {
	local bl=null
	[ "$5" != null ] && bl="\"$5\""
	printf '{"bench":"%s","case":"%s","value":%s,"unit":"%s","baseline":%s,"baseline_value":%s}\n' \
		"$1" "$2" "$3" "$4" "$bl" "$6"
}
# goal NAME VALUE TARGET met|missed
goal() { GOALS+=("goal $1: value $2 target $3 ($4)"); }

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) print "null"; else if (NR%2) print v[(NR+1)/2]; else printf "%.6g\n", (v[NR/2]+v[NR/2+1])/2}'; }

EAL_COMMON="-l 0,1 --no-huge --no-pci --no-shconf"
SEQ=0
prefix() { SEQ=$((SEQ + 1)); echo "pcr-bench-$$-$SEQ"; }

# run_for SECONDS OUTFILE CMD...: run CMD, SIGINT after SECONDS, wait.
run_for() {
	local t=$1 out=$2
	shift 2
	"$@" >"$out" 2>&1 &
	CHILD=$!
	sleep "$t"
	kill -INT "$CHILD" 2>/dev/null
	# a second chance, then a hard stop: never leave a poller behind
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		kill -0 "$CHILD" 2>/dev/null || break
		sleep 1
	done
	kill -KILL "$CHILD" 2>/dev/null
	wait "$CHILD" 2>/dev/null
	CHILD=
}

# testpmd's periodic Tx-pps of both ports: mean of the per-period sums,
# the first 2 periods (start-up) left out. Prints Mpps.
testpmd_mpps() {
	grep -o 'Tx-pps: *[0-9]*' "$1" | awk '{print $2}' |
		awk 'NR%2 {a=$1; next} {s[++n]=a+$1} END {
			k=0; t=0; for (i=3; i<=n; i++) {t+=s[i]; k++}
			if (k==0) print "null"; else printf "%.4f\n", t/k/1e6}'
}

# pacer's --stats-period lines "[ T s] port 0: rx A (...) tx B ...; port 1: ...":
# tx packets of all ports from the 2nd line to the last over the time between.
pacer_mpps() {
	grep '^\[' "$1" | sed 's/^\[ *\([0-9.]*\)s\]/\1/' |
		awk '{t=$1; s=0; for (i=2; i<=NF; i++) if ($i=="tx") s+=$(i+1); T[++n]=t; S[n]=s}
		     END {if (n<3) print "null"; else printf "%.4f\n", (S[n]-S[2])/(T[n]-T[2])/1e6}'
}

# --- throughput ------------------------------------------------------------
# CASE: name, vdev args, frame size, flows
throughput_case() {
	local name=$1 vdevs=$2 size=$3 flows=$4 mem=$5 mbufs=$6
	local r tp pu pp rate frate ratio tps=() pus=() pps=() ratios=()
	# start-up: a 262144-mbuf pool without hugepages takes seconds to fill
	local dur=$((SECS + 2 + (mbufs > 100000 ? 4 : 0)))

	for r in $(seq 1 "$REPS"); do
		run_for "$dur" "$TMP/tp.out" "$TESTPMD" $EAL_COMMON -m "$mem" \
			--file-prefix="$(prefix)" $vdevs -- --forward-mode=io \
			--nb-cores=1 --stats-period 1 --total-num-mbufs="$mbufs"
		tp=$(testpmd_mpps "$TMP/tp.out")
		run_for "$dur" "$TMP/pu.out" "$PACER" $EAL_COMMON -m "$mem" \
			--file-prefix="$(prefix)" $vdevs -- --stats-period 1 \
			--mbufs "$mbufs" --max-flows $((flows * 2 + 1024))
		pu=$(pacer_mpps "$TMP/pu.out")
		if [ "$tp" = null ] || [ "$pu" = null ]; then
			echo "run.sh: $name rep $r: no figure (testpmd $tp, pacer $pu); logs:" >&2
			tail -n 5 "$TMP/tp.out" "$TMP/pu.out" >&2
			return 1
		fi
		# per egress port: half of the total, in bit/s of frame bytes
		rate=$(awk -v m="$pu" -v s="$size" 'BEGIN {printf "%.0f", 1.1 * m * 1e6 / 2 * s * 8}')
		frate=$(awk -v r="$rate" -v f="$flows" 'BEGIN {printf "%.0f", 2 * r / f}')
		run_for "$dur" "$TMP/pp.out" "$PACER" $EAL_COMMON -m "$mem" \
			--file-prefix="$(prefix)" $vdevs -- --stats-period 1 \
			--mbufs "$mbufs" --max-flows $((flows * 2 + 1024)) \
			--rate "$rate" --flow-rate "$frate" --stats-json "$TMP/pp.json"
		pp=$(pacer_mpps "$TMP/pp.out")
		[ "$pp" = null ] && { echo "run.sh: $name rep $r: paced run gave no figure" >&2; tail -n 5 "$TMP/pp.out" >&2; return 1; }
		ratio=$(awk -v a="$pp" -v b="$tp" 'BEGIN {printf "%.4f", a / b}')
		log "$name rep $r: testpmd $tp Mpps, pacer unpaced $pu, paced $pp (--rate $rate --flow-rate $frate) ratio $ratio;" \
			"paced drops $(jq '[.ports[].dropped_total] | add' "$TMP/pp.json" 2>/dev/null)," \
			"wheel enqueued $(jq '[.ports[].wheel.enqueued] | add' "$TMP/pp.json" 2>/dev/null)"
		tps+=("$tp"); pus+=("$pu"); pps+=("$pp"); ratios+=("$ratio")
	done
	tp=$(printf '%s\n' "${tps[@]}" | median)
	pu=$(printf '%s\n' "${pus[@]}" | median)
	pp=$(printf '%s\n' "${pps[@]}" | median)
	ratio=$(printf '%s\n' "${ratios[@]}" | median)
	emit throughput "$name" "$pp" Mpps dpdk-testpmd-io "$tp"
	emit throughput_unpaced "$name" "$pu" Mpps dpdk-testpmd-io "$tp"
	emit throughput_ratio "$name" "$ratio" x dpdk-testpmd-io 1
	goal "throughput_vs_testpmd/$name" "$ratio" ">= 0.8" \
		"$(awk -v r="$ratio" 'BEGIN {print (r >= 0.8) ? "met" : "missed"}')"
}

throughput() {
	local f1k=$TMP/f1k.pcap f100k=$TMP/f100k.pcap f1k1500=$TMP/f1k1500.pcap
	"$PCAPGEN" -o "$f1k" --flows 1000 --count 8000 --size 64 2>/dev/null &&
	"$PCAPGEN" -o "$f1k1500" --flows 1000 --count 8000 --size 1500 2>/dev/null &&
	# 100K flows: pcapgen's source ports give 65535 at most per address
	"$PCAPGEN" -o "$f100k" --flows 50000 --count 50000 --size 64 --src 198.18.0.1 2>/dev/null &&
	"$PCAPGEN" -o "$f100k" --append --flows 50000 --count 50000 --size 64 --src 198.18.0.2 2>/dev/null ||
		{ echo "run.sh: pacer-pcapgen failed" >&2; return 1; }
	local pc="infinite_rx=1"
	throughput_case null-1flow-64B \
		"--vdev net_null0,size=64 --vdev net_null1,size=64" 64 1 1024 65536
	[ "$QUICK" = 1 ] && return 0
	throughput_case pcap-1Kflows-64B \
		"--vdev net_pcap0,rx_pcap=$f1k,$pc --vdev net_pcap1,rx_pcap=$f1k,$pc" 64 1000 1024 65536
	throughput_case pcap-1Kflows-1500B \
		"--vdev net_pcap0,rx_pcap=$f1k1500,$pc --vdev net_pcap1,rx_pcap=$f1k1500,$pc" 1500 1000 1024 65536
	throughput_case pcap-100Kflows-64B \
		"--vdev net_pcap0,rx_pcap=$f100k,$pc --vdev net_pcap1,rx_pcap=$f100k,$pc" 64 100000 2048 262144
}

# --- rte_sched against the wheel + policy ------------------------------------
sched() {
	[ -x "$SCHED" ] || { echo "run.sh: $SCHED missing: ninja -C $BUILD" >&2; return 1; }
	local args=(--reps "$REPS")
	[ "$QUICK" = 1 ] && args+=(--quick)
	"$SCHED" "${args[@]}" >"$TMP/sched.json" 2>"$TMP/sched.err" ||
		{ echo "run.sh: pacer-bench-sched failed:" >&2; tail -5 "$TMP/sched.err" >&2; return 1; }
	grep -v '^EAL' "$TMP/sched.err" >&2
	# its lines: {"impl":"pacer"|"rte_sched","flows":N,"ns_per_pkt":X,...}
	local fl pw rs ratio prev=
	for fl in $(jq -r 'select(.impl=="pacer") | .flows' "$TMP/sched.json"); do
		pw=$(jq -r "select(.impl==\"pacer\" and .flows==$fl) | .ns_per_pkt" "$TMP/sched.json")
		rs=$(jq -r "select(.impl==\"rte_sched\" and .flows==$fl) | .ns_per_pkt" "$TMP/sched.json")
		emit sched_ns_per_pkt "${fl}flows" "$pw" ns rte_sched "$rs"
		ratio=$(awk -v a="$rs" -v b="$pw" 'BEGIN {printf "%.3f", a / b}')
		emit sched_speedup "${fl}flows" "$ratio" x rte_sched 1
		if [ -z "$prev" ]; then
			goal "faster_than_rte_sched/${fl}flows" "$ratio" "> 1" \
				"$(awk -v r="$ratio" 'BEGIN {print (r > 1) ? "met" : "missed"}')"
		else
			goal "faster_than_rte_sched/${fl}flows" "$ratio" "> 1 and >= ${prev} (the speedup at fewer flows)" \
				"$(awk -v r="$ratio" -v p="$prev" 'BEGIN {print (r > 1 && r >= p) ? "met" : "missed"}')"
		fi
		prev=$ratio
	done
}

# --- departure error ---------------------------------------------------------
# 1514-byte frames, 4 flows, all arriving at once from a finite pcap about a
# second's worth at the rate; one net_pcap port that sends back out of
# itself with TX dropped (no tx_pcap: the PMD's drop mode), slot 1 us.
accuracy() {
	local rate count r q name mbufs
	for spec in 1mbit:100 100mbit:8000 1gbit:80000; do
		rate=${spec%%:*}
		count=${spec##*:}
		mbufs=$(( (count + 8192) ))
		"$PCAPGEN" -o "$TMP/acc.pcap" --flows 4 --count "$count" --size 1514 2>/dev/null ||
			{ echo "run.sh: pacer-pcapgen failed" >&2; return 1; }
		: >"$TMP/acc.vals"
		for r in $(seq 1 "$REPS"); do
			rm -f "$TMP/acc.json"
			timeout -s INT 60 "$PACER" $EAL_COMMON -m 1024 --file-prefix="$(prefix)" \
				--vdev "net_pcap0,rx_pcap=$TMP/acc.pcap" -- --rate "$rate" --slot 1000 \
				--exit-on-idle 300 --mbufs "$mbufs" --max-flows 64 \
				--stats-json "$TMP/acc.json" >"$TMP/acc.out" 2>&1
			jq -r '.departure_error_ns | [.p50, .p99, .p999, .max, .count] | @tsv' \
				"$TMP/acc.json" >>"$TMP/acc.vals" 2>/dev/null ||
				{ echo "run.sh: accuracy $rate: no statistics" >&2; tail -n 5 "$TMP/acc.out" >&2; return 1; }
			log "accuracy $rate rep $r: p50 p99 p999 max count = $(tail -1 "$TMP/acc.vals")"
		done
		name="1514B-$rate-slot1us"
		for q in 1:p50 2:p99 3:p999 4:max; do
			emit "departure_error_${q#*:}" "$name" \
				"$(cut -f"${q%%:*}" "$TMP/acc.vals" | median)" ns null null
		done
		local p99 p999
		p99=$(cut -f2 "$TMP/acc.vals" | median)
		p999=$(cut -f3 "$TMP/acc.vals" | median)
		goal "departure_error_p99/$name" "$p99" "<= 1000 ns (one slot)" \
			"$(awk -v v="$p99" 'BEGIN {print (v <= 1000) ? "met" : "missed"}')"
		goal "departure_error_p999/$name" "$p999" "<= 2000 ns (two slots)" \
			"$(awk -v v="$p999" 'BEGIN {print (v <= 2000) ? "met" : "missed"}')"
	done
}

# --- memory ------------------------------------------------------------------
# Resident size of a started pacer (ports configured, wheels built, pool
# touched, before forwarding: a --cmdline-file that shows the wheel and
# sleeps), against horizon and slot width, with the wheel's own memory
# (`show wheel`, pcr_wheel_memsize()) and the pool's (mbufs x element
# size, from --mbufs), so "mbufs aside" is RSS - pool. One port, net_null.
# Memory is not noisy: one rep. EAL -m 512: without hugepages the EAL keeps
# a page descriptor per 4 KiB page of -m (about 12 MB per GiB, measured
# 50 MB more RSS at -m 4096), which hugepages make negligible. Baseline:
# dpdk-testpmd on the same EAL options and pool size, forwarding, with
# --no-mlockall (by default it locks, so faults in, all of -m).
memory() {
	local h s out pid rss wheel_b pool_b i tp_rss
	printf 'show wheel 0\nsleep 1500\nquit\n' >"$TMP/mem.cmd"
	# (its stdin held open: at end of input testpmd stops)
	sleep 10 | "$TESTPMD" $EAL_COMMON -m 512 --file-prefix="$(prefix)" --vdev net_null0 --vdev net_null1 -- \
		--total-num-mbufs=8192 --forward-mode=io --no-mlockall >"$TMP/mem-testpmd.out" 2>&1 &
	pid=$!
	CHILD=$pid
	sleep 2
	tp_rss=$(awk '/^VmRSS/ {print $2 * 1024}' "/proc/$pid/status" 2>/dev/null)
	kill -INT "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	CHILD=
	[ -n "$tp_rss" ] || tp_rss=null
	log "memory: dpdk-testpmd rss $tp_rss"
	for h in 100 2000 10000; do
		for s in 250 1000 4000; do
			out=$TMP/mem-$h-$s.out
			: >"$out"
			"$PACER" $EAL_COMMON -m 512 --file-prefix="$(prefix)" --vdev net_null0 -- \
				--horizon "$h" --slot "$s" --mbufs 8192 --max-flows 1024 \
				--cmdline-file "$TMP/mem.cmd" >"$out" 2>&1 &
			pid=$!
			CHILD=$pid
			wheel_b=
			for i in $(seq 100); do
				wheel_b=$(sed -n 's/.*memory \([0-9]*\) bytes.*/\1/p' "$out" | head -1)
				[ -n "$wheel_b" ] && break
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			rss=$(awk '/^VmRSS/ {print $2 * 1024}' "/proc/$pid/status" 2>/dev/null)
			wait "$pid" 2>/dev/null
			CHILD=
			if [ -z "$wheel_b" ] || [ -z "$rss" ]; then
				log "memory horizon $h ms slot $s ns: pacer did not start: $(grep -m1 -i 'error\|horizon' "$out")"
				continue
			fi
			# the pool: 8192 mbufs + per-lcore caches, element = header +
			# RTE_MBUF_DEFAULT_BUF_SIZE (2176) + mempool overhead: 2432 B
			pool_b=$((8192 * 2432))
			log "memory horizon $h ms slot $s ns: rss $rss wheel $wheel_b pool $pool_b"
			emit rss_bytes "horizon${h}ms-slot${s}ns" "$rss" B dpdk-testpmd "$tp_rss"
			emit rss_bytes_mbufs_aside "horizon${h}ms-slot${s}ns" "$((rss - pool_b))" B null null
			emit wheel_bytes "horizon${h}ms-slot${s}ns" "$wheel_b" B null null
			if [ "$h" = 2000 ] && [ "$s" = 1000 ]; then
				goal "memory/horizon2s-slot1us" "$((rss - pool_b))" "<= 67108864 B (64 MiB, mbufs aside)" \
					"$(awk -v v="$((rss - pool_b))" 'BEGIN {print (v <= 67108864) ? "met" : "missed"}')"
			fi
		done
	done
}

# --- rate conformance ------------------------------------------------------
# One net_pcap port, 4 flows of 1500-byte frames all arriving at once (3 s
# worth at the rate), --rate R on the port: each full 1 s window of the
# capture (from the first departure) carries R within |err|; the worst
# window of all reps is the figure. Times scaled by tsc_hz_eal / tsc_hz:
# net_pcap stamps with the EAL's TSC estimate, pacer paces by the TSC
# frequency it measured, so this judges the pacing, not the TSC
# measurement (tests/pacer/test_clock_wire.sh does that, against kernel
# timestamps).
conformance() {
	local spec rate bps count r errs worst
	for spec in 10mbit:10000000 100mbit:100000000 1gbit:1000000000; do
		rate=${spec%%:*}
		bps=${spec##*:}
		count=$((bps * 3 / 8 / 1500))
		"$PCAPGEN" -o "$TMP/cf.pcap" --flows 4 --count "$count" --size 1500 2>/dev/null ||
			{ echo "run.sh: pacer-pcapgen failed" >&2; return 1; }
		: >"$TMP/cf.vals"
		for r in $(seq 1 "$REPS"); do
			rm -f "$TMP/cf.json" "$TMP/cf-out.pcap"
			timeout -s INT 60 "$PACER" $EAL_COMMON -m 1536 --file-prefix="$(prefix)" \
				--vdev "net_pcap0,rx_pcap=$TMP/cf.pcap,tx_pcap=$TMP/cf-out.pcap" -- \
				--rate "$rate" --exit-on-idle 300 --mbufs $((count + 8192)) --max-flows 64 \
				--stats-json "$TMP/cf.json" >"$TMP/cf.out" 2>&1
			errs=$(python3 - "$TMP/cf-out.pcap" "$TMP/cf.json" "$bps" <<'PY'
import json, struct, sys
d = json.load(open(sys.argv[2]))
scale = d["tsc_hz_eal"] / d["tsc_hz"]
bps = float(sys.argv[3])
b = open(sys.argv[1], "rb").read()
magic = b[:4]
e = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
div = 1e9 if magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d") else 1e6
off, t0, win = 24, None, {}
while off + 16 <= len(b):
    sec, frac, incl, orig = struct.unpack(e + "IIII", b[off:off + 16])
    t = sec + frac / div
    if t0 is None:
        t0 = t
    k = int((t - t0) * scale)
    win[k] = win.get(k, 0) + orig
    off += 16 + incl
full = sorted(win)[:-1]   # the last window is partial
print(" ".join("%.6f" % (abs(win[k] * 8 - bps) / bps * 100) for k in full))
PY
)
			[ -n "$errs" ] || { echo "run.sh: conformance $rate: no full window; log:" >&2; tail -n 5 "$TMP/cf.out" >&2; return 1; }
			log "conformance $rate rep $r: |error| per 1 s window: $errs %"
			printf '%s\n' $errs >>"$TMP/cf.vals"
		done
		worst=$(sort -g "$TMP/cf.vals" | tail -n 1)
		emit rate_error_1s_worst "1500B-4flows-$rate" "$worst" % null null
		emit rate_error_1s_median "1500B-4flows-$rate" "$(median <"$TMP/cf.vals")" % null null
		goal "rate_conformance_1s/$rate" "$worst" "<= 0.1 %" \
			"$(awk -v v="$worst" 'BEGIN {print (v <= 0.1) ? "met" : "missed"}')"
	done
}

# --- multi-core ---------------------------------------------------------------
# For each N in --rx-lcores: pacer with N RX lcores (pacer gives min(ports,
# W/2) of its W workers to TX, the rest to RX: the smallest W that leaves N),
# two net_null ports of 64-byte frames (each RX lcore polls its own queue
# of both ports), pacing active (--rate 100gbit, never the bottleneck).
# Lcores are mapped onto the machine's CPUs round robin (--lcores
# i@(i mod CPUs), the main lcore, which sleeps, on CPU 0); with more
# workers than CPUs they share CPUs and the figure measures the
# scheduler, which the output says. Per lcore: its share of what was received (--stats-json
# lcores) times the steady total (the --stats-period lines).
lcores() {
	local n w ntx map i r out tot per_l
	local ncpu
	ncpu=$(nproc)
	for n in $RX_LCORES; do
		w=2
		while :; do
			ntx=$((w / 2 < 2 ? w / 2 : 2))
			[ $((w - ntx)) -ge "$n" ] && break
			w=$((w + 1))
		done
		map="0@0"
		for i in $(seq 1 "$w"); do map="$map,$i@$((i % ncpu))"; done
		: >"$TMP/lc.vals"
		for r in $(seq 1 "$REPS"); do
			out=$TMP/lc.out
			rm -f "$TMP/lc.json"
			run_for "$((SECS + 2))" "$out" "$PACER" --lcores "$map" --no-huge --no-pci --no-shconf \
				-m 1024 --file-prefix="$(prefix)" \
				--vdev net_null0,size=64 --vdev net_null1,size=64 -- --stats-period 1 \
				--mbufs 65536 --max-flows 1024 --rate 100gbit --stats-json "$TMP/lc.json"
			tot=$(pacer_mpps "$out")
			if [ "$tot" = null ] || [ ! -s "$TMP/lc.json" ]; then
				echo "run.sh: lcores $n rep $r: no figure; log:" >&2
				tail -n 5 "$out" >&2
				return 1
			fi
			per_l=$(jq -r --arg t "$tot" '[.lcores[] | select(.role != "tx")] as $rx |
				($rx | map(.rx_packets) | add) as $sum |
				$rx | map(.rx_packets / $sum * ($t | tonumber) * 10000 | round / 10000) | map(tostring) | join(" ")' "$TMP/lc.json")
			log "lcores: $n RX + $ntx TX lcores on $ncpu CPUs ($map) rep $r: total $tot Mpps, per RX lcore $per_l"
			echo "$tot $per_l" >>"$TMP/lc.vals"
		done
		emit lcores_total "${n}rx-${ntx}tx-on${ncpu}cpus" "$(cut -d' ' -f1 "$TMP/lc.vals" | median)" Mpps null null
		for i in $(seq 1 "$n"); do
			emit lcores_per_rx_lcore "${n}rx-${ntx}tx-on${ncpu}cpus-rx$i" \
				"$(cut -d' ' -f$((i + 1)) "$TMP/lc.vals" | median)" Mpps null null
		done
		# the main lcore sleeps (2 ms polls): workers beyond the CPUs share
		[ "$w" -gt "$ncpu" ] &&
			log "lcores: $n RX lcores: $w workers on $ncpu CPUs, oversubscribed: the figure measures the scheduler"
	done
	return 0
}

log "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load $(cut -d' ' -f1-3 /proc/loadavg)"
rc=0
case "$ONLY" in all|throughput) throughput || rc=1 ;; esac
case "$ONLY" in all|sched) sched || rc=1 ;; esac
case "$ONLY" in all|accuracy) accuracy || rc=1 ;; esac
case "$ONLY" in all|memory) memory || rc=1 ;; esac
case "$ONLY" in all|conformance) conformance || rc=1 ;; esac
case "$ONLY" in all|lcores) lcores || rc=1 ;; esac
log "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
for g in "${GOALS[@]}"; do echo "$g"; done
exit $rc
