#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Completion-time order (issue 18): in a class of `order completion`, the
# held transaction likeliest to finish first goes first, ranked by what the
# class has learned of its transactions' sizes. Real time, so that
# transactions end and the class learns as a deployed pacer would: a
# namespace of the test's own holds a veth pair; txn_send.py sends rounds
# of N equal transactions (T = 20 frames of 1514 bytes, the same N UDP
# flows every round, interleaved frame by frame, much faster than the
# rate) into one end; pacer reads the other (net_af_packet, port 0) and
# paces them at 50 mbit/s into a capture (net_pcap, port 1). Judged from
# the capture by rounds.py, rounds 6-20 (the first ones teach it the
# sizes; their median round, so that a hiccup of a busy machine spoils one
# round, not the figure), each flow's completion taken as its last frame's
# place in the round's departure order (frame slots: what pacer chose,
# which lateness on a busy machine cannot move; the link's idle time is
# checked apart), against fair sharing and SRPT of the same frames,
# allowing the lead H and the time the sender took to hand a round over:
#   1. N = 2, 4, 8, completion order: mean completion time at most 0.78 /
#      0.66 / 0.60 of fair sharing's (the benchmark goals; the model in
#      tests/policy/test_rank.c gives 0.750 / 0.625 / 0.563 at this size);
#   1b. N = 4, 8 with the AQM on (CoDel, the default): the same goals;
#   1c. N = 8 transactions of 100 frames: the first done by slot 116;
#   2. N = 4, fair order (the negative control): at least 0.95 of fair's,
#      and the judge of case 1 must fail it;
#   3. the starvation guard (below);
#   4. the order switched at run time, without loss or reordering;
#   5. N = 4 over two RX lcores.
# Every run: every frame out once, in order per flow, conserved.
source "$(dirname "$0")/lib.sh"

judge=$here/rounds.py
sender=$here/txn_send.py
ns="pcr-cmp-$$"
send_pid=
cleanup() {
    if [ -n "$send_pid" ]; then
        kill "$send_pid" 2>/dev/null || true
        wait "$send_pid" 2>/dev/null || true
    fi
    pcr_cleanup
}
trap cleanup EXIT
trap 'exit 1' INT TERM

pcr_netns "$ns"
ip -n "$ns" link add pcrcx0 type veth peer name pcrcx1
ip -n "$ns" link set pcrcx0 up
ip -n "$ns" link set pcrcx1 up
# an empty capture: port 1 only transmits
"$gen" -o "$tmp/empty.pcap" --flows 1 --count 0 2>/dev/null

T=20
ROUNDS=20

# run_ns NAME ORDER FRAMES SENDER-ARGS [PACER-ARGS...]: pacer, the default
# class in ORDER, while txn_send.py SENDER-ARGS sends; FRAMES must all
# leave (-: the guard case's 1500 + 5 a transaction sent, 50 to warm up).
run_ns() {
    local name=$1 order=$2 total=$3 sargs=$4 pid
    local -a ealv
    shift 4
    printf '[class default]\norder = %s\n' "$order" >"$tmp/$name.cfg"
    prefix="pcr-completion-$$-$name"
    rc=0
    read -ra ealv <<<"$(eal "net_af_packet0,iface=pcrcx1,qpairs=${QP:-1},framecnt=4096" \
        "net_pcap1,rx_pcap=$tmp/empty.pcap,tx_pcap=$tmp/$name.out.pcap")"
    # framecnt: the kernel's ring for pacer's end holds the guard case's
    # 1500-frame burst even while pacer is off its CPU (at the default 512
    # a busy machine lost frames there, uncounted)
    # QP=2: two RX queues (the kernel spreads the flows by hash), each on
    # an RX lcore of its own, and a TX lcore: oversubscribed on 2 vCPUs
    [ "${QP:-1}" = 2 ] && ealv=("--lcores=0@0,1@1,2@0,3@1" "${ealv[@]:2}")
    # the sender first, waiting for $name.go (txn_send.py --go): its
    # interpreter's start is not counted into pacer's --exit-on-idle
    rm -f "$tmp/$name.go"
    # shellcheck disable=SC2086 # $sargs: an argument list
    ip netns exec "$ns" python3 "$sender" pcrcx0 $sargs --go "$tmp/$name.go" \
        --out "$tmp/$name.send.json" &
    send_pid=$!
    ip netns exec "$ns" "$pacer" "${ealv[@]}" -- --replay \
        --config "$tmp/$name.cfg" --rate 50mbit --mbufs 16384 --max-flows 256 \
        --exit-on-idle 500 --stats-json "$tmp/$name.json" "$@" \
        >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid=$!
    if ! wait_started "$tmp/$name.out" "$pid"; then
        wait "$pid" || rc=$?
        note "$name: pacer did not start (exit $rc): $(cat "$tmp/$name.err")"
        kill "$send_pid" 2>/dev/null || true
        wait "$send_pid" 2>/dev/null || true
        send_pid=
        return 1
    fi
    touch "$tmp/$name.go"
    wait "$send_pid" || note "$name: the sender failed"
    send_pid=
    wait "$pid" || rc=$?
    if [ "$rc" -ne 0 ]; then
        note "$name: pacer exited $rc: $(cat "$tmp/$name.err")"
        return 1
    fi
    conserved "$tmp/$name.json" || note "$name: not conserved"
    [ "$total" = - ] && total=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(1500 + 5 * (50 + d["transactions"]))' "$tmp/$name.send.json")
    if [ -n "${AQM_RUN:-}" ] && aqm_stalled "$tmp/$name.json"; then
        # (1b) CoDel's drops, and only those, where the worker's stalls
        # explain them
        expect "$tmp/$name.json" "d['ports'][1]['tx_packets'] + d['ports'][1]['drop_aqm'] == $total" \
            'd["ports"][1]["dropped_total"] == d["ports"][1]["drop_aqm"]' || note "$name: frames lost"
        return 0
    fi
    expect "$tmp/$name.json" "d['ports'][1]['tx_packets'] == $total" \
        'd["ports"][1]["dropped_total"] == 0' || note "$name: frames lost"
}

# aqm_stalled STATS: the staging went unserved (the worker off its CPU)
# for at least CoDel's interval (100 ms) in all, and CoDel signalled: a
# stall holds every flow's frames, their sojourns grow by it, and a
# round's flows waited up to 39 ms of link time already (a busy 2-vCPU
# run: 203 ms of stalls, 10 frames dropped)
aqm_stalled() {
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["ports"][1]; sys.exit(0 if p["drop_aqm"] + p["aqm_marked"] > 0 and p["stage_stall_ns"] >= 100e6 else 1)' "$1"
}

# run_rounds NAME N ORDER [PACER-ARGS...]: pacer over 20 rounds of N
# transactions, the default class in ORDER.
run_rounds() {
    local name=$1 n=$2 order=$3 gap
    shift 3
    # a round takes N T frame times at 50 mbit/s (242 us); then 15 ms idle
    gap=$(python3 -c "print($n * $T * 0.2423 + 15)")
    run_ns "$name" "$order" $((n * T * ROUNDS)) \
        "--flows $n --frames $T --rounds $ROUNDS --gap-ms $gap${SPORT:+ --sport-base $SPORT}" "$@"
}

# judge NAME N ARGS...: rounds.py over NAME's capture
judge() {
    local name=$1 n=$2
    shift 2
    python3 "$judge" "$tmp/$name.out.pcap" --stats "$tmp/$name.json" --port 1 \
        --time-scale "$(pcap_scale "$tmp/$name.json")" --rate 50mbit \
        --flows "$n" --frames $T --rounds $ROUNDS --from 6 \
        --sender "$tmp/$name.send.json" --lead-us 500 --by slots "$@"
}
# (a later --from replaces the 6)

# 1. completion order, N = 2, 4, 8
goal=([2]=0.78 [4]=0.66 [8]=0.60)
for n in 2 4 8; do
    if run_rounds "c$n" "$n" completion; then
        judge "c$n" "$n" --title "1: completion, N $n" --at-most "${goal[$n]}" ||
            note "1: N $n: completion order not ahead of fair sharing (rounds.py)"
    fi
done

# 1b. the same with the AQM on (--replay set it off: --aqm codel after it
# turns it on again, issue 35): CoDel judges each flow on the delay it
# will have had, up to a round's 19 / 39 ms here, but a flow's queue
# empties between rounds (15 ms idle: the RFC's dequeue of nothing), so no
# flow stays above the 5 ms target for an interval (100 ms): the same
# figures, nothing dropped or marked; unless the worker lost its CPU for
# an interval or more in all (aqm_stalled: its stalls add to every held
# frame's sojourn), when only CoDel's drops may be missing and the run is
# not judged
for n in 4 8; do
    if AQM_RUN=1 run_rounds "a$n" "$n" completion --aqm codel; then
        if aqm_stalled "$tmp/a$n.json"; then
            echo "1b: N $n: not judged: CoDel signalled with the staging unserved $(python3 -c 'import json,sys; print("%.0f ms" % (json.load(open(sys.argv[1]))["ports"][1]["stage_stall_ns"] / 1e6))' "$tmp/a$n.json") (its interval 100 ms)"
            continue
        fi
        judge "a$n" "$n" --title "1b: completion, N $n, AQM on" --at-most "${goal[$n]}" ||
            note "1b: N $n: completion order with the AQM on not ahead of fair sharing (rounds.py)"
        expect "$tmp/a$n.json" 'd["ports"][1]["drop_aqm"] == 0' 'd["ports"][1]["aqm_marked"] == 0' \
            'd["ports"][1]["queue_delay_ns"]["count"] > 0' ||
            note "1b: N $n: the AQM signalled, or judged nothing"
    fi
done

# 1c. equal transactions do not take turns at first (issue 37): N = 8 of
# 100 frames, 12 rounds, the table learned from them; its entry level
# holds a flow for its first 8 frames, and a head whose next frame waited
# only on the port (its own bound, the previous frame's departure, within
# the lead) used to go behind its level's other flows: every round began
# 01234567 eight times over, the first transaction done at slot 156. Now
# the head keeps its place: in the median round of rounds 6-12 the first
# transaction is done by slot 100 + 2N (the frames the lead lets go in
# arrival order before the staging holds them, below), and the mean is
# within the N = 8 goal. The starvation guard is off here (--order-guard 0): a
# round is 194 ms of link time, and the guard, 100 ms, boosts the last
# flows of every round and, once rounds overlap on a busy machine, the
# first ones too (measured: first done at 177 from round 8 on, frames in
# runs of 11-16, the guard's); that is issue 37's second item, open.
if T=100 ROUNDS=12 run_rounds e8 8 completion --order-guard 0; then
    T=100 ROUNDS=12 judge e8 8 --title "1c: completion, N 8 x 100" --at-most 0.60 ||
        note "1c: N 8 x 100: completion order not ahead of fair sharing (rounds.py)"
    python3 - "$here" "$tmp/e8.out.pcap" 100 8 "$(pcap_scale "$tmp/e8.json")" <<'PY' || note "1c: equal transactions took turns at first (see above)"
import sys
sys.path.insert(0, sys.argv[1])
from windows import read_pcap, parse_frame
T, N, scale = int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
frame = 1514 * 8e9 / 50e6
deps, rounds = [], {}
for t, o, d in read_pcap(sys.argv[2]):
    flow, seq = parse_frame(d)[5][:2]
    deps.append(t * scale)
    rounds.setdefault(seq // T, []).append((len(deps) - 1, flow))
# a round is pacer's choice while the link is busy: where it idled longer
# than two frames and the lead (H 500 us) before the first transaction
# was done, the worker had lost its CPU and what came in meanwhile was
# stamped on arrival, in arrival order (a busy machine: every round of a
# run with two CPU hogs beside it came out round robin); such a round is
# not judged (with none judged, nothing is said of the order). Bound:
# T + 2N, two frames of each other flow: the lead's first frames of a
# round in arrival order (101-103 on a quiet machine), and a sanitizer
# build beside the rest of the suite measured 114 in five rounds (two of
# each, from round 8 on; cause not found, issue 37); before the fix, 156
first, skipped = [], 0
for r in range(5, 12):
    seen, done = {}, None
    for i, (k, f) in enumerate(rounds.get(r, [])):
        seen[f] = seen.get(f, 0) + 1
        if seen[f] == T:
            done = (i + 1, k)
            break
    if done is None:
        continue
    k0 = rounds[r][0][0]
    if any(deps[k + 1] - deps[k] > 2 * frame + 500e3 for k in range(k0, done[1])):
        skipped += 1
        continue
    first.append(done[0])
first.sort()
med = first[len(first) // 2] if first else 10**9
print("1c: the first transaction of rounds 6-12 done at slots %s (median %d; at most %d); %d round(s) "
      "not judged (the link idled: the worker off its CPU)" % (" ".join(map(str, first)), med, T + 2 * N, skipped))
if med > T + 2 * N:
    for r in range(5, 12):
        print("   round %d: %s" % (r + 1, "".join(str(f) for _, f in rounds.get(r, [])[:160])))
sys.exit(0 if not first or med <= T + 2 * N else 1)
PY
fi

# 2. fair order: the negative control
if run_rounds f4 4 fair; then
    judge f4 4 --title "2: fair, N 4" --at-least 0.95 ||
        note "2: fair order not fair (rounds.py)"
    r=0
    judge f4 4 --title "2: fair, N 4, judged as completion (must fail)" \
        --at-most 0.66 2>"$tmp/f4.judge" || r=$?
    [ "$r" -eq 1 ] || note "2: fair sharing passed the completion judge (exit $r)"
fi

# 3. the starvation guard: 50 transactions of 5 frames, 2 ms apart, teach
# the class their size; then flow 0 sends 1500 frames at once; then 200
# flows send 5-frame transactions in turn at 52 mbit/s for 1 s, a little
# more than the link's 50: learned as the class's size, they outrank flow 0
# (past the largest learned size) the whole time, and their own backlog
# grows to about 40 ms (under the guard's wait: none of them is boosted).
# With --order-guard G (100 ms, the default, 16 frames) flow 0 still gets
# 16 frames every G or so: its longest gap while the short ones are held
# is at most G + G/16 (how often the guard looks) + two guards' frames
# (slack) + L + H + the staging stalls pacer counted, and the guard fired
# (order_guard) at least once for each gap over 3/4 of G that one of flow 0's
# frames ended (the last stretch, from its last frame to the short flows'
# end, is ended by them, not by a guard: it is held to the bound only);
# without a guard (--order-guard 0) the same flow waits for most of the
# second, order_guard 0.
guard_gap() {
    python3 - "$here" "$tmp/$1.out.pcap" "$tmp/$1.json" "$(pcap_scale "$tmp/$1.json")" "$2" "$3" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[1])
from windows import read_pcap, parse_frame
st = json.load(open(sys.argv[3]))
scale, guard_ms, mode = float(sys.argv[4]), float(sys.argv[5]), sys.argv[6]
port = st["ports"][1]
late = float((port.get("departure_error_ns") or st["departure_error_ns"])["max"])
stall = float(port.get("stage_stall_ns", 0))
f = read_pcap(sys.argv[2])
t0 = f[0][0]
long_t, short_t = [], []
for t, o, d in f:
    h = parse_frame(d)
    if h[5][0] < 1000: # 1000 and up: the warm-up transactions
        (long_t if h[5][0] == 0 else short_t).append((t - t0) * scale)
a, b = short_t[0], short_t[-1]
inside = [t for t in long_t if a <= t <= b]
gaps = [y - x for x, y in zip([a] + inside, inside + [b])]
frame = 1514 * 8e9 / 50e6
bound = guard_ms * 1e6 * 17 / 16 + 2 * 16 * frame + late + 500e3 + stall
# the gaps a frame of flow 0 ended after waiting about the guard: the
# guard's doing (the last one, to b, is not). A guard's gap is at least
# G less the guard's look interval (G/16) and the lead; 3G/4 tells them
# from a frame flow 0 had staged or queued before the short flows came
# (a CI run: a 51.1 ms gap at the start, once counted at G/2 = 50 ms)
long_gaps = [g for g in gaps[:len(inside)] if g > 0.75 * guard_ms * 1e6]
print("   gaps over 3/4 of the guard that flow 0 ended:", " ".join("%.1f" % (g / 1e6) for g in long_gaps),
      "; then to the short flows' end %.1f ms" % (gaps[-1] / 1e6))
print("3: %s: short flows held %.0f ms; flow 0 sent %d frames then, longest "
      "gap %.1f ms (bound with the guard %.1f ms: L %.1f us, stalls %.1f us)"
      % (mode, (b - a) / 1e6, len(inside), max(gaps) / 1e6, bound / 1e6,
         late / 1e3, stall / 1e3))
print("   order_guard %d" % port["order_guard"])
if mode == "guard":
    sys.exit(0 if max(gaps) <= bound and len(inside) >= 16 and
             port["order_guard"] >= len(long_gaps) else 1)
sys.exit(0 if max(gaps) >= 0.5 * (b - a) and port["order_guard"] == 0 else 1)
PY
}
if run_ns g1 completion - "--warm 50 --long 1500 --flows 200 --frames 5 --short-mbps 52 --secs 1" \
        --horizon 4000; then
    guard_gap g1 100 guard || note "3: the guard did not bound flow 0's wait"
fi
if run_ns g0 completion - "--warm 50 --long 1500 --flows 200 --frames 5 --short-mbps 52 --secs 1" \
        --horizon 4000 --order-guard 0; then
    guard_gap g0 100 none || note "3: without the guard flow 0 was not starved (the case cannot fail)"
fi

# 4. the order switched at run time: N = 4, the class fair at the start;
# 400 ms after pacer starts, `set class default order completion` from a
# --cmdline-file script while the rounds go on. Rounds 1-3 (before the
# switch, even with the sender 300 ms late) at least 0.95 of fair's mean,
# rounds 16-20 (after it) at most 0.80 (measured 0.66-0.69: the class
# learns from scratch at the switch, its first transactions cut by it);
# every frame out, in order.
printf 'start\nsleep 400\nset class default order completion\nshow class\n' >"$tmp/sw.cmd"
if run_rounds sw 4 fair --cmdline-file "$tmp/sw.cmd"; then
    judge sw 4 --title "4: before the switch" --from 1 --to 3 --at-least 0.95 ||
        note "4: fair order before the switch not fair (rounds.py)"
    judge sw 4 --title "4: after the switch" --from 16 --at-most 0.80 ||
        note "4: completion order after the switch not ahead (rounds.py)"
    grep -q "default .* completion" "$tmp/sw.out" ||
        note "4: show class does not say completion: $(cat "$tmp/sw.out")"
fi

# 5. N = 4 over two RX lcores (each owns the flows of its queue; they
# publish their best held rank to each other and the better one stamps
# first). On this 2-vCPU machine the three workers share the CPUs, so L
# (and the lcores' absences) is milliseconds, and each lcore's absence
# lets the other's flows go: coordinated lcores cannot be told from lcores
# that each serve their own best flow (0.75 of fair by the model); that
# needs a core per lcore. Checked: completion order still well ahead of
# fair (at most 0.85; measured 0.70-0.72 in frame slots against 0.66 on
# one lcore); frames, order, conservation and the lcores.
# The kernel spreads the flows over the two queues by a hash seeded at
# boot: on one boot in eight it puts all four on one queue, and the case
# is one RX lcore's. Another source port base is another draw; after
# three, the case is skipped (saying so), not judged as something else.
spread=no
for base in 10000 20000 30000; do
    SPORT=$base QP=2 run_rounds m4 4 completion || break
    if python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if all(l["rx_packets"] > 0 for l in d["lcores"] if l["role"] == "rx") else 1)' "$tmp/m4.json"; then
        spread=yes
        break
    fi
    echo "5: the kernel's hash put the 4 flows (source ports $base+) on one queue; another base"
done
if [ "$spread" = yes ]; then
    # run_delay_ns: two of the three busy workers share each vCPU here
    expect "$tmp/m4.json" 'sorted(l["role"] for l in d["lcores"]) == ["rx", "rx", "tx"]' \
        'all(l["rx_packets"] > 0 for l in d["lcores"] if l["role"] == "rx")' \
        'all(l["run_delay_ns"] > 0 for l in d["lcores"] if l["lcore"] in (1, 3))' ||
        note "5: not two RX lcores, each with flows, or no run delay on the shared vCPU"
    judge m4 4 --title "5: completion, N 4, two RX lcores" --at-most 0.85 ||
        note "5: completion order across two RX lcores not ahead (rounds.py)"
elif [ ${#failed[@]} -eq 0 ]; then
    echo "SKIP part 5: three source port bases, each hashed to one queue"
fi

notes_done "OK: completion order: N = 2/4/8 ahead of fair sharing; fair order is fair; the starvation guard bounds the wait; conserved"
