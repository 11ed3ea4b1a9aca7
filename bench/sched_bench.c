/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer-bench-sched: what one packet costs to go through DPDK's rte_sched
 * (enqueue + dequeue) against pacer's own path (policy stamp + wheel
 * enqueue + wheel dequeue), ns per packet, at 1K, 16K and 64K flows.
 *
 * rte_sched as the nearest equivalent of a pacer port: one port, one
 * subport at the aggregate rate, one pipe per flow with the per-flow rate
 * (2x its share of the aggregate, as bench/run.sh sets pacer's
 * --flow-rate), every packet in the best-effort traffic class, queue 0,
 * green; queues of 16 packets; no RED/PIE.
 *
 * pacer: lib/policy's stamping rule, pcr_stamp(): the per-flow bucket
 * (private) and the shared aggregate's bandwidth calendar (pcr_cal.h, its
 * one writer: as pacer with one worker, which also does all its TX), the
 * packet placed where both allow and charged there; then
 * lib/wheel's pcr_wheel_enqueue_burst() and
 * pcr_wheel_dequeue_burst(): what pacer's RX and TX loops do per packet,
 * without the classifier and the flow table (pacer-bench-sched measures
 * the scheduler; bench/run.sh measures the whole appliance).
 *
 * Workload, both alike: packets of 64 bytes, flows round-robin; a backlog
 * of DEPTH (4) packets per flow is queued first, then each step enqueues a
 * burst of 32 and dequeues what leaves (32), so DEPTH x N packets stay
 * queued and every pipe/flow has packets waiting. Timed: real TSC around
 * the calls, one interval per step on each side
 * (rte_sched_port_pkt_write + enqueue + dequeue; policy stamps + wheel
 * enqueue + dequeue until a burst comes out short), per packet dequeued,
 * after an untimed warm-up; the harness's own work (taking and giving
 * back mbufs, the checks) is outside it on both sides.
 *
 * Clocks, and why they differ. rte_sched reads the TSC itself (no way to
 * hand it a clock), so it runs in real time; its rates (100 Gbit/s port
 * and subport) are far above what one core schedules, so its credits never
 * hold a packet back: every dequeue finds 32 packets eligible, its
 * cheapest regime (saturation: the CPU, not the rate, is the limit). The
 * wheel takes the time as an argument, so it runs on a virtual 2 GHz
 * clock advanced 32 packet times per step, with the aggregate binding
 * (64 bytes per 250 ns, 2.048 Gbit/s of virtual time): the backlog's
 * departures are spread DEPTH x N x 250 ns into the future (1 ms at 1K,
 * 65 ms at 64K, so level 1 and the cascade are used), four packets to a
 * 1 us slot. So the wheel does its real pacing work and rte_sched
 * does not wait for credit: if anything this favours rte_sched.
 *
 * Checks after every run: no packet dropped or refused (both), the wheel's
 * counters conserve, nothing left the wheel before its slot nor out of
 * order (against the harness's own record, not the mbufs), all mbufs back
 * in the pool. Otherwise exit 1.
 *
 * run_pacer() and run_sched() are kept out of line so that a profiler
 * can tell the sides apart (valgrind --tool=callgrind
 * --toggle-collect=run_pacer; docs/BENCHMARKS.md has the profile).
 *
 * "pacer_tb" is the same path with the rule pacer had before the
 * calendars (the aggregate a token bucket advanced by its own allowance,
 * pcr_policy_stamp_shared(), the later of the two times as the
 * departure): measured in the same run, interleaved, it says what the
 * calendar costs (docs/PERFORMANCE.md).
 *
 * Output: one JSON object per (impl, flows) on stdout:
 *   {"impl":"pacer"|"pacer_tb"|"rte_sched","flows":N,"ns_per_pkt":MEDIAN,"reps":[...],
 *    "packets_per_rep":P,"backlog":B}
 * and a table on stderr.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
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
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_sched.h>

#include "pcr_cal.h"
#include "pcr_policy.h"
#include "pcr_stamp.h"
#include "pcr_test_eal.h"
#include "pcr_wheel.h"

#define PROG "pacer-bench-sched"
#define BURST 32
#define DEPTH 4
#define PKT_BYTES 64
#define MAX_REPS 15
#define MAX_FLOWS 65536

/* pacer's virtual clock */
#define VHZ 2000000000ULL
#define VSTART_TSC 1000000000ULL
#define PKT_TIME_NS 250 /* 64 bytes at the virtual aggregate */
#define VAGG_BPS (PKT_BYTES * 8ULL * 1000000000ULL / PKT_TIME_NS)
#define PKT_TSC (PKT_TIME_NS * VHZ / 1000000000ULL)
#define SLOT_NS 1000
#define SLOT_TSC (SLOT_NS * VHZ / 1000000000ULL)

/* rte_sched's rates, bytes per second */
#define SCHED_PORT_BYTES_PER_S 12500000000ULL /* 100 Gbit/s */

static const unsigned int default_flows[] = {1024, 16384, 65536};

struct bench {
	struct rte_mempool *pool;
	struct rte_mbuf **stack; /* free mbufs, LIFO */
	unsigned int top;
	unsigned int nmbufs;
	int dyn_off;
	double tsc_ns; /* ns per real TSC cycle */
};

static void __rte_noreturn
fail(const char *what)
{
	fprintf(stderr, PROG ": FAIL: %s\n", what);
	exit(1);
}

static inline void
take(struct bench *b, struct rte_mbuf **m, unsigned int n)
{
	if (b->top < n)
		fail("out of free mbufs");
	b->top -= n;
	memcpy(m, &b->stack[b->top], n * sizeof(*m));
}

static inline void
give(struct bench *b, struct rte_mbuf **m, unsigned int n)
{
	memcpy(&b->stack[b->top], m, n * sizeof(*m));
	b->top += n;
}

static uint64_t
run_packets(unsigned int flows)
{
	return RTE_MAX(8ULL * flows * DEPTH, 1ULL << 21);
}

/* --- rte_sched --------------------------------------------------------- */

static struct rte_sched_port *
sched_create(unsigned int flows)
{
	struct rte_sched_subport_profile_params sp = {
		.tb_rate = SCHED_PORT_BYTES_PER_S,
		.tb_size = 1000000,
		.tc_period = 10,
	};
	struct rte_sched_pipe_params pp = {
		.tb_size = 1000000,
		.tc_period = 40,
		.tc_ov_weight = 1,
		.wrr_weights = {1, 1, 1, 1},
	};
	struct rte_sched_subport_params sub = {
		.n_pipes_per_subport_enabled = flows,
		.pipe_profiles = &pp,
		.n_pipe_profiles = 1,
		.n_max_pipe_profiles = 1,
	};
	struct rte_sched_port_params port = {
		.name = "bench_sched",
		.socket = (int)rte_socket_id(),
		.rate = SCHED_PORT_BYTES_PER_S,
		.mtu = 1522,
		.frame_overhead = 24,
		.n_subports_per_port = 1,
		.subport_profiles = &sp,
		.n_subport_profiles = 1,
		.n_max_subport_profiles = 1,
		.n_pipes_per_subport = flows,
	};
	struct rte_sched_port *p;
	unsigned int i;
	int ret;

	for (i = 0; i < RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE; i++)
		sp.tc_rate[i] = SCHED_PORT_BYTES_PER_S;
	/* per flow: 2x its share of the aggregate */
	pp.tb_rate = 2 * SCHED_PORT_BYTES_PER_S / flows;
	pp.tc_rate[RTE_SCHED_TRAFFIC_CLASS_BE] = pp.tb_rate;
	sub.qsize[RTE_SCHED_TRAFFIC_CLASS_BE] = 16;

	p = rte_sched_port_config(&port);
	if (p == NULL) {
		fprintf(stderr, PROG ": rte_sched_port_config failed\n");
		return NULL;
	}
	ret = rte_sched_subport_config(p, 0, &sub, 0);
	if (ret != 0) {
		fprintf(stderr, PROG ": rte_sched_subport_config: %d\n", ret);
		rte_sched_port_free(p);
		return NULL;
	}
	for (i = 0; i < flows; i++) {
		ret = rte_sched_pipe_config(p, 0, i, 0);
		if (ret != 0) {
			fprintf(stderr, PROG ": rte_sched_pipe_config %u: %d\n",
				i, ret);
			rte_sched_port_free(p);
			return NULL;
		}
	}
	return p;
}

static inline void
sched_write(struct rte_sched_port *p, struct rte_mbuf **m, uint32_t *seq,
	    unsigned int flows)
{
	unsigned int i;

	for (i = 0; i < BURST; i++) {
		rte_sched_port_pkt_write(p, m[i], 0, *seq, RTE_SCHED_TRAFFIC_CLASS_BE,
					 0, RTE_COLOR_GREEN);
		if (++*seq == flows)
			*seq = 0;
	}
}

static __rte_noinline double
run_sched(struct bench *b, unsigned int flows)
{
	struct rte_sched_port *p = sched_create(flows);
	struct rte_mbuf *m[BURST], *out[BURST];
	struct rte_sched_subport_stats st;
	uint32_t seq = 0, tc_ov;
	uint64_t warm = RTE_MAX(4ULL * flows * DEPTH, 1ULL << 18);
	uint64_t target = run_packets(flows), deq = 0, cyc = 0, t0, t1;
	uint64_t queued = 0, i;
	int n, ne;

	if (p == NULL)
		fail("rte_sched configuration");
	for (i = 0; i < (uint64_t)flows * DEPTH / BURST; i++) {
		take(b, m, BURST);
		sched_write(p, m, &seq, flows);
		if (rte_sched_port_enqueue(p, m, BURST) != BURST)
			fail("rte_sched refused a backlog packet");
		queued += BURST;
	}
	for (i = 0; deq < target; i++) {
		take(b, m, BURST);
		t0 = rte_rdtsc();
		sched_write(p, m, &seq, flows);
		ne = rte_sched_port_enqueue(p, m, BURST);
		n = rte_sched_port_dequeue(p, out, BURST);
		t1 = rte_rdtsc();
		if (ne != BURST)
			fail("rte_sched dropped a packet (queue full)");
		queued += BURST;
		queued -= (uint64_t)n;
		give(b, out, (unsigned int)n);
		if (i * BURST >= warm) {
			cyc += t1 - t0;
			deq += (uint64_t)n;
		}
	}
	if (rte_sched_subport_read_stats(p, 0, &st, &tc_ov) != 0)
		fail("rte_sched_subport_read_stats");
	if (st.n_pkts_tc_dropped[RTE_SCHED_TRAFFIC_CLASS_BE] != 0)
		fail("rte_sched counted drops");
	while (queued > 0) {
		n = rte_sched_port_dequeue(p, m, BURST);
		queued -= (uint64_t)n;
		give(b, m, (unsigned int)n);
	}
	rte_sched_port_free(p);
	return (double)cyc * b->tsc_ns / (double)deq;
}

/* --- pacer: policy + wheel --------------------------------------------- */

struct sent {
	struct rte_mbuf *m;
	uint64_t dep_tsc;
};

struct pacer_path {
	struct pcr_wheel *w;
	struct pcr_rate agg_rate, flow_rate;
	bool tb;                 /* the previous rule (pacer_tb) */
	struct pcr_policy agg;   /* its aggregate */
	struct pcr_cal *agg_cal; /* the calendar's */
	struct pcr_stamp_flow *flow;
	uint64_t now_tsc;
	struct sent *fifo; /* what was enqueued, in order */
	uint64_t fifo_head, fifo_tail, fifo_mask;
	uint64_t early, misordered;
};

/*
 * The lengths of the whole burst are read first, as pacer's RX loop does
 * (its classifier reads every packet before the policy loop): the
 * aggregate's compare-and-swap is a locked instruction, a full barrier on
 * x86, so a cold mbuf read after one waits for it and the next packet's
 * waits for that: one exposed miss per packet, in series. Read up front,
 * the burst's misses overlap (at 16K flows: 170 ns/pkt -> 39, see
 * docs/BENCHMARKS.md).
 */
static inline void
pacer_stamp(struct pacer_path *pp, struct rte_mbuf **m, uint64_t *dep,
	    uint32_t *seq, unsigned int flows)
{
	uint64_t now = pcr_fine(pp->now_tsc, VSTART_TSC);
	uint64_t limit = now + pp->agg_cal->reach;
	uint32_t len[BURST];
	unsigned int i;

	for (i = 0; i < BURST; i++)
		len[i] = rte_pktmbuf_pkt_len(m[i]);
	for (i = 0; i < BURST; i++) {
		struct pcr_stamp_flow *f = &pp->flow[*seq];
		uint32_t bytes = len[i];
		uint64_t d;

		if (pp->tb) {
			uint64_t fc = pcr_rate_cost(&pp->flow_rate, bytes);
			uint64_t fd = pcr_policy_allow(f->empty, now, fc,
						       pp->flow_rate.burst);
			uint64_t ad = pcr_policy_stamp_shared(&pp->agg,
							      &pp->agg_rate,
							      now, bytes, true);

			d = pcr_fine_max(fd, ad);
			f->empty = pcr_policy_after(f->empty, d, fc,
						    pp->flow_rate.burst);
		} else {
			struct pcr_cal_level lv = { 0 };
			struct pcr_stamp_undo undo;

			pcr_stamp_level(&lv, pp->agg_cal, &pp->agg_rate, bytes);
			if (pcr_stamp(f, &pp->flow_rate, &lv, 1, now, limit,
				      false, bytes, &d, &undo, true) !=
			    PCR_STAMP_PLACED)
				fail("the calendar refused a packet");
		}
		/* rounded up, as pacer's RX loop does */
		dep[i] = VSTART_TSC + ((d + (1u << PCR_FINE_SHIFT) - 1) >>
				       PCR_FINE_SHIFT);
		if (++*seq == flows)
			*seq = 0;
	}
}

/* Every packet the wheel has: taken out until a burst comes out short. */
static inline unsigned int
pacer_drain(struct pacer_path *pp, struct rte_mbuf **out, unsigned int room)
{
	unsigned int n, all = 0;

	do {
		n = RTE_MIN((unsigned int)BURST, room - all);
		n = pcr_wheel_dequeue_burst(pp->w, pp->now_tsc, out + all, n);
		all += n;
	} while (n == BURST && all < room);
	return all;
}

/*
 * The checks, untimed and without touching an mbuf (reading the departure
 * the wheel wrote into the mbuf would load a line the wheel's next
 * enqueue of the same mbuf then finds in cache). The harness keeps its
 * own record of what it enqueued: here every departure is later than the
 * one before (the aggregate binds, the flows never do), so the wheel must
 * hand the packets back in the order they went in, none before its slot.
 */
static inline void
pacer_sent(struct pacer_path *pp, struct rte_mbuf *const *m,
	   const uint64_t *dep, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct sent *e = &pp->fifo[pp->fifo_tail++ & pp->fifo_mask];

		e->m = m[i];
		e->dep_tsc = dep[i];
	}
}

static inline void
pacer_check(struct pacer_path *pp, struct rte_mbuf *const *out, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct sent *e =
			&pp->fifo[pp->fifo_head++ & pp->fifo_mask];

		if (e->m != out[i])
			pp->misordered++;
		if (e->dep_tsc > pp->now_tsc + SLOT_TSC)
			pp->early++;
	}
}

static __rte_noinline double
run_pacer(struct bench *b, unsigned int flows, bool tb)
{
	struct pacer_path pp = {.now_tsc = VSTART_TSC, .tb = tb};
	struct pcr_cal_params cp;
	struct pcr_wheel_params wp;
	struct pcr_wheel_stats ws;
	struct rte_mbuf *m[BURST], *out[8 * BURST];
	uint64_t dep[BURST];
	char err[256];
	uint32_t seq = 0;
	uint64_t warm = RTE_MAX(4ULL * flows * DEPTH, 1ULL << 18);
	uint64_t target = run_packets(flows), deq = 0, cyc = 0, t0, t1, i;
	unsigned int f, n, ne;

	pcr_wheel_params_default(&wp);
	wp.name = "bench_sched";
	wp.tsc_hz = VHZ;
	wp.start_tsc = VSTART_TSC;
	wp.granularity_ns = SLOT_NS;
	wp.horizon_ns = 2000000000ULL;
	wp.max_queued = RTE_MAX(wp.max_queued, 2 * flows * DEPTH);
	if (pcr_wheel_params_check(&wp, err, sizeof(err)) != 0)
		fail(err);
	pp.w = pcr_wheel_create(&wp);
	pp.flow = calloc(flows, sizeof(*pp.flow));
	pp.fifo_mask = rte_align64pow2(2ULL * flows * DEPTH) - 1;
	pp.fifo = calloc(pp.fifo_mask + 1, sizeof(*pp.fifo));
	if (pp.w == NULL || pp.flow == NULL || pp.fifo == NULL)
		fail("wheel, flow array or record: out of memory");
	if (pcr_rate_init(&pp.agg_rate, VAGG_BPS, PCR_BURST_DEFAULT, VHZ) != 0 ||
	    pcr_rate_init(&pp.flow_rate, 2 * VAGG_BPS / flows, PCR_BURST_DEFAULT,
			  VHZ) != 0)
		fail("pcr_rate_init");
	pcr_policy_init(&pp.agg, pcr_fine(pp.now_tsc, VSTART_TSC));
	cp = (struct pcr_cal_params){
		.frame_cost = pcr_rate_cost(&pp.agg_rate, PCR_CAL_FRAME_BYTES),
		.reach = (2000000000ULL / 1000000000ULL * VHZ) << PCR_FINE_SHIFT,
		.back = pp.agg_rate.burst,
	};
	pp.agg_cal = pcr_cal_create(&cp);
	if (pp.agg_cal == NULL)
		fail("calendar: out of memory");
	for (f = 0; f < flows; f++)
		pcr_stamp_flow_init(&pp.flow[f], pcr_fine(pp.now_tsc, VSTART_TSC));

	/* the backlog, all stamped at the start: departures DEPTH x N ahead */
	for (i = 0; i < (uint64_t)flows * DEPTH / BURST; i++) {
		take(b, m, BURST);
		pacer_stamp(&pp, m, dep, &seq, flows);
		if (pcr_wheel_enqueue_burst(pp.w, m, dep, BURST) != BURST)
			fail("the wheel refused a backlog packet");
		pacer_sent(&pp, m, dep, BURST);
		n = pacer_drain(&pp, out, RTE_DIM(out));
		pacer_check(&pp, out, n);
		give(b, out, n);
	}
	for (i = 0; deq < target; i++) {
		take(b, m, BURST);
		t0 = rte_rdtsc();
		pacer_stamp(&pp, m, dep, &seq, flows);
		ne = pcr_wheel_enqueue_burst(pp.w, m, dep, BURST);
		pp.now_tsc += BURST * PKT_TSC;
		n = pacer_drain(&pp, out, RTE_DIM(out));
		t1 = rte_rdtsc();
		if (ne != BURST)
			fail("the wheel refused a packet");
		pacer_sent(&pp, m, dep, BURST);
		pacer_check(&pp, out, n);
		give(b, out, n);
		if (i * BURST >= warm) {
			cyc += t1 - t0;
			deq += n;
		}
	}
	pcr_wheel_stats_get(pp.w, &ws);
	if (ws.refused != 0 || ws.dropped != 0 || pp.early != 0 ||
	    pp.misordered != 0)
		fail("the wheel refused, dropped, sent early or out of order");
	if (ws.enqueued != ws.dequeued + ws.queued)
		fail("the wheel's counters do not conserve");
	for (;;) {
		n = pcr_wheel_flush(pp.w, m, BURST);
		if (n == 0)
			break;
		give(b, m, n);
	}
	pcr_wheel_free(pp.w);
	pcr_cal_free(pp.agg_cal);
	free(pp.flow);
	free(pp.fifo);
	return (double)cyc * b->tsc_ns / (double)deq;
}

/* --- main -------------------------------------------------------------- */

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double
median(double *v, unsigned int n)
{
	double s[MAX_REPS];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static void
usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--reps N] [--flows N]... [--quick] [-- EAL options]\n"
		"  --reps N   repetitions, interleaved, median reported (1..%d) [5]\n"
		"  --flows N  flow count, a power of 2 in 64..%d; repeatable [1024 16384 65536]\n"
		"  --quick    1 rep, 1024 flows\n"
		"JSON lines on stdout, a table on stderr.\n",
		MAX_REPS, MAX_FLOWS);
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"reps", required_argument, NULL, 'r'},
		{"flows", required_argument, NULL, 'f'},
		{"quick", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	unsigned int flows[8], nflows = 0, reps = 5, i, r, k, max_flows = 0;
	double ns[3][8][MAX_REPS];
	static const char *const impl[3] = { "pacer", "rte_sched", "pacer_tb" };
	char prefix[64];
	char *eargv[64];
	int eargc = 0, c, out_fd;
	struct bench b = {0};
	FILE *out;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		char *end;
		unsigned long v;

		switch (c) {
		case 'r':
		case 'f':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno != 0 || *end != '\0' || end == optarg ||
			    (c == 'r' && (v < 1 || v > MAX_REPS)) ||
			    (c == 'f' && (v < 64 || v > MAX_FLOWS ||
					  !rte_is_power_of_2((uint32_t)v) ||
					  nflows == RTE_DIM(flows)))) {
				fprintf(stderr, PROG ": bad --%s '%s'\n",
					c == 'r' ? "reps" : "flows", optarg);
				return 2;
			}
			if (c == 'r')
				reps = (unsigned int)v;
			else
				flows[nflows++] = (unsigned int)v;
			break;
		case 'q':
			reps = 1;
			nflows = 1;
			flows[0] = 1024;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (nflows == 0)
		for (i = 0; i < RTE_DIM(default_flows); i++)
			flows[nflows++] = default_flows[i];
	for (i = 0; i < nflows; i++)
		max_flows = RTE_MAX(max_flows, flows[i]);

	/* results on the real stdout; the EAL's chatter to stderr */
	out_fd = dup(STDOUT_FILENO);
	if (out_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0 ||
	    (out = fdopen(out_fd, "w")) == NULL) {
		perror(PROG ": redirecting stdout");
		return 1;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=pcr-bench-sched-%d",
		 (int)getpid());
	eargv[eargc++] = argv[0];
	eargv[eargc++] = (char *)(uintptr_t) "--no-huge";
	eargv[eargc++] = (char *)(uintptr_t) "-m";
	eargv[eargc++] = (char *)(uintptr_t) "1024";
	eargv[eargc++] = (char *)(uintptr_t) "--no-pci";
	eargv[eargc++] = (char *)(uintptr_t) "--no-shconf";
	eargv[eargc++] = prefix;
	eargv[eargc++] = (char *)(uintptr_t) "-l";
	eargv[eargc++] = (char *)(uintptr_t) "0";
	eargv[eargc++] = (char *)(uintptr_t) "--no-telemetry";
	for (; optind < argc && eargc < (int)RTE_DIM(eargv) - 1; optind++)
		eargv[eargc++] = argv[optind];
	eargv[eargc] = NULL;
	if (rte_eal_init(eargc, eargv) < 0) {
		fprintf(stderr, PROG ": rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	b.tsc_ns = 1e9 / (double)rte_get_tsc_hz();
	b.dyn_off = pcr_wheel_dynfield_register();
	if (b.dyn_off < 0)
		fail("cannot register the departure dynamic field");
	b.nmbufs = max_flows * DEPTH + 8 * BURST;
	b.pool = rte_pktmbuf_pool_create("bench_sched", b.nmbufs, 0, 0, 0,
					 SOCKET_ID_ANY);
	b.stack = calloc(b.nmbufs, sizeof(*b.stack));
	if (b.pool == NULL || b.stack == NULL)
		fail("cannot create the mbuf pool");
	if (rte_pktmbuf_alloc_bulk(b.pool, b.stack, b.nmbufs) != 0)
		fail("cannot allocate the mbufs");
	for (i = 0; i < b.nmbufs; i++) {
		b.stack[i]->pkt_len = PKT_BYTES;
		b.stack[i]->data_len = PKT_BYTES;
	}
	b.top = b.nmbufs;

	/* reps interleaved: a slow minute of the machine hits both alike */
	for (r = 0; r < reps; r++)
		for (i = 0; i < nflows; i++) {
			ns[0][i][r] = run_pacer(&b, flows[i], false);
			ns[1][i][r] = run_sched(&b, flows[i]);
			ns[2][i][r] = run_pacer(&b, flows[i], true);
			if (b.top != b.nmbufs)
				fail("mbufs lost");
			fprintf(stderr, PROG ": rep %u flows %u: pacer %.2f ns, rte_sched %.2f ns, pacer_tb %.2f ns\n",
				r + 1, flows[i], ns[0][i][r], ns[1][i][r],
				ns[2][i][r]);
		}

	fprintf(stderr, "\n%8s %12s %12s %10s %12s %10s   (ns/pkt, medians of %u)\n",
		"flows", "pacer", "rte_sched", "speedup", "pacer_tb",
		"calendar", reps);
	for (i = 0; i < nflows; i++) {
		double med[3];

		for (k = 0; k < 3; k++)
			med[k] = median(ns[k][i], reps);
		fprintf(stderr, "%8u %12.2f %12.2f %9.2fx %12.2f %9.2fx\n",
			flows[i], med[0], med[1], med[1] / med[0], med[2],
			med[0] / med[2]);
		for (k = 0; k < 3; k++) {
			fprintf(out, "{\"impl\":\"%s\",\"flows\":%u,\"ns_per_pkt\":%.3f,\"reps\":[",
				impl[k], flows[i], med[k]);
			for (r = 0; r < reps; r++)
				fprintf(out, "%s%.3f", r ? "," : "", ns[k][i][r]);
			fprintf(out, "],\"packets_per_rep\":%" PRIu64 ",\"backlog\":%u}\n",
				run_packets(flows[i]), flows[i] * DEPTH);
		}
	}
	fflush(out);
	rte_pktmbuf_free_bulk(b.stack, b.top);
	free(b.stack);
	rte_mempool_free(b.pool);
	pcr_test_eal_cleanup();
	return 0;
}
