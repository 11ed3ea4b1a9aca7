/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Hierarchical timing wheel. See pcr_wheel.h for the contract; this file is
 * the consumer side (placement, level 0 and its run, the far levels and the
 * cascade, the clock, dequeue), one translation unit so that the compiler
 * inlines across its parts; pcr_wheel_mem.c the cold side (geometry,
 * memory, create and free, the horizon, statistics); pcr_wheel_priv.h the
 * insides both share.
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

/* --- level-0 slots ------------------------------------------------------ */

/*
 * Where pointer @j of level-0 slot @slot lives: the slots' arrays are
 * interleaved by cache line (line k of slot i is line k * S + i), so the
 * first lines of all slots, where nearly every slot's packets sit, share a
 * few pages and spread over every L1 set instead of all falling on one set
 * (one array per slot puts them all at the same 4 KiB offset).
 */
static inline size_t
l0_index(const struct pcr_wheel *w, unsigned int slot, uint32_t j)
{
	/* ((j / 8) * S + slot) * 8 + j % 8; l0_line_shift = slot_bits + 3 */
	return ((size_t)(j / L0_LINE_PTRS) << w->l0_line_shift) +
	       (size_t)slot * L0_LINE_PTRS + j % L0_LINE_PTRS;
}

/*
 * Position j = 0 of a slot holds its head (struct l0_slot, 8 bytes, the
 * size of a pointer); pointer c of the circular array is position c + 1.
 * Memory from rte_zmalloc has no declared type, and each position is only
 * ever accessed as one type, so the two share the store without aliasing.
 */
static inline struct l0_slot *
l0_head(struct rte_mbuf **mb, unsigned int slot)
{
	return (struct l0_slot *)(void *)&mb[(size_t)slot * L0_LINE_PTRS];
}

/*
 * Entries of the run still to leave from level-0 slot @slot: they count
 * against the slot's capacity and leave before its array's. Only slots
 * at or after run_slot have any (run_slot is nslots without a run).
 */
static inline uint32_t
run_left(const struct pcr_wheel *w, unsigned int slot)
{
	uint32_t start;

	if (slot < w->run_slot)
		return 0;
	start = slot == 0 ? 0 : w->run_end[slot - 1];
	return w->run_end[slot] - RTE_MAX(start, w->run_pos);
}

static inline bool
l0_push(struct pcr_wheel *w, unsigned int slot, struct rte_mbuf *m)
{
	struct l0_slot *s = l0_head(w->l0_mbufs, slot);
	uint32_t tail = s->tail, count = tail - s->head;

	if (unlikely(count + run_left(w, slot) >= w->slot_capacity))
		return false;
	w->l0_mbufs[l0_index(w, slot,
			     (tail & (w->slot_capacity - 1)) + 1)] = m;
	s->tail = tail + 1;
	if (count == 0) {
		w->abm[slot >> 6] |= 1ULL << (slot & 63);
		bit_set(w, 0, slot);
	}
	return true;
}

/* What l0_push() to @slot touches first: the head and the first pointers. */
static inline void
l0_prefetch(const struct pcr_wheel *w, unsigned int slot)
{
	rte_prefetch0(&w->l0_mbufs[(size_t)slot * L0_LINE_PTRS]);
}

/*
 * The level-0 state a per-packet loop keeps in registers. Through w the
 * compiler must reload every field after each store into the slots (a
 * uint32_t or uint64_t store may alias them); a local copy it need not.
 * The loop keeps the level-0 summary word in a local too and writes it
 * back before anything else reads it (l0_view_sync()).
 */
struct l0_view {
	struct rte_mbuf **mb;
	uint64_t *bm;
	uint64_t *abm;
	const struct pcr_wheel *w; /* for run_left() */
	uint64_t sum;
	uint32_t cap;
	uint32_t cmask;
	unsigned int line_shift;
	unsigned int run_slot;
};

static __rte_always_inline void
l0_view_get(const struct pcr_wheel *w, struct l0_view *v)
{
	v->mb = w->l0_mbufs;
	v->bm = w->bitmap; /* level 0's words come first */
	v->abm = w->abm;
	v->w = w;
	v->sum = w->summary[0];
	v->cap = w->slot_capacity;
	v->cmask = w->slot_capacity - 1;
	v->line_shift = w->l0_line_shift;
	v->run_slot = w->run_slot;
}

static __rte_always_inline void
l0_view_sync(struct pcr_wheel *w, const struct l0_view *v)
{
	w->summary[0] = v->sum;
}

/* l0_push() through a view. */
static __rte_always_inline bool
l0_push_v(struct l0_view *v, unsigned int slot, struct rte_mbuf *m)
{
	struct l0_slot *s = l0_head(v->mb, slot);
	uint32_t tail = s->tail, count = tail - s->head, j;

	if (unlikely(slot >= v->run_slot))
		count += run_left(v->w, slot);
	if (unlikely(count >= v->cap))
		return false;
	j = (tail & v->cmask) + 1;
	v->mb[((size_t)(j / L0_LINE_PTRS) << v->line_shift) +
	      (size_t)slot * L0_LINE_PTRS + j % L0_LINE_PTRS] = m;
	s->tail = tail + 1;
	if (tail == s->head) {
		v->abm[slot >> 6] |= 1ULL << (slot & 63);
		v->bm[slot >> 6] |= 1ULL << (slot & 63);
		v->sum |= 1ULL << (slot >> 6);
	}
	return true;
}

static __rte_always_inline void
l0_prefetch_v(const struct l0_view *v, unsigned int slot)
{
	rte_prefetch0(&v->mb[(size_t)slot * L0_LINE_PTRS]);
}

static inline unsigned int
l0_pop(struct pcr_wheel *w, unsigned int slot, struct rte_mbuf **out,
       unsigned int n)
{
	struct l0_slot *s = l0_head(w->l0_mbufs, slot);
	/* locals: the stores into out[] must not make the compiler reload */
	struct rte_mbuf *const *base =
		w->l0_mbufs + (size_t)slot * L0_LINE_PTRS;
	const unsigned int ls = w->l0_line_shift;
	const uint32_t cmask = w->slot_capacity - 1;
	uint32_t h = s->head, avail = s->tail - h;
	uint32_t k = RTE_MIN((uint32_t)n, avail), i;

	for (i = 0; i < k; i++) {
		uint32_t j = ((h + i) & cmask) + 1;

		out[i] = base[((size_t)(j / L0_LINE_PTRS) << ls) +
			      j % L0_LINE_PTRS];
	}
	if (k == avail) {
		/* empty: restart at index 0, the line just read */
		s->head = 0;
		s->tail = 0;
		w->abm[slot >> 6] &= ~(1ULL << (slot & 63));
		if (slot < w->run_slot) /* else the run still has some */
			bit_clear(w, 0, slot);
	} else {
		s->head = h + k;
	}
	return k;
}

/* --- far slots ---------------------------------------------------------- */

static inline struct far_slot *
far_slot_of(const struct pcr_wheel *w, unsigned int level, unsigned int slot)
{
	return &w->far[(size_t)(level - 1) * w->nslots + slot];
}

/* A new tail chunk for @fs (empty or full); NULL when the pool is empty. */
static __rte_noinline struct far_entry *
far_new_chunk(struct pcr_wheel *w, struct far_slot *fs, unsigned int level,
	      unsigned int slot)
{
	struct far_chunk *nc = w->free_chunks;

	if (unlikely(nc == NULL))
		return NULL;
	w->free_chunks = nc->next;
	/* the next allocation reads its first line: start that now */
	rte_prefetch0_write(w->free_chunks);
	nc->next = NULL;
	if (fs->pos == NULL) {
		fs->head = nc;
		bit_set(w, level, slot);
	} else {
		chunk_of(fs->pos)->next = nc;
	}
	fs->nchunks++;
	return nc->e;
}

/* far_push() to @fs, which is slot @slot of @level. */
static __rte_always_inline bool
far_push_fs(struct pcr_wheel *w, struct far_slot *fs, unsigned int level,
	    unsigned int slot, struct rte_mbuf *m, uint64_t tick)
{
	struct far_entry *e = fs->pos;

	/* NULL (no chunk) or a chunk's end (full): both aligned */
	if (unlikely(((uintptr_t)e & (CHUNK_SIZE - 1)) == 0)) {
		e = far_new_chunk(w, fs, level, slot);
		if (unlikely(e == NULL))
			return false;
	}
	fs->pos = e + 1;
	e->m = m;
	e->tick = tick;
	/*
	 * The tail's next line, 4 entries on: its first write would be a
	 * miss (1M queued is 16 MiB of chunks), the store queue fills behind
	 * it, and the consumer stalls. Fetched now, it has the next few
	 * hundred placements to arrive. Past the chunk's end it touches the
	 * neighbouring chunk of the pool: harmless.
	 */
	rte_prefetch0_write(e + 4);
	return true;
}

/* Append to a far slot; false when the chunk pool is empty. */
static __rte_always_inline bool
far_push(struct pcr_wheel *w, unsigned int level, unsigned int slot,
	 struct rte_mbuf *m, uint64_t tick)
{
	return far_push_fs(w, far_slot_of(w, level, slot), level, slot, m,
			   tick);
}

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
 * Insert @n inbox entries, read in place from the ring. Two passes: the
 * first computes the ticks and prefetches the slot heads the second will
 * read, so their misses overlap instead of queueing one by one.
 */
static __rte_always_inline void
insert_burst(struct pcr_wheel *w, struct wheel_ccounters *c,
	     const struct __pcr_wheel_entry *e, unsigned int n, const bool two)
{
	uint64_t tick[INBOX_BURST];
	const uint64_t cur = w->cur_tick, horizon = w->horizon_ticks;
	const unsigned int sb = w->slot_bits;
	const uint32_t mask = w->mask;
	/* level 1 takes every far tick (2 levels), or those of cur's block */
	const bool far_all = two || w->levels == 2, far = two || w->levels > 1;
	uint64_t occ0 = 0, occ1 = 0;
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
		const uint64_t g = w->granularity_tsc, mul = w->tick_mul;
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
	for (i = 0; i < n; i++) {
		uint64_t t = wheel_tick_of(w, e[i].tsc);

		tick[i] = t;
		if (((t ^ cur) >> sb) == 0)
			l0_prefetch(w, t & mask);
	}
	/*
	 * The common cases inline: due within the horizon, for level 0 or
	 * level 1, with room. Everything else (late, horizon, a full slot, no
	 * chunk, a higher level) takes the general path, wheel_insert().
	 */
	l0_view_get(w, &v);
	for (i = 0; i < n; i++) {
		uint64_t t = tick[i], d = (t ^ cur) >> sb;
		struct rte_mbuf *m = e[i].m;

		if (likely(t - cur < horizon)) { /* t >= cur, within horizon */
			if (d == 0) {
				if (likely(l0_push_v(&v, t & mask, m))) {
					occ0++;
					continue;
				}
			} else if (far && (far_all || (d >> sb) == 0)) {
				if (likely(far_push(w, 1, (t >> sb) & mask, m,
						    t))) {
					occ1++;
					continue;
				}
			}
		}
		l0_view_sync(w, &v);
		wheel_insert(w, c, m, t);
		l0_view_get(w, &v);
	}
	l0_view_sync(w, &v);
	CADD(c->occ[0], occ0);
	if (far)
		CADD(c->occ[1], occ1);
}

static inline void
wheel_insert_burst(struct pcr_wheel *w, struct wheel_ccounters *c,
		   const struct __pcr_wheel_entry *e, unsigned int n)
{
	if (w->levels == 2)
		insert_burst(w, c, e, n, true);
	else
		insert_burst(w, c, e, n, false);
}

static void
wheel_take_inbox(struct pcr_wheel *w, struct wheel_ccounters *c,
		 unsigned int max)
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
		wheel_insert_burst(w, c, zcd.ptr1, zcd.n1);
		if (got > zcd.n1)
			wheel_insert_burst(w, c, zcd.ptr2, got - zcd.n1);
		rte_ring_dequeue_zc_elem_finish(w->head.inbox, got);
		CADD(c->taken, got);
		if (got < k)
			break;
		max -= got;
	}
}

/* --- the clock ---------------------------------------------------------- */

static inline void
chunk_prefetch(const struct far_chunk *ch)
{
	unsigned int off;

	for (off = 0; off < sizeof(*ch); off += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(RTE_PTR_ADD(ch, off));
}

/* --- level 0's run -------------------------------------------------------- */

/*
 * 64 slot counts @cw -> their starts from *@off on (*@off moves past
 * them); *@most: the largest count so far. Returns the slots with
 * entries, as a bitmap word. run_build()'s per-slot pass, 4 slots per
 * step with SSE4.1 where there is one.
 */
static inline uint64_t
run_prefix64(uint32_t *cw, uint32_t *off, uint32_t *most)
{
	uint64_t bits = 0;
	unsigned int b;
#if defined(RTE_ARCH_X86) && defined(__SSE4_1__)
	const __m128i zero = _mm_setzero_si128();
	__m128i o = _mm_set1_epi32((int)*off), mx = _mm_set1_epi32((int)*most);
	uint32_t lanes[4];

	for (b = 0; b < 64; b += 4) {
		__m128i k = _mm_loadu_si128((const __m128i *)(cw + b));
		/* inclusive prefix sum of the 4 counts */
		__m128i p = _mm_add_epi32(k, _mm_slli_si128(k, 4));
		unsigned int nz;

		p = _mm_add_epi32(p, _mm_slli_si128(p, 8));
		_mm_storeu_si128((__m128i *)(cw + b),
				 _mm_add_epi32(o, _mm_sub_epi32(p, k)));
		o = _mm_add_epi32(o, _mm_shuffle_epi32(p, 0xff));
		mx = _mm_max_epu32(mx, k);
		nz = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(k, zero)));
		bits |= (uint64_t)(nz ^ 0xf) << b;
	}
	*off = (uint32_t)_mm_cvtsi128_si32(o);
	_mm_storeu_si128((__m128i *)lanes, mx);
	lanes[0] = RTE_MAX(lanes[0], lanes[1]);
	lanes[2] = RTE_MAX(lanes[2], lanes[3]);
	*most = RTE_MAX(lanes[0], lanes[2]);
#else
	uint32_t o = *off, mx = *most;

	for (b = 0; b < 64; b++) {
		uint32_t k = cw[b];

		cw[b] = o;
		o += k;
		mx = RTE_MAX(mx, k);
		bits |= (uint64_t)(k != 0) << b;
	}
	*off = o;
	*most = mx;
#endif
	return bits;
}

/*
 * A level-1 slot cascades into level 0 as a whole, at the start of its
 * block, and at 1M queued it holds thousands of packets for 4096 level-0
 * slots, about two each. Pushing them one by one writes one line in each
 * of 4096 slots (256 KiB) and reads it back up to a block later, when it
 * has left the caches; the drain then pays per slot. Instead, when the
 * cascade is big (run_min entries and more, level 0 empty) it is
 * counting-sorted by slot into one contiguous array, the run: a pass that
 * counts per slot, a prefix sum, a pass that scatters the mbufs into
 * place (stable: FIFO within a slot is the chunks' order). run_end[s] is
 * where slot s's entries end. The drain then copies whole ranges of the
 * run (run_drain()). Packets that reach level 0 any other way (placed
 * directly, late, spilled, cascaded from level 2 and up, or a cascade
 * that takes the per-slot path) go to the slots' arrays as before; in a
 * slot the run's entries leave first, as they were taken from the inbox
 * first (the array can only receive packets for a slot of cur's block
 * once the block's level-1 slot has cascaded). Level 0's bitmap (and
 * summary) marks slots with packets in either; abm marks the arrays, rbm
 * the run's slots (as built; run_slot moves on as the run drains).
 *
 * Same outcome as the per-slot push, by construction: level 0 is empty
 * when the run is built, and a slot with more than slot_capacity entries
 * (which would spill) sends the whole cascade to the per-slot path.
 */
static bool
run_build(struct pcr_wheel *w, struct far_chunk *head,
	  const struct far_chunk *tail, uint32_t tail_count, uint32_t total)
{
	uint32_t *cnt = w->run_end;
	struct rte_mbuf **run = w->run;
	const uint32_t mask = w->mask, cap = w->slot_capacity;
	const unsigned int nslots = w->nslots;
	const unsigned int nb = RTE_MIN(nslots, 64U);
	uint64_t sum = 0;
	uint32_t off = 0, most = 0;
	struct far_chunk *ch;
	unsigned int wi, b;

	if (total < w->run_min || total > w->run_cap || w->summary[0] != 0)
		return false;
	memset(cnt, 0, nslots * sizeof(*cnt));
	/*
	 * The chunks were written up to a second ago and come from memory:
	 * two chunks ahead (the next one's first line, prefetched a chunk
	 * earlier, says where the one after it is).
	 */
	if (head->next != NULL)
		chunk_prefetch(head->next);
	for (ch = head; ch != NULL; ch = ch->next) {
		const struct far_entry *x = ch->e;
		const struct far_entry *end =
			x + (ch == tail ? tail_count : PCR_WHEEL_CHUNK_ENTRIES);

		if (ch->next != NULL && ch->next->next != NULL)
			chunk_prefetch(ch->next->next);
		for (; x + 1 < end; x += 2) {
			cnt[x[0].tick & mask]++;
			cnt[x[1].tick & mask]++;
		}
		if (x < end)
			cnt[x->tick & mask]++;
	}
	/* counts -> starts; the slots with entries; any over capacity? */
	for (wi = 0; wi < w->words; wi++) {
		uint32_t *cw = cnt + (size_t)wi * 64;
		uint64_t bits = 0;

		if (nb == 64) {
			bits = run_prefix64(cw, &off, &most);
		} else {
			for (b = 0; b < nb; b++) {
				uint32_t k = cw[b];

				cw[b] = off;
				off += k;
				most = RTE_MAX(most, k);
				bits |= (uint64_t)(k != 0) << b;
			}
		}
		w->rbm[wi] = bits;
		if (bits != 0)
			sum |= 1ULL << wi;
	}
	if (most > cap)
		return false; /* a slot would spill: the per-slot path */
	for (ch = head; ch != NULL; ch = ch->next) {
		const struct far_entry *x = ch->e;
		const struct far_entry *end =
			x + (ch == tail ? tail_count : PCR_WHEEL_CHUNK_ENTRIES);

		for (; x + 1 < end; x += 2) {
			run[cnt[x[0].tick & mask]++] = x[0].m;
			run[cnt[x[1].tick & mask]++] = x[1].m;
		}
		if (x < end)
			run[cnt[x->tick & mask]++] = x->m;
	}
	/* level 0 was empty: its bitmap is the run's */
	memcpy(w->bitmap, w->rbm, w->words * sizeof(uint64_t));
	w->summary[0] = sum;
	w->run_pos = 0;
	w->run_len = total;
	wi = __builtin_ctzll(sum);
	w->run_slot = (wi << 6) + __builtin_ctzll(w->rbm[wi]);
	return true;
}

/* Bits of word @wi of a bitmap that fall in slots [@lo, @hi]. */
static inline uint64_t
range_bits(unsigned int wi, unsigned int lo, unsigned int hi)
{
	uint64_t m = ~0ULL;

	if (wi == lo >> 6)
		m &= ~0ULL << (lo & 63);
	if (wi == hi >> 6)
		m &= ~0ULL >> (63 - (hi & 63));
	return m;
}

/* First set bit of @bm in [@lo, @hi]; hi + 1 if none. */
static inline unsigned int
bits_first(const uint64_t *bm, unsigned int lo, unsigned int hi)
{
	unsigned int wi;

	for (wi = lo >> 6; wi <= hi >> 6; wi++) {
		uint64_t x = bm[wi] & range_bits(wi, lo, hi);

		if (x != 0)
			return (wi << 6) + __builtin_ctzll(x);
	}
	return hi + 1;
}

/* Last set bit of @bm in [@lo, @hi], which has one. */
static inline unsigned int
bits_last(const uint64_t *bm, unsigned int lo, unsigned int hi)
{
	unsigned int wi = hi >> 6;

	for (;; wi--) {
		uint64_t x = bm[wi] & range_bits(wi, lo, hi);

		if (x != 0)
			return (wi << 6) + 63 - __builtin_clzll(x);
	}
}

/* Set bits of @bm in [@lo, @hi]. */
static inline unsigned int
bits_count(const uint64_t *bm, unsigned int lo, unsigned int hi)
{
	unsigned int wi, n = 0;

	for (wi = lo >> 6; wi <= hi >> 6; wi++)
		n += __builtin_popcountll(bm[wi] & range_bits(wi, lo, hi));
	return n;
}

/* The slot in [@lo, @hi] that holds run entry @x (it is in that range). */
static inline unsigned int
run_slot_of(const struct pcr_wheel *w, unsigned int lo, unsigned int hi,
	    uint32_t x)
{
	/* first s with run_end[s] > x */
	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (w->run_end[mid] > x)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Emit from the run, starting at slot @j == run_slot (the first level-0
 * slot with packets at or after cur's, @pos), through slot @tslot (the
 * last due) at most, but no further than the first slot with array
 * entries (they leave after that slot's run entries). Up to @room
 * packets. Clears the level-0 bits of the slots it empties, counts the
 * clock's jumps into *@adv and returns in *@curslot the slot the clock
 * moves to: the last one emitted from when it stops for @room, else the
 * last one it covered.
 */
static unsigned int
run_drain(struct pcr_wheel *w, unsigned int j, unsigned int pos,
	  unsigned int tslot, struct rte_mbuf **out, unsigned int room,
	  unsigned int *curslot, unsigned int *adv)
{
	uint64_t *bm = w->bitmap; /* level 0's words */
	const uint64_t *abm = w->abm;
	struct rte_mbuf *const *src = w->run + w->run_pos;
	unsigned int e, hi, clr, wi;
	uint32_t avail, k, p;

	e = bits_first(abm, j, tslot);
	if (e > tslot)
		e = tslot;
	avail = w->run_end[e] - w->run_pos;
	k = RTE_MIN(avail, (uint32_t)room);
	memcpy(out, src, (size_t)k * sizeof(*src));
	p = w->run_pos + k;
	w->run_pos = p;
	if (k < avail) {
		/* stopped inside the range: at run entry p's slot */
		unsigned int nxt = run_slot_of(w, j, e, p);

		hi = run_slot_of(w, j, nxt, p - 1);
		w->run_slot = nxt;
		clr = nxt; /* slots before it are done */
	} else {
		hi = k == room ? bits_last(w->rbm, j, e) : e;
		w->run_slot = p == w->run_len ? w->nslots
			      : e + 1 < w->nslots
				      ? bits_first(w->rbm, e + 1, w->nslots - 1)
				      : w->nslots;
		clr = e + 1;
	}
	*adv += bits_count(bm, j, hi) - (j == pos);
	/* slots [j, clr) have no run entries left: keep those with arrays */
	for (wi = j >> 6; clr > j && wi <= (clr - 1) >> 6; wi++) {
		bm[wi] &= ~range_bits(wi, j, clr - 1) | abm[wi];
		if (bm[wi] == 0)
			w->summary[0] &= ~(1ULL << wi);
	}
	*curslot = hi;
	return k;
}

/*
 * Move a far slot's packets down to nearer levels (relative to cur_tick,
 * which is the slot's start). A level-1 slot goes to level 0 as a whole, so
 * its entries need no level computation: the slot is tick & mask.
 */
static void
wheel_cascade(struct pcr_wheel *w, struct wheel_ccounters *c,
	      unsigned int level, unsigned int slot)
{
	struct far_slot *fs = far_slot_of(w, level, slot);
	struct far_chunk *ch = fs->head, *tail, *next;
	uint32_t tail_count;
	uint64_t moved = 0;

	if (fs->pos == NULL)
		return;
	tail = chunk_of(fs->pos);
	tail_count = fs->pos - tail->e;
	fs->head = NULL;
	fs->pos = NULL;
	bit_clear(w, level, slot);
	if (level == 1 && ch != NULL) {
		uint32_t total = (fs->nchunks - 1) * PCR_WHEEL_CHUNK_ENTRIES +
				 tail_count;

		fs->nchunks = 0;
		if (run_build(w, ch, tail, tail_count, total)) {
			/* the whole chain back to the pool at once */
			tail->next = w->free_chunks;
			w->free_chunks = ch;
			CADD(c->occ[0], total);
			CSUB(c->occ[1], total);
			CADD(c->cascaded, total);
			CADD(c->sorted, total);
			return;
		}
	}
	fs->nchunks = 0;
	while (ch != NULL) {
		uint32_t n = ch == tail ? tail_count : PCR_WHEEL_CHUNK_ENTRIES;
		uint32_t i;

		next = ch->next;
		if (next != NULL)
			chunk_prefetch(next);
		if (level == 1) {
			const uint32_t mask = w->mask;
			uint32_t placed = 0;
			struct l0_view v;

			l0_view_get(w, &v);
			for (i = 0; i < n; i++) {
				struct rte_mbuf *m = ch->e[i].m;
				uint64_t tick = ch->e[i].tick;

				if (i + CASCADE_PREFETCH < n)
					l0_prefetch_v(
						&v,
						ch->e[i + CASCADE_PREFETCH]
								.tick &
							mask);
				if (likely(l0_push_v(&v, tick & mask, m))) {
					placed++;
				} else {
					l0_view_sync(w, &v);
					wheel_spill(w, c, m, tick);
					l0_view_get(w, &v);
				}
			}
			l0_view_sync(w, &v);
			CADD(c->occ[0], placed);
		} else {
			for (i = 0; i < n; i++)
				wheel_place_or_spill(w, c, ch->e[i].m,
						     ch->e[i].tick);
		}
		moved += n;
		ch->next = w->free_chunks;
		w->free_chunks = ch;
		ch = next;
	}
	CSUB(c->occ[level], moved);
	CADD(c->cascaded, moved);
}

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

unsigned int
pcr_wheel_dequeue_burst(struct pcr_wheel *w, uint64_t now_tsc,
			struct rte_mbuf **mbufs, unsigned int n)
{
	struct wheel_ccounters *c = &w->c;
	unsigned int cnt;

	rte_seqcount_write_begin(&w->seq);
	wheel_take_inbox(w, c, n);
	cnt = wheel_run(w, c, wheel_tick_of_now(w, now_tsc), mbufs, n, true);
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

