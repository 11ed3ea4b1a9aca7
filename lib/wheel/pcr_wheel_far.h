/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The timing wheel's far levels: a chain of chunks per slot, and the
 * cascade that moves a far slot into the level below (or into level 0's
 * run).
 *
 * Part of pcr_wheel.c's translation unit, included there once, after the
 * bitmaps, so that the consumer path is inlined across its parts: not a
 * header to include anywhere else.
 */

#ifndef PCR_WHEEL_FAR_H
#define PCR_WHEEL_FAR_H

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

#endif /* PCR_WHEEL_FAR_H */
