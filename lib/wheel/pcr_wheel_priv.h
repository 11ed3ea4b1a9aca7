/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_WHEEL_PRIV_H
#define PCR_WHEEL_PRIV_H

/*
 * The wheel's insides, shared by its two files: pcr_wheel.c (the consumer
 * side: placement, level 0 and its run, the far levels and the cascade,
 * the clock, dequeue) and pcr_wheel_mem.c (geometry, memory, creation and
 * teardown, the horizon, statistics). Not for users: pcr_wheel.h is the
 * contract.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_reciprocal.h>
#include <rte_seqcount.h>
#include <rte_vect.h>

#include "pcr_wheel.h"

extern int pcr_wheel_logtype;
#define WHEEL_LOG(level, fmt, ...)                                           \
	rte_log(RTE_LOG_##level, pcr_wheel_logtype, "pcr_wheel: " fmt "\n", \
		##__VA_ARGS__)

#define DEF_GRANULARITY_NS 1000
#define DEF_HORIZON_NS     (2ULL * 1000 * 1000 * 1000)
#define DEF_SLOT_BITS      12
#define DEF_LEVELS         2
#define DEF_SLOT_CAPACITY  512
#define DEF_INBOX_SIZE     65536
#define DEF_MAX_QUEUED     (1U << 20)
#define INBOX_BURST        64
/* A level-1 cascade prefetches the level-0 slot this many entries ahead. */
#define CASCADE_PREFETCH   16
/* l0_drain() prefetches the level-0 slot this many slots ahead. */
#define DRAIN_PREFETCH     8
/* A level-1 cascade is sorted into a run from this many entries per slot
 * of level 0 on (nslots / RUN_MIN_DIV entries; see run_build()). */
#define RUN_MIN_DIV        4

/*
 * Level-0 slot: a circular array of slot_capacity mbuf pointers in
 * l0_mbufs with free-running head and tail indexes, which live in the first
 * 8 bytes of the slot's first line (so a slot holding up to 7 packets, the
 * common case, is one line to push into and to pop from; see l0_index()).
 * (SP/SC rte_rings per slot, the container this replaced, measured in
 * docs/PERFORMANCE.md, are gone since 2026-12-05; git show 46e03ca has
 * them as -DPCR_WHEEL_L0_RING.)
 */
#define L0_LINE_PTRS (RTE_CACHE_LINE_SIZE / sizeof(struct rte_mbuf *))

struct l0_slot {
	uint32_t head;
	uint32_t tail;
};

/* Far-level container: a chain of chunks of (mbuf, tick) pairs. */
struct far_entry {
	struct rte_mbuf *m;
	uint64_t tick;
};

/* Every chunk of a chain but the tail is full; the slot counts the tail. */
struct far_chunk {
	struct far_chunk *next;
	uint64_t pad;
	struct far_entry e[PCR_WHEEL_CHUNK_ENTRIES];
};


/*
 * Chunks are aligned to their size, so the tail's next free entry says
 * both where to write and, at the chunk's end, that it is full.
 */
struct far_slot {
	struct far_chunk *head;
	struct far_entry *pos; /* next free entry in the tail; NULL: empty */
	uint32_t nchunks;      /* chunks in the chain */
	uint32_t pad;
};

#define CHUNK_SIZE sizeof(struct far_chunk)

/* The chunk that holds the entry before @pos (its last one, if full). */
static inline struct far_chunk *
chunk_of(const struct far_entry *pos)
{
	return (struct far_chunk *)RTE_ALIGN_FLOOR((uintptr_t)(pos - 1),
						   CHUNK_SIZE);
}

/* Prefetch every line of chunk @ch (run_build(), the cascade). */
static inline void
chunk_prefetch(const struct far_chunk *ch)
{
	unsigned int off;

	for (off = 0; off < sizeof(*ch); off += RTE_CACHE_LINE_SIZE)
		rte_prefetch0(RTE_PTR_ADD(ch, off));
}

/* Consumer counters; written by the consumer under `seq`. */
struct wheel_ccounters {
	uint64_t taken; /* entries taken from the inbox */
	uint64_t dequeued;
	uint64_t drop[PCR_WHEEL_DROP_MAX];
	uint64_t late;
	uint64_t horizon_cap;
	uint64_t spill;
	uint64_t cascaded;
	uint64_t sorted;
	uint64_t direct;
	uint64_t advances;
	uint64_t occ[PCR_WHEEL_MAX_LEVELS];
};

struct pcr_wheel {
	/* First cache line: read by producers in the inline enqueue. */
	struct __pcr_wheel_head head;

	/* Consumer state, read-mostly geometry. */
	uint64_t epoch_tsc __rte_cache_aligned;
	uint64_t granularity_tsc;
	struct rte_reciprocal_u64 granularity_recip;
	/* ceil(2^64 / granularity_tsc): ticks of an offset below the
	 * geometry's horizon in one multiply (tick_mul_of()); 0: not exact
	 * for this geometry, the reciprocal does it */
	uint64_t tick_mul;
	uint64_t horizon_ticks;
	uint64_t horizon_max_ticks;
	enum pcr_wheel_horizon_policy horizon_policy;
	unsigned int slot_bits;
	unsigned int levels;
	unsigned int nslots;
	unsigned int mask;
	unsigned int words; /* bitmap words per level */
	unsigned int slot_capacity;
	unsigned int cap_bits; /* log2(slot_capacity) */
	unsigned int l0_line_shift; /* slot_bits + log2(L0_LINE_PTRS) */
	/* level_of_bit[b]: the level for a tick whose highest bit differing
	 * from cur_tick's, above the level-0 bits, is b */
	uint8_t level_of_bit[64];
	pcr_wheel_drop_fn drop_fn;
	void *drop_arg;
	uint64_t *bitmap;          /* levels * words */
	struct rte_mbuf **l0_mbufs; /* their pointer arrays */
	struct far_slot *far;      /* (levels - 1) * nslots */
	struct far_chunk *chunks;  /* the pool's memory */
	struct far_chunk *free_chunks;
	void *l0_mem;
	/* level 0's run (run_build()): the sorted mbufs of one level-1 slot */
	struct rte_mbuf **run;
	uint32_t *run_end;         /* per slot: end of its entries in run */
	uint64_t *abm;             /* level-0 slots with array entries */
	uint64_t *rbm;             /* level-0 slots with run entries */
	uint32_t run_cap;          /* entries run holds; 0: no run */
	uint32_t run_min;          /* smallest cascade sorted into a run */

	/* Consumer read-write state. */
	uint64_t cur_tick __rte_cache_aligned;
	uint32_t run_pos;          /* next run entry to emit */
	uint32_t run_len;          /* entries in the run */
	unsigned int run_slot;     /* slot of run[run_pos]; nslots: none */
	/* bit w of summary[l]: word w of level l's bitmap is not zero */
	uint64_t summary[PCR_WHEEL_MAX_LEVELS];
	rte_seqcount_t seq;
	struct wheel_ccounters c;

	/* Description. */
	uint64_t tsc_hz __rte_cache_aligned;
	uint64_t granularity_ns;
	uint64_t horizon_ns;
	unsigned int inbox_size;
	unsigned int max_queued;
	size_t memsize;
	char name[RTE_RING_NAMESIZE];
};


#endif /* PCR_WHEEL_PRIV_H */
