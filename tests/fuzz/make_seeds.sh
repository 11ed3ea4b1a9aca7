#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# make_seeds.sh PACER-PCAPGEN [TESTDATA_DIR]
#
# Writes the seed part of tests/fuzz/corpus/ (files named seed-*; the
# reproducers, named crash-* or regress-*, are kept by hand): captures
# from pacer-pcapgen (every --malformed kind, VLAN, QinQ, IPv6, TCP) and
# the first frames of the real captures in TESTDATA_DIR (default
# ../shared/testdata), their frames one per file for the classify
# harnesses, config/pacer.cfg and variants, value and rule strings, CLI
# scripts.
# Deterministic: run it again and git shows no change.
set -euo pipefail

gen=$1
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
data=${2:-$top/../shared/testdata}
c=$here/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for d in classify_frame classify_mbuf values match config pcapstat pcapgen_append policy_time cli; do
    mkdir -p "$c/$d"
    rm -f "$c/$d"/seed-*
done

# captures
i=0
capture() {
    "$gen" -o "$tmp/g$i.pcap" --count 12 --flows 3 --size-min 100 --size-max 300 "$@" 2>/dev/null
    cp "$tmp/g$i.pcap" "$c/pcapstat/seed-gen-$i.pcap"
    i=$((i + 1))
}
capture
capture --proto tcp
capture --ipv6
capture --ipv6 --proto tcp --vlan 10 --qinq 20
capture --vlan 7
for k in short bad-ihl bad-len ipv4-options frag ipv6-ext ipv6-ext-trunc mpls arp; do
    capture --malformed "$k" --malformed-every 2
done
capture --ipv6 --malformed ipv6-ext --malformed ipv6-ext-trunc --malformed frag
"$gen" -o "$tmp/jumbo.pcap" --count 2 --size 9018 --malformed jumbo 2>/dev/null
cp "$tmp/jumbo.pcap" "$c/pcapstat/seed-gen-jumbo.pcap"
# --append reads captures too (nanosecond, Ethernet)
for k in 0 3 5 9 jumbo; do
    cp "$c/pcapstat/seed-gen-$k.pcap" "$c/pcapgen_append/seed-gen-$k.pcap"
done

python3 - "$c" "$tmp" "$data" <<'PY'
import glob, os, struct, sys
c, tmp, data = sys.argv[1:4]

def frames(path):
    b = open(path, "rb").read()
    e = "<" if b[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(b):
        incl = struct.unpack(e + "I", b[off + 8:off + 12])[0]
        out.append((b[off:off + 16], b[off + 16:off + 16 + incl]))
        off += 16 + incl
    return b[:24], out

def write(d, name, blob):
    with open(os.path.join(c, d, name), "wb") as f:
        f.write(blob)

# real captures: the first 24 frames as a small capture, and frames
for p in sorted(glob.glob(os.path.join(data, "*.pcap"))):
    hdr, fr = frames(p)
    base = os.path.basename(p)[:-5]
    write("pcapstat", "seed-%s.pcap" % base,
          hdr + b"".join(h + f for h, f in fr[:24]))
    for k, (_, f) in enumerate(fr[:24]):
        write("classify_frame", "seed-%s-%02d" % (base, k), f)

# a big-endian (byte-swapped) nanosecond capture, as a big-endian host
# writes it: the readers must take both byte orders
def swapped(path):
    hdr, fr = frames(path)
    m, vmaj, vmin, tz, sig, snap, lt = struct.unpack("<IHHiIII", hdr)
    out = struct.pack(">IHHiIII", m, vmaj, vmin, tz, sig, snap, lt)
    for h, f in fr:
        out += struct.pack(">IIII", *struct.unpack("<IIII", h)) + f
    return out

be = swapped(os.path.join(c, "pcapstat", "seed-gen-3.pcap"))
write("pcapstat", "seed-gen-3-be.pcap", be)
write("pcapgen_append", "seed-gen-3-be.pcap", be)

# generated frames: each distinct one (by its first 80 bytes)
seen = set()
n = 0
for p in sorted(glob.glob(os.path.join(tmp, "*.pcap"))):
    for _, f in frames(p)[1]:
        if f[:80] in seen:
            continue
        seen.add(f[:80])
        write("classify_frame", "seed-gen-%03d" % n, f)
        # chains: cut after L2, inside L3, at every 7 bytes
        cuts = [[14], [14, 18, 30], [7, 14, 21, 28, 35, 42, 49], [0, 0, 60]]
        cut = cuts[n % len(cuts)]
        write("classify_mbuf", "seed-gen-%03d" % n,
              bytes([len(cut)]) + b"".join(struct.pack("<H", x) for x in cut) + f)
        n += 1
PY

# configuration files
cp "$top/config/pacer.cfg" "$c/config/seed-pacer.cfg"
printf '[pacer]\nrate = 1gbit\nflow-rate = 10mbit\nburst = 64k\nhorizon = 500\nhorizon-policy = cap\ndrain-on-exit = no\n' >"$c/config/seed-pacer-keys.cfg"
printf '[class video]\nmatch = ipv4 proto udp dport 5000-5100\nrate = 100mbit\nflow-rate = 5mbit\n\n[class ssh]\nmatch = proto tcp dport 22\n\n[default]\n' >"$c/config/seed-classes.cfg"
printf '[class v6]\nmatch = ipv6 src 2001:db8::/32 dst 2001:db8::2\nflow-rate = unlimited\n[port 0]\nrate = 2.5gbit\n[port 1]\nrate = 0\n' >"$c/config/seed-ports.cfg"
printf '[pacer]\norder-guard = 50\norder-guard-frames = 8\n[class rpc]\nmatch = proto tcp dport 8080\norder = completion\n[class default]\norder = fair\n' >"$c/config/seed-order.cfg"
printf '; comment\n# another\n[pacer]\n  slot = 250 \r\nmax-flows=8\nrxd = 32\ntxd = 32768\nstats-json = /dev/null\n' >"$c/config/seed-spacing.cfg"

# value strings: selector byte 0 rate, 1 size, 2 u64 (+16 bytes of bounds)
v=0
for s in 100mbit 2.5gbit 64000 unlimited 0 1bit 400gbit 10tbit 1.5kibit 3mbps 0.001kbit 1e3 .5 10tbit; do
    printf '\x00%s' "$s" >"$c/values/seed-rate-$v"; v=$((v + 1))
done
for s in 1514 64k 1m 1g 1gb 0 18446744073709551615 9b; do
    printf '\x01%s' "$s" >"$c/values/seed-size-$v"; v=$((v + 1))
done
for s in 0 1 250 1000000 18446744073709551615 007; do
    printf '\x02\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff%s' "$s" >"$c/values/seed-u64-$v"
    v=$((v + 1))
done

# match rules, NUL, then a key
m=0
key='\x0a\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x0a\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x10\x27\x51\x14\x04\x11\x00\x00'
while IFS= read -r r; do
    printf '%s\x00'"$key" "$r" >"$c/match/seed-$m"; m=$((m + 1))
done <<'RULES'
any
ipv4 proto udp dport 5201
ipv6 src 2001:db8::/32 dst 2001:db8::2/128 sport 1-1024
proto tcp sport 22 dport 1024-65535
src 10.0.0.0/8 dst 10.0.0.2
proto 47
proto esp src 192.0.2.1/24
ipv4 ipv6
RULES

# policy time: arbitrary bytes, a few shapes
printf '\x00\x5e\xd0\xb2\x00\x1f\xff\xff\xff\xff\x7f\x00\x00\x00\x00\x08\x00\x00\x00\x00\x01\x00\xea\x05\x00\x10\x00\x00\xea\x05\x00\x10\x00\x00' >"$c/policy_time/seed-0"
printf '\x00\xe4\x0b\x54\x02\x26\x00\x00\x00\xff\x00\x00\x00\x10\x00\x00\x00\x01\xff\xff\xff\xff\xff\xff\x3c\x00\x00\x00\x00\x00\xff\xff\x81\x01\x00\x00' >"$c/policy_time/seed-1"
printf '\x00\x10\xa5\xd4\xe8\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x00\x00\xff\xff\x00\x00\x00\x00\xff\xff\x00\x00\x00\x00' >"$c/policy_time/seed-2"
# CLI scripts (a command per line): every command of cli.c, good and bad
k=0
script() {
    printf '%s\n' "$@" >"$c/cli/seed-$k"
    k=$((k + 1))
}
script start stop stop start quit
script "show port stats all" "show port stats 1" "show port xstats 0" "clear port stats all" "clear port stats 0" "show port stats 2"
script "show wheel all" "show wheel 0" "show class" "show config" "show clock" "show flows" "show flows top 5" "show flows top 3 by rate" "show flows top 0"
script "set port 0 rate 10mbit" "set port 1 rate unlimited" "set port 2 rate 1gbit" "set port 0 rate fast" "show config"
script "set class video rate 5mbit" "set class bulk flow-rate 1.5mbit" "set class default rate 400gbit" "set class nope rate 1mbit" "set class video flow-rate 10tbit"
script "add class ssh match proto tcp dport 22 rate 1mbit flow-rate 100kbit" "add class v6 match ipv6 src 2001:db8::/32" "add class ssh match any" "add class x match" "add class y match proto udp rate" "add class z match proto tcp flow-rate 1mbit rate 2mbit extra" "show class"
script "del class video" "del class video" "del class default" "add class video match proto udp" "set class video rate 3mbit" "del class bulk" "show class"
script "set horizon 500 policy cap" "set horizon 0 policy drop" "set horizon 60000 policy drop" "set horizon 60001 policy cap" "set horizon 10 policy maybe"
script "set flow-limit 100" "set flow-limit 0" "set flow-limit 4294967296" "set flow-limit -1"
script "save config /tmp/pacer.cfg" "save config /nonexistent/pacer.cfg" "sleep 10" "sleep 3600001" "help"
script "add class a1 match proto udp dport 1" "add class a2 match proto udp dport 2" "add class a3 match proto udp dport 3" "add class a4 match proto udp dport 4" "add class a5 match proto udp dport 5" "add class a6 match proto udp dport 6" "del class a1" "del class a2" "add class a7 match proto tcp sport 1-1024 rate 1kbit"
script "set class video rate 0" "set port 0 rate 0" "set class bulk flow-rate unlimited" "# a comment" "" "   show config  " "show" "set" "add class" "del"
script "set class default order completion" "set class video order fair" "set class video order soon" "add class rpc match proto tcp dport 8080 order completion" "add class r2 match any order" "show class" "show config"

echo "seeds: $(find "$c" -name 'seed-*' | wc -l) files in $c" >&2
