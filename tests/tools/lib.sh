# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Sourced by the tools tests: test.sh PCAPGEN PCAPSTAT. Sets $gen, $stat,
# $tool (pcaptool.py) and a scratch directory $tmp removed on exit; the
# helpers below stop the test at the first failed check.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 PACER-PCAPGEN PACER-PCAPSTAT" >&2
    exit 2
fi
gen=$1
stat=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tool="$here/pcaptool.py"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pacer-tools-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# gen_quiet ARGS...: run pacer-pcapgen, its summary line kept in $tmp/gen.err
gen_quiet() {
    "$gen" "$@" 2>"$tmp/gen.err" || fail "pacer-pcapgen $* exited $?: $(cat "$tmp/gen.err")"
}

# stat_json OUT ARGS...: pacer-pcapstat --json ARGS > OUT
stat_json() {
    local out=$1
    shift
    "$stat" --json "$@" >"$out" 2>"$tmp/stat.err" ||
        fail "pacer-pcapstat --json $* exited $?: $(cat "$tmp/stat.err")"
}

# expect FILE.json EXPR...: each Python expression (over the parsed JSON,
# as d) must be true; a failure prints the expression and the document.
expect() {
    python3 - "$@" <<'PY'
import json, sys
path, exprs = sys.argv[1], sys.argv[2:]
with open(path) as f:
    text = f.read()
d = json.loads(text)
bad = [e for e in exprs if not eval(e, {"d": d, "len": len, "all": all,
                                        "any": any, "sum": sum, "set": set,
                                        "sorted": sorted, "abs": abs,
                                        "min": min, "max": max})]
for e in bad:
    print("FAIL: %s: not true: %s" % (path, e), file=sys.stderr)
if bad:
    print("document: " + text[:4000], file=sys.stderr)
    sys.exit(1)
PY
}

# check_pcap PCAP OUT.json: the independent reader's report on PCAP
check_pcap() {
    python3 "$tool" check "$1" >"$2" || fail "pcaptool check $1"
}

# expect_usage_error WHAT SUBSTRING CMD...: CMD exits 2 with a message on
# stderr that contains SUBSTRING, and prints nothing on stdout.
expect_usage_error() {
    local what=$1 sub=$2 rc=0
    shift 2
    "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
    [ "$rc" -eq 2 ] || fail "$what: exit status $rc, want 2 ($(cat "$tmp/err"))"
    [ -s "$tmp/err" ] || fail "$what: no message on stderr"
    grep -qF -- "$sub" "$tmp/err" || fail "$what: message '$(cat "$tmp/err")' does not contain '$sub'"
    [ ! -s "$tmp/out" ] || fail "$what: printed on stdout: $(head -c 200 "$tmp/out")"
    echo "ok: $what -> $(head -n 1 "$tmp/err")"
}
