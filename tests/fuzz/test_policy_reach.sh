#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The appliance end of corpus/policy_time/regress-wrap-1bit-jumbo-flood:
# one flow at 1 bit/s, 400 frames of 9018 bytes arriving at once. Each
# costs 72144 s, so frame 0 leaves at once and the other 399 lie beyond
# the horizon: exactly 1 sent, 399 dropped "horizon". Before the policies
# had a reach, the flow's bucket ran 2^63 fine units ahead after about
# 190 of them (at 2.6 GHz), the signed comparison flipped, and the next
# frame left at once: 3 sent. The output capture holds that one frame and
# no other: frame 0 of the flow (pacer-pcapgen's sequence marker 0).
source "$(dirname "$0")/../pacer/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 1 --count 400 --size 9018 2>/dev/null
run_pacer r $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/r.pcap") -- --replay \
    --flow-rate 1bit --exit-on-idle 300 --mbufs 4096 --max-flows 1024
[ "$rc" -eq 0 ] || fail "pacer exited $rc: $(cat "$tmp/r.err")"
conserved "$tmp/r.json"
expect "$tmp/r.json" 'd["ports"][0]["tx_packets"] == 1' \
    'd["ports"][0]["drop_horizon"] == 399' \
    'd["ports"][0]["dropped_total"] == 399'
capture_check "capture" "$tmp/r.json" 0 "$tmp/r.pcap" "$tmp/s.json"
python3 "$top/tests/tools/pcaptool.py" check "$tmp/r.pcap" >"$tmp/c.json"
expect "$tmp/c.json" '[p["mark"] for p in d["packets"]] == [[0, 0]]' ||
    fail "capture: not frame 0 alone (see above)"
echo "ok: 1 bit/s flood: 1 sent, 399 beyond the horizon"
