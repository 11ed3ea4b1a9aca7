/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Unit tests of lib/hist: bucket bounds at every power of two, quantiles
 * against exact ones, and a burst (pcr_hist_burst_*()) leaving the
 * histogram exactly as pcr_hist_add() of each value does.
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pcr_hist.h"

#define DIM(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t
rnd64(void)
{
	return ((uint64_t)random() << 33) ^ ((uint64_t)random() << 2) ^
	       (uint64_t)random();
}

/* Every value falls in the bucket whose bounds hold it; bounds tile. */
static void
test_bounds(void **state)
{
	unsigned int i, b;

	(void)state;
	for (i = 0; i + 1 < PCR_HIST_BUCKETS; i++)
		assert_true(pcr_hist_bucket_upper(i) + 1 ==
			    pcr_hist_bucket_lower(i + 1));
	assert_true(pcr_hist_bucket_upper(PCR_HIST_BUCKETS - 1) == UINT64_MAX);
	for (b = 0; b < 64; b++) {
		uint64_t p = UINT64_C(1) << b;
		uint64_t v[] = { p - 1, p, p + 1, p + p / 2, p | (p - 1) };

		for (i = 0; i < 5; i++) {
			unsigned int x = pcr_hist_index(v[i]);

			assert_true(x < PCR_HIST_BUCKETS);
			assert_true(pcr_hist_bucket_lower(x) <= v[i]);
			assert_true(v[i] <= pcr_hist_bucket_upper(x));
		}
	}
}

/* A quantile is the upper bound of the exact value's bucket, or the max. */
static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
test_quantile(void **state)
{
	static uint64_t v[10000];
	static struct pcr_hist h;
	const uint32_t q[] = { 1, 500000, 990000, 999000, 1000000 };
	unsigned int i;

	(void)state;
	srandom(7);
	pcr_hist_reset(&h);
	assert_true(pcr_hist_quantile(&h, 500000) == 0);
	for (i = 0; i < DIM(v); i++) {
		v[i] = rnd64() >> (random() % 64);
		pcr_hist_add(&h, v[i]);
	}
	qsort(v, DIM(v), sizeof(v[0]), cmp_u64);
	assert_true(h.max == v[DIM(v) - 1]);
	for (i = 0; i < DIM(q); i++) {
		uint64_t rank = ((uint64_t)DIM(v) * q[i] + 999999) /
				1000000;
		uint64_t exact = v[rank == 0 ? 0 : rank - 1];
		uint64_t up = pcr_hist_bucket_upper(pcr_hist_index(exact));

		assert_true(pcr_hist_quantile(&h, q[i]) ==
			    (up < h.max ? up : h.max));
	}
}

/*
 * Bursts of values close together (a TX burst's departure errors), far
 * apart, around powers of two and at the ends of the range: the burst
 * path leaves the histogram byte for byte as the one-by-one path.
 */
static void
test_burst_agrees(void **state)
{
	static struct pcr_hist a, b;
	unsigned int round, i;

	(void)state;
	srandom(11);
	pcr_hist_reset(&a);
	pcr_hist_reset(&b);
	for (round = 0; round < 20000; round++) {
		struct pcr_hist_burst hb;
		unsigned int n = random() % 40;
		uint64_t base = rnd64() >> (random() % 64);
		uint64_t step = rnd64() >> (random() % 64);

		if (random() % 8 == 0)
			base = (UINT64_C(1) << (random() % 64)) - 2;
		pcr_hist_burst_begin(&hb);
		for (i = 0; i < n; i++) {
			uint64_t v;

			switch (random() % 4) {
			case 0:
				v = rnd64() >> (random() % 64);
				break;
			case 1:
				v = UINT64_MAX - random() % 3;
				break;
			default: /* close to the one before */
				v = base - (step >> (random() % 64)) * i;
			}
			pcr_hist_add(&a, v);
			pcr_hist_burst_add(&b, &hb, v);
		}
		pcr_hist_burst_end(&b, &hb);
		if (memcmp(&a, &b, sizeof(a)) != 0)
			fail_msg("round %u: histograms differ", round);
	}
	assert_true(a.count > 100000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_quantile),
		cmocka_unit_test(test_burst_agrees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
