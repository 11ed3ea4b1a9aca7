/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <errno.h>

#include <rte_cycles.h>

#include "pcr_clock.h"

static uint64_t clock_tsc_hz;

int
pcr_clock_init(void)
{
	clock_tsc_hz = rte_get_tsc_hz();
	return clock_tsc_hz != 0 ? 0 : -ENODEV;
}

uint64_t
pcr_clock_tsc_hz(void)
{
	return clock_tsc_hz != 0 ? clock_tsc_hz : rte_get_tsc_hz();
}

uint64_t
pcr_clock_tsc_hz_eal(void)
{
	return rte_get_tsc_hz();
}

uint64_t
pcr_clock_cycles_to_ns(uint64_t cycles)
{
	return (uint64_t)((unsigned __int128)cycles * 1000000000u /
			  pcr_clock_tsc_hz());
}

uint64_t
pcr_clock_ns_to_cycles(uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * pcr_clock_tsc_hz() /
			  1000000000u);
}
