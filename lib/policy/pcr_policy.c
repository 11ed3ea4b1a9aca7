/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pcr_policy.h"

int
pcr_rate_init(struct pcr_rate *r, uint64_t bps, uint64_t burst_bytes,
	      uint64_t tsc_hz)
{
	unsigned __int128 fpb, burst;

	memset(r, 0, sizeof(*r));
	r->bps = bps;
	r->burst_bytes = burst_bytes;
	if (bps == 0)
		return 0;
	/*
	 * fine units per byte = tsc_hz * 2^FINE * 8 / bps, in 48.16, rounded
	 * up: rounded down, every cost would be short by up to bytes / 2^16
	 * fine units and the policy a little faster than its rate.
	 */
	fpb = (((unsigned __int128)tsc_hz << (PCR_FINE_SHIFT + 3 +
					      PCR_RATE_FRAC)) +
	       bps - 1) / bps;
	if (fpb >> 64)
		return -ERANGE;
	r->fpb = fpb != 0 ? (uint64_t)fpb : 1;
	/*
	 * The burst in 128 bits: 1 GiB at a slow rate is beyond 2^64 fine
	 * units (pcr_rate_cost() would wrap); past the reach, it is capped.
	 */
	burst = ((unsigned __int128)burst_bytes * r->fpb +
		 ((1u << PCR_RATE_FRAC) - 1)) >> PCR_RATE_FRAC;
	r->burst = burst > PCR_POLICY_AHEAD_MAX ? PCR_POLICY_AHEAD_MAX :
						  (uint64_t)burst;
	return 0;
}

