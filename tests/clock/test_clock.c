/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * lib/clock against clocks the test knows. The raw reads are replaced at
 * link time (-Wl,--wrap, see meson.build): pcr_clock_src_tsc(),
 * pcr_clock_src_mono_ns(), pcr_clock_src_sleep_ns(), rte_get_tsc_hz() and
 * rte_eth_read_clock() all read one simulated "true" time, which every
 * read advances by what a real read costs, plus jitter and now and then a
 * preemption in the middle of a bracket. No EAL is started.
 */

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define DIM(a) ((unsigned int)(sizeof(a) / sizeof((a)[0])))
#define MAX_PORTS 32 /* RTE_MAX_ETHPORTS */

#include "pcr_clock.h"

/* ------------------------------------------------------------------ */
/* The simulated machine                                               */

static struct {
	double ns;            /* true time */
	uint64_t rng;
	/* TSC: piecewise linear, so a test can change its rate (drift) */
	double tsc_base, tsc_base_ns, tsc_hz;
	uint64_t eal_hz;
	/* NIC */
	int nic_rc;
	unsigned int nic_bits;
	uint64_t nic_base;    /* counter value at nic_base_ns, unwrapped */
	double nic_base_ns, nic_rate; /* ticks per ns */
	double nic_bias;      /* added to reads while set (stale reads) */
	double preempt_p;     /* chance a monotonic read is preempted */
	uint64_t reads;
} sim;

static uint64_t
rnd(void)
{
	sim.rng ^= sim.rng << 13;
	sim.rng ^= sim.rng >> 7;
	sim.rng ^= sim.rng << 17;
	return sim.rng;
}

static double
urand(void)
{
	return (double)(rnd() >> 11) / (double)(1ull << 53);
}

static double
tsc_at(double ns)
{
	return sim.tsc_base + (ns - sim.tsc_base_ns) * sim.tsc_hz / 1e9;
}

uint64_t __wrap_pcr_clock_src_tsc(void);
uint64_t __wrap_pcr_clock_src_mono_ns(void);
void __wrap_pcr_clock_src_sleep_ns(uint64_t ns);
uint64_t __wrap_rte_get_tsc_hz(void);
int __wrap_rte_eth_read_clock(uint16_t port, uint64_t *clock);

uint64_t
__wrap_pcr_clock_src_tsc(void)
{
	sim.ns += 8 + 4 * urand();
	return (uint64_t)tsc_at(sim.ns);
}

uint64_t
__wrap_pcr_clock_src_mono_ns(void)
{
	double v;

	sim.reads++;
	sim.ns += 20 + 10 * urand();
	v = sim.ns;
	if (urand() < sim.preempt_p)
		sim.ns += 20000 + 30000 * urand(); /* a preemption after the read */
	sim.ns += 20 + 10 * urand();
	return (uint64_t)v;
}

void
__wrap_pcr_clock_src_sleep_ns(uint64_t ns)
{
	sim.ns += (double)ns + 50000 * urand(); /* sleeps overshoot */
}

uint64_t
__wrap_rte_get_tsc_hz(void)
{
	return sim.eal_hz;
}

int
__wrap_rte_eth_read_clock(uint16_t port, uint64_t *clock)
{
	uint64_t v;

	(void)port;
	if (sim.nic_rc != 0)
		return sim.nic_rc;
	sim.ns += 100 + 100 * urand(); /* a PCI read */
	v = sim.nic_base + (uint64_t)llround((sim.ns - sim.nic_base_ns) *
					      sim.nic_rate + sim.nic_bias);
	sim.ns += 100 + 100 * urand();
	if (urand() < sim.preempt_p)
		sim.ns += 20000 + 30000 * urand();
	/* the counter keeps its low bits: modulo 2^bits */
	*clock = sim.nic_bits == 64 ? v : v & ((1ull << sim.nic_bits) - 1);
	return 0;
}

/* NIC ticks since nic_base at true time @p ns. */
static double
nic_delta(double ns)
{
	return (ns - sim.nic_base_ns) * sim.nic_rate;
}

static void
sim_reset(uint64_t seed, uint64_t eal_hz, double ppm)
{
	const char *e = getenv("PCR_CLOCK_TEST_SEED"); /* to explore */

	memset(&sim, 0, sizeof(sim));
	sim.rng = seed * 0x9e3779b97f4a7c15ull ^ (e != NULL ? strtoull(e, NULL, 0) : 0);
	if (sim.rng == 0)
		sim.rng = 1;
	sim.ns = 1e12; /* the machine has been up a while */
	sim.eal_hz = eal_hz;
	sim.tsc_hz = (double)eal_hz * (1 + ppm * 1e-6);
	sim.tsc_base = 4e15;
	sim.tsc_base_ns = sim.ns;
	sim.nic_bits = 64;
	sim.nic_rate = 1.0;
	sim.nic_base_ns = sim.ns;
	sim.preempt_p = 0.05;
	pcr_clock_fini();
}

static double
ppm_off(double measured, double truth)
{
	return (measured - truth) / truth * 1e6;
}

/* ------------------------------------------------------------------ */
/* The fit alone                                                       */

static void
test_fit_exact(void **state)
{
	struct pcr_clock_sample s[20];
	struct pcr_clock_line l;
	unsigned int i;

	(void)state;
	for (i = 0; i < DIM(s); i++) {
		s[i].x = UINT64_MAX - 5000000 + i * 1000000ull; /* wraps */
		s[i].y = 123456789 + 3 * (uint64_t)i * 1000000ull;
		s[i].width = 0;
	}
	assert_int_equal(pcr_clock_fit(s, DIM(s), 1.0, &l), 0);
	assert_true(fabs(l.slope - 3.0) < 1e-12);
	assert_int_equal(l.rejected, 0);
	assert_true(l.rms < 1e-6);
	assert_int_equal(pcr_clock_line_y(&l, s[7].x), s[7].y);
	assert_int_equal(pcr_clock_line_y(&l, s[19].x + 500000), s[19].y + 1500000);
}

static void
test_fit_noisy_outliers(void **state)
{
	struct pcr_clock_sample s[64];
	struct pcr_clock_line l;
	const double slope = 0.384615 * (1 + 37e-6);
	unsigned int i, outliers = 0;

	(void)state;
	sim.rng = 42;
	for (i = 0; i < DIM(s); i++) {
		double x = 1e9 * i + 1000 * urand();
		double y = 5e12 + slope * x + 40 * (urand() - 0.5);

		if (i % 9 == 4) {
			y += 20000 + 10000 * urand(); /* a read 50 us stale */
			outliers++;
		}
		s[i].x = (uint64_t)(7e15 + x);
		s[i].y = (uint64_t)y;
		s[i].width = 0;
	}
	assert_int_equal(pcr_clock_fit(s, DIM(s), 2.0, &l), 0);
	assert_true(fabs(ppm_off(l.slope, slope)) < 1.0);
	assert_int_equal(l.rejected, outliers);
	assert_true(l.rms < 20);
	assert_int_equal(l.used + l.rejected, DIM(s));
}

static void
test_fit_degenerate(void **state)
{
	struct pcr_clock_sample s[3] = {
		{ .x = 5, .y = 1 }, { .x = 5, .y = 2 }, { .x = 5, .y = 3 },
	};
	struct pcr_clock_line l;

	(void)state;
	assert_int_equal(pcr_clock_fit(s, 1, 1.0, &l), -EINVAL);
	assert_int_equal(pcr_clock_fit(s, 3, 1.0, &l), -EINVAL);
	assert_int_equal(pcr_clock_fit(s, PCR_CLOCK_WINDOW_MAX + 1, 1.0, &l),
			 -EINVAL);
}

/* ------------------------------------------------------------------ */
/* The TSC                                                             */

static void
test_tsc_500ppm(void **state)
{
	struct pcr_clock_info in;
	double t0;

	(void)state;
	sim_reset(7, 2500000000u, 500);
	t0 = sim.ns;
	assert_int_equal(pcr_clock_init(NULL), 0);
	/* the start-up measurement takes its window, not much more */
	assert_true(sim.ns - t0 >= 100e6 && sim.ns - t0 < 160e6);
	assert_true(fabs(ppm_off((double)pcr_clock_tsc_hz(), sim.tsc_hz)) < 10);
	assert_int_equal(pcr_clock_tsc_hz_eal(), 2500000000u);
	assert_true(fabs(pcr_clock_tsc_ppm() - 500) < 10);
	pcr_clock_info_get(&in);
	assert_int_equal(in.samples, 16);
	assert_true(in.span_ns >= 99000000u);
	/* conversions use the measured figure */
	assert_true(llabs((long long)pcr_clock_ns_to_cycles(1000000000u) -
			  (long long)sim.tsc_hz) < 25000);
	assert_int_equal(pcr_clock_cycles_to_ns(pcr_clock_tsc_hz()), 1000000000u);
}

static void
test_tsc_params(void **state)
{
	struct pcr_clock_params p;

	(void)state;
	sim_reset(8, 2500000000u, -200);
	pcr_clock_params_default(&p);
	p.calib_ms = 5;
	assert_int_equal(pcr_clock_init(&p), -EINVAL);
	p.calib_ms = 20;
	p.window = 8;
	assert_int_equal(pcr_clock_init(&p), -EINVAL);
	p.window = 64;
	assert_int_equal(pcr_clock_init(&p), 0);
	/* 20 ms with these reads still lands within 10 ppm */
	assert_true(fabs(ppm_off((double)pcr_clock_tsc_hz(), sim.tsc_hz)) < 10);
	sim.eal_hz = 0;
	assert_int_equal(pcr_clock_init(NULL), -ENODEV);
}

/* use_eal: measured and reported, but the EAL's figure is what rates use. */
static void
test_tsc_use_eal(void **state)
{
	struct pcr_clock_params p;
	unsigned int i;

	(void)state;
	sim_reset(15, 2500000000u, 500);
	pcr_clock_params_default(&p);
	p.use_eal = true;
	assert_int_equal(pcr_clock_init(&p), 0);
	assert_int_equal(pcr_clock_tsc_hz(), 2500000000u);
	assert_true(fabs(pcr_clock_tsc_ppm() - 500) < 10);
	for (i = 0; i < 5; i++) {
		sim.ns += 1e9;
		assert_false(pcr_clock_poll());
	}
	assert_int_equal(pcr_clock_tsc_hz(), 2500000000u);
	assert_true(fabs(pcr_clock_tsc_ppm() - 500) < 1);
}

/* Not believed: a measurement 20 % from the EAL keeps the EAL's figure. */
static void
test_tsc_insane(void **state)
{
	(void)state;
	sim_reset(9, 2000000000u, 200000);
	assert_int_equal(pcr_clock_init(NULL), 0);
	assert_int_equal(pcr_clock_tsc_hz(), 2000000000u);
	assert_true(fabs(pcr_clock_tsc_ppm()) < 1e-9);
}

/* Periodic re-measure: refines, then follows the TSC when it drifts. */
static void
test_tsc_tracks_drift(void **state)
{
	struct pcr_clock_info in;
	unsigned int i, republished = 0;
	uint64_t before;

	(void)state;
	sim_reset(10, 3000000000u, 120);
	assert_int_equal(pcr_clock_init(NULL), 0);
	/* nothing due before a period has passed */
	assert_false(pcr_clock_poll());
	for (i = 0; i < 30; i++) {
		sim.ns += 1e9;
		republished += pcr_clock_poll();
	}
	/* 30 s of baseline: far better than 10 ppm */
	assert_true(fabs(ppm_off((double)pcr_clock_tsc_hz(), sim.tsc_hz)) < 0.2);
	before = pcr_clock_tsc_hz();

	/* the TSC now runs 40 ppm faster (a VM migrated, a PLL retuned) */
	sim.tsc_base = tsc_at(sim.ns);
	sim.tsc_base_ns = sim.ns;
	sim.tsc_hz *= 1 + 40e-6;
	republished = 0;
	for (i = 0; i < PCR_CLOCK_WINDOW_DEFAULT + 2; i++) {
		sim.ns += 1e9;
		republished += pcr_clock_poll();
	}
	assert_true(republished > 0);
	assert_true(fabs(ppm_off((double)pcr_clock_tsc_hz(), sim.tsc_hz)) < 0.2);
	assert_true(fabs(ppm_off((double)pcr_clock_tsc_hz(), (double)before) - 40) < 0.5);
	pcr_clock_info_get(&in);
	assert_int_equal(in.samples, PCR_CLOCK_WINDOW_DEFAULT);
	assert_true(in.updates >= republished);
	assert_true(in.span_ns > 60e9);
}

/* ------------------------------------------------------------------ */
/* NIC clocks                                                          */

/*
 * The fit's slope is within @p ppm of the truth, and it converts both ways
 * within @p tol_ns of the truth from now to @p ahead_ns ahead. (A NIC read
 * here takes 200-400 ns between its two TSC reads; its midpoint is the
 * estimate, so a few tens of ns is what pairing can resolve.)
 */
static void
check_nic(uint16_t port, double tol_ns, double ppm, double ahead_ns)
{
	/* an error of ppm in the slope grows with the distance ahead */
	double tol = (tol_ns + ppm * 1e-6 * ahead_ns) * sim.nic_rate;
	struct pcr_clock_nic_info in;
	double ns, ticks_per_cycle = sim.nic_rate * 1e9 / sim.tsc_hz;
	uint64_t mask = sim.nic_bits == 64 ? UINT64_MAX :
					     (1ull << sim.nic_bits) - 1;
	int k;

	assert_true(pcr_clock_nic_valid(port));
	assert_int_equal(pcr_clock_nic_info_get(port, &in), 0);
	assert_true(in.enabled && in.valid);
	assert_true(fabs(ppm_off(in.ticks_per_cycle, ticks_per_cycle)) < ppm);
	for (k = 0; k <= 4; k++) {
		uint64_t tsc, want, got, back;

		ns = sim.ns + k * ahead_ns / 4;
		tsc = (uint64_t)tsc_at(ns);
		want = (sim.nic_base + (uint64_t)llround(nic_delta(ns))) & mask;
		got = pcr_clock_tsc_to_nic(port, tsc);
		assert_true(got <= mask);
		/* signed difference modulo the counter width */
		assert_true(fabs((double)(int64_t)((got - want) << (64 - sim.nic_bits)) /
				 ldexp(1.0, 64 - (int)sim.nic_bits)) <= tol);
		back = pcr_clock_nic_to_tsc(port, want);
		assert_true(fabs((double)(int64_t)(back - tsc)) <=
			    tol / ticks_per_cycle + 1);
	}
}

static void
test_nic_64bit_wrap(void **state)
{
	unsigned int i;

	(void)state;
	sim_reset(11, 2500000000u, -35);
	sim.nic_rate = 1.0 * (1 + 12.3e-6); /* a 1 GHz clock, 12.3 ppm fast */
	sim.nic_base = UINT64_MAX - 3000000000u; /* wraps 3 s from now */
	assert_int_equal(pcr_clock_init(NULL), 0);
	assert_int_equal(pcr_clock_nic_enable(0, 64), 0);
	/* 4 ms of start-up samples only: a rough slope, exact near now */
	check_nic(0, 50, 100, 1e5);
	for (i = 0; i < 6; i++) {
		sim.ns += 1e9;
		pcr_clock_poll();
	}
	/* across the wrap of the 64-bit counter */
	assert_true(nic_delta(sim.ns) > 3e9);
	/* refined: within 1 ppm; 2 s ahead (offload horizons are far shorter) */
	check_nic(0, 50, 1, 1e7);
}

static void
test_nic_32bit_wrap(void **state)
{
	struct pcr_clock_nic_info in;
	unsigned int i;

	(void)state;
	sim_reset(12, 2000000000u, 80);
	sim.nic_bits = 32;
	sim.nic_rate = 0.15625 * (1 - 7e-6); /* 156.25 MHz, 7 ppm slow */
	sim.nic_base = UINT32_MAX - 100000000u;
	assert_int_equal(pcr_clock_init(NULL), 0);
	assert_int_equal(pcr_clock_nic_enable(3, 32), 0);
	check_nic(3, 50, 100, 1e5);
	/* 60 s: the counter wraps every 27.5 s at this rate */
	for (i = 0; i < 60; i++) {
		sim.ns += 1e9;
		pcr_clock_poll();
	}
	assert_true(nic_delta(sim.ns) > 2 * 4294967296.0);
	check_nic(3, 50, 1, 1e7);
	assert_int_equal(pcr_clock_nic_info_get(3, &in), 0);
	assert_int_equal(in.bits, 32);
	assert_true(fabs(ppm_off(in.nic_hz, 156.25e6 * (1 - 7e-6))) < 1.0);
	assert_true(in.rms_ns < 100);
}

/* Whole samples gone wrong (every try of them) are left out of the fit. */
static void
test_nic_outliers(void **state)
{
	struct pcr_clock_nic_info in;
	unsigned int i, bad = 0;

	(void)state;
	sim_reset(13, 2500000000u, 0);
	assert_int_equal(pcr_clock_init(NULL), 0);
	assert_int_equal(pcr_clock_nic_enable(1, 64), 0);
	for (i = 0; i < 40; i++) {
		sim.ns += 1e9;
		sim.nic_bias = i % 7 == 3 ? 30000 : 0; /* a 30 us stale register */
		bad += sim.nic_bias != 0 && i >= 40 - 32; /* still in the window */
		pcr_clock_poll();
	}
	sim.nic_bias = 0;
	assert_int_equal(pcr_clock_nic_info_get(1, &in), 0);
	assert_int_equal(in.rejected, bad);
	check_nic(1, 50, 1, 1e7);
}

static void
test_nic_unsupported(void **state)
{
	struct pcr_clock_nic_info in;

	(void)state;
	sim_reset(14, 2500000000u, 0);
	assert_int_equal(pcr_clock_init(NULL), 0);
	sim.nic_rc = -ENOTSUP;
	assert_int_equal(pcr_clock_nic_enable(0, 64), -ENOTSUP);
	assert_false(pcr_clock_nic_valid(0));
	assert_int_equal(pcr_clock_tsc_to_nic(0, 12345), 0);
	assert_int_equal(pcr_clock_nic_info_get(0, &in), 0);
	assert_false(in.enabled);
	assert_int_equal(pcr_clock_nic_enable(0, 0), -EINVAL);
	assert_int_equal(pcr_clock_nic_enable(0, 65), -EINVAL);
	assert_int_equal(pcr_clock_nic_enable(RTE_MAX_ETHPORTS, 64), -EINVAL);
	assert_false(pcr_clock_nic_valid(MAX_PORTS));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_exact),
		cmocka_unit_test(test_fit_noisy_outliers),
		cmocka_unit_test(test_fit_degenerate),
		cmocka_unit_test(test_tsc_500ppm),
		cmocka_unit_test(test_tsc_params),
		cmocka_unit_test(test_tsc_use_eal),
		cmocka_unit_test(test_tsc_insane),
		cmocka_unit_test(test_tsc_tracks_drift),
		cmocka_unit_test(test_nic_64bit_wrap),
		cmocka_unit_test(test_nic_32bit_wrap),
		cmocka_unit_test(test_nic_outliers),
		cmocka_unit_test(test_nic_unsupported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
