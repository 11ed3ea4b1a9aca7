#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# quickstart.sh demo|test|build|deps
#
# Installs what pacer needs on Debian 12 (apt-get, non-interactive,
# idempotent: nothing is installed when everything is present), configures
# and builds into ./build if needed, then:
#   demo  runs the main job (see README.md)
#   test  runs the whole test suite (meson test)
set -euo pipefail

cd "$(dirname "$0")/.."
top=$PWD
builddir=${PACER_BUILDDIR:-$top/build}

pkgs=(gcc libc6-dev pkg-config meson ninja-build python3
      libdpdk-dev dpdk libnuma-dev libpcap-dev libcmocka-dev
      tcpdump iproute2 ethtool iperf3 iputils-ping procps)

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
    exec meson test -C "$builddir" --print-errorlogs
    ;;
*)
    echo "usage: $0 demo|test|build|deps" >&2
    exit 2
    ;;
esac
