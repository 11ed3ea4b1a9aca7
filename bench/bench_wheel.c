/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer-bench-wheel: what one packet costs to go through the timing wheel
 * (insert + drain), in ns, at a steady occupancy, against two baselines.
 *
 * Workload (steady state at occupancy N)
 * --------------------------------------
 * The wheel's clock is virtual: a synthetic 2 GHz TSC that the bench
 * advances itself, so every run sees the same departures and the same
 * wheel states; rte_rdtsc() only times the loop. One step:
 *
 *   enqueue a burst of 32 with departure = now + uniform(0, span), span 1 s;
 *   now += dt;
 *   dequeue bursts of 32 at `now` until a call returns fewer than 32.
 *
 * A packet stays span / 2 on average, so the occupancy settles at
 * 32 * P * span / (2 * dt) packets (P producers, 32 each per step); the
 * bench picks dt = 16 * P * span / N. It warms up over one span (untimed,
 * from empty, every dequeued packet checked not to leave before its slot)
 * and then times the steps until max(4N, 2^21) packets were dequeued.
 * Two figures per run, each the median of --reps runs:
 *   ns_per_pkt: real time inside the queue's own calls (the enqueue, the
 *     dequeue loop) / packets dequeued: what the queue costs. Before each
 *     step the bench brings the burst's mbufs into cache, untimed, as the
 *     datapath has them from RX (mbufs_as_from_rx()); otherwise the LIFO
 *     stack hands back mbufs last touched up to a span ago and every
 *     queue pays the bench's cache miss when it writes the departure.
 *   loop_ns_per_pkt: the whole loop's elapsed time / packets dequeued,
 *     harness included (RNG, stack, the mbuf warm-up, rdtsc).
 * With P = 2, ns_per_pkt is the consumer lcore's time in the queue's
 * calls; producer 2's enqueues run in parallel on the other lcore.
 *
 * Mbufs come from one pktmbuf pool with no data room (so 4M of them fit);
 * the bench keeps the free ones on a LIFO stack of its own, so the mempool
 * is not part of the measurement. Each implementation writes the departure
 * into the mbuf's dynamic field on insert, as pcr_wheel_enqueue_burst()
 * does, so all of them touch each mbuf alike.
 *
 * Two producers (P = 2): the main lcore is consumer and producer 1; lcore 1
 * runs producer 2, which enqueues bursts of 32 into the same wheel with
 * departures relative to the consumer's published clock. Producer 2 may
 * run at most P2_LEAD_STEPS bursts ahead of the consumer's steps, and the
 * consumer waits for it when it falls as far behind, so the occupancy stays
 * at N. The consumer hands producer 2 one burst of free mbufs per step
 * through an SPSC ring. On a 2-vCPU machine the two lcores take one vCPU
 * each, leaving none for anything else; the figure is elapsed time per
 * packet dequeued, what the pair sustains.
 *
 * Baselines (P = 1 only; bench/baseline_*.h): a binary min-heap keyed by
 * departure time (the cost of a time-ordered tree such as sch_fq's), and a
 * single-level wheel of 2^21 slots of 1 us (Carousel's plain form), both fed
 * exactly the same departures and mbufs. A third, `floor`, is the
 * harness's own cost (a FIFO delay line; human-readable table only).
 *
 * Idle gap: the wheel holds one packet 2 s ahead; the bench times the one
 * dequeue call that jumps the gap and returns it (ns per call). The
 * hierarchical wheel finds it with a few bitmap scans; the single-level
 * wheel walks 2M slots.
 *
 * Correctness: after every run producer 2 stops, the bench drains the
 * queue step by step (each packet checked not early), then demands: every
 * packet enqueued came out exactly once (counts, a per-mbuf stamp against
 * duplicates), no drops, the wheel's own counters agree, and the mempool's
 * in-use count is back to 0. Otherwise it prints why and exits 1.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "pcr_wheel.h"
#include "baseline_heap.h"
#include "baseline_wheel1.h"
#include "pcr_test_eal.h"

#define PROG "pacer-bench-wheel"

/* Virtual clock and geometry. */
#define VHZ		2000000000ULL /* synthetic TSC, cycles per second */
#define VSTART_TSC	(1ULL << 40)  /* a large start, as a real TSC */
#define GRANULARITY_NS	UINT64_C(1000)
#define GRANULARITY_TSC (VHZ / 1000000000ULL * GRANULARITY_NS)
#define HORIZON_NS	2000000000ULL
#define SPAN_TSC	VHZ /* departures spread over 1 s */
#define BURST		32U

/* Timed packets per run: max(TIMED_FACTOR * N, TIMED_MIN). */
#define TIMED_FACTOR	4ULL
#define TIMED_MIN	(2ULL << 20)
#define QUICK_TIMED_MIN (1ULL << 18)

/* Producer 2 stays within this many bursts of the consumer's steps. */
#define P2_LEAD_STEPS 64U
/* Free mbufs handed to producer 2 before it starts. */
#define P2_INITIAL (P2_LEAD_STEPS * BURST)
/* The consumer gives up waiting for producer 2 after this long. */
#define P2_STALL_S 2

/* Idle-gap case. */
#define IDLE_GAP_NS	       UINT64_C(2000000000)
#define IDLE_GAP_TSC	       (VHZ * 2)
#define IDLE_HWHEEL_HORIZON_NS 4000000000ULL
#define IDLE_ITERS_HWHEEL      20000U
#define IDLE_ITERS_WHEEL1      200U

#define MAX_REPS	15U
#define MAX_OCCUPANCIES 8U
#define DEFAULT_REPS	3U

static const unsigned int default_occupancies[] = {
	1U << 10,
	1U << 16,
	1U << 20,
	1U << 22,
};

/*
 * floor: not a scheduler but the harness's own cost, for reference: a FIFO
 * delay line that writes the departure into the mbuf like the others and
 * lets the oldest packet go once N are queued. Whatever a queue costs comes
 * on top of it. Human-readable table only.
 */
enum impl_id { IMPL_HWHEEL = 0, IMPL_HEAP, IMPL_WHEEL1, IMPL_FLOOR, IMPL_MAX };

static const char *const impl_names[IMPL_MAX] = {
	[IMPL_HWHEEL] = "hwheel",
	[IMPL_HEAP] = "heap",
	[IMPL_WHEEL1] = "wheel1",
	[IMPL_FLOOR] = "floor",
};

/* The floor's FIFO delay line. */
struct floor_q {
	struct rte_mbuf **ring;
	uint64_t head;
	uint64_t tail;
	uint64_t mask;
	uint64_t target;
	int dyn_off;
};

/* Command line, read-only once parsed. */
struct bench_conf {
	bool json;
	bool quick;
	bool idle;
	unsigned int reps;
	unsigned int occupancies[MAX_OCCUPANCIES];
	unsigned int n_occupancies;
	bool producers[3]; /* [1], [2] */
	bool impls[IMPL_MAX];
	int eal_argc;
	char **eal_argv;
};

/* Process-wide resources, set up once in main(). */
struct bench_env {
	struct rte_mempool *pool;
	unsigned int pool_size;
	int dyn_off;
	uint64_t tsc_hz; /* the real TSC, for timing */
	uint32_t stamp;	 /* per-run mark against duplicates */
	FILE *out;	 /* results (the real stdout) */
	FILE *table;	 /* human-readable table */
};

/* State shared between the consumer and producer 2. */
struct p2_shared {
	/* Written by the consumer. */
	uint64_t now_tsc __rte_cache_aligned;
	uint64_t step;
	uint32_t stop;

	/* Written by producer 2. */
	uint64_t bursts __rte_cache_aligned;
	uint64_t enq;
	uint64_t starved;
	uint64_t refused;
	unsigned int nleft;
	struct rte_mbuf *left[BURST];

	/* Read-only while it runs. */
	struct pcr_wheel *w __rte_cache_aligned;
	struct rte_ring *ret;
	uint64_t span_tsc;
	uint64_t seed;
	int dyn_off;
};

/* One run: a queue, its mbufs and the consumer's counters. */
struct run_ctx {
	enum impl_id impl;
	void *q;
	unsigned int occupancy;
	unsigned int producers;
	uint64_t span_tsc;
	uint64_t dt_tsc;
	uint64_t now_tsc;
	uint64_t rng;

	struct rte_mbuf **stack; /* free mbufs, LIFO */
	unsigned int top;
	unsigned int nmbufs;

	uint64_t enq;
	uint64_t deq;
	uint64_t starved; /* steps that found fewer than BURST free mbufs */
	uint64_t refused; /* packets the queue refused (stay in the stack) */
	uint64_t early;	  /* packets dequeued before their slot started */
	uint64_t drops;	  /* hwheel drop callback calls */
	uint64_t p2_waits;
	uint64_t q_cycles; /* real TSC cycles spent inside the queue's calls */
	struct pcr_wheel_stats s0; /* hwheel counters when timing starts */

	struct p2_shared *p2;
};

/* What one run measured. */
struct run_result {
	double ns_per_pkt;	/* queue calls only: what the queue costs */
	double loop_ns_per_pkt; /* the whole loop, harness included */
	uint64_t packets;
	uint64_t occupancy_end;
	uint64_t late;
	uint64_t cascaded;
	uint64_t advances;
	uint64_t spill;
	uint64_t p2_waits;
	uint64_t starved;
};

/* All reps of one configuration. */
struct result {
	enum impl_id impl;
	unsigned int occupancy;
	unsigned int producers;
	bool done;
	unsigned int nrep;
	struct run_result rep[MAX_REPS];
	double median;	    /* of ns_per_pkt */
	double median_loop; /* of loop_ns_per_pkt */
};

/* --- small helpers -------------------------------------------------------- */

__extension__ typedef unsigned __int128 u128;

/* splitmix64 */
static inline uint64_t
rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, bound). */
static inline uint64_t
rng_below(uint64_t *s, uint64_t bound)
{
	return (uint64_t)(((u128)rng_next(s) * bound) >> 64);
}

static void fail(const char *fmt, ...) __rte_noreturn __rte_format_printf(1, 2);

static void
fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static double
median_of(double *v, unsigned int n)
{
	unsigned int i, j;

	for (i = 1; i < n; i++) {
		double x = v[i];

		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline uint64_t
vtick_of(uint64_t tsc)
{
	return (tsc - VSTART_TSC) / GRANULARITY_TSC;
}

/* --- the three queues behind one interface -------------------------------- */

static void
hwheel_drop(struct rte_mbuf *m, enum pcr_wheel_drop_reason reason, void *arg)
{
	struct run_ctx *c = arg;

	RTE_SET_USED(reason);
	c->drops++;
	rte_pktmbuf_free(m);
}

static struct floor_q *
floor_create(unsigned int capacity, unsigned int target, int dyn_off)
{
	struct floor_q *f = rte_zmalloc("bench_floor", sizeof(*f), 0);
	uint64_t size = rte_align64pow2(capacity);

	if (f == NULL)
		return NULL;
	f->ring = rte_malloc("bench_floor_ring", size * sizeof(f->ring[0]),
			     RTE_CACHE_LINE_SIZE);
	if (f->ring == NULL) {
		rte_free(f);
		return NULL;
	}
	f->mask = size - 1;
	f->target = target;
	f->dyn_off = dyn_off;
	return f;
}

static void
floor_free(struct floor_q *f)
{
	rte_free(f->ring);
	rte_free(f);
}

static __rte_always_inline unsigned int
floor_enqueue(struct floor_q *f, struct rte_mbuf *const *mbufs,
	      const uint64_t *dep, unsigned int n)
{
	unsigned int i;

	n = RTE_MIN(n, (unsigned int)(f->mask + 1 - (f->tail - f->head)));
	for (i = 0; i < n; i++) {
		*pcr_wheel_departure(mbufs[i], f->dyn_off) = dep[i];
		f->ring[(f->tail + i) & f->mask] = mbufs[i];
	}
	f->tail += n;
	return n;
}

/* The oldest packets beyond the target occupancy (all of them: @all). */
static __rte_always_inline unsigned int
floor_dequeue(struct floor_q *f, struct rte_mbuf **mbufs, unsigned int n,
	      bool all)
{
	uint64_t count = f->tail - f->head;
	uint64_t keep = all ? 0 : f->target;
	unsigned int i;

	n = count > keep ? (unsigned int)RTE_MIN((uint64_t)n, count - keep) : 0;
	for (i = 0; i < n; i++)
		mbufs[i] = f->ring[(f->head + i) & f->mask];
	f->head += n;
	return n;
}

/*
 * The dispatchers are always inlined into loops instantiated with a
 * constant impl, so the switch folds away and each loop calls its queue
 * directly.
 */
static __rte_always_inline unsigned int
q_enqueue(enum impl_id impl, void *q, struct rte_mbuf *const *mbufs,
	  const uint64_t *dep, unsigned int n)
{
	switch (impl) {
	case IMPL_HWHEEL:
		return pcr_wheel_enqueue_burst(q, mbufs, dep, n);
	case IMPL_HEAP:
		return bl_heap_enqueue_burst(q, mbufs, dep, n);
	case IMPL_WHEEL1:
		return bl_wheel1_enqueue_burst(q, mbufs, dep, n);
	case IMPL_FLOOR:
		return floor_enqueue(q, mbufs, dep, n);
	default:
		return 0;
	}
}

static __rte_always_inline unsigned int
q_dequeue(enum impl_id impl, void *q, uint64_t now, struct rte_mbuf **mbufs,
	  unsigned int n)
{
	switch (impl) {
	case IMPL_HWHEEL:
		return pcr_wheel_dequeue_burst(q, now, mbufs, n);
	case IMPL_HEAP:
		return bl_heap_dequeue_burst(q, now, mbufs, n);
	case IMPL_WHEEL1:
		return bl_wheel1_dequeue_burst(q, now, mbufs, n);
	case IMPL_FLOOR:
		RTE_SET_USED(now);
		return floor_dequeue(q, mbufs, n, false);
	default:
		return 0;
	}
}

static unsigned int
q_flush(enum impl_id impl, void *q, struct rte_mbuf **mbufs, unsigned int n)
{
	switch (impl) {
	case IMPL_HWHEEL:
		return pcr_wheel_flush(q, mbufs, n);
	case IMPL_HEAP:
		return bl_heap_flush(q, mbufs, n);
	case IMPL_WHEEL1:
		return bl_wheel1_flush(q, mbufs, n);
	case IMPL_FLOOR:
		return floor_dequeue(q, mbufs, n, true);
	default:
		return 0;
	}
}

static void *
q_create(enum impl_id impl, struct run_ctx *c, uint64_t horizon_ns,
	 unsigned int capacity, int dyn_off)
{
	switch (impl) {
	case IMPL_HWHEEL: {
		struct pcr_wheel_params p;
		char err[256];
		void *w;

		pcr_wheel_params_default(&p);
		p.name = "bench";
		p.tsc_hz = VHZ;
		p.start_tsc = VSTART_TSC;
		p.granularity_ns = GRANULARITY_NS;
		p.horizon_ns = horizon_ns;
		/* the far levels may hold nearly everything queued */
		p.max_queued = RTE_MAX(capacity, p.max_queued);
		p.inbox_size =
			RTE_MAX(p.inbox_size, rte_align32pow2(4 * P2_INITIAL));
		p.drop_fn = hwheel_drop;
		p.drop_arg = c;
		if (pcr_wheel_params_check(&p, err, sizeof(err)) != 0)
			fail("wheel parameters: %s", err);
		w = pcr_wheel_create(&p);
		if (w == NULL)
			fprintf(stderr, PROG ": pcr_wheel_create: %s\n",
				rte_strerror(rte_errno));
		return w;
	}
	case IMPL_HEAP:
		return bl_heap_create(capacity, dyn_off);
	case IMPL_WHEEL1: {
		struct bl_wheel1_params p = {
			.tsc_hz = VHZ,
			.start_tsc = VSTART_TSC,
			.granularity_ns = GRANULARITY_NS,
			.horizon_ns = horizon_ns,
			.dynfield_offset = dyn_off,
		};

		return bl_wheel1_create(&p);
	}
	case IMPL_FLOOR:
		return floor_create(capacity, c->occupancy, dyn_off);
	default:
		return NULL;
	}
}

static void
q_free(enum impl_id impl, void *q)
{
	switch (impl) {
	case IMPL_HWHEEL:
		pcr_wheel_free(q);
		break;
	case IMPL_HEAP:
		bl_heap_free(q);
		break;
	case IMPL_WHEEL1:
		bl_wheel1_free(q);
		break;
	case IMPL_FLOOR:
		floor_free(q);
		break;
	default:
		break;
	}
}

static uint64_t
q_count(enum impl_id impl, void *q)
{
	struct pcr_wheel_stats s;

	switch (impl) {
	case IMPL_HWHEEL:
		pcr_wheel_stats_get(q, &s);
		return s.queued;
	case IMPL_HEAP:
		return bl_heap_count(q);
	case IMPL_WHEEL1:
		return bl_wheel1_count(q);
	case IMPL_FLOOR:
		return ((struct floor_q *)q)->tail -
		       ((struct floor_q *)q)->head;
	default:
		return 0;
	}
}

/*
 * Bring a burst's mbufs into cache, untimed, as the datapath has them when
 * it enqueues: RX has just written the first line and the departure is
 * computed next to the second (where the dynamic field lives). The queues'
 * own cost is then timed without the bench's cache misses on mbufs the
 * LIFO stack hands back cold (they were last touched when enqueued, up to
 * a span ago); the whole loop, those misses included, is reported too.
 */
static __rte_always_inline void
mbufs_as_from_rx(struct rte_mbuf *const *m, unsigned int n, int dyn_off)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		m[i]->data_len = (uint16_t)m[i]->pkt_len;
		*(volatile uint64_t *)pcr_wheel_departure(m[i], dyn_off);
	}
}

/* --- producer 2 ----------------------------------------------------------- */

static int
producer2_main(void *arg)
{
	struct p2_shared *p = arg;
	struct rte_mbuf *burst[BURST];
	uint64_t dep[BURST];
	uint64_t bursts = 0, rng = p->seed;
	unsigned int have = 0, i;

	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
		uint64_t step = __atomic_load_n(&p->step, __ATOMIC_ACQUIRE);
		uint64_t now;
		unsigned int sent;

		if (bursts >= step + P2_LEAD_STEPS) {
			rte_pause();
			continue;
		}
		if (have < BURST) {
			have += rte_ring_sc_dequeue_burst(p->ret,
							  (void **)&burst[have],
							  BURST - have, NULL);
			if (have < BURST) {
				p->starved++;
				rte_pause();
				continue;
			}
		}
		now = __atomic_load_n(&p->now_tsc, __ATOMIC_RELAXED);
		for (i = 0; i < BURST; i++)
			dep[i] = now + rng_below(&rng, p->span_tsc);
		mbufs_as_from_rx(burst, BURST, p->dyn_off);
		sent = 0;
		while (sent < BURST) {
			sent += pcr_wheel_enqueue_burst(
				p->w, &burst[sent], &dep[sent], BURST - sent);
			if (sent < BURST) {
				p->refused++;
				if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
					break;
				rte_pause();
			}
		}
		__atomic_store_n(&p->enq, p->enq + sent, __ATOMIC_RELAXED);
		if (sent < BURST) {
			/* stopped with a partly sent burst */
			memmove(burst, &burst[sent],
				(BURST - sent) * sizeof(burst[0]));
			have = BURST - sent;
			break;
		}
		have = 0;
		bursts++;
		__atomic_store_n(&p->bursts, bursts, __ATOMIC_RELEASE);
	}
	for (i = 0; i < have; i++)
		p->left[i] = burst[i];
	p->nleft = have;
	return 0;
}

/* --- the steady-state loop ------------------------------------------------ */

static void
check_not_early(struct run_ctx *c, struct rte_mbuf *const *m, unsigned int n,
		int dyn_off)
{
	uint64_t now_tick = vtick_of(c->now_tsc);
	unsigned int i;

	for (i = 0; i < n; i++) {
		uint64_t dep = *pcr_wheel_departure(m[i], dyn_off);

		if (dep > VSTART_TSC && vtick_of(dep) > now_tick)
			c->early++;
	}
}

/* More mbufs came out than the run owns: some packet came out twice. */
static void __rte_noreturn
fail_overflow(const struct run_ctx *c)
{
	fail("%s: %u mbufs out of the queue and free, but the run owns %u",
	     impl_names[c->impl], c->top, c->nmbufs);
}

/* Wait until producer 2 is no more than P2_LEAD_STEPS behind. */
static void
p2_wait(struct run_ctx *c, uint64_t step, uint64_t tsc_hz)
{
	uint64_t t0 = 0;

	while (step > __atomic_load_n(&c->p2->bursts, __ATOMIC_ACQUIRE) +
			      P2_LEAD_STEPS) {
		if (t0 == 0) {
			t0 = rte_rdtsc();
			c->p2_waits++;
		} else if (rte_rdtsc() - t0 > P2_STALL_S * tsc_hz) {
			fail("producer 2 stalled for %d s at step %" PRIu64
			     " (its bursts: %" PRIu64 ")",
			     P2_STALL_S, step,
			     __atomic_load_n(&c->p2->bursts, __ATOMIC_RELAXED));
		}
		rte_pause();
	}
}

/*
 * One step: insert a burst, advance the clock, drain. Always inlined with a
 * constant impl and constant flags.
 */
static __rte_always_inline void
run_step(enum impl_id impl, struct run_ctx *c, bool check, bool two,
	 int dyn_off, uint64_t tsc_hz, uint64_t step)
{
	uint64_t dep[BURST];
	unsigned int k = RTE_MIN(BURST, c->top), acc, got, i;

	uint64_t t0, t1, t2;

	if (unlikely(k < BURST))
		c->starved++;
	c->top -= k;
	for (i = 0; i < k; i++)
		dep[i] = c->now_tsc + rng_below(&c->rng, c->span_tsc);
	mbufs_as_from_rx(&c->stack[c->top], k, dyn_off);
	/* rte_rdtsc() does not wait for earlier loads and stores: t0 would
	 * be read while the warm-up's misses are in flight, and the
	 * queue's first store into each mbuf would wait for them inside the
	 * timed calls (10-15 ns a packet at 1M, for every implementation:
	 * 'floor' measured 12.6 ns for a ring store). The fence completes the
	 * warm-up first. */
	t0 = rte_rdtsc_precise();
	acc = q_enqueue(impl, c->q, &c->stack[c->top], dep, k);
	t1 = rte_rdtsc();
	if (unlikely(acc < k)) {
		memmove(&c->stack[c->top], &c->stack[c->top + acc],
			(k - acc) * sizeof(c->stack[0]));
		c->top += k - acc;
		c->refused += k - acc;
	}
	c->enq += acc;

	c->now_tsc += c->dt_tsc;
	if (two)
		__atomic_store_n(&c->p2->now_tsc, c->now_tsc, __ATOMIC_RELAXED);
	t2 = rte_rdtsc();
	do {
		got = q_dequeue(impl, c->q, c->now_tsc, &c->stack[c->top],
				BURST);
		if (check && impl != IMPL_FLOOR)
			check_not_early(c, &c->stack[c->top], got, dyn_off);
		c->top += got;
		c->deq += got;
		if (unlikely(c->top > c->nmbufs))
			fail_overflow(c);
	} while (got == BURST);
	c->q_cycles += t1 - t0 + rte_rdtsc() - t2;

	if (two) {
		k = RTE_MIN(BURST, c->top);
		got = rte_ring_sp_enqueue_burst(
			c->p2->ret, (void *const *)&c->stack[c->top - k], k,
			NULL);
		c->top -= got;
		__atomic_store_n(&c->p2->step, step + 1, __ATOMIC_RELEASE);
		p2_wait(c, step + 1, tsc_hz);
	}
}

/*
 * Warm up over one span (checked), then time steps until @timed packets
 * were dequeued. Returns elapsed real TSC cycles; *@packets: the packets
 * dequeued in that time.
 */
static __rte_always_inline uint64_t
run_steady_impl(enum impl_id impl, struct run_ctx *c, bool two, int dyn_off,
		uint64_t tsc_hz, uint64_t timed, uint64_t *step,
		uint64_t *packets)
{
	uint64_t warm_end = c->now_tsc + c->span_tsc + c->span_tsc / 16;
	uint64_t deq0, q0, t0, t1;

	while (c->now_tsc < warm_end) {
		run_step(impl, c, true, two, dyn_off, tsc_hz, *step);
		(*step)++;
	}
	if (impl == IMPL_HWHEEL)
		pcr_wheel_stats_get(c->q, &c->s0);
	deq0 = c->deq;
	q0 = c->q_cycles;
	t0 = rte_rdtsc();
	while (c->deq - deq0 < timed) {
		run_step(impl, c, false, two, dyn_off, tsc_hz, *step);
		(*step)++;
	}
	t1 = rte_rdtsc();
	*packets = c->deq - deq0;
	c->q_cycles -= q0; /* the timed phase's share */
	return t1 - t0;
}

static uint64_t
run_steady(struct run_ctx *c, int dyn_off, uint64_t tsc_hz, uint64_t timed,
	   uint64_t *step, uint64_t *packets)
{
	bool two = c->p2 != NULL;

	switch (c->impl) {
	case IMPL_HWHEEL:
		return two ? run_steady_impl(IMPL_HWHEEL, c, true, dyn_off,
					     tsc_hz, timed, step, packets)
			   : run_steady_impl(IMPL_HWHEEL, c, false, dyn_off,
					     tsc_hz, timed, step, packets);
	case IMPL_HEAP:
		return run_steady_impl(IMPL_HEAP, c, false, dyn_off, tsc_hz,
				       timed, step, packets);
	case IMPL_WHEEL1:
		return run_steady_impl(IMPL_WHEEL1, c, false, dyn_off, tsc_hz,
				       timed, step, packets);
	case IMPL_FLOOR:
		return run_steady_impl(IMPL_FLOOR, c, false, dyn_off, tsc_hz,
				       timed, step, packets);
	default:
		return 0;
	}
}

/* --- one run, with its checks --------------------------------------------- */

static void
mbufs_get(struct bench_env *env, struct run_ctx *c, unsigned int n)
{
	size_t bytes = RTE_ALIGN_CEIL((size_t)(n + BURST) * sizeof(c->stack[0]),
				      RTE_CACHE_LINE_SIZE);

	c->stack = aligned_alloc(RTE_CACHE_LINE_SIZE, bytes);
	if (c->stack == NULL)
		fail("no memory for a stack of %u mbuf pointers", n);
	if (rte_pktmbuf_alloc_bulk(env->pool, c->stack, n) != 0)
		fail("cannot take %u mbufs from the pool (%u in it)", n,
		     env->pool_size);
	c->top = n;
	c->nmbufs = n;
}

/*
 * Every mbuf back exactly once: count, stamp against duplicates, return to
 * the pool, pool empty of users.
 */
static void
mbufs_put(struct bench_env *env, struct run_ctx *c, const char *what)
{
	unsigned int i, in_use;

	if (c->top + c->drops != c->nmbufs)
		fail("%s: %u of %u mbufs came back (%" PRIu64 " dropped)", what,
		     c->top, c->nmbufs, c->drops);
	env->stamp++;
	for (i = 0; i < c->top; i++) {
		if (c->stack[i]->hash.usr == env->stamp)
			fail("%s: mbuf %p came back twice", what,
			     (void *)c->stack[i]);
		c->stack[i]->hash.usr = env->stamp;
	}
	rte_pktmbuf_free_bulk(c->stack, c->top);
	c->top = 0;
	free(c->stack);
	c->stack = NULL;
	in_use = rte_mempool_in_use_count(env->pool);
	if (in_use != 0)
		fail("%s: %u mbufs still in use after the run", what, in_use);
}

static void
run_drain_and_check(struct run_ctx *c, int dyn_off, uint64_t enq_total,
		    const char *what)
{
	uint64_t end = c->now_tsc + 2 * HORIZON_NS * (VHZ / 1000000000ULL);
	struct rte_mbuf *m[BURST];
	unsigned int got;

	/* the floor keeps its N until flushed: nothing to step through */
	while (c->impl != IMPL_FLOOR && c->deq < enq_total &&
	       c->now_tsc < end) {
		c->now_tsc += c->dt_tsc;
		do {
			got = q_dequeue(c->impl, c->q, c->now_tsc,
					&c->stack[c->top], BURST);
			check_not_early(c, &c->stack[c->top], got, dyn_off);
			c->top += got;
			c->deq += got;
			if (c->top > c->nmbufs)
				fail_overflow(c);
		} while (got == BURST);
	}
	/* anything left would be a bug; take it out to report it */
	while ((got = q_flush(c->impl, c->q, m, BURST)) > 0) {
		if (c->top + got > c->nmbufs)
			fail("%s: more packets came out than went in", what);
		memcpy(&c->stack[c->top], m, got * sizeof(m[0]));
		c->top += got;
		c->deq += got;
	}
	if (c->early != 0)
		fail("%s: %" PRIu64 " packets left before their slot", what,
		     c->early);
	if (c->deq + c->drops != enq_total)
		fail("%s: enqueued %" PRIu64 ", dequeued %" PRIu64
		     ", dropped %" PRIu64,
		     what, enq_total, c->deq, c->drops);
	if (c->drops != 0)
		fail("%s: the wheel dropped %" PRIu64 " packets", what,
		     c->drops);
	if (q_count(c->impl, c->q) != 0)
		fail("%s: %" PRIu64 " packets still queued after the drain",
		     what, q_count(c->impl, c->q));
	if (c->impl == IMPL_HWHEEL) {
		struct pcr_wheel_stats s;

		pcr_wheel_stats_get(c->q, &s);
		if (s.enqueued != enq_total || s.dequeued != c->deq ||
		    s.dropped != 0 || s.queued != 0)
			fail("%s: wheel counters: enqueued %" PRIu64
			     " dequeued %" PRIu64 " dropped %" PRIu64
			     " queued %" PRIu64 "; bench: %" PRIu64
			     " in, %" PRIu64 " out",
			     what, s.enqueued, s.dequeued, s.dropped, s.queued,
			     enq_total, c->deq);
	}
}

static bool
run_one(struct bench_env *env, const struct bench_conf *conf, enum impl_id impl,
	unsigned int occupancy, unsigned int producers, unsigned int rep,
	struct run_result *r)
{
	struct run_ctx c;
	struct p2_shared *p2 = NULL;
	struct pcr_wheel_stats s1;
	uint64_t timed, elapsed, step = 0, enq_total;
	unsigned int nmbufs = occupancy + occupancy / 8 + 8192;
	char what[96];

	snprintf(what, sizeof(what), "%s N=%u P=%u rep %u", impl_names[impl],
		 occupancy, producers, rep + 1);
	memset(&c, 0, sizeof(c));
	memset(r, 0, sizeof(*r));
	c.impl = impl;
	c.occupancy = occupancy;
	c.producers = producers;
	c.span_tsc = SPAN_TSC;
	c.dt_tsc = 16ULL * producers * SPAN_TSC / occupancy;
	c.now_tsc = VSTART_TSC;
	/* same departures for every implementation */
	c.rng = 0x5eed0000ULL + (uint64_t)occupancy * 31 + rep;
	c.q = q_create(impl, &c, HORIZON_NS, nmbufs, env->dyn_off);
	if (c.q == NULL) {
		fprintf(stderr, PROG ": %s: cannot create the queue, skipped\n",
			what);
		return false;
	}
	mbufs_get(env, &c, nmbufs);

	if (producers == 2) {
		char rname[RTE_RING_NAMESIZE];
		unsigned int lcore = rte_get_next_lcore(-1, 1, 0);
		unsigned int k;

		p2 = rte_zmalloc("bench_p2", sizeof(*p2), RTE_CACHE_LINE_SIZE);
		if (p2 == NULL)
			fail("no memory for producer 2's state");
		snprintf(rname, sizeof(rname), "bench_ret_%u", env->stamp);
		p2->ret = rte_ring_create(
			rname, rte_align32pow2(8 * P2_INITIAL), SOCKET_ID_ANY,
			RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (p2->ret == NULL)
			fail("cannot create the return ring: %s",
			     rte_strerror(rte_errno));
		p2->w = c.q;
		p2->span_tsc = c.span_tsc;
		p2->dyn_off = env->dyn_off;
		p2->now_tsc = c.now_tsc;
		p2->seed = c.rng ^ 0x2222222222222222ULL;
		k = rte_ring_sp_enqueue_burst(
			p2->ret, (void *const *)&c.stack[c.top - P2_INITIAL],
			P2_INITIAL, NULL);
		c.top -= k;
		c.p2 = p2;
		if (rte_eal_remote_launch(producer2_main, p2, lcore) != 0)
			fail("cannot launch producer 2 on lcore %u", lcore);
	}

	if (conf->quick)
		timed = RTE_MAX((uint64_t)occupancy, QUICK_TIMED_MIN);
	else
		timed = RTE_MAX(TIMED_FACTOR * occupancy, TIMED_MIN);
	elapsed = run_steady(&c, env->dyn_off, env->tsc_hz, timed, &step,
			     &r->packets);
	enq_total =
		c.enq +
		(p2 != NULL ? __atomic_load_n(&p2->enq, __ATOMIC_ACQUIRE) : 0);
	r->occupancy_end = enq_total - c.deq;
	if (impl == IMPL_HWHEEL) {
		pcr_wheel_stats_get(c.q, &s1);
		r->late = s1.late - c.s0.late;
		r->cascaded = s1.cascaded - c.s0.cascaded;
		r->advances = s1.advances - c.s0.advances;
		r->spill = s1.spill - c.s0.spill;
	} else if (impl == IMPL_WHEEL1) {
		r->late = bl_wheel1_late(c.q);
	}

	if (p2 != NULL) {
		unsigned int lcore = rte_get_next_lcore(-1, 1, 0);
		unsigned int got;

		__atomic_store_n(&p2->stop, 1, __ATOMIC_RELEASE);
		rte_eal_wait_lcore(lcore);
		memcpy(&c.stack[c.top], p2->left,
		       p2->nleft * sizeof(p2->left[0]));
		c.top += p2->nleft;
		while ((got = rte_ring_sc_dequeue_burst(
				p2->ret, (void **)&c.stack[c.top], BURST,
				NULL)) > 0)
			c.top += got;
		r->starved = p2->starved;
		enq_total = c.enq + p2->enq;
	}
	r->p2_waits = c.p2_waits;
	r->starved += c.starved;
	/*
	 * The timed figures: real time inside the queue's calls, and the
	 * whole loop's elapsed time, per packet dequeued.
	 */
	r->ns_per_pkt = (double)c.q_cycles * 1e9 / (double)env->tsc_hz /
			(double)r->packets;
	r->loop_ns_per_pkt = (double)elapsed * 1e9 / (double)env->tsc_hz /
			     (double)r->packets;

	run_drain_and_check(&c, env->dyn_off, enq_total, what);
	q_free(impl, c.q);
	if (p2 != NULL) {
		rte_ring_free(p2->ret);
		rte_free(p2);
	}
	mbufs_put(env, &c, what);
	return true;
}

/* --- idle gap ------------------------------------------------------------- */

/*
 * The queue holds one packet IDLE_GAP ahead; time the dequeue call that
 * jumps the gap and returns it. Returns ns per call (mean over @iters).
 */
static double
run_idle(struct bench_env *env, enum impl_id impl, unsigned int iters)
{
	struct run_ctx c;
	struct rte_mbuf *m, *out[BURST];
	uint64_t horizon_ns, sum = 0, dep;
	unsigned int i, got;
	char what[64];

	snprintf(what, sizeof(what), "%s idle gap", impl_names[impl]);
	memset(&c, 0, sizeof(c));
	c.impl = impl;
	c.now_tsc = VSTART_TSC;
	c.dt_tsc = IDLE_GAP_TSC;
	/* a gap of exactly 2 s needs a horizon a little beyond it */
	horizon_ns = impl == IMPL_HWHEEL ? IDLE_HWHEEL_HORIZON_NS
					 : (1ULL << 21) * GRANULARITY_NS;
	c.q = q_create(impl, &c, horizon_ns, 1024, env->dyn_off);
	if (c.q == NULL)
		fail("%s: cannot create the queue", what);
	mbufs_get(env, &c, 1);

	for (i = 0; i < iters; i++) {
		uint64_t t0, t1;

		m = c.stack[--c.top];
		dep = c.now_tsc + IDLE_GAP_TSC;
		if (q_enqueue(impl, c.q, &m, &dep, 1) != 1)
			fail("%s: enqueue refused", what);
		c.enq++;
		/* take it from the inbox now, so only the jump is timed */
		if (q_dequeue(impl, c.q, c.now_tsc, out, BURST) != 0)
			fail("%s: packet left 2 s early", what);
		c.now_tsc += IDLE_GAP_TSC;
		t0 = rte_rdtsc_precise();
		got = q_dequeue(impl, c.q, c.now_tsc, out, BURST);
		t1 = rte_rdtsc_precise();
		if (got != 1 || out[0] != m)
			fail("%s: the jump returned %u packets, not the one "
			     "queued",
			     what, got);
		c.stack[c.top++] = m;
		c.deq++;
		sum += t1 - t0;
	}
	run_drain_and_check(&c, env->dyn_off, c.enq, what);
	q_free(impl, c.q);
	mbufs_put(env, &c, what);
	return (double)sum * 1e9 / (double)env->tsc_hz / iters;
}

/* Cost of the timing itself: one rte_rdtsc_precise() pair, min over many. */
static double
rdtsc_pair_ns(const struct bench_env *env)
{
	uint64_t best = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < 10000; i++) {
		uint64_t t0 = rte_rdtsc_precise();
		uint64_t t1 = rte_rdtsc_precise();

		best = RTE_MIN(best, t1 - t0);
	}
	return (double)best * 1e9 / (double)env->tsc_hz;
}

/* --- reporting ------------------------------------------------------------ */

static const struct result *
result_find(const struct result *res, unsigned int nres, enum impl_id impl,
	    unsigned int occupancy, unsigned int producers)
{
	unsigned int i;

	for (i = 0; i < nres; i++)
		if (res[i].done && res[i].impl == impl &&
		    res[i].occupancy == occupancy &&
		    res[i].producers == producers)
			return &res[i];
	return NULL;
}

static void
print_cell(FILE *f, const struct result *r)
{
	if (r != NULL)
		fprintf(f, " %9.2f", r->median);
	else
		fprintf(f, " %9s", "-");
}

static void
print_ratio(FILE *f, const struct result *a, const struct result *b)
{
	if (a != NULL && b != NULL && b->median > 0)
		fprintf(f, " %10.1fx", a->median / b->median);
	else
		fprintf(f, " %11s", "-");
}

static void
print_table(const struct bench_env *env, const struct bench_conf *conf,
	    const struct result *res, unsigned int nres,
	    const double idle[IMPL_MAX])
{
	FILE *f = env->table;
	const struct result *hw1k, *hw1m, *heap1m;
	unsigned int i, j, p;

	fprintf(f,
		"\n%s: insert + drain, ns per packet, median of %u run(s)\n"
		"  virtual %.1f GHz TSC, granularity %" PRIu64
		" ns, horizon %.1f s,\n"
		"  departures uniform over %.1f s ahead, bursts of %u, "
		"timing: real TSC %.3f GHz\n"
		"  P = 2: producer 2 on lcore 1, consumer + producer 1 on the "
		"main lcore\n\n",
		PROG, conf->reps, VHZ / 1e9, GRANULARITY_NS, HORIZON_NS / 1e9,
		(double)SPAN_TSC / VHZ, BURST, env->tsc_hz / 1e9);
	fprintf(f, "%9s %2s %9s %9s %9s %11s %11s %9s\n", "occupancy", "P",
		"hwheel", "heap", "wheel1", "heap/hw", "wheel1/hw", "floor");
	for (i = 0; i < conf->n_occupancies; i++) {
		unsigned int n = conf->occupancies[i];

		for (p = 1; p <= 2; p++) {
			const struct result *hw, *hp, *w1, *fl;

			if (!conf->producers[p])
				continue;
			hw = result_find(res, nres, IMPL_HWHEEL, n, p);
			hp = result_find(res, nres, IMPL_HEAP, n, p);
			w1 = result_find(res, nres, IMPL_WHEEL1, n, p);
			fl = result_find(res, nres, IMPL_FLOOR, n, p);
			if (hw == NULL && hp == NULL && w1 == NULL &&
			    fl == NULL)
				continue;
			fprintf(f, "%9u %2u", n, p);
			print_cell(f, hw);
			print_cell(f, hp);
			print_cell(f, w1);
			print_ratio(f, hp, hw);
			print_ratio(f, w1, hw);
			print_cell(f, fl);
			fprintf(f, "\n");
		}
	}
	if (conf->idle) {
		fprintf(f,
			"\nidle gap of %.1f s, ns per dequeue call "
			"(rdtsc pair %.1f ns included):\n",
			IDLE_GAP_NS / 1e9, rdtsc_pair_ns(env));
		for (j = 0; j < IMPL_MAX; j++)
			if (idle[j] >= 0)
				fprintf(f, "  %-7s %14.1f\n", impl_names[j],
					idle[j]);
	}

	fprintf(f, "\nper run (ns/pkt each rep; occupancy at the end of the "
		   "timed phase; hwheel counters per timed packet):\n");
	for (i = 0; i < nres; i++) {
		const struct result *r = &res[i];
		const struct run_result *x = &r->rep[0];

		if (!r->done)
			continue;
		fprintf(f, "  %-6s N=%-8u P=%u:", impl_names[r->impl],
			r->occupancy, r->producers);
		for (j = 0; j < r->nrep; j++)
			fprintf(f, " %.2f", r->rep[j].ns_per_pkt);
		fprintf(f, " | loop");
		for (j = 0; j < r->nrep; j++)
			fprintf(f, " %.2f", r->rep[j].loop_ns_per_pkt);
		fprintf(f, " | occ %" PRIu64 " | %" PRIu64 " pkts",
			x->occupancy_end, x->packets);
		if (r->impl == IMPL_HWHEEL)
			fprintf(f,
				" | cascaded %.2f advances %.2f late %.4f"
				" spill %" PRIu64,
				(double)x->cascaded / x->packets,
				(double)x->advances / x->packets,
				(double)x->late / x->packets, x->spill);
		if (r->producers == 2)
			fprintf(f,
				" | consumer waits %" PRIu64
				" starved %" PRIu64,
				x->p2_waits, x->starved);
		fprintf(f, "\n");
	}

	hw1k = result_find(res, nres, IMPL_HWHEEL, 1U << 10, 1);
	hw1m = result_find(res, nres, IMPL_HWHEEL, 1U << 20, 1);
	heap1m = result_find(res, nres, IMPL_HEAP, 1U << 20, 1);
	fprintf(f, "\ntargets (P = 1):\n");
	if (hw1m != NULL)
		fprintf(f,
			"  hwheel <= 20 ns/pkt at 1M queued:      %6.2f  %s\n",
			hw1m->median, hw1m->median <= 20 ? "met" : "MISSED");
	if (hw1m != NULL && hw1k != NULL)
		fprintf(f,
			"  hwheel 1M within 2x of 1K:              %6.2fx %s\n",
			hw1m->median / hw1k->median,
			hw1m->median <= 2 * hw1k->median ? "met" : "MISSED");
	if (hw1m != NULL && heap1m != NULL)
		fprintf(f,
			"  hwheel >= 5x faster than heap at 1M:    %6.2fx %s\n",
			heap1m->median / hw1m->median,
			heap1m->median >= 5 * hw1m->median ? "met" : "MISSED");
	fflush(f);
}

static void
print_json(const struct bench_env *env, const struct bench_conf *conf,
	   const struct result *res, unsigned int nres,
	   const double idle[IMPL_MAX])
{
	unsigned int i;

	for (i = 0; i < nres; i++) {
		if (!res[i].done || res[i].impl == IMPL_FLOOR)
			continue;
		fprintf(env->out,
			"{\"bench\":\"wheel\",\"impl\":\"%s\",\"occupancy\":%u,"
			"\"producers\":%u,\"ns_per_pkt\":%.2f,"
			"\"loop_ns_per_pkt\":%.2f}\n",
			impl_names[res[i].impl], res[i].occupancy,
			res[i].producers, res[i].median, res[i].median_loop);
	}
	if (conf->idle)
		for (i = 0; i < IMPL_MAX; i++)
			if (idle[i] >= 0)
				fprintf(env->out,
					"{\"bench\":\"wheel_idle\",\"impl\":"
					"\"%s\",\"gap_ns\":%" PRIu64
					",\"ns_per_call\":%.1f}\n",
					impl_names[i], IDLE_GAP_NS, idle[i]);
	fflush(env->out);
}

/* --- command line --------------------------------------------------------- */

#define OPT_JSON      "json"
#define OPT_QUICK     "quick"
#define OPT_REPS      "reps"
#define OPT_OCCUPANCY "occupancy"
#define OPT_PRODUCERS "producers"
#define OPT_IMPL      "impl"
#define OPT_NO_IDLE   "no-idle"
#define OPT_HELP      "help"
#define OPT_EAL	      "--eal"

enum {
	OPT_JSON_NUM = 256,
	OPT_QUICK_NUM,
	OPT_REPS_NUM,
	OPT_OCCUPANCY_NUM,
	OPT_PRODUCERS_NUM,
	OPT_IMPL_NUM,
	OPT_NO_IDLE_NUM,
	OPT_HELP_NUM,
};

static const struct option long_options[] = {
	{OPT_JSON, no_argument, NULL, OPT_JSON_NUM},
	{OPT_QUICK, no_argument, NULL, OPT_QUICK_NUM},
	{OPT_REPS, required_argument, NULL, OPT_REPS_NUM},
	{OPT_OCCUPANCY, required_argument, NULL, OPT_OCCUPANCY_NUM},
	{OPT_PRODUCERS, required_argument, NULL, OPT_PRODUCERS_NUM},
	{OPT_IMPL, required_argument, NULL, OPT_IMPL_NUM},
	{OPT_NO_IDLE, no_argument, NULL, OPT_NO_IDLE_NUM},
	{OPT_HELP, no_argument, NULL, OPT_HELP_NUM},
	{NULL, 0, NULL, 0},
};

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: %s [options] [" OPT_EAL " EAL-ARGS...]\n"
		"Timing wheel benchmark: insert + drain cost per packet of\n"
		"lib/wheel (hwheel) against a binary heap and a single-level\n"
		"wheel, at steady occupancies, with 1 or 2 producers, and the\n"
		"cost of a dequeue that jumps an idle gap of 2 s.\n\n"
		"  --" OPT_JSON
		"             one JSON object per result line on "
		"stdout\n"
		"                     (the table goes to stderr)\n"
		"  --" OPT_QUICK "            occupancies 1K and 64K, 1 rep, "
		"fewer packets\n"
		"  --" OPT_REPS " N           runs per measurement, median "
		"reported (1..%u, default %u)\n"
		"  --" OPT_OCCUPANCY " LIST   comma-separated occupancies "
		"(64..4194304;\n"
		"                     default 1024,65536,1048576,4194304)\n"
		"  --" OPT_PRODUCERS
		" LIST   1, 2 or 1,2 (default 1,2; 2 needs "
		"a second lcore)\n"
		"  --" OPT_IMPL
		" LIST        hwheel,heap,wheel1,floor (default "
		"all; all but hwheel\n"
		"                     run with P = 1 only; floor is the "
		"harness's own cost:\n"
		"                     a FIFO delay line, table only, not in "
		"the JSON)\n"
		"  --" OPT_NO_IDLE "          skip the idle-gap case\n"
		"  --" OPT_HELP "             this text\n"
		"  " OPT_EAL
		" ...          the rest goes to rte_eal_init() after "
		"the bench's own\n"
		"                     --no-huge -m 2048 --no-pci --no-shconf "
		"--file-prefix=pcr-bench-wheel-<pid>\n"
		"                     -l 0-1 --no-telemetry\n",
		PROG, MAX_REPS, DEFAULT_REPS);
}

static int
parse_uint(const char *s, unsigned long long lo, unsigned long long hi,
	   const char *what, unsigned int *v)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || x < lo ||
	    x > hi) {
		fprintf(stderr,
			PROG ": %s '%s': want an integer in %llu..%llu\n", what,
			s, lo, hi);
		return -1;
	}
	*v = (unsigned int)x;
	return 0;
}

/* Split @arg at commas, call @fn on each item. */
static int
parse_list(const char *arg, struct bench_conf *conf,
	   int (*fn)(struct bench_conf *, const char *))
{
	char buf[256], *tok, *save = NULL;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf)) {
		fprintf(stderr, PROG ": list too long: %s\n", arg);
		return -1;
	}
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save))
		if (fn(conf, tok) != 0)
			return -1;
	return 0;
}

static int
add_occupancy(struct bench_conf *conf, const char *s)
{
	unsigned int v;

	if (conf->n_occupancies == MAX_OCCUPANCIES) {
		fprintf(stderr, PROG ": at most %u occupancies\n",
			MAX_OCCUPANCIES);
		return -1;
	}
	if (parse_uint(s, 64, 1U << 22, "occupancy", &v) != 0)
		return -1;
	conf->occupancies[conf->n_occupancies++] = v;
	return 0;
}

static int
add_producers(struct bench_conf *conf, const char *s)
{
	unsigned int v;

	if (parse_uint(s, 1, 2, "producers", &v) != 0)
		return -1;
	conf->producers[v] = true;
	return 0;
}

static int
add_impl(struct bench_conf *conf, const char *s)
{
	unsigned int i;

	for (i = 0; i < IMPL_MAX; i++)
		if (strcmp(s, impl_names[i]) == 0) {
			conf->impls[i] = true;
			return 0;
		}
	fprintf(stderr,
		PROG ": unknown impl '%s' (hwheel, heap, wheel1, floor)\n", s);
	return -1;
}

static int
parse_args(int argc, char **argv, struct bench_conf *conf)
{
	bool any_p = false, any_impl = false;
	int own_argc = argc, opt, i;

	memset(conf, 0, sizeof(*conf));
	conf->reps = DEFAULT_REPS;
	conf->idle = true;
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], OPT_EAL) == 0) {
			own_argc = i;
			conf->eal_argc = argc - i - 1;
			conf->eal_argv = &argv[i + 1];
			break;
		}

	opterr = 1;
	while ((opt = getopt_long(own_argc, argv, "h", long_options, NULL)) !=
	       -1) {
		switch (opt) {
		case OPT_JSON_NUM:
			conf->json = true;
			break;
		case OPT_QUICK_NUM:
			conf->quick = true;
			break;
		case OPT_REPS_NUM:
			if (parse_uint(optarg, 1, MAX_REPS, "reps",
				       &conf->reps) != 0)
				return -1;
			break;
		case OPT_OCCUPANCY_NUM:
			if (parse_list(optarg, conf, add_occupancy) != 0)
				return -1;
			break;
		case OPT_PRODUCERS_NUM:
			if (parse_list(optarg, conf, add_producers) != 0)
				return -1;
			any_p = true;
			break;
		case OPT_IMPL_NUM:
			if (parse_list(optarg, conf, add_impl) != 0)
				return -1;
			any_impl = true;
			break;
		case OPT_NO_IDLE_NUM:
			conf->idle = false;
			break;
		case 'h':
		case OPT_HELP_NUM:
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < own_argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n",
			argv[optind]);
		usage(stderr);
		return -1;
	}
	if (conf->n_occupancies == 0) {
		if (conf->quick) {
			conf->occupancies[0] = default_occupancies[0];
			conf->occupancies[1] = default_occupancies[1];
			conf->n_occupancies = 2;
		} else {
			memcpy(conf->occupancies, default_occupancies,
			       sizeof(default_occupancies));
			conf->n_occupancies = RTE_DIM(default_occupancies);
		}
	}
	if (conf->quick)
		conf->reps = 1;
	if (!any_p)
		conf->producers[1] = conf->producers[2] = true;
	if (!any_impl)
		for (i = 0; i < IMPL_MAX; i++)
			conf->impls[i] = true;
	return 0;
}

/* --- main ----------------------------------------------------------------- */

static int
eal_start(const char *argv0, const struct bench_conf *conf)
{
	char prefix[64];
	char *eargv[32 + 64];
	int eargc = 0, i, ret;

	snprintf(prefix, sizeof(prefix), "--file-prefix=pcr-bench-wheel-%d",
		 (int)getpid());
	eargv[eargc++] = (char *)(uintptr_t)argv0;
	eargv[eargc++] = (char *)(uintptr_t) "--no-huge";
	eargv[eargc++] = (char *)(uintptr_t) "-m";
	eargv[eargc++] = (char *)(uintptr_t) "2048";
	eargv[eargc++] = (char *)(uintptr_t) "--no-pci";
	eargv[eargc++] = (char *)(uintptr_t) "--no-shconf";
	eargv[eargc++] = prefix;
	eargv[eargc++] = (char *)(uintptr_t) "-l";
	eargv[eargc++] = (char *)(uintptr_t) "0-1";
	eargv[eargc++] = (char *)(uintptr_t) "--no-telemetry";
	if (conf->eal_argc > 64) {
		fprintf(stderr, PROG ": too many EAL arguments\n");
		return -1;
	}
	for (i = 0; i < conf->eal_argc; i++)
		eargv[eargc++] = conf->eal_argv[i];
	eargv[eargc] = NULL;
	ret = rte_eal_init(eargc, eargv);
	if (ret < 0) {
		fprintf(stderr, PROG ": rte_eal_init: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	return 0;
}

/* The pool for the largest occupancy that fits; drops those that don't. */
static int
pool_create(struct bench_env *env, struct bench_conf *conf)
{
	unsigned int i, max = 0;

	for (;;) {
		for (i = 0, max = 0; i < conf->n_occupancies; i++)
			max = RTE_MAX(max, conf->occupancies[i]);
		if (max == 0)
			return -1;
		env->pool_size = max + max / 8 + 8192;
		env->pool = rte_pktmbuf_pool_create(
			"bench_wheel", env->pool_size, 0, 0, 0, SOCKET_ID_ANY);
		if (env->pool != NULL)
			return 0;
		fprintf(stderr,
			PROG ": no memory for %u mbufs (%s): occupancy %u "
			     "skipped\n",
			env->pool_size, rte_strerror(rte_errno), max);
		for (i = 0; i < conf->n_occupancies; i++)
			if (conf->occupancies[i] == max)
				conf->occupancies[i] = 0;
		for (i = 0; i < conf->n_occupancies;)
			if (conf->occupancies[i] == 0) {
				memmove(&conf->occupancies[i],
					&conf->occupancies[i + 1],
					(conf->n_occupancies - i - 1) *
						sizeof(conf->occupancies[0]));
				conf->n_occupancies--;
			} else {
				i++;
			}
	}
}

int
main(int argc, char **argv)
{
	static struct result res[MAX_OCCUPANCIES * IMPL_MAX * 2];
	struct bench_conf conf;
	struct bench_env env;
	double idle[IMPL_MAX];
	unsigned int nres = 0, i, j, p, rep;
	int out_fd;

	if (parse_args(argc, argv, &conf) != 0)
		return 2;

	/*
	 * Results go to the real stdout; everything else printed there (the
	 * EAL logs to stdout) is sent to stderr, so --json output is only
	 * JSON.
	 */
	memset(&env, 0, sizeof(env));
	out_fd = dup(STDOUT_FILENO);
	if (out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0 ||
	    (env.out = fdopen(out_fd, "w")) == NULL) {
		perror(PROG ": redirecting stdout");
		return 1;
	}
	env.table = conf.json ? stderr : env.out;

	if (eal_start(argv[0], &conf) != 0)
		return 1;
	env.tsc_hz = rte_get_tsc_hz();
	env.dyn_off = pcr_wheel_dynfield_register();
	if (env.dyn_off < 0)
		fail("cannot register the departure dynamic field: %s",
		     rte_strerror(rte_errno));
	if (conf.producers[2] && rte_lcore_count() < 2) {
		fprintf(stderr, PROG
			": one lcore only: the 2-producer case is skipped\n");
		conf.producers[2] = false;
	}
	if (pool_create(&env, &conf) != 0)
		fail("cannot create any mbuf pool");
	fprintf(stderr,
		PROG ": %u mbufs of %u bytes each in the pool; %u lcores; "
		     "TSC %.3f GHz\n",
		env.pool_size,
		env.pool->header_size + env.pool->elt_size +
			env.pool->trailer_size,
		rte_lcore_count(), env.tsc_hz / 1e9);

	/* the result slots, in table order */
	for (i = 0; i < conf.n_occupancies; i++)
		for (p = 1; p <= 2; p++)
			for (j = 0; j < IMPL_MAX; j++) {
				if (!conf.producers[p] || !conf.impls[j] ||
				    (p == 2 && j != IMPL_HWHEEL))
					continue;
				res[nres].impl = j;
				res[nres].occupancy = conf.occupancies[i];
				res[nres].producers = p;
				nres++;
			}

	/* reps interleaved, so a slow moment of the machine hits all alike */
	for (i = 0; i < nres; i++) {
		struct result *r = &res[i];

		for (rep = 0; rep < conf.reps; rep++) {
			if (!run_one(&env, &conf, r->impl, r->occupancy,
				     r->producers, rep, &r->rep[r->nrep]))
				break;
			r->nrep++;
		}
		if (r->nrep == conf.reps) {
			double v[MAX_REPS];

			for (rep = 0; rep < r->nrep; rep++)
				v[rep] = r->rep[rep].ns_per_pkt;
			r->median = median_of(v, r->nrep);
			for (rep = 0; rep < r->nrep; rep++)
				v[rep] = r->rep[rep].loop_ns_per_pkt;
			r->median_loop = median_of(v, r->nrep);
			r->done = true;
			fprintf(stderr,
				PROG ": %-6s N=%-8u P=%u %8.2f ns/pkt "
				"(whole loop %.2f)\n",
				impl_names[r->impl], r->occupancy, r->producers,
				r->median, r->median_loop);
		}
	}

	for (j = 0; j < IMPL_MAX; j++)
		idle[j] = -1;
	if (conf.idle)
		for (j = 0; j < IMPL_MAX; j++) {
			double v[MAX_REPS];

			if (j == IMPL_HEAP || j == IMPL_FLOOR || !conf.impls[j])
				continue;
			for (rep = 0; rep < conf.reps; rep++)
				v[rep] = run_idle(&env, j,
						  j == IMPL_HWHEEL
							  ? IDLE_ITERS_HWHEEL
							  : IDLE_ITERS_WHEEL1);
			idle[j] = median_of(v, conf.reps);
			fprintf(stderr, PROG ": %-6s idle gap %12.1f ns/call\n",
				impl_names[j], idle[j]);
		}

	print_table(&env, &conf, res, nres, idle);
	if (conf.json)
		print_json(&env, &conf, res, nres, idle);

	rte_mempool_free(env.pool);
	pcr_test_eal_cleanup();
	return 0;
}
