/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The adaptive staging lead (lib/policy/pcr_lead.h): the lead each window's
 * gaps choose, checked against the stall time computed gap by gap, and the
 * rise and fall rules. Times are in nanoseconds here (one cycle a ns).
 */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pcr_lead.h"

#define FLOOR 20000u    /* 20 us */
#define CAP 500000u     /* 500 us */
#define WIN 100000000u  /* 100 ms */

/* Feed @p n gaps of @p gap ns spread over one window, then close it. */
static uint64_t
window(struct pcr_lead *l, uint64_t *now, const uint64_t *gaps, unsigned int n)
{
	uint64_t start = *now;
	unsigned int i;

	for (i = 0; i < n; i++)
		pcr_lead_note(l, gaps[i], start + (uint64_t)i * (WIN / (n + 1)));
	*now = start + WIN;
	return pcr_lead_note(l, 0, *now);
}

/* Six quiet windows: from the cap (500 us) down by halves to the floor. */
static void
quiet_to_floor(struct pcr_lead *l, uint64_t *now)
{
	unsigned int i;

	for (i = 0; i < 6; i++)
		window(l, now, NULL, 0);
	assert_int_equal(l->tsc, FLOOR);
}

/* Nothing above the floor: down by half a window to the floor, no lower. */
static void
test_quiet(void **state)
{
	static const uint64_t want[] = { 250000, 125000, 62500, 31250, FLOOR, FLOOR };
	struct pcr_lead l;
	uint64_t now = 1000;
	unsigned int i;

	(void)state;
	pcr_lead_init(&l, FLOOR, CAP, WIN, now);
	assert_int_equal(l.tsc, CAP);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(window(&l, &now, NULL, 0), want[i]);
}

/* A loop that comes back every 100 us: the lead settles at the first
 * quarter-octave edge that covers every gap, no stall left. */
static void
test_steady(void **state)
{
	static uint64_t gaps[1000];
	struct pcr_lead l;
	uint64_t now = 0, lead = 0;
	unsigned int i;

	(void)state;
	for (i = 0; i < 1000; i++)
		gaps[i] = 100000;
	pcr_lead_init(&l, FLOOR, CAP, WIN, now);
	for (i = 0; i < 5; i++)
		lead = window(&l, &now, gaps, 1000);
	assert_true(lead >= 100000);
	assert_true(lead <= 100000 * 119 / 100); /* 2^(1/4) */
	assert_int_equal(lead, 7u << 14);
}

/* One gap past the cap (a descheduled lcore; and one of a second, past
 * the last bin) in an otherwise quiet window: covering it is impossible,
 * but a lead short of the cap would add the difference to the stall: the
 * lead goes back to the cap at once. */
static void
test_long_gap(void **state)
{
	uint64_t g[2] = { 2000000, 1000000000 }, now = 0;
	struct pcr_lead l;

	(void)state;
	pcr_lead_init(&l, FLOOR, CAP, WIN, now);
	quiet_to_floor(&l, &now);
	assert_int_equal(window(&l, &now, g, 1), CAP);
	quiet_to_floor(&l, &now);
	assert_int_equal(window(&l, &now, g + 1, 1), CAP);
}

/* Within a window a gap longer than the lead raises it at once (at most to
 * the cap); a shorter one leaves it; the window's end chooses again. */
static void
test_raise(void **state)
{
	uint64_t now = 0;
	struct pcr_lead l;

	(void)state;
	pcr_lead_init(&l, FLOOR, CAP, WIN, now);
	quiet_to_floor(&l, &now);
	assert_int_equal(pcr_lead_note(&l, 300000, now + 1000), 300000);
	assert_int_equal(pcr_lead_note(&l, 100000, now + 2000), 300000);
	assert_int_equal(pcr_lead_note(&l, 3000000, now + 3000), CAP);
	/* 300 us and 100 us lost at a lead of 100 us: 200 us, over the
	 * budget; at the 3 ms gap, any lead short of the cap loses more than
	 * the cap's: the cap */
	now += WIN;
	assert_int_equal(pcr_lead_note(&l, 0, now), CAP);
}

/* The floor at or above the cap fixes the lead at the cap. */
static void
test_fixed(void **state)
{
	uint64_t g[3] = { 1000000, 30000, 600000 }, now = 0;
	struct pcr_lead l;
	unsigned int i;

	(void)state;
	pcr_lead_init(&l, CAP, CAP, WIN, now);
	for (i = 0; i < 4; i++)
		assert_int_equal(window(&l, &now, g, i % 2 ? 3 : 0), CAP);
	pcr_lead_init(&l, 2 * CAP, CAP, WIN, now);
	assert_int_equal(window(&l, &now, NULL, 0), CAP);
}

/* The stall time a lead h gives the gaps, computed gap by gap. */
static uint64_t
loss(const uint64_t *g, unsigned int n, uint64_t h)
{
	uint64_t s = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (g[i] > h)
			s += g[i] - h;
	return s;
}

/* Random windows (0-400 gaps, log-uniform from 1 us to a longest drawn
 * log-uniform from 30 us to 5 ms,
 * starting each window at the floor so the choice is not held back): the
 * lead is the shortest candidate (the floor or a quarter-octave edge under
 * the cap; else the cap) whose stall time, computed here gap by gap, is
 * within the budget. */
static void
test_choice(void **state)
{
	static uint64_t g[400];
	uint64_t now = 0, budget = WIN / PCR_LEAD_BUDGET;
	struct pcr_lead l;
	unsigned int w, i, q, below = 0;

	(void)state;
	srand(18);
	pcr_lead_init(&l, FLOOR, CAP, WIN, now);
	for (w = 0; w < 2000; w++) {
		unsigned int n = (unsigned int)rand() % 400;
		double hi = 30.0 * pow(5000.0 / 30, rand() / (double)RAND_MAX);
		uint64_t lead, want = CAP;

		for (i = 0; i < n; i++)
			g[i] = (uint64_t)(1000.0 * pow(hi, rand() / (double)RAND_MAX));
		l.tsc = l.chosen = FLOOR;
		lead = window(&l, &now, g, n);
		if (loss(g, n, FLOOR) <= budget) {
			want = FLOOR;
		} else {
			for (q = pcr_lead_qo(FLOOR) + 1;; q++) {
				uint64_t h = (uint64_t)(4 + q % 4) << (q / 4 - 2);

				if (h >= CAP)
					break;
				if (loss(g, n, h) <= budget) {
					want = h;
					break;
				}
			}
		}
		assert_int_equal(lead, want);
		below += want < CAP;
	}
	/* the draw gave both ends a fair share */
	assert_true(below > 100 && below < 1900);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_steady),
		cmocka_unit_test(test_long_gap),
		cmocka_unit_test(test_raise),
		cmocka_unit_test(test_fixed),
		cmocka_unit_test(test_choice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
