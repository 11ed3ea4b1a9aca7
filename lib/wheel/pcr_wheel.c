/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Hierarchical timing wheel. See pcr_wheel.h for the contract; this file is
 * the consumer side and the control path.
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

RTE_LOG_REGISTER(pcr_wheel_logtype, pacer.wheel, NOTICE);
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

static uint32_t wheel_serial;

int
pcr_wheel_dynfield_register(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = PCR_WHEEL_DYNFIELD_NAME,
		.size = sizeof(uint64_t),
		.align = __alignof__(uint64_t),
	};

	return rte_mbuf_dynfield_register(&desc);
}

void
pcr_wheel_params_default(struct pcr_wheel_params *p)
{
	memset(p, 0, sizeof(*p));
	p->name = "wheel";
	p->socket_id = SOCKET_ID_ANY;
	p->granularity_ns = DEF_GRANULARITY_NS;
	p->horizon_ns = DEF_HORIZON_NS;
	p->slot_bits = DEF_SLOT_BITS;
	p->levels = DEF_LEVELS;
	p->slot_capacity = DEF_SLOT_CAPACITY;
	p->inbox_size = DEF_INBOX_SIZE;
	p->max_queued = DEF_MAX_QUEUED;
	p->horizon_policy = PCR_WHEEL_HORIZON_DROP;
}

/* Parameters with zero fields replaced by the defaults. */
static void
params_resolve(const struct pcr_wheel_params *in, struct pcr_wheel_params *p)
{
	struct pcr_wheel_params d;

	pcr_wheel_params_default(&d);
	*p = *in;
	if (p->name == NULL)
		p->name = d.name;
	if (p->granularity_ns == 0)
		p->granularity_ns = d.granularity_ns;
	if (p->horizon_ns == 0)
		p->horizon_ns = d.horizon_ns;
	if (p->slot_bits == 0)
		p->slot_bits = d.slot_bits;
	if (p->levels == 0)
		p->levels = d.levels;
	if (p->slot_capacity == 0)
		p->slot_capacity = d.slot_capacity;
	if (p->inbox_size == 0)
		p->inbox_size = d.inbox_size;
	if (p->max_queued == 0)
		p->max_queued = d.max_queued;
}

/* Granularity in TSC cycles, rounded to nearest, at least 1. */
static uint64_t
granularity_tsc_of(const struct pcr_wheel_params *p)
{
	uint64_t g = (p->granularity_ns * p->tsc_hz + 500000000ULL) /
		     1000000000ULL;

	return g == 0 ? 1 : g;
}

/* Largest horizon in ticks the geometry allows: (S - 1) * S^(L-1). */
static uint64_t
horizon_max_ticks_of(unsigned int slot_bits, unsigned int levels)
{
	uint64_t s = 1ULL << slot_bits;

	return (s - 1) << (slot_bits * (levels - 1));
}

/*
 * The multiplier M = ceil(2^64 / g) with which floor(d / g) is the high
 * half of d * M, exactly, for every d < 2^N when N + ceil(log2 g) <= 64
 * (the round-up method: d * M / 2^64 = d / g + d * e / (g * 2^64) with
 * e = M * g - 2^64 < g, and d * e / 2^64 < 2^(N - 64) * g <= 1 / g, less
 * than the distance from d / g to the next integer). Used for offsets
 * below the largest horizon, max_ticks slots of g cycles; 0 when the
 * geometry is too wide for that (or g = 1).
 */
static uint64_t
tick_mul_of(uint64_t g, uint64_t max_ticks)
{
	unsigned int n, l;

	if (g < 2 || max_ticks >= (UINT64_MAX >> 1) / g)
		return 0;
	n = 64 - __builtin_clzll(max_ticks * g); /* max_ticks * g < 2^n */
	l = 64 - __builtin_clzll(g - 1);         /* ceil(log2 g) */
	if (n + l > 64)
		return 0;
	return UINT64_MAX / g + 1;
}

static uint64_t
horizon_ticks_of(uint64_t horizon_ns, uint64_t granularity_ns)
{
	return (horizon_ns + granularity_ns - 1) / granularity_ns;
}

int
pcr_wheel_params_check(const struct pcr_wheel_params *in, char *err,
		       size_t errlen)
{
	struct pcr_wheel_params p;
	char dummy[8];

	if (err == NULL) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = '\0';
	if (in == NULL) {
		snprintf(err, errlen, "no parameters");
		return -EINVAL;
	}
	params_resolve(in, &p);

#define CHECK(cond, ...)                                   \
	do {                                               \
		if (!(cond)) {                             \
			snprintf(err, errlen, __VA_ARGS__); \
			return -EINVAL;                    \
		}                                          \
	} while (0)

	CHECK(p.tsc_hz >= 1000000 && p.tsc_hz <= 100000000000ULL,
	      "tsc_hz %" PRIu64 " out of range 1e6..1e11", p.tsc_hz);
	CHECK(p.granularity_ns >= 250 && p.granularity_ns <= 1000000,
	      "granularity %" PRIu64 " ns out of range 250..1000000",
	      p.granularity_ns);
	CHECK(p.slot_bits >= 2 && p.slot_bits <= PCR_WHEEL_MAX_SLOT_BITS,
	      "slot_bits %u out of range 2..%u", p.slot_bits,
	      PCR_WHEEL_MAX_SLOT_BITS);
	CHECK(p.levels >= 1 && p.levels <= PCR_WHEEL_MAX_LEVELS,
	      "levels %u out of range 1..%u", p.levels, PCR_WHEEL_MAX_LEVELS);
	CHECK(p.slot_bits * p.levels <= 40,
	      "slot_bits x levels = %u exceeds 40 (2^40 ticks)",
	      p.slot_bits * p.levels);
	CHECK(rte_is_power_of_2(p.slot_capacity) && p.slot_capacity >= 4 &&
		      p.slot_capacity <= 65536,
	      "slot_capacity %u must be a power of 2 in 4..65536",
	      p.slot_capacity);
	CHECK(rte_is_power_of_2(p.inbox_size) && p.inbox_size >= 64 &&
		      p.inbox_size <= (1U << 24),
	      "inbox_size %u must be a power of 2 in 64..16777216",
	      p.inbox_size);
	CHECK(p.max_queued <= (1U << 28), "max_queued %u exceeds 2^28",
	      p.max_queued);
	CHECK(p.horizon_policy == PCR_WHEEL_HORIZON_DROP ||
		      p.horizon_policy == PCR_WHEEL_HORIZON_CAP,
	      "horizon_policy %d is neither drop nor cap",
	      (int)p.horizon_policy);
	CHECK(p.horizon_ns >= p.granularity_ns,
	      "horizon %" PRIu64 " ns is shorter than one slot (%" PRIu64
	      " ns)",
	      p.horizon_ns, p.granularity_ns);
	{
		uint64_t maxt = horizon_max_ticks_of(p.slot_bits, p.levels);
		uint64_t h = horizon_ticks_of(p.horizon_ns, p.granularity_ns);

		CHECK(h <= maxt,
		      "horizon %" PRIu64 " ns exceeds what %u levels of %u "
		      "slots of %" PRIu64 " ns hold (%" PRIu64 " ns)",
		      p.horizon_ns, p.levels, 1U << p.slot_bits,
		      p.granularity_ns, maxt * p.granularity_ns);
	}
#undef CHECK
	return 0;
}


/* Bytes of the level-0 slot heads (array or ring pointers). */
static size_t
l0_heads_size(unsigned int nslots)
{
	RTE_SET_USED(nslots);
	return 0; /* in the slots' first lines */
}

/* Bytes of the level-0 slots' storage. */
static size_t
l0_store_size(unsigned int nslots, unsigned int capacity)
{
	/* head + capacity pointers, in whole lines (see l0_index()) */
	return (size_t)nslots * ((capacity + L0_LINE_PTRS) / L0_LINE_PTRS) *
	       RTE_CACHE_LINE_SIZE;
}

static unsigned int
chunk_count(const struct pcr_wheel_params *p)
{
	if (p->levels == 1)
		return 0;
	return (p->max_queued + PCR_WHEEL_CHUNK_ENTRIES - 1) /
		       PCR_WHEEL_CHUNK_ENTRIES +
	       (p->levels - 1) * (1U << p->slot_bits);
}

static unsigned int
bitmap_words(unsigned int slot_bits)
{
	return slot_bits >= 6 ? 1U << (slot_bits - 6) : 1;
}

/*
 * Entries level 0's run holds: a level-1 slot's worth, as much as level 0
 * could hold (S x C) and the far levels are sized for (max_queued); a
 * bigger cascade takes the per-slot path. No run with one level or with
 * level-0 rings.
 */
static uint32_t
run_capacity(const struct pcr_wheel_params *p)
{
	uint64_t sc = (uint64_t)p->slot_capacity << p->slot_bits;

	if (p->levels == 1)
		return 0;
	return (uint32_t)RTE_MIN(sc, (uint64_t)p->max_queued);
}

/* Bytes of the run and its slot ends. */
static size_t
run_size(const struct pcr_wheel_params *p)
{
	if (run_capacity(p) == 0)
		return 0;
	return RTE_ALIGN_CEIL((size_t)run_capacity(p) * sizeof(void *) +
				      ((size_t)sizeof(uint32_t) << p->slot_bits),
			      RTE_CACHE_LINE_SIZE);
}

size_t
pcr_wheel_memsize(const struct pcr_wheel_params *in)
{
	struct pcr_wheel_params p;
	unsigned int s;
	size_t sz;

	if (pcr_wheel_params_check(in, NULL, 0) != 0)
		return 0;
	params_resolve(in, &p);
	s = 1U << p.slot_bits;
	sz = RTE_ALIGN_CEIL(sizeof(struct pcr_wheel), RTE_CACHE_LINE_SIZE);
	sz += RTE_ALIGN_CEIL(sizeof(struct __pcr_wheel_pcounters) *
				     (RTE_MAX_LCORE + 1),
			     RTE_CACHE_LINE_SIZE);
	/* the levels' bitmaps, then level 0's abm and rbm */
	sz += RTE_ALIGN_CEIL((size_t)(p.levels + 2) * bitmap_words(p.slot_bits) *
				     sizeof(uint64_t),
			     RTE_CACHE_LINE_SIZE);
	sz += run_size(&p);
	sz += l0_heads_size(s);
	sz += l0_store_size(s, p.slot_capacity);
	sz += RTE_ALIGN_CEIL((size_t)(p.levels - 1) * s *
				     sizeof(struct far_slot),
			     RTE_CACHE_LINE_SIZE);
	sz += (size_t)chunk_count(&p) * sizeof(struct far_chunk);
	sz += rte_ring_get_memsize_elem(sizeof(struct __pcr_wheel_entry),
					rte_align32pow2(p.inbox_size + 1));
	return sz;
}

/*
 * Write every page of [p, p + len) once (with what it holds). Memory from
 * rte_zmalloc() is not necessarily written: DPDK skips the clearing of
 * memory it knows to be zero, and without hugepages (--no-huge, the tests
 * and benchmarks) such memory is an anonymous mapping whose pages fault in
 * on first touch. The wheel's level-0 store alone is 17 MB: faulted in by
 * the TX lcore slot by slot, each first use of a slot stalls a departure
 * (measured: the first TX pass of a run took 270-360 us). With hugepages
 * this costs a pass over memory already there.
 */
static void
mem_touch(void *p, size_t len)
{
	volatile uint8_t *b = p;
	size_t off;

	if (b == NULL || len == 0)
		return;
	for (off = 0; off < len; off += 4096)
		b[off] = b[off];
	b[len - 1] = b[len - 1];
}

struct pcr_wheel *
pcr_wheel_create(const struct pcr_wheel_params *in)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	char err[256], rname[RTE_RING_NAMESIZE];
	unsigned int i, s, nchunks;
	uint32_t serial;
	int off;

	if (pcr_wheel_params_check(in, err, sizeof(err)) != 0) {
		WHEEL_LOG(ERR, "invalid parameters: %s", err);
		rte_errno = EINVAL;
		return NULL;
	}
	params_resolve(in, &p);
	off = pcr_wheel_dynfield_register();
	if (off < 0) {
		WHEEL_LOG(ERR, "cannot register mbuf dynamic field: %s",
			  rte_strerror(rte_errno));
		return NULL;
	}

	w = rte_zmalloc_socket("pcr_wheel", sizeof(*w), RTE_CACHE_LINE_SIZE,
			       p.socket_id);
	if (w == NULL)
		goto nomem;
	serial = __atomic_fetch_add(&wheel_serial, 1, __ATOMIC_RELAXED);
	snprintf(w->name, sizeof(w->name), "%s", p.name);
	s = 1U << p.slot_bits;
	w->head.dynfield_offset = off;
	w->epoch_tsc = p.start_tsc;
	w->tsc_hz = p.tsc_hz;
	w->granularity_ns = p.granularity_ns;
	w->granularity_tsc = granularity_tsc_of(&p);
	w->granularity_recip = rte_reciprocal_value_u64(w->granularity_tsc);
	w->tick_mul = tick_mul_of(w->granularity_tsc,
				  horizon_max_ticks_of(p.slot_bits, p.levels));
	w->horizon_ns = p.horizon_ns;
	w->horizon_ticks = horizon_ticks_of(p.horizon_ns, p.granularity_ns);
	w->horizon_max_ticks = horizon_max_ticks_of(p.slot_bits, p.levels);
	w->horizon_policy = p.horizon_policy;
	w->slot_bits = p.slot_bits;
	w->levels = p.levels;
	w->nslots = s;
	w->mask = s - 1;
	w->words = bitmap_words(p.slot_bits);
	w->slot_capacity = p.slot_capacity;
	w->cap_bits = rte_log2_u32(p.slot_capacity);
	w->l0_line_shift = p.slot_bits + rte_log2_u32(L0_LINE_PTRS);
	for (i = 0; i < RTE_DIM(w->level_of_bit); i++)
		w->level_of_bit[i] = RTE_MIN(i / p.slot_bits + 1, p.levels - 1);
	w->drop_fn = p.drop_fn;
	w->drop_arg = p.drop_arg;
	w->inbox_size = p.inbox_size;
	w->max_queued = p.max_queued;
	w->memsize = pcr_wheel_memsize(&p);
	rte_seqcount_init(&w->seq);

	w->head.pcnt = rte_zmalloc_socket(
		"pcr_wheel_pcnt",
		sizeof(struct __pcr_wheel_pcounters) * (RTE_MAX_LCORE + 1),
		RTE_CACHE_LINE_SIZE, p.socket_id);
	w->bitmap = rte_zmalloc_socket("pcr_wheel_bitmap",
				       (size_t)(p.levels + 2) * w->words *
					       sizeof(uint64_t),
				       RTE_CACHE_LINE_SIZE, p.socket_id);
	if (w->bitmap != NULL) {
		w->abm = w->bitmap + (size_t)p.levels * w->words;
		w->rbm = w->abm + w->words;
	}
	w->run_cap = run_capacity(&p);
	w->run_min = RTE_MAX(s / RUN_MIN_DIV, 1U);
	w->run_slot = s;
	if (w->run_cap > 0) {
		w->run = rte_malloc_socket("pcr_wheel_run", run_size(&p),
					   RTE_CACHE_LINE_SIZE, p.socket_id);
		if (w->run == NULL)
			goto nomem;
		w->run_end = (uint32_t *)(void *)(w->run + w->run_cap);
	}
	w->l0_mem = rte_zmalloc_socket("pcr_wheel_l0_store",
				       l0_store_size(s, p.slot_capacity),
				       RTE_CACHE_LINE_SIZE, p.socket_id);
	if (w->head.pcnt == NULL || w->bitmap == NULL || w->l0_mem == NULL)
		goto nomem;
	w->l0_mbufs = w->l0_mem;
	if (p.levels > 1) {
		w->far = rte_zmalloc_socket("pcr_wheel_far",
					    (size_t)(p.levels - 1) * s *
						    sizeof(*w->far),
					    RTE_CACHE_LINE_SIZE, p.socket_id);
		nchunks = chunk_count(&p);
		RTE_BUILD_BUG_ON(!RTE_IS_POWER_OF_2(CHUNK_SIZE));
		w->chunks = rte_malloc_socket("pcr_wheel_chunks",
					      (size_t)nchunks *
						      sizeof(struct far_chunk),
					      CHUNK_SIZE, p.socket_id);
		if (w->far == NULL || w->chunks == NULL)
			goto nomem;
		for (i = 0; i < nchunks; i++) {
			w->chunks[i].next = i + 1 < nchunks ? &w->chunks[i + 1]
							    : NULL;
		}
		w->free_chunks = &w->chunks[0];
	}
	snprintf(rname, sizeof(rname), "pcrw%u_inbox", serial);
	w->head.inbox = rte_ring_create_elem(
		rname, sizeof(struct __pcr_wheel_entry), p.inbox_size,
		p.socket_id, RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (w->head.inbox == NULL) {
		WHEEL_LOG(ERR, "cannot create inbox ring: %s",
			  rte_strerror(rte_errno));
		goto fail;
	}
	/* everything the data path writes, faulted in now (see mem_touch) */
	mem_touch(w->head.inbox,
		  rte_ring_get_memsize_elem(sizeof(struct __pcr_wheel_entry),
					    w->head.inbox->size));
	mem_touch(w->l0_mem, l0_store_size(s, p.slot_capacity));
	mem_touch(w->bitmap, (size_t)(p.levels + 2) * w->words * sizeof(uint64_t));
	if (w->run != NULL)
		mem_touch(w->run, run_size(&p));
	if (w->far != NULL)
		mem_touch(w->far, (size_t)(p.levels - 1) * s * sizeof(*w->far));
	return w;

nomem:
	WHEEL_LOG(ERR, "out of memory for wheel %s (%zu bytes needed)", p.name,
		  pcr_wheel_memsize(&p));
	rte_errno = ENOMEM;
fail:
	if (w != NULL) {
		int e = rte_errno;

		rte_free(w->head.pcnt);
		rte_free(w->bitmap);
		rte_free(w->l0_mem);
		rte_free(w->far);
		rte_free(w->chunks);
		rte_free(w->run);
		rte_free(w);
		rte_errno = e;
	}
	return NULL;
}

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

int
pcr_wheel_set_horizon(struct pcr_wheel *w, uint64_t horizon_ns,
		      enum pcr_wheel_horizon_policy policy)
{
	uint64_t h;

	if (horizon_ns < w->granularity_ns ||
	    (policy != PCR_WHEEL_HORIZON_DROP &&
	     policy != PCR_WHEEL_HORIZON_CAP))
		return -EINVAL;
	h = horizon_ticks_of(horizon_ns, w->granularity_ns);
	if (h > w->horizon_max_ticks)
		return -EINVAL;
	__atomic_store_n(&w->horizon_ticks, h, __ATOMIC_RELAXED);
	__atomic_store_n(&w->horizon_policy, policy, __ATOMIC_RELAXED);
	__atomic_store_n(&w->horizon_ns, horizon_ns, __ATOMIC_RELAXED);
	return 0;
}

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

void
pcr_wheel_stats_get(const struct pcr_wheel *w, struct pcr_wheel_stats *s)
{
	struct wheel_ccounters c;
	uint64_t enq = 0, refused = 0, inlevels = 0;
	uint32_t sn;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	do {
		sn = rte_seqcount_read_begin(&w->seq);
		c.taken = LOAD(w->c.taken);
		c.dequeued = LOAD(w->c.dequeued);
		for (i = 0; i < PCR_WHEEL_DROP_MAX; i++)
			c.drop[i] = LOAD(w->c.drop[i]);
		c.late = LOAD(w->c.late);
		c.horizon_cap = LOAD(w->c.horizon_cap);
		c.spill = LOAD(w->c.spill);
		c.cascaded = LOAD(w->c.cascaded);
		c.sorted = LOAD(w->c.sorted);
		c.advances = LOAD(w->c.advances);
		for (i = 0; i < w->levels; i++)
			c.occ[i] = LOAD(w->c.occ[i]);
	} while (rte_seqcount_read_retry(&w->seq, sn));

	for (i = 0; i <= RTE_MAX_LCORE; i++) {
		enq += LOAD(w->head.pcnt[i].enqueued);
		refused += LOAD(w->head.pcnt[i].refused);
	}
	/*
	 * A producer counts after its ring enqueue, so the consumer may
	 * already have taken entries the producer has not counted yet: those
	 * were enqueued all the same.
	 */
	if (enq < c.taken)
		enq = c.taken;

	s->enqueued = enq;
	s->refused = refused;
	s->dequeued = c.dequeued;
	for (i = 0; i < PCR_WHEEL_DROP_MAX; i++) {
		s->drop[i] = c.drop[i];
		s->dropped += c.drop[i];
	}
	s->late = c.late;
	s->horizon_cap = c.horizon_cap;
	s->spill = c.spill;
	s->cascaded = c.cascaded;
	s->sorted = c.sorted;
	s->advances = c.advances;
	s->levels = w->levels;
	for (i = 0; i < w->levels; i++) {
		s->level_occupancy[i] = c.occ[i];
		inlevels += c.occ[i];
	}
	s->inbox = enq - c.taken;
	s->queued = inlevels + s->inbox;
}

void
pcr_wheel_info_get(const struct pcr_wheel *w, struct pcr_wheel_info *info)
{
	unsigned int l;

	memset(info, 0, sizeof(*info));
	info->tsc_hz = w->tsc_hz;
	info->granularity_tsc = w->granularity_tsc;
	info->granularity_ns = w->granularity_ns;
	info->horizon_ns = LOAD(w->horizon_ns);
	info->horizon_tsc = LOAD(w->horizon_ticks) * w->granularity_tsc;
	info->horizon_max_ns = w->horizon_max_ticks * w->granularity_ns;
	info->slot_bits = w->slot_bits;
	info->levels = w->levels;
	info->slot_capacity = w->slot_capacity;
	info->inbox_size = w->inbox_size;
	info->max_queued = w->max_queued;
	info->horizon_policy = LOAD(w->horizon_policy);
	for (l = 0; l < w->levels; l++)
		info->level_span_ns[l] = w->granularity_ns
					 << (w->slot_bits * l);
	info->memsize = w->memsize;
}

void
pcr_wheel_free(struct pcr_wheel *w)
{
	struct rte_mbuf *m[64];
	unsigned int n;

	if (w == NULL)
		return;
	while ((n = pcr_wheel_flush(w, m, RTE_DIM(m))) > 0)
		rte_pktmbuf_free_bulk(m, n);
	rte_ring_free(w->head.inbox);
	rte_free(w->head.pcnt);
	rte_free(w->bitmap);
	rte_free(w->l0_mem);
	rte_free(w->far);
	rte_free(w->chunks);
	rte_free(w->run);
	rte_free(w);
}
