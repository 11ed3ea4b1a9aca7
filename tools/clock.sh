# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
#
# Sourced by tools/wire-test.sh and tests/pacer/lib.sh: kernel capture
# timestamps against pacer's clock. The kernel stamps captured frames with
# CLOCK_REALTIME, which time synchronisation may slew (NTP up to 500 ppm;
# measured on a VM here: +5000 ppm for a while), while pacer's TSC is
# measured against CLOCK_MONOTONIC_RAW. Take a pair before and after a
# capture; realtime_scale gives the factor that turns the capture's times
# into MONOTONIC_RAW's (pacer-pcapstat --time-scale, lib.sh ls_rate).

# clock_pair: "REALTIME MONOTONIC_RAW" now, in seconds
clock_pair() {
    python3 -c 'import time; print(repr(time.clock_gettime(time.CLOCK_REALTIME)), repr(time.clock_gettime(time.CLOCK_MONOTONIC_RAW)))'
}

# realtime_scale "PAIR BEFORE" "PAIR AFTER": the factor taking CLOCK_REALTIME
# intervals to CLOCK_MONOTONIC_RAW ones over that span (1 when not slewed)
realtime_scale() {
    python3 -c 'import sys; a, b = map(float, sys.argv[1].split()); c, d = map(float, sys.argv[2].split()); print(repr((d - b) / (c - a)))' "$1" "$2"
}
