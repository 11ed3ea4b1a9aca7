#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Bad input exits 2 with one line naming the value and why, and nothing
# runs: bad options, bad values, bad configuration files, a configuration
# naming a port that does not exist; and it leaves no EAL runtime
# directory behind.
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 1 --count 10 --size 100 2>/dev/null
vdev="net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap"
n=0

# bad ARGS-FOR-PACER -- MESSAGE-REGEX
bad() {
    local args=() re
    while [ "$1" != "--" ]; do args+=("$1"); shift; done
    shift
    re=$1
    n=$((n + 1))
    prefix="pcr-errors-$$-$n"
    rc=0
    timeout 60 "$pacer" $(eal "$vdev") -- "${args[@]}" >"$tmp/o" 2>"$tmp/e" || rc=$?
    [ "$rc" -eq 2 ] || fail "pacer ${args[*]}: exit $rc, want 2: $(cat "$tmp/e")"
    grep -Eq -e "$re" "$tmp/e" || fail "pacer ${args[*]}: message does not match '$re': $(cat "$tmp/e")"
    ! grep -q "lcore .*: rx port" "$tmp/o" || fail "pacer ${args[*]}: started workers"
    no_runtime_dir
}

# after rte_eal_init(), with telemetry on as users run pacer (its socket
# sits in the runtime directory until the EAL's exit handlers run): no
# ports; exit 2 and no runtime directory left
n=$((n + 1))
prefix="pcr-errors-$$-$n"
rc=0
timeout 60 "$pacer" $(eal | sed 's/--no-telemetry//') >"$tmp/o" 2>"$tmp/e" || rc=$?
[ "$rc" -eq 2 ] && grep -q "no ports" "$tmp/e" ||
    fail "pacer without ports, telemetry on: exit $rc, want 2 and 'no ports': $(cat "$tmp/e")"
no_runtime_dir

bad --frobnicate -- "unknown option '--frobnicate'"
bad --rate -- "option '--rate' needs a value"
bad --rate 10zbit -- "--rate: rate '10zbit': unknown unit 'zbit'"
bad --rate -5mbit -- "--rate: rate '-5mbit' does not start with a number"
bad --flow-rate 0.5bit -- "--flow-rate: rate '0.5bit' is below 1 bit/s"
bad --slot 100 -- "--slot: 100 is out of range \[250, 1000000\]"
bad --horizon abc -- "--horizon: 'abc' is not a non-negative integer"
bad --horizon-policy maybe -- "--horizon-policy: 'maybe' is not drop or cap"
bad --burst 1x -- "--burst: size '1x': unknown unit 'x'"
bad stray -- "unexpected argument 'stray'"
bad --config "$tmp/missing.cfg" -- "--config .*/missing.cfg: No such file or directory"

printf '[pacer]\nrate = fast\n' >"$tmp/1.cfg"
bad --config "$tmp/1.cfg" -- "1.cfg: \[pacer\] rate: rate 'fast' does not start with a number"
printf '[pacer]\ncolour = blue\n' >"$tmp/2.cfg"
bad --config "$tmp/2.cfg" -- "2.cfg: \[pacer\] colour: unknown key"
printf '[shaper]\nrate = 1mbit\n' >"$tmp/3.cfg"
bad --config "$tmp/3.cfg" -- "unknown section \[shaper\]"
printf '[class a]\nmatch = dport 99999\n' >"$tmp/4.cfg"
bad --config "$tmp/4.cfg" -- "4.cfg: \[class a\] match: port '99999' is not N or N-M"
printf '[class a]\nrate = 1mbit\n' >"$tmp/5.cfg"
bad --config "$tmp/5.cfg" -- "\[class a\] has no match rule"
printf '[port 3]\nrate = 1mbit\n' >"$tmp/6.cfg"
bad --config "$tmp/6.cfg" -- "\[port 3\] does not exist \(ports 0..0\)"
printf 'this is not ini\n' >"$tmp/7.cfg"
bad --config "$tmp/7.cfg" -- "7.cfg:1: 'this is not ini': not \[section\], key = value"
printf '[class a]\nmatch = src 198.18.0.0/15 dst 2001:db8::/32\n' >"$tmp/8.cfg"
bad --config "$tmp/8.cfg" -- "mixes IPv4 and IPv6"
bad --cmdline-file "$tmp/nope.cmd" -- "--cmdline-file .*/nope.cmd: No such file or directory"
bad --tsc-calib 5 -- "--tsc-calib: 5 is out of range \[10, 10000\]"
bad --offload-horizon 2000000 -- "--offload-horizon: 2000000 is out of range \[0, 1000000\]"
bad --stage-lead 200000 -- "--stage-lead: 200000 is out of range \[0, 100000\]"
bad --stage-lead 100 --offload-horizon 200 -- "stage-lead 100 us is shorter than offload-horizon 200 us"
bad --max-late 1 -- "max-late 1 us is under two slots \(slot 1000 ns\)"
bad --max-late 3 --slot 2000 -- "max-late 3 us is under two slots \(slot 2000 ns\)"
bad --nic-clock-bits 65 -- "--nic-clock-bits: 65 is out of range \[1, 64\]"
printf '[class default]\norder = soonest\n' >"$tmp/9.cfg"
bad --config "$tmp/9.cfg" -- "\[class default\] order: 'soonest': the order is fair or completion"
bad --order-guard 60001 -- "--order-guard: 60001 is out of range \[0, 60000\]"
bad --order-guard-frames 0 -- "--order-guard-frames: 0 is out of range \[1, 255\]"
bad --tsc-measure perhaps -- "--tsc-measure: 'perhaps' is not yes or no"
bad --flow-idle 86400001 -- "--flow-idle: 86400001 is out of range"

# the command line overrides the file: a bad file value is fine if given
# again on the command line? No: the file is checked as a whole first.
# A good file plus an overriding option runs.
printf '[pacer]\nflow-rate = 1kbit\nexit-on-idle = 200\n' >"$tmp/ok.cfg"
prefix="pcr-errors-$$-ok"
run_pacer ok $(eal "$vdev") -- --config "$tmp/ok.cfg" --flow-rate unlimited --mbufs 2048 --max-flows 64
[ "$rc" -eq 0 ] || fail "good config exited $rc: $(cat "$tmp/ok.err")"
conserved "$tmp/ok.json"
expect "$tmp/ok.json" 'd["ports"][0]["tx_packets"] == 10' \
    'd["ports"][0]["classes"][0]["flow_rate_bps"] == 0'

# the EAL's usual small setup without hugepages (-m 512) and no sizing
# options: the pool fits what the EAL has once the flow tables and wheels
# have theirs, the start line says what it holds, and it forwards
prefix="pcr-errors-$$-pool"
run_pacer pool $(eal "$vdev") -- --rate 50mbit --exit-on-idle 200
[ "$rc" -eq 0 ] || fail "-m 512 without --mbufs exited $rc: $(tail -3 "$tmp/pool.err")"
grep -Eq "^pacer: [0-9]+ mbufs \(no --mbufs: [0-9]+ MiB of the [0-9]+ MiB the EAL has free after flow tables and wheels\): the 2000 ms horizon of 1500-byte frames at up to [0-9]+ mbit/s" \
    "$tmp/pool.out" || fail "-m 512 without --mbufs: no start line on the pool: $(grep mbufs "$tmp/pool.out")"
conserved "$tmp/pool.json"
expect "$tmp/pool.json" 'd["ports"][0]["tx_packets"] == 10'
no_runtime_dir
# the pool's common store: a stack unless the user chose (the EAL's
# --mbuf-pool-ops-name); design.md, "Ports and lcores"
grep -Eq "^pacer: 1 port\(s\), .* mbufs \([0-9]+ bytes, stack\)" "$tmp/pool.out" ||
    fail "the pool's handler is not the stack: $(grep 'mbufs (' "$tmp/pool.out")"
prefix="pcr-errors-$$-ops"
run_pacer ops $(eal "$vdev") --mbuf-pool-ops-name=ring_mp_mc -- --mbufs 2048 --exit-on-idle 200
[ "$rc" -eq 0 ] || fail "--mbuf-pool-ops-name=ring_mp_mc exited $rc: $(tail -3 "$tmp/ops.err")"
grep -Eq "^pacer: 1 port\(s\), .* mbufs \([0-9]+ bytes, ring_mp_mc\)" "$tmp/ops.out" ||
    fail "the user's handler was not taken: $(grep 'mbufs (' "$tmp/ops.out")"
conserved "$tmp/ops.json"
expect "$tmp/ops.json" 'd["ports"][0]["tx_packets"] == 10'
# with too little memory for the default flow tables, it says what to give
prefix="pcr-errors-$$-small"
rc=0
timeout 60 "$pacer" $(eal "$vdev" | sed 's/-m 512/-m 256/') -- >"$tmp/o" 2>"$tmp/e" || rc=$?
[ "$rc" -ne 0 ] && grep -q "no room for a pool of mbufs; give more memory (-m), fewer --max-flows (1048576 a RX lcore), or --mbufs" "$tmp/e" ||
    fail "-m 256 without sizing options: exit $rc: $(cat "$tmp/e")"
no_runtime_dir

# --help lists every option and exits 0
"$pacer" --help >"$tmp/h" || fail "--help exited $?"
for o in config rate flow-rate burst wire-overhead slot horizon horizon-policy \
         flow-limit mbufs exit-on-idle stats-json stats-period drain-on-exit; do
    grep -q -- "--$o " "$tmp/h" || fail "--help does not list --$o"
done
echo "ok: $n bad inputs exit 2 with their message; overrides and --help work"
