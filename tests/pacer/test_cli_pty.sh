#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# The interactive prompt driven as a person would, through a
# pseudo-terminal (Python's pty): the prompt appears; `help` lists the
# commands; tab completes `sh` to `show ` and `con` to `config `; a bad
# command and a bad value answer with an error and the prompt comes back;
# `start` starts forwarding (with -i it waits for it) and the capture goes
# through; ctrl-d on an empty line (as `quit`) exits 0 with everything
# accounted for. (`quit` itself: test_cli_script.sh, test_cli_config.sh.)
source "$(dirname "$0")/lib.sh"

"$gen" -o "$tmp/in.pcap" --flows 2 --count 50 --size 200 2>/dev/null
python3 - "$pacer" "$tmp" $(eal "net_pcap0,rx_pcap=$tmp/in.pcap,tx_pcap=$tmp/out.pcap") <<'PY' || fail "see above"
import os, pty, re, select, sys, time
pacer, tmp, eal = sys.argv[1], sys.argv[2], sys.argv[3:]
args = [pacer] + eal + ["--", "-i", "--mbufs", "4096", "--max-flows", "1024",
                        "--flow-rate", "10mbit", "--stats-json", tmp + "/p.json"]
pid, fd = pty.fork()
if pid == 0:
    os.execv(pacer, args)
buf = b""
def strip(b):
    return re.sub(rb"\x1b\[[0-9;]*[A-Za-z]", b"", b).decode(errors="replace")
def expect(pattern, what, timeout=30):
    global buf
    end = time.time() + timeout
    while True:
        m = re.search(pattern, strip(buf), re.S)
        if m:
            buf = b""
            return m
        left = end - time.time()
        if left <= 0:
            print("FAIL: %s: no %r in %r" % (what, pattern, strip(buf)[-2000:]))
            os.kill(pid, 9)
            sys.exit(1)
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                buf += os.read(fd, 65536)
            except OSError:
                pass
def send(s):
    os.write(fd, s.encode())
expect(r"pacer> $", "the first prompt")
send("help\r")
m = expect(r"Commands.*?show flows top N.*?quit:.*pacer> $", "help")
send("sh\t")
expect(r"show $", "tab completion of 'sh'", 10)
send("con\t")
expect(r"config $", "tab completion of 'show con'", 10)
send("\r")
expect(r"\[pacer\].*flow-rate = 10mbit.*\[class default\].*pacer> $", "show config")
send("bogus words\r")
expect(r"Command not found.*pacer> $", "a bad command")
send("set port 0 rate fast\r")
expect(r"error: rate 'fast'.*pacer> $", "a bad value")
send("start\r")
# the change logged (pacer.ctl, the default level) with who asked
expect(r"pacer\.ctl: start \(by prompt\).*Forwarding started.*pacer> $", "start, logged as the prompt's")
time.sleep(0.5)
send("show port stats 0\r")
expect(r"tx_packets: 50 .*pacer> $", "all 50 frames sent")
send("show port stats 7\r")
expect(r"error: port 7.*pacer> $", "a port that does not exist")
send("\x04")  # ctrl-d on an empty line: as quit
end = time.time() + 30
while time.time() < end:
    p, status = os.waitpid(pid, os.WNOHANG)
    if p == pid:
        break
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            os.read(fd, 65536)
        except OSError:
            pass
else:
    print("FAIL: quit did not exit within 30 s")
    os.kill(pid, 9)
    sys.exit(1)
if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
    print("FAIL: quit: exit status %d" % status)
    sys.exit(1)
PY
conserved "$tmp/p.json"
expect "$tmp/p.json" 'd["ports"][0]["tx_packets"] == 50'
echo "ok: prompt, help, tab completion, errors, start, show port stats, ctrl-d -> exit 0"
