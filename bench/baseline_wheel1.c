/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Single-level timing wheel. Time is counted in ticks of one granularity
 * since the epoch; the tick is computed with a precomputed reciprocal, as
 * in lib/wheel, so the comparison is about the data structure and not about
 * a division. Slot i holds the packets of every tick t with
 * t % nslots == i; as the horizon is below nslots ticks, a slot holds one
 * tick's packets at a time.
 */

#include <stddef.h>

#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>
#include <rte_reciprocal.h>

#include "baseline_wheel1.h"

struct wheel1_slot {
	struct rte_mbuf *head;
	struct rte_mbuf *tail;
};

struct bl_wheel1 {
	uint64_t epoch_tsc;
	struct rte_reciprocal_u64 granularity_recip;
	uint64_t granularity_tsc;
	uint64_t horizon_ticks;
	uint64_t mask;
	uint64_t cur_tick;
	uint64_t count;
	uint64_t late;
	uint64_t horizon_cap;
	int dynfield_offset;
	struct wheel1_slot *slots;
};

struct bl_wheel1 *
bl_wheel1_create(const struct bl_wheel1_params *p)
{
	struct bl_wheel1 *w;
	uint64_t nslots, g;

	if (p->tsc_hz == 0 || p->granularity_ns == 0 ||
	    p->horizon_ns < p->granularity_ns)
		return NULL;
	g = (p->granularity_ns * p->tsc_hz + 500000000ULL) / 1000000000ULL;
	if (g == 0)
		g = 1;
	w = rte_zmalloc("bl_wheel1", sizeof(*w), RTE_CACHE_LINE_SIZE);
	if (w == NULL)
		return NULL;
	w->horizon_ticks =
		(p->horizon_ns + p->granularity_ns - 1) / p->granularity_ns;
	nslots = rte_align64pow2(w->horizon_ticks);
	w->slots = rte_zmalloc("bl_wheel1_slots",
			       (size_t)nslots * sizeof(w->slots[0]),
			       RTE_CACHE_LINE_SIZE);
	if (w->slots == NULL) {
		rte_free(w);
		return NULL;
	}
	w->mask = nslots - 1;
	w->epoch_tsc = p->start_tsc;
	w->granularity_tsc = g;
	w->granularity_recip = rte_reciprocal_value_u64(g);
	w->dynfield_offset = p->dynfield_offset;
	return w;
}

void
bl_wheel1_free(struct bl_wheel1 *w)
{
	if (w == NULL)
		return;
	rte_free(w->slots);
	rte_free(w);
}

static inline uint64_t
wheel1_tick_of(const struct bl_wheel1 *w, uint64_t tsc)
{
	int64_t d = (int64_t)(tsc - w->epoch_tsc);

	return d <= 0 ? 0
		      : rte_reciprocal_divide_u64((uint64_t)d,
						  &w->granularity_recip);
}

unsigned int
bl_wheel1_enqueue_burst(struct bl_wheel1 *w, struct rte_mbuf *const *mbufs,
			const uint64_t *departure_tsc, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct rte_mbuf *m = mbufs[i];
		uint64_t tick = wheel1_tick_of(w, departure_tsc[i]);
		struct wheel1_slot *s;

		if (tick < w->cur_tick) {
			tick = w->cur_tick;
			w->late++;
		} else if (unlikely(tick - w->cur_tick >= w->horizon_ticks)) {
			tick = w->cur_tick + w->horizon_ticks - 1;
			w->horizon_cap++;
		}
		*RTE_MBUF_DYNFIELD(m, w->dynfield_offset, uint64_t *) =
			departure_tsc[i];
		m->next = NULL;
		s = &w->slots[tick & w->mask];
		if (s->head == NULL)
			s->head = m;
		else
			s->tail->next = m;
		s->tail = m;
	}
	w->count += n;
	return n;
}

/* Copy out up to @n packets of the slot at cur_tick. */
static inline unsigned int
wheel1_emit(struct bl_wheel1 *w, struct rte_mbuf **mbufs, unsigned int n)
{
	struct wheel1_slot *s = &w->slots[w->cur_tick & w->mask];
	struct rte_mbuf *m = s->head;
	unsigned int cnt = 0;

	while (m != NULL && cnt < n) {
		struct rte_mbuf *next = m->next;

		m->next = NULL;
		mbufs[cnt++] = m;
		m = next;
	}
	s->head = m;
	if (m == NULL)
		s->tail = NULL;
	return cnt;
}

static unsigned int
wheel1_run(struct bl_wheel1 *w, uint64_t target, struct rte_mbuf **mbufs,
	   unsigned int n)
{
	unsigned int cnt = 0;

	for (;;) {
		cnt += wheel1_emit(w, mbufs + cnt, n - cnt);
		if (cnt == n || w->cur_tick >= target)
			break;
		if (w->count == cnt) {
			/* empty: nothing to walk over */
			w->cur_tick = target;
			break;
		}
		w->cur_tick++;
	}
	w->count -= cnt;
	return cnt;
}

unsigned int
bl_wheel1_dequeue_burst(struct bl_wheel1 *w, uint64_t now_tsc,
			struct rte_mbuf **mbufs, unsigned int n)
{
	return wheel1_run(w, wheel1_tick_of(w, now_tsc), mbufs, n);
}

unsigned int
bl_wheel1_flush(struct bl_wheel1 *w, struct rte_mbuf **mbufs, unsigned int n)
{
	if (w->count == 0)
		return 0;
	return wheel1_run(w, w->cur_tick + w->mask, mbufs, n);
}

uint64_t
bl_wheel1_count(const struct bl_wheel1 *w)
{
	return w->count;
}

uint64_t
bl_wheel1_late(const struct bl_wheel1 *w)
{
	return w->late;
}

uint64_t
bl_wheel1_horizon_cap(const struct bl_wheel1 *w)
{
	return w->horizon_cap;
}

uint64_t
bl_wheel1_nslots(const struct bl_wheel1 *w)
{
	return w->mask + 1;
}

size_t
bl_wheel1_memsize(const struct bl_wheel1 *w)
{
	return sizeof(*w) + (size_t)(w->mask + 1) * sizeof(w->slots[0]);
}
