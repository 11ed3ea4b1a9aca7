/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <string.h>

#include "pcr_lead.h"

/* The lower edge of quarter-octave @p q (q >= 8). */
static uint64_t
qo_edge(unsigned int q)
{
	return (uint64_t)(4 + q % 4) << (q / 4 - 2);
}

void
pcr_lead_init(struct pcr_lead *l, uint64_t floor_tsc, uint64_t cap_tsc,
	      uint64_t win_tsc, uint64_t now)
{
	memset(l, 0, sizeof(*l));
	l->floor_tsc = floor_tsc < 4 ? 4 : floor_tsc;
	l->cap_tsc = cap_tsc;
	l->win_tsc = win_tsc;
	l->win_start = now;
	l->qo0 = pcr_lead_qo(l->floor_tsc);
	l->tsc = l->chosen = cap_tsc;
}

uint64_t
pcr_lead_choose(struct pcr_lead *l, uint64_t now)
{
	uint64_t budget = (now - l->win_start) / PCR_LEAD_BUDGET;
	uint64_t best = l->cap_tsc, n = 0, s = 0;
	int b;

	if (l->floor_tsc >= l->cap_tsc) {
		l->win_start = now;
		return l->tsc = l->chosen = l->cap_tsc;
	}
	/* from the longest lead down: loss(h) grows as h falls, so the
	 * shortest within the budget is where it first exceeds it */
	for (b = PCR_LEAD_BINS - 1; b >= 0; b--) {
		uint64_t h = b == 0 ? l->floor_tsc : qo_edge(l->qo0 + (unsigned int)b);

		n += l->n[b];
		s += l->sum[b];
		if (h >= l->cap_tsc)
			continue;
		if (s - n * h > budget)
			break;
		best = h;
	}
	/* down by at most half a window */
	if (best < l->chosen / 2)
		best = l->chosen / 2;
	if (best < l->floor_tsc)
		best = l->floor_tsc;
	l->tsc = l->chosen = best;
	memset(l->n, 0, sizeof(l->n));
	memset(l->sum, 0, sizeof(l->sum));
	l->win_start = now;
	return best;
}
