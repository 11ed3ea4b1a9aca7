/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Unit tests of lib/aqm's CoDel (pcr_codel.h):
 *  - the control law's step, interval / sqrt(count), exact to the unit;
 *  - the state machine against a model written from RFC 8289's
 *    pseudocode (section 5: a FIFO with dodequeue() and dequeue(), its
 *    drop loop, its re-entry rule), over random traces of arrivals and
 *    dequeue times: the packets pcr_codel_judge() signals, presented one
 *    at a time as the model dequeues them, are exactly the packets the
 *    model drops, and the two end in the same state;
 *  - a standing queue's signal times, worked out by hand from the RFC;
 *  - ce_threshold marks what is over it, whatever the state.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pcr_codel.h"

static uint64_t
rnd64(void)
{
	return ((uint64_t)random() << 33) ^ ((uint64_t)random() << 2) ^
	       (uint64_t)random();
}

/* interval / sqrt(count), rounded down: s^2 c <= I^2 < (s+1)^2 c */
static void
test_step(void **state)
{
	unsigned int i;

	(void)state;
	assert_int_equal(pcr_codel_step(100, 1), 100);
	assert_int_equal(pcr_codel_step(100, 4), 50);
	assert_int_equal(pcr_codel_step(100, 2), 70);
	assert_int_equal(pcr_codel_step(100000000, 3), 57735026);
	for (i = 0; i < 200000; i++) {
		uint64_t in = rnd64() >> (rnd64() % 40);
		uint32_t c = (uint32_t)(1 + rnd64() % (i % 2 ? 100 : 1000000));
		uint64_t s = pcr_codel_step(in, c);
		unsigned __int128 i2 = (unsigned __int128)in * in;

		if (c == 1) {
			assert_true(s == in);
			continue;
		}
		assert_true((unsigned __int128)s * s * c <= i2);
		assert_true((unsigned __int128)(s + 1) * (s + 1) * c > i2);
	}
}

/* ------------------------------------------------------------------ */
/* The model: RFC 8289's pseudocode, a queue and all                  */

#define QMAX 4096

struct pkt {
	uint64_t arrival;
	uint32_t bytes;
	uint32_t id;
};

struct fifo {
	struct pkt p[QMAX];
	unsigned int head, n;
	uint64_t bytes;
};

static void
fifo_push(struct fifo *q, struct pkt p)
{
	assert_true(q->n < QMAX);
	q->p[(q->head + q->n++) % QMAX] = p;
	q->bytes += p.bytes;
}

static bool
fifo_pop(struct fifo *q, struct pkt *p)
{
	if (q->n == 0)
		return false;
	*p = q->p[q->head];
	q->head = (q->head + 1) % QMAX;
	q->n--;
	q->bytes -= p->bytes;
	return true;
}

struct rfc {
	struct fifo q;
	uint64_t target, interval, maxpacket;
	uint64_t first_above_time, drop_next;
	uint32_t count, lastcount;
	bool dropping;
	uint32_t dropped[QMAX * 4];
	unsigned int n_dropped;
};

struct dodequeue_result {
	bool have;
	struct pkt p;
	bool ok_to_drop;
};

/* control_law(t, count): t + interval / sqrt(count) */
static uint64_t
rfc_control_law(const struct rfc *m, uint64_t t, uint32_t count)
{
	return t + pcr_codel_step(m->interval, count);
}

static struct dodequeue_result
rfc_dodequeue(struct rfc *m, uint64_t now)
{
	struct dodequeue_result r = { false, { 0, 0, 0 }, false };
	uint64_t sojourn_time;

	r.have = fifo_pop(&m->q, &r.p);
	if (!r.have) {
		/* queue is empty - we can't be above TARGET */
		m->first_above_time = 0;
		return r;
	}
	sojourn_time = now - r.p.arrival;
	if (sojourn_time < m->target || m->q.bytes <= m->maxpacket) {
		/* went below - stay below for at least INTERVAL */
		m->first_above_time = 0;
	} else {
		if (m->first_above_time == 0) {
			/* just went above from below */
			m->first_above_time = now + m->interval;
		} else if (now >= m->first_above_time) {
			r.ok_to_drop = true;
		}
	}
	return r;
}

static void
rfc_drop(struct rfc *m, const struct pkt *p)
{
	m->dropped[m->n_dropped++] = p->id;
}

/* @return whether a packet was returned */
static bool
rfc_dequeue(struct rfc *m, uint64_t now)
{
	struct dodequeue_result r = rfc_dodequeue(m, now);

	if (m->dropping) {
		if (!r.ok_to_drop) {
			/* sojourn time below TARGET - leave drop state */
			m->dropping = false;
		}
		/* Time for the next drop. Drop current packet and dequeue
		 * next. If the dequeue doesn't take us out of dropping
		 * state, schedule the next drop. */
		while (now >= m->drop_next && m->dropping) {
			rfc_drop(m, &r.p);
			++m->count;
			r = rfc_dodequeue(m, now);
			if (!r.ok_to_drop) {
				/* leave drop state */
				m->dropping = false;
			} else {
				/* schedule the next drop. */
				m->drop_next = rfc_control_law(m, m->drop_next, m->count);
			}
		}
	} else if (r.ok_to_drop) {
		uint32_t delta;

		rfc_drop(m, &r.p);
		r = rfc_dodequeue(m, now);
		m->dropping = true;
		/* If min went above TARGET close to when it last went below,
		 * assume that the drop rate that controlled the queue on the
		 * last cycle is a good starting point to control it now (the
		 * Linux version; the time difference taken signed, as Linux's
		 * codel_time_before() does) */
		delta = m->count - m->lastcount;
		m->count = 1;
		if (delta > 1 && (int64_t)(now - m->drop_next) < (int64_t)(16 * m->interval))
			m->count = delta;
		m->drop_next = rfc_control_law(m, now, m->count);
		m->lastcount = m->count;
	}
	return r.have;
}

/* ------------------------------------------------------------------ */
/* The same trace through pcr_codel_judge(), a packet at a time        */

struct mine {
	struct fifo q;
	struct pcr_codel c;
	struct pcr_codel_params p;
	uint32_t dropped[QMAX * 4];
	unsigned int n_dropped;
};

/* One dequeue at @p now: the head packets in turn, each judged, until one
 * passes or the queue is empty (as the model's dequeue() looks at them). */
static void
mine_dequeue(struct mine *x, uint64_t now)
{
	struct pkt p;

	for (;;) {
		if (!fifo_pop(&x->q, &p)) {
			pcr_codel_idle(&x->c);
			return;
		}
		if (!(pcr_codel_judge(&x->c, &x->p, now, now - p.arrival,
				      x->q.bytes) & PCR_CODEL_SIGNAL))
			return;
		x->dropped[x->n_dropped++] = p.id;
	}
}

/*
 * A random trace: packets arriving in bursts and at random, dequeues at
 * random gaps around the arrival rate (the queue builds, stands, drains
 * and goes idle in turn), with TARGET and INTERVAL of a few dozen units,
 * or a few. (One rule the model has cannot be told apart here: the
 * re-entry test's time difference signed, as Linux takes it, or not. A
 * queue re-enters at least an interval after it left, when drop_next is
 * behind it either way.)
 */
static void
run_trace(unsigned int seed, unsigned int *signals, unsigned int *entries)
{
	static struct rfc m;
	static struct mine x;
	uint64_t t = 1000, next_arr = 1000, next_deq = 1000;
	uint32_t id = 0, dq_mean = 1 + (uint32_t)(seed % 7);
	unsigned int ev, lastcount_seen = 0;

	srandom(seed);
	memset(&m, 0, sizeof(m));
	memset(&x, 0, sizeof(x));
	m.target = 5 + random() % 20;
	m.interval = m.target * (2 + random() % 20);
	/* one trace in five with an interval of a few units: the control
	 * law's step reaches 0 once count passes interval^2 (a signal a
	 * packet), where the packet after an entry must still pass */
	if (seed % 5 == 0) {
		m.target = 1 + random() % 2;
		m.interval = m.target * (1 + random() % 3);
	}
	m.maxpacket = 1514;
	x.p.target = m.target;
	x.p.interval = m.interval;
	x.p.mtu_bytes = 1514;
	pcr_codel_init(&x.c);
	for (ev = 0; ev < 20000; ev++) {
		if (next_arr <= next_deq) {
			struct pkt p = { next_arr, 64 + (uint32_t)(random() % 1451), id++ };
			unsigned int b = random() % 50 == 0 ? 1 + random() % 40 : 1;

			t = next_arr;
			while (b-- > 0 && m.q.n < QMAX - 1) {
				fifo_push(&m.q, p);
				fifo_push(&x.q, p);
				p.id = id++;
			}
			next_arr = t + random() % (2 * dq_mean + 2);
			/* now and then, a pause: the queue drains */
			if (random() % 500 == 0)
				next_arr += m.interval * (random() % 40);
		} else {
			t = next_deq;
			rfc_dequeue(&m, t);
			mine_dequeue(&x, t);
			assert_int_equal(m.n_dropped, x.n_dropped);
			if (m.n_dropped > 0)
				assert_int_equal(m.dropped[m.n_dropped - 1],
						 x.dropped[x.n_dropped - 1]);
			next_deq = t + 1 + random() % (2 * dq_mean);
		}
		if (m.lastcount != lastcount_seen) {
			lastcount_seen = m.lastcount;
			++*entries;
		}
		if (m.n_dropped > QMAX * 3) {
			m.n_dropped = x.n_dropped = 0;
		}
	}
	assert_memory_equal(m.dropped, x.dropped, m.n_dropped * sizeof(m.dropped[0]));
	/* the same state at the end */
	assert_int_equal(m.count, x.c.count);
	assert_int_equal(m.lastcount, x.c.lastcount);
	assert_true(m.drop_next == x.c.drop_next);
	assert_true(m.first_above_time == x.c.first_above);
	*signals += m.n_dropped;
}

static void
test_model(void **state)
{
	unsigned int seed, signals = 0, entries = 0;

	(void)state;
	for (seed = 1; seed <= 400; seed++)
		run_trace(seed, &signals, &entries);
	/* the traces exercise the dropping state, not only the start */
	print_message("model: 400 traces, %u signals, %u entries into the dropping state\n",
		      signals, entries);
	assert_true(signals > 10000);
	assert_true(entries > 1000);
}

/*
 * A standing queue: every packet waits 2 x target, one leaves every unit
 * of time, from t = 0. Above target from the first, for an interval at
 * t = interval: the first signal, count 1; then at interval / sqrt(count)
 * after each: interval + 100, + 70, + 57, + 50 (interval 100).
 */
static void
test_standing(void **state)
{
	const struct pcr_codel_params p = { 10, 100, 0, 1514 };
	const uint64_t want[] = { 101, 201, 271, 328, 378, 422 };
	struct pcr_codel c;
	unsigned int k = 0;
	uint64_t t;

	(void)state;
	pcr_codel_init(&c);
	for (t = 1; t <= 425; t++)
		if (pcr_codel_judge(&c, &p, t, 20, 10000) & PCR_CODEL_SIGNAL) {
			assert_true(k < sizeof(want) / sizeof(want[0]));
			assert_int_equal(t, want[k]);
			k++;
		}
	assert_int_equal(k, 6);
	/* below target: out of the dropping state, and no signal */
	assert_int_equal(pcr_codel_judge(&c, &p, 426, 5, 10000), 0);
	assert_int_equal(c.dropping, 0);
	/* a queue of one packet is never above (the RFC's MAXPACKET) */
	pcr_codel_init(&c);
	for (t = 1; t <= 1000; t++)
		assert_int_equal(pcr_codel_judge(&c, &p, t, 50, 1514), 0);
}

/* ce_threshold: every packet over it, in any state; none at or under */
static void
test_ce_threshold(void **state)
{
	const struct pcr_codel_params p = { 10, 100, 3, 1514 };
	struct pcr_codel c;
	uint64_t t;

	(void)state;
	pcr_codel_init(&c);
	for (t = 1; t <= 1000; t++) {
		uint64_t soj = t % 7;
		unsigned int v = pcr_codel_judge(&c, &p, t, soj, 10000);

		assert_int_equal(!!(v & PCR_CODEL_SHALLOW), soj > 3);
		assert_int_equal(v & PCR_CODEL_SIGNAL, 0); /* never above 10 */
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_standing),
		cmocka_unit_test(test_ce_threshold),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
