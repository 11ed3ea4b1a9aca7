/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_LEAD_H
#define PCR_LEAD_H

/**
 * @file
 * The staging lead, chosen from the gaps the RX loop actually leaves.
 *
 * Why. Under a backlog an RX lcore holds each flow's packets and stamps the
 * next one only a lead H before it can leave (src/dataplane.c, "Per-flow
 * staging"); which flow goes next is chosen then, so the shorter H, the
 * closer the order is to the ideal (issue 18's simulation: mean slowdown
 * of web-search flows 1.4x SRPT's at a short lead, p99 slowdown of flows
 * under 100 KB 2.2 at H = 0, 5.6 at 0.5 ms, 17.9 at 2 ms). But H must cover
 * the time between two passes of the RX loop: when a pass comes more than
 * H after the last, the port's calendar between the last pass's lead and
 * now is gone (a stall: the link idled while packets were held). A fixed H
 * has to be sized for the busiest machine and costs the order everywhere
 * else; measured here, 500 us gave a mean slowdown of 1.69x SRPT's, 100 us
 * 1.27x, with stalls 0.001 % and 0.005 % of the time.
 *
 * Rule. Each window (PCR_LEAD_WINDOW_MS), the gaps between passes longer
 * than the floor are counted in quarter-octave bins, with their sum. The
 * time a lead h would have lost to stalls in the window is exactly
 *
 *     loss(h) = sum over gaps g > h of (g - h)
 *
 * (for h at a bin's lower edge, every gap of that bin and above exceeds it).
 * The next lead is the shortest h (the floor or a bin edge) whose loss is
 * within the budget (PCR_LEAD_BUDGET: a ten-thousandth of the window), else
 * the cap. A gap past the cap (a descheduled lcore) thus brings the cap
 * back: any shorter lead would add cap - h to the stall it causes. The
 * choice falls at most by half a window, so one quiet window does not undo
 * what a busy one showed. Within a window, a gap longer than the lead
 * raises the lead to it (at most the cap) at once, until the window ends:
 * when the machine turns busy, one stall is paid, not a window of them.
 *
 * Bounds. The lead stays within [floor, cap]; with floor >= cap it is the
 * cap, fixed. The stall time it allows beyond the cap's is the budget per
 * window, 0.01 % (issue 18's bound on idle capacity is 0.1 %), plus what
 * a window's rise comes too late for.
 *
 * One state per (RX lcore, egress port), written by that lcore only; no
 * DPDK in here (times are TSC cycles, passed in).
 */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Quarter-octave bins of gaps above the floor: 12 octaves (20 us to 80 ms). */
#define PCR_LEAD_BINS 48
/** The window whose gaps choose the next lead. */
#define PCR_LEAD_WINDOW_MS 100
/** Stall time allowed beyond the cap's, as a fraction 1/PCR_LEAD_BUDGET
 *  of the window. */
#define PCR_LEAD_BUDGET 10000

struct pcr_lead {
	uint64_t tsc;       /**< the lead now */
	uint64_t chosen;    /**< the last window's choice */
	uint64_t floor_tsc; /**< the shortest lead */
	uint64_t cap_tsc;   /**< the longest lead */
	uint64_t win_tsc;   /**< the window's length */
	uint64_t win_start; /**< this window's start */
	unsigned int qo0;   /**< the floor's quarter-octave */
	uint32_t n[PCR_LEAD_BINS];   /**< gaps per bin */
	uint64_t sum[PCR_LEAD_BINS]; /**< their sum */
};

/**
 * Start at the cap (the safe end) with the window starting at @p now.
 * @p floor_tsc is raised to at least 4 cycles; floor >= cap fixes the lead.
 */
void pcr_lead_init(struct pcr_lead *l, uint64_t floor_tsc, uint64_t cap_tsc,
		   uint64_t win_tsc, uint64_t now);

/** Choose the next lead from the window's gaps and start a new window at
 *  @p now. Returns the lead now. */
uint64_t pcr_lead_choose(struct pcr_lead *l, uint64_t now);

/** A gap's quarter-octave: 4 x floor(log2 g) + the next two bits. */
static inline unsigned int
pcr_lead_qo(uint64_t g)
{
	unsigned int o = 63u - (unsigned int)__builtin_clzll(g | 4);

	return 4 * o + (unsigned int)((g >> (o - 2)) & 3);
}

/**
 * Note one gap between passes, @p gap cycles (the caller measured it; a
 * pass that is the first of a staging episode has none), and, once the
 * window is over, choose the next lead. Returns the lead now.
 */
static inline uint64_t
pcr_lead_note(struct pcr_lead *l, uint64_t gap, uint64_t now)
{
	if (gap > l->floor_tsc && l->floor_tsc < l->cap_tsc) {
		unsigned int b = pcr_lead_qo(gap) - l->qo0;

		if (b >= PCR_LEAD_BINS)
			b = PCR_LEAD_BINS - 1;
		l->n[b]++;
		l->sum[b] += gap;
		if (gap > l->tsc)
			l->tsc = gap < l->cap_tsc ? gap : l->cap_tsc;
	}
	if (now - l->win_start >= l->win_tsc)
		return pcr_lead_choose(l, now);
	return l->tsc;
}

#ifdef __cplusplus
}
#endif

#endif /* PCR_LEAD_H */
