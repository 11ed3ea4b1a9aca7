/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The timing wheel's level 0: its per-slot arrays, and the run (one
 * level-1 slot's packets counting-sorted by slot when it cascades big).
 *
 * Part of pcr_wheel.c's translation unit, included there once, after the
 * bitmaps, so that the consumer path is inlined across its parts: not a
 * header to include anywhere else.
 */

#ifndef PCR_WHEEL_L0_H
#define PCR_WHEEL_L0_H

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

/*
 * Up to @k entries of @e (a run for one slot, in order) pushed to level-0
 * slot @slot through a view: one capacity check, one tail and bitmap
 * update, and the pointers copied a line's stretch at a time. @return
 * how many it took: all, or the room the slot had (the rest spill).
 */
static __rte_always_inline unsigned int
l0_push_run_v(struct l0_view *v, unsigned int slot,
	      const struct __pcr_wheel_entry *e, unsigned int k)
{
	struct l0_slot *s = l0_head(v->mb, slot);
	struct rte_mbuf **base = v->mb + (size_t)slot * L0_LINE_PTRS;
	uint32_t tail = s->tail, count = tail - s->head, j, q;

	if (unlikely(slot >= v->run_slot))
		count += run_left(v->w, slot);
	if (unlikely(count >= v->cap))
		return 0;
	k = RTE_MIN(k, v->cap - count);
	j = (tail & v->cmask) + 1; /* position 0 is the head */
	for (q = 0; q < k;) {
		uint32_t o = j % L0_LINE_PTRS;
		uint32_t c = RTE_MIN((uint32_t)L0_LINE_PTRS - o, k - q);
		/* the array's last position ends the stretch */
		if (c > v->cap + 1 - j)
			c = v->cap + 1 - j;
		struct rte_mbuf **d =
			base + ((size_t)(j / L0_LINE_PTRS) << v->line_shift) + o;
		const struct __pcr_wheel_entry *x = e + q, *end = x + c;

		while (x < end)
			*d++ = (x++)->m;
		q += c;
		j = j + c > v->cap ? 1 : j + c;
	}
	s->tail = tail + k;
	if (tail == s->head) {
		v->abm[slot >> 6] |= 1ULL << (slot & 63);
		v->bm[slot >> 6] |= 1ULL << (slot & 63);
		v->sum |= 1ULL << (slot >> 6);
	}
	return k;
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
	uint32_t j = (h & cmask) + 1; /* position 0 is the head */

	/* a line's stretch at a time: up to 8 pointers side by side */
	for (i = 0; i < k;) {
		uint32_t o = j % L0_LINE_PTRS;
		uint32_t c = RTE_MIN((uint32_t)L0_LINE_PTRS - o, k - i);
		/* the array's last position ends the stretch */
		if (c > cmask + 2 - j)
			c = cmask + 2 - j;
		struct rte_mbuf *const *src =
			base + ((size_t)(j / L0_LINE_PTRS) << ls) + o;
		struct rte_mbuf **d = out + i, **end = d + c;

		while (d < end)
			*d++ = *src++;
		i += c;
		j = j + c > cmask + 1 ? 1 : j + c;
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

#endif /* PCR_WHEEL_L0_H */
