/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer-bench-jitter: how late a perfect pacer would be on this CPU.
 *
 * A busy-polling thread is not always running: interrupts, the kernel's
 * own work and, in a VM, the hypervisor take its CPU away for a while
 * (measured on the 2-vCPU VM these benchmarks run on: about 1200 times a
 * second for 20-50 us, 4 % of the time). A departure that falls due
 * while the thread is away leaves when it is back, however good the
 * pacer. This program spins on one CPU reading the TSC for --secs and
 * records every gap between two reads longer than --min-gap-ns; a
 * departure due at a uniformly random instant is then late by what is
 * left of the gap it falls in, so
 *
 *     P(late > x) = sum over gaps g of max(0, g - x) / T
 *
 * and the floor's percentiles are the x where that equals 1 - q. These
 * are what pacer's departure-error percentiles (TSC at hand-over minus
 * departure) can be compared with: bench/run.sh's accuracy part runs it
 * on the worker's CPU in the same run.
 *
 * Output: one JSON object on stdout:
 *   {"cpu":C,"secs":S,"tsc_hz":F,"gaps":N,"gaps_per_s":R,"lost_pct":L,
 *    "max_gap_ns":M,"floor_p50_ns":..,"floor_p99_ns":..,"floor_p999_ns":..}
 * The TSC frequency is measured against CLOCK_MONOTONIC_RAW over the run.
 *
 * With --peer P it measures instead what one cache line takes to go from
 * CPU --cpu to CPU P and back (two threads taking turns writing it, 1M
 * rounds): the cost of what an RX lcore hands a TX lcore on another CPU
 * (mbufs, ring slots, flow entries). On a VM it says where the host put
 * the two vCPUs: on the 2-vCPU EPYC VM the benchmarks run on, 70-90 ns
 * in some runs and 350-390 ns in others, and pacer's split layout ran at
 * 13.6 and 6.8-7.7 Mpps with them (docs/BENCHMARKS.md). Output:
 *   {"cpu":C,"peer":P,"rounds":N,"line_rtt_ns":X}
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#include "pcr_tool.h"

#define PROG "pacer-bench-jitter"

const char pcr_tool_name[] = PROG;

static double
raw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int
cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* The x (cycles) where sum(max(0, g - x)) = tail * total; gaps sorted
 * largest first. 0 when the gaps cover less than that. */
static double
floor_quantile(const uint64_t *g, size_t n, double total, double tail)
{
	double want = tail * total, sum = 0;
	size_t k;

	/* with the k largest gaps above x: sum_{i<k} g_i - k x = want */
	for (k = 1; k <= n; k++) {
		double x;

		sum += (double)g[k - 1];
		x = (sum - want) / (double)k;
		if (k == n || x >= (double)g[k])
			return x > 0 ? x : 0;
	}
	return 0;
}

/* --peer: the word, alone on its line, the two threads take turns on,
 * and its rounds */
static volatile uint64_t pp_word __attribute__((aligned(64)));
#define PP_ROUNDS 1000000u

static int
pin(long cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static void *
pp_peer(void *arg)
{
	uint64_t i;

	if (pin((long)(intptr_t)arg) != 0)
		return (void *)(intptr_t)errno;
	for (i = 1; i <= PP_ROUNDS; i++) {
		while (pp_word != 2 * i - 1)
			_mm_pause();
		pp_word = 2 * i;
	}
	return NULL;
}

/* The line's round trip between @p cpu (this thread, pinned already) and
 * @p peer, printed as JSON. */
static int
line_rtt(long cpu, long peer)
{
	pthread_t t;
	double r0, r1;
	void *ret;
	uint64_t i;
	int rc;

	pp_word = 0;
	rc = pthread_create(&t, NULL, pp_peer, (void *)(intptr_t)peer);
	if (rc != 0)
		fail(1, "pthread_create: %s", strerror(rc));
	r0 = raw_now();
	for (i = 1; i <= PP_ROUNDS; i++) {
		pp_word = 2 * i - 1;
		while (pp_word != 2 * i)
			_mm_pause();
	}
	r1 = raw_now();
	pthread_join(t, &ret);
	if (ret != NULL)
		fail(EXIT_USAGE, "--peer %ld: %s", peer, strerror((int)(intptr_t)ret));
	printf("{\"cpu\":%ld,\"peer\":%ld,\"rounds\":%u,\"line_rtt_ns\":%.1f}\n",
	       cpu, peer, PP_ROUNDS, (r1 - r0) * 1e9 / PP_ROUNDS);
	return 0;
}

static void
usage(int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: " PROG " [--cpu N] [--secs S] [--min-gap-ns NS] [--peer P]\n"
		"Spins on CPU N (default: the last) for S seconds (3) and prints, as\n"
		"one JSON object, the gaps in its run longer than NS (500) and the\n"
		"departure-error percentiles a perfect pacer would have on that CPU.\n"
		"With --peer P: a cache line's round trip between CPUs N and P instead.\n");
	exit(rc);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"cpu", required_argument, NULL, 'c'},
		{"secs", required_argument, NULL, 's'},
		{"min-gap-ns", required_argument, NULL, 'g'},
		{"peer", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long cpu = -1, peer = -1;
	double secs = 3, min_gap_ns = 500, hz, r0, r1, total;
	uint64_t *gaps, t0, prev, end, min_gap, lost = 0, maxg = 0;
	size_t n = 0, cap = 1 << 20;
	cpu_set_t set;
	int o;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'c':
			cpu = (long)parse_u64("--cpu", optarg, 0, CPU_SETSIZE - 1);
			break;
		case 's':
			secs = parse_double("--secs", optarg, 0.1, 600);
			break;
		case 'g':
			min_gap_ns = parse_double("--min-gap-ns", optarg, 50, 1e6);
			break;
		case 'p':
			peer = (long)parse_u64("--peer", optarg, 0, CPU_SETSIZE - 1);
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (optind != argc)
		usage(2);
	if (cpu < 0) {
		if (sched_getaffinity(0, sizeof(set), &set) != 0) {
			perror(PROG ": sched_getaffinity");
			return 1;
		}
		for (o = CPU_SETSIZE - 1; o >= 0 && !CPU_ISSET(o, &set); o--)
			;
		cpu = o;
	}
	if (pin(cpu) != 0)
		fail(EXIT_USAGE, "--cpu %ld: %s", cpu, strerror(errno));
	if (peer >= 0) {
		if (peer == cpu)
			fail(EXIT_USAGE, "--peer %ld: the same CPU as --cpu", peer);
		return line_rtt(cpu, peer);
	}
	gaps = malloc(cap * sizeof(*gaps));
	if (gaps == NULL)
		fail(1, "out of memory");
	/* the TSC's rate, roughly, to size the run and the threshold */
	r0 = raw_now();
	t0 = __rdtsc();
	while (raw_now() - r0 < 0.05)
		;
	hz = (double)(__rdtsc() - t0) / (raw_now() - r0);
	min_gap = (uint64_t)(min_gap_ns * hz / 1e9);

	r0 = raw_now();
	t0 = prev = __rdtsc();
	end = t0 + (uint64_t)(secs * hz);
	while (prev < end) {
		uint64_t t = __rdtsc(), g = t - prev;

		if (g > min_gap) {
			if (n == cap) {
				uint64_t *m = realloc(gaps, 2 * cap * sizeof(*gaps));

				if (m == NULL)
					fail(1, "out of memory");
				gaps = m;
				cap *= 2;
			}
			gaps[n++] = g;
			lost += g;
			if (g > maxg)
				maxg = g;
		}
		prev = t;
	}
	r1 = raw_now();
	hz = (double)(prev - t0) / (r1 - r0);
	total = (double)(prev - t0);
	qsort(gaps, n, sizeof(*gaps), cmp_desc);
	printf("{\"cpu\":%ld,\"secs\":%.3f,\"tsc_hz\":%.0f,\"gaps\":%zu,\"gaps_per_s\":%.1f,"
	       "\"lost_pct\":%.3f,\"max_gap_ns\":%.0f,\"floor_p50_ns\":%.0f,"
	       "\"floor_p99_ns\":%.0f,\"floor_p999_ns\":%.0f}\n",
	       cpu, r1 - r0, hz, n, n / (r1 - r0), lost * 100.0 / total, maxg * 1e9 / hz,
	       floor_quantile(gaps, n, total, 0.5) * 1e9 / hz,
	       floor_quantile(gaps, n, total, 0.01) * 1e9 / hz,
	       floor_quantile(gaps, n, total, 0.001) * 1e9 / hz);
	free(gaps);
	return 0;
}
