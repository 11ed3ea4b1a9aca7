#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# test_install.sh MESON BUILDDIR SRCDIR
#
# `meson install --destdir` into a scratch directory, then the installed
# tree: the three programs, pacer(8) (lint-clean), the example
# configuration (the same bytes as config/pacer.cfg), the systemd unit
# (absolute paths to what was installed; `systemd-analyze verify` where it
# exists). Then pacer(8) against the sources, so it cannot fall behind: every
# long option `pacer --help` prints, every command of src/cli.c's help
# strings, every drop reason, classify result and --stats-json key of the
# statistics, every telemetry command and key must be documented in its
# section, and every option or command the page documents must exist.
set -euo pipefail

if [ $# -ne 3 ]; then
    echo "usage: $0 MESON BUILDDIR SRCDIR" >&2
    exit 2
fi
meson=$1
build=$2
src=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pacer-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
errors=0

fail() {
    echo "FAIL: $*" >&2
    errors=$((errors + 1))
}

if ! "$meson" install -C "$build" --destdir "$root" --no-rebuild \
        >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log" >&2
    echo "FAIL: meson install" >&2
    exit 1
fi

# Where meson was told to put things (absolute, or under the prefix).
"$meson" introspect --buildoptions "$build" >"$tmp/options.json"
opt() {
    python3 - "$tmp/options.json" "$1" <<'PY'
import json, os, sys
opts = {o["name"]: o["value"] for o in json.load(open(sys.argv[1]))}
v = opts.get(sys.argv[2], "")
if sys.argv[2] == "systemd_unit_dir" and v == "":
    v = "lib/systemd/system"
print(os.path.join(opts["prefix"], v))
PY
}
bindir=$(opt bindir)
mandir=$(opt mandir)
sysconfdir=$(opt sysconfdir)
unitdir=$(opt systemd_unit_dir)
echo "installed under $root: bin $bindir, man $mandir, config $sysconfdir, unit $unitdir"

# --- the programs ---------------------------------------------------------
for p in pacer pacer-pcapgen pacer-pcapstat; do
    [ -f "$root$bindir/$p" ] && [ -x "$root$bindir/$p" ] ||
        fail "$bindir/$p is not installed as an executable"
done
help_rc=0
"$root$bindir/pacer" --help >"$tmp/help.txt" 2>"$tmp/help.err" || help_rc=$?
[ "$help_rc" -eq 0 ] || fail "installed pacer --help exited $help_rc: $(cat "$tmp/help.err")"
grep -q -- '--config' "$tmp/help.txt" || fail "installed pacer --help prints no options"

# --- the man page ---------------------------------------------------------
page=$root$mandir/man8/pacer.8
if [ ! -f "$page" ]; then
    fail "$mandir/man8/pacer.8 is not installed"
    page=$src/docs/pacer.8
else
    cmp -s "$page" "$src/docs/pacer.8" || fail "installed pacer.8 differs from docs/pacer.8"
fi
linted=no
if command -v man >/dev/null; then
    MANWIDTH=80 man --warnings -l "$page" >"$tmp/man.txt" 2>"$tmp/man.err" ||
        fail "man -l pacer.8 failed"
    [ ! -s "$tmp/man.err" ] || fail "man --warnings: $(cat "$tmp/man.err")"
    [ -s "$tmp/man.txt" ] || fail "man -l pacer.8 rendered nothing"
    linted=yes
fi
if command -v groff >/dev/null; then
    groff -man -Tutf8 -ww -z "$page" 2>"$tmp/groff.err" || fail "groff failed on pacer.8"
    [ ! -s "$tmp/groff.err" ] || fail "groff -ww: $(cat "$tmp/groff.err")"
    linted=yes
fi
[ "$linted" = yes ] || echo "SKIP: neither man (man-db) nor groff here: pacer.8 not linted"

# --- the example configuration --------------------------------------------
example=$root$sysconfdir/pacer/pacer.cfg.example
if [ ! -f "$example" ]; then
    fail "$sysconfdir/pacer/pacer.cfg.example is not installed"
else
    cmp -s "$example" "$src/config/pacer.cfg" ||
        fail "pacer.cfg.example differs from config/pacer.cfg"
fi
[ ! -e "$root$sysconfdir/pacer/pacer.cfg" ] ||
    fail "pacer.cfg installed: an install must not write the live configuration"

# --- the systemd unit -----------------------------------------------------
unit=$root$unitdir/pacer.service
if [ ! -f "$unit" ]; then
    fail "$unitdir/pacer.service is not installed"
else
    ! grep -n '@[A-Z_]*@' "$unit" >&2 || fail "pacer.service has unreplaced @VARIABLES@"
    exec_line=$(grep '^ExecStart=' "$unit" || true)
    [ "$(grep -c '^ExecStart=' "$unit")" -eq 1 ] || fail "pacer.service: not one ExecStart"
    read -r -a exec_words <<<"${exec_line#ExecStart=}"
    [ "${exec_words[0]:-}" = "$bindir/pacer" ] ||
        fail "ExecStart runs '${exec_words[0]:-}', not the installed $bindir/pacer"
    case " ${exec_words[*]} " in
    *" -- --config $sysconfdir/pacer/pacer.cfg "*) ;;
    *) fail "ExecStart does not pass -- --config $sysconfdir/pacer/pacer.cfg: $exec_line" ;;
    esac
    grep -qx 'KillSignal=SIGTERM' "$unit" || fail "pacer.service: no KillSignal=SIGTERM"
    # systemctl reload must hear a refused reload: pacerctl reload (exit
    # 1 with why), on the socket ExecStart gives pacer, not kill -HUP
    reload_line=$(grep '^ExecReload=' "$unit" || true)
    [ "$reload_line" = "ExecReload=$bindir/pacerctl -s \${PACER_SOCKET} reload" ] ||
        fail "pacer.service: ExecReload is '$reload_line', not the installed pacerctl reload"
    case " ${exec_words[*]} " in
    *' --control-socket ${PACER_SOCKET} '*) ;;
    *) fail "ExecStart does not give pacer the socket ExecReload asks: $exec_line" ;;
    esac
    grep -qx 'Environment=PACER_SOCKET=/run/pacer/pacer.sock' "$unit" &&
        grep -qx 'RuntimeDirectory=pacer' "$unit" ||
        fail "pacer.service: no PACER_SOCKET in RuntimeDirectory /run/pacer"
    [ -x "$root$bindir/pacerctl" ] || fail "$bindir/pacerctl is not installed"
    grep -qx 'Type=simple' "$unit" || fail "pacer.service: not Type=simple"
    grep -qx 'Restart=on-failure' "$unit" || fail "pacer.service: no Restart=on-failure"
    grep -qx 'LimitMEMLOCK=infinity' "$unit" || fail "pacer.service: no LimitMEMLOCK=infinity"
    grep -qx 'EnvironmentFile=-/etc/default/pacer' "$unit" ||
        fail "pacer.service: no optional EnvironmentFile=-/etc/default/pacer"
    # the stop timeout leaves a drain of the default horizon ample room
    horizon_ms=$(sed -n 's/^ *--horizon MS .*\[\([0-9]*\)\]$/\1/p' "$tmp/help.txt")
    stop_s=$(sed -n 's/^TimeoutStopSec=\([0-9]*\)$/\1/p' "$unit")
    if [ -z "$horizon_ms" ] || [ -z "$stop_s" ]; then
        fail "no default horizon in --help ('$horizon_ms') or no TimeoutStopSec in seconds ('$stop_s')"
    elif [ $((stop_s * 1000)) -lt $((horizon_ms * 5)) ]; then
        fail "TimeoutStopSec=$stop_s s is short for a drain of the ${horizon_ms} ms horizon"
    fi
    if command -v systemd-analyze >/dev/null; then
        # verify wants ExecStart's binary and Documentation= (man:pacer(8))
        # to exist: point both at the DESTDIR copies
        mkdir -p "$tmp/unit"
        sed -e "s|^ExecStart=$bindir/pacer |ExecStart=$root$bindir/pacer |" \
            -e "s|^ExecReload=$bindir/pacerctl |ExecReload=$root$bindir/pacerctl |" "$unit" \
            >"$tmp/unit/pacer.service"
        va_rc=0
        MANPATH=$root$mandir SYSTEMD_LOG_COLOR=0 \
            systemd-analyze verify "$tmp/unit/pacer.service" >"$tmp/verify.txt" 2>&1 ||
            va_rc=$?
        # it warns (unknown keys, bad values) and still exits 0: any output fails
        if [ "$va_rc" -ne 0 ] || [ -s "$tmp/verify.txt" ]; then
            fail "systemd-analyze verify (rc $va_rc): $(cat "$tmp/verify.txt")"
        fi
    else
        echo "SKIP: systemd-analyze not here: pacer.service not verified"
    fi
fi

# --- pacer(8) against the sources ------------------------------------------
python3 - "$page" "$tmp/help.txt" "$src" <<'PY' || errors=$((errors + 1))
import re, sys

page, help_path, src = sys.argv[1:4]
missing = []

# -- the page, as text: section -> running text, and section -> .TP tags
def macro_args(s):
    return [a.replace('""', '"') if q else b
            for q, a, b in ((m.group(1) is not None, m.group(1), m.group(2))
                            for m in re.finditer(r'"((?:[^"]|"")*)"|(\S+)', s))]

def plain(s):
    s = re.sub(r'\\f(\[[^]]*\]|\(..|.)', '', s)
    s = s.replace('\\-', '-').replace('\\&', '').replace('\\e', '\\')
    s = s.replace('\\(aq', "'").replace('\\(en', '-').replace('\\(em', '-')
    return s

text, tags = {}, {}
section, want_tag = '', False
for line in open(page, encoding='utf-8'):
    line = line.rstrip('\n')
    if line.startswith('.\\"') or line.startswith("'\\\""):
        continue
    line = re.sub(r'(?<!\\)\\".*', '', line)
    if line.startswith('.'):
        m = re.match(r'\.(\S+)\s*(.*)', line)
        name, rest = (m.group(1), m.group(2)) if m else ('', '')
        args = macro_args(rest)
        if name in ('SH', 'SS'):
            out = ' '.join(args)
            if name == 'SH':
                section = out
                text.setdefault(section, '')
                tags.setdefault(section, [])
                want_tag = False
                continue
        elif name in ('TP', 'TQ'):
            want_tag = True
            continue
        elif name in ('BR', 'RB', 'BI', 'IB', 'IR', 'RI'):
            out = ''.join(args)
        elif name in ('B', 'I', 'SM', 'SB'):
            out = ' '.join(args)
        else:
            out = ' '.join(args) if name in ('SY', 'OP') else ''
    else:
        out = line
    out = ' '.join(plain(out).split())
    if want_tag and out:
        tags[section].append(out)
        want_tag = False
    text[section] = text.get(section, '') + ' ' + out

for s in ('NAME', 'SYNOPSIS', 'DESCRIPTION', 'OPTIONS', 'COMMANDS',
          'CONFIGURATION', 'STATISTICS', 'TELEMETRY', 'SIGNALS',
          'EXIT STATUS', 'FILES', 'EXAMPLES', 'SEE ALSO'):
    if s not in text:
        missing.append('section %s' % s)

def mentions(section, word):
    return re.search(r'(?<![\w-])' + re.escape(word) + r'(?![\w-])',
                     text.get(section, '')) is not None

def read(path):
    return open(src + '/' + path, encoding='utf-8').read()

# -- options: --help's long options, each a tag in OPTIONS, and back
helptext = open(help_path).read()
opts = set(re.findall(r'(?<![\w-])(--[a-z][a-z0-9-]*)', helptext))
shorts = set(re.findall(r'^\s+(-[a-zA-Z]),', helptext, re.M))
if len(opts) < 10:
    missing.append('(pacer --help printed only %d long options)' % len(opts))
opt_tags = ' '.join(tags.get('OPTIONS', []))
for o in sorted(opts | shorts):
    if not re.search(r'(^|[ ,])' + re.escape(o) + r'(?![\w-])', opt_tags):
        missing.append('OPTIONS: %s (pacer --help prints it)' % o)
for t in tags.get('OPTIONS', []):
    for o in re.findall(r'(?<![\w-])(--?[a-zA-Z][a-z0-9-]*)', t):
        if o not in opts and o not in shorts:
            missing.append('OPTIONS documents %s, which pacer --help does not print' % o)

# -- commands: help_str up to the first colon, split at ", "
def norm_cmd(s):
    return ' '.join(s.replace('[', ' ').replace(']', ' ').split())

cli = read('src/cli.c')
forms = []
for h in re.findall(r'\.help_str\s*=\s*"([^"]*)"', cli):
    forms += [norm_cmd(p) for p in h.split(':', 1)[0].split(', ')]
if len(forms) < 10:
    missing.append('(only %d commands found in src/cli.c)' % len(forms))
cmd_tags = [norm_cmd(t) for t in tags.get('COMMANDS', [])]
for f in forms:
    if f not in cmd_tags:
        missing.append('COMMANDS: "%s" (src/cli.c help_str)' % f)
# a tag may also be one alternative of a form: "show config" of
# "show class|config|clock"
known = set(forms)
for f in forms:
    words = [w.split('|') for w in f.split(' ')]
    expanded = ['']
    for alts in words:
        expanded = [(e + ' ' + a).strip() for e in expanded for a in alts]
    known.update(expanded)
for t in cmd_tags:
    if t not in known:
        missing.append('COMMANDS documents "%s", which src/cli.c does not have' % t)

# -- statistics: the port counters' table (src/counters.c: every drop
# reason a tag), classify results, --stats-json keys
stats = read('src/render.c')
ctab = re.sub(r'(?m)^#.*$', '', read('src/counters.c'))
counters = re.findall(r'\b[KGD]\("(\w+)"', ctab)
reasons = re.findall(r'\bD\("(\w+)"', ctab)
if len(reasons) < 5 or len(counters) < 20:
    missing.append('(the port counters or drop reasons not found in src/counters.c)')
stat_tags = ' '.join(tags.get('STATISTICS', []))
for r in reasons:
    if not re.search(r'(?<![\w-])' + r + r'(?![\w-])', stat_tags):
        missing.append('STATISTICS: drop reason %s' % r)
cls = read('lib/classify/pcr_classify.c')
m = re.search(r'pcr_classify_result_name\(.*?\n\}', cls, re.S)
results = [r for r in re.findall(r'return "([^"]+)"', m.group(0) if m else '')
           if r != 'unknown']
if len(results) < 3:
    missing.append('(classify results not found in lib/classify/pcr_classify.c)')
keys = sorted(set(re.findall(r'\\"([A-Za-z_][A-Za-z0-9_]*)\\":', stats)) | set(counters))
if len(keys) < 30:
    missing.append('(only %d --stats-json keys found in src/render.c)' % len(keys))
for k in results + keys:
    if not mentions('STATISTICS', k):
        missing.append('STATISTICS: %s (--stats-json)' % k)

# -- telemetry: commands (tags) and the keys they answer with
tel = read('src/telemetry.c')
cmds = re.findall(r'rte_telemetry_register_cmd\(\s*"([^"]+)"', tel)
if len(cmds) < 3:
    missing.append('(telemetry commands not found in src/telemetry.c)')
tel_tags = tags.get('TELEMETRY', [])
for c in cmds:
    if not any(re.match(re.escape(c) + r'($|[\[, ])', t) for t in tel_tags):
        missing.append('TELEMETRY: %s' % c)
tkeys = set(re.findall(r'rte_tel_data_add_dict_\w+\(\s*\w+,\s*"([^"%]+)"', tel))
# telemetry's port counters are the table's (src/counters.c), each
# documented in STATISTICS (checked above), which TELEMETRY refers to
tkeys |= {k + '0' for k in re.findall(r'"(\w+)%u"', tel)}
for k in sorted(tkeys):
    if not mentions('TELEMETRY', k):
        missing.append('TELEMETRY: key %s' % k)

# -- configuration: the keys of [port N] and [class NAME]
opt_src = read('src/options.c')
for k in sorted(set(re.findall(r'ent\[i\]\.name,\s*"([a-z-]+)"', opt_src))):
    if not mentions('CONFIGURATION', k):
        missing.append('CONFIGURATION: key %s' % k)

print('pacer.8 checked against %d options, %d command forms, %d drop reasons, '
      '%d classify results, %d --stats-json keys, %d telemetry commands, '
      '%d telemetry keys' % (len(opts | shorts), len(forms), len(reasons),
                             len(results), len(keys), len(cmds), len(tkeys)))
for x in missing:
    print('FAIL: pacer.8 lacks ' + x if not x.startswith(('(', 'OPTIONS documents',
          'COMMANDS documents')) else 'FAIL: ' + x, file=sys.stderr)
sys.exit(1 if missing else 0)
PY

if [ "$errors" -ne 0 ]; then
    echo "$errors check(s) failed" >&2
    exit 1
fi
echo "install: all checks passed"
