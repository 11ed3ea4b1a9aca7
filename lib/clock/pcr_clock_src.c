/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The raw clock reads, alone in their own object so that a test can
 * replace them at link time (-Wl,--wrap=pcr_clock_src_tsc, ...) and drive
 * lib/clock with clocks it knows.
 */

#include <errno.h>
#include <time.h>

#include <rte_cycles.h>

#include "pcr_clock.h"

uint64_t
pcr_clock_src_tsc(void)
{
	return rte_rdtsc_precise();
}

uint64_t
pcr_clock_src_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
pcr_clock_src_sleep_ns(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / 1000000000u),
		.tv_nsec = (long)(ns % 1000000000u),
	};

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
