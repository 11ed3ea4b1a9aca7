#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# `save config`, then `--config` of the saved file, reproduces `show
# config` exactly. The first run changes one thing of each kind through
# the CLI (port rate, class rate, flow-rate and order, a class added, one
# deleted, horizon and its policy, flow-limit); commands with bad values
# are refused with a message and change nothing (the config shown after
# them is checked against the one before). Each change is logged through
# rte_log (--log-level='pacer.*:debug').
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 2 --count 10 --size 200 2>/dev/null
cat >"$tmp/a.cfg" <<'CFG'
[pacer]
rate = 100mbit
flow-rate = 2mbit
[class video]
match = proto udp dport 5201-5202
rate = 30mbit
flow-rate = 10mbit
[class old]
match = proto tcp
rate = 1mbit
CFG
cat >"$tmp/a.cmd" <<'CMD'
set port 0 rate 15mbit
set class video rate 7mbit
set class video flow-rate 3500kbit
add class bulk match proto tcp dport 80 rate 3mbit flow-rate 1mbit order completion
set class video order completion
del class old
set horizon 500 policy cap
set flow-limit 50
show config
set class nosuch rate 1mbit
set port 0 rate 12qbit
add class video match any
add class x match proto nosuch
add class a; match proto udp
del class default
set horizon 0 policy drop
set horizon 100 policy sometimes
set flow-limit -3
set class video order sometimes
add class y match any order soon
save config /nonexistent-dir/x.cfg
show config
save config @SAVED@
quit
CMD
sed -i "s|@SAVED@|$tmp/saved.cfg|" "$tmp/a.cmd"
opts=(--mbufs 4096 --max-flows 1024)
run_pacer cfg $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/o1.pcap") --log-level='pacer.*:debug' -- \
    --config "$tmp/a.cfg" --cmdline-file "$tmp/a.cmd" "${opts[@]}"
[ "$rc" -eq 0 ] || fail "first run exited $rc: $(cat "$tmp/cfg.err")"
cp "$tmp/cfg.out" "$tmp/first.out"
# the changes, logged through rte_log (type pacer.ctl), each once, as the
# command that makes it and with who asked: the script and its line
for want in "pacer.ctl: set port 0 rate 15Mbit (by script $tmp/a.cmd:" \
            "pacer.ctl: add class bulk match " "pacer.ctl: del class old (by script $tmp/a.cmd:" \
            "pacer.ctl: set horizon 500 policy cap (by script $tmp/a.cmd:"; do
    [ "$(grep -cF "$want" "$tmp/cfg.err")" = 1 ] || fail "not logged once: '$want': $(cat "$tmp/cfg.err")"
done
grep -qF "pacer.ctl: rates published" "$tmp/cfg.err" || fail "rates published not logged at debug"
conserved "$tmp/cfg.json"
# the block `show config` printed: from its echo to the next prompt
block() {
    awk -v n="$2" '/^pacer> show config$/ {k++; if (k == n) {on = 1; next}}
                   /^pacer> / {on = 0} on' "$1"
}
block "$tmp/first.out" 1 >"$tmp/show1"
block "$tmp/first.out" 2 >"$tmp/show2"
[ -s "$tmp/show1" ] || fail "no show config output: $(cat "$tmp/first.out")"
diff -u "$tmp/show1" "$tmp/show2" || fail "a refused command changed the configuration"
errors=$(grep -c "^error: " "$tmp/first.out" || true)
[ "$errors" -eq 12 ] || fail "$errors errors for the 12 bad commands: $(grep '^error' "$tmp/first.out")"
for want in "rate = 15mbit" "[class bulk]" "match = proto tcp dport 80" "flow-rate = 3500kbit" \
            "horizon = 500" "horizon-policy = cap" "flow-limit = 50" "order = completion"; do
    grep -qxF "$want" "$tmp/show1" || fail "show config lacks '$want': $(cat "$tmp/show1")"
done
! grep -q "class old" "$tmp/show1" || fail "deleted class still shown"
# video and bulk in completion order, default fair
[ "$(grep -cxF "order = completion" "$tmp/show1")" -eq 2 ] &&
    [ "$(grep -cxF "order = fair" "$tmp/show1")" -eq 1 ] ||
    fail "show config: not two classes in completion order and one fair: $(cat "$tmp/show1")"

printf 'show config\nquit\n' >"$tmp/b.cmd"
run_pacer cfg $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/o2.pcap") -- \
    --config "$tmp/saved.cfg" --cmdline-file "$tmp/b.cmd" "${opts[@]}"
[ "$rc" -eq 0 ] || fail "second run exited $rc: $(cat "$tmp/cfg.err")"
block "$tmp/cfg.out" 1 >"$tmp/show3"
diff -u "$tmp/show1" "$tmp/show3" || fail "--config of the saved file shows another configuration"
echo "ok: save config + --config reproduce show config ($(wc -l <"$tmp/show1") lines); 12 bad commands refused, nothing changed"
