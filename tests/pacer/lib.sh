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
# the test build with PACER_TEST_* hooks (tests/pacer/meson.build)
pacer_hooks=${5:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pacer-test.XXXXXX")
prefix="pcr-$(basename "$0" .sh)-$$"

# pcr_cleanup: every network namespace pcr_netns() made (by name), the
# scratch directory, and the EAL runtime directory of every file prefix
# eal() handed out (by name: /var/run/dpdk/PREFIX); PCR_KEEP=1 in the
# environment keeps the scratch directory for a look. A test stops what
# it started in a namespace before it calls this.
pcr_cleanup() {
    local p
    if [ -f "$tmp/.netns" ]; then
        while read -r p; do
            [ -n "$p" ] && ip netns del "$p" 2>/dev/null || true
        done <"$tmp/.netns"
    fi
    if [ -f "$tmp/.prefixes" ]; then
        while read -r p; do
            [ -n "$p" ] && rm -rf "/var/run/dpdk/$p"
        done <"$tmp/.prefixes"
    fi
    [ -n "${PCR_KEEP:-}" ] || rm -rf "$tmp"
}
trap pcr_cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# pcr_netns NAME: a network namespace of the test's own, IPv6 off (the
# kernel sends nothing of its own there), deleted by pcr_cleanup; where
# none can be made the test skips (77)
pcr_netns() {
    ip netns add "$1" || { echo "SKIP: cannot create a network namespace"; exit 77; }
    echo "$1" >>"$tmp/.netns"
    ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
        net.ipv6.conf.default.disable_ipv6=1 >/dev/null
}

# stop_on_exit PID: however the test ends, stop the pacer (or the timeout
# wrapping it) PID then: SIGTERM, and 300 ms later a second one, which
# drops what is queued and exits at once, so a failed test leaves nothing
# running to disturb the next one (the signals are 200 ms apart at least:
# pacer takes closer ones as one request)
stop_on_exit() {
    trap "kill $1 2>/dev/null && { sleep 0.3; kill $1 2>/dev/null; }; pcr_cleanup" EXIT
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

# A test that feeds a whole capture at once (net_pcap reads it as fast as
# pacer takes it) and counts every frame out gives --replay: by
# default CoDel judges each flow's queue (--aqm codel) and a flow holds at
# most 100 ms of queue at its tightest rate, and most of such a burst
# would be dropped (drop_aqm, drop_flow_queue), as fq_codel would.
# tests/pacer/test_flow_queue.sh and test_aqm.sh check the defaults.

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

# note WHAT: records a failure and goes on (a test with several cases
# runs them all); notes_done OK-LINE: exits 1 listing what was noted, else
# prints OK-LINE.
failed=()
note() {
    echo "FAIL: $*" >&2
    failed+=("$*")
}
notes_done() {
    if [ ${#failed[@]} -ne 0 ]; then
        echo "FAIL: ${#failed[@]} check(s) failed:" >&2
        printf '  %s\n' "${failed[@]}" >&2
        exit 1
    fi
    echo "$1"
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
        'all(sum(q["rx_packets"] for q in d["ports"] if q["peer"] == p["port"]) == p["tx_packets"] + sum(v for k, v in p.items() if k.startswith("drop_")) + p["queued"] for p in d["ports"])' \
        'all(p["dropped_total"] == sum(v for k, v in p.items() if k.startswith("drop_")) for p in d["ports"])' \
        'all(p["early"] == 0 for p in d["ports"])' \
        'all(p["held_for_order"] == 0 for p in d["ports"])' \
        'sum(l["rx_packets"] for l in d["lcores"]) + sum(p["drop_no_mbuf"] + p["drop_rx_missed"] for p in d["ports"]) == sum(p["rx_packets"] for p in d["ports"])' \
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

# ls_rate FILE.pcap [SCALE]: "BPS LEFT_OUT FRAMES": the achieved rate as
# the least-squares slope of each frame's time (times SCALE since the
# first, see pcap_scale) against the bytes sent before it, leaving out
# frames more than 50 us behind the fit; how many it left out, of how
# many. Departures are never early but, on a shared VM, now and then
# milliseconds late (the TX lcore lost its CPU); departure times are fixed
# at arrival, so the frames after a late one are on time again. A
# first-to-last rate puts all of a late last frame into the figure (1 ms
# in 1 s is 0.1 %); this one does not, and still moves with any real rate
# error. What it leaves out must be bounded: ls_check does.
# STALL_NS (0): time the link idled because pacer's staging went unserved
# beyond its lead (STATS stage_stall_ns, measured by pacer): such a stall
# moves the schedule itself (what is stamped after it leaves later), so
# after a first fit, each gap longer than the fit's spacing by more than
# 50 us is closed by what the frames after it (up to 32, up to the next
# such gap) do not catch up (a frame
# merely sent late is followed by frames closer than the spacing until
# they are on time again; after a stall they stay behind), up to STALL_NS
# in all, before the fit that counts; prints the time closed as a fourth
# figure.
# OUT.pcap: also write FILE's frames with the times the fit judged (scaled
# by SCALE, the stalls closed), in FILE's format, so a per-flow figure
# (pacer-pcapstat --time-scale 1 OUT.pcap) is judged on the same timeline.
# SPREAD_NS (0): how far behind a uniform line the schedule itself may put
# a frame that is on time, added to the 50 us (see ls_check).
ls_rate() {
    python3 - "$1" "${2:-1}" "${3:-0}" "${4:-}" "${5:-0}" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
scale = float(sys.argv[2])
stall = float(sys.argv[3])
out = sys.argv[4]
behind_max = 50000 + float(sys.argv[5])
recs = []
magic = struct.unpack("<I", b[:4])[0]
e = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
mul = 1 if struct.unpack(e + "I", b[:4])[0] == 0xa1b23c4d else 1000
off, xs, ys, sent = 24, [], [], 0
while off + 16 <= len(b):
    s, frac, incl, orig = struct.unpack(e + "IIII", b[off:off + 16])
    xs.append(sent)
    ys.append(s * 10**9 + frac * mul)
    recs.append((off, incl, orig))
    sent += orig
    off += 16 + incl
# times since the first frame: as floats, nanoseconds since 1970 are
# 256 ns apart, and the steps closed below were off by that much
t0 = ys[0]
ys = [(y - t0) * scale for y in ys]
# Refit on the frames within 50 us until that set no longer changes (30
# rounds at most). A fixed count of 4 stopped short when a late stretch
# came early in the run: the first fit through it pivots below the on-time
# frames before it, four rounds left them out too and the slope tilted
# (simulated: frames late up to 20 ms over the first 160 ms of a 0.8 s
# run, 1254 left out for 799 late, 117 ppm fast; at the fixed point 798
# left out and the exact rate; a CI run read 1400 left out for 652 late
# and 350 ppm fast).
def fit(ys):
    keep = list(range(len(xs)))
    for _ in range(30):
        n = len(keep)
        mx = sum(xs[i] for i in keep) / n
        my = sum(ys[i] for i in keep) / n
        slope = sum((xs[i] - mx) * (ys[i] - my) for i in keep) / sum((xs[i] - mx) ** 2 for i in keep)
        nk = [i for i in range(len(xs)) if ys[i] - (my + slope * (xs[i] - mx)) < behind_max]
        if nk == keep:
            break
        keep = nk
    return slope, my - slope * mx, keep
slope, icpt, keep = fit(ys)
closed = 0.0
if stall > 0:
    # A late frame (the TX lcore lost its CPU) is followed by frames that
    # catch up until they are back on the schedule; a stall of the
    # staging moves the schedule itself, and departures are never early,
    # so every frame after it stays at least that far behind. The step at
    # a gap is the least any of the next 32 frames after the catch-up (the
    # gap's own frame and the run of frames after it each sent closer to
    # the one before than the schedule by more than 50 us or half its
    # spacing) is behind the schedule the frame before the gap was on:
    # a late frame's step is zero, a frame that was itself late before the
    # gap only makes the step smaller. Steps are closed in turn, up to the
    # stalls pacer measured in all.
    # The catch-up is passed over before the 32 are counted: a TX lcore
    # that lost its CPU for 11 ms at 20 mbit/s sends the 57 frames due
    # meanwhile at once, and the 32 after the gap were all still behind, so
    # that gap, which moved nothing, took the measured stall time (a CI
    # run: 0.07 ms closed there put the 40 frames before it behind the
    # fit, 83 left out, 47 allowed; a kept run: 1.07 ms closed there, none
    # left for the real 0.21 ms step at frame 2237, whose 263 frames after
    # it were left out).
    # The schedule's spacing a byte: the median frame-to-frame time a
    # byte, not the fit's slope, which the steps themselves bend (a CPU
    # hog's 3.75 ms slices every 9 frames made the fit's spacing 1.47x the
    # frames'). An earlier rule (the gap less the catch-up of the frames
    # up to the next gap) closed two growing delays in a row that caught
    # up after the second: 24 ms closed in a 2 mbit/s class that had lost
    # no time, whose fit then read 4 % fast.
    W = 32
    per = sorted((ys[j] - ys[j - 1]) / (xs[j] - xs[j - 1])
                 for j in range(1, len(xs)) if xs[j] > xs[j - 1])
    sl = per[len(per) // 2] if per else slope
    def catching_up(j):
        due = sl * (xs[j] - xs[j - 1])
        return ys[j] - ys[j - 1] < due - min(behind_max, due / 2)
    for i in range(1, len(xs)):
        if closed >= stall:
            break
        behind = lambda j: ys[j] - ys[i - 1] - sl * (xs[j] - xs[i - 1])
        if behind(i) <= behind_max:
            continue
        end = i
        while end + 1 < len(xs) and catching_up(end + 1):
            end += 1
        step = min(behind(j) for j in range(i, min(end + 1 + W, len(xs))))
        step = min(step, stall - closed)
        if step <= 0:
            continue
        closed += step
        for j in range(i, len(xs)):
            ys[j] -= step
    slope, icpt, keep = fit(ys)
if out:
    w = [b[:24]]
    for y, (o, incl, orig) in zip(ys, recs):
        t = (t0 + int(round(y))) // mul * mul
        w.append(struct.pack(e + "IIII", t // 10**9, t % 10**9 // mul, incl, orig))
        w.append(b[o + 16:o + 16 + incl])
    open(out, "wb").write(b"".join(w))
# where the frames left out lie (to stderr, for a failure's log): runs of
# consecutive frames, the first 6, with how far behind the fit each got
ks, runs, i = set(keep), [], 0
while i < len(xs):
    if i in ks:
        i += 1
        continue
    j = i
    while j < len(xs) and j not in ks:
        j += 1
    runs.append("%d-%d (%.0f us max)" % (i, j - 1, max(ys[k] - (icpt + slope * xs[k]) for k in range(i, j)) / 1e3))
    i = j
sys.stderr.write("ls_rate: left out %d run(s) of frames: %s%s\n"
                 % (len(runs), ", ".join(runs[:12]), ", ..." if len(runs) > 12 else ""))
print("%.1f %d %d %.0f" % (8e9 / slope, len(xs) - len(keep), len(xs), closed))
PY
}

# stage_stall_ns STATS.json PORT: the time PORT's staging went unserved
# beyond its lead (pacer's measure; 0 where STATS has none)
stage_stall_ns() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["ports"][int(sys.argv[2])].get("stage_stall_ns", 0))' "$1" "$2"
}

# ls_check WHAT FILE.pcap SCALE STATS.json PORT WANT FRACTION [EXTRA
#          [SPREAD_NS]]: the
# rate of FILE by ls_rate (times SCALE since the first frame; empty: the
# net_pcap scale from STATS, see pcap_scale) within FRACTION of WANT
# bit/s, and the frames ls_rate left out (more than 50 us behind its fit)
# no more than pacer itself counted late on PORT (STATS ports[PORT].late:
# sent more than two slots after their departure time), plus EXTRA (0; a
# kernel capture's own receive path can hold a frame back where pacer
# cannot see it). The fit runs through departures that are never early,
# so a frame 50 us behind it left at least ~50 us after its departure
# time, and pacer's own clock saw that; a frame left out that pacer did
# not count late was sent late by the schedule itself, which the fit would
# otherwise hide. The link's idle time pacer measured as its staging's
# stalls (STATS stage_stall_ns: its RX lcore lost the CPU for longer than
# the lead) is closed first (ls_rate STALL_NS), and a frame per stall it
# counted (stage_stalls: the frame at the step) is allowed beside the late
# ones. Sets ls_bps, ls_out, ls_n, ls_allowed; prints what it allowed.
# Writes FILE's frames on the timeline it judged (scaled, the stalls
# closed) to FILE less .pcap plus .closed.pcap: per-flow figures taken
# from that (pacer-pcapstat --time-scale 1) do not count a stall of
# pacer's staging, which moved every flow's schedule, against the flow.
# SPREAD_NS (0): where the schedule itself is not a uniform line, how far
# behind one an on-time frame may be, added to the 50 us. Flows each
# paced at their own rate, the rates adding up to the port's (so the port
# never binds), leave at their own phases: their sum lags a uniform line
# by up to one frame period of a flow (n flows, each at most one frame
# behind its own uniform line, each frame a 1/n of the sum's period).
ls_check() {
    local what=$1 r
    local stall
    stall=$(stage_stall_ns "$4" "$5")
    r=$(ls_rate "$2" "${3:-$(pcap_scale "$4")}" "$stall" "${2%.pcap}.closed.pcap" \
            "${9:-0}") ||
        fail "$what: ls_rate $2 failed"
    read -r ls_bps ls_out ls_n ls_closed <<<"$r"
    r=$(python3 - "$what" "$4" "$5" "${8:-0}" "$ls_bps" "$ls_out" "$ls_n" "$6" "$7" "$ls_closed" "$stall" "${9:-0}" <<'PY'
import json, sys
what, st, port, extra = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
bps, out, n = float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
want, frac = float(sys.argv[8]), float(sys.argv[9])
closed, stall = float(sys.argv[10]), float(sys.argv[11])
spread = float(sys.argv[12])
ps = json.load(open(st))["ports"][port]
stalls = ps.get("stage_stalls", 0)
allowed = ps["late"] + stalls + extra
print(allowed)
print("ls_rate: %s: %.1f bit/s (want %g +- %g %%); left out %d of %d frames (> %.0f us "
      "behind the fit), allowed %d (pacer's late count on port %d%s%s)%s"
      % (what, bps, want, frac * 100, out, n, 50 + spread / 1e3, allowed, port,
         " + %d stalls" % stalls if stalls else "", " + %d" % extra if extra else "",
         "; closed %.2f ms of gaps, pacer's staging unserved %.2f ms beyond its lead"
         % (closed / 1e6, stall / 1e6) if stall else ""))
bad = []
if out > allowed:
    bad.append("ls_rate left out %d of %d frames, more than the %d allowed" % (out, n, allowed))
if abs(bps - want) > frac * want:
    bad.append("%.1f bit/s, not %g +- %g %% (lib.sh ls_rate)" % (bps, want, frac * 100))
for m in bad:
    print("FAIL: %s: %s" % (what, m))
sys.exit(1 if bad else 0)
PY
) || { printf '%s\n' "$r" | sed 1d >&2; fail "$what: rate (see above)"; }
    ls_allowed=$(head -n 1 <<<"$r")
    sed 1d <<<"$r"
}

# windows_judge [--replay] TITLE STATS.json PORT BURST PCAP POLICY...
#               [-- WINDOW_MS...]:
# windows.py over PCAP (times scaled by pcap_scale): for every POLICY
# (NAME:GROUP:RATE, see windows.py) and window W (1, 10, 100 ms unless
# given), the most bytes in any [t, t + W) within R/8 * (W + L) + BURST +
# bucket + frame, L the largest departure error pacer measured on PORT,
# and each flow in order; and PCAP holds as many frames as pacer counted
# sent on PORT. BURST is the burst the test configured (bytes), not the
# one pacer reports: the judge's copy of the statistics has it put in, so
# a pacer that bursts more than it was told is judged by what it was told.
# --replay: the input was replayed (net_pcap infinite_rx), so a flow's
# sequence markers start over and its order cannot be judged by them; the
# judge then ignores the markers. Prints windows.py's table (with L);
# fails on a bound.
windows_judge() {
    local replay=0
    [ "$1" = --replay ] && { replay=1; shift; }
    local title=$1 st=$2 port=$3 burst=$4 pcap=$5 a=()
    shift 5
    while [ $# -gt 0 ] && [ "$1" != -- ]; do a+=(--policy "$1"); shift; done
    if [ $# -gt 0 ]; then
        shift
        while [ $# -gt 0 ]; do a+=(--window "$1"); shift; done
    fi
    python3 - "$here" "$st" "$burst" "$tmp/judge.json" "$replay" "$port" "$pcap" \
        --title "$title" --stats "$tmp/judge.json" --port "$port" "${a[@]}" "$pcap" <<'PY' ||
import json, sys
sys.path.insert(0, sys.argv[1])
import windows
d = json.load(open(sys.argv[2]))
d["burst"] = int(sys.argv[3])
json.dump(d, open(sys.argv[4], "w"))
tx, n = d["ports"][int(sys.argv[6])]["tx_packets"], len(windows.read_pcap(sys.argv[7]))
if n != tx:
    print("windows_judge: %s: %d frames, pacer sent %d on port %s"
          % (sys.argv[7], n, tx, sys.argv[6]), file=sys.stderr)
    sys.exit(1)
if sys.argv[5] == "1":
    parse = windows.parse_frame
    windows.parse_frame = lambda f: (lambda h: h and h[:5] + (None,))(parse(f))
sys.argv = ["windows.py"] + sys.argv[8:]
sys.exit(windows.main())
PY
        fail "$title: rates at short time scales (windows.py, see above)"
}

# pcap_dport IN.pcap OUT.pcap DPORT: the frames of IN whose UDP/TCP
# destination port is DPORT, timestamps and all, into OUT (windows.py's
# reader and parser).
pcap_dport() {
    python3 - "$here" "$@" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[1])
import windows
src, dst, dport = sys.argv[2], sys.argv[3], int(sys.argv[4])
b = open(src, "rb").read()
out, off = [b[:24]], 24
while off + 16 <= len(b):
    incl = struct.unpack("<I" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">I",
                         b[off + 8:off + 12])[0]
    h = windows.parse_frame(b[off + 16:off + 16 + incl])
    if h is not None and h[4] == dport:
        out.append(b[off:off + 16 + incl])
    off += 16 + incl
open(dst, "wb").write(b"".join(out))
PY
}

# capture_check WHAT STATS.json PORT PCAP OUT.json [PCAPSTAT-ARGS...]:
# pacer-pcapstat --json over PCAP (times scaled by pcap_scale) into
# OUT.json: as many frames as pacer counted sent on PORT, each flow's
# frames in order (pacer-pcapgen's sequence markers: seq_errors 0),
# timestamps never going back.
capture_check() {
    "$stat" --json --time-scale "$(pcap_scale "$2")" "${@:6}" "$4" >"$5" ||
        fail "$1: pacer-pcapstat $4 failed"
    python3 - "$1" "$2" "$3" "$5" <<'PY' || fail "$1: the capture $4 (see above)"
import json, sys
what, port = sys.argv[1], int(sys.argv[3])
tx = json.load(open(sys.argv[2]))["ports"][port]["tx_packets"]
c = json.load(open(sys.argv[4]))
bad = [m for ok, m in (
    (c["packets"] == tx, "%d frames, pacer sent %d on port %d" % (c["packets"], tx, port)),
    (c["seq_errors"] == 0, "%d frames out of order within their flow" % c["seq_errors"]),
    (c["ts_backwards"] == 0, "%d timestamps going back" % c["ts_backwards"])) if not ok]
for m in bad:
    print("FAIL: %s: %s" % (what, m), file=sys.stderr)
sys.exit(1 if bad else 0)
PY
}

# rate_within BPS WANT FRACTION WHAT: fails unless |BPS - WANT| <= FRACTION * WANT
rate_within() {
    python3 -c "import sys; r, w, f = map(float, sys.argv[1:4]); sys.exit(0 if abs(r - w) <= f * w else 1)" "$1" "$2" "$3" ||
        fail "$4: $1 bit/s, not $2 +- $3"
}

# same_flow_frames A.pcap B.pcap: the two captures hold the same frames,
# byte for byte (timestamps aside), and each flow's frames that carry
# pacer-pcapgen's marker (by 5-tuple and flow index: windows.py
# parse_frame; a malformed frame has none, and pacer may see it as a flow
# of its own) in the same order; the order between flows is pacer's to choose (its
# staging takes turns among flows under a backlog).
same_flow_frames() {
    python3 - "$here" "$1" "$2" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from windows import parse_frame, read_pcap
a = [f[2] for f in read_pcap(sys.argv[2])]
b = [f[2] for f in read_pcap(sys.argv[3])]
def flows(fr):
    out = {}
    for x in fr:
        h = parse_frame(x)
        if h is not None and h[5] is not None:
            out.setdefault(h[:5] + ((h[5] or (None,))[0],), []).append(x)
    return out
if sorted(a) != sorted(b):
    print("%s: %d frames, %s: %d: not the same frames" % (
        sys.argv[2], len(a), sys.argv[3], len(b)))
    sys.exit(1)
fa, fb = flows(a), flows(b)
bad = [k for k in fa if fa[k] != fb.get(k)]
if bad:
    print("%d flow(s) out of order, the first %s" % (len(bad), bad[0][:5]))
    sys.exit(1)
PY
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
