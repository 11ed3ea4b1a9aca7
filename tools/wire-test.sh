#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# wire-test.sh [--json] [--builddir DIR] [--pacer-rate RATE] [--keep DIR]
# wire-test.sh --fct fair|completion [--fct-secs S] [--fct-seed X]
#              [--fct-load L] --fct-out JSON [--builddir DIR] [--keep DIR]
# wire-test.sh --queue JSON [--queue-secs S] [--queue-rates "50 200"]
#              [--queue-flows "1 4 16"] [--queue-hosts "cubic-ecn cubic bbr"]
#              [--queue-shapers "pacer pacer-off tbf htb"] [--builddir DIR]
#
# pacer judged with real TCP stacks on either side, side by side with the
# kernel's own shapers (tbf, htb) in the same run. Needs root; installs
# what it needs with `tools/quickstart.sh deps`.
#
# The bed (all in namespaces of its own, pcr-wire-PID-*; addresses only from
# 198.18.0.0/15, only inside them; nothing touches the root namespace):
#
#   host A (ns -a)                 pacer (ns -p)                host B (ns -b)
#   wa0 198.18.0.1 ---veth--- pa0 [port 0]  pacer  [port 1] pb0 ---veth--- wb0 198.18.0.2
#   ka0 198.18.1.1 ------------------------veth----------------------------- kb0 198.18.1.2
#                  (tbf or htb as root qdisc on ka0, A's egress)
#
# pacer takes the two veth ends with net_af_packet (measured against
# net_tap: see docs/PERFORMANCE.md "On a real wire"). Every host interface
# has its TX checksum offload off (`ethtool -K X tx off`: frames crossing a
# userspace data path carry real checksums; it also turns TSO off, so the
# frames on every path are MTU-sized; GSO stays as a user has it, so the
# kernel shapers see what they would see). The hosts' receive processing is
# steered (RPS) to the CPUs pacer does not busy-poll: on a 2-vCPU machine
# the hosts, iperf3, tcpdump and the kernel shapers share CPU 0 and pacer's
# worker has CPU 1; without RPS the receiving TCP stack runs in pacer's
# af_packet sendto() or in ksoftirqd on pacer's CPU, and the worker stalls
# for milliseconds (measured: departure error p99 14 ms, goodput -9 %).
#
# Byte accounting: pacer counts frame bytes (Ethernet header, no FCS,
# --wire-overhead 0), as tbf and htb count skb->len on a veth and as
# tcpdump's original length reports; so "rate" below is always frame bits
# per second, and TCP goodput is the payload share of it:
# MSS / (MSS + TCP + IP + Ethernet headers), with the MSS and the TCP
# timestamp option read from the hosts' own settings.
#
# Checks (each tolerance from the configuration; see the comment at each):
#   ping both ways through pacer; idle RTT reported
#   one TCP flow, --rate 100mbit: goodput within 3 % of the payload share,
#     on-wire rate (tcpdump on B's wb0, pacer-pcapstat) within 1 %
#   UDP offered at 2x: delivered within 1 %, the excess in pacer's drop
#     counters by reason, reconciled with iperf3's lost datagrams
#   four TCP flows, --flow-rate 20mbit under --rate 60mbit: aggregate
#     within 3 %, each flow within 10 % of its fair share (15 mbit)
#   a rate change (100 -> 50 mbit, --cmdline-file) followed within 1 s
#   ping RTT under load, with the horizon (queue) that produced it
#   idle periods (UDP bursts of 20 datagrams every 10 ms, a quarter of the
#     rate): every datagram delivered, none dropped; inside a burst frames
#     leave a frame time apart (gap p50 within 10 %), at most one frame
#     above the rate in p90 of 1 ms windows
#   tbf (burst 15k, and burst one frame) and htb at the same rate on the
#     kernel path, with both workloads (the backlogged TCP flow and the
#     idle periods); one table per workload compares rate error, burst
#     above the rate in 1 ms / 100 us windows (max and p99) and gap p50/p99
#     against the ideal gap; a summary line gives the issue's goal (pacer's
#     worst p99 burst 10x below tbf's and htb's at equal rate error)
#
# pacer's worker busy-polls one CPU, which other processes or the
# hypervisor take away now and then: each pacer run measures how long the
# worker waited for it (schedstat run delay and steal, cpu_lost), and pacer
# counts the time its worker was away from its loop (stalls: passes over
# 1 ms, which also sees a vCPU held by its host, which no steal counter
# shows here); the larger is the lost fraction F of the run. The senders
# lose theirs too (host A's vCPU held for ~100 ms, longer than the 50 ms
# queue): where pacer had nothing to send (starved: from a second capture
# on pacer's port 0), that share S of a backlogged run's time is allowed
# as well, so a rate is judged over the time pacer had work. A check
# that lost CPU time can move judges with an allowance derived from F,
# and its line says how much it allowed: a rate or gap tolerance widens
# by F, and by S in backlogged runs (check_within: lost time delays
# departures, and over a run it can take at most that share of the time
# away); the p90 burst in 1 ms windows allows, above one frame, the
# catch-up of the lost time concentrated in a tenth of the windows
# (burst_allow: 10 x F x 1 ms at the rate). Checks lost time cannot move
# (counts, conservation, ping replies, RTT against the horizon) allow
# nothing. Every check is judged once: a failed one fails the run.
#
# Output: the tables and the goal line on stdout (--json: one JSON object
# per workload and shaper on stdout instead, the tables on stderr);
# "ok:"/"FAIL:" lines on stderr. Exit 0 if every check passed, 1 if one
# failed, 2 on bad usage, 77 (skip) only without root, 2 CPUs or the
# tools.
#
# --pacer-rate RATE (or WIRE_TEST_PACER_RATE): give pacer RATE instead of
# 100mbit in the single-flow and UDP runs while the checks still expect
# 100mbit -- a misconfiguration the checks must catch (tests/wire).
# --keep DIR: keep captures, statistics and logs in DIR.
# WIRE_TEST_HORIZON_MS: pacer's --horizon in every run instead of 50.
#
# --fct ORDER: instead of all the above, completion times of web-search
# transactions over TCP (bench/run.sh --only fct; issue 18): pacer at
# 100mbit with its default class in ORDER, tests/pacer/txn_tcp.py's
# server on host B and client on host A (persistent connections, DCTCP's
# web-search sizes arriving as a Poisson process at --fct-load of the rate,
# default 0.7, for --fct-secs, default 10, seeded by --fct-seed, default
# 1), judged by tests/pacer/fct_open.py --tcp against fair sharing and
# SRPT of the same transactions; its JSON, with pacer's drops, in
# --fct-out. Exit 0, or 1 when a transaction did not complete.
#
# --queue JSON: instead of all the above, the standing queue TCP keeps
# behind each shaper (bench/run.sh --only queue; issue 35). For each rate
# (mbit/s) and number of flows: N TCP flows from A to B (iperf3 -P N) for
# --queue-secs (default 20) with a ping every 20 ms beside them, the
# hosts' congestion control and ECN as --queue-hosts says (cubic-ecn:
# cubic, net.ipv4.tcp_ecn=1 at both hosts; cubic: ecn 0; bbr: BBR, ecn
# 0), through each of --queue-shapers: pacer with its defaults (CoDel
# per flow), pacer --aqm off (drop-tail at --flow-queue, as before issue
# 35; with cubic and BBR), tbf (burst 15k latency 100ms) and htb (one
# class, rate = ceil, a pfifo limit 1000 leaf) -- each kernel shaper
# once per rate and flow count, cubic without ECN (drop-tail marks
# nothing); fq_codel and cake as well where
# the kernel has them (htb with an fq_codel leaf, cake bandwidth R),
# which the table says. The idle RTT is measured before each run on its
# own path (20 pings). Figures per run: each flow's mean smoothed RTT
# (iperf3's mean_rtt, from tcp_info), ping p50/p99, goodput against the
# payload share of the rate, retransmitted segments, pacer's aqm_marked,
# drop_aqm and the share of the run its worker lost its CPU; and the
# issue's goals beside them (mean sRTT <= idle + 10 ms for 1 and 4
# flows, + 20 ms for 16; ping p99 <= idle + 5 ms;
# goodput >= 95 %; retransmissions < 0.1 % of segments with ECN). One
# JSON object per run in JSON, the table on stdout. Figures, not checks:
# exit 0 once every run ran.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
builddir=$top/build
json=0
keep=
pacer_rate=${WIRE_TEST_PACER_RATE:-}
fct_order=
fct_secs=10
fct_seed=1
fct_load=0.7
fct_out=
queue_out=
queue_secs=20
queue_rates="50 200"
queue_flows="1 4 16"
queue_hosts="cubic-ecn cubic bbr"
queue_shapers="pacer pacer-off tbf htb"

usage() {
    echo "usage: $0 [--json] [--builddir DIR] [--pacer-rate RATE] [--keep DIR]" >&2
    echo "       $0 --fct fair|completion [--fct-secs S] [--fct-seed X] [--fct-load L] --fct-out JSON" >&2
    echo "       $0 --queue JSON [--queue-secs S] [--queue-rates \"50 200\"] [--queue-flows \"1 4 16\"] [--queue-hosts \"cubic-ecn cubic bbr\"] [--queue-shapers \"pacer pacer-off tbf htb\"]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --json) json=1 ;;
    --builddir) [ $# -ge 2 ] || usage; builddir=$2; shift ;;
    --pacer-rate) [ $# -ge 2 ] || usage; pacer_rate=$2; shift ;;
    --keep) [ $# -ge 2 ] || usage; keep=$2; shift ;;
    --fct) [ $# -ge 2 ] || usage; fct_order=$2; shift ;;
    --fct-secs) [ $# -ge 2 ] || usage; fct_secs=$2; shift ;;
    --fct-seed) [ $# -ge 2 ] || usage; fct_seed=$2; shift ;;
    --fct-load) [ $# -ge 2 ] || usage; fct_load=$2; shift ;;
    --fct-out) [ $# -ge 2 ] || usage; fct_out=$2; shift ;;
    --queue) [ $# -ge 2 ] || usage; queue_out=$2; shift ;;
    --queue-secs) [ $# -ge 2 ] || usage; queue_secs=$2; shift ;;
    --queue-rates) [ $# -ge 2 ] || usage; queue_rates=$2; shift ;;
    --queue-flows) [ $# -ge 2 ] || usage; queue_flows=$2; shift ;;
    --queue-hosts) [ $# -ge 2 ] || usage; queue_hosts=$2; shift ;;
    --queue-shapers) [ $# -ge 2 ] || usage; queue_shapers=$2; shift ;;
    -h|--help) sed -n '3,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 0 ;;
    *) usage ;;
    esac
    shift
done

case $fct_order in
"") ;;
fair|completion)
    [ -n "$fct_out" ] || { echo "wire-test.sh: --fct needs --fct-out JSON" >&2; exit 2; }
    [[ $fct_secs =~ ^[0-9]+(\.[0-9]+)?$ && $fct_seed =~ ^[0-9]+$ && $fct_load =~ ^0?\.[0-9]+$ ]] || {
        echo "wire-test.sh: --fct-secs '$fct_secs' (seconds), --fct-seed '$fct_seed' (integer), --fct-load '$fct_load' (a fraction below 1)" >&2
        exit 2
    } ;;
*) echo "wire-test.sh: --fct '$fct_order': fair or completion" >&2; exit 2 ;;
esac
if [ -n "$queue_out" ]; then
    [[ $queue_secs =~ ^[0-9]+$ && $queue_secs -ge 5 ]] ||
        { echo "wire-test.sh: --queue-secs '$queue_secs': whole seconds, 5 or more" >&2; exit 2; }
    for v in $queue_rates; do
        [[ $v =~ ^[0-9]+$ && $v -ge 1 && $v -le 1000 ]] ||
            { echo "wire-test.sh: --queue-rates '$v': mbit/s, 1 to 1000" >&2; exit 2; }
    done
    for v in $queue_flows; do
        [[ $v =~ ^[0-9]+$ && $v -ge 1 && $v -le 64 ]] ||
            { echo "wire-test.sh: --queue-flows '$v': 1 to 64 flows" >&2; exit 2; }
    done
    for v in $queue_hosts; do
        case $v in cubic-ecn|cubic|bbr|bbr-ecn) ;;
        *) echo "wire-test.sh: --queue-hosts '$v': cubic-ecn, cubic, bbr or bbr-ecn" >&2; exit 2 ;;
        esac
    done
    for v in $queue_shapers; do
        case $v in pacer|pacer-off|tbf|htb) ;;
        *) echo "wire-test.sh: --queue-shapers '$v': pacer, pacer-off, tbf or htb" >&2; exit 2 ;;
        esac
    done
    # pacer's own horizon (the bed's 50 ms would bound the queue, not AQM)
    WIRE_TEST_HORIZON_MS=${WIRE_TEST_HORIZON_MS:-2000}
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: wire-test.sh needs root (network namespaces, tc, tcpdump)" >&2
    exit 77
fi
"$top/tools/quickstart.sh" deps
for c in ip tc ethtool tcpdump iperf3 ping python3 timeout taskset; do
    command -v "$c" >/dev/null || { echo "SKIP: $c not found" >&2; exit 77; }
done
pacer=$builddir/src/pacer
pcapstat=$builddir/tools/pacer-pcapstat
for b in "$pacer" "$pcapstat"; do
    [ -x "$b" ] || { echo "wire-test.sh: $b not built (ninja -C $builddir)" >&2; exit 2; }
done

ncpu=$(nproc)
if [ "$ncpu" -lt 2 ]; then
    echo "SKIP: needs 2 CPUs (pacer's worker busy-polls one)" >&2
    exit 77
fi
# pacer: main lcore 0 (sleeps), worker on the last CPU; hosts on the others
worker=$((ncpu - 1))
host_cpus=0-$((ncpu - 2))
rps_mask=$(printf '%x' $(( (1 << (ncpu - 1)) - 1 )))

# ---------------------------------------------------------------- config
rate_bps=100000000      # the single-flow, UDP and comparison runs
rate_tc=100mbit
agg4_bps=60000000       # four flows: aggregate ...
flow4_bps=20000000      # ... and per-flow rate
low_bps=50000000        # the rate change: 100 -> 50 mbit
horizon_ms=${WIRE_TEST_HORIZON_MS:-50}           # pacer's queue, the same time as tbf's latency
tcp_s=4                 # iperf3 seconds per TCP run
udp_s=3
change_s=5
onoff_n=20              # idle periods: UDP bursts of onoff_n datagrams ...
onoff_ms=10             # ... every onoff_ms (iperf3 -b RATE/N), udp_s seconds
afp_frames=${WIRE_TEST_AFP_FRAMES:-4096}  # af_packet ring frames per queue (see pacer_start)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pcr-wire.XXXXXX")
ns_a=pcr-wire-$$-a
ns_b=pcr-wire-$$-b
ns_p=pcr-wire-$$-p
pids=()
failed=0        # a check failed
lost_pct=0      # the share of the current run pacer's worker lost (cpu_lost)
starved_pct=0   # the share of a window pacer had nothing to send (starved)

log() { echo "wire: $*" >&2; }
die() { echo "FAIL: $*" >&2; exit 1; }

cleanup() {
    local p i ns
    trap - EXIT INT TERM
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do
        for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$p" 2>/dev/null || true
    done
    for ns in "$ns_a" "$ns_b" "$ns_p"; do
        # anything still running in our own namespaces is ours
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        ip netns del "$ns" 2>/dev/null || true
    done
    if [ -n "$keep" ]; then
        mkdir -p "$keep" && cp -a "$tmp"/. "$keep"/ || true
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# bg VAR CMD...: start CMD in the background, remember its pid for cleanup
bg() {
    local var=$1
    shift
    "$@" &
    pids+=($!)
    printf -v "$var" '%s' "$!"
}

# reap PID SECONDS: wait for PID at most SECONDS, then kill it; its status
# in $reaped
reap() {
    local p=$1 s=$2 i
    for i in $(seq $((s * 10))); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    reaped=0
    wait "$p" 2>/dev/null || reaped=$?
    # forget it: its pid may be reused by then, cleanup must not kill that
    local keep=() q
    for q in "${pids[@]}"; do [ "$q" = "$p" ] || keep+=("$q"); done
    pids=("${keep[@]}")
}

# check OK MESSAGE: record one check of the current step (OK is 0 or not)
check() {
    if [ "$1" -eq 0 ]; then
        echo "ok: $2" >>"$tmp/step.checks"
    else
        echo "FAIL: $2" >>"$tmp/step.checks"
        step_failed=1
    fi
}

# check_within MEASURED EXPECTED TOL MESSAGE: |MEASURED / EXPECTED - 1| <=
# TOL + F, F the share of the run the worker lost (lost_pct / 100): lost
# time delays departures, and can take at most that share of a run's time
# away. The line says what was allowed.
# Where the run's sender starved pacer (starved_pct, set by the rate checks
# of a backlogged run), that share is allowed too: a rate is only owed
# while there is something to send.
check_within() {
    local ok allow starved=""
    read -r ok allow < <(py "'%d %.2f' % (0 if abs($1 / $2 - 1) <= $3 + ($lost_pct + $starved_pct) / 100 else 1, $3 * 100 + $lost_pct + $starved_pct)")
    [ "$(py "1 if $starved_pct > 0 else 0")" = 0 ] ||
        starved=" + the sender's gaps $starved_pct % (an ideal shaper fed the same frames idles that long)"
    check "$ok" "$4 [allowed $allow %: $(py "'%g' % ($3 * 100)") % + the worker's lost CPU $lost_pct %$starved]"
}

# burst_allow: bytes above the rate the p90 of 1 ms windows may hold: one
# frame (the frame straddling a window's end) plus the catch-up of the
# lost CPU time. A stall of s delays what was due in it to its end, a
# burst of rate x s; stalls taking F of the time reach the p90 of windows
# only if they end in more than a tenth of them, so s <= 10 x F x 1 ms:
# 10 x F x 1 ms at the rate at most.
burst_allow() {
    py "int(round($frame + 10 * $lost_pct / 100 * 1e-3 * $rate_bps / 8))"
}

# step NAME FN: run one measurement (FN, which starts and stops pacer once)
# and print its checks; any failed check fails the run. pacer_stop
# measures the share of the run the worker lost (lost_pct), which the
# checks after it allow for (check_within, burst_allow).
step() {
    : >"$tmp/step.checks"
    step_failed=0
    lost_pct=0
    starved_pct=0
    "$2"
    cat "$tmp/step.checks" >&2
    [ "$step_failed" -eq 0 ] || failed=1
}

# py EXPR...: print a Python expression's value (math, json available)
py() { python3 -c "import json, math, sys; print($1)" "${@:2}"; }

# ------------------------------------------------------------------ bed
log "namespaces $ns_a $ns_b $ns_p"
ip netns add "$ns_a"
ip netns add "$ns_b"
ip netns add "$ns_p"
ip link add wa0 netns "$ns_a" type veth peer name pa0 netns "$ns_p"
ip link add wb0 netns "$ns_b" type veth peer name pb0 netns "$ns_p"
ip link add ka0 netns "$ns_a" type veth peer name kb0 netns "$ns_b"
for ns in "$ns_a" "$ns_b" "$ns_p"; do
    # IPv6 off: the kernel sends nothing of its own through the shapers
    ip netns exec "$ns" sysctl -q -w net.ipv6.conf.all.disable_ipv6=1 \
        net.ipv6.conf.default.disable_ipv6=1 >/dev/null
    ip -n "$ns" link set lo up
done
ip -n "$ns_a" addr add 198.18.0.1/24 dev wa0
ip -n "$ns_b" addr add 198.18.0.2/24 dev wb0
ip -n "$ns_a" addr add 198.18.1.1/24 dev ka0
ip -n "$ns_b" addr add 198.18.1.2/24 dev kb0
for d in "$ns_a wa0" "$ns_b wb0" "$ns_a ka0" "$ns_b kb0"; do
    set -- $d
    ip netns exec "$1" ethtool -K "$2" tx off >/dev/null
    ip netns exec "$1" sh -c "echo $rps_mask > /sys/class/net/$2/queues/rx-0/rps_cpus"
    ip -n "$1" link set "$2" up
done
ip -n "$ns_p" link set pa0 up
ip -n "$ns_p" link set pb0 up

mtu=$(ip netns exec "$ns_a" cat /sys/class/net/wa0/mtu)
tcp_ts=$(ip netns exec "$ns_a" sysctl -n net.ipv4.tcp_timestamps)
# TCP payload per frame: MTU - IP (20) - TCP (20) - timestamp option (12);
# frame = MTU + Ethernet header (14); no FCS, as every shaper counts it
frame=$((mtu + 14))
mss=$((mtu - 40 - (tcp_ts != 0 ? 12 : 0)))
udp_len=$((mtu - 28))
share=$(py "$mss / $frame")
ideal_gap=$(py "int(round($frame * 8e9 / $rate_bps))")
# idle periods: the payload rate that gives one burst every onoff_ms
# iperf3's datagrams are full frames; its first, a 4-byte hello, is not
onoff_filter="udp and greater $frame"
onoff_args=(-u -l "$udp_len" -b "$((onoff_n * udp_len * 8 * 1000 / onoff_ms))/$onoff_n" -t "$udp_s")
log "MTU $mtu: TCP MSS $mss in $frame-byte frames (goodput share $share), UDP datagrams $udp_len bytes"

# --------------------------------------------------------------- helpers
# pacer_start NAME PACER-ARGS...: pacer in ns -p on pa0 (port 0) and pb0
# (port 1); each output line stamped with CLOCK_REALTIME (tcpdump's clock)
# in $tmp/NAME.out. Returns once the ports are up.
pacer_start() {
    local name=$1 i
    shift
    bg pacer_pid ip netns exec "$ns_p" timeout 120 "$pacer" -l "0,$worker" --no-huge -m 512 \
        --no-pci --no-shconf --no-telemetry --file-prefix="pcr-wire-$$-$name" \
        --log-level=lib.eal:warning \
        --vdev "net_af_packet0,iface=pa0,qpairs=1,framecnt=$afp_frames" \
        --vdev "net_af_packet1,iface=pb0,qpairs=1,framecnt=$afp_frames" -- \
        --wire-overhead 0 --mbufs 16384 --max-flows 4096 --horizon "$horizon_ms" \
        --stats-json "$tmp/$name.stats.json" "$@" \
        > >(while IFS= read -r l; do echo "$EPOCHREALTIME $l"; done >"$tmp/$name.out") \
        2>"$tmp/$name.err"
    pacer_name=$name
    for i in $(seq 200); do
        if grep -q "lcore $worker: rx" "$tmp/$name.out" 2>/dev/null; then
            cpu_mark
            return 0
        fi
        kill -0 "$pacer_pid" 2>/dev/null || break
        sleep 0.05
    done
    die "$name: pacer did not start: $(cat "$tmp/$name.err" "$tmp/$name.out" 2>/dev/null | tail -5)"
}

# worker_task: /proc path of pacer's worker thread (the EAL names it
# rte-worker-N here, lcore-worker-N in other builds)
worker_task() {
    local c t
    for c in $(ps -o pid= --ppid "$pacer_pid"); do
        for t in /proc/"$c"/task/*; do
            case $(cat "$t/comm" 2>/dev/null) in
            rte-worker-"$worker"|lcore-worker-"$worker") echo "$t"; return 0 ;;
            esac
        done
    done
    echo none
}

# cpu_mark: the worker's run delay (ns, schedstat) and its CPU's steal
# (ticks, /proc/stat) now, with the time
cpu_mark() {
    local t
    t=$(worker_task)
    [ "$t" != none ] || die "$pacer_name: no worker thread found for pacer (pid $pacer_pid)"
    mark_task=$t
    mark_t=$EPOCHREALTIME
    mark_wait=$(awk '{ print $2 }' "$t/schedstat" 2>/dev/null || echo 0)
    mark_steal=$(awk -v c="cpu$worker" '$1 == c { print $9 }' /proc/stat)
}

# cpu_lost: ms the worker waited for its CPU since cpu_mark; sets lost_ms
# and lost_pct (its share of the time since cpu_mark, in %)
cpu_lost() {
    local w st
    w=$(awk '{ print $2 }' "$mark_task/schedstat" 2>/dev/null || echo "$mark_wait")
    st=$(awk -v c="cpu$worker" '$1 == c { print $9 }' /proc/stat)
    mark_len=$(py "$EPOCHREALTIME - $mark_t")
    read -r lost_ms lost_pct < <(py "'%.1f %.2f' % ((($w - $mark_wait) / 1e6 + ($st - $mark_steal) * 1000 / $(getconf CLK_TCK)), (($w - $mark_wait) / 1e6 + ($st - $mark_steal) * 1000 / $(getconf CLK_TCK)) / ($mark_len * 10))")
}

# pacer_stop: SIGINT, drain, statistics in $tmp/NAME.stats.json
pacer_stop() {
    cpu_lost
    log "$pacer_name: pacer's worker lost its CPU for $lost_ms ms ($lost_pct % of the run)"
    kill -INT "$pacer_pid" 2>/dev/null || true
    reap "$pacer_pid" 15
    [ "$reaped" -eq 0 ] || die "$pacer_name: pacer exited $reaped: $(tail -5 "$tmp/$pacer_name.err")"
    [ -s "$tmp/$pacer_name.stats.json" ] || die "$pacer_name: no statistics"
    # the worker's own count of the time it was away from its loop
    # (passes over 1 ms: lcores[].stall_ns), which also sees what the
    # kernel does not count as run delay or steal: the VM's vCPU held by
    # its host (measured here: three 90-99 ms gaps on the wire in a 3 s
    # UDP run, departure error max 98.8 ms, with 2.6 % run delay), and
    # interrupt work on the worker's CPU. The larger share is the lost one.
    read -r stall_ms stall_pct < <(py "'%.1f %.2f' % (sum(l['stall_ns'] for l in json.load(open(sys.argv[1]))['lcores']) / 1e6, sum(l['stall_ns'] for l in json.load(open(sys.argv[1]))['lcores']) / 1e7 / ($mark_len))" "$tmp/$pacer_name.stats.json")
    log "$pacer_name: pacer's worker counted $stall_ms ms of stalls (passes over 1 ms: $stall_pct % of the run)"
    lost_pct=$(py "max($lost_pct, $stall_pct)")
}

# gap_excuse FILE.pcap T0 T1: the share (%) of [T0, T1) (CLOCK_REALTIME
# seconds) that gaps of over 1 ms between frames took, at most the stalls
# pacer's worker counted in the run (stall_ms): a stall's time is lost to
# the window it falls in, which a run's average share does not bound
gap_excuse() {
    python3 - "$top/tests/pacer" "$@" "$stall_ms" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from windows import read_pcap
t0, t1, stall = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
lo, hi = t0 * 1e9, t1 * 1e9
prev, gaps = None, 0
for t, _, _ in read_pcap(sys.argv[2]):
    if lo <= t < hi and prev is not None and t - max(prev, lo) > 1e6:
        gaps += t - max(prev, lo)
    prev = t
print("%.2f" % (min(gaps / 1e6, stall) / ((t1 - t0) * 1e3) * 100))
PY
}

# Capture times by the unslewed clock: capture_start takes a clock pair,
# capture_stop writes realtime_scale over the capture to $tmp/NAME.rtscale
# and stat() rescales the capture with it (tools/clock.sh). (window_rate,
# for the rate change, keeps REALTIME: its windows are placed by pacer's
# own REALTIME stamps.)
source "$here/clock.sh"

# capture_start NAME IFACE: tcpdump on host B's IFACE (frames arriving),
# nanosecond kernel timestamps, into $tmp/NAME.pcap
capture_start() {
    local name=$1 dev=$2 i
    cap_name=$name
    cap_pair=$(clock_pair)
    in_pid=
    if [ -n "${3:-}" ]; then
        # what reaches pacer's port 0 too (NAME.in.pcap): what an ideal
        # shaper would have had to send (starved)
        bg in_pid ip netns exec "$ns_p" timeout 120 taskset -c "$host_cpus" \
            tcpdump -i "$3" -Q in -s 96 -U -n --immediate-mode \
            --time-stamp-precision=nano -w "$tmp/$name.in.pcap" 2>"$tmp/$name.in.dump.err"
        for i in $(seq 100); do
            grep -q "listening on" "$tmp/$name.in.dump.err" && break
            sleep 0.05
        done
        grep -q "listening on" "$tmp/$name.in.dump.err" ||
            die "tcpdump did not start: $(cat "$tmp/$name.in.dump.err")"
    fi
    bg dump_pid ip netns exec "$ns_b" timeout 120 taskset -c "$host_cpus" \
        tcpdump -i "$dev" -Q in -s 96 -U -n --immediate-mode \
        --time-stamp-precision=nano -w "$tmp/$name.pcap" 2>"$tmp/$name.dump.err"
    for i in $(seq 100); do
        grep -q "listening on" "$tmp/$name.dump.err" && return 0
        sleep 0.05
    done
    die "tcpdump did not start: $(cat "$tmp/$name.dump.err")"
}

capture_stop() {
    sleep 0.2
    kill -INT "$dump_pid" 2>/dev/null || true
    reap "$dump_pid" 5
    if [ -n "$in_pid" ]; then
        kill -INT "$in_pid" 2>/dev/null || true
        reap "$in_pid" 5
    fi
    realtime_scale "$cap_pair" "$(clock_pair)" >"$tmp/$cap_name.rtscale"
    local ppm
    ppm=$(py "round((1 / $(cat "$tmp/$cap_name.rtscale") - 1) * 1e6)")
    if [ "$(py "1 if abs($ppm) > 50 else 0")" -eq 1 ]; then
        log "$cap_name: CLOCK_REALTIME ran $ppm ppm against CLOCK_MONOTONIC_RAW during the capture; its times rescaled"
    fi
}

# iperf NAME ADDR IPERF3-CLIENT-ARGS...: one iperf3 test from A to B's ADDR
# (server in B, one test), client's JSON in $tmp/NAME.iperf.json
iperf() {
    local name=$1 addr=$2 i srv
    shift 2
    rm -f "$tmp/$name.server.json"     # --logfile appends
    bg srv ip netns exec "$ns_b" timeout 60 iperf3 -s -1 -B "$addr" -A 0 \
        -J --logfile "$tmp/$name.server.json"
    for i in $(seq 100); do
        ip netns exec "$ns_b" ss -Hltn "sport = :5201" 2>/dev/null | grep -q . && break
        sleep 0.05
    done
    ip netns exec "$ns_a" timeout 60 iperf3 -c "$addr" -A 0 -J "$@" \
        >"$tmp/$name.iperf.json" 2>"$tmp/$name.iperf.err" ||
        die "$name: iperf3 failed: $(head -c 600 "$tmp/$name.iperf.json") $(cat "$tmp/$name.iperf.err")"
    reap "$srv" 10
}

# ping_bg NAME NS ADDR SECONDS: ping every 100 ms in the background
ping_bg() {
    bg ping_pid ip netns exec "$2" timeout $(($4 + 5)) taskset -c "$host_cpus" \
        ping -n -i 0.1 -w "$4" "$3" >"$tmp/$1.ping" 2>&1
}

# rtt FILE: "p50 max n" of the RTTs (ms) in a ping output
rtt() {
    python3 - "$1" <<'PY'
import re, sys
t = sorted(float(x) for x in re.findall(r"time=([0-9.]+) ms", open(sys.argv[1]).read()))
if not t:
    print("nan nan 0")
else:
    print("%.3f %.3f %d" % (t[(len(t) - 1) // 2], t[-1], len(t)))
PY
}

# stat NAME RATE_BPS [FILTER]: pacer-pcapstat over $tmp/NAME.pcap against
# RATE_BPS; with a tcpdump FILTER, over what it keeps (iperf3's data, see
# lport) in $tmp/NAME.data.pcap:
# the control connection's frames before and after the test would stretch
# the first-to-last time (by up to 0.1 s: -1.4 % measured), and the pings
# under load are 8 kbit/s, 0.008 % of the rate
stat() {
    local ideal rts f=$tmp/$1.pcap
    ideal=$(py "int(round($frame * 8e9 / $2))")
    if [ -n "${3:-}" ]; then
        f=$tmp/$1.data.pcap
        tcpdump --time-stamp-precision=nano -r "$tmp/$1.pcap" -w "$f" "$3" 2>/dev/null
    fi
    rts=$(cat "$tmp/$1.rtscale")
    "$pcapstat" --json "$f" --rate "$(py "'%.1fbit' % $2")" --time-scale "$rts" \
        --ideal-gap-ns "$ideal" --window 1000000 --window 100000 >"$tmp/$1.pcapstat.json"
    bursts "$f" "$2" "$rts" >"$tmp/$1.bursts"
}

# lport NAME: the source port of iperf3's (first) data connection in run NAME
lport() { py "json.load(open(sys.argv[1]))['start']['connected'][0]['local_port']" "$tmp/$1.iperf.json"; }

# bursts FILE.pcap RATE_BPS SCALE: "p99_1ms p99_100us p90_1ms p90_100us" (times
# since the first frame times SCALE, as pacer-pcapstat --time-scale) -- percentiles over
# windows starting at each frame of the bytes in the window above RATE x
# window. The maximum (pcapstat's figure) is the worst moment of the run,
# on a shared 2-vCPU machine the longest time pacer's worker lost its CPU
# (what was due meanwhile leaves together when it is back); the percentile
# is what the shaper does the rest of the time.
bursts() {
    python3 - "$1" "$2" "$3" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
rate, rts = float(sys.argv[2]), float(sys.argv[3])
e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
scale = 1 if struct.unpack(e + "I", b[:4])[0] == 0xa1b23c4d else 1000
off, ts, ln = 24, [], []
while off + 16 <= len(b):
    s, frac, incl, orig = struct.unpack(e + "IIII", b[off:off + 16])
    ts.append(s * 10**9 + frac * scale)
    ln.append(orig)
    off += 16 + incl
ts = [ts[0] + (t - ts[0]) * rts for t in ts]
out = []
for w in (1000000, 100000):
    j, acc, v = 0, 0, []
    for i in range(len(ts)):
        while j < len(ts) and ts[j] < ts[i] + w:
            acc += ln[j]
            j += 1
        v.append(acc - rate * w / 8e9)
        acc -= ln[i]
    v.sort()
    out.append(v)
# p99 1 ms, p99 100 us, p90 1 ms, p90 100 us
print(" ".join("%d" % round(v[int(q * (len(v) - 1))]) if v else "0"
               for q in (0.99, 0.90) for v in out))
PY
}

# starved OUT.pcap IN.pcap RATE_BPS [T0 T1]: the share (%) of [T0, T1)
# (CLOCK_REALTIME seconds; default: OUT's first to last frame) in which
# pacer had nothing to send: every frame that had reached its port 0
# (IN.pcap, captured in pacer's namespace) and that it sent (OUT.pcap:
# those it dropped are not counted) had left, the last one's frame time
# (at RATE_BPS) after it had passed, and the next had not arrived. A
# backlogged sender keeps this 0 (under a misconfigured rate more so: the
# queue only grows); measured here: host A's vCPU held for 95-97 ms four
# times in a 4 s TCP run (nothing reached pacer; pacer's departure error
# max 0.46 ms), which took 9.9 % from the on-wire rate. A rate under
# backlog is owed only while there is something to send: the rate checks
# of backlogged runs allow this share beside the worker's lost CPU.
starved() {
    python3 - "$top/tests/pacer" "$@" <<'PY'
import sys
sys.path.insert(0, sys.argv.pop(1))
from windows import read_pcap
def frames(path):
    out = []
    for t, orig, d in read_pcap(path):
        if len(d) < 34 or d[12:14] != b"\x08\x00":
            continue
        ihl = (d[14] & 15) * 4
        # the IP id, addresses and the L4 header's first 8 bytes (ports,
        # TCP's sequence): one frame, on either side of pacer
        out.append((t, orig, d[18:20] + d[26:34] + d[14 + ihl:14 + ihl + 8]))
    return out
out = frames(sys.argv[1])
arr = {}
for t, orig, key in frames(sys.argv[2]):
    arr.setdefault(key, t)
bps = float(sys.argv[3])
if len(sys.argv) > 5:
    lo, hi = float(sys.argv[4]) * 1e9, float(sys.argv[5]) * 1e9
else:
    lo, hi = out[0][0], out[-1][0]
# arrivals (+1) and departures (-1) of the frames pacer sent, in time
# order (an arrival first at a tie)
ev = sorted([(arr[k], 0, 1, 0) for _, _, k in out if k in arr] +
            [(t, 1, -1, o) for t, o, k in out if k in arr])
held, idle, free = 0, 0.0, None
for t, _, d, orig in ev:
    if d > 0 and held == 0 and free is not None and t > free:
        idle += max(0.0, min(t, hi) - max(free, lo))
    held += d
    if d < 0 and held == 0:
        free = t + orig * 8e9 / bps
print("%.2f" % (idle / (hi - lo) * 100))
PY
}

# first_frame FILE.pcap: the first frame's time (CLOCK_REALTIME seconds)
first_frame() {
    python3 - "$top/tests/pacer" "$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
from windows import read_pcap
print("%.6f" % (read_pcap(sys.argv[2])[0][0] / 1e9))
PY
}

# window_rate FILE.pcap T0 T1: frame bit/s of what arrived in [T0, T1)
# (CLOCK_REALTIME seconds)
window_rate() {
    python3 - "$@" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
t0, t1 = float(sys.argv[2]), float(sys.argv[3])
e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
scale = 1 if struct.unpack(e + "I", b[:4])[0] == 0xa1b23c4d else 1000
off, n = 24, 0
lo, hi = int(t0 * 1e9), int(t1 * 1e9)
while off + 16 <= len(b):
    s, frac, incl, orig = struct.unpack(e + "IIII", b[off:off + 16])
    t = s * 10**9 + frac * scale
    if lo <= t < hi:
        n += orig
    off += 16 + incl
print("%.1f" % (n * 8 / (t1 - t0)))
PY
}

# ------------------------------------------------------------ pacer runs
if [ -n "$pacer_rate" ]; then
    log "MISCONFIGURED on purpose: pacer at $pacer_rate, checks expect $rate_tc"
fi
run_rate=${pacer_rate:-$rate_tc}

# --fct: web-search transactions over TCP (see the head of this file)
fct_run() {
    local srv cl i
    printf '[class default]\norder = %s\n' "$fct_order" >"$tmp/fct.cfg"
    log "pacer: --rate $rate_tc, class default in order $fct_order; web-search transactions over TCP at $fct_load of the rate for $fct_secs s (seed $fct_seed)"
    pacer_start fct --rate "$rate_tc" --config "$tmp/fct.cfg"
    bg srv ip netns exec "$ns_b" timeout $((${fct_secs%.*} + 180)) taskset -c "$host_cpus" \
        python3 "$top/tests/pacer/txn_tcp.py" server 198.18.0.2 5301 \
        --out "$tmp/fct.server.json" --ready "$tmp/fct.ready"
    for i in $(seq 100); do [ -s "$tmp/fct.ready" ] && break; sleep 0.05; done
    [ -s "$tmp/fct.ready" ] || die "fct: the transaction server did not start"
    ip netns exec "$ns_a" timeout $((${fct_secs%.*} + 120)) taskset -c "$host_cpus" \
        python3 "$top/tests/pacer/txn_tcp.py" client 198.18.0.2 5301 --load "$fct_load" \
        --rate-mbps "$((rate_bps / 1000000))" --secs "$fct_secs" --seed "$fct_seed" \
        --mss "$mss" --frame "$frame" --out "$tmp/fct.client.json" ||
        die "fct: the transaction client failed"
    reap "$srv" 10
    [ "$reaped" -eq 0 ] || die "fct: the transaction server exited $reaped"
    pacer_stop
    cl=0
    python3 "$top/tests/pacer/fct_open.py" --tcp "$tmp/fct.server.json" \
        --sender "$tmp/fct.client.json" --json "$tmp/fct.result.json" \
        --title "fct websearch tcp $fct_order" >&2 || cl=$?
    [ -s "$tmp/fct.result.json" ] || exit 1
    # pacer's drops on the data path (B's port, 1), which TCP retransmits
    python3 - "$tmp/fct.result.json" "$tmp/fct.stats.json" "$lost_pct" "$tmp/fct.client.json" >"$fct_out" <<'PY'
import json, sys
r, st = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
p = next(p for p in st["ports"] if p["port"] == 1)
r["pacer_drops_port1"] = p["dropped_total"]
r["pacer_dropped_port1"] = {k: v for k, v in p.items() if k.startswith("drop_") and v}
r["pacer_tx_port1"] = p["tx_packets"]
r["worker_lost_pct"] = float(sys.argv[3])
r["connections"] = json.load(open(sys.argv[4]))["conns"]
print(json.dumps(r))
PY
    log "fct: $(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%d transactions over %d connections, pacer dropped %d frames on port 1 (tx %s), worker lost %.2f %% of its CPU" % (r["flows"], r["connections"], r["pacer_drops_port1"], r["pacer_tx_port1"], r["worker_lost_pct"]))' "$fct_out")"
    return "$cl"
}
if [ -n "$fct_order" ]; then
    rc=0
    fct_run || rc=$?
    exit "$rc"
fi

# --queue: the standing queue of N TCP flows behind each shaper (see the
# head of this file)

# queue_hosts_set cubic-ecn|cubic|bbr|bbr-ecn: both hosts' ECN; the
# congestion control goes to iperf3 (-C), in $q_cc
queue_hosts_set() {
    local ecn=0 ns
    case $1 in *-ecn) ecn=1 ;; esac
    q_cc=${1%-ecn}
    for ns in "$ns_a" "$ns_b"; do
        ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_ecn=$ecn >/dev/null
    done
}

# queue_load NAME ADDR N: N TCP flows to ADDR for queue_secs with a ping
# every 20 ms beside them; the idle RTT first (20 pings on the same path)
queue_load() {
    local name=$1 addr=$2 n=$3
    ip netns exec "$ns_a" timeout 10 ping -n -c 20 -i 0.02 -W 2 "$addr" >"$tmp/$name.idle" 2>&1 || true
    bg ping_pid ip netns exec "$ns_a" timeout $((queue_secs + 10)) taskset -c "$host_cpus" \
        ping -n -i 0.02 -w "$((queue_secs + 1))" "$addr" >"$tmp/$name.ping" 2>&1
    iperf "$name" "$addr" -t "$queue_secs" -P "$n" -C "$q_cc"
    reap "$ping_pid" $((queue_secs + 15))
}

# queue_result NAME SHAPER CONFIG HOSTS RATE_MBIT N: one JSON line of the
# run's figures and the issue's goals into $queue_out
queue_result() {
    python3 - "$tmp" "$@" "$mss" "$frame" "$lost_pct" >>"$queue_out" <<'PY'
import json, os, re, sys
tmp, name, shaper, conf, hosts, rate, n, mss, frame, lost = sys.argv[1:11]
rate, n, mss, frame = float(rate) * 1e6, int(n), int(mss), int(frame)
def pings(path):
    t = sorted(float(x) for x in re.findall(r"time=([0-9.]+) ms", open(path).read()))
    q = lambda p: t[min(len(t) - 1, int(p * len(t)))] if t else float("nan")
    return t, q
idle, qi = pings("%s/%s.idle" % (tmp, name))
load, ql = pings("%s/%s.ping" % (tmp, name))
ip = json.load(open("%s/%s.iperf.json" % (tmp, name)))["end"]
srtt = [s["sender"].get("mean_rtt", 0) / 1e3 for s in ip["streams"]]
good = ip["sum_received"]["bits_per_second"]
share = rate * mss / frame
sent = ip["sum_sent"]["bytes"]
retr = ip["sum_sent"].get("retransmits", 0)
segs = max(1, sent // mss)
idle_rtt = qi(0.5)
r = dict(shaper=shaper, config=conf, hosts=hosts, rate_mbit=rate / 1e6, flows=n,
         idle_rtt_ms=round(idle_rtt, 3),
         srtt_mean_ms=round(sum(srtt) / len(srtt), 2), srtt_max_flow_ms=round(max(srtt), 2),
         ping_p50_ms=round(ql(0.5), 2), ping_p99_ms=round(ql(0.99), 2), pings=len(load),
         goodput_mbit=round(good / 1e6, 2), goodput_pct=round(good / share * 100, 2),
         retransmits=retr, segments=segs, retrans_pct=round(retr / segs * 100, 4))
st = "%s/%s.stats.json" % (tmp, name)
if os.path.exists(st):
    p = next(p for p in json.load(open(st))["ports"] if p["port"] == 1)
    # the share of the run pacer's worker lost its CPU (pacer_stop)
    r["worker_lost_pct"] = float(lost)
    r.update(aqm_marked=p.get("aqm_marked", 0), drop_aqm=p.get("drop_aqm", 0),
             dropped=p["dropped_total"],
             queue_delay_ms={k: round(v / 1e6, 2) for k, v in p.get("queue_delay_ns", {}).items()
                             if k in ("p50", "p99", "max")})
# the issue's goals
lim = 10 if n <= 4 else 20
r["goal_srtt"] = r["srtt_max_flow_ms"] <= idle_rtt + lim
r["goal_ping"] = r["ping_p99_ms"] <= idle_rtt + 5
r["goal_goodput"] = r["goodput_pct"] >= 95
r["goal_retrans"] = r["retrans_pct"] < 0.1 if hosts.endswith("-ecn") else None
print(json.dumps(r))
PY
}

queue_table() {
    python3 - "$queue_out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
yn = lambda v: "-" if v is None else ("met" if v else "MISSED")
print("%-10s %-22s %-9s %5s %5s %6s %8s %8s %8s %8s %7s %8s %9s %9s  goals sRTT/ping/goodput/retrans" % (
    "shaper", "config", "hosts", "mbit", "flows", "idle", "sRTT", "max flow", "ping p50", "ping p99",
    "goodput", "retrans", "marked", "drop aqm"))
for r in rows:
    print("%-10s %-22s %-9s %5d %5d %6.2f %8.2f %8.2f %8.2f %8.2f %6.1f%% %7.3f%% %9s %9s  %s/%s/%s/%s" % (
        r["shaper"], r["config"], r["hosts"], r["rate_mbit"], r["flows"], r["idle_rtt_ms"],
        r["srtt_mean_ms"], r["srtt_max_flow_ms"], r["ping_p50_ms"], r["ping_p99_ms"],
        r["goodput_pct"], r["retrans_pct"], r.get("aqm_marked", "-"), r.get("drop_aqm", "-"),
        yn(r["goal_srtt"]), yn(r["goal_ping"]), yn(r["goal_goodput"]), yn(r["goal_retrans"])))
PY
}

queue_bed() {
    local rate n h sh name conf aqm kq=""
    : >"$queue_out"
    # fq_codel and cake where this kernel has them (tried on A's loopback)
    for q in fq_codel cake; do
        if tc -n "$ns_a" qdisc add dev lo root $q 2>/dev/null; then
            tc -n "$ns_a" qdisc del dev lo root
            kq="$kq $q"
        fi
    done
    log "queue: kernel shapers: tbf, htb${kq:+,$kq} (this kernel has${kq:- no fq_codel or cake})"
    for rate in $queue_rates; do
        for n in $queue_flows; do
            for sh in $queue_shapers $kq; do
                for h in $queue_hosts; do
                    # drop-tail shapers mark nothing: cubic without ECN
                    # once (and BBR through pacer --aqm off: today's pacer)
                    case $sh in
                    pacer) ;;
                    pacer-off) [ "${h%-ecn}" = "$h" ] || continue ;;
                    *) [ "$h" = cubic ] || continue ;;
                    esac
                    queue_hosts_set "$h"
                    name=q-$sh-$h-$rate-$n
                    lost_pct=0
                    log "queue: $sh, $n $q_cc flows ($h) at $rate mbit for $queue_secs s"
                    case $sh in
                    pacer|pacer-off)
                        aqm=codel conf="defaults (codel 5/100 ms)"
                        [ $sh = pacer ] || { aqm=off; conf="--aqm off"; }
                        pacer_start "$name" --rate "${rate}mbit" --aqm "$aqm"
                        queue_load "$name" 198.18.0.2 "$n"
                        pacer_stop
                        ;;
                    tbf)
                        conf="burst 15k latency 100ms"
                        tc -n "$ns_a" qdisc add dev ka0 root tbf rate "${rate}mbit" burst 15k latency 100ms ;;
                    htb)
                        conf="one class, pfifo 1000"
                        tc -n "$ns_a" qdisc add dev ka0 root handle 1: htb default 10
                        tc -n "$ns_a" class add dev ka0 parent 1: classid 1:10 htb rate "${rate}mbit" ceil "${rate}mbit" quantum "$frame"
                        tc -n "$ns_a" qdisc add dev ka0 parent 1:10 handle 10: pfifo limit 1000 ;;
                    fq_codel)
                        conf="htb + fq_codel leaf"
                        tc -n "$ns_a" qdisc add dev ka0 root handle 1: htb default 10
                        tc -n "$ns_a" class add dev ka0 parent 1: classid 1:10 htb rate "${rate}mbit" ceil "${rate}mbit" quantum "$frame"
                        tc -n "$ns_a" qdisc add dev ka0 parent 1:10 handle 10: fq_codel ;;
                    cake)
                        conf="bandwidth ${rate}mbit"
                        tc -n "$ns_a" qdisc add dev ka0 root cake bandwidth "${rate}mbit" ;;
                    esac
                    case $sh in
                    pacer|pacer-off) ;;
                    *)
                        queue_load "$name" 198.18.1.2 "$n"
                        tc -n "$ns_a" -s qdisc show dev ka0 >"$tmp/$name.tc"
                        tc -n "$ns_a" qdisc del dev ka0 root ;;
                    esac
                    queue_result "$name" "$sh" "$conf" "$h" "$rate" "$n"
                    queue_table | tail -1 >&2
                done
            done
        done
    done
    queue_table
}
if [ -n "$queue_out" ]; then
    queue_bed
    exit 0
fi

# 1. ping both ways, then one TCP flow at 100 mbit with ping under load
step_tcp1() {
    log "pacer: --rate $run_rate, ping both ways, one TCP flow for $tcp_s s"
    pacer_start tcp1 --rate "$run_rate"
    ip netns exec "$ns_a" timeout 10 ping -n -c 5 -i 0.2 -W 2 198.18.0.2 >"$tmp/ping_ab" 2>&1 || true
    ip netns exec "$ns_b" timeout 10 ping -n -c 5 -i 0.2 -W 2 198.18.0.1 >"$tmp/ping_ba" 2>&1 || true
    read -r ab50 abmax abn < <(rtt "$tmp/ping_ab")
    read -r ba50 bamax ban < <(rtt "$tmp/ping_ba")
    # the first echo also waits for ARP through pacer; all five must come back
    check $([ "$abn" -eq 5 ] && [ "$ban" -eq 5 ]; echo $?) \
        "ping through pacer: A->B $abn/5 (RTT p50 $ab50 ms, max $abmax), B->A $ban/5 (p50 $ba50 ms, max $bamax)"
    capture_start pacer wb0 pa0
    ping_bg pacer_load "$ns_a" 198.18.0.2 "$tcp_s"
    iperf tcp1 198.18.0.2 -t "$tcp_s"
    reap "$ping_pid" 10
    capture_stop
    pacer_stop
    cp "$tmp/tcp1.iperf.json" "$tmp/pacer.iperf.json"
    stat pacer "$rate_bps" "tcp src port $(lport pacer)"
    read -r b1ms b100us b1ms90 b100us90 <"$tmp/pacer.bursts"
    # paced frames in a 1 ms window: rate x 1 ms bytes plus at most the one
    # frame that straddles its end, so at most one frame above the rate.
    # Judged at the 90th percentile of windows: the worker losing a few %
    # of its CPU in millisecond pieces (measured: 3-7 % here on a shared
    # machine) puts a catch-up burst into about 1 % of the windows, so p99
    # is the machine's figure (reported in the table), p90 pacer's, with
    # the catch-up of the lost time allowed (burst_allow)
    ba=$(burst_allow)
    check $(py "0 if $b1ms90 <= $ba else 1") \
        "one TCP flow through pacer: burst above the rate in 1 ms windows p90 $b1ms90 bytes (p99 $b1ms), 100 us p90 $b100us90 (p99 $b100us) [allowed $ba bytes: one $frame-byte frame + 10 x the worker's lost CPU $lost_pct % of 1 ms at $rate_tc]"

    starved_pct=$(starved "$tmp/pacer.pcap" "$tmp/pacer.in.pcap" "$rate_bps")
    # TCP goodput: iperf3's receiver figure against the payload share of the
    # rate; 3 % (the issue's bound) covers slow start and the last window
    read -r good exp_good < <(py "json.load(open(sys.argv[1]))['end']['sum_received']['bits_per_second'], $rate_bps * $share" "$tmp/tcp1.iperf.json" | tr -d '(),')
    check_within "$good" "$exp_good" 0.03 \
        "one TCP flow through pacer: goodput $(py "'%.2f' % ($good / 1e6)") mbit/s, payload share of $rate_tc $(py "'%.2f' % ($exp_good / 1e6)") (within 3 %: $(py "'%+.2f' % (($good / $exp_good - 1) * 100)") %)"
    # on-wire rate, first to last frame by the kernel's clock on host B: the
    # queue (TCP keeps it full) absorbs the worker's lateness, since departures
    # are fixed at arrival; 1 %
    wire=$(py "json.load(open(sys.argv[1]))['rate_bps']" "$tmp/pacer.pcapstat.json")
    check_within "$wire" "$rate_bps" 0.01 \
        "one TCP flow through pacer: on-wire $(py "'%.3f' % ($wire / 1e6)") mbit/s (frames) against $rate_tc (within 1 %: $(py "'%+.3f' % (($wire / $rate_bps - 1) * 100)") %)"
    starved_pct=0
    read -r lp50 lpmax lpn < <(rtt "$tmp/pacer_load.ping")
    idle_max=$(py "max($abmax, $bamax)")
    # a packet is never queued beyond the horizon (it is dropped instead), and
    # the return path is idle: RTT under load <= horizon + idle RTT, in the
    # median (the maximum also holds the worker's CPU losses)
    check $(py "0 if $lpn > 0 and $lp50 <= $horizon_ms + $idle_max else 1") \
        "ping under one paced TCP flow: RTT p50 $lp50 ms, max $lpmax ms ($lpn replies) with --horizon $horizon_ms ms (drop), queue = horizon x rate = $(py "$rate_bps * $horizon_ms // 8000") bytes (p50 <= horizon + idle RTT $idle_max ms)"
}
step tcp1 step_tcp1

# 2. UDP offered at twice the rate (frame bits)
step_udp() {
    udp_b=$(py "int(2 * $rate_bps * $udp_len / $frame)")
    log "pacer: --rate $run_rate, UDP offered at ${udp_b} bit/s of payload (2x in frame bits) for $udp_s s"
    pacer_start udp --rate "$run_rate"
    ip netns exec "$ns_b" cat /proc/net/snmp >"$tmp/udp.snmp_b0"
    capture_start udp wb0 pa0
    iperf udp 198.18.0.2 -u -b "$udp_b" -l "$udp_len" -t "$udp_s"
    capture_stop
    pacer_stop
    stat udp "$rate_bps" udp
    starved_pct=$(starved "$tmp/udp.pcap" "$tmp/udp.in.pcap" "$rate_bps")
    ip netns exec "$ns_b" cat /proc/net/snmp >"$tmp/udp.snmp_b"
    wire=$(py "json.load(open(sys.argv[1]))['rate_bps']" "$tmp/udp.pcapstat.json")
    # a full queue the whole run: 1 %, first to last frame
    check_within "$wire" "$rate_bps" 0.01 \
        "UDP at 2x through pacer: delivered $(py "'%.3f' % ($wire / 1e6)") mbit/s against $rate_tc (within 1 %: $(py "'%+.3f' % (($wire / $rate_bps - 1) * 100)") %)"
    starved_pct=0
    python3 - "$tmp/udp.iperf.json" "$tmp/udp.server.json" "$tmp/udp.stats.json" "$tmp/udp.pcapstat.json" "$tmp/udp.snmp_b0" "$tmp/udp.snmp_b" >"$tmp/udp.rec" <<'PY'
import json, sys
cl = json.load(open(sys.argv[1]))["end"]["sum"]
sv = json.load(open(sys.argv[2]))["end"]["sum"]
st = json.load(open(sys.argv[3]))
cap = json.load(open(sys.argv[4]))
def udp(path):
    rows = [l.split() for l in open(path) if l.startswith("Udp:")]
    return dict(zip(rows[0][1:], map(int, rows[1][1:])))
u0, u1 = udp(sys.argv[5]), udp(sys.argv[6])
rcvbuf = u1["RcvbufErrors"] - u0["RcvbufErrors"]
p0 = next(p for p in st["ports"] if p["port"] == 0)
p1 = next(p for p in st["ports"] if p["port"] == 1)
reasons = ",".join("%s=%d" % kv for kv in p1.items() if kv[0].startswith("drop_") and kv[1])
wire = sum(f["packets"] for f in cap["flows"] if f["key"].startswith("udp "))
print(cl["packets"], sv["packets"], sv["lost_packets"], wire, p1["dropped_total"],
      reasons or "none", p0["rx_packets"] - cl["packets"], rcvbuf)
PY
    read -r u_sent u_acct u_lost u_wire p_drop p_reasons p_other b_rcvbuf <"$tmp/udp.rec"
    # Conservation, exact: what iperf3 sent and did not arrive on host B's wire
    # was dropped by pacer (port 1, the egress of A->B). pacer may also drop a
    # few of the other frames it got from A (iperf3's TCP control connection,
    # ARP; retransmitted, never lost to iperf3): at most p_other of them.
    check $(py "0 if $p_drop > 0 and 0 <= $p_drop - ($u_sent - $u_wire) <= $p_other else 1") \
        "UDP at 2x: iperf3 sent $u_sent datagrams, $u_wire reached host B's wire; pacer dropped $p_drop on port 1 ($p_reasons): $((p_drop - (u_sent - u_wire))) beyond the datagrams (<= $p_other frames of other traffic)"
    # iperf3's lost figure counts the gaps among the first u_acct sequence
    # numbers it saw (it stops counting when the test ends, with the last
    # datagrams still in pacer's queue), and it also counts what host B's
    # socket dropped (RcvbufErrors: iperf3 shares CPU 0 with the rest):
    # pacer's drops + B's are at least that and at most that plus what was
    # sent after the last counted datagram
    check $(py "0 if $u_lost <= $p_drop + $b_rcvbuf <= $u_lost + ($u_sent - $u_acct) + $p_other else 1") \
        "UDP at 2x: iperf3 lost $u_lost of the first $u_acct it counted ($u_sent sent); pacer dropped $p_drop, host B's socket $b_rcvbuf: $u_lost <= $((p_drop + b_rcvbuf)) <= $u_lost + $((u_sent - u_acct)) + $p_other"
}
step udp step_udp

# 3. four TCP flows, per-flow 20 mbit under a 60 mbit aggregate
step_tcp4() {
    log "pacer: --rate 60mbit --flow-rate 20mbit, four TCP flows for $tcp_s s"
    pacer_start tcp4 --rate 60mbit --flow-rate 20mbit
    capture_start tcp4 wb0 pa0
    iperf tcp4 198.18.0.2 -t "$tcp_s" -P 4
    capture_stop
    pacer_stop
    starved_pct=$(starved "$tmp/tcp4.pcap" "$tmp/tcp4.in.pcap" "$agg4_bps")
    python3 - "$tmp/tcp4.iperf.json" "$agg4_bps" "$flow4_bps" "$share" >"$tmp/tcp4.rec" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["end"]
agg, fr, share = float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
flows = [s["receiver"]["bits_per_second"] for s in d["streams"]]
fair = min(fr, agg / len(flows)) * share
tot = d["sum_received"]["bits_per_second"]
print("%.0f %.0f %.0f %s" % (tot, agg * share, fair, ",".join("%.0f" % f for f in flows)))
PY
    read -r t4 t4exp fair flows4 <"$tmp/tcp4.rec"
    check_within "$t4" "$t4exp" 0.03 \
        "four TCP flows: aggregate goodput $(py "'%.2f' % ($t4 / 1e6)") mbit/s, payload share of 60 mbit $(py "'%.2f' % ($t4exp / 1e6)") (within 3 %: $(py "'%+.2f' % (($t4 / $t4exp - 1) * 100)") %)"
    check $(py "0 if all(abs(float(f) / $fair - 1) <= 0.10 + $lost_pct / 100 for f in sys.argv[1].split(',')) else 1" "$flows4") \
        "four TCP flows: each $(py "' '.join('%.2f' % (float(f) / 1e6) for f in sys.argv[1].split(','))" "$flows4") mbit/s, fair share min(20, 60/4) mbit = $(py "'%.2f' % ($fair / 1e6)") of goodput (each within 10 %) [allowed $(py "'%.2f' % (10 + $lost_pct)") %: 10 % + the worker's lost CPU $lost_pct %]"
}
step tcp4 step_tcp4

# 4. a rate change mid-run: 100 -> 50 mbit through the CLI script
step_change() {
    printf 'start\nsleep 3000\nset port 1 rate 50mbit\n' >"$tmp/change.cli"
    log "pacer: --rate $rate_tc, 'set port 1 rate 50mbit' 3 s after pacer's start, in a $change_s s TCP flow"
    pacer_start change --rate "$rate_tc" --cmdline-file "$tmp/change.cli"
    capture_start change wb0 pa0
    iperf change 198.18.0.2 -t "$change_s"
    capture_stop
    pacer_stop
    t_cmd=$(awk '/pacer> set port 1 rate/ { print $1; exit }' "$tmp/change.out")
    [ -n "$t_cmd" ] || die "change: the set port line was not echoed: $(cat "$tmp/change.out")"
    # the second before the command, from the flow's first frame (plus
    # 0.1 s: TCP's start) if that is later: the flow starts once pacer,
    # tcpdump and iperf3 have (1.1 s after pacer's start on a slow
    # machine, and a window from 1 s before then read 90 mbit/s)
    t_before=$(py "max($t_cmd - 1, $(first_frame "$tmp/change.pcap") + 0.1)")
    [ "$(py "1 if $t_cmd - $t_before >= 0.5 else 0")" = 1 ] ||
        die "change: the TCP flow started $(py "'%.2f' % ($t_cmd - $t_before + 0.1)") s before 'set port' (0.6 s at least)"
    before=$(window_rate "$tmp/change.pcap" "$t_before" "$t_cmd")
    after=$(window_rate "$tmp/change.pcap" "$(py "$t_cmd + 1")" "$(py "$t_cmd + 2")")
    # lateness of frames into a window is the worker's jitter (tens of us,
    # now and then ms): 1 s windows, 3 % (TCP's own bound) each; a stall
    # of the worker inside a window takes its time from that window
    # (gap_excuse), whatever the run's average
    local run_lost=$lost_pct
    lost_pct=$(py "max($run_lost, $(gap_excuse "$tmp/change.pcap" "$t_before" "$t_cmd"))")
    starved_pct=$(starved "$tmp/change.pcap" "$tmp/change.in.pcap" "$rate_bps" "$t_before" "$t_cmd")
    check_within "$before" "$rate_bps" 0.03 \
        "rate change: on-wire $(py "'%.2f' % ($before / 1e6)") mbit/s in the $(py "'%.2f' % ($t_cmd - $t_before)") s before 'set port 1 rate 50mbit' (100 mbit, within 3 %)"
    lost_pct=$(py "max($run_lost, $(gap_excuse "$tmp/change.pcap" "$(py "$t_cmd + 1")" "$(py "$t_cmd + 2")"))")
    # at the new rate from the start: before the change the real rate was
    # higher, so this ideal only builds a backlog there (never more lenient)
    starved_pct=$(starved "$tmp/change.pcap" "$tmp/change.in.pcap" "$low_bps" "$(py "$t_cmd + 1")" "$(py "$t_cmd + 2")")
    check_within "$after" "$low_bps" 0.03 \
        "rate change: on-wire $(py "'%.2f' % ($after / 1e6)") mbit/s from 1 s to 2 s after it (50 mbit, within 3 %): followed within 1 s"
}
step change step_change

# 5. idle periods: bursts of onoff_n datagrams back to back (iperf3's burst
# mode: -b RATE/N) every onoff_ms, a quarter of the rate on average. Each
# burst drains in onoff_n frame times at the rate and the shaper then
# idles: what it does with the idle time (a token bucket banks it and
# spends it at the start of the next burst) is what this run shows.
step_onoff() {
    log "pacer: --rate $rate_tc (--burst default, one frame), UDP bursts of $onoff_n datagrams every $onoff_ms ms for $udp_s s"
    pacer_start onoff --rate "$rate_tc"
    capture_start onoff wb0
    iperf onoff 198.18.0.2 "${onoff_args[@]}"
    capture_stop
    pacer_stop
    stat onoff "$rate_bps" "$onoff_filter"
    read -r o_sent o_wire o_drop o_gap50 < <(py "json.load(open(sys.argv[1]))['end']['sum']['packets'], sum(f['packets'] for f in json.load(open(sys.argv[2]))['flows'] if f['key'].startswith('udp ')), next(p for p in json.load(open(sys.argv[3]))['ports'] if p['port'] == 1)['dropped_total'], json.load(open(sys.argv[2]))['gap_ns']['p50']" "$tmp/onoff.iperf.json" "$tmp/onoff.pcapstat.json" "$tmp/onoff.stats.json" | tr -d '(),')
    # a burst is 2 % of the horizon's queue: nothing may be lost
    check $([ "$o_sent" -eq "$o_wire" ] && [ "$o_drop" -eq 0 ]; echo $?) \
        "idle periods through pacer: iperf3 sent $o_sent datagrams, $o_wire reached host B's wire, pacer dropped $o_drop (all delivered, none dropped)"
    # onoff_n - 1 of every onoff_n gaps are inside a burst: the median gap
    # is the rate's frame time, whatever the idle time before the burst
    # (a token bucket's banked credit would make it back-to-back, ~4 us);
    # 10 % covers the worker's jitter
    check_within "$o_gap50" "$ideal_gap" 0.10 \
        "idle periods through pacer: gap p50 $(py "'%.1f' % ($o_gap50 / 1e3)") us, one frame at $rate_tc $(py "'%.1f' % ($ideal_gap / 1e3)") us (within 10 %: a burst leaves paced, not back to back)"
    read -r b1ms b100us b1ms90 b100us90 <"$tmp/onoff.bursts"
    ba=$(burst_allow)
    check $(py "0 if $b1ms90 <= $ba else 1") \
        "idle periods through pacer: burst above the rate in 1 ms windows p90 $b1ms90 bytes (p99 $b1ms), 100 us p90 $b100us90 (p99 $b100us) [allowed $ba bytes: one $frame-byte frame + 10 x the worker's lost CPU $lost_pct % of 1 ms at $rate_tc]"
}
step onoff step_onoff

# ---------------------------------------------------------- kernel runs
# the same hosts and workloads over ka0 -> kb0 with a root qdisc on ka0:
# tbf as a user sets it (burst 15k: a few frames' worth at 100 mbit/s; the
# latency, its queue, equal to pacer's horizon), tbf with the smallest
# burst it takes (one frame: as smooth as it can be), htb with one class

# kernel_load NAME tcp|onoff: the workload from A to B over ka0, captured
# on kb0, then pacer-pcapstat over its data frames
kernel_load() {
    local name=$1
    capture_start "$name" kb0
    case $2 in
    tcp)
        ping_bg "${name}_load" "$ns_a" 198.18.1.2 "$tcp_s"
        iperf "$name" 198.18.1.2 -t "$tcp_s"
        reap "$ping_pid" 10
        ;;
    onoff) iperf "$name" 198.18.1.2 "${onoff_args[@]}" ;;
    esac
    capture_stop
    tc -n "$ns_a" -s qdisc show dev ka0 >"$tmp/$name.tc"
    tc -n "$ns_a" -s class show dev ka0 >>"$tmp/$name.tc"
    tc -n "$ns_a" qdisc del dev ka0 root
    if [ "$2" = tcp ]; then
        stat "$name" "$rate_bps" "tcp src port $(lport "$name")"
    else
        stat "$name" "$rate_bps" "$onoff_filter"
    fi
}
for wl in tcp onoff; do
    [ $wl = tcp ] && what="one TCP flow for $tcp_s s" ||
        what="UDP bursts of $onoff_n datagrams every $onoff_ms ms for $udp_s s"
    # names: the pacer runs' (tcp1 is "pacer", onoff) with the shaper's
    k=$([ $wl = tcp ] && echo "" || echo "onoff-")
    log "tbf: rate $rate_tc burst 15k latency ${horizon_ms}ms, $what"
    tc -n "$ns_a" qdisc add dev ka0 root tbf rate "$rate_tc" burst 15k latency "${horizon_ms}ms"
    kernel_load "${k}tbf" $wl
    log "tbf: rate $rate_tc burst $frame (one frame) latency ${horizon_ms}ms, $what"
    tc -n "$ns_a" qdisc add dev ka0 root tbf rate "$rate_tc" burst "$frame" latency "${horizon_ms}ms"
    kernel_load "${k}tbf1" $wl
    log "htb: one class rate = ceil = $rate_tc, $what"
    tc -n "$ns_a" qdisc add dev ka0 root handle 1: htb default 10
    tc -n "$ns_a" class add dev ka0 parent 1: classid 1:10 htb rate "$rate_tc" ceil "$rate_tc" quantum "$frame"
    kernel_load "${k}htb" $wl
done

# ---------------------------------------------------------------- table
# one table per workload; then the issue's goal, burstiness against both
# kernel shapers at equal rate error, as a summary line (a figure, not a
# check: what the kernel shapers do is not pacer's to pass or fail)
python3 - "$tmp" "$rate_bps" "$json" "$frame" <<'PY' >"$tmp/table"
import json, re, sys
tmp, rate, as_json, frame = sys.argv[1], float(sys.argv[2]), sys.argv[3] == "1", int(sys.argv[4])
# (workload, shaper, its configuration, file name of the run)
runs = [("tcp", "pacer", "--burst %d" % frame, "pacer"), ("tcp", "tbf", "burst 15k", "tbf"),
        ("tcp", "tbf", "burst %d" % frame, "tbf1"), ("tcp", "htb", "one class", "htb"),
        ("onoff", "pacer", "--burst %d" % frame, "onoff"), ("onoff", "tbf", "burst 15k", "onoff-tbf"),
        ("onoff", "tbf", "burst %d" % frame, "onoff-tbf1"), ("onoff", "htb", "one class", "onoff-htb")]
rows = []
for wl, s, conf, f in runs:
    st = json.load(open("%s/%s.pcapstat.json" % (tmp, f)))
    ip = json.load(open("%s/%s.iperf.json" % (tmp, f)))["end"]
    w = {x["window_ns"]: x for x in st["windows"]}
    r = dict(workload=wl, shaper=s, config=conf, rate_bps=int(rate), achieved_bps=round(st["rate_bps"], 1),
             # idle periods: the offered load is a quarter of the rate, so
             # there is no rate to miss; what counts is what was delivered
             rate_error_pct=round((st["rate_bps"] / rate - 1) * 100, 3) if wl == "tcp" else None,
             max_burst_1ms_bytes=int(round(w[1000000]["burst_above_rate_bytes"])),
             max_burst_100us_bytes=int(round(w[100000]["burst_above_rate_bytes"])),
             gap_p50_ns=st["gap_ns"]["p50"], gap_p99_ns=st["gap_ns"]["p99"],
             _ideal=st.get("ideal_gap_ns"),
             _p99=[int(x) for x in open("%s/%s.bursts" % (tmp, f)).read().split()][:2])
    r["p99_burst_1ms_bytes"], r["p99_burst_100us_bytes"] = r["_p99"]
    if wl == "tcp":
        t = sorted(float(x) for x in re.findall(r"time=([0-9.]+) ms", open("%s/%s_load.ping" % (tmp, f)).read()))
        r["_last"] = "%.2f mbit" % (ip["sum_received"]["bits_per_second"] / 1e6)
        r["_rtt"] = "%.1f ms" % t[(len(t) - 1) // 2] if t else "-"
    else:
        sent = ip["sum"]["packets"]
        got = sum(x["packets"] for x in st["flows"] if x["key"].startswith("udp "))
        r["_last"] = "%d/%d" % (got, sent)
        r["_rtt"] = "-"
    rows.append(r)
if as_json:
    for r in rows:
        print(json.dumps({k: v for k, v in r.items() if not k.startswith("_")}))
    out = sys.stderr
else:
    out = sys.stdout
for wl, title, last in (("tcp", "one TCP flow, backlogged", "goodput"),
                        ("onoff", "idle periods: UDP bursts", "delivered")):
    print("%s:" % title, file=out)
    print("%-6s %-10s %9s %12s %8s %10s %10s %10s %10s %9s %9s %9s %11s %8s" % (
        "shaper", "config", "rate", "achieved", "error", "burst 1ms", "100us", "p99 1ms", "p99 100us",
        "gap p50", "gap p99", "ideal", last, "RTT p50"), file=out)
    for r in rows:
        if r["workload"] != wl:
            continue
        print("%-6s %-10s %9s %12s %8s %8d B %8d B %8d B %8d B %6.1f us %6.1f us %6.1f us %11s %8s" % (
            r["shaper"], r["config"], "%.0f mbit" % (r["rate_bps"] / 1e6),
            "%.3f mbit" % (r["achieved_bps"] / 1e6),
            "%.3f%%" % r["rate_error_pct"] if r["rate_error_pct"] is not None else "-",
            r["max_burst_1ms_bytes"], r["max_burst_100us_bytes"], r["_p99"][0], r["_p99"][1],
            r["gap_p50_ns"] / 1e3, r["gap_p99_ns"] / 1e3, r["_ideal"] / 1e3, r["_last"], r["_rtt"]), file=out)
# the goal: each shaper's burstiness is its worst p99 1 ms burst over the
# two workloads (a shaper is as bursty as the traffic that brings it out);
# rate error is the backlogged run's, where the rate is what limits
def row(wl, s, conf):
    return next(r for r in rows if r["workload"] == wl and r["shaper"] == s and r["config"] == conf)
def worst(s, conf):
    return max(row(wl, s, conf)["p99_burst_1ms_bytes"] for wl in ("tcp", "onoff"))
p = worst("pacer", "--burst %d" % frame)
pe = row("tcp", "pacer", "--burst %d" % frame)["rate_error_pct"]
parts, met = [], True
for s, conf in (("tbf", "burst 15k"), ("htb", "one class"), ("tbf", "burst %d" % frame)):
    k, e = worst(s, conf), row("tcp", s, conf)["rate_error_pct"]
    ratio = k / max(p, 1) if k > 0 else 0.0
    equal = abs(e - pe) <= 1.0
    # the goal is against both shapers as a user sets them; tbf with a
    # one-frame burst is reported beside them
    if conf != "burst %d" % frame:
        met = met and ratio >= 10 and equal
    parts.append("%s %s %d B (%s), rate error %+.3f %% (%s)" % (
        s, conf, k, "%.1fx" % ratio if k > 0 else "below the rate", e, "equal within 1 %" if equal else "not equal"))
print("goal burstiness: worst p99 burst above the rate in 1 ms over both workloads: pacer %d B at rate error %+.3f %%; %s; target 10x less than tbf burst 15k and htb at equal rate error (%s)" % (
    p, pe, "; ".join(parts), "met" if met else "missed"), file=out)
PY
cat "$tmp/table"
if [ "$failed" -ne 0 ]; then
    exit 1
fi
exit 0
