#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# replay_pcapstat.sh PACER-PCAPSTAT CORPUS_DIR
#
# Runs the real pacer-pcapstat (text and --json) on every capture of the
# pcapstat fuzz corpus. Each run must exit 0 (read) or 2 (refused, with
# a message); anything else (a crash, a sanitizer abort, a leak, a hang)
# fails, naming the input.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 PACER-PCAPSTAT CORPUS_DIR" >&2
    exit 2
fi
stat=$1 dir=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pacer-fuzz-replay.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0 ok=0 refused=0
for f in "$dir"/*; do
    [ -f "$f" ] || continue
    for mode in "" --json; do
        rc=0
        timeout 60 "$stat" $mode --window 1000 "$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
        case $rc in
        0) ok=$((ok + 1)) ;;
        2)
            [ -s "$tmp/err" ] || { echo "FAIL: $f: exit 2 without a message" >&2; exit 1; }
            refused=$((refused + 1))
            ;;
        *)
            echo "FAIL: pacer-pcapstat $mode $f: exit $rc" >&2
            head -c 4000 "$tmp/err" >&2
            exit 1
            ;;
        esac
        n=$((n + 1))
    done
done
[ "$n" -gt 0 ] || { echo "FAIL: no input in $dir" >&2; exit 1; }
echo "ok: $n runs over $dir: $ok read, $refused refused"
