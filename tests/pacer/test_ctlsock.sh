#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The control socket (--control-socket) and pacerctl, against a pacer that
# is pacing a backlog (4 flows, 10 mbit/s, about 5 s of traffic):
#   - pacerctl's exit status is the command's: 0 for a good one (a rate
#     change that shows in show stats json), 1 with pacer's "error: ..." for
#     a bad value, an unknown command, sleep outside a script;
#   - --json wraps the reply; show stats --json is the --stats-json
#     document; show stats --prometheus is the text format, every port
#     counter once per port;
#   - bad clients (garbage, a 1 MB line, a disconnect mid-command, 100
#     connections held open at once) get an error or are closed, and a
#     well-behaved pacerctl beside them is still answered;
#   - the fast path does not notice: the share of packets sent late while
#     the bad clients ran is within 5 points of the share before, and the
#     departure error measured on the capture (each gap against a frame
#     time at the rate in force) has a p99 over those departures within a
#     tenth of a frame time of the p99 before (the control loop runs on the
#     main lcore's CPU, the worker on its own); conservation holds, every
#     packet leaves, no mbuf is lost;
#   - quit over the socket ends pacer (exit 0), and the socket file and the
#     runtime directory are gone.
source "$(dirname "$0")/lib.sh"

ctl="$(dirname "$gen")/pacerctl"
[ -x "$ctl" ] || fail "no pacerctl next to $gen"
[ "$(id -u)" = 0 ] || { echo "SKIP: the runtime directory is root's"; exit 77; }

"$gen" -o "$tmp/in.pcap" --flows 4 --count 6000 --size 1000 2>/dev/null
"$gen" -o "$tmp/empty.pcap" --flows 1 --count 0 2>/dev/null
prefix="pcr-ctl-$$"
sock="/var/run/dpdk/$prefix/pacer.sock"
timeout 120 "$pacer" $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out0.pcap" \
    "net_pcap1,rx_pcap=$tmp/empty.pcap,tx_pcap=$tmp/out1.pcap" | sed 's/--no-telemetry//') \
    -- --replay --rate 10mbit --horizon 6000 --mbufs 16384 --max-flows 64 \
    --stats-json "$tmp/c.json" >"$tmp/c.out" 2>"$tmp/c.err" &
pid=$!
stop_on_exit "$pid"
wait_started "$tmp/c.out" "$pid" || fail "pacer did not start: $(cat "$tmp/c.err")"
for _ in $(seq 100); do grep -q "^pacer: control socket" "$tmp/c.out" && break; sleep 0.05; done
grep -q "^pacer: control socket $sock " "$tmp/c.out" || fail "no control socket line: $(grep control "$tmp/c.out")"
[ "$(stat -c %a "$sock")" = 600 ] || fail "$sock: mode $(stat -c %a "$sock"), want 600"

# run EXPECTED-STATUS ARGS...: pacerctl's status, output in $tmp/o, $tmp/e
run() {
    local want=$1 rc=0
    shift
    "$ctl" -s "$sock" "$@" >"$tmp/o" 2>"$tmp/e" || rc=$?
    [ "$rc" = "$want" ] || fail "pacerctl $*: exit $rc, want $want: $(cat "$tmp/o" "$tmp/e")"
}

run 0 show config
grep -q "^rate = 10mbit" "$tmp/o" || fail "show config: no 'rate = 10mbit': $(cat "$tmp/o")"
run 0 --file-prefix "$prefix" set port 1 rate 12mbit
run 0 show stats --json
expect "$tmp/o" 'd["ports"][1]["rate_bps"] == 12000000' 'd["ports"][0]["rate_bps"] == 10000000' \
    '"mempool_in_use" in d'
run 1 set port 1 rate 12zbit
grep -q "^error: rate '12zbit': unknown unit 'zbit'" "$tmp/e" || fail "bad rate: $(cat "$tmp/e")"
run 1 frobnicate the wheel
grep -q "^error: command not found: frobnicate the wheel" "$tmp/e" || fail "unknown command: $(cat "$tmp/e")"
run 1 sleep 10
grep -q "^error: sleep is for --cmdline-file scripts" "$tmp/e" || fail "sleep: $(cat "$tmp/e")"
run 0 --json show class
expect "$tmp/o" 'd["ok"] is True' 'd["command"] == "show class"' '"default" in d["output"]'
run 1 --json set class nosuch rate 1mbit
expect "$tmp/o" 'd["ok"] is False' 'd["output"].startswith("error:")'
run 2 show stats
run 2 --prometheus show class
run 2 -s "$tmp/nosuch.sock" show config
run 0 show stats --prometheus
python3 - "$tmp/o" "$tmp/c.out" <<'PY' || fail "show stats --prometheus: see above"
import re, sys
text = open(sys.argv[1]).read()
ok = True
seen = {}
for line in text.splitlines():
    if line.startswith("# HELP ") or line.startswith("# TYPE "):
        continue
    m = re.fullmatch(r'(pacer_\w+)(\{[^}]*\})? (\d+)', line)
    if not m:
        print("not the text format: %r" % line); ok = False; continue
    seen.setdefault(m.group(1), []).append(m.group(2) or "")
types = dict(re.findall(r'(?m)^# TYPE (pacer_\w+) (counter|gauge)$', text))
for name, labels in seen.items():
    if name not in types:
        print("%s has no TYPE line" % name); ok = False
for c in ("pacer_tx_packets_total", "pacer_dropped_total", "pacer_drop_horizon_total",
          "pacer_stage_lead_ns", "pacer_late_total", "pacer_rate_bps"):
    if sorted(seen.get(c, [])) != sorted('{port="%d",name="net_pcap%d"}' % (p, p) for p in (0, 1)):
        print("%s: not once per port: %s" % (c, seen.get(c))); ok = False
print("prometheus: %d metrics, %d samples" % (len(seen), sum(len(v) for v in seen.values())))
sys.exit(0 if ok else 1)
PY

# the fast path before the bad clients
run 0 show stats --json
cp "$tmp/o" "$tmp/before.json"
python3 - "$sock" "$ctl" <<'PY' || fail "bad clients: see above"
import socket, subprocess, sys, time
path, ctl = sys.argv[1], sys.argv[2]

def reply(s, timeout=10):
    s.settimeout(timeout)
    b = b""
    while b.count(b"\0") == 0 or not b.split(b"\0", 1)[1].endswith(b"\n"):
        d = s.recv(65536)
        if not d:
            return b, True
        b += d
    return b, False

def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s

ok = True
def check(what, cond, detail=""):
    global ok
    if not cond:
        print("FAIL: %s %s" % (what, detail)); ok = False

# garbage: a command not found
s = conn(); s.sendall(b"\x00\xff\xfe garbage \x1b[A\n")
b, _ = reply(s)
check("garbage", b.endswith(b"\0error\n") and b"error: " in b, repr(b[:200]))
# pipelined: two requests, two replies in order
s.sendall(b"show config\nhelp\n")
b1, _ = reply(s); 
check("pipelined", b"\0ok\n" in b1, repr(b1[:100]))
s.close()
# a 1 MB line: an error, then closed
s = conn()
try:
    s.sendall(b"x" * (1 << 20))
except OSError:
    pass
b, closed = b"", False
s.settimeout(10)
try:
    while True:
        d = s.recv(65536)
        if not d:
            closed = True
            break
        b += d
except OSError:
    closed = True
check("1 MB line", b"error: a line is at most 1024 bytes" in b and closed, repr(b[:200]))
s.close()
# a disconnect mid-command
s = conn(); s.sendall(b"show port st"); s.close()
s = conn(); s.sendall(b"set port 1 rate 11mbit\n"); s.shutdown(socket.SHUT_RDWR); s.close()
# 100 connections held open at once, saying nothing
held = []
for i in range(100):
    held.append(conn())
time.sleep(0.3)
# a well-behaved client beside them is answered
r = subprocess.run([ctl, "-s", path, "show", "port", "stats", "1"], capture_output=True, timeout=20)
check("pacerctl beside 100 idle connections", r.returncode == 0 and b"tx_packets: " in r.stdout,
      repr((r.returncode, r.stdout[:100], r.stderr[:200])))
# the oldest idle ones were closed with a message
closed_msg = 0
for s in held:
    s.settimeout(0.2)
    try:
        d = s.recv(4096)
        if b"too many control clients" in d:
            closed_msg += 1
    except OSError:
        pass
check("idle connections closed to make room", closed_msg >= 100 - 64,
      "%d of 100 told" % closed_msg)
for s in held:
    s.close()
print("bad clients: garbage, a 1 MB line, disconnects, 100 connections (%d closed to make room)" % closed_msg)
sys.exit(0 if ok else 1)
PY
run 0 show stats --json
cp "$tmp/o" "$tmp/after.json"
python3 - "$tmp/before.json" "$tmp/after.json" "$tmp/window" <<'PY' || fail "the fast path noticed the bad clients"
import json, sys
a, b = (json.load(open(p))["ports"][1] for p in sys.argv[1:3])
sent = b["tx_packets"] - a["tx_packets"]
# which departures (port 1's capture, in order) left while they ran
open(sys.argv[3], "w").write("%d %d\n" % (a["tx_packets"], b["tx_packets"]))
late_before = a["late"] / max(a["tx_packets"], 1)
late_during = (b["late"] - a["late"]) / max(sent, 1)
print("fast path: %d packets sent while the bad clients ran, %.2f %% late (before: %.2f %% of %d); "
      "departure error p99 %d ns, max %d ns over the run so far" %
      (sent, 100 * late_during, 100 * late_before, a["tx_packets"],
       b["departure_error_ns"]["p99"], b["departure_error_ns"]["max"]))
sys.exit(0 if sent > 0 and late_during <= late_before + 0.05 else 1)
PY

# the rate change above (11 mbit/s, from a client that hung up at once)
run 0 show stats --json
expect "$tmp/o" 'd["ports"][1]["rate_bps"] == 11000000'
# let it drain, then quit over the socket
for _ in $(seq 200); do
    run 0 show stats --json
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if all(p["queued"] == 0 for p in d["ports"]) else 1)' "$tmp/o" && break
    sleep 0.1
done
run 0 quit
rc=0
wait "$pid" || rc=$?
[ "$rc" = 0 ] || fail "pacer exited $rc after quit: $(tail -5 "$tmp/c.err")"
conserved "$tmp/c.json"
expect "$tmp/c.json" 'd["ports"][1]["tx_packets"] + d["ports"][1]["dropped_total"] == 6000' \
    'd["ports"][0]["tx_packets"] == 0'
[ ! -e "$sock" ] || fail "$sock left behind"
no_runtime_dir
# the departure error while the bad clients ran, from the capture: port 1
# sends its backlog back to back, so each gap is one frame time at the
# rate in force (10, 12 or 11 mbit/s here: the commands above); a gap's
# error is its distance from the nearest. Its p99 over the departures made
# while the bad clients ran must not exceed the p99 of those before by
# more than a tenth of a frame time (what a disturbed worker would show:
# a late burst, gaps of zero and a frame time and more)
python3 - "$tmp/out1.pcap" "$tmp/window" "$(dirname "$0")" <<'PY' || fail "the departure error grew while the bad clients ran"
import sys
sys.path.insert(0, sys.argv[3])
from windows import read_pcap
from fct_open import pct
fr = read_pcap(sys.argv[1])
lo, hi = (int(x) for x in open(sys.argv[2]).read().split())
def errs(i0, i1):
    e = []
    for i in range(max(i0, 1), min(i1, len(fr))):
        gap = fr[i][0] - fr[i - 1][0]
        e.append(min(abs(gap - fr[i][1] * 8e9 / r) for r in (10e6, 11e6, 12e6)))
    return sorted(e)
before, during = errs(1, lo), errs(lo, hi)
allow = 0.1 * 1000 * 8e9 / 12e6
print("departure gaps before the bad clients: %d, error p50 %.1f us, p99 %.1f us; while they ran: %d, "
      "p50 %.1f us, p99 %.1f us, max %.1f us (allowed p99: before's + %.1f us, a tenth of a frame time)"
      % (len(before), pct(before, .5) / 1e3, pct(before, .99) / 1e3, len(during), pct(during, .5) / 1e3,
         pct(during, .99) / 1e3, (during[-1] if during else 0) / 1e3, allow / 1e3))
sys.exit(0 if len(during) > 100 and pct(during, .99) <= pct(before, .99) + allow else 1)
PY
echo "ok: pacerctl's status and output, --json, Prometheus, bad clients, quit"
