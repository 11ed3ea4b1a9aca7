/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Unit tests of lib/wheel: ordering across slots, levels and cascade
 * boundaries, large TSC values and wrap-around, the late/horizon/spill
 * contract with exact counters, conservation and mbuf accounting after every
 * test, concurrent producers, and a property test against a reference model.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pcr_test_eal.h"
#include "pcr_wheel.h"

#define HZ       2000000000ULL /* a virtual TSC: 2 GHz, 2000 cycles/us */
#define G_NS     1000ULL
#define G_TSC    (HZ / 1000000000ULL * G_NS)
#define POOL_N   (300 * 1024)
/* level 0's sorted run is always built */
#define RUN_SORTS 1

static struct rte_mempool *pool;
static int dyn_off;
static unsigned int in_use_at_start;
/* capped packets leave before their departure time, by design */
static bool check_early = true;

static int
test_setup(void **state)
{
	(void)state;
	in_use_at_start = rte_mempool_in_use_count(pool);
	check_early = true;
	return 0;
}

/* Packet id lives in the first 4 bytes of the data room. */
static struct rte_mbuf *
pkt_new(uint32_t id)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);

	assert_non_null(m);
	*rte_pktmbuf_mtod(m, uint32_t *) = id;
	return m;
}

static uint32_t
pkt_id(struct rte_mbuf *m)
{
	return *rte_pktmbuf_mtod(m, uint32_t *);
}

static void
params_init(struct pcr_wheel_params *p, uint64_t start_tsc)
{
	pcr_wheel_params_default(p);
	p->tsc_hz = HZ;
	p->start_tsc = start_tsc;
	p->socket_id = SOCKET_ID_ANY;
}

/* Conservation, then drain and free everything; pool back to its start. */
static void
wheel_finish(struct pcr_wheel *w)
{
	struct pcr_wheel_stats s;
	struct rte_mbuf *m[256];
	uint64_t levels = 0;
	unsigned int n, i;

	pcr_wheel_stats_get(w, &s);
	for (i = 0; i < s.levels; i++)
		levels += s.level_occupancy[i];
	assert_int_equal(s.enqueued, s.dequeued + s.dropped + s.queued);
	assert_int_equal(s.queued, levels + s.inbox);
	while ((n = pcr_wheel_flush(w, m, RTE_DIM(m))) > 0)
		rte_pktmbuf_free_bulk(m, n);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.queued, 0);
	assert_int_equal(s.enqueued, s.dequeued + s.dropped);
	pcr_wheel_free(w);
	assert_int_equal(rte_mempool_in_use_count(pool), in_use_at_start);
}

/* Dequeue everything due at @now; frees the packets, returns the count. */
static unsigned int
drain_at(struct pcr_wheel *w, uint64_t now, uint32_t *ids, unsigned int max)
{
	struct rte_mbuf *m[32];
	unsigned int total = 0, n, i;

	do {
		n = pcr_wheel_dequeue_burst(w, now, m, RTE_DIM(m));
		for (i = 0; i < n; i++) {
			uint64_t dep = *pcr_wheel_departure(m[i], dyn_off);

			/* never before its slot's start: dep < start + G */
			if (check_early)
				assert_true((int64_t)(dep - now) <
					    (int64_t)G_TSC);
			if (ids != NULL && total < max)
				ids[total] = pkt_id(m[i]);
			total++;
			rte_pktmbuf_free(m[i]);
		}
	} while (n == RTE_DIM(m));
	return total;
}

static void
enqueue_one(struct pcr_wheel *w, uint32_t id, uint64_t dep)
{
	struct rte_mbuf *m = pkt_new(id);

	assert_int_equal(pcr_wheel_enqueue_burst(w, &m, &dep, 1), 1);
}

/* --- validation --------------------------------------------------------- */

static void
test_params_check(void **state)
{
	struct pcr_wheel_params p;
	char err[256];

	(void)state;
	params_init(&p, 0);
	assert_int_equal(pcr_wheel_params_check(&p, err, sizeof(err)), 0);

	p.granularity_ns = 100;
	assert_int_equal(pcr_wheel_params_check(&p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "granularity 100 ns"));

	params_init(&p, 0);
	p.horizon_ns = 20ULL * 1000 * 1000 * 1000; /* > 16.7 s */
	assert_int_equal(pcr_wheel_params_check(&p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "exceeds"));

	params_init(&p, 0);
	p.slot_capacity = 100;
	assert_int_equal(pcr_wheel_params_check(&p, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "slot_capacity 100"));

	params_init(&p, 0);
	p.tsc_hz = 0;
	assert_int_equal(pcr_wheel_params_check(&p, err, sizeof(err)),
			 -EINVAL);
	assert_null(pcr_wheel_create(&p));
	assert_int_equal(rte_errno, EINVAL);

	params_init(&p, 0);
	assert_true(pcr_wheel_memsize(&p) > 0);
	assert_true(pcr_wheel_memsize(&p) < 64u << 20);
}

/* --- ordering ------------------------------------------------------------ */

/*
 * Packets at ticks around every level boundary, inserted in reverse, come
 * out in time order, each only once its slot has started.
 */
static void
run_boundaries(uint64_t start_tsc, unsigned int slot_bits, unsigned int levels)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	uint64_t ticks[64], s = 1ULL << slot_bits;
	unsigned int nt = 0, i, l;
	uint32_t ids[64];

	params_init(&p, start_tsc);
	p.slot_bits = slot_bits;
	p.levels = levels;
	p.horizon_ns = ((s - 1) << (slot_bits * (levels - 1))) * G_NS;
	w = pcr_wheel_create(&p);
	assert_non_null(w);

	ticks[nt++] = 0;
	ticks[nt++] = 1;
	for (l = 1; l < levels; l++) {
		uint64_t b = 1ULL << (slot_bits * l);

		ticks[nt++] = b - 1;
		ticks[nt++] = b;
		ticks[nt++] = b + 1;
		ticks[nt++] = 2 * b - 1;
		ticks[nt++] = 2 * b;
	}
	ticks[nt++] = ((s - 1) << (slot_bits * (levels - 1))) - 1;
	/* insert in reverse order, departure in the middle of the slot */
	for (i = nt; i-- > 0;)
		enqueue_one(w, i, start_tsc + ticks[i] * G_TSC + G_TSC / 2);

	/* nothing due before tick 0 ends... tick 0 is due at once */
	assert_int_equal(drain_at(w, start_tsc, ids, 64), 1);
	assert_int_equal(ids[0], 0);
	for (i = 1; i < nt; i++) {
		uint64_t slot_start = start_tsc + ticks[i] * G_TSC;

		if (ticks[i] == ticks[i - 1])
			continue;
		/* one cycle before its slot starts: nothing */
		assert_int_equal(drain_at(w, slot_start - 1, NULL, 0), 0);
		assert_int_equal(drain_at(w, slot_start, ids, 64), 1);
		assert_int_equal(ids[0], i);
	}
	wheel_finish(w);
}

static void
test_order_boundaries(void **state)
{
	(void)state;
	run_boundaries(1000000, 8, 3);
	run_boundaries(1000000, 2, 4);
	run_boundaries(1000000, 6, 2);
	run_boundaries(1000000, 4, 1);
}

static void
test_order_large_tsc(void **state)
{
	(void)state;
	/* start near 2^63 */
	run_boundaries(1ULL << 63, 8, 3);
	run_boundaries((1ULL << 63) - 3 * G_TSC, 2, 4);
	/* the TSC itself wraps past 2^64 during the run */
	run_boundaries(UINT64_MAX - 100 * G_TSC, 8, 3);
	run_boundaries(UINT64_MAX - 5 * G_TSC, 2, 3);
}

/* FIFO within a slot: same tick, insertion order kept through cascades. */
static void
test_fifo_within_slot(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	uint64_t t0 = 5000, far = t0 + 70000 * G_TSC; /* level 2 at start */
	uint32_t ids[400];
	unsigned int i, n;

	(void)state;
	params_init(&p, t0);
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	for (i = 0; i < 100; i++)
		enqueue_one(w, i, far + (i % 7)); /* same slot, other cycles */
	/* move the clock on, so later inserts for that slot go lower */
	assert_int_equal(drain_at(w, t0 + 66000 * G_TSC, NULL, 0), 0);
	for (i = 100; i < 200; i++)
		enqueue_one(w, i, far);
	assert_int_equal(drain_at(w, far - 300 * G_TSC, NULL, 0), 0);
	for (i = 200; i < 300; i++)
		enqueue_one(w, i, far);
	assert_int_equal(drain_at(w, far - 1 * G_TSC, NULL, 0), 0);
	for (i = 300; i < 400; i++)
		enqueue_one(w, i, far);
	n = drain_at(w, far, ids, 400);
	assert_int_equal(n, 400);
	for (i = 0; i < 400; i++)
		assert_int_equal(ids[i], i);
	wheel_finish(w);
}

/*
 * A level-0 slot is a circular array: after a partial drain it takes
 * exactly slot_capacity packets again, reusing the freed places, and keeps
 * FIFO across the wrap of its index.
 */
static void
test_slot_partial_drain_wrap(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	struct rte_mbuf *m[32];
	uint64_t t0 = 777, dep = t0 + 5 * G_TSC;
	uint32_t ids[32];
	unsigned int i, n;

	(void)state;
	params_init(&p, t0);
	p.slot_capacity = 16;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	for (i = 0; i < 16; i++)
		enqueue_one(w, i, dep);
	assert_int_equal(drain_at(w, t0, NULL, 0), 0);
	/* take 5 of the 16: the clock stays at the slot */
	n = pcr_wheel_dequeue_burst(w, dep, m, 5);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++) {
		assert_int_equal(pkt_id(m[i]), i);
		rte_pktmbuf_free(m[i]);
	}
	/* 5 fit again in the freed places; the 6th spills to the next slot */
	for (i = 16; i < 22; i++)
		enqueue_one(w, i, dep);
	assert_int_equal(drain_at(w, dep, ids, 32), 16);
	for (i = 0; i < 16; i++)
		assert_int_equal(ids[i], 5 + i);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.spill, 1);
	assert_int_equal(s.late, 0);
	assert_int_equal(s.dropped, 0);
	assert_int_equal(drain_at(w, dep + G_TSC, ids, 32), 1);
	assert_int_equal(ids[0], 21);
	wheel_finish(w);
}

/*
 * Events in different 64-slot bitmap words of a level, and on far levels,
 * are found through the summary word: pcr_wheel_next_tsc() names each in
 * turn and the packets come out in time order.
 */
static void
summary_case(unsigned int slot_bits, unsigned int levels,
	     const uint64_t *ticks, const uint64_t *next_ticks, unsigned int n)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	uint64_t t0 = 123456;
	uint32_t ids[4];
	unsigned int i;

	params_init(&p, t0);
	p.slot_bits = slot_bits;
	p.levels = levels;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	for (i = 0; i < n; i++)
		enqueue_one(w, i, t0 + ticks[i] * G_TSC);
	assert_int_equal(drain_at(w, t0, NULL, 0), 0);
	for (i = 0; i < n; i++) {
		/* the next event: a level-0 slot or a far slot's cascade */
		assert_int_equal(pcr_wheel_next_tsc(w),
				 t0 + next_ticks[i] * G_TSC);
		/* nothing due just before the packet's slot */
		assert_int_equal(drain_at(w, t0 + ticks[i] * G_TSC - 1, NULL,
					  0),
				 0);
		assert_int_equal(drain_at(w, t0 + ticks[i] * G_TSC, ids, 4), 1);
		assert_int_equal(ids[0], i);
	}
	assert_int_equal(pcr_wheel_next_tsc(w), UINT64_MAX);
	wheel_finish(w);
}

static void
test_bitmap_summary(void **state)
{
	/* 4096 slots: 64 words per level; level 1 slots are 4096 ticks */
	static const uint64_t t12[] = {3, 130, 4000, 3 * 4096 + 7,
				       70 * 4096 + 2};
	static const uint64_t n12[] = {3, 130, 4000, 3 * 4096, 70 * 4096};
	/* 128 slots: 2 words per level; level 2 slots are 16384 ticks */
	static const uint64_t t7[] = {1, 100, 127 * 128 + 5, 3 * 16384 + 200};
	static const uint64_t n7[] = {1, 100, 127 * 128, 3 * 16384};

	(void)state;
	summary_case(12, 2, t12, n12, RTE_DIM(t12));
	summary_case(7, 3, t7, n7, RTE_DIM(t7));
}

/* The wheel keeps time over many rotations of every level. */
static void
test_wraparound(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	uint64_t now = 77, dep;
	unsigned int i, total = 0;
	uint32_t ids[8];
	struct pcr_wheel_stats s;

	(void)state;
	params_init(&p, now);
	p.slot_bits = 3; /* 8 slots, 3 levels: 448 ticks of horizon */
	p.levels = 3;
	p.horizon_ns = 448 * G_NS;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	/* 3000 steps of 37 ticks: the top level wraps ~200 times */
	for (i = 0; i < 3000; i++) {
		dep = now + (uint64_t)((i * 7919) % 440) * G_TSC;
		enqueue_one(w, i, dep);
		now += 37 * G_TSC;
		total += drain_at(w, now, ids, 0);
	}
	now += 1000 * G_TSC;
	total += drain_at(w, now, NULL, 0);
	assert_int_equal(total, 3000);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.dequeued, 3000);
	assert_int_equal(s.dropped, 0);
	assert_int_equal(s.late, 0);
	wheel_finish(w);
}

/*
 * An idle gap of 2 s is jumped, not walked slot by slot: with 3 levels of
 * 256 slots (two cascades) and with the default 2 levels of 4096 (one).
 */
static void
run_idle_gap(unsigned int slot_bits, unsigned int levels)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	uint64_t t0 = 1000, gap = 1999999ULL * G_TSC;
	uint32_t id;

	params_init(&p, t0);
	if (slot_bits != 0) {
		p.slot_bits = slot_bits;
		p.levels = levels;
	}
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	enqueue_one(w, 7, t0 + gap);
	assert_int_equal(drain_at(w, t0, NULL, 0), 0);
	/* a lower bound: the far slot cascades before the packet's slot */
	assert_true(pcr_wheel_next_tsc(w) > t0);
	assert_true(pcr_wheel_next_tsc(w) <= t0 + gap);
	assert_int_equal(drain_at(w, t0 + gap - 1, NULL, 0), 0);
	assert_int_equal(drain_at(w, t0 + gap, &id, 1), 1);
	assert_int_equal(id, 7);
	pcr_wheel_stats_get(w, &s);
	/* one jump per level at most, not 2 million slot visits */
	assert_in_range(s.advances, 1, s.levels);
	assert_int_equal(s.cascaded, s.levels - 1); /* top -> ... -> 0 */
	wheel_finish(w);
}

static void
test_idle_gap(void **state)
{
	(void)state;
	run_idle_gap(8, 3);
	run_idle_gap(0, 0); /* the defaults */
}

/* --- contract: late, horizon, spill, nomem, refused ----------------------- */

static void
test_late(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	uint64_t t0 = 1000000, now = t0 + 500 * G_TSC;
	uint32_t ids[16];
	unsigned int i;

	(void)state;
	params_init(&p, t0);
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	assert_int_equal(drain_at(w, now, NULL, 0), 0); /* clock at 500 */
	enqueue_one(w, 0, now + 3 * G_TSC);  /* future */
	enqueue_one(w, 1, now - 10 * G_TSC); /* late */
	enqueue_one(w, 2, 0);                /* before the epoch: late */
	enqueue_one(w, 3, now);              /* due now, not late */
	assert_int_equal(drain_at(w, now, ids, 16), 3);
	assert_int_equal(ids[0], 1);
	assert_int_equal(ids[1], 2);
	assert_int_equal(ids[2], 3);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.late, 2);
	assert_int_equal(s.queued, 1);
	assert_int_equal(drain_at(w, now + 3 * G_TSC, ids, 16), 1);
	assert_int_equal(ids[0], 0);
	for (i = 0; i < 5; i++)
		enqueue_one(w, 10 + i, t0);
	assert_int_equal(drain_at(w, now + 3 * G_TSC, NULL, 0), 5);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.late, 7);
	wheel_finish(w);
}

struct drop_log {
	unsigned int n[PCR_WHEEL_DROP_MAX];
	uint32_t last_id;
};

static void
drop_cb(struct rte_mbuf *m, enum pcr_wheel_drop_reason reason, void *arg)
{
	struct drop_log *log = arg;

	assert_true(reason < PCR_WHEEL_DROP_MAX);
	log->n[reason]++;
	log->last_id = pkt_id(m);
	rte_pktmbuf_free(m);
}

static void
run_horizon(enum pcr_wheel_horizon_policy pol)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	struct drop_log log = {0};
	uint64_t t0 = 4242, h_ns = 10 * 1000 * 1000; /* 10 ms */
	uint64_t h_tsc = h_ns * HZ / 1000000000ULL;
	uint32_t ids[16];

	check_early = pol == PCR_WHEEL_HORIZON_DROP;
	params_init(&p, t0);
	p.horizon_ns = h_ns;
	p.horizon_policy = pol;
	p.drop_fn = drop_cb;
	p.drop_arg = &log;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	enqueue_one(w, 0, t0 + h_tsc - G_TSC);     /* last slot: in */
	enqueue_one(w, 1, t0 + h_tsc);             /* at the horizon: out */
	enqueue_one(w, 2, t0 + 1000 * h_tsc);      /* far beyond */
	enqueue_one(w, 3, t0 + h_tsc - 1);         /* last slot: in */
	assert_int_equal(drain_at(w, t0, NULL, 0), 0);
	pcr_wheel_stats_get(w, &s);
	if (pol == PCR_WHEEL_HORIZON_DROP) {
		assert_int_equal(s.drop[PCR_WHEEL_DROP_HORIZON], 2);
		assert_int_equal(log.n[PCR_WHEEL_DROP_HORIZON], 2);
		assert_int_equal(log.last_id, 2);
		assert_int_equal(s.horizon_cap, 0);
		assert_int_equal(s.queued, 2);
		assert_int_equal(drain_at(w, t0 + h_tsc - G_TSC, ids, 16), 2);
		assert_int_equal(ids[0], 0);
		assert_int_equal(ids[1], 3);
	} else {
		assert_int_equal(s.dropped, 0);
		assert_int_equal(s.horizon_cap, 2);
		assert_int_equal(s.queued, 4);
		/* capped into the last slot, after those already there */
		assert_int_equal(drain_at(w, t0 + h_tsc - G_TSC - 1, NULL, 0),
				 0);
		assert_int_equal(drain_at(w, t0 + h_tsc - G_TSC, ids, 16), 4);
		assert_int_equal(ids[0], 0);
		assert_int_equal(ids[1], 1);
		assert_int_equal(ids[2], 2);
		assert_int_equal(ids[3], 3);
	}
	wheel_finish(w);
}

static void
test_horizon_drop(void **state)
{
	(void)state;
	run_horizon(PCR_WHEEL_HORIZON_DROP);
}

static void
test_horizon_cap(void **state)
{
	(void)state;
	run_horizon(PCR_WHEEL_HORIZON_CAP);
}

static void
test_horizon_set(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_info info;
	struct pcr_wheel_stats s;

	(void)state;
	check_early = false;
	params_init(&p, 0);
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	assert_int_equal(pcr_wheel_set_horizon(w, 1000 * 1000,
					       PCR_WHEEL_HORIZON_CAP),
			 0);
	pcr_wheel_info_get(w, &info);
	assert_int_equal(info.horizon_ns, 1000 * 1000);
	assert_int_equal(info.horizon_policy, PCR_WHEEL_HORIZON_CAP);
	assert_int_equal(pcr_wheel_set_horizon(w, 100ULL * 1000000000ULL,
					       PCR_WHEEL_HORIZON_CAP),
			 -EINVAL);
	enqueue_one(w, 1, 2 * 1000 * 1000 * 2);
	assert_int_equal(drain_at(w, 0, NULL, 0), 0);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.horizon_cap, 1);
	wheel_finish(w);
}

static void
test_spill(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	struct drop_log log = {0};
	uint64_t t0 = 999, dep = t0 + 10 * G_TSC;
	uint32_t ids[16];
	unsigned int i;

	(void)state;
	params_init(&p, t0);
	p.slot_capacity = 4;
	p.drop_fn = drop_cb;
	p.drop_arg = &log;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	for (i = 0; i < 10; i++)
		enqueue_one(w, i, dep);
	assert_int_equal(drain_at(w, t0, NULL, 0), 0);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.spill, 4);
	assert_int_equal(s.drop[PCR_WHEEL_DROP_FULL], 2);
	assert_int_equal(log.n[PCR_WHEEL_DROP_FULL], 2);
	assert_int_equal(log.last_id, 9);
	assert_int_equal(s.queued, 8);
	/* its own slot: the first four; the next slot: the spilled four */
	assert_int_equal(drain_at(w, dep, ids, 16), 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(ids[i], i);
	assert_int_equal(drain_at(w, dep + G_TSC, ids, 16), 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(ids[i], 4 + i);
	wheel_finish(w);
}

/*
 * The direct path: due packets taken from the inbox in tick order, with
 * nothing due in the levels, leave without a slot (counted direct), late
 * ones too; out of order, or with a due packet in a slot, they take the
 * slots, which put them in tick order. The output is the same either way.
 */
static void
test_direct(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	uint64_t t0 = 1000, now = t0 + 10 * G_TSC;
	uint32_t ids[16];
	unsigned int i;

	(void)state;
	params_init(&p, t0);
	w = pcr_wheel_create(&p);
	assert_non_null(w);

	/* in order, all due: straight out */
	for (i = 0; i < 4; i++)
		enqueue_one(w, i, t0 + (1 + i) * G_TSC);
	assert_int_equal(drain_at(w, now, ids, 16), 4);
	for (i = 0; i < 4; i++)
		assert_int_equal(ids[i], i);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.direct, 4);
	assert_int_equal(s.late, 0);

	/* out of order: the slots sort them, FIFO within a tick */
	enqueue_one(w, 10, now + 5 * G_TSC);
	enqueue_one(w, 11, now + 2 * G_TSC);
	enqueue_one(w, 12, now + 2 * G_TSC + 1);
	now += 10 * G_TSC;
	assert_int_equal(drain_at(w, now, ids, 16), 3);
	assert_int_equal(ids[0], 11);
	assert_int_equal(ids[1], 12);
	assert_int_equal(ids[2], 10);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.direct, 4);

	/* one in a slot, due by the next drain: an earlier one from the
	 * inbox takes a slot too, and leaves first */
	enqueue_one(w, 20, now + 5 * G_TSC);
	assert_int_equal(drain_at(w, now, NULL, 0), 0);
	enqueue_one(w, 21, now + 2 * G_TSC);
	now += 10 * G_TSC;
	assert_int_equal(drain_at(w, now, ids, 16), 2);
	assert_int_equal(ids[0], 21);
	assert_int_equal(ids[1], 20);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.direct, 4);

	/* late ones first, in order: straight out, counted late */
	enqueue_one(w, 30, now - 5 * G_TSC);
	enqueue_one(w, 31, now - 4 * G_TSC);
	enqueue_one(w, 32, now);
	assert_int_equal(drain_at(w, now + 2 * G_TSC, ids, 16), 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(ids[i], 30 + i);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.direct, 7);
	assert_int_equal(s.late, 2);
	assert_int_equal(s.dequeued, 4 + 3 + 2 + 3);
	wheel_finish(w);
}

/* A cascade into a full level-0 slot spills too. */
static void
test_spill_on_cascade(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	uint64_t t0 = 0, dep = 1000 * G_TSC; /* level 1 at start */
	unsigned int i;

	(void)state;
	params_init(&p, t0);
	p.slot_bits = 8; /* 256 slots: tick 1000 is on level 1 */
	p.levels = 3;
	p.slot_capacity = 8;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	for (i = 0; i < 20; i++)
		enqueue_one(w, i, dep);
	assert_int_equal(drain_at(w, t0, NULL, 0), 0);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.level_occupancy[1], 20);
	assert_int_equal(drain_at(w, dep, NULL, 0), 8);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.spill, 8);
	assert_int_equal(s.drop[PCR_WHEEL_DROP_FULL], 4);
	assert_int_equal(drain_at(w, dep + G_TSC, NULL, 0), 8);
	wheel_finish(w);
}

static void
test_nomem(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	unsigned int i, nchunks;

	(void)state;
	params_init(&p, 0);
	p.slot_bits = 2; /* 4 slots per level, 3 levels */
	p.levels = 3;
	p.max_queued = 1;
	p.horizon_ns = 48 * G_NS;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	/* pool: ceil(1/63) + 2 * 4 = 9 chunks of 63 */
	nchunks = 9;
	for (i = 0; i < nchunks * PCR_WHEEL_CHUNK_ENTRIES + 5; i++)
		enqueue_one(w, i, 20 * G_TSC);
	do {
		assert_int_equal(drain_at(w, 0, NULL, 0), 0);
		pcr_wheel_stats_get(w, &s);
	} while (s.inbox > 0);
	assert_int_equal(s.level_occupancy[2],
			 nchunks * PCR_WHEEL_CHUNK_ENTRIES);
	assert_int_equal(s.drop[PCR_WHEEL_DROP_NOMEM], 5);
	wheel_finish(w);
}

static void
test_refused(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	struct rte_mbuf *m[100];
	uint64_t dep[100];
	unsigned int i, got;

	(void)state;
	params_init(&p, 0);
	p.inbox_size = 64;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	for (i = 0; i < 100; i++) {
		m[i] = pkt_new(i);
		dep[i] = 5 * G_TSC;
	}
	got = pcr_wheel_enqueue_burst(w, m, dep, 100);
	assert_int_equal(got, 64);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.enqueued, 64);
	assert_int_equal(s.refused, 36);
	assert_int_equal(s.inbox, 64);
	assert_int_equal(s.queued, 64);
	/* refused ones are still ours */
	rte_pktmbuf_free_bulk(&m[64], 36);
	assert_int_equal(drain_at(w, 0, NULL, 0), 0);
	assert_int_equal(drain_at(w, 5 * G_TSC, NULL, 0), 64);
	wheel_finish(w);
}

/* Departure times land in the mbuf's dynamic field. */
static void
test_dynfield(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct rte_mbuf *m, *out[4];
	uint64_t dep = 123456789;

	(void)state;
	params_init(&p, 0);
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	assert_int_equal(pcr_wheel_dynfield_register(), dyn_off);
	m = pkt_new(1);
	assert_int_equal(pcr_wheel_enqueue_burst(w, &m, &dep, 1), 1);
	assert_int_equal(pcr_wheel_dequeue_burst(w, dep, out, 4), 1);
	assert_ptr_equal(out[0], m);
	assert_int_equal(*pcr_wheel_departure(m, dyn_off), dep);
	rte_pktmbuf_free(m);
	wheel_finish(w);
}

/* Flush returns everything, in time order, with the inbox last. */
static void
test_flush_order(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct rte_mbuf *m[16];
	unsigned int n, i;

	(void)state;
	params_init(&p, 0);
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	enqueue_one(w, 2, 900000 * G_TSC);
	enqueue_one(w, 0, 3 * G_TSC);
	enqueue_one(w, 1, 70000 * G_TSC);
	assert_int_equal(drain_at(w, 0, NULL, 0), 0);
	enqueue_one(w, 3, 1 * G_TSC); /* still in the inbox */
	n = pcr_wheel_flush(w, m, 16);
	assert_int_equal(n, 4);
	for (i = 0; i < n; i++) {
		assert_int_equal(pkt_id(m[i]), i);
		rte_pktmbuf_free(m[i]);
	}
	wheel_finish(w);
}

/* --- level 0's sorted run --------------------------------------------------- */

/* 16 slots x 2 levels, capacity 8: a run from 4 cascaded packets on. */
static struct pcr_wheel *
run_wheel(uint64_t t0, struct drop_log *log)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;

	params_init(&p, t0);
	p.slot_bits = 4;
	p.levels = 2;
	p.slot_capacity = 8;
	p.horizon_ns = 200 * G_NS;
	p.drop_fn = drop_cb;
	p.drop_arg = log;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	return w;
}

static void
expect_ids(const uint32_t *ids, unsigned int n, const uint32_t *want)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (ids[i] != want[i])
			fail_msg("position %u: id %u, want %u", i, ids[i],
				 want[i]);
}

/*
 * Run entries count against their slot's capacity, leave before what the
 * slot's array receives later (direct, spilled, late), and a partial
 * drain keeps the clock on the slot being drained.
 */
static void
test_run_capacity(void **state)
{
	static const uint32_t want20[] = {5, 13, 14, 17, 18};
	static const uint32_t want21[] = {6, 7, 8, 9, 10, 11, 12, 15};
	struct drop_log log = {0};
	struct pcr_wheel_stats s;
	struct pcr_wheel *w;
	struct rte_mbuf *m[8];
	uint64_t t0 = 5000;
	uint32_t ids[16];
	unsigned int i, n;

	(void)state;
	w = run_wheel(t0, &log);
	/* level 1, slot of block 1 (ticks 16..31), in reverse tick order */
	for (i = 6; i < 13; i++)
		enqueue_one(w, i, t0 + 21 * G_TSC + i);
	for (i = 0; i < 6; i++)
		enqueue_one(w, i, t0 + 20 * G_TSC + G_TSC - 1 - i);
	assert_int_equal(drain_at(w, t0, NULL, 0), 0);
	/* the cascade at tick 16 sorts the 13 into the run */
	assert_int_equal(drain_at(w, t0 + 16 * G_TSC, NULL, 0), 0);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.sorted, RUN_SORTS ? 13 : 0);
	assert_int_equal(s.level_occupancy[0], 13);
	/* slot 20 holds 6: two fit, the third spills to 21 (7 + 1), the
	 * fourth finds 20 and 21 full */
	for (i = 13; i < 17; i++)
		enqueue_one(w, i, t0 + 20 * G_TSC);
	assert_int_equal(drain_at(w, t0 + 19 * G_TSC, NULL, 0), 0);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.spill, 1);
	assert_int_equal(s.drop[PCR_WHEEL_DROP_FULL], 1);
	assert_int_equal(log.last_id, 16);
	/* take 5 of slot 20: the clock stays there */
	n = pcr_wheel_dequeue_burst(w, t0 + 20 * G_TSC, m, 5);
	assert_int_equal(n, 5);
	for (i = 0; i < n; i++) {
		assert_int_equal(pkt_id(m[i]), i);
		rte_pktmbuf_free(m[i]);
	}
	/* 1 run + 2 array left in slot 20: room again; and a late packet
	 * joins the slot the clock is on */
	enqueue_one(w, 17, t0 + 20 * G_TSC);
	enqueue_one(w, 18, t0 + 3 * G_TSC);
	assert_int_equal(drain_at(w, t0 + 20 * G_TSC, ids, 16), 5);
	expect_ids(ids, 5, want20);
	assert_int_equal(drain_at(w, t0 + 21 * G_TSC - 1, NULL, 0), 0);
	assert_int_equal(drain_at(w, t0 + 21 * G_TSC, ids, 16), 8);
	expect_ids(ids, 8, want21);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.late, 1);
	assert_int_equal(s.spill, 1);
	assert_int_equal(s.queued, 0);
	assert_int_equal(pcr_wheel_next_tsc(w), UINT64_MAX);
	wheel_finish(w);
}

/*
 * A cascade with a slot over capacity takes the per-slot path (spills
 * exactly as before); so does one smaller than the run's minimum (a
 * quarter of the slots, 4 here).
 */
static void
test_run_fallback(void **state)
{
	struct drop_log log = {0};
	struct pcr_wheel_stats s;
	struct pcr_wheel *w;
	uint64_t t0 = 0;
	uint32_t ids[16];
	unsigned int i;

	(void)state;
	w = run_wheel(t0, &log);
	for (i = 0; i < 10; i++) /* 10 for slot 20: 8 fit, 2 spill */
		enqueue_one(w, i, t0 + 20 * G_TSC);
	for (i = 10; i < 13; i++)
		enqueue_one(w, i, t0 + 22 * G_TSC);
	assert_int_equal(drain_at(w, t0, NULL, 0), 0);
	assert_int_equal(drain_at(w, t0 + 16 * G_TSC, NULL, 0), 0);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.sorted, 0);
	assert_int_equal(s.cascaded, 13);
	assert_int_equal(s.spill, 2);
	assert_int_equal(drain_at(w, t0 + 20 * G_TSC, ids, 16), 8);
	assert_int_equal(drain_at(w, t0 + 21 * G_TSC, ids, 16), 2);
	assert_int_equal(ids[0], 8);
	assert_int_equal(ids[1], 9);
	assert_int_equal(drain_at(w, t0 + 22 * G_TSC, ids, 16), 3);

	for (i = 20; i < 23; i++) /* 3 for block 3 (ticks 48..63) */
		enqueue_one(w, i, t0 + (50 - i % 2) * G_TSC);
	assert_int_equal(drain_at(w, t0 + 40 * G_TSC, NULL, 0), 0);
	assert_int_equal(drain_at(w, t0 + 49 * G_TSC, ids, 16), 1);
	assert_int_equal(ids[0], 21);
	assert_int_equal(drain_at(w, t0 + 50 * G_TSC, ids, 16), 2);
	assert_int_equal(ids[0], 20);
	assert_int_equal(ids[1], 22);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.cascaded, 16);
	assert_int_equal(s.sorted, 0);
	wheel_finish(w);
}

/* Flush takes the run out in order too, between the arrays' packets. */
static void
test_run_flush(void **state)
{
	static const uint32_t want[] = {2, 3, 20, 4, 5, 21, 6, 7, 8, 9, 10, 11};
	struct drop_log log = {0};
	struct pcr_wheel_stats s;
	struct pcr_wheel *w;
	struct rte_mbuf *m[32];
	uint64_t t0 = 100;
	uint32_t ids[32];
	unsigned int i, n;

	(void)state;
	w = run_wheel(t0, &log);
	for (i = 0; i < 12; i++) /* ticks 16, 16, 17, 17, ..., 21, 21 */
		enqueue_one(w, i, t0 + (16 + i / 2) * G_TSC);
	assert_int_equal(drain_at(w, t0, NULL, 0), 0);
	assert_int_equal(drain_at(w, t0 + 16 * G_TSC, ids, 16), 2);
	enqueue_one(w, 20, t0 + 17 * G_TSC); /* slot 17's array */
	enqueue_one(w, 21, t0 + 18 * G_TSC);
	assert_int_equal(drain_at(w, t0 + 16 * G_TSC, NULL, 0), 0);
	n = pcr_wheel_flush(w, m, RTE_DIM(m));
	assert_int_equal(n, RTE_DIM(want));
	for (i = 0; i < n; i++) {
		ids[i] = pkt_id(m[i]);
		rte_pktmbuf_free(m[i]);
	}
	expect_ids(ids, n, want);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.sorted, RUN_SORTS ? 12 : 0);
	wheel_finish(w);
}

/*
 * Level-1 ticks by multiply (ceil(2^64 / g)) against exact division, at
 * slot boundaries (k g - 1 and k g after the epoch), for an odd g: each
 * packet leaves exactly when its slot starts, not a cycle before.
 */
static void
test_tick_multiply(void **state)
{
	static const uint64_t hz[] = {1000999000ULL, 2600000000ULL,
				      3333333333ULL};
	unsigned int h;

	(void)state;
	for (h = 0; h < RTE_DIM(hz); h++) {
		struct pcr_wheel_params p;
		struct pcr_wheel_info info;
		struct pcr_wheel *w;
		struct rte_mbuf *out[128];
		uint64_t t0 = 12345, g, ticks[40];
		unsigned int i, n = 0;

		pcr_wheel_params_default(&p);
		p.tsc_hz = hz[h];
		p.start_tsc = t0;
		w = pcr_wheel_create(&p);
		assert_non_null(w);
		pcr_wheel_info_get(w, &info);
		g = info.granularity_tsc; /* 1001, 2600, 3333 */
		srandom(100 + h);
		/* distinct level-1 ticks, increasing, up to the horizon */
		for (i = 0; i < RTE_DIM(ticks); i++)
			ticks[i] = 4096 * (i + 1) + random() % 4000;
		ticks[RTE_DIM(ticks) - 1] = 1999999; /* last slot of 2 s */
		for (i = RTE_DIM(ticks); i-- > 0;) {
			struct rte_mbuf *m[2] = {pkt_new(2 * i),
						 pkt_new(2 * i + 1)};
			/* a cycle before the slot (the previous tick), and
			 * its first cycle */
			uint64_t dep[2] = {t0 + ticks[i] * g - 1,
					   t0 + ticks[i] * g};

			assert_int_equal(pcr_wheel_enqueue_burst(w, m, dep, 2),
					 2);
		}
		/* the wheel takes n from its inbox per call: all of it */
		assert_int_equal(pcr_wheel_dequeue_burst(w, t0, out,
							 RTE_DIM(out)),
				 0);
		for (i = 0; i < RTE_DIM(ticks); i++) {
			uint64_t s = t0 + ticks[i] * g;
			unsigned int k;

			/* the first: due at the previous tick's start */
			k = pcr_wheel_dequeue_burst(w, s - g, out, 4);
			assert_int_equal(k, 1);
			assert_int_equal(pkt_id(out[0]), 2 * i);
			rte_pktmbuf_free(out[0]);
			assert_int_equal(pcr_wheel_dequeue_burst(w, s - 1, out,
								 4),
					 0);
			k = pcr_wheel_dequeue_burst(w, s, out, 4);
			assert_int_equal(k, 1);
			assert_int_equal(pkt_id(out[0]), 2 * i + 1);
			rte_pktmbuf_free(out[0]);
			n += 2;
		}
		assert_int_equal(n, 2 * RTE_DIM(ticks));
		wheel_finish(w);
	}
}

/* --- property test against a reference model ------------------------------ */

struct ref_pkt {
	uint32_t id;
	uint64_t tick; /* effective */
	uint64_t seq;
};

struct ref {
	struct ref_pkt *q;
	unsigned int n;
	uint64_t cur, seq, horizon;
	bool cap;
	uint64_t late, hdrop, hcap;
};

static int
ref_cmp(const void *a, const void *b)
{
	const struct ref_pkt *x = a, *y = b;

	if (x->tick != y->tick)
		return x->tick < y->tick ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void
ref_insert(struct ref *r, uint32_t id, uint64_t tsc, uint64_t epoch)
{
	int64_t d = (int64_t)(tsc - epoch);
	uint64_t tick = d <= 0 ? 0 : (uint64_t)d / G_TSC;

	if (tick < r->cur) {
		tick = r->cur;
		r->late++;
	} else if (tick - r->cur >= r->horizon) {
		if (!r->cap) {
			r->hdrop++;
			return;
		}
		tick = r->cur + r->horizon - 1;
		r->hcap++;
	}
	r->q[r->n].id = id;
	r->q[r->n].tick = tick;
	r->q[r->n].seq = r->seq++;
	r->n++;
}

static uint64_t
rnd64(void)
{
	return ((uint64_t)random() << 33) ^ ((uint64_t)random() << 2) ^
	       (uint64_t)random();
}

/* A random span, spread over scales from one tick to beyond the horizon. */
static uint64_t
rnd_ticks(uint64_t horizon)
{
	unsigned int bits = 1 + random() % 64;
	uint64_t v = rnd64() & (bits >= 64 ? ~0ULL : (1ULL << bits) - 1);

	return v % (horizon + horizon / 8 + 2);
}

/*
 * PROP_DENSE: departures within the next three level-1 slots and the clock
 * moving a few level-0 slots per step, so that level-1 slots cascade
 * thousands of packets at once (level 0's sorted run, even at 4096 slots).
 * PROP_RUNS: most packets depart within half a slot after the one before
 * (a flow's packets stamped back to back: the inbox's runs for one slot,
 * late ones too).
 */
#define PROP_DENSE 1u
#define PROP_RUNS  2u

static void
run_property_mode(unsigned int seed, unsigned int slot_bits,
		  unsigned int levels, bool cap, uint64_t epoch,
		  unsigned int steps, unsigned int mode)
{
	const bool dense = mode & PROP_DENSE;
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	struct ref r = {0};
	struct rte_mbuf *out[64];
	uint64_t now = epoch, horizon, pending_tsc[64];
	uint32_t pending_id[64], next_id = 0;
	unsigned int npend = 0, step, i;

	srandom(seed);
	params_init(&p, epoch);
	p.slot_bits = slot_bits;
	p.levels = levels;
	/* no spills: room for every packet in one slot (2^12 slots: 1024,
	 * enough for what this workload puts into one tick, and 32 MiB) */
	p.slot_capacity = slot_bits >= 12 ? 1024 : 65536;
	horizon = ((1ULL << slot_bits) - 1) << (slot_bits * (levels - 1));
	if (horizon > 2000000)
		horizon = 2000000;
	p.horizon_ns = horizon * G_NS;
	p.horizon_policy = cap ? PCR_WHEEL_HORIZON_CAP : PCR_WHEEL_HORIZON_DROP;
	w = pcr_wheel_create(&p);
	assert_non_null(w);
	r.q = calloc(POOL_N, sizeof(*r.q));

	assert_non_null(r.q);
	r.horizon = horizon;
	r.cap = cap;

	for (step = 0; step < steps; step++) {
		unsigned int k = random() % 24, n, emitted, j, ref_emit;
		struct rte_mbuf *m[24];
		uint64_t dep[24], target;

		if (npend + 24 > RTE_DIM(pending_id) ||
		    rte_mempool_avail_count(pool) < 64 + npend)
			k = 0;
		/* enqueue k packets around the current time */
		for (i = 0; i < k; i++) {
			uint64_t off = (dense ? rnd64() % (3ULL << slot_bits)
					      : rnd_ticks(horizon)) *
					       G_TSC +
				       rnd64() % G_TSC;

			m[i] = pkt_new(next_id);
			dep[i] = random() % 8 == 0 ? now - off / 16 : now + off;
			if ((mode & PROP_RUNS) && i > 0 && random() % 4 != 0)
				dep[i] = dep[i - 1] + rnd64() % (G_TSC / 2);
			pending_id[npend] = next_id++;
			pending_tsc[npend] = dep[i];
			npend++;
		}
		assert_int_equal(pcr_wheel_enqueue_burst(w, m, dep, k), k);

		/* advance time by a random span; dequeue a random n */
		if (dense)
			now += (rnd64() % ((1ULL << slot_bits) / 256 + 2)) *
				       G_TSC +
			       rnd64() % G_TSC;
		else if (random() % 3 != 0)
			now += rnd_ticks(horizon / 4 + 1) * G_TSC / 4 +
			       rnd64() % G_TSC;
		n = 1 + random() % 64;
		/* the wheel takes at most n packets from its inbox */
		j = RTE_MIN(n, npend);
		for (i = 0; i < j; i++)
			ref_insert(&r, pending_id[i], pending_tsc[i], epoch);
		memmove(pending_id, pending_id + j, (npend - j) * 4);
		memmove(pending_tsc, pending_tsc + j, (npend - j) * 8);
		npend -= j;

		emitted = pcr_wheel_dequeue_burst(w, now, out, n);

		{
			int64_t d = (int64_t)(now - epoch);

			target = d <= 0 ? 0 : (uint64_t)d / G_TSC;
		}
		qsort(r.q, r.n, sizeof(*r.q), ref_cmp);
		ref_emit = 0;
		while (ref_emit < r.n && ref_emit < n &&
		       r.q[ref_emit].tick <= target &&
		       r.q[ref_emit].tick >= r.cur)
			ref_emit++;
		assert_int_equal(emitted, ref_emit);
		for (i = 0; i < emitted; i++) {
			if (pkt_id(out[i]) != r.q[i].id)
				fail_msg("seed %u step %u: pos %u got id %u "
					 "want %u (tick %" PRIu64 ")",
					 seed, step, i, pkt_id(out[i]),
					 r.q[i].id, r.q[i].tick);
			rte_pktmbuf_free(out[i]);
		}
		if (emitted == n && emitted > 0)
			r.cur = r.q[emitted - 1].tick;
		else if (target > r.cur)
			r.cur = target;
		memmove(r.q, r.q + emitted, (r.n - emitted) * sizeof(*r.q));
		r.n -= emitted;
	}
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.late, r.late);
	assert_int_equal(s.drop[PCR_WHEEL_DROP_HORIZON], r.hdrop);
	assert_int_equal(s.horizon_cap, r.hcap);
	assert_int_equal(s.spill, 0);
	assert_int_equal(s.queued, r.n + npend);
	print_message("property seed %u: %" PRIu64 " out (%" PRIu64
		      " direct), %" PRIu64 " cascaded (%" PRIu64
		      " sorted), %" PRIu64 " late, %" PRIu64 " horizon\n",
		      seed, s.dequeued, s.direct, s.cascaded, s.sorted, s.late,
		      s.drop[PCR_WHEEL_DROP_HORIZON] + s.horizon_cap);
	if (dense && RUN_SORTS)
		assert_true(s.sorted > s.cascaded / 2);
	free(r.q);
	wheel_finish(w);
}

static void
run_property(unsigned int seed, unsigned int slot_bits, unsigned int levels,
	     bool cap, uint64_t epoch, unsigned int steps)
{
	run_property_mode(seed, slot_bits, levels, cap, epoch, steps, 0);
}

static void
test_property(void **state)
{
	(void)state;
	run_property(1, 8, 3, false, 1000, 20000);
	run_property(2, 8, 3, true, 1000, 20000);
	run_property(3, 2, 4, false, 0, 30000);
	run_property(4, 2, 4, true, (1ULL << 63) - 1000 * G_TSC, 30000);
	run_property(5, 3, 3, true, UINT64_MAX - 10000 * G_TSC, 30000);
	run_property(6, 4, 2, false, 12345, 30000);
	run_property(7, 5, 1, true, 12345, 20000);
	run_property(8, 6, 3, false, (1ULL << 63), 20000);
	run_property(9, 12, 2, true, 1000, 20000); /* the default geometry */
	run_property(10, 12, 2, false, UINT64_MAX - 5000 * G_TSC, 20000);
}

/* The same against level 0's sorted run: big level-1 cascades. */
static void
test_property_dense(void **state)
{
	(void)state;
	run_property_mode(11, 12, 2, false, 1000, 6000, PROP_DENSE);
	run_property_mode(12, 12, 2, true, UINT64_MAX - 5000 * G_TSC, 6000,
			  PROP_DENSE);
	run_property_mode(13, 8, 2, false, 1000, 20000, PROP_DENSE);
	run_property_mode(14, 6, 3, true, 12345, 20000, PROP_DENSE);
	run_property_mode(15, 4, 2, false, 0, 20000, PROP_DENSE);
}

/* The same with runs of packets for one slot in the inbox, late ones too. */
static void
test_property_runs(void **state)
{
	(void)state;
	run_property_mode(16, 8, 3, false, 1000, 20000, PROP_RUNS);
	run_property_mode(17, 12, 2, true, UINT64_MAX - 5000 * G_TSC, 20000,
			  PROP_RUNS);
	run_property_mode(18, 4, 2, false, 0, 20000, PROP_RUNS | PROP_DENSE);
	run_property_mode(19, 5, 1, true, 12345, 20000, PROP_RUNS);
}

/* --- concurrency ---------------------------------------------------------- */

#define CONC_PER_PRODUCER 300000
#define CONC_PRODUCERS    2

struct producer {
	struct pcr_wheel *w;
	struct rte_mbuf **m;
	unsigned int n;
	unsigned int refused;
	uint64_t span_tsc;
};

static int
producer_main(void *arg)
{
	struct producer *pr = arg;
	unsigned int done = 0;
	uint64_t dep[32];
	uint64_t hz = rte_get_tsc_hz();
	unsigned int seed = (unsigned int)(uintptr_t)pr;

	while (done < pr->n) {
		unsigned int k = RTE_MIN(32u, pr->n - done), i, got;
		uint64_t now = rte_rdtsc();

		for (i = 0; i < k; i++)
			dep[i] = now + rand_r(&seed) % pr->span_tsc;
		got = pcr_wheel_enqueue_burst(pr->w, pr->m + done, dep, k);
		if (got < k)
			pr->refused++;
		done += got;
		if (got < k)
			rte_pause();
		(void)hz;
	}
	return 0;
}

static void *
producer_thread(void *arg)
{
	producer_main(arg);
	return NULL;
}

static void
test_concurrent(void **state)
{
	struct pcr_wheel_params p;
	struct pcr_wheel *w;
	struct pcr_wheel_stats s;
	struct producer pr[CONC_PRODUCERS];
	struct rte_mbuf *out[32];
	uint8_t *seen;
	uint64_t hz = rte_get_tsc_hz(), deadline, got = 0, want;
	unsigned int worker, i, j;
	pthread_t th;
	bool have_worker;

	(void)state;
	pcr_wheel_params_default(&p);
	p.tsc_hz = hz;
	p.start_tsc = rte_rdtsc();
	p.inbox_size = 4096; /* small, to exercise contention and refusals */
	w = pcr_wheel_create(&p);
	assert_non_null(w);

	want = (uint64_t)CONC_PRODUCERS * CONC_PER_PRODUCER;
	seen = calloc(want, 1);
	assert_non_null(seen);
	for (i = 0; i < CONC_PRODUCERS; i++) {
		pr[i].w = w;
		pr[i].n = CONC_PER_PRODUCER;
		pr[i].refused = 0;
		pr[i].span_tsc = hz / 500; /* 2 ms ahead */
		pr[i].m = calloc(pr[i].n, sizeof(struct rte_mbuf *));
		assert_non_null(pr[i].m);
		for (j = 0; j < pr[i].n; j++)
			pr[i].m[j] = pkt_new(i * CONC_PER_PRODUCER + j);
	}
	/* producer 0 on the worker lcore, producer 1 on a non-EAL thread */
	worker = rte_get_next_lcore(-1, 1, 0);
	have_worker = worker < RTE_MAX_LCORE;
	if (have_worker)
		assert_int_equal(rte_eal_remote_launch(producer_main, &pr[0],
						       worker),
				 0);
	else
		assert_int_equal(pthread_create(&th, NULL, producer_thread,
						&pr[0]),
				 0);
	{
		pthread_t th1;

		assert_int_equal(pthread_create(&th1, NULL, producer_thread,
						&pr[1]),
				 0);
		deadline = rte_rdtsc() + 60 * hz;
		while (got < want && rte_rdtsc() < deadline) {
			uint64_t now = rte_rdtsc();
			unsigned int n = pcr_wheel_dequeue_burst(w, now, out, 32);

			for (i = 0; i < n; i++) {
				uint32_t id = pkt_id(out[i]);
				uint64_t dep = *pcr_wheel_departure(out[i],
								    dyn_off);
				uint64_t g = 1000 * hz / 1000000000ULL;

				assert_true(id < want);
				if (seen[id]++)
					fail_msg("packet %u out twice", id);
				/* never before its slot started */
				if (dep > now + g)
					fail_msg("packet %u out %" PRIu64
						 " cycles early",
						 id, dep - now);
				rte_pktmbuf_free(out[i]);
			}
			got += n;
			if (got % 65536 < 32) {
				pcr_wheel_stats_get(w, &s);
				assert_true(s.enqueued ==
					    s.dequeued + s.dropped + s.queued);
			}
		}
		pthread_join(th1, NULL);
	}
	if (have_worker)
		rte_eal_wait_lcore(worker);
	else
		pthread_join(th, NULL);
	assert_int_equal(got, want);
	for (i = 0; i < want; i++)
		assert_int_equal(seen[i], 1);
	pcr_wheel_stats_get(w, &s);
	assert_int_equal(s.enqueued, want);
	assert_int_equal(s.dequeued, want);
	assert_int_equal(s.dropped, 0);
	print_message("concurrent: %" PRIu64 " packets, %u+%u refused bursts, "
		      "late %" PRIu64 "\n",
		      got, pr[0].refused, pr[1].refused, s.late);
	for (i = 0; i < CONC_PRODUCERS; i++)
		free(pr[i].m);
	free(seen);
	wheel_finish(w);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_params_check, test_setup),
		cmocka_unit_test_setup(test_order_boundaries, test_setup),
		cmocka_unit_test_setup(test_order_large_tsc, test_setup),
		cmocka_unit_test_setup(test_fifo_within_slot, test_setup),
		cmocka_unit_test_setup(test_slot_partial_drain_wrap,
				       test_setup),
		cmocka_unit_test_setup(test_bitmap_summary, test_setup),
		cmocka_unit_test_setup(test_wraparound, test_setup),
		cmocka_unit_test_setup(test_idle_gap, test_setup),
		cmocka_unit_test_setup(test_late, test_setup),
		cmocka_unit_test_setup(test_horizon_drop, test_setup),
		cmocka_unit_test_setup(test_horizon_cap, test_setup),
		cmocka_unit_test_setup(test_horizon_set, test_setup),
		cmocka_unit_test_setup(test_spill, test_setup),
		cmocka_unit_test_setup(test_spill_on_cascade, test_setup),
		cmocka_unit_test_setup(test_direct, test_setup),
		cmocka_unit_test_setup(test_nomem, test_setup),
		cmocka_unit_test_setup(test_refused, test_setup),
		cmocka_unit_test_setup(test_dynfield, test_setup),
		cmocka_unit_test_setup(test_flush_order, test_setup),
		cmocka_unit_test_setup(test_property, test_setup),
		cmocka_unit_test_setup(test_property_dense, test_setup),
		cmocka_unit_test_setup(test_property_runs, test_setup),
		cmocka_unit_test_setup(test_run_capacity, test_setup),
		cmocka_unit_test_setup(test_run_fallback, test_setup),
		cmocka_unit_test_setup(test_run_flush, test_setup),
		cmocka_unit_test_setup(test_tick_multiply, test_setup),
		cmocka_unit_test_setup(test_concurrent, test_setup),
	};
	int ret;

	pcr_test_eal_init("wheel", "0-1", 1024);
	dyn_off = pcr_wheel_dynfield_register();
	if (dyn_off < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("wheel_test", CONC_PER_PRODUCER * 2 + 4096, 0, 0, 64,
				       SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "cannot create mbuf pool\n");
		return 1;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rte_mempool_free(pool);
	pcr_test_eal_cleanup();
	return ret;
}
