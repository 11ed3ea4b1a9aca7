/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_RANK_H
#define PCR_RANK_H

/**
 * @file
 * Completion-time order: which held flow to stamp next when the aim is that
 * transactions finish early, not that flows share evenly (issue 18).
 *
 * Why. With fair sharing, two transactions that arrive together interleave
 * and both finish at the end; sent one after the other, the first finishes
 * in half the time and the second no later. Shortest remaining processing
 * time (SRPT) is the optimum for the mean completion time, but a bump in
 * the wire does not know a transaction's size. What it knows is how much a
 * flow has sent in its current transaction (its attained service, a) and,
 * from the transactions it has seen complete, the distribution of sizes.
 * The Gittins index is the optimal priority for that knowledge (Gittins
 * 1989; Scully, Harchol-Balter et al., "SOAP", 2018):
 *
 *     G(a) = max over b > a of  P(a < S <= b) / E[min(S, b) - a; S > a]
 *
 * the best rate at which service spent on the flow, up to some further
 * point b, buys completion probability. Serve the flow with the highest
 * index. With sizes all equal it serves the flow nearest to completion
 * (SRPT); with heavy-tailed sizes it serves the youngest flows first (least
 * attained service); in between it mixes both, as the distribution says.
 *
 * Shape. Sizes are learned per class as a log2 histogram of completed
 * transactions (octave k: [2^k, 2^(k+1)) bytes; within an octave taken as
 * uniform over its bytes). The index is computed at the start of each
 * quarter of an octave of attained service (bin 1 + 4k + q covers
 * [2^k (1 + q/4), 2^k (1 + (q+1)/4)); bin 0 is 0 bytes) and quantised into
 * levels a quarter-octave of the index apart, the best index at level
 * PCR_RANK_FIRST: a table of one byte per bin, so the fast path's rank is
 * a count-leading-zeros and a load, and choosing among held flows is a
 * find-first-set over at most 64 levels. A flow past the largest learned
 * size, and every flow while nothing is learned, is at PCR_RANK_LAST (the
 * order among them is then round robin: fair). Level PCR_RANK_GUARD is
 * above every rank: the starvation guard's (src/dataplane.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Levels a class's held flows are kept in (a 64-bit mask of them). */
#define PCR_RANK_LEVELS 64
/** The starvation guard's level, ahead of every rank. */
#define PCR_RANK_GUARD 0
/** The best rank. */
#define PCR_RANK_FIRST 1
/** Past the largest learned size, nothing learned, and fair order. */
#define PCR_RANK_LAST 63
/** Octaves of transaction size learned: 1 byte to 1 TiB. */
#define PCR_RANK_OCTAVES 40
/** Bins of attained service: 0 bytes, then four per octave. */
#define PCR_RANK_BINS (1 + 4 * PCR_RANK_OCTAVES)

/** Completed transaction sizes, by octave. */
struct pcr_rank_hist {
	uint64_t n[PCR_RANK_OCTAVES];
};

/** A class's levels by bin of attained service. */
struct pcr_rank_table {
	uint8_t level[PCR_RANK_BINS];
};

/** The octave of a transaction of @p bytes (> 0). */
static inline unsigned int
pcr_rank_octave(uint64_t bytes)
{
	unsigned int k = 63u - (unsigned int)__builtin_clzll(bytes | 1);

	return k < PCR_RANK_OCTAVES ? k : PCR_RANK_OCTAVES - 1;
}

/** Count a completed transaction of @p bytes (0: none). One writer; others
 *  may read the counts at any time (relaxed). */
static inline void
pcr_rank_hist_add(struct pcr_rank_hist *h, uint64_t bytes)
{
	uint64_t *n;

	if (bytes == 0)
		return;
	n = &h->n[pcr_rank_octave(bytes)];
	__atomic_store_n(n, *n + 1, __ATOMIC_RELAXED);
}

/** The bin of @p bytes of attained service. */
static inline unsigned int
pcr_rank_bin(uint64_t bytes)
{
	unsigned int k, q;

	if (bytes == 0)
		return 0;
	k = 63u - (unsigned int)__builtin_clzll(bytes);
	if (k >= PCR_RANK_OCTAVES)
		return PCR_RANK_BINS - 1;
	/* the two bits after the leading one: the quarter of the octave */
	q = k >= 2 ? (unsigned int)(bytes >> (k - 2)) & 3 :
		     (unsigned int)(bytes << (2 - k)) & 3;
	return 1 + 4 * k + q;
}

/** The rank of a flow that has sent @p bytes of its transaction. */
static inline unsigned int
pcr_rank_level(const struct pcr_rank_table *t, uint64_t bytes)
{
	return __atomic_load_n(&t->level[pcr_rank_bin(bytes)],
			       __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* Held flows by level                                                  */

/** No flow (an empty level's head, the last flow's link). */
#define PCR_RANK_NONE UINT32_MAX

/** The flows of one level, in order: head first. */
struct pcr_rank_fifo {
	uint32_t head, tail;
};

/**
 * One class's held flows, by level: the best level is the lowest set bit
 * of @p mask. Flows are indexes into the caller's array; each flow's links
 * to the next and the previous flow of its level are uint32_t fields of the
 * caller's per-flow struct (struct pcr_rank_links). A flow is in one level
 * at a time.
 */
struct pcr_rank_set {
	uint64_t mask;
	struct pcr_rank_fifo lv[PCR_RANK_LEVELS];
};

/** Where pcr_rank_*() find a flow's links: flow i's are at
 *  next + i x stride and prev + i x stride. */
struct pcr_rank_links {
	void *next;
	void *prev;
	size_t stride;
};

static inline uint32_t *
pcr_rank_next_(const struct pcr_rank_links *l, uint32_t idx)
{
	return (uint32_t *)(void *)((char *)l->next + (size_t)idx * l->stride);
}

static inline uint32_t *
pcr_rank_prev_(const struct pcr_rank_links *l, uint32_t idx)
{
	return (uint32_t *)(void *)((char *)l->prev + (size_t)idx * l->stride);
}

static inline void
pcr_rank_set_init(struct pcr_rank_set *s)
{
	unsigned int i;

	s->mask = 0;
	for (i = 0; i < PCR_RANK_LEVELS; i++)
		s->lv[i].head = s->lv[i].tail = PCR_RANK_NONE;
}

/** Flow @p idx joins level @p lv, at its end. */
static inline void
pcr_rank_push(struct pcr_rank_set *s, const struct pcr_rank_links *l,
	      unsigned int lv, uint32_t idx)
{
	struct pcr_rank_fifo *q = &s->lv[lv];

	*pcr_rank_next_(l, idx) = PCR_RANK_NONE;
	*pcr_rank_prev_(l, idx) = q->tail;
	if (q->head == PCR_RANK_NONE) {
		q->head = idx;
		s->mask |= UINT64_C(1) << lv;
	} else {
		*pcr_rank_next_(l, q->tail) = idx;
	}
	q->tail = idx;
}

/** Take flow @p idx out of level @p lv, wherever it is there. */
static inline void
pcr_rank_remove(struct pcr_rank_set *s, const struct pcr_rank_links *l,
		unsigned int lv, uint32_t idx)
{
	struct pcr_rank_fifo *q = &s->lv[lv];
	uint32_t nx = *pcr_rank_next_(l, idx), pv = *pcr_rank_prev_(l, idx);

	if (pv == PCR_RANK_NONE)
		q->head = nx;
	else
		*pcr_rank_next_(l, pv) = nx;
	if (nx == PCR_RANK_NONE)
		q->tail = pv;
	else
		*pcr_rank_prev_(l, nx) = pv;
	if (q->head == PCR_RANK_NONE)
		s->mask &= ~(UINT64_C(1) << lv);
}

/** Take level @p lv's head out (the level must not be empty). */
static inline uint32_t
pcr_rank_pop(struct pcr_rank_set *s, const struct pcr_rank_links *l,
	     unsigned int lv)
{
	uint32_t idx = s->lv[lv].head;

	pcr_rank_remove(s, l, lv, idx);
	return idx;
}

/** Level @p lv's head goes to its end. @return false if it is alone. */
static inline bool
pcr_rank_rotate(struct pcr_rank_set *s, const struct pcr_rank_links *l,
		unsigned int lv)
{
	struct pcr_rank_fifo *q = &s->lv[lv];

	if (q->head == q->tail)
		return false;
	pcr_rank_push(s, l, lv, pcr_rank_pop(s, l, lv));
	return true;
}

/** The best level not in @p skip, or -1 if none. */
static inline int
pcr_rank_best(const struct pcr_rank_set *s, uint64_t skip)
{
	uint64_t m = s->mask & ~skip;

	return m != 0 ? __builtin_ctzll(m) : -1;
}

/**
 * After level @p lv's head flow @p idx was stamped a packet of @p bytes:
 * out if it holds no more (@p empty); to the end of level @p next_lv if
 * its rank changed, with a new turn (@p quantum bytes in *@p deficit).
 * Otherwise, at a rank, it keeps the head: the flow a level has begun to
 * serve goes on until its rank changes (among equal transactions, the one
 * ahead finishes first, as SRPT would have it, instead of all of them
 * interleaving to the end). At PCR_RANK_LAST (nothing learned, past the
 * largest learned size, and every flow of a fair class) flows take turns
 * by bytes, *@p deficit a turn: deficit round robin.
 */
static inline void
pcr_rank_served(struct pcr_rank_set *s, const struct pcr_rank_links *l,
		unsigned int lv, uint32_t idx, bool empty, unsigned int next_lv,
		uint32_t bytes, int32_t *deficit, int32_t quantum)
{
	if (empty) {
		pcr_rank_pop(s, l, lv);
		return;
	}
	if (next_lv != lv) {
		pcr_rank_pop(s, l, lv);
		pcr_rank_push(s, l, next_lv, idx);
		*deficit = quantum;
		return;
	}
	if (lv != PCR_RANK_LAST)
		return;
	*deficit -= (int32_t)bytes;
	if (*deficit <= 0) {
		*deficit += quantum;
		pcr_rank_rotate(s, l, lv);
	}
}

/** The least byte count whose bin is @p i or later (PCR_RANK_BINS: past
 *  the last). */
uint64_t pcr_rank_bin_start(unsigned int i);

/**
 * The Gittins index at the start of every bin for the sizes @p h counts
 * (bytes^-1; 0 where no learned size is larger: past the largest).
 * @return false if @p h is empty.
 */
bool pcr_rank_index(const struct pcr_rank_hist *h,
		    double index[PCR_RANK_BINS]);

/**
 * Build @p t from @p h: each bin's index quantised a quarter-octave a
 * level, the best at PCR_RANK_FIRST, none worse than PCR_RANK_LAST - 1;
 * PCR_RANK_LAST past the largest learned size, and everywhere when @p h is
 * empty. Written with relaxed byte stores: RX lcores may read it at the
 * same time (a table half old, half new for a moment ranks a few flows by
 * the old one).
 */
void pcr_rank_table_build(struct pcr_rank_table *t,
			  const struct pcr_rank_hist *h);

/** Every bin at PCR_RANK_LAST: nothing learned. */
void pcr_rank_table_reset(struct pcr_rank_table *t);

#ifdef __cplusplus
}
#endif

#endif /* PCR_RANK_H */
