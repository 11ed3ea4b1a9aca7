#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# bench/plots.sh: two PNG plots for docs/BENCHMARKS.md, drawn with gnuplot
# (installed with apt-get if missing) from net_pcap captures of pacer:
#   docs/plots/rate-per-flow.png   4 flows of 1000-byte frames, 5 mbit/s
#       each, port at 20 mbit/s, cut to 10 mbit/s 2.5 s in by a
#       --cmdline-file script; the rate of each flow and of all of them in
#       100 ms windows. The input is replayed forever (infinite_rx=1) with a
#       20 ms horizon, as tests/pacer/test_cli_script.sh does: a departure
#       is fixed when a frame arrives, so a capture read all at once would
#       be scheduled at the old rate before the script could change it.
#   docs/plots/departure-error.png 1 flow at 100 mbit/s, 1000-byte frames
#       all arriving at once: histogram of each frame's departure minus its
#       ideal t0 + i * 80 us, t0 the latest anchor no frame beats (so the
#       errors are >= 0), with p50/p99/p99.9/max.
# Capture times are scaled by tsc_hz_eal / tsc_hz (net_pcap stamps with the
# EAL's TSC estimate, see pcap_scale in tests/pacer/lib.sh). Prints one
# line per figure (what it measured, the command) and the PNG paths. Never
# run by meson test. About 10 s. CHANGE="CMD; CMD" replaces the mid-run
# commands of the first run (default: set port 0 rate 10mbit).

set -u
cd "$(dirname "$0")/.." || exit 2

BUILD=${BUILD:-build}
PACER=$BUILD/src/pacer
PCAPGEN=$BUILD/tools/pacer-pcapgen
OUTDIR=docs/plots
case "${1:-}" in
-h|--help) sed -n '4,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
'') ;;
*) echo "plots.sh: no options but --help" >&2; exit 2 ;;
esac
for f in "$PACER" "$PCAPGEN"; do
	[ -x "$f" ] || { echo "plots.sh: $f missing: ninja -C $BUILD" >&2; exit 2; }
done
if ! command -v gnuplot >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q gnuplot-nox >&2 ||
		{ echo "plots.sh: gnuplot missing and not installed" >&2; exit 2; }
fi
command -v python3 >/dev/null || { echo "plots.sh: python3 missing" >&2; exit 2; }
mkdir -p "$OUTDIR" || exit 2

TMP=$(mktemp -d /tmp/pcr-plots.XXXXXX) || exit 2
CHILD=
PREFIXES=()
cleanup() {
	if [ -n "$CHILD" ]; then
		kill -KILL "$CHILD" 2>/dev/null
		wait "$CHILD" 2>/dev/null
	fi
	local p
	for p in "${PREFIXES[@]}"; do rm -rf "/var/run/dpdk/$p"; done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "plots.sh: $*" >&2; }
# gone TENTHS: true once $CHILD has exited, within TENTHS tenths of a second
gone() {
	local i
	for ((i = 0; i < $1; i++)); do kill -0 "$CHILD" 2>/dev/null || return 0; sleep 0.1; done
	! kill -0 "$CHILD" 2>/dev/null
}

# run_pacer NAME VDEV-EXTRA PACER-ARGS...: pacer on one net_pcap port
# (NAME.in.pcap in, NAME.out.pcap out), stats in NAME.json, output in
# NAME.log. It must stop by itself (quit or --exit-on-idle) within 60 s,
# else SIGINT, 10 s more, SIGKILL. Sets CMD to the command line.
run_pacer() {
	local name=$1 vdev=$2 pfx="pcr-plots-$$-$1" rc=0
	shift 2
	PREFIXES+=("$pfx")
	local a=("$PACER" -l 0,1 --no-huge -m 1024 --no-pci --no-shconf --file-prefix="$pfx"
		--vdev "net_pcap0,rx_pcap=$TMP/$name.in.pcap,tx_pcap=$TMP/$name.out.pcap$vdev"
		-- "$@" --stats-json "$TMP/$name.json")
	CMD=$(echo "${a[*]}" | sed "s|$TMP/||g")
	"${a[@]}" >"$TMP/$name.log" 2>&1 &
	CHILD=$!
	if ! gone 600; then
		log "$name: still running after 60 s, SIGINT"
		kill -INT "$CHILD" 2>/dev/null
		gone 100 || kill -KILL "$CHILD" 2>/dev/null
	fi
	wait "$CHILD" || rc=$?
	CHILD=
	[ "$rc" -eq 0 ] || { log "$name: pacer exited $rc:"; cat "$TMP/$name.log" >&2; exit 1; }
}

# The capture reader and both analyses: pcap.py rate|error OUT.pcap S.json ...
cat >"$TMP/pcap.py" <<'PY'
import json, struct, sys
def read(path, stats):
    d = json.load(open(stats))
    scale = d["tsc_hz_eal"] / d["tsc_hz"]
    b = open(path, "rb").read()
    e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    magic = struct.unpack(e + "I", b[:4])[0]
    if magic not in (0xa1b2c3d4, 0xa1b23c4d):
        sys.exit("%s: not a pcap" % path)
    mul = 1 if magic == 0xa1b23c4d else 1000
    off, out = 24, []
    while off + 16 <= len(b):
        s, frac, incl, orig = struct.unpack(e + "IIII", b[off:off + 16])
        out.append((s * 10**9 + frac * mul, orig, b[off + 16:off + 16 + incl]))
        off += 16 + incl
    if not out:
        sys.exit("%s: no frames" % path)
    t0 = out[0][0]
    return [((t - t0) * scale, n, f) for t, n, f in out]

def sport(f):
    l3 = 18 if f[12:14] == b"\x81\x00" else 14
    return struct.unpack(">H", f[l3 + (f[l3] & 15) * 4:][:2])[0]

mode, path, stats, dat = sys.argv[1:5]
pk = read(path, stats)
if mode == "rate":
    change = float(sys.argv[5])
    win = 100e6
    ports = sorted({sport(f) for _, _, f in pk})
    nwin = int(pk[-1][0] // win)          # whole windows only
    bins = [[0] * len(ports) for _ in range(nwin)]
    for t, n, f in pk:
        w = int(t // win)
        if w < nwin:
            bins[w][ports.index(sport(f))] += n * 8
    with open(dat, "w") as o:
        for w, row in enumerate(bins):
            r = [x / win * 1e3 for x in row]  # Mbit/s
            o.write("%.3f %s %.4f\n" % ((w + 0.5) * win / 1e9, " ".join("%.4f" % x for x in r), sum(r)))
    def mean(lo, hi):
        rows = [bins[w] for w in range(nwin) if lo <= w * win / 1e9 and (w + 1) * win / 1e9 <= hi]
        per = [sum(r[k] for r in rows) / len(rows) / win * 1e3 for k in range(len(ports))]
        return " ".join("%.2f" % x for x in per) + " (all %.2f)" % sum(per)
    print("ports %s; Mbit/s per flow 0.2-%.1f s: %s; %.1f-%.1f s: %s" % (
        ",".join(map(str, ports)), change - 0.1, mean(0.2, change - 0.1),
        change + 0.2, nwin * win / 1e9, mean(change + 0.2, nwin * win / 1e9)))
else:
    gap = float(sys.argv[5])
    r = [t - i * gap for i, (t, _, _) in enumerate(pk)]
    t0 = min(r)
    err = sorted((x - t0) / 1e3 for x in r)   # us
    q = lambda p: err[min(len(err) - 1, int(p * len(err)))]
    hist = {}
    for x in err:
        hist[int(x)] = hist.get(int(x), 0) + 1
    with open(dat, "w") as o:
        for k in sorted(hist):
            o.write("%d %d\n" % (k, hist[k]))
    with open(dat + ".gp", "w") as o:   # a marker per percentile
        for i, (name, v) in enumerate((("p50", q(0.5)), ("p99", q(0.99)), ("p99.9", q(0.999)))):
            o.write('set arrow from %.3f, graph 0 to %.3f, graph 1 nohead dt 2 lc rgb "red"\n' % (v, v))
            o.write('set label "%s %.1f us" at %.3f, graph %.2f offset 0.5,0 tc rgb "red"\n' % (name, v, v, 0.95 - 0.06 * i))
    print("%d frames; error us p50 %.2f p99 %.2f p99.9 %.2f max %.2f; first frame %.1f us after t0" % (
        len(err), q(0.5), q(0.99), q(0.999), err[-1], -t0 / 1e3))
PY

TERM_PNG="pngcairo size 960,540 font 'Sans,11'"
gnuplot -e "set terminal $TERM_PNG" -e "exit" 2>/dev/null || TERM_PNG="png size 960,540"

# 1: rate per flow, with a mid-run cut of the port's rate
CHANGE_MS=2500
CHANGE=${CHANGE:-set port 0 rate 10mbit}
"$PCAPGEN" -o "$TMP/rate.in.pcap" --flows 4 --count 1024 --size 1000 2>/dev/null || exit 1
cat >"$TMP/rate.cmd" <<CMD
start
sleep $CHANGE_MS
${CHANGE//; /$'\n'}
sleep 2500
quit
CMD
run_pacer rate ",infinite_rx=1" --flow-rate 5mbit --rate 20mbit --horizon 20 --mbufs 32768 \
	--max-flows 1024 --cmdline-file "$TMP/rate.cmd"
RATE_CMD=$CMD
R=$(python3 "$TMP/pcap.py" rate "$TMP/rate.out.pcap" "$TMP/rate.json" "$TMP/rate.dat" \
	"$(awk "BEGIN {print $CHANGE_MS / 1000}")") || exit 1
gnuplot <<GP || exit 1
set terminal $TERM_PNG
set output "$OUTDIR/rate-per-flow.png"
set title "Achieved rate per flow, 100 ms windows (flow-rate 5 mbit/s, port 20 mbit/s, then $CHANGE)"
set xlabel "time since first departure (s)"
set ylabel "Mbit/s"
set yrange [0:24]
set grid
set key outside right
set arrow from $CHANGE_MS/1000.0, graph 0 to $CHANGE_MS/1000.0, graph 1 nohead dt 2 lw 2 lc rgb "red"
set label "$CHANGE" at $CHANGE_MS/1000.0 + 0.05, 23 tc rgb "red"
# distinct points and widths: flows at the same rate overlap
array PT[4] = [6, 7, 4, 9]
array PS[4] = [1.8, 0.7, 1.3, 0.9]
plot for [k=2:5] "$TMP/rate.dat" using 1:k with linespoints pt PT[k-1] ps PS[k-1] lw 5-k title sprintf("flow %d", k-2), \
     "$TMP/rate.dat" using 1:6 with lines lw 3 lc rgb "black" title "all"
GP
echo "rate-per-flow: $R; at $CHANGE_MS ms: $CHANGE; command: $RATE_CMD (rate.cmd: start; sleep $CHANGE_MS; $CHANGE; sleep 2500; quit)"

# 2: departure error of one flow at 100 mbit/s
N=20000
"$PCAPGEN" -o "$TMP/err.in.pcap" --flows 1 --count $N --size 1000 2>/dev/null || exit 1
run_pacer err "" --flow-rate 100mbit --mbufs $((N + 8192)) --max-flows 1024 --exit-on-idle 500
ERR_CMD=$CMD
E=$(python3 "$TMP/pcap.py" error "$TMP/err.out.pcap" "$TMP/err.json" "$TMP/err.dat" 80000) || exit 1
P=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["departure_error_ns"]; print("pacer --stats-json (transmit - scheduled) us: p50 %.2f p99 %.2f p99.9 %.2f max %.2f" % tuple(e[k] / 1e3 for k in ("p50", "p99", "p999", "max")))' "$TMP/err.json")
gnuplot <<GP || exit 1
set terminal $TERM_PNG
set output "$OUTDIR/departure-error.png"
set title "Departure error, 1 flow at 100 mbit/s, 1000-byte frames ($N frames)"
set xlabel "actual - ideal departure (us, 1 us bins)"
set ylabel "frames"
set logscale y
set yrange [0.8:*]
set xrange [-2:*]
set grid
set style fill solid 0.6
load "$TMP/err.dat.gp"
plot "$TMP/err.dat" using (\$1+0.5):2:(1) with boxes lc rgb "#3060c0" notitle
GP
echo "departure-error: $E; $P; command: $ERR_CMD"
echo "png: $OUTDIR/rate-per-flow.png"
echo "png: $OUTDIR/departure-error.png"
