#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Flows that share a backlogged rate are isolated from each other, as under
# fq (per-flow staging, --stage-lead; issue 17 1b). 1514-byte frames read
# at once (1 us apart in the capture), a 100 mbit/s port aggregate. Judged
# from the output capture by fct.py against an ideal frame-by-frame round
# robin of the same input at the same rate, allowing pacer's measured
# departure error L plus the lead H (500 us, the default) plus the time
# pacer measured its staging unserved beyond H (0 on a quiet machine):
#   1. one flow of 8000 frames, then 60 short flows of 1 to 30 frames: the
#      short flows' mean and p99 completion times each at most 1.5x the
#      round robin's (+ L + H); the link never idle while anything waits
#      (0.1 % + L + the staging stalls pacer measured); no flow reordered;
#   2. the same input with --stage-lead 0 (every packet stamped on arrival,
#      first come first served): the same judge must fail it, the short
#      flows waiting behind the long one (about 1 s against 60 ms);
#   3. N = 2, 4, 8 equal transactions of 100 frames, interleaved: each
#      completes within one quantum (a 1514-byte frame a turn, counted as
#      two: fct.py) + L + H of the round robin's time;
#   4. the long flow and the short ones read at once, each on an RX lcore
#      of its own (their ranks published across lcores): on this 2-vCPU
#      machine the three workers share the CPUs, so L is milliseconds and
#      each RX lcore is away for milliseconds at a time (the other takes
#      the link meanwhile): the staging stalls the judge allows come to
#      about 110 ms here. Loose enough that it
#      cannot tell coordinated lcores from uncoordinated ones (that needs
#      a core per lcore); it still fails first come first served, and
#      every frame, order, the link's idle time and conservation hold.
#   5. a 300 ms stall (SIGSTOP) is counted and the link idles instead of
#      bursting afterwards;
#   6. a second signal drops what staging holds (counted shutdown), a
#      first one lets it leave on time.
# Every run: conserved (no mbuf left), every frame sent or counted.
source "$(dirname "$0")/lib.sh"

judge=$here/fct.py

# ran NAME CASE: pacer's run NAME exited 0 (else noted: false) and
# conserved (else noted).
ran() {
    if [ "$rc" -ne 0 ]; then
        note "$2: pacer exited $rc: $(cat "$tmp/$1.err")"
        return 1
    fi
    conserved "$tmp/$1.json" || note "$2: not conserved"
}

# the input: one long flow, then 60 short ones (sizes 1..30, twice), in
# in1.pcap one after the other (timestamps 1 us apart throughout); the
# short flows also alone in short.pcap, from the long flow's start (case 4)
"$gen" -o "$tmp/long.pcap" --flows 1 --count 8000 --size 1514 --sport 10000 2>/dev/null
cp "$tmp/long.pcap" "$tmp/in1.pcap"
: >"$tmp/short.pcap"
short_n=0
for i in $(seq 0 59); do
    n=$(((i * 7) % 30 + 1))
    for f in in1 short; do
        "$gen" -o "$tmp/$f.pcap" --append --flows 1 --count "$n" --size 1514 \
            --sport $((20000 + i)) 2>/dev/null
    done
    short_n=$((short_n + n))
done
total=$((8000 + short_n))

# run_iso NAME FRAMES INPUT EAL-VDEV-RX -- PACER-ARGS: pacer at 100 mbit/s
# over the input; the common checks.
run_iso() {
    local name=$1 n=$2 rx=$3
    shift 4
    run_pacer "$name" $(eal "net_pcap0,${rx}tx_pcap=$tmp/$name.out.pcap") \
        -- --replay --rate 100mbit --mbufs 16384 --max-flows 1024 --exit-on-idle 300 "$@"
    ran "$name" "$name" || return 1
    expect "$tmp/$name.json" "d['ports'][0]['tx_packets'] == $n" \
        'd["ports"][0]["dropped_total"] == 0' || note "$name: frames lost"
}

# 1. one long flow and short flows
if run_iso iso1 $total "rx_pcap=$tmp/in1.pcap," --; then
    expect "$tmp/iso1.json" 'd["ports"][0]["staged_total"] > 8000' ||
        note "1: staging not used"
    python3 "$judge" --title "1: 8000 + 60 short flows" --stats "$tmp/iso1.json" \
        --time-scale "$(pcap_scale "$tmp/iso1.json")" --rate 100mbit --lead-us 500 \
        --shorts 30:1.5 "$tmp/in1.pcap" "$tmp/iso1.out.pcap" ||
        note "1: short flows not isolated (fct.py)"
fi

# 2. negative control: stamped on arrival, the judge must fail it
if run_iso iso2 $total "rx_pcap=$tmp/in1.pcap," -- --stage-lead 0; then
    expect "$tmp/iso2.json" 'd["ports"][0]["staged_total"] == 0' ||
        note "2: staged with --stage-lead 0"
    r=0
    python3 "$judge" --title "2: the same, --stage-lead 0 (must fail)" --stats "$tmp/iso2.json" \
        --time-scale "$(pcap_scale "$tmp/iso2.json")" --rate 100mbit --lead-us 0 \
        --shorts 30:1.5 "$tmp/in1.pcap" "$tmp/iso2.out.pcap" 2>"$tmp/iso2.judge" || r=$?
    [ "$r" -eq 1 ] && grep -q "short flows' mean completion" "$tmp/iso2.judge" ||
        note "2: first come first served passed the isolation judge (exit $r)"
fi

# 3. equal transactions, interleaved
for n in 2 4 8; do
    "$gen" -o "$tmp/eq$n.pcap" --flows $n --count $((n * 100)) --size 1514 2>/dev/null
    if run_iso "eq$n" $((n * 100)) "rx_pcap=$tmp/eq$n.pcap," --; then
        python3 "$judge" --title "3: $n equal transactions" --stats "$tmp/eq$n.json" \
            --time-scale "$(pcap_scale "$tmp/eq$n.json")" --rate 100mbit --lead-us 500 \
            --equal "$tmp/eq$n.pcap" "$tmp/eq$n.out.pcap" ||
            note "3: $n equal transactions not fair (fct.py)"
    fi
done

# 4. case 1 over two RX lcores: both captures are read at once, so the
# judge's input is the two merged by time
python3 "$top/tests/tools/pcaptool.py" merge "$tmp/long.pcap" "$tmp/short.pcap" "$tmp/in4.pcap"
save=$prefix
prefix="$save-2rx"
ealv=($(eal "net_pcap0,rx_pcap=$tmp/long.pcap,rx_pcap=$tmp/short.pcap,tx_pcap=$tmp/iso4.out.pcap"))
ealv=("--lcores=0@0,1@1,2@0,3@1" "${ealv[@]:2}")
run_pacer iso4 "${ealv[@]}" -- --replay --rate 100mbit --mbufs 16384 --max-flows 1024 --exit-on-idle 300
prefix=$save
if ran iso4 4; then
    expect "$tmp/iso4.json" "d['ports'][0]['tx_packets'] == $total" \
        'd["ports"][0]["dropped_total"] == 0' \
        'sorted(l["role"] for l in d["lcores"]) == ["rx", "rx", "tx"]' || note "4: frames or lcores"
    python3 "$judge" --title "4: two RX lcores" --stats "$tmp/iso4.json" \
        --time-scale "$(pcap_scale "$tmp/iso4.json")" --rate 100mbit --lead-us 500 \
        --shorts 30:1.5 "$tmp/in4.pcap" "$tmp/iso4.out.pcap" ||
        note "4: short flows not isolated across two RX lcores (fct.py)"
fi

# bg_pacer NAME INPUT EXIT_IDLE ACTION: pacer at 20 mbit/s over INPUT in
# the background; once its workers run, ACTION (a function) is given its
# pid; then it is waited for ($rc).
bg_pacer() {
    local name=$1 in=$2 idle=$3 action=$4 pid
    prefix="pcr-isolation-$$-$name"
    rc=0
    "$pacer" $(eal "net_pcap0,rx_pcap=$in,tx_pcap=$tmp/$name.out.pcap") -- --replay \
        --rate 20mbit --mbufs 8192 --max-flows 64 --exit-on-idle "$idle" \
        --stats-json "$tmp/$name.json" >"$tmp/$name.out" 2>"$tmp/$name.err" &
    pid=$!
    if wait_started "$tmp/$name.out" "$pid"; then
        "$action" "$pid"
    fi
    wait "$pid" || rc=$?
}
stall_action() {
    sleep 0.3
    kill -STOP "$1"
    sleep 0.3
    kill -CONT "$1"
}
drop_action() {
    sleep 0.1
    kill -INT "$1"
    sleep 0.3
    kill -INT "$1"
}

# 5. a stall: pacer stopped (SIGSTOP) for 300 ms in the middle of a
# 20 mbit/s backlog of one flow. Its staging goes unserved: counted
# (stage_stalls, stage_stall_ns >= 299 ms: the stop less H), and the link
# idles rather than bursting when it comes back: the 10 ms after the gap
# carry at most R/8 x (10 ms + H) + burst + one bucket + two frames (what
# was stamped before the stop leaves late, at once: at most H of it). Under
# first come first served (stamped on arrival) the ~500 frames due during
# the stop would leave at once.
"$gen" -o "$tmp/st.pcap" --flows 1 --count 2000 --size 1514 2>/dev/null
bg_pacer st "$tmp/st.pcap" 300 stall_action
if ran st 5; then
    expect "$tmp/st.json" 'd["ports"][0]["tx_packets"] == 2000' \
        'd["ports"][0]["stage_stalls"] >= 1' \
        'd["ports"][0]["stage_stall_ns"] >= 299000000' || note "5: stall not counted"
    python3 - "$here" "$tmp/st.out.pcap" "$tmp/st.json" "$(pcap_scale "$tmp/st.json")" <<'PY' ||
import json, sys
sys.path.insert(0, sys.argv[1])
from windows import read_pcap
f = read_pcap(sys.argv[2])
st = json.load(open(sys.argv[3]))
scale = float(sys.argv[4])
t0 = f[0][0]
t = [t0 + (x[0] - t0) * scale for x in f]
gi = max(range(1, len(t)), key=lambda i: t[i] - t[i - 1])
gap = t[gi] - t[gi - 1]
rate, lead, w = 20e6, 500e3, 10e6
burst = st.get("burst", 1514)
bound = rate / 8 * (w + lead) / 1e9 + burst + st["ports"][0]["bucket_bytes"] + 2 * 1514
after = sum(x[1] for x, ti in zip(f, t) if t[gi] <= ti < t[gi] + w)
print("5: stall: gap %.1f ms in the capture, pacer counted %.1f ms beyond its lead; "
      "the 10 ms after it carry %d bytes (bound %d)"
      % (gap / 1e6, st["ports"][0]["stage_stall_ns"] / 1e6, after, bound))
sys.exit(0 if gap >= 290e6 and after <= bound else 1)
PY
        note "5: the link burst after the stall, or did not idle"
fi

# 6. shutdown drops what staging holds: 1000 frames at 20 mbit/s (0.6 s)
# held, two SIGINTs 0.3 s apart (drain, then drop; pacer takes two within
# 200 ms as one). The wheel holds only the lead's worth (H, a frame or two
# at this rate): more than 10 dropped means staging's were.
"$gen" -o "$tmp/dr.pcap" --flows 4 --count 1000 --size 1514 2>/dev/null
bg_pacer dr "$tmp/dr.pcap" 3000 drop_action
if ran dr 6; then
    expect "$tmp/dr.json" 'd["ports"][0]["rx_packets"] == 1000' \
        'd["ports"][0]["queued"] == 0' 'd["ports"][0]["staged"] == 0' \
        'd["ports"][0]["drop_shutdown"] > 10' \
        'd["ports"][0]["tx_packets"] + d["ports"][0]["drop_shutdown"] == 1000' ||
        note "6: staged packets not dropped at shutdown"
fi

notes_done "ok: flows isolated under a shared backlog in every case; first come first served fails the same judge"
