# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Sourced by the pacer tests: test.sh PACER PCAPGEN PCAPSTAT. Gives
# run_pacer (its own EAL file prefix, net_pcap vdevs), expect (Python
# expressions over a JSON file) and a scratch directory $tmp.
set -euo pipefail

if [ $# -lt 3 ]; then
    echo "usage: $0 PACER PACER-PCAPGEN PACER-PCAPSTAT" >&2
    exit 2
fi
pacer=$1
gen=$2
stat=$3
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pacer-test.XXXXXX")
prefix="pcr-$(basename "$0" .sh)-$$"

# pcr_cleanup: the scratch directory, and the EAL runtime directory of
# every file prefix eal() handed out (by name: /var/run/dpdk/PREFIX).
pcr_cleanup() {
    local p
    if [ -f "$tmp/.prefixes" ]; then
        while read -r p; do
            [ -n "$p" ] && rm -rf "/var/run/dpdk/$p"
        done <"$tmp/.prefixes"
    fi
    rm -rf "$tmp"
}
trap pcr_cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# no_runtime_dir: pacer, gone, left no EAL runtime directory for $prefix
# (DPDK 22.11 leaves one per file prefix; pacer removes its own). As root
# only: elsewhere it lies under $XDG_RUNTIME_DIR.
no_runtime_dir() {
    [ "$(id -u)" -ne 0 ] || [ ! -d "/var/run/dpdk/$prefix" ] ||
        fail "EAL runtime directory /var/run/dpdk/$prefix left behind"
}

# eal VDEV...: EAL options for one test run: no hugepages, no PCI, a file
# prefix of its own so parallel tests never meet.
eal() {
    local a=(-l 0,1 --no-huge -m 512 --no-pci --no-shconf --no-telemetry
             --file-prefix="$prefix" --log-level=lib.eal:warning)
    local v
    echo "$prefix" >>"$tmp/.prefixes"
    for v in "$@"; do a+=(--vdev "$v"); done
    echo "${a[@]}"
}

# run_pacer NAME EAL-ARGS -- PACER-ARGS: runs pacer, stdout/stderr kept in
# $tmp/NAME.out / .err, exit status in $rc; stats in $tmp/NAME.json.
run_pacer() {
    local name=$1
    shift
    rc=0
    timeout 120 "$pacer" "$@" --stats-json "$tmp/$name.json" \
        >"$tmp/$name.out" 2>"$tmp/$name.err" || rc=$?
}

# wait_started OUT PID: wait (20 s at most) for pacer's "pacer: lcore" line
# in OUT, printed once its workers run; false if PID exited or it never
# came. Time a signal from here, not from the fork: one that lands before
# bash has exec'd pacer kills the child shell instead (exit 143).
wait_started() {
    local _
    for _ in $(seq 400); do
        grep -q "^pacer: lcore" "$1" 2>/dev/null && return 0
        kill -0 "$2" 2>/dev/null || break
        sleep 0.05
    done
    grep -q "^pacer: lcore" "$1" 2>/dev/null
}

# expect FILE.json EXPR...: every Python expression over the document (d)
# must hold; a failure prints the expression and the document.
expect() {
    python3 - "$@" <<'PY'
import json, sys
path = sys.argv[1]
d = json.load(open(path))
for e in sys.argv[2:]:
    try:
        ok = eval(e, {"d": d, "abs": abs, "sum": sum, "all": all, "len": len,
                      "min": min, "max": max})
    except Exception as ex:
        ok = False
        e += "  (%s: %s)" % (type(ex).__name__, ex)
    if not ok:
        print("FAIL: %s\n  in %s: %s" % (e, path, json.dumps(d)[:3000]), file=sys.stderr)
        sys.exit(1)
PY
}

# conserved FILE.json: for every port, what its peers received equals
# tx + dropped + queued, every mbuf is back in the pool, nothing left
# early, and no departure had to be held back for its flow's order
# (held_for_order: the policies keep a flow's departures in order unless
# the flow changes class, or its rate goes from unlimited to finite);
# and the worker lcores' shares add up to the ports' totals (RX: less
# what the PMD counted as no mbuf or missed, which no lcore saw).
conserved() {
    expect "$1" \
        'd["mempool_in_use_at_exit"] == 0' \
        'd["consistent"]' \
        'all(sum(q["rx_packets"] for q in d["ports"] if q["peer"] == p["port"]) == p["tx_packets"] + sum(p["dropped"].values()) + p["queued"] for p in d["ports"])' \
        'all(p["dropped_total"] == sum(p["dropped"].values()) for p in d["ports"])' \
        'all(p["early"] == 0 for p in d["ports"])' \
        'all(p["held_for_order"] == 0 for p in d["ports"])' \
        'sum(l["rx_packets"] for l in d["lcores"]) + sum(p["dropped"]["no_mbuf"] + p["dropped"]["rx_missed"] for p in d["ports"]) == sum(p["rx_packets"] for p in d["ports"])' \
        'sum(l["tx_packets"] for l in d["lcores"]) == sum(p["tx_packets"] for p in d["ports"])'
}

# pcap_scale FILE.json: the factor that turns net_pcap's output timestamps
# into measured time. net_pcap stamps what it writes from the TSC with the
# EAL's frequency estimate (rte_get_timer_hz()), while pacer paces with the
# frequency it measured against CLOCK_MONOTONIC_RAW (tsc_hz); the two differ
# by tsc_ppm (about -1480 ppm on the machine this was written on). So a
# net_pcap capture can judge pacing only in TSC terms, and cannot judge the
# TSC measurement itself (test_clock_wire.sh does, with kernel timestamps).
pcap_scale() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(repr(d["tsc_hz_eal"] / d["tsc_hz"]))' "$1"
}

# clock_pair, realtime_scale: kernel capture times against pacer's clock
source "$top/tools/clock.sh"

# ls_rate FILE.pcap [SCALE]: "BPS LEFT_OUT": the achieved rate as the
# least-squares slope of each frame's time (times SCALE since the first,
# see pcap_scale) against the bytes sent before it, leaving out frames
# more than 50 us behind the fit. Departures are never early but, on a
# shared VM, now and then milliseconds late (the TX lcore lost its CPU);
# departure times are fixed at arrival, so the frames after a late one
# are on time again. A first-to-last rate puts all of a late last frame
# into the figure (1 ms in 1 s is 0.1 %); this one does not, and still
# moves with any real rate error.
ls_rate() {
    python3 - "$1" "${2:-1}" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
scale = float(sys.argv[2])
magic = struct.unpack("<I", b[:4])[0]
e = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
mul = 1 if struct.unpack(e + "I", b[:4])[0] == 0xa1b23c4d else 1000
off, xs, ys, sent = 24, [], [], 0
while off + 16 <= len(b):
    s, frac, incl, orig = struct.unpack(e + "IIII", b[off:off + 16])
    xs.append(sent)
    ys.append(s * 10**9 + frac * mul)
    sent += orig
    off += 16 + incl
ys = [ys[0] + (y - ys[0]) * scale for y in ys]
keep = list(range(len(xs)))
for _ in range(4):
    n = len(keep)
    mx = sum(xs[i] for i in keep) / n
    my = sum(ys[i] for i in keep) / n
    slope = sum((xs[i] - mx) * (ys[i] - my) for i in keep) / sum((xs[i] - mx) ** 2 for i in keep)
    keep = [i for i in range(len(xs)) if ys[i] - (my + slope * (xs[i] - mx)) < 50000]
print("%.1f %d" % (8e9 / slope, len(xs) - len(keep)))
PY
}

# rate_within BPS WANT FRACTION WHAT: fails unless |BPS - WANT| <= FRACTION * WANT
rate_within() {
    python3 -c "import sys; r, w, f = map(float, sys.argv[1:4]); sys.exit(0 if abs(r - w) <= f * w else 1)" "$1" "$2" "$3" ||
        fail "$4: $1 bit/s, not $2 +- $3"
}

# same_frames A.pcap B.pcap: the two captures hold the same frames, byte for
# byte, in the same order (timestamps aside).
same_frames() {
    python3 - "$1" "$2" <<'PY'
import struct, sys
def frames(p):
    b = open(p, "rb").read()
    e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(b):
        incl = struct.unpack(e + "I", b[off + 8:off + 12])[0]
        out.append(b[off + 16:off + 16 + incl])
        off += 16 + incl
    return out
a, b = frames(sys.argv[1]), frames(sys.argv[2])
if a != b:
    print("%s: %d frames, %s: %d; first difference at frame %d" % (
        sys.argv[1], len(a), sys.argv[2], len(b),
        next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))))
    sys.exit(1)
PY
}
