#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# test_wire_misconfigured.sh WIRE-TEST BUILDDIR: tools/wire-test.sh must
# catch a pacer configured to the wrong rate. pacer gets 90 mbit/s in the
# single-flow and UDP runs while every check still expects 100: a 10 %
# error, ten times the 1 % on-wire bound and three times the 3 % goodput
# bound. wire-test.sh widens a rate's bound by the share of the run that
# pacer's worker lost its CPU, and says so ("[allowed A %: ...]"): each of
# the three rate checks must fail, or, where its allowance reached the 10 %
# error (the worker lost that much), pass saying so. A check that passed
# the error with a smaller allowance fails this test, and so does a run
# whose exit status is not 1; a run where none of the three could tell the
# error from the lost CPU judged nothing, and is skipped (77) with the
# allowances. wire-test.sh's own skip (77: no root, the tools or 2 CPUs)
# is passed on.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 WIRE-TEST BUILDDIR" >&2; exit 2; }
out=$(mktemp "${TMPDIR:-/tmp}/pcr-wire-mis.XXXXXX")
trap 'rm -f "$out"' EXIT

rc=0
"$1" --builddir "$2" --pacer-rate 90mbit >/dev/null 2>"$out" || rc=$?
grep -E '^(ok|FAIL|SKIP)' "$out" || true
[ "$rc" -ne 77 ] || { echo "SKIP: wire-test.sh skipped"; exit 77; }
caught=0
blind=()
for c in 'one TCP flow through pacer: goodput' 'one TCP flow through pacer: on-wire' \
         'UDP at 2x through pacer: delivered'; do
    if grep -q "^FAIL: $c" "$out"; then
        caught=$((caught + 1))
        continue
    fi
    line=$(grep "^ok: $c" "$out") || { echo "FAIL: wire-test.sh printed no line for '$c'"; exit 1; }
    allow=$(sed -n 's/.*\[allowed \([0-9.]*\) %.*/\1/p' <<<"$line")
    [ -n "$allow" ] || { echo "FAIL: '$c' passed with no allowance stated: $line"; exit 1; }
    python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 10 else 1)" "$allow" ||
        { echo "FAIL: '$c' passed a 10 % rate error with an allowance of $allow % (< 10 %)"; exit 1; }
    blind+=("$c (allowed $allow %)")
done
if [ "$caught" -eq 0 ]; then
    echo "SKIP: the worker lost so much of its CPU that every rate check's allowance covered the 10 % error: ${blind[*]}"
    exit 77
fi
[ "$rc" -eq 1 ] || { echo "FAIL: wire-test.sh exited $rc with pacer at 90 mbit (expected 1)"; tail -20 "$out"; exit 1; }
# the runs that were not misconfigured still pass: the failure is the rate
for c in 'four TCP flows: aggregate' 'rate change: on-wire' 'idle periods through pacer: gap p50'; do
    grep -q "^ok: $c" "$out" || { echo "FAIL: '$c' did not pass in the misconfigured run"; exit 1; }
done
for b in "${blind[@]}"; do
    echo "note: $b: the worker's lost CPU covered the 10 % error there"
done
echo "ok: wire-test.sh fails a pacer at 90 mbit/s where 100 is expected (exit 1, $caught of the 3 rate checks)"
