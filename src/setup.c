/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Setting the appliance up, between rte_eal_init() and the first worker:
 * the lcores' roles (which receive, which transmit), the default mbuf
 * pool's size, the ports (queues, offloads, clocks), the timing wheels,
 * the policies and the staging state; and, in the test build only, the
 * test hooks. main.c calls these in order (see main()); a failure here
 * ends the run through pcr_fatal(), before forwarding starts.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mbuf_pool_ops.h>

#include "config.h"
#include "dataplane.h"
#include "pacer.h"
#include "setup.h"
#include "pcr_clock.h"

/* RX lcores among @p nw workers: one worker does RX and TX; else half the
 * workers (at most one per TX queue of all ports, --tx-queues a port)
 * transmit, the others receive. */
unsigned int
pcr_rx_lcore_count(unsigned int nw, unsigned int n_txq)
{
	return nw == 1 ? 1 : nw - RTE_MIN(n_txq, nw / 2);
}

/* EAL memory one flow table entry takes, all its parts (the rte_hash
 * entry, the flow, its staging state, its place in the transaction queue):
 * 205 bytes measured with 1M entries (the heap's free bytes before and
 * after, DPDK 22.11), with a tenth to spare; and its AQM state
 * (struct pcr_flow_aqm, 40 bytes). */
#define FLOWTAB_ENTRY_BYTES (224 + 40)
/* What the setup takes beside the pool, the wheels and the flow tables
 * (rings, lcore state, the ethdevs' queues), with room to spare. */
#define SETUP_SLACK_BYTES (32u << 20)

/* What one mbuf takes from the EAL's memory: without hugepages, a 4 KiB
 * page holds one (a mempool object does not cross a page). */
static size_t
mbuf_cost(void)
{
	struct rte_mempool_objsz sz;
	size_t obj = rte_mempool_calc_obj_size(sizeof(struct rte_mbuf) +
						       RTE_MBUF_DEFAULT_BUF_SIZE,
					       0, &sz);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	if (!rte_eal_has_hugepages() && obj <= pg)
		return pg / (pg / obj);
	return obj;
}

/*
 * The mbuf pool's common store: a stack (LIFO) where pacer may choose. An
 * lcore's mempool cache serves its allocations and frees alone; where RX
 * and TX run on different lcores (--lcores, --tx-queues) the RX lcores'
 * caches only empty and the TX lcores' only fill, so every mbuf passes
 * through the common store. A FIFO ring there (DPDK's default) hands out
 * the mbuf freed longest ago: the whole pool circulates, every mbuf comes
 * back cold (out of cache and, without hugepages, a page of its own: a TLB
 * miss). A stack hands back those freed last, still in cache. Measured on
 * two net_null ports, 1 RX + 1 TX lcore (docs/BENCHMARKS.md): 8.1 -> 11.9
 * Mpps (medians of 6); one worker the same. The user's
 * --mbuf-pool-ops-name, a platform's own handler (hardware pools) or a
 * port that does not take a stack keep DPDK's choice.
 */
#define PCR_POOL_OPS "stack"

static const char *
pool_ops(uint16_t n_ports)
{
	uint16_t p;

	if (rte_eal_mbuf_user_pool_ops() != NULL ||
	    rte_mbuf_platform_mempool_ops() != NULL)
		return NULL;
	for (p = 0; p < n_ports; p++)
		if (rte_eth_dev_pool_ops_supported(p, PCR_POOL_OPS) < 0)
			return NULL;
	return PCR_POOL_OPS;
}

struct rte_mempool *
pcr_pool_create(uint16_t n_ports, unsigned int nb_mbufs)
{
	const char *ops = pool_ops(n_ports);
	unsigned int cache = RTE_MIN(256u, nb_mbufs / 16);
	struct rte_mempool *mp = NULL;

	if (ops != NULL)
		mp = rte_pktmbuf_pool_create_by_ops("pcr_mbufs", nb_mbufs, cache,
						    0, RTE_MBUF_DEFAULT_BUF_SIZE,
						    (int)rte_socket_id(), ops);
	/* no stack handler in this DPDK (a driver not built or loaded):
	 * DPDK's choice, which fails again with the reason if it was not
	 * the handler */
	if (mp == NULL)
		mp = rte_pktmbuf_pool_create("pcr_mbufs", nb_mbufs, cache, 0,
					     RTE_MBUF_DEFAULT_BUF_SIZE,
					     (int)rte_socket_id());
	return mp;
}

static void wheel_params(struct pcr_app *a, uint16_t p, uint16_t q,
			 unsigned int max_queued, char *name,
			 struct pcr_wheel_params *wp);

/*
 * The pool without --mbufs: a full horizon of 1500-byte frames at 1 gbit/s
 * plus what the rings hold, as far as the EAL's memory goes once the flow
 * tables and the wheels have theirs; the start line says what it holds.
 */
unsigned int
pcr_default_mbufs(struct pcr_app *a, unsigned int n_ports, unsigned int n_rx,
		  unsigned int n_lcores)
{
	const struct pcr_config *c = &a->cfg;
	struct rte_malloc_socket_stats ms;
	uint64_t want, fit, rings, reserve, cost = mbuf_cost();
	unsigned int nb;
	uint16_t p;

	want = c->horizon_ms * (1000000000ull / 8 / 1500) / 1000;
	rings = (uint64_t)n_ports * (c->rxd + c->txd + PCR_TX_BURST) +
		(uint64_t)n_lcores * (256 + PCR_RX_BURST);
	want = RTE_MIN(want + rings, (1ull << 26) - 1);
	reserve = SETUP_SLACK_BYTES +
		  (uint64_t)n_rx * c->max_flows * FLOWTAB_ENTRY_BYTES;
	for (p = 0; p < n_ports; p++) {
		struct pcr_wheel_params wp;
		char name[32];

		wheel_params(a, p, 0, (unsigned int)want, name, &wp);
		reserve += pcr_wheel_memsize(&wp) * c->tx_queues;
	}
	if (rte_malloc_get_socket_stats((int)rte_socket_id(), &ms) != 0)
		ms.heap_freesz_bytes = 0;
	fit = ms.heap_freesz_bytes > reserve ?
		      (ms.heap_freesz_bytes - reserve) / cost : 0;
	if (fit < rings + 1024)
		pcr_fatal("the EAL has %zu MiB free and flow tables and wheels take about %" PRIu64
		      " MiB: no room for a pool of mbufs; give more memory (-m), fewer --max-flows (%" PRIu64
		      " a RX lcore), or --mbufs",
		      ms.heap_freesz_bytes >> 20, reserve >> 20, c->max_flows);
	nb = (unsigned int)RTE_MIN(want, fit);
	if (nb == want)
		printf("pacer: %u mbufs (no --mbufs): the %" PRIu64
		       " ms horizon of 1500-byte frames at 1 gbit/s\n",
		       nb, c->horizon_ms);
	else
		printf("pacer: %u mbufs (no --mbufs: %" PRIu64 " MiB of the %zu MiB the EAL has free"
		       " after flow tables and wheels): the %" PRIu64
		       " ms horizon of 1500-byte frames at up to %" PRIu64
		       " mbit/s over all ports; more memory (-m) or --mbufs for more\n",
		       nb, (uint64_t)nb * cost >> 20, ms.heap_freesz_bytes >> 20,
		       c->horizon_ms,
		       (uint64_t)(nb - rings) * 1500 * 8 / 1000 / c->horizon_ms);
	return nb;
}

void
pcr_dp_bind(struct pcr_app *a)
{
	struct pcr_dp *dp = &a->dp;

	dp->ports = a->ports;
	dp->lcores = a->lcores;
	dp->n_ports = a->n_ports;
	dp->flow_idle_ms = a->cfg.flow_idle_ms;
	dp->guard_frames = (uint8_t)a->cfg.guard_frames;
}

void
pcr_assign_lcores(struct pcr_app *a)
{
	unsigned int workers[RTE_MAX_LCORE], nw = 0, n_tx, n_rx, i, l;
	unsigned int rx_lcores[RTE_MAX_LCORE], next = 0;
	uint16_t p;

	rte_cpuset_t main_cpus = rte_lcore_cpuset(rte_get_main_lcore());

	RTE_LCORE_FOREACH_WORKER(l)
		workers[nw++] = l;
	a->dp.n_workers = nw;
	CPU_ZERO(&a->worker_cpus);
	for (i = 0; i < nw; i++) {
		struct pcr_lcore *lc = rte_zmalloc("pcr_lcore", sizeof(*lc),
						   RTE_CACHE_LINE_SIZE);
		rte_cpuset_t cpus = rte_lcore_cpuset(workers[i]), shared;

		if (lc == NULL)
			pcr_fatal("out of memory for lcore state");
		lc->dp = &a->dp;
		lc->lcore_id = workers[i];
		/* at the snapshot handshake it yields only to a control
		 * lcore on its CPU: to any other thread it would lose its
		 * CPU for a scheduler slice */
		CPU_AND(&shared, &cpus, &main_cpus);
		lc->sync_yield = CPU_COUNT(&shared) != 0;
		CPU_OR(&a->worker_cpus, &a->worker_cpus, &cpus);
		lc->st = rte_zmalloc("pcr_lstats",
				     sizeof(*lc->st) * a->n_ports,
				     RTE_CACHE_LINE_SIZE);
		if (lc->st == NULL)
			pcr_fatal("out of memory for lcore statistics");
		a->lcores[workers[i]] = lc;
	}
	if (nw == 1) {
		/* one worker does RX then TX in one loop */
		n_tx = 1;
		n_rx = 1;
		a->lcores[workers[0]]->roles = PCR_ROLE_RX | PCR_ROLE_TX;
		rx_lcores[0] = workers[0];
	} else {
		n_rx = pcr_rx_lcore_count(nw, a->n_ports * a->cfg.tx_queues);
		n_tx = nw - n_rx;
		for (i = 0; i < n_tx; i++)
			a->lcores[workers[i]]->roles = PCR_ROLE_TX;
		for (i = 0; i < n_rx; i++) {
			a->lcores[workers[n_tx + i]]->roles = PCR_ROLE_RX;
			rx_lcores[i] = workers[n_tx + i];
		}
	}
	/* egress ports' TX queues round-robin over the TX lcores: with
	 * --tx-queues K and K x ports TX lcores or more, a queue each */
	for (p = 0, i = 0; p < a->n_ports; p++) {
		uint16_t q;

		for (q = 0; q < a->ports[p].n_txq; q++) {
			struct pcr_lcore *lc = a->lcores[workers[i++ % n_tx]];

			lc->tx[lc->n_tx++] = a->ports[p].txq[q];
		}
	}
	/* RX queues: as many per port as RX lcores, within the PMD's limit */
	for (p = 0; p < a->n_ports; p++) {
		struct rte_eth_dev_info info;
		uint16_t q;

		if (rte_eth_dev_info_get(p, &info) != 0)
			pcr_fatal("port %u: cannot read device info", p);
		a->ports[p].nb_rxq = (uint16_t)RTE_MIN(n_rx, info.max_rx_queues);
		if (a->ports[p].nb_rxq == 0)
			a->ports[p].nb_rxq = 1;
		for (q = 0; q < a->ports[p].nb_rxq; q++) {
			struct pcr_lcore *lc = a->lcores[rx_lcores[next++ % n_rx]];

			if (lc->n_rxq == PCR_MAX_RXQ)
				pcr_fatal("more than %d RX queues on lcore %u",
				      PCR_MAX_RXQ, lc->lcore_id);
			lc->rxq[lc->n_rxq++] = (struct pcr_rxq){
				.port = p, .queue = q, .egress = a->ports[p].peer
			};
		}
	}
}

#ifdef PCR_TEST_HOOKS
/*
 * Test hooks, only in the test build (pacer-test, tests/pacer/meson.build:
 * -DPCR_TEST_HOOKS; the installed pacer has none and ignores these
 * variables). For the TX retry/hold path, as TX callbacks in front of
 * the real PMD (so the real rte_eth_tx_burst() path runs):
 * - PACER_TEST_TX_BUDGET=N: every port accepts N packets in all, then
 *   refuses everything, as a NIC whose link went away would;
 * - PACER_TEST_TX_SHARE=P (1..100): every port accepts P % of each burst
 *   (rounded up) and refuses every fourth burst whole, as a NIC whose
 *   descriptor ring is nearly full would;
 * - PACER_TEST_TX_COST_NS=N (1..1000000): every port's send spins N ns a
 *   packet before taking the burst, as a TX lcore that cannot keep up
 *   would (a slower core, a costlier PMD): its capacity is 1e9 / N pps.
 * And one for the wheel's consumer:
 * - PACER_TEST_WHEEL_HOLD_MS=MS (1..60000): every TX lcore's wheel clock
 *   stands at the wheel's start (tick 0) for MS from its first poll, as a
 *   stalled consumer would leave it: what arrives meanwhile is placed
 *   relative to the held clock, so with --horizon-policy cap a flood
 *   lands in one known slot (horizon - 1).
 * And one for the statistics:
 * - PACER_TEST_SNAPSHOT_STALL_MS=MS (1..1000): the first try of every
 *   snapshot's handshake sleeps MS after its request, as a control lcore
 *   kept from its CPU would (pcr_stats_snapshot()).
 */
/* A test hook's variable @p name, a number in @p lo..@p hi (@p unit);
 * 0 when it is not set. Anything else ends the run. */
static unsigned long
test_env_range(const char *name, unsigned long lo, unsigned long hi,
	       const char *unit)
{
	const char *v = getenv(name);
	char *end;
	unsigned long x;

	if (v == NULL)
		return 0;
	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || x < lo || x > hi)
		pcr_fatal("%s '%s': not a time in %lu..%lu %s", name, v, lo, hi,
			  unit);
	return x;
}

static struct test_tx_hook {
	uint64_t budget;
	unsigned int share;
	uint64_t calls;
	uint64_t cost_tsc; /**< a packet */
} test_tx_hook[PCR_MAX_PORTS];

static uint16_t
test_tx_cost_cb(uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
		uint16_t n, void *arg)
{
	const struct test_tx_hook *h = arg;
	uint64_t until = rte_rdtsc() + h->cost_tsc * n;

	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(pkts);
	while (rte_rdtsc() < until)
		rte_pause();
	return n;
}

static uint16_t
test_tx_budget_cb(uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
		  uint16_t n, void *arg)
{
	struct test_tx_hook *h = arg;
	uint16_t k = (uint16_t)RTE_MIN((uint64_t)n, h->budget);

	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(pkts);
	h->budget -= k;
	return k;
}

static uint16_t
test_tx_share_cb(uint16_t port, uint16_t queue, struct rte_mbuf **pkts,
		 uint16_t n, void *arg)
{
	struct test_tx_hook *h = arg;

	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	RTE_SET_USED(pkts);
	if (h->calls++ % 4 == 3)
		return 0;
	return (uint16_t)(((unsigned int)n * h->share + 99) / 100);
}

static void
test_tx_hooks(uint16_t p, uint16_t q)
{
	struct test_tx_hook *h = &test_tx_hook[p];
	const char *v;

	if ((v = getenv("PACER_TEST_TX_BUDGET")) != NULL) {
		h->budget = strtoull(v, NULL, 10);
		if (rte_eth_add_tx_callback(p, q, test_tx_budget_cb, h) == NULL)
			pcr_fatal("port %u: PACER_TEST_TX_BUDGET: no TX callbacks", p);
		PCR_LOG(NOTICE, "port %u: test hook: accepts %" PRIu64
			" packets, then none", p, h->budget);
	}
	if ((v = getenv("PACER_TEST_TX_SHARE")) != NULL) {
		h->share = (unsigned int)strtoul(v, NULL, 10);
		if (h->share < 1 || h->share > 100)
			pcr_fatal("PACER_TEST_TX_SHARE '%s': not a percentage in 1..100", v);
		if (rte_eth_add_tx_callback(p, q, test_tx_share_cb, h) == NULL)
			pcr_fatal("port %u: PACER_TEST_TX_SHARE: no TX callbacks", p);
		PCR_LOG(NOTICE, "port %u: test hook: accepts %u %% of each burst, none of every fourth",
			p, h->share);
	}
	if (getenv("PACER_TEST_TX_COST_NS") != NULL) {
		unsigned long ns = test_env_range("PACER_TEST_TX_COST_NS", 1,
						  1000000, "ns");

		h->cost_tsc = pcr_clock_ns_to_cycles(ns);
		if (rte_eth_add_tx_callback(p, q, test_tx_cost_cb, h) == NULL)
			pcr_fatal("port %u: PACER_TEST_TX_COST_NS: no TX callbacks", p);
		PCR_LOG(NOTICE, "port %u: test hook: sending costs %lu ns a packet", p, ns);
	}
}

static void
test_wheel_hook(struct pcr_app *a, struct pcr_txport *tp, uint64_t start_tsc)
{
	unsigned long ms = test_env_range("PACER_TEST_WHEEL_HOLD_MS", 1, 60000,
					  "ms");

	if (ms == 0)
		return;
	tp->test_hold_tsc = ms * (a->tsc_hz / 1000);
	tp->test_hold_at = start_tsc;
	PCR_LOG(NOTICE, "port %u: test hook: wheel clock held at its start for %lu ms from the first poll",
		tp->port, ms);
}

/* PACER_TEST_SNAPSHOT_STALL_MS: see pcr_app.test_snapshot_stall_ms */
static void
test_snapshot_hook(struct pcr_app *a)
{
	a->test_snapshot_stall_ms = (unsigned int)test_env_range(
		"PACER_TEST_SNAPSHOT_STALL_MS", 1, 1000, "ms");
	if (a->test_snapshot_stall_ms != 0)
		PCR_LOG(NOTICE, "test hook: the first try of every snapshot's handshake sleeps %u ms",
			a->test_snapshot_stall_ms);
}
#else
static void
test_tx_hooks(uint16_t p, uint16_t q)
{
	RTE_SET_USED(p);
	RTE_SET_USED(q);
}

static void
test_wheel_hook(struct pcr_app *a, struct pcr_txport *tp, uint64_t start_tsc)
{
	RTE_SET_USED(a);
	RTE_SET_USED(tp);
	RTE_SET_USED(start_tsc);
}

static void
test_snapshot_hook(struct pcr_app *a)
{
	RTE_SET_USED(a);
}
#endif

static void port_clock_setup(struct pcr_app *a, uint16_t p);

void
pcr_port_setup(struct pcr_app *a, uint16_t p)
{
	struct pcr_port *pt = &a->ports[p];
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	uint16_t rxd = (uint16_t)a->cfg.rxd, txd = (uint16_t)a->cfg.txd, q;
	int rc, socket = rte_eth_dev_socket_id(p);

	if (socket < 0)
		socket = 0;
	memset(&conf, 0, sizeof(conf));
	rc = rte_eth_dev_info_get(p, &info);
	if (rc != 0)
		pcr_fatal("port %u: cannot read device info: %s", p, strerror(-rc));
	pt->tx_offload_capa = (info.tx_offload_capa &
			       RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP) != 0;
	if (pt->tx_offload_capa && a->cfg.offload_horizon_us != 0) {
		if (a->ts_field < 0 &&
		    rte_mbuf_dyn_tx_timestamp_register(&a->ts_field,
						       &a->ts_flag) != 0)
			pcr_fatal("cannot register the Tx timestamp dynamic field: %s",
			      rte_strerror(rte_errno));
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP;
		pt->tx_offload = true;
	}
	if (pt->nb_rxq > 1 && info.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
	}
	if (pt->n_txq > info.max_tx_queues)
		pcr_fatal("port %u (%s): --tx-queues %u: the PMD has %u TX queues at most",
			  p, pt->name, pt->n_txq, info.max_tx_queues);
	rc = rte_eth_dev_configure(p, pt->nb_rxq, pt->n_txq, &conf);
	if (rc != 0)
		pcr_fatal("port %u: configure (%u RX queues, %u TX queues) failed: %s",
		      p, pt->nb_rxq, pt->n_txq, strerror(-rc));
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p, &rxd, &txd);
	if (rc != 0)
		pcr_fatal("port %u: descriptor counts: %s", p, strerror(-rc));
	for (q = 0; q < pt->nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(p, q, rxd, (unsigned int)socket,
					    NULL, a->pool);
		if (rc != 0)
			pcr_fatal("port %u: RX queue %u setup failed: %s", p, q,
			      strerror(-rc));
	}
	for (q = 0; q < pt->n_txq; q++) {
		rc = rte_eth_tx_queue_setup(p, q, txd, (unsigned int)socket,
					    NULL);
		if (rc != 0)
			pcr_fatal("port %u: TX queue %u setup failed: %s", p,
				  q, strerror(-rc));
		test_tx_hooks(p, q);
	}
	rc = rte_eth_dev_start(p);
	if (rc != 0)
		pcr_fatal("port %u: start failed: %s", p, strerror(-rc));
	pt->started = true;
	port_clock_setup(a, p);
	/* a bump in the wire forwards every frame, whatever its address */
	rc = rte_eth_promiscuous_enable(p);
	if (rc != 0 && rc != -ENOTSUP)
		PCR_LOG(WARNING, "port %u: promiscuous mode: %s", p,
			strerror(-rc));
}

/* Per-flow staging (dataplane.c): its longest lead in TSC cycles, each RX
 * lcore's adaptive lead per egress port (starting at the longest), and its
 * list of the others, whose published ranks it compares. */
void
pcr_stage_setup(struct pcr_app *a)
{
	uint64_t floor_us = RTE_MAX(a->cfg.stage_lead_min_us,
				    a->cfg.offload_horizon_us);
	uint64_t now = rte_rdtsc();
	unsigned int l, o;
	uint16_t p;

	a->dp.stage_lead_tsc = pcr_clock_ns_to_cycles(a->cfg.stage_lead_us * 1000);
	a->dp.stall_tsc = pcr_clock_ns_to_cycles(PCR_STALL_US * 1000);
	a->dp.sync_park_tsc = pcr_clock_ns_to_cycles(PCR_SYNC_PARK_US * 1000);
	test_snapshot_hook(a);
	a->dp.guard_tsc = pcr_clock_ns_to_cycles(a->cfg.guard_ms * 1000000);
	a->dp.txn_idle_coarse = (uint32_t)(pcr_clock_ns_to_cycles(
						PCR_TXN_IDLE_US * 1000) >>
					PCR_COARSE_SHIFT);
	RTE_LCORE_FOREACH_WORKER(l) {
		struct pcr_lcore *lc = a->lcores[l];

		if (!(lc->roles & PCR_ROLE_RX))
			continue;
		for (p = 0; p < a->n_ports; p++) {
			pcr_lead_init(&lc->ft->sport[p].lead,
				      pcr_clock_ns_to_cycles(floor_us * 1000),
				      a->dp.stage_lead_tsc,
				      pcr_clock_ns_to_cycles(PCR_LEAD_WINDOW_MS *
							     1000000),
				      now);
			lc->st[p].stage_lead_tsc = a->dp.stage_lead_tsc;
			if (a->tree[p] == NULL)
				continue;
			lc->ft->sport[p].tree = a->tree[p];
			lc->ft->sport[p].held = rte_zmalloc_socket(
				"pcr_tree_held",
				sizeof(struct pcr_tree_held) *
					a->tree[p]->n_nodes,
				RTE_CACHE_LINE_SIZE, (int)rte_lcore_to_socket_id(l));
			if (lc->ft->sport[p].held == NULL)
				pcr_fatal("lcore %u: out of memory for the subscriber tree's staging",
					  l);
		}
		RTE_LCORE_FOREACH_WORKER(o) {
			if (o != l && (a->lcores[o]->roles & PCR_ROLE_RX))
				lc->peers[lc->n_peers++] = a->lcores[o];
		}
	}
}

/* Rates (RCU-published, see control.c) and the shared policies'
 * calendars (made with them). */
void
pcr_policies_init(struct pcr_app *a)
{
	size_t sz = rte_rcu_qsbr_get_memsize(RTE_MAX_LCORE);
	int rc;

	a->dp.qsbr = rte_zmalloc("pcr_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (a->dp.qsbr == NULL || rte_rcu_qsbr_init(a->dp.qsbr, RTE_MAX_LCORE) != 0)
		pcr_fatal("cannot set up RCU state for the workers");
	rc = pcr_rates_publish(a);
	if (rc != 0)
		pcr_fatal("cannot derive the rates: %s", strerror(-rc));
	rc = pcr_classtab_publish(a);
	if (rc != 0)
		pcr_fatal("cannot set up the class table: %s", strerror(-rc));
	/* completion order: nothing learned yet */
	for (unsigned int i = 0; i < PCR_MAX_CLASSES; i++)
		pcr_rank_table_reset(&a->dp.rank[i]);
}

/* The port's clock and send-on-timestamp, once it has started. */
static void
port_clock_setup(struct pcr_app *a, uint16_t p)
{
	struct pcr_port *pt = &a->ports[p];
	uint16_t q;
	int rc;

	rc = pcr_clock_nic_enable(p, (unsigned int)a->cfg.nic_clock_bits);
	pt->nic_clock = rc == 0;
	if (rc != 0 && rc != -ENOTSUP)
		PCR_LOG(WARNING, "port %u: NIC clock does not fit the TSC (%s)",
			p, strerror(-rc));
	if (pt->tx_offload && !pt->nic_clock) {
		PCR_LOG(WARNING,
			"port %u (%s): send-on-timestamp needs the NIC clock, which cannot be read: pacing in software",
			p, pt->name);
		pt->tx_offload = false;
	}
	if (pt->tx_offload) {
		for (q = 0; q < pt->n_txq; q++) {
			pt->txq[q]->ts_field = a->ts_field;
			pt->txq[q]->ts_flag = a->ts_flag;
			pt->txq[q]->offload_tsc = pcr_clock_ns_to_cycles(
				a->cfg.offload_horizon_us * 1000);
		}
		printf("pacer: port %u (%s): send-on-timestamp: the NIC holds packets up to %" PRIu64
		       " us ahead of departure\n", p, pt->name, a->cfg.offload_horizon_us);
	} else if (pt->tx_offload_capa) {
		printf("pacer: port %u (%s): pacing in software (send-on-timestamp offered; --offload-horizon 0)\n",
		       p, pt->name);
	} else {
		printf("pacer: port %u (%s): pacing in software (the PMD has no send-on-timestamp offload)\n",
		       p, pt->name);
	}
}

/* The wheel parameters of port @p p's TX queue @p q (@p name: 32 bytes,
 * the wheel's name); exits on a bad --slot / --horizon. */
static void
wheel_params(struct pcr_app *a, uint16_t p, uint16_t q,
	     unsigned int max_queued, char *name, struct pcr_wheel_params *wp)
{
	char err[256];

	if (q == 0)
		snprintf(name, 32, "port%u", p);
	else
		snprintf(name, 32, "port%uq%u", p, q);
	pcr_wheel_params_default(wp);
	wp->name = name;
	wp->socket_id = rte_eth_dev_socket_id(p);
	wp->tsc_hz = a->tsc_hz;
	wp->start_tsc = rte_rdtsc();
	wp->granularity_ns = a->cfg.slot_ns;
	wp->horizon_ns = pcr_wheel_horizon_ns(a->cfg.horizon_ms * 1000000ull,
					      a->cfg.horizon_policy);
	wp->horizon_policy = a->cfg.horizon_policy;
	wp->max_queued = max_queued;
	wp->drop_fn = pcr_wheel_drop_cb;
	if (wp->horizon_ns != a->cfg.horizon_ms * 1000000ull &&
	    pcr_wheel_params_check(wp, err, sizeof(err)) != 0)
		wp->horizon_ns = a->cfg.horizon_ms * 1000000ull; /* no room */
	if (pcr_wheel_params_check(wp, err, sizeof(err)) != 0) {
		PCR_LOG(ERR, "--slot %" PRIu64 " / --horizon %" PRIu64 ": %s",
			a->cfg.slot_ns, a->cfg.horizon_ms, err);
		pcr_usage_exit_eal();
	}
}

void
pcr_wheel_setup(struct pcr_app *a, uint16_t p, unsigned int max_queued)
{
	uint16_t q;

	a->ports[p].n_txq = (uint16_t)a->cfg.tx_queues;
	for (q = 0; q < a->ports[p].n_txq; q++) {
		struct pcr_wheel_params wp;
		struct pcr_txport *tp;
		char name[32];

		tp = rte_zmalloc("pcr_txport", sizeof(*tp), RTE_CACHE_LINE_SIZE);
		if (tp == NULL)
			pcr_fatal("out of memory for port %u TX state", p);
		tp->dp = &a->dp;
		tp->port = p;
		tp->queue = q;
		wheel_params(a, p, q, max_queued, name, &wp);
		wp.drop_arg = tp;
		tp->wheel = pcr_wheel_create(&wp);
		if (tp->wheel == NULL)
			pcr_fatal("port %u: cannot create the timing wheel of TX queue %u (%zu bytes): %s",
				  p, q, pcr_wheel_memsize(&wp),
				  rte_strerror(rte_errno));
		tp->gran_tsc = (a->cfg.slot_ns * a->tsc_hz + 999999999ull) /
			       1000000000ull;
		tp->hold_tsc = a->cfg.tx_hold_ms * (a->tsc_hz / 1000);
		test_wheel_hook(a, tp, wp.start_tsc);
		tp->tree = a->tree[p];
		if (tp->tree != NULL) {
			tp->node = rte_zmalloc("pcr_node_stats",
					       sizeof(*tp->node) *
						       tp->tree->n_nodes,
					       RTE_CACHE_LINE_SIZE);
			if (tp->node == NULL)
				pcr_fatal("port %u: out of memory for the subscriber tree's counters",
					  p);
		}
		a->ports[p].txq[q] = tp;
	}
}

/*
 * Touch the pool's memory once at start: without hugepages it is mapped
 * lazily, and the first packets would otherwise pay a page fault every
 * couple of mbufs on the RX lcore, holding up the TX side of the loop
 * (measured: departure error p99 6-10 ms over the first 2400 packets).
 */
void
pcr_pool_prefault_cb(struct rte_mempool *mp, void *opaque,
		     struct rte_mempool_memhdr *memhdr, unsigned int idx)
{
	volatile uint8_t *b = memhdr->addr;
	size_t *total = opaque, off;

	RTE_SET_USED(mp);
	RTE_SET_USED(idx);
	for (off = 0; off < memhdr->len; off += 4096)
		b[off] = b[off];
	*total += memhdr->len;
}

