/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The timing wheel's cold side: parameters and geometry, memory size,
 * creation (every line touched before the first packet) and teardown,
 * changing the horizon, statistics and description. The consumer's path
 * is pcr_wheel.c; the shared insides pcr_wheel_priv.h.
 */

#include "pcr_wheel_priv.h"

RTE_LOG_REGISTER(pcr_wheel_logtype, pacer.wheel, NOTICE);

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
		c.direct = LOAD(w->c.direct);
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
	s->direct = c.direct;
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
