#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# quickstart.sh demo|test|sanitize|fuzz|build|deps
#
# Installs what pacer needs on Debian 12 (apt-get, non-interactive,
# idempotent: nothing is installed when everything is present), configures
# and builds into ./build if needed, then:
#   demo      runs the main job (see README.md)
#   test      runs the whole test suite (meson test) in ./build, then
#             sanitize and fuzz below (what CI runs)
#   sanitize  the whole suite again in ./build-asan: gcc with
#             -fsanitize=address,undefined (leaks and UB are errors)
#   fuzz      each libFuzzer harness (tests/fuzz) for PACER_FUZZ_SECONDS
#             (default 45) in ./build-fuzz: clang, ASan + UBSan
# See docs/RELIABILITY.md.
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
builddir=${PACER_BUILDDIR:-$top/build}
asandir=${PACER_ASAN_BUILDDIR:-$top/build-asan}
fuzzdir=${PACER_FUZZ_BUILDDIR:-$top/build-fuzz}
fuzz_seconds=${PACER_FUZZ_SECONDS:-45}
san_args=(-Db_sanitize=address,undefined -Db_lundef=false
          "-Dc_args=-fno-sanitize-recover=all -fno-omit-frame-pointer")

# dpdk-dev, not dpdk, holds dpdk-telemetry.py (the telemetry test's
# client) and dpdk-testpmd (bench/run.sh's baseline) in bookworm.
# libjansson-dev: lib/isp reads LibreQoS's network.json with it (libdpdk-dev
# depends on it today; named so that it stays when that changes).
pkgs=(gcc libc6-dev pkg-config meson ninja-build python3
      libdpdk-dev dpdk dpdk-dev libnuma-dev libpcap-dev libcmocka-dev
      libjansson-dev
      tcpdump iproute2 ethtool iperf3 iputils-ping procps
      clang libclang-rt-14-dev)

deps() {
    local missing=() p
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
            grep -q "ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "quickstart: missing packages: ${missing[*]} (run as root to install)" >&2
        exit 1
    fi
    echo "quickstart: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

build() {
    deps
    if [ ! -f "$builddir/build.ninja" ]; then
        meson setup "$builddir" --buildtype=debugoptimized --werror >&2
    fi
    ninja -C "$builddir" >&2
}

# The sanitizer build: DPDK's shared libraries are not instrumented, ours
# are; -Db_lundef=false because the sanitizer runtimes resolve at load.
build_asan() {
    deps
    if [ ! -f "$asandir/build.ninja" ]; then
        CC=gcc meson setup "$asandir" --buildtype=debugoptimized --werror \
            "${san_args[@]}" >&2
    fi
    ninja -C "$asandir" >&2
}

build_fuzz() {
    deps
    if [ ! -f "$fuzzdir/build.ninja" ]; then
        CC=clang meson setup "$fuzzdir" --buildtype=debugoptimized --werror \
            -Dfuzz=enabled "${san_args[@]}" >&2
    fi
    meson configure "$fuzzdir" -Dfuzz_seconds="$fuzz_seconds" >&2
    ninja -C "$fuzzdir" >&2
}

# Timing tests run alone anyway; one process keeps the instrumented
# (slower) binaries off each other's CPU.
sanitize() {
    build_asan
    # all but the wire suite: its checks are rates on a real TCP path, and
    # an instrumented pacer is slower than the 100 mbit/s UDP flood it is
    # given (measured: 92.7 of 100 mbit/s delivered, every drop counted);
    # it runs uninstrumented in the first stage
    meson test -C "$asandir" --print-errorlogs --num-processes 1 --no-suite wire
}

fuzz() {
    build_fuzz
    # the corpus replays too: clang's LeakSanitizer sees what gcc's misses
    meson test -C "$fuzzdir" --suite fuzz-replay --suite fuzz --print-errorlogs \
        --num-processes 1
    cat "$fuzzdir"/tests/fuzz/run/*/summary
}

case "${1:-}" in
deps)
    deps
    ;;
build)
    build
    ;;
demo)
    build
    exec "$top/tools/demo.sh" "$builddir"
    ;;
test)
    build
    meson test -C "$builddir" --print-errorlogs
    sanitize
    fuzz
    ;;
sanitize)
    sanitize
    ;;
fuzz)
    fuzz
    ;;
*)
    echo "usage: $0 demo|test|sanitize|fuzz|build|deps" >&2
    exit 2
    ;;
esac
