/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Statistics: a consistent snapshot of every lcore's counters, the rates
 * and the conservation check (render.c renders a snapshot: the periodic
 * line, the final report, the JSON and Prometheus).
 *
 * Consistency. Counters are single-writer and packets move between
 * lcores (RX lcore -> wheel -> TX lcore), so summing counters while they
 * run would count a packet twice or not at all. The control lcore instead
 * raises sync_req; every worker, at the top of its loop (no packet held in
 * a local array, only in the wheel or the TX pending buffer, both
 * counted), acknowledges and waits for sync_rel. With all of them
 * acknowledged, the control lcore claims each (sync_try()), the counters
 * are read and the workers released: a pause of a few microseconds per
 * snapshot. A worker unclaimed after PCR_SYNC_PARK_US goes on (the
 * control lcore lost its CPU: it must not hold the departures) and that
 * try fails; the next request tries again (docs/design.md, "Statistics
 * and conservation"). Nothing else happens in that window: the
 * snapshot (300 KiB) is cleared before it opens (clearing it inside took
 * 26 us, and 1.2-1.4 ms the first time each buffer was touched: page
 * faults, with every departure waiting), and the departure-error
 * histograms, which no conservation check reads and whose only writer is
 * the TX lcore, are merged after it closes.
 */

#include <stddef.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "config.h"
#include "counters.h"
#include "dataplane.h"
#include "pacer.h"
#include "snapshot.h"
#include "pcr_clock.h"

/* Wheel counters @p add into @p sum (a port's TX queues' wheels). */
static void
wheel_stats_add(struct pcr_wheel_stats *sum, const struct pcr_wheel_stats *add)
{
	unsigned int i;

	sum->enqueued += add->enqueued;
	sum->refused += add->refused;
	sum->dequeued += add->dequeued;
	sum->dropped += add->dropped;
	for (i = 0; i < PCR_WHEEL_DROP_MAX; i++)
		sum->drop[i] += add->drop[i];
	sum->queued += add->queued;
	sum->late += add->late;
	sum->horizon_cap += add->horizon_cap;
	sum->spill += add->spill;
	sum->cascaded += add->cascaded;
	sum->sorted += add->sorted;
	sum->direct += add->direct;
	sum->advances += add->advances;
	sum->inbox += add->inbox;
	for (i = 0; i < PCR_WHEEL_MAX_LEVELS; i++)
		sum->level_occupancy[i] += add->level_occupancy[i];
	sum->levels = RTE_MAX(sum->levels, add->levels);
}

/*
 * A slot's class counters count from when its class took it: what the TX
 * lcores have counted for the slot then is its base; what the classes
 * before sent is the deleted classes' (control lcore, under the lock).
 */
static struct pcr_class_stats cls_base[PCR_MAX_PORTS][PCR_MAX_CLASSES];
static struct pcr_class_stats cls_gone[PCR_MAX_PORTS];

/* The last live snapshot, shared by readers for PCR_SNAP_SHARE_MS. */
static struct pcr_snapshot *shared;
static bool shared_valid;
static uint64_t snapshots, snapshots_shared;

/* A class's counters, as an array (every field a uint64_t counter). */
#define CLS_N (sizeof(struct pcr_class_stats) / sizeof(uint64_t))
static inline uint64_t *
cls_u64(struct pcr_class_stats *x)
{
	return (uint64_t *)x;
}

/* Slot @p k's counts on port @p p as the lcores keep them (from start):
 * sent, by the port's TX queues; what the AQM did, by the RX lcores. */
static void
class_raw(uint16_t p, unsigned int k, struct pcr_class_stats *raw)
{
	struct pcr_txport *tp;
	unsigned int l;
	uint16_t q;

	memset(raw, 0, sizeof(*raw));
	PCR_TXQ_FOREACH(&pcr_app.ports[p], q, tp) {
		raw->tx_packets += __atomic_load_n(&tp->cls[k].tx_packets,
						   __ATOMIC_RELAXED);
		raw->tx_bytes += __atomic_load_n(&tp->cls[k].tx_bytes,
						 __ATOMIC_RELAXED);
	}
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		const struct pcr_lcore *lc = pcr_app.lcores[l];

		if (lc == NULL || lc->st == NULL)
			continue;
		raw->aqm_marked += __atomic_load_n(&lc->st[p].cls_aqm_marked[k],
						   __ATOMIC_RELAXED);
		raw->drop_aqm += __atomic_load_n(&lc->st[p].cls_drop_aqm[k],
						 __ATOMIC_RELAXED);
	}
}

/* Port @p p's class counters (raw sums, in @p ps) as reported. */
static void
class_counts(unsigned int p, struct pcr_port_snap *ps)
{
	const struct pcr_config *c = &pcr_app.cfg;
	unsigned int k, i;

	ps->cls_deleted = cls_gone[p];
	for (k = 0; k < c->n_classes; k++) {
		uint64_t *x = cls_u64(&ps->cls[k]);
		const uint64_t *base = cls_u64(&cls_base[p][k]);

		for (i = 0; i < CLS_N; i++) {
			x[i] -= base[i];
			if (c->classes[k].deleted)
				cls_u64(&ps->cls_deleted)[i] += x[i];
		}
	}
}

void
pcr_stats_class_restart(unsigned int k)
{
	unsigned int i;
	uint16_t p;

	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_class_stats raw;

		class_raw(p, k, &raw);
		for (i = 0; i < CLS_N; i++)
			cls_u64(&cls_gone[p])[i] += cls_u64(&raw)[i] -
						    cls_u64(&cls_base[p][k])[i];
		cls_base[p][k] = raw;
	}
	shared_valid = false;
}

/* What the PMDs count (descriptors and mbufs they had none of): read
 * before the workers are held, so that a PMD whose statistics take a
 * system call or a register read does not hold them (the two add to both
 * sides of the conservation check alike). */
static void
collect_eth(struct pcr_snapshot *s)
{
	uint16_t p;

	for (p = 0; p < pcr_app.n_ports; p++) {
		struct rte_eth_stats es;

		if (rte_eth_stats_get(p, &es) == 0) {
			s->port[p].rx_nombuf = es.rx_nombuf;
			s->port[p].rx_missed = es.imissed;
		}
	}
}

/* The counters, into a cleared @p s: what the workers are parked for. */
static void
collect(struct pcr_snapshot *s)
{
	unsigned int l, p, c, r;
	uint16_t q;

	s->tsc = rte_rdtsc();
	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_port_snap *ps = &s->port[p];
		struct pcr_txport *tp;

		ps->link_up = __atomic_load_n(&pcr_app.ports[p].link_up,
					      __ATOMIC_RELAXED);
		ps->link_changes = __atomic_load_n(
			&pcr_app.ports[p].link_changes, __ATOMIC_RELAXED);
		/* a port's TX queues: the sums (the latest for tx_behind) */
		PCR_TXQ_FOREACH(&pcr_app.ports[p], q, tp) {
			struct pcr_wheel_stats ws;

			pcr_wheel_stats_get(tp->wheel, &ws);
			wheel_stats_add(&ps->wheel, &ws);
			ps->tx_packets += tp->tx_packets;
			ps->tx_bytes += tp->tx_bytes;
			ps->tx_retry += tp->tx_retry;
			ps->tx_late += tp->tx_late;
			ps->tx_early += tp->tx_early;
			ps->tx_offloaded += tp->tx_offloaded;
			ps->tx_cycles += tp->tx_cycles;
			ps->drop_late += tp->drop_late;
			ps->tx_behind_ns = RTE_MAX(ps->tx_behind_ns,
				pcr_stats_ns(__atomic_load_n(
					&pcr_app.ports[p].tx_behind_tsc[q],
					__ATOMIC_RELAXED)));
			ps->pending += __atomic_load_n(&tp->n_pend,
						       __ATOMIC_RELAXED);
			ps->drop_tx += tp->tx_drop;
			ps->drop_shutdown += tp->drop_shutdown;
			ps->drop_link += tp->drop_link;
			ps->drop_horizon += tp->drop_wheel[PCR_WHEEL_DROP_HORIZON];
			ps->drop_spill += tp->drop_wheel[PCR_WHEEL_DROP_FULL];
			ps->drop_wheel_nomem += tp->drop_wheel[PCR_WHEEL_DROP_NOMEM];
			/* flush drops only happen in pcr_wheel_free() */
			ps->drop_shutdown += tp->drop_wheel[PCR_WHEEL_DROP_FLUSH];
		}
		for (c = 0; c < pcr_app.cfg.n_classes; c++)
			class_raw(p, c, &ps->cls[c]);
	}
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		const struct pcr_lcore *lc = pcr_app.lcores[l];

		if (lc == NULL)
			continue;
		s->park_tsc += __atomic_load_n(&lc->park_tsc, __ATOMIC_RELAXED);
		s->park_max_tsc = RTE_MAX(s->park_max_tsc,
			__atomic_load_n(&lc->park_max_tsc, __ATOMIC_RELAXED));
	}
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		struct pcr_lcore *lc = pcr_app.lcores[l];
		struct pcr_lcore_snap *ls_out;

		if (lc == NULL || lc->st == NULL)
			continue;
		ls_out = &s->lcore[s->n_lcores++];
		ls_out->lcore_id = lc->lcore_id;
		ls_out->roles = lc->roles;
		ls_out->tid = __atomic_load_n(&lc->tid, __ATOMIC_ACQUIRE);
		ls_out->stalls = lc->stalls;
		ls_out->stall_tsc = lc->stall_tsc;
		for (c = 0; c < lc->n_tx; c++)
			ls_out->tx_packets += lc->tx[c]->tx_packets;
		for (p = 0; p < pcr_app.n_ports; p++) {
			const struct pcr_lstats *ls = &lc->st[p];
			struct pcr_port_snap *ps = &s->port[p];

			ls_out->rx_packets += ls->rx_packets;
			ps->rx_packets += ls->rx_packets;
			ps->rx_bytes += ls->rx_bytes;
			for (r = 0; r < PCR_CLASSIFY_RESULT_MAX; r++)
				ps->classify[r] += ls->classify[r];
			ps->drop_flow_limit += ls->drop_flow_limit;
			ps->drop_flow_queue += ls->drop_flow_queue;
			ps->drop_horizon += ls->drop_horizon;
			ps->held_for_order += ls->held_for_order;
			ps->drop_inbox += ls->drop_inbox;
			ps->drop_late += ls->drop_late;
			ps->rx_cycles += ls->rx_cycles;
			ps->stage_cycles += ls->stage_cycles;
			ps->flows_new += ls->flows_new;
			ps->flows_aged += ls->flows_aged;
			ps->flow_table_full += ls->flow_table_full;
			ps->flow_cache_hits += ls->flow_cache_hits;
			ps->staged += ls->staged;
			ps->staged_total += ls->staged_total;
			ps->stage_stalls += ls->stage_stalls;
			ps->order_guard += ls->order_guard;
			ps->stage_stall_ns += pcr_stats_ns(
				ls->stage_stall_tsc);
			ps->stage_lead_ns = RTE_MAX(ps->stage_lead_ns,
				pcr_stats_ns(ls->stage_lead_tsc));
			ps->drop_shutdown += ls->drop_shutdown;
			ps->aqm_marked += ls->aqm_marked;
			ps->aqm_ce_marked += ls->aqm_ce_marked;
			ps->drop_aqm += ls->drop_aqm;
		}
	}
	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_port_snap *ps = &s->port[p];
		struct pcr_port_snap *eg = &s->port[pcr_app.ports[p].peer];

		/*
		 * Frames the port took in but had no mbuf or descriptor for
		 * arrived too: they count as received, and as dropped on the
		 * way to the egress port.
		 */
		ps->rx_packets += ps->rx_nombuf + ps->rx_missed;
		eg->drop_no_mbuf += ps->rx_nombuf;
		eg->drop_rx_missed += ps->rx_missed;
	}
	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_port_snap *ps = &s->port[p];
		unsigned int i;

		class_counts(p, ps);
		ps->queued = ps->wheel.queued + ps->pending + ps->staged;
		/* per packet: over what the RX lcores received (rx_packets less
		 * what the PMD had no room for), staged, sent */
		if (ps->rx_packets > ps->rx_nombuf + ps->rx_missed)
			ps->rx_cycles_pkt = ps->rx_cycles /
				(ps->rx_packets - ps->rx_nombuf - ps->rx_missed);
		if (ps->staged_total != 0)
			ps->stage_cycles_pkt = ps->stage_cycles / ps->staged_total;
		if (ps->tx_packets != 0)
			ps->tx_cycles_pkt = ps->tx_cycles / ps->tx_packets;
		for (i = 0; i < pcr_n_port_counters; i++)
			if (pcr_port_counters[i].kind == PCR_DROP)
				ps->dropped += pcr_counter_value(&pcr_port_counters[i], ps);
	}
}

/* The departure-error histograms (single writer, relaxed reads: a bucket
 * may miss the packets of the burst being counted, nothing more). */
static void
collect_hist(struct pcr_snapshot *s)
{
	unsigned int p, l;

	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_txport *tp;
		uint16_t q;

		PCR_TXQ_FOREACH(&pcr_app.ports[p], q, tp) {
			pcr_hist_merge(&s->port[p].err, &tp->err);
			pcr_hist_merge(&s->err, &tp->err);
		}
	}
	/* the queue delay each packet was stamped with (RX lcores) */
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		const struct pcr_lcore *lc = pcr_app.lcores[l];

		if (lc == NULL || lc->st == NULL)
			continue;
		for (p = 0; p < pcr_app.n_ports; p++)
			pcr_hist_merge(&s->port[p].qdelay, &lc->st[p].qdelay);
	}
}

static bool
workers_running(void)
{
	unsigned int l;

	for (l = 0; l < RTE_MAX_LCORE; l++) {
		struct pcr_lcore *lc = pcr_app.lcores[l];

		if (lc != NULL && __atomic_load_n(&lc->running, __ATOMIC_ACQUIRE))
			return true;
	}
	return false;
}

/*
 * How long each worker lcore's thread waited for a CPU while it was ready
 * to run: the kernel's run delay (the second field of
 * /proc/self/task/TID/schedstat, nanoseconds, since the thread started).
 * A busy-polling lcore is always ready, so this is the time it lost to
 * other threads on its CPU: what a departure late by milliseconds, or
 * staging unserved, is then explained by. Read outside the workers' pause
 * (a file read per lcore); UINT64_MAX where the kernel does not say.
 */
static void
collect_run_delay(struct pcr_snapshot *s)
{
	unsigned int i;

	for (i = 0; i < s->n_lcores; i++) {
		int tid = s->lcore[i].tid;
		unsigned long long run, wait;
		char path[64];
		FILE *f;

		s->lcore[i].run_delay_ns = UINT64_MAX;
		if (tid == 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", tid);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%llu %llu", &run, &wait) == 2)
			s->lcore[i].run_delay_ns = wait;
		fclose(f);
	}
}

/* The handshake's record over the run (snapshots are taken one at a
 * time, under pcr_ctl_lock()). */
static uint64_t sync_retries, sync_inconsistent;

/* The test build's PACER_TEST_SNAPSHOT_STALL_MS (setup.c): a control
 * lcore kept from its CPU */
static inline void
test_snapshot_hook(void)
{
#ifdef PCR_TEST_HOOKS
	if (pcr_app.test_snapshot_stall_ms != 0)
		rte_delay_us_sleep(pcr_app.test_snapshot_stall_ms * 1000);
#endif
}

/* What became of one try of the handshake (sync_try()). */
enum sync_result {
	SYNC_CLAIMED, /* every running worker, parked until the release */
	SYNC_LEFT,    /* one left unclaimed: it waited PCR_SYNC_PARK_US */
	SYNC_TIMEOUT, /* one did not acknowledge within 100 ms */
};

/*
 * One try of the handshake, request @p r: every running worker's
 * acknowledgement, then each one claimed (it waits for the release from
 * then on). The caller releases @p r whatever the result.
 */
static enum sync_result
sync_try(uint32_t r, bool yield)
{
	const uint64_t deadline = rte_rdtsc() + pcr_app.tsc_hz / 10;
	unsigned int l, spins = 0;

	for (l = 0; l < RTE_MAX_LCORE; l++) {
		struct pcr_lcore *lc = pcr_app.lcores[l];
		uint32_t a;

		if (lc == NULL)
			continue;
		while ((a = __atomic_load_n(&lc->sync_ack, __ATOMIC_ACQUIRE)) != r &&
		       __atomic_load_n(&lc->running, __ATOMIC_ACQUIRE)) {
			if (a == r + PCR_SYNC_LEFT)
				return SYNC_LEFT;
			if (rte_rdtsc() > deadline)
				return SYNC_TIMEOUT;
			pcr_sync_wait(&spins, yield);
		}
	}
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		struct pcr_lcore *lc = pcr_app.lcores[l];
		uint32_t want = r;

		/* one that is not running never acknowledged: nothing to
		 * claim */
		if (lc != NULL &&
		    !__atomic_compare_exchange_n(&lc->sync_ack, &want,
						 r + PCR_SYNC_CLAIMED, false,
						 __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE) &&
		    want == r + PCR_SYNC_LEFT)
			return SYNC_LEFT;
	}
	return SYNC_CLAIMED;
}

/*
 * Hold the running workers for a snapshot: requests until one try claims
 * them all, *@p tries of PCR_SYNC_TRIES at most (a worker that does not
 * answer in 100 ms ends it). True when they are held, under request
 * *@p r, which the caller releases after it read; false (counted) when
 * they run on.
 */
static bool
sync_hold(uint32_t *r, unsigned int *tries)
{
	rte_cpuset_t mine;
	bool yield = true;

	/* this thread yields while it waits only if a worker may run on
	 * its CPU (it waits for that worker's acknowledgement) */
	if (pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine) == 0) {
		CPU_AND(&mine, &mine, &pcr_app.worker_cpus);
		yield = CPU_COUNT(&mine) != 0;
	}
	for (;; ++*tries) {
		enum sync_result res;

		*r = __atomic_add_fetch(&pcr_app.dp.sync_req, PCR_SYNC_STEP,
					__ATOMIC_ACQ_REL);
		if (*tries == 1)
			test_snapshot_hook();
		res = sync_try(*r, yield);
		if (res == SYNC_CLAIMED)
			return true;
		/* the claimed ones go on too */
		__atomic_store_n(&pcr_app.dp.sync_rel, *r, __ATOMIC_RELEASE);
		/* a worker that does not answer in 100 ms will not answer the
		 * next try either */
		if (res != SYNC_LEFT || *tries >= PCR_SYNC_TRIES) {
			sync_inconsistent++;
			return false;
		}
		sync_retries++;
	}
}

/* A worker claimed for request @p r left before the release (it waited
 * PCR_SYNC_PARK_US): what was read meanwhile is void. */
static bool
sync_abandoned(uint32_t r)
{
	unsigned int l;

	/* the counters were read before this (the workers' stores they
	 * saw happened before each one's abandon, or not at all) */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		const struct pcr_lcore *lc = pcr_app.lcores[l];

		if (lc != NULL && __atomic_load_n(&lc->sync_ack, __ATOMIC_ACQUIRE) ==
					  r + PCR_SYNC_ABANDONED)
			return true;
	}
	return false;
}

void
pcr_stats_snapshot(struct pcr_snapshot *s)
{
	unsigned int tries = 1;
	uint32_t r = 0;

	/* stopped workers need no holding: a final snapshot is consistent */
	for (;;) {
		bool held = false, void_read;

		memset(s, 0, sizeof(*s));
		collect_eth(s);
		if (!workers_running()) {
			collect(s);
			s->consistent = true;
			break;
		}
		snapshots++;
		held = sync_hold(&r, &tries);
		collect(s);
		s->consistent = held;
		if (!held)
			break;
		void_read = sync_abandoned(r);
		__atomic_store_n(&pcr_app.dp.sync_rel, r, __ATOMIC_RELEASE);
		if (!void_read)
			break;
		sync_retries++;
		if (tries++ >= PCR_SYNC_TRIES) {
			/* as read, but it says so */
			s->consistent = false;
			sync_inconsistent++;
			break;
		}
	}
	s->sync_retries = sync_retries;
	s->sync_inconsistent = sync_inconsistent;
	s->snapshots = snapshots;
	s->snapshots_shared = snapshots_shared;
	collect_hist(s);
	collect_run_delay(s);
}

void
pcr_stats_snapshot_live(struct pcr_snapshot *s)
{
	uint64_t now = rte_rdtsc();

	if (shared == NULL)
		shared = malloc(sizeof(*shared));
	if (shared != NULL && shared_valid && workers_running() &&
	    now - shared->tsc < pcr_app.tsc_hz / 1000 * PCR_SNAP_SHARE_MS) {
		memcpy(s, shared, sizeof(*s));
		s->snapshots_shared = ++snapshots_shared;
		return;
	}
	pcr_stats_snapshot(s);
	if (shared != NULL) {
		memcpy(shared, s, sizeof(*s));
		shared_valid = true;
	}
}

/* ------------------------------------------------------------------ */
/* Rates over a fixed window (show port stats)                         */

#define RATE_SAMPLES 101 /* 1 s of 10 ms samples, and the one now */

static struct {
	uint64_t tsc;
	uint64_t rx[PCR_MAX_PORTS], tx[PCR_MAX_PORTS];
} rate_ring[RATE_SAMPLES];
static unsigned int rate_head, rate_n;

void
pcr_stats_rate_poll(uint64_t now_tsc)
{
	unsigned int l, i = rate_head;
	uint16_t p, q;

	/* single-writer counters, read as they run: a rate needs no
	 * handshake */
	memset(&rate_ring[i], 0, sizeof(rate_ring[i]));
	rate_ring[i].tsc = now_tsc;
	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_txport *tp;

		PCR_TXQ_FOREACH(&pcr_app.ports[p], q, tp)
			rate_ring[i].tx[p] += __atomic_load_n(&tp->tx_bytes,
							      __ATOMIC_RELAXED);
	}
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		const struct pcr_lcore *lc = pcr_app.lcores[l];

		if (lc == NULL || lc->st == NULL)
			continue;
		for (p = 0; p < pcr_app.n_ports; p++)
			rate_ring[i].rx[p] += __atomic_load_n(&lc->st[p].rx_bytes,
							      __ATOMIC_RELAXED);
	}
	rate_head = (rate_head + 1) % RATE_SAMPLES;
	if (rate_n < RATE_SAMPLES)
		rate_n++;
}

int
pcr_stats_rate(uint16_t p, double *rx_bps, double *tx_bps, double *window_s)
{
	unsigned int nw = (rate_head + RATE_SAMPLES - 1) % RATE_SAMPLES;
	unsigned int old = (rate_head + RATE_SAMPLES - rate_n) % RATE_SAMPLES;
	double dt;

	if (rate_n < 2)
		return -1;
	dt = (double)(rate_ring[nw].tsc - rate_ring[old].tsc) /
	     (double)pcr_app.tsc_hz;
	*rx_bps = (double)(rate_ring[nw].rx[p] - rate_ring[old].rx[p]) * 8 / dt;
	*tx_bps = (double)(rate_ring[nw].tx[p] - rate_ring[old].tx[p]) * 8 / dt;
	*window_s = dt;
	return 0;
}

int
pcr_stats_check(const struct pcr_snapshot *s, FILE *f)
{
	unsigned int p;
	int rc = 0;

	for (p = 0; p < pcr_app.n_ports; p++) {
		const struct pcr_port_snap *eg = &s->port[p];
		uint64_t rx = 0;
		unsigned int q;

		for (q = 0; q < pcr_app.n_ports; q++)
			if (pcr_app.ports[q].peer == p)
				rx += s->port[q].rx_packets;
		if (rx != eg->tx_packets + eg->dropped + eg->queued) {
			fprintf(f,
				"pacer: port %u: conservation broken: received for it %" PRIu64
				" != tx %" PRIu64 " + dropped %" PRIu64 " + queued %" PRIu64 "\n",
				p, rx, eg->tx_packets, eg->dropped, eg->queued);
			rc = -1;
		}
	}
	return rc;
}

/*
 * Every duration pacer reports (counters, gauges, departure-error
 * quantiles, the stats line) is converted with the TSC rate pacer started
 * with (pcr_app.tsc_hz), the one its settings were converted to cycles
 * with, not the clock's live calibration: that one is republished as it
 * refines (lib/clock), and a total converted with it would read a
 * nanosecond or so different from one read to the next after nothing
 * changed (the renderers of test_counters.sh once disagreed by 1 ns). The
 * two rates differ by parts per million.
 */
uint64_t
pcr_stats_ns(uint64_t cycles)
{
	uint64_t hz = pcr_app.tsc_hz != 0 ? pcr_app.tsc_hz : pcr_clock_tsc_hz();

	return (uint64_t)((unsigned __int128)cycles * 1000000000u / hz);
}
