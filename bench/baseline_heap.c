/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Array-based binary min-heap ordered by (departure, sequence number).
 * Node i has children 2i+1 and 2i+2. Insert: append, sift up. Removal:
 * move the last node to the root, sift down. Entries carry the key, so
 * comparisons never touch the mbufs.
 */

#include <stdbool.h>
#include <stddef.h>

#include <rte_common.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>

#include "baseline_heap.h"

struct heap_entry {
	uint64_t tsc;
	uint64_t seq;
	struct rte_mbuf *m;
};

struct bl_heap {
	struct heap_entry *e;
	unsigned int count;
	unsigned int capacity;
	uint64_t next_seq;
	int dynfield_offset;
};

static inline bool
entry_before(const struct heap_entry *a, const struct heap_entry *b)
{
	return a->tsc < b->tsc || (a->tsc == b->tsc && a->seq < b->seq);
}

struct bl_heap *
bl_heap_create(unsigned int capacity, int dynfield_offset)
{
	struct bl_heap *h;

	h = rte_zmalloc("bl_heap", sizeof(*h), RTE_CACHE_LINE_SIZE);
	if (h == NULL)
		return NULL;
	h->e = rte_malloc("bl_heap_entries", (size_t)capacity * sizeof(h->e[0]),
			  RTE_CACHE_LINE_SIZE);
	if (h->e == NULL) {
		rte_free(h);
		return NULL;
	}
	h->capacity = capacity;
	h->dynfield_offset = dynfield_offset;
	return h;
}

void
bl_heap_free(struct bl_heap *h)
{
	if (h == NULL)
		return;
	rte_free(h->e);
	rte_free(h);
}

static inline void
heap_sift_up(struct heap_entry *e, unsigned int i)
{
	struct heap_entry x = e[i];

	while (i > 0) {
		unsigned int parent = (i - 1) / 2;

		if (!entry_before(&x, &e[parent]))
			break;
		e[i] = e[parent];
		i = parent;
	}
	e[i] = x;
}

static inline void
heap_sift_down(struct heap_entry *e, unsigned int count, unsigned int i)
{
	struct heap_entry x = e[i];

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= count)
			break;
		if (c + 1 < count && entry_before(&e[c + 1], &e[c]))
			c++;
		if (!entry_before(&e[c], &x))
			break;
		e[i] = e[c];
		i = c;
	}
	e[i] = x;
}

unsigned int
bl_heap_enqueue_burst(struct bl_heap *h, struct rte_mbuf *const *mbufs,
		      const uint64_t *departure_tsc, unsigned int n)
{
	unsigned int i;

	n = RTE_MIN(n, h->capacity - h->count);
	for (i = 0; i < n; i++) {
		struct heap_entry *x = &h->e[h->count];

		*RTE_MBUF_DYNFIELD(mbufs[i], h->dynfield_offset, uint64_t *) =
			departure_tsc[i];
		x->tsc = departure_tsc[i];
		x->seq = h->next_seq++;
		x->m = mbufs[i];
		heap_sift_up(h->e, h->count);
		h->count++;
	}
	return n;
}

static inline struct rte_mbuf *
heap_pop(struct bl_heap *h)
{
	struct rte_mbuf *m = h->e[0].m;

	h->count--;
	if (h->count > 0) {
		h->e[0] = h->e[h->count];
		heap_sift_down(h->e, h->count, 0);
	}
	return m;
}

unsigned int
bl_heap_dequeue_burst(struct bl_heap *h, uint64_t now_tsc,
		      struct rte_mbuf **mbufs, unsigned int n)
{
	unsigned int cnt = 0;

	while (cnt < n && h->count > 0 && h->e[0].tsc <= now_tsc)
		mbufs[cnt++] = heap_pop(h);
	return cnt;
}

unsigned int
bl_heap_flush(struct bl_heap *h, struct rte_mbuf **mbufs, unsigned int n)
{
	unsigned int cnt = 0;

	while (cnt < n && h->count > 0)
		mbufs[cnt++] = heap_pop(h);
	return cnt;
}

uint64_t
bl_heap_count(const struct bl_heap *h)
{
	return h->count;
}

size_t
bl_heap_memsize(const struct bl_heap *h)
{
	return sizeof(*h) + (size_t)h->capacity * sizeof(h->e[0]);
}
