#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# demo.sh BUILDDIR: the main job. Until the appliance lands this runs the
# timing wheel benchmark (pacer-bench-wheel) and prints its table.
set -euo pipefail
builddir=${1:-build}
exec "$builddir/bench/pacer-bench-wheel"
