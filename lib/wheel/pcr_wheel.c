/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Hierarchical timing wheel. See pcr_wheel.h for the contract; this file is
 * the consumer side: placement, the inbox, the clock and dequeue here,
 * level 0 and its run in pcr_wheel_l0.h, the far levels and the cascade in
 * pcr_wheel_far.h, all one translation unit so that the compiler inlines
 * across the parts; pcr_wheel_mem.c the cold side (geometry, memory,
 * create and free, the horizon, statistics); pcr_wheel_priv.h the insides
 * they share.
 *
 * Time on the wheel is counted in level-0 ticks since the epoch (the
 * start_tsc given at creation): tick = (tsc - epoch) / granularity_tsc,
 * computed with a precomputed reciprocal, once per packet, when the consumer
 * takes the packet from the inbox. Far-level chunks store the tick, so a
 * cascade never divides and never touches the mbuf.
 *
 * Placement: with cur the wheel's current tick and k = slot_bits, a packet
 * for tick t goes to the lowest level l at which t and cur share every bit
 * above k * (l + 1), in slot (t >> k*l) & mask. So a level-l slot only ever
 * holds packets for one future slot of its parent, and the slot of level
 * l >= 1 that contains cur is always empty: it was cascaded when cur crossed
 * into it. The top level is the exception that makes the horizon work: it
 * is used circularly, which is why horizon < (S - 1) * S^(L-1) ticks.
 * Below the top level a level therefore holds only slots of cur's block at
 * or after cur's own, so its next-event search never wraps.
 *
 * Advancing: the next event is the first set bit ahead of cur on level 0,
 * else on level 1, and so on: events of level l lie before the next
 * boundary of level l + 1, so the lowest non-empty level holds the earliest.
 * The consumer jumps cur straight to that event (an idle gap costs a few
 * word scans), cascades the slots that start there, top level first, and
 * emits the level-0 slot.
 *
 * Level 0 has two containers: per-slot arrays, and the run, one level-1
 * slot's packets counting-sorted by slot when it cascades big (see
 * run_build()); the drain copies ranges of the run (run_drain()).
 */

#include "pcr_wheel_priv.h"

/* --- bitmaps: one bit per slot, one summary bit per 64-slot word ------- */

static inline uint64_t *
level_bitmap(const struct pcr_wheel *w, unsigned int level)
{
	return &w->bitmap[(size_t)level * w->words];
}

static inline void
bit_set(struct pcr_wheel *w, unsigned int level, unsigned int slot)
{
	level_bitmap(w, level)[slot >> 6] |= 1ULL << (slot & 63);
	w->summary[level] |= 1ULL << (slot >> 6);
}

static inline void
bit_clear(struct pcr_wheel *w, unsigned int level, unsigned int slot)
{
	uint64_t *word = &level_bitmap(w, level)[slot >> 6];

	*word &= ~(1ULL << (slot & 63));
	if (*word == 0)
		w->summary[level] &= ~(1ULL << (slot >> 6));
}

static inline bool
bit_test(const struct pcr_wheel *w, unsigned int level, unsigned int slot)
{
	return (level_bitmap(w, level)[slot >> 6] >> (slot & 63)) & 1;
}

/*
 * First set slot of @level at or after @start, not wrapping; nslots when
 * there is none. Two find-first-set at most: the word of @start, then the
 * summary for the next non-empty word.
 */
static inline unsigned int
bitmap_find_next(const struct pcr_wheel *w, unsigned int level,
		 unsigned int start)
{
	const uint64_t *bm = level_bitmap(w, level);
	unsigned int wi;
	uint64_t word, sum;

	if (start >= w->nslots)
		return w->nslots;
	wi = start >> 6;
	word = bm[wi] & (~0ULL << (start & 63));
	if (word != 0)
		return (wi << 6) + __builtin_ctzll(word);
	sum = w->summary[level] & (~1ULL << wi);
	if (sum == 0)
		return w->nslots;
	wi = __builtin_ctzll(sum);
	return (wi << 6) + __builtin_ctzll(bm[wi]);
}

/*
 * Consumer counters (struct wheel_ccounters *c below, which is &w->c)
 * change only inside the seqcount's write section that spans each call,
 * so readers see all of a call or none. The consumer is their only
 * writer: it reads them plainly and stores with relaxed atomics, which
 * the readers' relaxed loads pair with (no copy in and out per call).
 */
#define CADD(field, v) \
	__atomic_store_n(&(field), (field) + (v), __ATOMIC_RELAXED)
#define CSUB(field, v) \
	__atomic_store_n(&(field), (field) - (v), __ATOMIC_RELAXED)

static inline void
wheel_drop(struct pcr_wheel *w, struct wheel_ccounters *c, struct rte_mbuf *m,
	   enum pcr_wheel_drop_reason reason)
{
	CADD(c->drop[reason], 1);
	if (w->drop_fn != NULL)
		w->drop_fn(m, reason, w->drop_arg);
	else
		rte_pktmbuf_free(m);
}

/* Level 0 (its slots and its run), then the far levels and the cascade:
 * parts of this translation unit in their own files (see each). */
#include "pcr_wheel_l0.h"
/* the cascade (pcr_wheel_far.h) places what it moves as the inbox's
 * packets are placed (below) */
static void wheel_spill(struct pcr_wheel *w, struct wheel_ccounters *c,
			struct rte_mbuf *m, uint64_t tick);
static inline void wheel_place_or_spill(struct pcr_wheel *w,
					struct wheel_ccounters *c,
					struct rte_mbuf *m, uint64_t tick);
#include "pcr_wheel_far.h"

/* --- placement ---------------------------------------------------------- */

enum place_result { PLACED, SLOT_FULL, NO_CHUNK };

/*
 * The level for @tick (>= cur_tick): the lowest whose block holds both
 * @tick and cur_tick, i.e. the highest differing bit group.
 */
static inline unsigned int
level_of(const struct pcr_wheel *w, uint64_t tick)
{
	uint64_t diff = (tick ^ w->cur_tick) >> w->slot_bits;

	if (likely(diff == 0))
		return 0;
	return w->level_of_bit[63 - __builtin_clzll(diff)];
}

/* Put one packet into the slot for @tick (>= cur_tick, within horizon). */
static inline enum place_result
wheel_place(struct pcr_wheel *w, struct wheel_ccounters *c,
	    struct rte_mbuf *m, uint64_t tick)
{
	unsigned int l = level_of(w, tick);
	unsigned int slot = (tick >> (w->slot_bits * l)) & w->mask;

	if (l == 0) {
		if (unlikely(!l0_push(w, slot, m)))
			return SLOT_FULL;
	} else if (unlikely(!far_push(w, l, slot, m, tick))) {
		return NO_CHUNK;
	}
	CADD(c->occ[l], 1);
	return PLACED;
}

/* The level-0 slot for @tick was full: try the next one, else drop. */
static __rte_noinline void
wheel_spill(struct pcr_wheel *w, struct wheel_ccounters *c, struct rte_mbuf *m,
	    uint64_t tick)
{
	enum place_result r = wheel_place(w, c, m, tick + 1);

	if (r == PLACED) {
		CADD(c->spill, 1);
		return;
	}
	wheel_drop(w, c, m,
		   r == SLOT_FULL ? PCR_WHEEL_DROP_FULL : PCR_WHEEL_DROP_NOMEM);
}

/* Place with spill into the next slot; drop with a reason if both fail. */
static inline void
wheel_place_or_spill(struct pcr_wheel *w, struct wheel_ccounters *c,
		     struct rte_mbuf *m, uint64_t tick)
{
	enum place_result r = wheel_place(w, c, m, tick);

	if (likely(r == PLACED))
		return;
	if (r == SLOT_FULL)
		wheel_spill(w, c, m, tick);
	else
		wheel_drop(w, c, m, PCR_WHEEL_DROP_NOMEM);
}

static inline uint64_t
wheel_tick_of(const struct pcr_wheel *w, uint64_t tsc)
{
	int64_t d = (int64_t)(tsc - w->epoch_tsc);

	return d <= 0 ? 0
		      : rte_reciprocal_divide_u64((uint64_t)d,
						  &w->granularity_recip);
}

/* Insert a packet taken from the inbox, its departure as a tick. */
static inline void
wheel_insert(struct pcr_wheel *w, struct wheel_ccounters *c,
	     struct rte_mbuf *m, uint64_t tick)
{
	if (tick < w->cur_tick) {
		tick = w->cur_tick;
		CADD(c->late, 1);
	} else if (unlikely(tick - w->cur_tick >= w->horizon_ticks)) {
		if (w->horizon_policy == PCR_WHEEL_HORIZON_DROP) {
			wheel_drop(w, c, m, PCR_WHEEL_DROP_HORIZON);
			return;
		}
		tick = w->cur_tick + w->horizon_ticks - 1;
		CADD(c->horizon_cap, 1);
		/* the packet now leaves at the horizon: say so in its field */
		*pcr_wheel_departure(m, w->head.dynfield_offset) =
			w->epoch_tsc + tick * w->granularity_tsc;
	}
	wheel_place_or_spill(w, c, m, tick);
}

/*
 * Where pcr_wheel_dequeue_burst() sends the inbox's due packets straight
 * out (insert_burst() with one): nothing in the levels is due by
 * @target, which is in cur's block, so the output is the inbox's due
 * entries in order of their ticks (late ones at cur's), FIFO within a
 * tick; when they already come in that order, they leave as they are,
 * without a slot (Carousel's "a timestamp already past is sent now").
 */
struct wheel_out {
	struct rte_mbuf **mbufs;
	unsigned int cnt;  /* written to mbufs */
	unsigned int adv;  /* the clock's jumps to a non-empty slot */
	uint64_t target;   /* now's tick */
	uint64_t last;     /* the tick of the last one out (cur at first) */
};

/*
 * Insert @n inbox entries, read in place from the ring: level 1's in one
 * pass, then level 0's in two (runs for one slot, then their placing).
 * With @o, the due ones go to @o instead, if they come in tick order.
 */
static __rte_always_inline void
insert_burst(struct pcr_wheel *w, struct wheel_ccounters *c,
	     const struct __pcr_wheel_entry *e, unsigned int n, const bool two,
	     struct wheel_out *o)
{
	uint64_t tick[INBOX_BURST];
	unsigned int run_at[INBOX_BURST + 1], nr, r;
	const uint64_t cur = w->cur_tick, horizon = w->horizon_ticks;
	const uint64_t g = w->granularity_tsc;
	const unsigned int sb = w->slot_bits;
	const uint32_t mask = w->mask;
	/* level 1 takes every far tick (2 levels), or those of cur's block */
	const bool far_all = two || w->levels == 2, far = two || w->levels > 1;
	uint64_t occ0 = 0, occ1 = 0, due = cur;
	struct l0_view v;
	unsigned int i;

	/*
	 * Level 1 first, in one pass: while the entries are for level 1
	 * (two levels), within the horizon, they are placed as their tick
	 * is computed. From the first that is not on, the rest take the two
	 * passes below, in order, so FIFO holds whatever path each takes.
	 * The far slots' heads are not prefetched: a far level's active
	 * heads (one per level-1 slot the departures span, 24 B each: 6 KiB
	 * for 1 s) stay in L1 as it is; level 0's lines do not.
	 */
	if (two && w->tick_mul != 0) {
		/*
		 * Offsets from the start of cur's slot: level 1 takes
		 * [l1_tsc, horizon_tsc), the rest of cur's block and the
		 * horizon in cycles; one unsigned compare (a departure before
		 * cur's slot wraps to a huge offset). Locals: the stores into
		 * the chunks must not make the compiler reload them from w.
		 */
		const uint64_t mul = w->tick_mul;
		const uint64_t cur_tsc = w->epoch_tsc + cur * g;
		const uint64_t l1_tsc = ((cur | mask) + 1 - cur) * g;
		const uint64_t span = horizon * g - l1_tsc;
		struct far_slot *const far1 = w->far;

		for (i = 0; horizon * g > l1_tsc && i < n; i++) {
			uint64_t d = e[i].tsc - cur_tsc;
			uint64_t t = cur + (uint64_t)(((unsigned __int128)d *
						       mul) >> 64);
			unsigned int slot = (t >> sb) & mask;

			if (unlikely(d - l1_tsc >= span ||
				     !far_push_fs(w, &far1[slot], 1, slot,
						  e[i].m, t)))
				break;
			occ1++;
		}
		e += i;
		n -= i;
	}
	/*
	 * Level 0 by runs: consecutive entries for one slot (a flow's
	 * packets stamped back to back, a burst under one aggregate). The
	 * first pass cuts the entries into runs, one tick each (the rest of
	 * a run is one compare: its departure falls in the slot's cycles),
	 * and prefetches each run's slot head, so that their misses
	 * overlap; the second places each run with one capacity check and
	 * one tail and bitmap update. A run for a slot already past (late)
	 * goes to cur's slot as one.
	 */
	for (i = 0, nr = 0; i < n; nr++) {
		uint64_t t = wheel_tick_of(w, e[i].tsc), lo;

		run_at[nr] = i;
		tick[nr] = t;
		if (o != NULL && t <= o->target) {
			/* due: out as they come only if in tick order */
			uint64_t te = t < cur ? cur : t;

			if (te < due)
				o = NULL;
			due = te;
		}
		if (unlikely(t < cur)) {
			l0_prefetch(w, cur & mask); /* late: into cur's */
		} else if (((t ^ cur) >> sb) == 0) {
			l0_prefetch(w, t & mask);
		} else {
			i++; /* a far level, or the horizon: a run of one */
			continue;
		}
		lo = w->epoch_tsc + t * g;
		for (i++; i < n && e[i].tsc - lo < g; i++)
			;
	}
	run_at[nr] = n;
	/*
	 * The common cases inline: within the horizon, for level 0 (late
	 * ones too) or level 1, with room. Everything else (the horizon, a
	 * full slot, no chunk, a higher level) takes the general path,
	 * wheel_insert(), entry by entry.
	 */
	l0_view_get(w, &v);
	for (r = 0; r < nr; r++) {
		uint64_t t = tick[r], d;
		unsigned int k = run_at[r + 1] - run_at[r];
		const struct __pcr_wheel_entry *x = e + run_at[r];

		if (unlikely(t < cur)) {
			t = cur;
			CADD(c->late, k);
		}
		if (o != NULL && t <= o->target) {
			struct rte_mbuf **out = o->mbufs + o->cnt;

			o->cnt += k;
			o->adv += t != o->last;
			o->last = t;
			for (; k > 0; k--, x++)
				*out++ = x->m;
			continue;
		}
		d = (t ^ cur) >> sb;
		if (likely(t - cur < horizon)) { /* t >= cur, within horizon */
			if (d == 0) {
				unsigned int got =
					l0_push_run_v(&v, t & mask, x, k);

				occ0 += got;
				if (likely(got == k))
					continue;
				x += got; /* the rest spill */
				k -= got;
			} else if (far && (far_all || (d >> sb) == 0) &&
				   k == 1) {
				if (likely(far_push(w, 1, (t >> sb) & mask,
						    x->m, t))) {
					occ1++;
					continue;
				}
			}
		}
		l0_view_sync(w, &v);
		for (; k > 0; k--, x++)
			wheel_insert(w, c, x->m, t);
		l0_view_get(w, &v);
	}
	l0_view_sync(w, &v);
	CADD(c->occ[0], occ0);
	if (far)
		CADD(c->occ[1], occ1);
}

static inline void
wheel_insert_burst(struct pcr_wheel *w, struct wheel_ccounters *c,
		   const struct __pcr_wheel_entry *e, unsigned int n,
		   struct wheel_out *o)
{
	if (w->levels == 2) {
		if (o != NULL)
			insert_burst(w, c, e, n, true, o);
		else
			insert_burst(w, c, e, n, true, NULL);
	} else {
		insert_burst(w, c, e, n, false, o);
	}
}

/*
 * The common case of struct wheel_out: every one of the @n entries due
 * and in tick order (their departures in order: a check and a copy an
 * entry, the ticks of the first and the last). Late ones (before cur's
 * slot) are a prefix, counted; the clock's jumps are where the ticks
 * change. @return false, @o untouched, if the entries are not all that.
 */
static inline bool
take_direct(struct pcr_wheel *w, struct wheel_ccounters *c,
	    const struct __pcr_wheel_entry *e, unsigned int n,
	    struct wheel_out *o)
{
	struct rte_mbuf **out = o->mbufs + o->cnt;
	const uint64_t cur = w->cur_tick, g = w->granularity_tsc;
	uint64_t prev = e[0].tsc, first, last, t, back = 0;
	unsigned int i, late = 0, adv;

	/*
	 * In order: no difference from the one before negative (their sign
	 * bits or'ed: departures within 2^63 cycles of each other, so a
	 * signed difference orders them as wheel_tick_of() does, across the
	 * TSC's wrap too). Four at a time, the copy out beside it.
	 */
	{
		/* pointers, not a 32-bit index: fixed offsets, no address
		 * arithmetic per entry */
		const struct __pcr_wheel_entry *x = e, *end = e + n;
		const struct __pcr_wheel_entry *end4 = e + (n & ~3u);
		struct rte_mbuf **d = out;

		for (; x < end4; x += 4, d += 4) {
			d[0] = x[0].m;
			d[1] = x[1].m;
			d[2] = x[2].m;
			d[3] = x[3].m;
			back |= (x[0].tsc - prev) | (x[1].tsc - x[0].tsc) |
				(x[2].tsc - x[1].tsc) | (x[3].tsc - x[2].tsc);
			prev = x[3].tsc;
		}
		for (; x < end; x++, d++) {
			*d = x->m;
			back |= x->tsc - prev;
			prev = x->tsc;
		}
	}
	if ((int64_t)back < 0)
		return false;
	last = wheel_tick_of(w, prev);
	if (last > o->target)
		return false;
	first = wheel_tick_of(w, e[0].tsc);
	if (first < cur) {
		/* late: departures before cur's slot, a prefix */
		if (last < cur)
			late = n;
		else
			while ((int64_t)(e[late].tsc - w->epoch_tsc) <
			       (int64_t)(cur * g))
				late++;
		CADD(c->late, late);
		first = cur;
	}
	if (last <= cur) {
		adv = first != o->last;
		last = cur;
	} else if (first == last) {
		adv = first != o->last;
	} else {
		/* a jump at each new tick, from the first after cur's */
		adv = first != o->last;
		t = first;
		for (i = late; i < n; i++) {
			uint64_t ti = wheel_tick_of(w, e[i].tsc);

			adv += ti > t;
			t = ti > t ? ti : t;
		}
	}
	o->cnt += n;
	o->adv += adv;
	o->last = last;
	return true;
}

/*
 * Take up to @max entries from the inbox into the wheel, or with @o their
 * due ones out (one batch, not wrapping the ring: the order check sees
 * them all).
 */
static void
wheel_take_inbox(struct pcr_wheel *w, struct wheel_ccounters *c,
		 unsigned int max, struct wheel_out *o)
{
	while (max > 0) {
		struct rte_ring_zc_data zcd;
		unsigned int k = RTE_MIN(max, (unsigned int)INBOX_BURST);
		unsigned int got;

		/* zero-copy: the entries are read where producers wrote them */
		got = rte_ring_dequeue_zc_burst_elem_start(
			w->head.inbox, sizeof(struct __pcr_wheel_entry), k,
			&zcd, NULL);
		if (got == 0)
			break;
		if (got > zcd.n1)
			o = NULL; /* wraps: two batches */
		if (o == NULL || !take_direct(w, c, zcd.ptr1, got, o))
			wheel_insert_burst(w, c, zcd.ptr1, zcd.n1, o);
		if (got > zcd.n1)
			wheel_insert_burst(w, c, zcd.ptr2, got - zcd.n1, NULL);
		rte_ring_dequeue_zc_elem_finish(w->head.inbox, got);
		CADD(c->taken, got);
		if (got < k)
			break;
		max -= got;
	}
}

/* --- the clock ---------------------------------------------------------- */

/*
 * First non-empty slot of @level after the one holding cur_tick (at it,
 * for level 0), as a tick; UINT64_MAX if none. Below the top level a level
 * only holds slots of cur_tick's block, after cur_tick's own (see the file
 * comment), so the search does not wrap; the top level is circular.
 */
static inline uint64_t
level_next_event(const struct pcr_wheel *w, unsigned int level)
{
	unsigned int shift = w->slot_bits * level;
	uint64_t base = w->cur_tick >> shift;
	unsigned int pos = base & w->mask;
	unsigned int j = bitmap_find_next(w, level, level == 0 ? pos : pos + 1);

	if (j == w->nslots) {
		if (level != w->levels - 1 || w->summary[level] == 0)
			return UINT64_MAX;
		j = bitmap_find_next(w, level, 0);
	}
	return (base + ((j - pos) & w->mask)) << shift;
}

/*
 * Tick of the earliest non-empty slot at or after cur_tick (the level-0
 * slot at cur_tick included), or UINT64_MAX if the levels are empty.
 */
static inline uint64_t
wheel_next_event(const struct pcr_wheel *w)
{
	uint64_t sum0 = w->summary[0];
	unsigned int l;

	/*
	 * Fast path, level 0 not empty and not the (circular) top level:
	 * level 0 holds only ticks of cur's block at or after cur, so its
	 * first set bit at or after cur is the next event.
	 */
	if (likely(sum0 != 0 && w->levels > 1)) {
		const uint64_t cur = w->cur_tick;
		const unsigned int pos = cur & w->mask, wi = pos >> 6;
		const uint64_t *bm = w->bitmap;
		uint64_t word = bm[wi] & (~0ULL << (pos & 63));
		unsigned int j;

		if (word != 0) {
			j = (wi << 6) + __builtin_ctzll(word);
		} else {
			uint64_t sum = sum0 & (~1ULL << wi);

			if (sum == 0)
				goto general; /* nothing after cur on level 0 */
			j = ((unsigned int)__builtin_ctzll(sum) << 6);
			j += __builtin_ctzll(bm[j >> 6]);
		}
		return cur + (j - pos);
	}
general:

	for (l = 0; l < w->levels; l++) {
		uint64_t ev;

		if (w->summary[l] == 0)
			continue;
		ev = level_next_event(w, l);
		if (ev != UINT64_MAX)
			return ev;
	}
	return UINT64_MAX;
}

/* Set cur_tick to @tick (an event) and cascade the far slots starting there. */
static inline void
wheel_advance_to(struct pcr_wheel *w, struct wheel_ccounters *c, uint64_t tick)
{
	unsigned int l;

	__atomic_store_n(&w->cur_tick, tick, __ATOMIC_RELAXED);
	CADD(c->advances, 1);
	if (likely((tick & w->mask) != 0))
		return; /* not at a level-1 boundary: nothing to cascade */
	for (l = w->levels - 1; l >= 1; l--) {
		unsigned int shift = w->slot_bits * l;
		unsigned int slot;

		if ((tick & ((1ULL << shift) - 1)) != 0)
			continue;
		slot = (tick >> shift) & w->mask;
		if (bit_test(w, l, slot))
			wheel_cascade(w, c, l, slot);
	}
}

/* Copy out the level-0 slot at cur_tick. */
static inline unsigned int
wheel_emit(struct pcr_wheel *w, struct wheel_ccounters *c,
	   struct rte_mbuf **mbufs, unsigned int n)
{
	unsigned int slot = w->cur_tick & w->mask;
	unsigned int got;

	if (!bit_test(w, 0, slot))
		return 0;
	got = l0_pop(w, slot, mbufs, n);
	CSUB(c->occ[0], got);
	return got;
}

/*
 * Emit the level-0 slots from cur_tick up to @target, in order, moving
 * cur_tick to each: wheel_run()'s loop for level-0 events in one place.
 * Only for levels > 1, where level 0 holds ticks of cur's block at or
 * after cur only (so no search wraps, and no far slot starts inside the
 * block: nothing to cascade). Stops when @n were written (cur_tick stays
 * at the slot being drained) or level 0 has nothing more due.
 */
static inline unsigned int
l0_drain(struct pcr_wheel *w, struct wheel_ccounters *c, uint64_t target,
	 struct rte_mbuf **mbufs, unsigned int n)
{
	uint64_t cur = w->cur_tick;
	const uint64_t block = cur & ~(uint64_t)w->mask;
	const uint64_t *bm = w->bitmap; /* level 0's words */
	unsigned int cnt = 0, adv = 0;

	while (cnt < n) {
		unsigned int pos = cur - block, wi = pos >> 6, j;
		uint64_t word = bm[wi] & (~0ULL << (pos & 63)), ev;

		if (word == 0) {
			uint64_t sum = w->summary[0] & (~1ULL << wi);

			if (sum == 0)
				break;
			wi = __builtin_ctzll(sum);
			word = bm[wi];
		}
		j = (wi << 6) + __builtin_ctzll(word);
		ev = block + j;
		if (ev > target)
			break;
		if (j == w->run_slot) {
			/* the run's next slot: copy out a range of slots */
			unsigned int tslot = target - block >= w->mask
						     ? w->mask
						     : target - block, hi;

			cnt += run_drain(w, j, pos, tslot, mbufs + cnt, n - cnt,
					 &hi, &adv);
			cur = block + hi;
			continue;
		}
		if (ev != cur) {
			cur = ev;
			adv++;
		}
		/* slots ahead: their heads and first lines are in line */
		l0_prefetch(w, (j + DRAIN_PREFETCH) & w->mask);
		cnt += l0_pop(w, j, mbufs + cnt, n - cnt);
	}
	__atomic_store_n(&w->cur_tick, cur, __ATOMIC_RELAXED);
	CADD(c->advances, adv);
	CSUB(c->occ[0], cnt);
	return cnt;
}

static inline uint64_t
wheel_tick_of_now(const struct pcr_wheel *w, uint64_t now_tsc)
{
	int64_t d = (int64_t)(now_tsc - w->epoch_tsc);

	return d <= 0 ? 0
		      : rte_reciprocal_divide_u64((uint64_t)d,
						  &w->granularity_recip);
}

/*
 * Emit due packets up to tick @target; returns the count written. With
 * @catch_up the wheel's clock moves to @target once nothing is due (the
 * normal case); without it (flush) it stays at the last slot emitted.
 */
static unsigned int
wheel_run(struct pcr_wheel *w, struct wheel_ccounters *c, uint64_t target,
	  struct rte_mbuf **mbufs, unsigned int n, bool catch_up)
{
	unsigned int cnt = 0;

	while (cnt < n) {
		uint64_t ev;

		if (w->cur_tick <= target) {
			if (w->levels > 1)
				cnt += l0_drain(w, c, target, mbufs + cnt,
						n - cnt);
			else
				cnt += wheel_emit(w, c, mbufs + cnt, n - cnt);
			if (cnt == n)
				break;
		}
		if (w->cur_tick >= target)
			break;
		ev = wheel_next_event(w);
		if (ev > target) {
			if (catch_up)
				__atomic_store_n(&w->cur_tick, target,
						 __ATOMIC_RELAXED);
			break;
		}
		wheel_advance_to(w, c, ev);
	}
	return cnt;
}

/*
 * Whether nothing in the levels is due by tick @target, which is in the
 * block of @cur (the wheel's clock): then only level 0 can hold any (a far
 * slot starts a later block), in the slots from cur's to target's (a tick
 * beyond the block, with one level, is further than that from cur).
 */
static inline bool
l0_quiet(const struct pcr_wheel *w, uint64_t cur, uint64_t target)
{
	unsigned int hi = target & w->mask;

	return w->summary[0] == 0 ||
	       bits_first(w->bitmap, cur & w->mask, hi) > hi;
}

unsigned int
pcr_wheel_dequeue_burst(struct pcr_wheel *w, uint64_t now_tsc,
			struct rte_mbuf **mbufs, unsigned int n)
{
	struct wheel_ccounters *c = &w->c;
	const uint64_t target = wheel_tick_of_now(w, now_tsc);
	const uint64_t cur = w->cur_tick;
	/* now in cur's block: only level 0 can have anything due */
	const bool near = target >= cur &&
			  ((target ^ cur) >> w->slot_bits) == 0;
	unsigned int cnt;

	if (unlikely(n == 0))
		return 0;
	if (rte_ring_empty(w->head.inbox)) {
		/* what wheel_run() does when nothing is due: move the clock
		 * to now (nothing the seqcount covers changes) */
		if (near ? l0_quiet(w, cur, target)
			 : wheel_next_event(w) > target) {
			if (target > cur)
				__atomic_store_n(&w->cur_tick, target,
						 __ATOMIC_RELAXED);
			return 0;
		}
		rte_seqcount_write_begin(&w->seq);
	} else if (n <= INBOX_BURST && near && l0_quiet(w, cur, target)) {
		/* nothing due in the levels: the inbox's due ones may go
		 * straight out (struct wheel_out) */
		struct wheel_out o = {
			.mbufs = mbufs, .target = target, .last = cur,
		};

		rte_seqcount_write_begin(&w->seq);
		wheel_take_inbox(w, c, n, &o);
		if (o.cnt != 0) {
			/* where wheel_run() would leave the clock: at the
			 * slot it stopped in for n, else at now */
			__atomic_store_n(&w->cur_tick,
					 o.cnt == n ? o.last : target,
					 __ATOMIC_RELAXED);
			CADD(c->advances, o.adv);
			CADD(c->dequeued, o.cnt);
			CADD(c->direct, o.cnt);
			rte_seqcount_write_end(&w->seq);
			return o.cnt;
		}
	} else {
		rte_seqcount_write_begin(&w->seq);
		wheel_take_inbox(w, c, n, NULL);
	}
	cnt = wheel_run(w, c, target, mbufs, n, true);
	CADD(c->dequeued, cnt);
	rte_seqcount_write_end(&w->seq);
	return cnt;
}

unsigned int
pcr_wheel_flush(struct pcr_wheel *w, struct rte_mbuf **mbufs, unsigned int n)
{
	struct wheel_ccounters *c = &w->c;
	unsigned int cnt = 0, l;
	uint64_t queued = 0;

	rte_seqcount_write_begin(&w->seq);
	for (l = 0; l < w->levels; l++)
		queued += c->occ[l];
	if (queued > 0)
		cnt = wheel_run(w, c, UINT64_MAX - 1, mbufs, n, false);
	if (cnt < n) {
		struct __pcr_wheel_entry e[INBOX_BURST];

		while (cnt < n) {
			unsigned int k = RTE_MIN(n - cnt,
						 (unsigned int)INBOX_BURST);
			unsigned int got, i;

			got = rte_ring_sc_dequeue_burst_elem(
				w->head.inbox, e, sizeof(e[0]), k, NULL);
			for (i = 0; i < got; i++)
				mbufs[cnt + i] = e[i].m;
			cnt += got;
			CADD(c->taken, got);
			if (got < k)
				break;
		}
	}
	CADD(c->dequeued, cnt);
	rte_seqcount_write_end(&w->seq);
	return cnt;
}

uint64_t
pcr_wheel_next_tsc(const struct pcr_wheel *w)
{
	uint64_t ev = wheel_next_event(w);

	if (ev == UINT64_MAX)
		return UINT64_MAX;
	return w->epoch_tsc + ev * w->granularity_tsc;
}

