#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# pacerctl against a fake pacer: a UNIX socket server in Python below that
# speaks the control socket's protocol (a line in; output, NUL, "ok\n" or
# "error\n" out), logs every line it gets (and on which connection) and
# answers from a script, so no DPDK is needed:
#   - a 50 MB reply that trickles in over ~3 s arrives whole under -t 1
#     (the timeout is for silence, not for the whole reply); a reply that
#     stops is still given up;
#   - --json is valid JSON whatever bytes the command or the reply hold
#     (invalid UTF-8 as U+FFFD a byte, control characters escaped, valid
#     UTF-8 as it is), and a failed show stats is the wrapper object;
#   - connect() failures say what is wrong: a socket closed to this user
#     (its mode and owner), no socket, nobody listening;
#   - -f FILE: each command over one connection, in order; -e stops at
#     the first failure; a bad line sends nothing;
#   - PACER_SOCKET, below -s and --file-prefix;
#   - what stays: exit status 0/1/2, show stats rules, --prometheus.
# Each part runs on its own and the failed ones are listed at the end.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 PACERCTL" >&2
    exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pacer-pacerctl-test.XXXXXX")
pids=()
cleanup() {
    local p
    for p in ${pids[@]+"${pids[@]}"}; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    chmod -R u+rwx "$tmp" 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
# a copy anyone may run (the checks as another user), in a directory
# anyone may pass through but not list
mkdir "$tmp/bin"
cp "$1" "$tmp/bin/pacerctl"
chmod 755 "$tmp/bin" "$tmp/bin/pacerctl"
chmod 711 "$tmp"
ctl=$tmp/bin/pacerctl

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

cat >"$tmp/fake.py" <<'PY'
# fake.py SOCK LOG RULES: a fake pacer control socket.
# fake.py pattern N: the N bytes "big N S" sends, on stdout.
import json, os, socket, sys, threading, time

def line(i):
    return b"%09d the quick brown fox jumps over the lazy dog\n" % i

W = len(line(0))    # every line as long: a byte's line is its offset / W

def span(a, b):
    """Bytes [a, b) of the pattern, made as they are sent."""
    first = a // W
    data = b"".join(line(i) for i in range(first, (b + W - 1) // W))
    return data[a - first * W:b - first * W]

STATS = b'{\n  "ports": [\n    {"port": 0, "name": "a b"}\n  ],\n  "mempool_in_use": 7\n}\n'
lock = threading.Lock()

def log(conn, line):
    with lock, open(LOG, "a") as f:
        f.write(json.dumps({"conn": conn, "line": line.decode("latin-1")}) + "\n")

def answer(s, line):
    """Reply to one request; False to hang up."""
    try:
        with open(RULES) as f:
            rules = json.load(f)
    except (OSError, ValueError):
        rules = {}
    cmd = line.decode("latin-1")
    word, _, rest = line.partition(b" ")
    status = b"ok"
    if cmd in rules:
        out = rules[cmd]["out"].encode("latin-1")
        status = rules[cmd]["status"].encode()
    elif word == b"echo":
        out = rest + b"\n"
    elif word == b"hex":
        out = bytes.fromhex(rest.decode())
    elif word == b"fail":
        out, status = b"error: " + rest + b"\n", b"error"
    elif word == b"big":
        n, secs = rest.split()
        n, pieces = int(n), 60
        step = -(-n // pieces)
        for k in range(0, n, step):
            s.sendall(span(k, min(k + step, n)))
            time.sleep(float(secs) / pieces)
        out = b""
    elif word == b"stall":
        s.sendall(b"half a rep")
        time.sleep(60)
        return False
    elif word == b"hangup":
        return False
    elif cmd == "show stats json":
        out = STATS
    elif cmd == "show stats prometheus":
        out = b"pacer_tx_packets 1\n"
    else:
        out = b"did: " + line + b"\n"
    s.sendall(out + b"\0" + status + b"\n")
    return True

def serve(s, conn):
    buf = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                return
            buf += d
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                log(conn, line)
                if not answer(s, line):
                    return
    except OSError:
        pass
    finally:
        s.close()

if sys.argv[1] == "pattern":
    sys.stdout.buffer.write(span(0, int(sys.argv[2])))
    sys.exit(0)
SOCK, LOG, RULES = sys.argv[1:4]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(SOCK)
srv.listen(16)
n = 0
while True:
    c, _ = srv.accept()
    n += 1
    threading.Thread(target=serve, args=(c, n), daemon=True).start()
PY

# start_fake SOCK LOG: a fake pacer on SOCK, its requests in LOG
start_fake() {
    python3 "$tmp/fake.py" "$1" "$2" "$tmp/rules.json" 2>>"$tmp/fake.err" &
    pids+=($!)
    for _ in $(seq 100); do
        [ -S "$1" ] && return 0
        sleep 0.05
    done
    fail "the fake pacer did not start on $1: $(cat "$tmp/fake.err")"
}

# run WANT-STATUS ARGS...: pacerctl ARGS, stdout in $tmp/o, stderr in $tmp/e
run() {
    local want=$1 rc=0
    shift
    "$ctl" "$@" >"$tmp/o" 2>"$tmp/e" || rc=$?
    [ "$rc" = "$want" ] ||
        fail "pacerctl $*: exit $rc, want $want; stdout: $(head -c 300 "$tmp/o"); stderr: $(head -c 300 "$tmp/e")"
}

# has FILE TEXT: FILE contains TEXT
has() {
    grep -qF -- "$2" "$1" || fail "$1 lacks '$2': $(head -c 500 "$1")"
}

# sent [CONN-COUNT] LINE...: the fake got exactly these lines, since the log
# was emptied, over CONN-COUNT connections (1 when not given as a number)
sent() {
    python3 - "$tmp/log" "$@" <<'PY'
import json, os, sys
path, want = sys.argv[1], [os.fsencode(w).decode("latin-1") for w in sys.argv[2:]]
conns = 1
if want and want[0].isdigit():
    conns, want = int(want[0]), want[1:]
got = [json.loads(l) for l in open(path)]
lines = [g["line"] for g in got]
if lines != want:
    sys.exit("FAIL: the fake got %r, want %r" % ([l[:80] for l in lines], want))
if len(set(g["conn"] for g in got)) != (conns if want else 0):
    sys.exit("FAIL: over connections %r, want %d" % ([g["conn"] for g in got], conns))
PY
}

sock=$tmp/s.sock
: >"$tmp/log"
echo '{}' >"$tmp/rules.json"
start_fake "$sock" "$tmp/log"
# one for a socket closed to the user (3.), one for --file-prefix (5.)
mkdir -m 755 "$tmp/perm" "$tmp/xdg" "$tmp/xdg/dpdk" "$tmp/xdg/dpdk/pfx"
start_fake "$tmp/perm/p.sock" "$tmp/perm.log"
start_fake "$tmp/xdg/dpdk/pfx/pacer.sock" "$tmp/pfx.log"

# 1. a reply of any size, as long as it keeps coming
part_big() {
    local t0 t1
    t0=$(date +%s.%N)
    run 0 -s "$sock" -t 1 big 50000000 3
    t1=$(date +%s.%N)
    python3 "$tmp/fake.py" pattern 50000000 | cmp -s - "$tmp/o" ||
        fail "the 50 MB reply is not what was sent ($(wc -c <"$tmp/o") bytes)"
    [ ! -s "$tmp/e" ] || fail "50 MB reply: stderr: $(head -c 300 "$tmp/e")"
    python3 -c 'import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) > 2 else 1)' \
        "$t0" "$t1" || fail "the 50 MB reply came in under 2 s: not a test of -t 1"
    echo "ok: a 50 MB reply over $(python3 -c "print('%.1f' % ($t1 - $t0))") s with -t 1, byte for byte"
    # ... while one that stops is given up after -t of silence
    t0=$(date +%s.%N)
    run 2 -s "$sock" -t 1 stall
    t1=$(date +%s.%N)
    has "$tmp/e" "1 s"
    python3 -c 'import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) < 5 else 1)' \
        "$t0" "$t1" || fail "a stalled reply was not given up within 5 s under -t 1"
    echo "ok: a reply that stops -> exit 2 after -t 1: $(head -n 1 "$tmp/e")"
}

# 2. --json is one valid JSON document, whatever the bytes
part_json() {
    python3 - "$ctl" "$sock" "$tmp/rules.json" <<'PY'
import json, subprocess, sys
ctl, sock, rules = sys.argv[1:4]

def ctl_json(*words, want_rc=0):
    r = subprocess.run([ctl, "-s", sock, "--json"] + list(words), capture_output=True, timeout=20)
    if r.returncode != want_rc:
        sys.exit("FAIL: pacerctl --json %r: exit %d, want %d: %r" % (words, r.returncode, want_rc, r.stderr))
    try:
        text = r.stdout.decode("utf-8")          # strict: invalid UTF-8 fails here
        d = json.loads(text)
    except ValueError as e:
        sys.exit("FAIL: pacerctl --json %r: not JSON (%s): %r" % (words, e, r.stdout[:300]))
    if any(b < 0x20 or b == 0x7f for b in r.stdout[:-1]) or not r.stdout.endswith(b"\n"):
        sys.exit("FAIL: pacerctl --json %r: a raw control character: %r" % (words, r.stdout[:300]))
    return d, r.stdout

F = "\ufffd"
cases = [                                   # reply bytes -> the "output" string
    (b"a\xffb", "a" + F + "b"),
    (b"\xc0\x80", F * 2),                   # overlong NUL
    (b"\xe0\x80\xaf", F * 3),               # overlong '/'
    (b"\xf0\x82\x82\xac", F * 4),           # overlong euro sign
    (b"\xed\xa0\x80", F * 3),               # a surrogate
    (b"\xf4\x90\x80\x80", F * 4),           # past U+10FFFF
    (b"\xf8\x88\x80\x80\x80", F * 5),       # no such lead byte
    (b"x\xe2\x82", "x" + F * 2),            # cut short at the end
    (b"\xe2\x82y", F * 2 + "y"),            # cut short before ASCII
    (b"\x80\xbf", F * 2),                   # stray continuation bytes
    (b"q\"b\\s/\x01\x08\x0c\n\r\t\x1b\x1f\x7f.", "q\"b\\s/\x01\x08\x0c\n\r\t\x1b\x1f\x7f."),
]
for raw, want in cases:
    d, _ = ctl_json("hex", raw.hex())
    if d != {"command": "hex " + raw.hex(), "ok": True, "output": want}:
        sys.exit("FAIL: reply %r: got %r, want output %r" % (raw, d, want))
# valid UTF-8, up to U+10FFFF and U+FFFD itself, goes out as it is
text = "caf\u00e9 \u20ac \u4e2d\u6587 \U0001f600 \U0010ffff \ufffd \u00a0"
d, out = ctl_json("echo", text)
if d != {"command": "echo " + text, "ok": True, "output": text + "\n"} or \
        out.count(text.encode()) != 2:
    sys.exit("FAIL: valid UTF-8 did not round-trip: %r" % out)
# the command's own bytes, not only the reply's (echo sends them back)
for raw, want in [(b"\xff", F), (b"\xc0\x80", F * 2), (b"\xed\xa0\x80", F * 3),
                  (b"\xe2\x82", F * 2), (b"\x01\x1f\x7f", "\x01\x1f\x7f")]:
    d, _ = ctl_json(b"echo", b"<" + raw + b">")
    if d != {"command": "echo <" + want + ">", "ok": True, "output": "<" + want + ">\n"}:
        sys.exit("FAIL: command %r: got %r" % (raw, d))
# a failed command: the wrapper, ok false, exit 1
d, _ = ctl_json(b"fail", b"\xff", want_rc=1)
if d != {"command": "fail " + F, "ok": False, "output": "error: " + F + "\n"}:
    sys.exit("FAIL: failed command: %r" % d)
# show stats: the server's document as it is when it worked ...
r = subprocess.run([ctl, "-s", sock, "--json", "show", "stats"], capture_output=True, timeout=20)
if r.returncode != 0 or r.stdout != b'{\n  "ports": [\n    {"port": 0, "name": "a b"}\n  ],\n  "mempool_in_use": 7\n}\n':
    sys.exit("FAIL: show stats --json changed the document: %r %r" % (r.returncode, r.stdout))
# ... the wrapper on stdout when it failed
with open(rules, "w") as f:
    json.dump({"show stats json": {"out": "error: no snapshot: the workers did not answer\n",
                                   "status": "error"}}, f)
try:
    d, _ = ctl_json("show", "stats", want_rc=1)
finally:
    with open(rules, "w") as f:
        f.write("{}")
if d != {"command": "show stats json", "ok": False,
         "output": "error: no snapshot: the workers did not answer\n"}:
    sys.exit("FAIL: failed show stats --json: %r" % d)
print("ok: --json: %d invalid or escaped replies, invalid commands, valid UTF-8 as it is, "
      "failed show stats wrapped" % len(cases))
PY
}

# as_user CMD...: CMD as nobody when we are root, else as ourselves
as_user() {
    if [ "$(id -u)" != 0 ]; then
        "$@"
    elif command -v setpriv >/dev/null; then
        setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
    else
        runuser -u nobody -- "$@"
    fi
}

# 3. why connect() failed
part_connect() {
    local rc=0 mode=600
    run 2 -s "$tmp/nosuch.sock" show config
    has "$tmp/e" "$tmp/nosuch.sock: no such socket: is pacer running, with this --file-prefix or --control-socket?"
    echo "ok: no socket -> $(cat "$tmp/e")"

    # a socket file left behind, nobody listening
    python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/dead.sock"
    run 2 -s "$tmp/dead.sock" show config
    has "$tmp/e" "$tmp/dead.sock: nobody listens on it (a pacer that died left it?)"
    echo "ok: nobody listening -> $(cat "$tmp/e")"

    # a socket closed to this user: root's, mode 600, asked as nobody (or
    # our own at mode 000, asked as ourselves)
    chmod 666 "$tmp/perm/p.sock"
    as_user "$ctl" -s "$tmp/perm/p.sock" show config >"$tmp/o" 2>"$tmp/e" ||
        fail "a socket open to all, as $(as_user id -un): $(cat "$tmp/e")"
    [ "$(id -u)" = 0 ] || mode=000
    chmod "$mode" "$tmp/perm/p.sock"
    as_user "$ctl" -s "$tmp/perm/p.sock" show config >"$tmp/o" 2>"$tmp/e" || rc=$?
    [ "$rc" = 2 ] || fail "a socket closed to $(as_user id -un): exit $rc, want 2: $(cat "$tmp/e")"
    has "$tmp/e" "$tmp/perm/p.sock: permission denied: the socket is mode 0$mode, owner $(id -un), group $(id -gn)"
    has "$tmp/e" "run pacerctl as root, or as a member of its group"
    has "$tmp/e" "--control-socket-mode"
    has "$tmp/e" "--control-socket-owner"
    ! grep -q "is pacer running" "$tmp/e" || fail "a permission problem reads as a missing pacer: $(cat "$tmp/e")"
    echo "ok: a socket closed to $(as_user id -un) -> $(cat "$tmp/e")"

    # ... or the directory it is in
    chmod 666 "$tmp/perm/p.sock"
    [ "$(id -u)" = 0 ] && mode=700 || mode=000
    chmod "$mode" "$tmp/perm"
    rc=0
    as_user "$ctl" -s "$tmp/perm/p.sock" show config >"$tmp/o" 2>"$tmp/e" || rc=$?
    chmod 755 "$tmp/perm"
    [ "$rc" = 2 ] || fail "a directory closed to $(as_user id -un): exit $rc, want 2: $(cat "$tmp/e")"
    has "$tmp/e" "$tmp/perm/p.sock: permission denied: its directory $tmp/perm is mode 0$mode"
    echo "ok: a directory closed to $(as_user id -un) -> $(cat "$tmp/e")"
}

# 4. -f FILE: commands over one connection
part_file() {
    local long
    cat >"$tmp/cmds" <<'EOF'
# set up
echo one

    # indented comment
fail two
echo three
EOF
    : >"$tmp/log"
    run 1 -s "$sock" -f "$tmp/cmds"
    sent "echo one" "fail two" "echo three"
    [ "$(cat "$tmp/o")" = "$(printf 'one\nthree')" ] || fail "-f: stdout: $(cat "$tmp/o")"
    [ "$(cat "$tmp/e")" = "pacerctl: $tmp/cmds:5: error: two" ] || fail "-f: stderr: $(cat "$tmp/e")"
    echo "ok: -f: 3 commands over one connection, in order, exit 1: $(cat "$tmp/e")"

    : >"$tmp/log"
    run 1 -s "$sock" -e -f "$tmp/cmds"
    sent "echo one" "fail two"
    [ "$(cat "$tmp/o")" = one ] || fail "-e -f: stdout: $(cat "$tmp/o")"
    has "$tmp/e" "pacerctl: $tmp/cmds:5: error: two"
    echo "ok: -e -f: stops at line 5, the rest not sent"

    : >"$tmp/log"
    printf 'echo a\r\n\n#x\necho b\n' | "$ctl" -s "$sock" --err-exit --file - >"$tmp/o" 2>"$tmp/e" ||
        fail "-f -: exit $?: $(cat "$tmp/e")"
    sent "echo a" "echo b"
    [ "$(cat "$tmp/o")" = "$(printf 'a\nb')" ] || fail "-f -: stdout: $(cat "$tmp/o")"
    printf 'echo a\nfail b\n' | "$ctl" -s "$sock" -f - >"$tmp/o" 2>"$tmp/e" && fail "-f - with a failure: exit 0"
    [ "$(cat "$tmp/e")" = "pacerctl: stdin:2: error: b" ] || fail "-f -: stderr: $(cat "$tmp/e")"
    echo "ok: -f - (stdin), CRLF: $(cat "$tmp/e")"

    # --json: one document a line, the statistics document on one line too
    printf 'echo one\nfail \xff\nshow stats\nhex c080\n' >"$tmp/jcmds"
    : >"$tmp/log"
    run 1 -s "$sock" --json -f "$tmp/jcmds"
    [ ! -s "$tmp/e" ] || fail "--json -f: stderr: $(cat "$tmp/e")"
    python3 - "$tmp/o" <<'PY'
import json, sys
raw = open(sys.argv[1], "rb").read()
lines = raw.decode("utf-8").split("\n")
want = [{"command": "echo one", "ok": True, "output": "one\n"},
        {"command": "fail \ufffd", "ok": False, "output": "error: \ufffd\n"},
        {"ports": [{"port": 0, "name": "a b"}], "mempool_in_use": 7},
        {"command": "hex c080", "ok": True, "output": "\ufffd\ufffd"}]
got = [json.loads(l) for l in lines[:-1]]
if lines[-1] != "" or got != want:
    sys.exit("FAIL: --json -f: not JSON Lines of %r: %r" % (want, raw[:500]))
PY
    sent "echo one" "fail $(printf '\xff')" "show stats json" "hex c080"
    echo "ok: --json -f: JSON Lines, 4 documents"

    # a bad line anywhere: nothing sent, each bad line told, exit 2
    long=$(head -c 1025 /dev/zero | tr '\0' x)
    printf 'echo one\n%s\nshow stats\necho %s\n' "${long:0:1024}" "$long" >"$tmp/bad"
    : >"$tmp/log"
    run 2 -s "$sock" -f "$tmp/bad"
    sent
    has "$tmp/e" "pacerctl: $tmp/bad:3: show stats takes --json or --prometheus"
    has "$tmp/e" "pacerctl: $tmp/bad:4: the command is longer than 1024 bytes"
    ! grep -q ":2:" "$tmp/e" || fail "a line of 1024 bytes was refused: $(cat "$tmp/e")"
    [ ! -s "$tmp/o" ] || fail "a bad file printed: $(head -c 200 "$tmp/o")"
    # ... while a line of exactly 1024 bytes goes out whole
    printf '%s\n' "${long:0:1024}" >"$tmp/max"
    run 0 -s "$sock" -f "$tmp/max"
    sent "${long:0:1024}"
    echo "ok: a bad file (line 3: show stats, line 4: 1030 bytes) sends nothing, exit 2"

    : >"$tmp/log"
    run 2 -s "$sock" -f "$tmp/cmds" echo one
    has "$tmp/e" "no COMMAND words beside it"
    run 2 -s "$sock" -f "$tmp/nosuch"
    has "$tmp/e" "$tmp/nosuch: No such file or directory"
    sent
    echo "ok: -f with COMMAND words, -f with no file -> exit 2, nothing sent"
}

# 5. PACER_SOCKET, below -s and --file-prefix
part_env() {
    : >"$tmp/log"
    PACER_SOCKET=$sock run 0 echo from the environment
    [ "$(cat "$tmp/o")" = "from the environment" ] || fail "PACER_SOCKET: $(cat "$tmp/o")"
    PACER_SOCKET=$tmp/nosuch.sock run 0 -s "$sock" echo from the option
    sent 2 "echo from the environment" "echo from the option"
    echo "ok: PACER_SOCKET, and -s over it"
    # --file-prefix over it: its socket under $XDG_RUNTIME_DIR, asked as
    # nobody when we are root (root's is under /var/run); PACER_SOCKET
    # names the other fake, which would answer too
    chmod 666 "$tmp/xdg/dpdk/pfx/pacer.sock" "$sock"
    as_user env XDG_RUNTIME_DIR="$tmp/xdg" PACER_SOCKET="$sock" "$ctl" --file-prefix pfx \
        echo from the prefix >"$tmp/o" 2>"$tmp/e" || fail "--file-prefix over PACER_SOCKET: $(cat "$tmp/e")"
    chmod 755 "$sock"
    [ "$(cat "$tmp/o")" = "from the prefix" ] || fail "--file-prefix over PACER_SOCKET: $(cat "$tmp/o")"
    grep -q "from the prefix" "$tmp/pfx.log" || fail "--file-prefix: its socket did not get the command"
    ! grep -q "from the prefix" "$tmp/log" || fail "--file-prefix: PACER_SOCKET's socket got the command"
    echo "ok: --file-prefix over PACER_SOCKET"
}

# what stays as it was
part_kept() {
    : >"$tmp/log"
    run 0 -s "$sock" set port 1 rate 50mbit
    [ "$(cat "$tmp/o")" = "did: set port 1 rate 50mbit" ] || fail "stdout: $(cat "$tmp/o")"
    run 1 -s "$sock" fail nope
    [ "$(cat "$tmp/e")" = "error: nope" ] && [ ! -s "$tmp/o" ] || fail "a failed command: $(cat "$tmp/o" "$tmp/e")"
    run 0 -s "$sock" show stats --prometheus
    [ "$(cat "$tmp/o")" = "pacer_tx_packets 1" ] || fail "--prometheus: $(cat "$tmp/o")"
    run 0 -s "$sock" -- echo -x
    sent 4 "set port 1 rate 50mbit" "fail nope" "show stats prometheus" "echo -x"
    : >"$tmp/log"
    run 2 -s "$sock" show stats
    run 2 -s "$sock" --prometheus show class
    run 2 -s "$sock"
    run 2 -s "$sock" -t 0 echo x
    run 2 -s "$sock" echo "$(head -c 1020 /dev/zero | tr '\0' x)"
    run 2 -s "$sock" hangup
    has "$tmp/e" "connection closed before the reply ended"
    sent "hangup"
    echo "ok: exit status 0/1/2, --prometheus, show stats and usage errors as before"
}

failed=()
for part in part_big part_json part_connect part_file part_env part_kept; do
    rc=0
    set +e
    (
        set -e
        "$part"
    )
    rc=$?
    set -e
    [ "$rc" = 0 ] || failed+=("$part")
done
if [ ${#failed[@]} -ne 0 ]; then
    echo "FAIL: ${failed[*]}" >&2
    exit 1
fi
echo "ok: pacerctl: big replies, --json, connect errors, -f, PACER_SOCKET"
