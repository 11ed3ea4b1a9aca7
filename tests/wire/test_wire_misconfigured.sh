#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# test_wire_misconfigured.sh WIRE-TEST BUILDDIR: tools/wire-test.sh must
# catch a pacer configured to the wrong rate. pacer gets 90 mbit/s in the
# single-flow and UDP runs while every check still expects 100: a 10 %
# error, ten times the 1 % on-wire bound and three times the 3 % goodput
# bound. Passes only if wire-test.sh exits 1 with exactly those rate checks
# failed; a skip (77: no root, or the CPU was never pacer's) is passed on.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 WIRE-TEST BUILDDIR" >&2; exit 2; }
out=$(mktemp "${TMPDIR:-/tmp}/pcr-wire-mis.XXXXXX")
trap 'rm -f "$out"' EXIT

rc=0
"$1" --builddir "$2" --pacer-rate 90mbit >/dev/null 2>"$out" || rc=$?
grep -E '^(ok|FAIL|SKIP)' "$out" || true
[ "$rc" -ne 77 ] || { echo "SKIP: wire-test.sh skipped"; exit 77; }
[ "$rc" -eq 1 ] || { echo "FAIL: wire-test.sh exited $rc with pacer at 90 mbit (expected 1)"; tail -20 "$out"; exit 1; }
for c in 'one TCP flow through pacer: goodput' 'one TCP flow through pacer: on-wire' \
         'UDP at 2x through pacer: delivered'; do
    grep -q "^FAIL: $c" "$out" || { echo "FAIL: wire-test.sh did not fail '$c'"; exit 1; }
done
# the runs that were not misconfigured still pass: the failure is the rate
for c in 'four TCP flows: aggregate' 'rate change: on-wire' 'idle periods through pacer: gap p50'; do
    grep -q "^ok: $c" "$out" || { echo "FAIL: '$c' did not pass in the misconfigured run"; exit 1; }
done
echo "ok: wire-test.sh fails a pacer at 90 mbit/s where 100 is expected (exit 1, the rate checks)"
