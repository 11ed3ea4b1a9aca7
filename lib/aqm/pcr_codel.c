/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * CoDel's control law step (pcr_codel.h): interval / sqrt(count), exactly.
 * Called once a signal (at most one per interval / sqrt(count) a queue):
 * an exact integer square root costs nothing there, and keeps the step the
 * same to the unit wherever it is computed (the model tests hold the
 * state machine to the RFC's pseudocode signal for signal).
 */

#include <math.h>

#include "pcr_codel.h"

/* floor(sqrt(x)) of a 128-bit x whose root fits 64 bits */
static uint64_t
isqrt128(unsigned __int128 x)
{
	uint64_t r = (uint64_t)sqrtl((long double)x);

	/* long double has 64 bits of mantissa: within a unit or two */
	while ((unsigned __int128)r * r > x)
		r--;
	while ((unsigned __int128)(r + 1) * (r + 1) <= x)
		r++;
	return r;
}

uint64_t
pcr_codel_step(uint64_t interval, uint32_t count)
{
	unsigned __int128 i2 = (unsigned __int128)interval * interval;

	if (count <= 1)
		return interval;
	/* floor(sqrt(floor(I^2 / c))) == floor(I / sqrt(c)) */
	return isqrt128(i2 / count);
}
