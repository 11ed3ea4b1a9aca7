#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# run_fuzz.sh HARNESS NAME SEED_DIR WORK_DIR SECONDS [LIBFUZZER-FLAG...]
#
# One bounded libFuzzer run of HARNESS: starts from the seed corpus
# SEED_DIR (read only: the repository's tests/fuzz/corpus/NAME), keeps
# what it learns in WORK_DIR/corpus and any crash, leak or timeout input
# in WORK_DIR/artifacts. Fails on any finding, naming the reproducer to
# add to the corpus. Prints one line of figures, also kept in
# WORK_DIR/summary.
set -euo pipefail

if [ $# -lt 5 ]; then
    echo "usage: $0 HARNESS NAME SEED_DIR WORK_DIR SECONDS [LIBFUZZER-FLAG...]" >&2
    exit 2
fi
exe=$1 name=$2 seeds=$3 work=$4 secs=$5
shift 5
mkdir -p "$work/corpus" "$work/artifacts"
rm -f "$work/artifacts/"*
rc=0
"$exe" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$@" \
    "$work/corpus" "$seeds" >"$work/log" 2>&1 || rc=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
units=$(find "$work/corpus" -type f | wc -l)
cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -n 1 | cut -d' ' -f2)
line="fuzz $name: ${execs:-?} executions in ${secs} s, coverage ${cov:-?} edges, corpus $units inputs (seeds $(find "$seeds" -type f | wc -l))"
echo "$line" | tee "$work/summary"
if [ "$rc" -ne 0 ] || [ -n "$(ls -A "$work/artifacts")" ]; then
    tail -n 60 "$work/log"
    echo "FAIL: $name: libFuzzer exit $rc; reproducers:" >&2
    ls -l "$work/artifacts" >&2
    echo "add each to tests/fuzz/corpus/$name/ (the fuzz-replay test) and fix the bug" >&2
    exit 1
fi
