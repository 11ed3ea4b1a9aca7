/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer: start-up, the control loop (main lcore, sleeping) and shutdown.
 *
 * Order of start-up: our own options and configuration are checked before
 * rte_eal_init(), so bad input exits 2 before anything is started; what
 * needs the EAL (ports named by the configuration exist, enough lcores) is
 * checked right after it, again before any port or worker starts.
 */

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_pdump.h>

#include "control.h"
#include "pacer.h"
#include "pcr_clock.h"

struct pcr_app pcr_app;

RTE_LOG_REGISTER(pcr_logtype, pacer.main, INFO);

static volatile sig_atomic_t signals_seen;
static volatile sig_atomic_t reloads_asked; /* SIGHUP: reload */
static bool pdump_on; /* rte_pdump_init() worked: uninit at exit */

/* signals closer together than this are one request (see control_loop) */
#define PCR_SIGNAL_MERGE_MS 200

static void
on_signal(int sig)
{
	(void)sig;
	signals_seen++;
}

static void
on_sighup(int sig)
{
	(void)sig;
	reloads_asked++;
}

/*
 * rte_eal_cleanup(), then the run's EAL runtime directory (/var/run/dpdk/
 * PREFIX as root), which DPDK 22.11 leaves behind: one per --file-prefix,
 * and tests and benchmarks give every run its own. rmdir() takes it only
 * when empty (a --no-shconf run's; a shared config's files stay, and it).
 * With telemetry on (the default) its socket is still in there: the EAL
 * unlinks it in an atexit() handler. So the directory is removed again by
 * runtime_dir_remove(), an atexit() handler of pacer's registered before
 * rte_eal_init(), which therefore runs after the EAL's. A primary process
 * with the shared configuration (a deployment, live capture) also removes
 * the files the EAL leaves there for its secondaries (config, hugepage_info,
 * fbarray_*, mp_socket*): once the primary is gone they describe nothing.
 * Only those names: anything else keeps the directory.
 */
static char runtime_dir[PATH_MAX];
static bool runtime_dir_ours; /* the primary's, with the shared config */

static void
runtime_dir_remove(void)
{
	static const char *const eal_files[] = {
		"config", "hugepage_info", "fbarray_", "mp_socket",
	};
	struct dirent *e;
	DIR *d;

	if (runtime_dir[0] == '\0' || rmdir(runtime_dir) == 0 ||
	    errno != ENOTEMPTY || !runtime_dir_ours)
		return;
	d = opendir(runtime_dir);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX + 256];
		size_t i;

		for (i = 0; i < RTE_DIM(eal_files); i++)
			if (strncmp(e->d_name, eal_files[i],
				    strlen(eal_files[i])) == 0)
				break;
		if (i == RTE_DIM(eal_files))
			continue;
		snprintf(path, sizeof(path), "%s/%s", runtime_dir, e->d_name);
		(void)unlink(path);
	}
	closedir(d);
	(void)rmdir(runtime_dir);
}

static void
eal_cleanup(void)
{
	snprintf(runtime_dir, sizeof(runtime_dir), "%s",
		 rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	(void)rmdir(runtime_dir);
}

/* Usage errors after rte_eal_init(): undo it and exit 2. */
static void __rte_noreturn
usage_exit_eal(void)
{
	eal_cleanup();
	exit(PCR_EXIT_USAGE);
}

static void __rte_noreturn
fatal(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	PCR_LOG(ERR, "%s", msg);
	eal_cleanup();
	exit(EXIT_FAILURE);
}

/* RX lcores among @p nw workers: one worker does RX and TX; else half the
 * workers (at most one per port) transmit, the others receive. */
static unsigned int
rx_lcore_count(unsigned int nw, unsigned int n_ports)
{
	return nw == 1 ? 1 : nw - RTE_MIN(n_ports, nw / 2);
}

/* EAL memory one flow table entry takes, all its parts (the rte_hash
 * entry, the flow, its staging state, its place in the transaction queue):
 * 205 bytes measured with 1M entries (the heap's free bytes before and
 * after, DPDK 22.11), with a tenth to spare. */
#define FLOWTAB_ENTRY_BYTES 224
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

static void wheel_params(struct pcr_app *a, uint16_t p,
			 unsigned int max_queued, char *name,
			 struct pcr_wheel_params *wp);

/*
 * The pool without --mbufs: a full horizon of 1500-byte frames at 1 gbit/s
 * plus what the rings hold, as far as the EAL's memory goes once the flow
 * tables and the wheels have theirs; the start line says what it holds.
 */
static unsigned int
default_mbufs(struct pcr_app *a, unsigned int n_ports, unsigned int n_rx,
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

		wheel_params(a, p, (unsigned int)want, name, &wp);
		reserve += pcr_wheel_memsize(&wp);
	}
	if (rte_malloc_get_socket_stats((int)rte_socket_id(), &ms) != 0)
		ms.heap_freesz_bytes = 0;
	fit = ms.heap_freesz_bytes > reserve ?
		      (ms.heap_freesz_bytes - reserve) / cost : 0;
	if (fit < rings + 1024)
		fatal("the EAL has %zu MiB free and flow tables and wheels take about %" PRIu64
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

static void
assign_lcores(struct pcr_app *a)
{
	unsigned int workers[RTE_MAX_LCORE], nw = 0, n_tx, n_rx, i, l;
	unsigned int rx_lcores[RTE_MAX_LCORE], next = 0;
	uint16_t p;

	RTE_LCORE_FOREACH_WORKER(l)
		workers[nw++] = l;
	a->n_workers = nw;
	for (i = 0; i < nw; i++) {
		struct pcr_lcore *lc = rte_zmalloc("pcr_lcore", sizeof(*lc),
						   RTE_CACHE_LINE_SIZE);

		if (lc == NULL)
			fatal("out of memory for lcore state");
		lc->lcore_id = workers[i];
		lc->st = rte_zmalloc("pcr_lstats",
				     sizeof(*lc->st) * a->n_ports,
				     RTE_CACHE_LINE_SIZE);
		if (lc->st == NULL)
			fatal("out of memory for lcore statistics");
		a->lcores[workers[i]] = lc;
	}
	if (nw == 1) {
		/* one worker does RX then TX in one loop */
		n_tx = 1;
		n_rx = 1;
		a->lcores[workers[0]]->roles = PCR_ROLE_RX | PCR_ROLE_TX;
		rx_lcores[0] = workers[0];
	} else {
		n_rx = rx_lcore_count(nw, a->n_ports);
		n_tx = nw - n_rx;
		for (i = 0; i < n_tx; i++)
			a->lcores[workers[i]]->roles = PCR_ROLE_TX;
		for (i = 0; i < n_rx; i++) {
			a->lcores[workers[n_tx + i]]->roles = PCR_ROLE_RX;
			rx_lcores[i] = workers[n_tx + i];
		}
	}
	/* egress ports round-robin over the TX lcores */
	for (p = 0; p < a->n_ports; p++) {
		struct pcr_lcore *lc = a->lcores[workers[p % n_tx]];

		lc->tx[lc->n_tx++] = a->ports[p].tx;
	}
	/* RX queues: as many per port as RX lcores, within the PMD's limit */
	for (p = 0; p < a->n_ports; p++) {
		struct rte_eth_dev_info info;
		uint16_t q;

		if (rte_eth_dev_info_get(p, &info) != 0)
			fatal("port %u: cannot read device info", p);
		a->ports[p].nb_rxq = (uint16_t)RTE_MIN(n_rx, info.max_rx_queues);
		if (a->ports[p].nb_rxq == 0)
			a->ports[p].nb_rxq = 1;
		for (q = 0; q < a->ports[p].nb_rxq; q++) {
			struct pcr_lcore *lc = a->lcores[rx_lcores[next++ % n_rx]];

			if (lc->n_rxq == PCR_MAX_RXQ)
				fatal("more than %d RX queues on lcore %u",
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
 *   descriptor ring is nearly full would.
 * And one for the wheel's consumer:
 * - PACER_TEST_WHEEL_HOLD_MS=MS (1..60000): every TX lcore's wheel clock
 *   stands at the wheel's start (tick 0) for MS from its first poll, as a
 *   stalled consumer would leave it: what arrives meanwhile is placed
 *   relative to the held clock, so with --horizon-policy cap a flood
 *   lands in one known slot (horizon - 1).
 */
static struct test_tx_hook {
	uint64_t budget;
	unsigned int share;
	uint64_t calls;
} test_tx_hook[PCR_MAX_PORTS];

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
test_tx_hooks(uint16_t p)
{
	struct test_tx_hook *h = &test_tx_hook[p];
	const char *v;

	if ((v = getenv("PACER_TEST_TX_BUDGET")) != NULL) {
		h->budget = strtoull(v, NULL, 10);
		if (rte_eth_add_tx_callback(p, 0, test_tx_budget_cb, h) == NULL)
			fatal("port %u: PACER_TEST_TX_BUDGET: no TX callbacks", p);
		PCR_LOG(NOTICE, "port %u: test hook: accepts %" PRIu64
			" packets, then none", p, h->budget);
	}
	if ((v = getenv("PACER_TEST_TX_SHARE")) != NULL) {
		h->share = (unsigned int)strtoul(v, NULL, 10);
		if (h->share < 1 || h->share > 100)
			fatal("PACER_TEST_TX_SHARE '%s': not a percentage in 1..100", v);
		if (rte_eth_add_tx_callback(p, 0, test_tx_share_cb, h) == NULL)
			fatal("port %u: PACER_TEST_TX_SHARE: no TX callbacks", p);
		PCR_LOG(NOTICE, "port %u: test hook: accepts %u %% of each burst, none of every fourth",
			p, h->share);
	}
}

static void
test_wheel_hook(struct pcr_app *a, struct pcr_txport *tp, uint64_t start_tsc)
{
	const char *v = getenv("PACER_TEST_WHEEL_HOLD_MS");
	char *end;
	unsigned long ms;

	if (v == NULL)
		return;
	errno = 0;
	ms = strtoul(v, &end, 10);
	if (errno != 0 || end == v || *end != '\0' || ms < 1 || ms > 60000)
		fatal("PACER_TEST_WHEEL_HOLD_MS '%s': not a time in 1..60000 ms", v);
	tp->test_hold_tsc = ms * (a->tsc_hz / 1000);
	tp->test_hold_at = start_tsc;
	PCR_LOG(NOTICE, "port %u: test hook: wheel clock held at its start for %lu ms from the first poll",
		tp->port, ms);
}
#else
static void
test_tx_hooks(uint16_t p)
{
	RTE_SET_USED(p);
}

static void
test_wheel_hook(struct pcr_app *a, struct pcr_txport *tp, uint64_t start_tsc)
{
	RTE_SET_USED(a);
	RTE_SET_USED(tp);
	RTE_SET_USED(start_tsc);
}
#endif

static void port_clock_setup(struct pcr_app *a, uint16_t p);

static void
port_setup(struct pcr_app *a, uint16_t p)
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
		fatal("port %u: cannot read device info: %s", p, strerror(-rc));
	pt->tx_offload_capa = (info.tx_offload_capa &
			       RTE_ETH_TX_OFFLOAD_SEND_ON_TIMESTAMP) != 0;
	if (pt->tx_offload_capa && a->cfg.offload_horizon_us != 0) {
		if (a->ts_field < 0 &&
		    rte_mbuf_dyn_tx_timestamp_register(&a->ts_field,
						       &a->ts_flag) != 0)
			fatal("cannot register the Tx timestamp dynamic field: %s",
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
	rc = rte_eth_dev_configure(p, pt->nb_rxq, 1, &conf);
	if (rc != 0)
		fatal("port %u: configure (%u RX queues, 1 TX queue) failed: %s",
		      p, pt->nb_rxq, strerror(-rc));
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p, &rxd, &txd);
	if (rc != 0)
		fatal("port %u: descriptor counts: %s", p, strerror(-rc));
	for (q = 0; q < pt->nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(p, q, rxd, (unsigned int)socket,
					    NULL, a->pool);
		if (rc != 0)
			fatal("port %u: RX queue %u setup failed: %s", p, q,
			      strerror(-rc));
	}
	rc = rte_eth_tx_queue_setup(p, 0, txd, (unsigned int)socket, NULL);
	if (rc != 0)
		fatal("port %u: TX queue setup failed: %s", p, strerror(-rc));
	test_tx_hooks(p);
	rc = rte_eth_dev_start(p);
	if (rc != 0)
		fatal("port %u: start failed: %s", p, strerror(-rc));
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
static void
stage_setup(struct pcr_app *a)
{
	uint64_t floor_us = RTE_MAX(a->cfg.stage_lead_min_us,
				    a->cfg.offload_horizon_us);
	uint64_t now = rte_rdtsc();
	unsigned int l, o;
	uint16_t p;

	a->stage_lead_tsc = pcr_clock_ns_to_cycles(a->cfg.stage_lead_us * 1000);
	a->guard_tsc = pcr_clock_ns_to_cycles(a->cfg.guard_ms * 1000000);
	a->txn_idle_coarse = (uint32_t)(pcr_clock_ns_to_cycles(
						PCR_TXN_IDLE_US * 1000) >>
					PCR_COARSE_SHIFT);
	RTE_LCORE_FOREACH_WORKER(l) {
		struct pcr_lcore *lc = a->lcores[l];

		if (!(lc->roles & PCR_ROLE_RX))
			continue;
		for (p = 0; p < a->n_ports; p++) {
			pcr_lead_init(&lc->ft->sport[p].lead,
				      pcr_clock_ns_to_cycles(floor_us * 1000),
				      a->stage_lead_tsc,
				      pcr_clock_ns_to_cycles(PCR_LEAD_WINDOW_MS *
							     1000000),
				      now);
			lc->st[p].stage_lead_tsc = a->stage_lead_tsc;
		}
		RTE_LCORE_FOREACH_WORKER(o) {
			if (o != l && (a->lcores[o]->roles & PCR_ROLE_RX))
				lc->peers[lc->n_peers++] = a->lcores[o];
		}
	}
}

/* Rates (RCU-published, see control.c) and the shared policies'
 * calendars (made with them). */
static void
policies_init(struct pcr_app *a)
{
	size_t sz = rte_rcu_qsbr_get_memsize(RTE_MAX_LCORE);
	int rc;

	a->qsbr = rte_zmalloc("pcr_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (a->qsbr == NULL || rte_rcu_qsbr_init(a->qsbr, RTE_MAX_LCORE) != 0)
		fatal("cannot set up RCU state for the workers");
	rc = pcr_rates_publish(a);
	if (rc != 0)
		fatal("cannot derive the rates: %s", strerror(-rc));
	rc = pcr_classtab_publish(a);
	if (rc != 0)
		fatal("cannot set up the class table: %s", strerror(-rc));
	/* completion order: nothing learned yet */
	for (unsigned int i = 0; i < PCR_MAX_CLASSES; i++)
		pcr_rank_table_reset(&a->rank[i]);
}

/* The port's clock and send-on-timestamp, once it has started. */
static void
port_clock_setup(struct pcr_app *a, uint16_t p)
{
	struct pcr_port *pt = &a->ports[p];
	struct pcr_txport *tp = pt->tx;
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
		tp->ts_field = a->ts_field;
		tp->ts_flag = a->ts_flag;
		tp->offload_tsc = pcr_clock_ns_to_cycles(a->cfg.offload_horizon_us * 1000);
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

/* Port @p p's wheel parameters (@p name: 32 bytes, the wheel's name);
 * exits on a bad --slot / --horizon. */
static void
wheel_params(struct pcr_app *a, uint16_t p, unsigned int max_queued,
	     char *name, struct pcr_wheel_params *wp)
{
	char err[256];

	snprintf(name, 32, "port%u", p);
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
		usage_exit_eal();
	}
}

static void
wheel_setup(struct pcr_app *a, uint16_t p, unsigned int max_queued)
{
	struct pcr_wheel_params wp;
	struct pcr_txport *tp;
	char name[32];

	tp = rte_zmalloc("pcr_txport", sizeof(*tp), RTE_CACHE_LINE_SIZE);
	if (tp == NULL)
		fatal("out of memory for port %u TX state", p);
	tp->port = p;
	tp->queue = 0;
	wheel_params(a, p, max_queued, name, &wp);
	wp.drop_arg = tp;
	tp->wheel = pcr_wheel_create(&wp);
	if (tp->wheel == NULL)
		fatal("port %u: cannot create its timing wheel (%zu bytes): %s",
		      p, pcr_wheel_memsize(&wp), rte_strerror(rte_errno));
	tp->gran_tsc = (a->cfg.slot_ns * a->tsc_hz + 999999999ull) / 1000000000ull;
	tp->hold_tsc = a->cfg.tx_hold_ms * (a->tsc_hz / 1000);
	test_wheel_hook(a, tp, wp.start_tsc);
	a->ports[p].tx = tp;
}

/*
 * Touch the pool's memory once at start: without hugepages it is mapped
 * lazily, and the first packets would otherwise pay a page fault every
 * couple of mbufs on the RX lcore, holding up the TX side of the loop
 * (measured: departure error p99 6-10 ms over the first 2400 packets).
 */
static void
pool_prefault_cb(struct rte_mempool *mp, void *opaque,
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

/* Total received so far (approximate, for idle detection only). */
static uint64_t
rx_total(void)
{
	uint64_t n = 0;
	unsigned int l, p;

	for (l = 0; l < RTE_MAX_LCORE; l++) {
		struct pcr_lcore *lc = pcr_app.lcores[l];

		if (lc == NULL)
			continue;
		for (p = 0; p < pcr_app.n_ports; p++)
			n += __atomic_load_n(&lc->st[p].rx_packets,
					     __ATOMIC_RELAXED);
	}
	return n;
}

static bool
all_queues_empty(void)
{
	unsigned int l;
	uint16_t p;

	/* held in staging (a RX lcore's, written by it alone) */
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		struct pcr_lcore *lc = pcr_app.lcores[l];

		if (lc != NULL &&
		    __atomic_load_n(&lc->staged_ports, __ATOMIC_RELAXED) != 0)
			return false;
	}
	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_txport *tp = pcr_app.ports[p].tx;
		struct pcr_wheel_stats ws;

		pcr_wheel_stats_get(tp->wheel, &ws);
		if (ws.queued != 0 || __atomic_load_n(&tp->n_pend, __ATOMIC_RELAXED))
			return false;
	}
	return true;
}

static bool
all_tx_done(void)
{
	unsigned int l;

	for (l = 0; l < RTE_MAX_LCORE; l++) {
		struct pcr_lcore *lc = pcr_app.lcores[l];

		if (lc != NULL && (lc->roles & PCR_ROLE_TX) &&
		    !__atomic_load_n(&lc->tx_done, __ATOMIC_ACQUIRE))
			return false;
	}
	return true;
}

/*
 * Link status, polled by the control lcore (every 10 ms, and once before
 * forwarding starts). While a port's link is down its TX lcore drops what
 * falls due on it, counted link_down: a PMD may take packets on a down
 * link and lose them (net_tap, net_af_packet) or refuse them until the
 * hold runs out; either way they cannot leave on time. A PMD that cannot
 * tell (-ENOTSUP) counts as up.
 */
static void
link_poll(struct pcr_app *a, bool first)
{
	uint16_t p;

	for (p = 0; p < a->n_ports; p++) {
		struct pcr_port *pt = &a->ports[p];
		struct rte_eth_link l;
		bool up = true;

		memset(&l, 0, sizeof(l));
		if (rte_eth_link_get_nowait(p, &l) == 0)
			up = l.link_status == RTE_ETH_LINK_UP;
		if (!first && up == pt->link_up)
			continue;
		if (!first)
			__atomic_store_n(&pt->link_changes, pt->link_changes + 1,
					 __ATOMIC_RELAXED);
		__atomic_store_n(&pt->link_up, up, __ATOMIC_RELAXED);
		if (pt->tx != NULL)
			__atomic_store_n(&pt->tx->link_down, !up,
					 __ATOMIC_RELAXED);
		if (up && !first)
			PCR_LOG(NOTICE, "port %u: link up: sending again", p);
		else if (!up)
			PCR_LOG(NOTICE,
				"port %u: link down%s: what falls due on it is dropped (counted link_down)",
				p, first ? " at start" : "");
	}
}

/* A NIC's link takes a moment after start: wait for it, as testpmd does,
 * but never more than 3 s. */
static void
link_wait(struct pcr_app *a)
{
	unsigned int i;
	uint16_t p;

	for (i = 0; i < 60; i++) {
		for (p = 0; p < a->n_ports; p++) {
			struct rte_eth_link l;

			memset(&l, 0, sizeof(l));
			if (rte_eth_link_get_nowait(p, &l) == 0 &&
			    l.link_status != RTE_ETH_LINK_UP)
				break;
		}
		if (p == a->n_ports || signals_seen != 0)
			break;
		rte_delay_us_sleep(50000);
	}
	link_poll(a, true);
}

static void
set_state(enum pcr_state s)
{
	__atomic_store_n(&pcr_app.state, s, __ATOMIC_RELEASE);
}

static void
control_loop(struct pcr_app *a)
{
	const struct pcr_config *c = &a->cfg;
	struct pcr_snapshot *snap, *prev;
	uint64_t last_rx = 0, last_rx_tsc = rte_rdtsc();
	uint64_t next_stats = c->stats_period_s != 0 ?
				      rte_rdtsc() + c->stats_period_s * a->tsc_hz :
				      UINT64_MAX;
	uint64_t next_link = rte_rdtsc();
	bool script_running = c->cmdline_file[0] != '\0';
	bool fwd_decided = false, quit_seen = false;
	uint64_t first_signal_tsc = 0;
	int handled = 0, reloads_done = 0;

	snap = malloc(sizeof(*snap));
	prev = malloc(sizeof(*prev));
	if (snap == NULL || prev == NULL)
		fatal("out of memory for statistics");
	pcr_stats_snapshot(prev);
	for (;;) {
		uint64_t now;
		uint32_t st;
		bool quit;

		/* 2 ms, or less when a key is pressed at the prompt */
		{
			struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };

			poll(&pfd, c->interactive && !script_running ? 1 : 0, 2);
		}
		pcr_ctl_lock();
		pcr_ctlsock_poll();
		if (script_running || c->interactive) {
			script_running = pcr_cli_poll();
			if (!script_running && !fwd_decided) {
				/* after the script, -a (the default without -i) */
				fwd_decided = true;
				if (c->auto_start && !a->fwd_touched)
					__atomic_store_n(&a->forwarding, true,
							 __ATOMIC_RELEASE);
			}
		}
		if (reloads_asked != reloads_done) {
			/* SIGHUP (systemctl reload): as the reload command */
			char what[1024], err[1024];

			reloads_done = reloads_asked;
			/* the control layer logs what a reload changed */
			if (pcr_ctl_reload(what, sizeof(what), err, sizeof(err)) != 0)
				PCR_LOG(ERR, "SIGHUP: %s", err);
		}
		st = __atomic_load_n(&a->state, __ATOMIC_ACQUIRE);
		now = rte_rdtsc();
		quit = __atomic_load_n(&a->quit, __ATOMIC_ACQUIRE);
		if (signals_seen != handled && handled != 0 &&
		    now - first_signal_tsc < a->tsc_hz / 1000 * PCR_SIGNAL_MERGE_MS) {
			/* timeout(1) signals the child and then its process
			 * group, and sudo relays what the terminal already
			 * sent: one request, two signals microseconds apart.
			 * Only a signal after the merge window is a second
			 * request. */
			PCR_LOG(INFO, "signal repeated within %u ms: taken as the same request",
				PCR_SIGNAL_MERGE_MS);
			handled = signals_seen;
		}
		if (signals_seen != handled || (quit && !quit_seen)) {
			bool first = handled == 0 && !quit_seen;

			if (handled == 0 && signals_seen != 0)
				first_signal_tsc = now;
			handled = signals_seen;
			quit_seen = quit_seen || quit;
			if (first && c->drain_on_exit && st == PCR_RUN) {
				PCR_LOG(NOTICE,
					"%s: no longer receiving, sending what is queued on time (signal again to drop it)",
					quit ? "quit" : "signal");
				set_state(PCR_STOP_RX);
			} else {
				PCR_LOG(NOTICE,
					"%s: no longer receiving, dropping what is queued",
					quit && handled == 0 ? "quit" : "signal");
				set_state(PCR_STOP_DROP);
			}
			st = __atomic_load_n(&a->state, __ATOMIC_ACQUIRE);
		}
		if (st == PCR_RUN && c->exit_on_idle_ms != 0 && !script_running &&
		    __atomic_load_n(&a->forwarding, __ATOMIC_ACQUIRE)) {
			uint64_t rx = rx_total();

			if (rx != last_rx) {
				last_rx = rx;
				last_rx_tsc = now;
			} else if (now - last_rx_tsc >=
					   c->exit_on_idle_ms * (a->tsc_hz / 1000) &&
				   all_queues_empty()) {
				set_state(PCR_STOP_RX);
				st = PCR_STOP_RX;
			}
		}
		if (st != PCR_RUN && all_tx_done()) {
			set_state(PCR_STOP);
			pcr_ctl_unlock();
			break;
		}
		if (now >= next_stats) {
			struct pcr_snapshot *t;

			pcr_stats_snapshot(snap);
			pcr_stats_print_line(snap, prev, stdout);
			if (snap->consistent)
				pcr_stats_check(snap, stderr);
			t = prev;
			prev = snap;
			snap = t;
			next_stats += c->stats_period_s * a->tsc_hz;
		}
		/* TSC re-measured (and NIC clocks refitted) once a period;
		 * rates follow the TSC's measured frequency */
		if (pcr_clock_poll()) {
			int rc = pcr_rates_publish(a);

			if (rc != 0)
				PCR_LOG(ERR, "rates not re-derived for the new TSC frequency: %s",
					strerror(-rc));
		}
		if (now >= next_link) {
			link_poll(a, false);
			pcr_rank_poll(now);
			next_link = now + a->tsc_hz / 100;
		}
		pcr_ctl_unlock();
	}
	free(snap);
	free(prev);
}

int
main(int argc, char **argv)
{
	struct pcr_app *a = &pcr_app;
	static const struct rte_mbuf_dynfield flow_field = {
		.name = "pcr_dynfield_flow",
		.size = sizeof(struct pcr_flow *),
		.align = __alignof__(struct pcr_flow *),
	};
	struct pcr_snapshot *fin;
	struct pcr_clock_params clock_params;
	unsigned int nb_mbufs, l;
	size_t pool_bytes = 0;
	int dd = -1, i, rc, eal_argc, status = EXIT_SUCCESS;
	int64_t in_use;
	uint16_t p, n;

	/* our arguments are those after "--" */
	for (i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			dd = i;
			break;
		}
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 ||
			 strcmp(argv[1], "--help") == 0)) {
		pcr_options_usage(stdout, argv[0]);
		return 0;
	}
	{
		int app_argc = dd < 0 ? 1 : argc - dd;
		char **app_argv = dd < 0 ? argv : argv + dd;
		char *saved = app_argv[0];

		app_argv[0] = argv[0];
		rc = pcr_options_parse(app_argc, app_argv, &a->cfg);
		/* for reload: the EAL may rewrite argv's slots, not the strings */
		a->argv = calloc((size_t)app_argc + 1, sizeof(*a->argv));
		if (a->argv != NULL) {
			memcpy(a->argv, app_argv, (size_t)app_argc * sizeof(*a->argv));
			a->argc = app_argc;
		}
		app_argv[0] = saved;
		if (rc > 0)
			return 0;
		if (rc < 0)
			return PCR_EXIT_USAGE;
	}
	eal_argc = dd < 0 ? argc : dd;
	/* from here on a signal stops the run cleanly, however early */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_sighup);

	/* before rte_eal_init(): runs after the EAL's own atexit handlers */
	atexit(runtime_dir_remove);
	rc = rte_eal_init(eal_argc, argv);
	if (rc < 0) {
		PCR_LOG(ERR, "EAL initialisation failed: %s",
			rte_strerror(rte_errno));
		return PCR_EXIT_USAGE;
	}
	runtime_dir_ours = rte_eal_process_type() == RTE_PROC_PRIMARY;
	n = rte_eth_dev_count_avail();
	if (n == 0) {
		PCR_LOG(ERR,
			"no ports: give one with --vdev (e.g. net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap) or bind a NIC");
		usage_exit_eal();
	}
	if (n > PCR_MAX_PORTS) {
		PCR_LOG(ERR, "%u ports, at most %d supported", n,
			PCR_MAX_PORTS);
		usage_exit_eal();
	}
	if (a->cfg.max_port_named >= (int)n) {
		PCR_LOG(ERR,
			"%s: [port %d] does not exist (ports 0..%u)",
			a->cfg.config_file, a->cfg.max_port_named, n - 1);
		usage_exit_eal();
	}
	for (p = 0; p < n; p++)
		if (!rte_eth_dev_is_valid_port(p)) {
			PCR_LOG(ERR, "port ids are not contiguous (port %u missing)",
				p);
			usage_exit_eal();
		}
	if (rte_lcore_count() < 2) {
		PCR_LOG(ERR,
			"needs 2 lcores or more (e.g. -l 0,1): the main one for control, workers for RX/TX");
		usage_exit_eal();
	}
	clock_params.calib_ms = (uint32_t)a->cfg.tsc_calib_ms;
	clock_params.period_ms = (uint32_t)a->cfg.clock_period_ms;
	clock_params.window = PCR_CLOCK_WINDOW_DEFAULT;
	clock_params.use_eal = !a->cfg.tsc_measure;
	if (pcr_clock_init(&clock_params) != 0)
		fatal("no TSC frequency");
	a->tsc_hz = pcr_clock_tsc_hz();
	a->ts_field = -1;
	if (a->cfg.tsc_measure)
		printf("pacer: TSC %" PRIu64 " Hz, measured over %" PRIu64
		       " ms against CLOCK_MONOTONIC_RAW; the EAL's estimate is %" PRIu64
		       " Hz (tsc_ppm %+.1f)\n",
		       a->tsc_hz, a->cfg.tsc_calib_ms, pcr_clock_tsc_hz_eal(),
		       pcr_clock_tsc_ppm());
	else
		printf("pacer: TSC %" PRIu64 " Hz, the EAL's estimate (--tsc-measure no); measured: tsc_ppm %+.1f\n",
		       a->tsc_hz, pcr_clock_tsc_ppm());
	a->start_tsc = a->epoch_tsc = rte_rdtsc();
	a->n_ports = n;
	for (p = 0; p < n; p++) {
		a->ports[p].id = p;
		a->ports[p].peer = (p ^ 1) < n ? (p ^ 1) : p;
		rte_eth_dev_get_name_by_port(p, a->ports[p].name);
	}
	if (n > 1 && (n & 1))
		PCR_LOG(WARNING, "port %u has no peer: it sends back out of itself",
			n - 1);

	a->dep_dynfield = pcr_wheel_dynfield_register();
	a->flow_dynfield = rte_mbuf_dynfield_register(&flow_field);
	if (a->dep_dynfield < 0 || a->flow_dynfield < 0)
		fatal("cannot register mbuf dynamic fields: %s",
		      rte_strerror(rte_errno));

	nb_mbufs = a->cfg.mbufs != 0 ? (unsigned int)a->cfg.mbufs :
				       default_mbufs(a, n,
						     rx_lcore_count(rte_lcore_count() - 1, n),
						     rte_lcore_count());
	a->pool = rte_pktmbuf_pool_create("pcr_mbufs", nb_mbufs,
					  RTE_MIN(256u, nb_mbufs / 16), 0,
					  RTE_MBUF_DEFAULT_BUF_SIZE,
					  (int)rte_socket_id());
	if (a->pool == NULL)
		fatal("cannot create a pool of %u mbufs (%.0f MiB): %s; give --mbufs or more memory (-m)",
		      nb_mbufs, (double)nb_mbufs * (RTE_MBUF_DEFAULT_BUF_SIZE + 128) / 1048576,
		      rte_strerror(rte_errno));

	/* also what the pool takes: without hugepages a whole 4 KiB page an
	 * mbuf (the mempool keeps an object within a page) */
	rte_mempool_mem_iter(a->pool, pool_prefault_cb, &pool_bytes);
	for (p = 0; p < n; p++)
		wheel_setup(a, p, nb_mbufs);
	policies_init(a);
	assign_lcores(a);
	RTE_LCORE_FOREACH_WORKER(l) {
		struct pcr_lcore *lc = a->lcores[l];

		if ((lc->roles & PCR_ROLE_RX) &&
		    pcr_flowtab_create(lc, a->cfg.max_flows) != 0)
			fatal("lcore %u: cannot create a flow table of %" PRIu64
			      " entries: give --max-flows or more memory (-m)",
			      l, a->cfg.max_flows);
	}
	stage_setup(a);
	for (p = 0; p < n; p++)
		port_setup(a, p);
	link_wait(a);

	printf("pacer: %u port(s), %u worker lcore(s), %u mbufs (%zu bytes), TSC %" PRIu64
	       " Hz, slot %" PRIu64 " ns, horizon %" PRIu64 " ms (%s)\n",
	       n, a->n_workers, nb_mbufs, pool_bytes, a->tsc_hz, a->cfg.slot_ns,
	       a->cfg.horizon_ms,
	       a->cfg.horizon_policy == PCR_WHEEL_HORIZON_CAP ? "cap" : "drop");
	if (a->cfg.flow_queue_ms != 0)
		printf("pacer: a flow holds at most %" PRIu64
		       " ms of queue at the tightest rate it is under (--flow-queue; 0 = up to the horizon)\n",
		       a->cfg.flow_queue_ms);
	RTE_LCORE_FOREACH_WORKER(l) {
		struct pcr_lcore *lc = a->lcores[l];
		unsigned int k;

		printf("pacer: lcore %u:", l);
		for (k = 0; k < lc->n_rxq; k++)
			printf(" rx port %u queue %u -> port %u;", lc->rxq[k].port,
			       lc->rxq[k].queue, lc->rxq[k].egress);
		for (k = 0; k < lc->n_tx; k++)
			printf(" tx port %u;", lc->tx[k]->port);
		printf("\n");
	}
	fflush(stdout);

	if (pcr_cli_init(&a->cfg) != 0)
		fatal("cannot set up the command line");
	if (pcr_telemetry_init() != 0)
		fatal("cannot register the telemetry commands");
	/* live capture: dpdk-dumpcap / dpdk-pdump, secondary processes that
	 * attach through the shared configuration (not with --no-shconf) */
	if (rte_pdump_init() == 0) {
		pdump_on = true;
		printf("pacer: live capture on (dpdk-dumpcap --file-prefix=%s -i PORT)\n",
		       strrchr(rte_eal_get_runtime_dir(), '/') + 1);
	} else {
		PCR_LOG(INFO, "live capture off: %s (it needs the shared configuration: no --no-shconf)",
			rte_strerror(rte_errno));
	}
	if (pcr_ctlsock_init(a->cfg.control_socket) != 0)
		fatal("cannot set up the control socket (--control-socket none for none)");
	/* its file goes before the runtime directory on any exit */
	atexit(pcr_ctlsock_close);
	/* with a script, forwarding waits for it (or its `start`) */
	a->forwarding = a->cfg.auto_start && a->cfg.cmdline_file[0] == '\0';
	RTE_LCORE_FOREACH_WORKER(l)
		rte_eal_remote_launch(pcr_worker_main, a->lcores[l], l);

	control_loop(a);
	rte_eal_mp_wait_lcore();
	pcr_cli_fini();
	pcr_ctlsock_close();
	if (pdump_on)
		rte_pdump_uninit();
	/* telemetry callbacks from here on answer -EBUSY */
	pcr_ctl_lock();
	a->closing = true;
	pcr_ctl_unlock();

	fin = malloc(sizeof(*fin));
	if (fin == NULL)
		fatal("out of memory");
	pcr_stats_snapshot(fin);
	if (pcr_stats_check(fin, stderr) != 0)
		status = EXIT_FAILURE;

	for (p = 0; p < n; p++) {
		if (a->ports[p].started) {
			rte_eth_dev_stop(p);
			rte_eth_dev_close(p);
		}
	}
	for (p = 0; p < n; p++) {
		pcr_wheel_free(a->ports[p].tx->wheel);
		a->ports[p].tx->wheel = NULL;
	}
	in_use = (int64_t)rte_mempool_in_use_count(a->pool);
	pcr_stats_print_final(fin, stdout);
	printf("mbufs in use at exit: %" PRId64 " of %u\n", in_use, nb_mbufs);
	if (in_use != 0) {
		PCR_LOG(ERR, "%" PRId64 " mbufs not returned to the pool",
			in_use);
		status = EXIT_FAILURE;
	}
	if (a->cfg.stats_json[0] != '\0' &&
	    pcr_stats_write_json(fin, a->cfg.stats_json, in_use) != 0)
		status = EXIT_FAILURE;
	free(fin);

	RTE_LCORE_FOREACH_WORKER(l) {
		struct pcr_lcore *lc = a->lcores[l];

		pcr_flowtab_free(lc->ft);
		rte_free(lc->st);
		rte_free(lc);
		a->lcores[l] = NULL;
	}
	for (p = 0; p < n; p++)
		rte_free(a->ports[p].tx);
	pcr_rates_free(a);
	pcr_classtab_free(a);
	rte_free(a->qsbr);
	pcr_clock_fini();
	rte_mempool_free(a->pool);
	eal_cleanup();
	return status;
}
