/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer: start-up (its steps in setup.c), the control loop (main lcore,
 * sleeping: signals, reload, the control socket, the prompt, links,
 * statistics, the clock) and shutdown.
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

#include "config.h"
#include "control.h"
#include "dataplane.h"
#include "pacer.h"
#include "setup.h"
#include "snapshot.h"
#include "pcr_clock.h"

struct pcr_app pcr_app;

RTE_LOG_REGISTER(pcr_logtype, pacer.main, INFO);

static volatile sig_atomic_t signals_seen;
static volatile sig_atomic_t reloads_asked; /* SIGHUP: reload */
static volatile sig_atomic_t reload_pid;    /* who sent the last one */
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
on_sighup(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	reload_pid = si != NULL ? si->si_pid : 0;
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
void __rte_noreturn
pcr_usage_exit_eal(void)
{
	eal_cleanup();
	exit(PCR_EXIT_USAGE);
}

void __rte_noreturn
pcr_fatal(const char *fmt, ...)
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
		struct pcr_txport *tp;
		uint16_t q;

		PCR_TXQ_FOREACH(&pcr_app.ports[p], q, tp) {
			struct pcr_wheel_stats ws;

			pcr_wheel_stats_get(tp->wheel, &ws);
			if (ws.queued != 0 ||
			    __atomic_load_n(&tp->n_pend, __ATOMIC_RELAXED))
				return false;
		}
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
	struct pcr_txport *tp;
	uint16_t p, q;

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
		PCR_TXQ_FOREACH(pt, q, tp)
			__atomic_store_n(&tp->link_down, !up, __ATOMIC_RELAXED);
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
	__atomic_store_n(&pcr_app.dp.state, s, __ATOMIC_RELEASE);
}

/* Packets dropped for port @p p under --max-late so far: refused by RX
 * lcores, dropped by its TX lcore. */
static uint64_t
drop_late_total(const struct pcr_app *a, uint16_t p)
{
	const struct pcr_txport *tp;
	uint64_t n = 0;
	unsigned int l;
	uint16_t q;

	PCR_TXQ_FOREACH(&a->ports[p], q, tp)
		n += __atomic_load_n(&tp->drop_late, __ATOMIC_RELAXED);
	for (l = 0; l < RTE_MAX_LCORE; l++)
		if (a->lcores[l] != NULL && a->lcores[l]->st != NULL)
			n += __atomic_load_n(&a->lcores[l]->st[p].drop_late,
					     __ATOMIC_RELAXED);
	return n;
}

/*
 * The TX side falling behind (issue 20): one line when a port's TX lcore
 * is behind (it has sent what is due more than --max-late late for longer
 * than that, PCR_BEHIND_WARN_US with --max-late 0: dataplane.c,
 * tx_behind()), and one once it is not (it has sent on time for a second),
 * with the worst it reached and what was refused meanwhile.
 */
static void
behind_watch(struct pcr_app *a, uint64_t now)
{
	static struct {
		bool on;
		uint64_t since, worst, drop0;
	} w[PCR_MAX_PORTS];
	uint64_t max_late = a->cfg.max_late_us;
	uint16_t p;

	for (p = 0; p < a->n_ports; p++) {
		uint64_t b = 0;
		uint16_t q;

		for (q = 0; q < a->ports[p].n_txq; q++)
			b = RTE_MAX(b, __atomic_load_n(&a->ports[p].tx_behind_tsc[q],
						       __ATOMIC_RELAXED));

		if (!w[p].on) {
			if (b == 0)
				continue;
			w[p].on = true;
			w[p].since = now;
			w[p].worst = b;
			w[p].drop0 = drop_late_total(a, p);
			/* it went behind a while ago (it sent more than the
			 * bound late for longer than that) and may be
			 * catching up now: say both, not one as the other */
			if (max_late != 0)
				PCR_LOG(WARNING,
					"port %u: the TX lcore cannot keep up: it sent what was due more than --max-late %" PRIu64
					" us late for longer than that (now %.1f ms late); refusing at RX what would leave later (drop_late)",
					p, max_late, pcr_stats_ns(b) / 1e6);
			else
				PCR_LOG(WARNING,
					"port %u: the TX lcore cannot keep up: it sent what was due more than %u ms late for longer than that (now %.1f ms late; --max-late 0: nothing is refused, packets leave that late)",
					p, PCR_BEHIND_WARN_US / 1000, pcr_stats_ns(b) / 1e6);
			continue;
		}
		w[p].worst = RTE_MAX(w[p].worst, b);
		if (b != 0)
			continue;
		w[p].on = false;
		PCR_LOG(NOTICE,
			"port %u: the TX lcore keeps up again (behind for %.1f s, the last second of it on time; at worst %.1f ms late); %" PRIu64
			" packets dropped for it meanwhile (drop_late)",
			p, (double)(now - w[p].since) / (double)a->tsc_hz,
			pcr_stats_ns(w[p].worst) / 1e6,
			drop_late_total(a, p) - w[p].drop0);
	}
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
		pcr_fatal("out of memory for statistics");
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
		if (rte_rdtsc() >= pcr_tree_sample_due(a))
			pcr_tree_sample(a, rte_rdtsc());
		pcr_ctlsock_poll();
		if (script_running || c->interactive) {
			script_running = pcr_cli_poll();
			if (!script_running && !fwd_decided) {
				/* after the script, -a (the default without -i) */
				fwd_decided = true;
				if (c->auto_start && !a->fwd_touched)
					__atomic_store_n(&a->dp.forwarding, true,
							 __ATOMIC_RELEASE);
			}
		}
		if (reloads_asked != reloads_done) {
			/* SIGHUP (systemctl reload): as the reload command */
			char what[1024], err[1024];

			reloads_done = reloads_asked;
			/* the control layer logs what a reload changed, and
			 * who sent the signal (systemctl reload runs pacerctl
			 * reload instead, which hears why one is refused) */
			{
				char who[64];

				snprintf(who, sizeof(who), "SIGHUP from pid %d",
					 (int)reload_pid);
				pcr_ctl_origin_set(who, 0);
			}
			if (pcr_ctl_reload(what, sizeof(what), err, sizeof(err)) != 0)
				PCR_LOG(ERR, "SIGHUP from pid %d: %s", (int)reload_pid,
					err);
			pcr_ctl_origin_set(NULL, 0);
		}
		st = __atomic_load_n(&a->dp.state, __ATOMIC_ACQUIRE);
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
			st = __atomic_load_n(&a->dp.state, __ATOMIC_ACQUIRE);
		}
		if (st == PCR_RUN && c->exit_on_idle_ms != 0 && !script_running &&
		    __atomic_load_n(&a->dp.forwarding, __ATOMIC_ACQUIRE)) {
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
			pcr_stats_rate_poll(now);
			pcr_rank_poll(now);
			behind_watch(a, now);
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
	/* a staged packet's arrival, for the delay the AQM judges it on */
	static const struct rte_mbuf_dynfield arrival_field = {
		.name = "pcr_dynfield_arrival",
		.size = sizeof(uint64_t),
		.align = __alignof__(uint64_t),
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
	/* the subscriber files before anything starts: a bad one is a usage
	 * error (exit 2) */
	if (pcr_tree_load(a) != 0) {
		pcr_tree_free(a);
		return PCR_EXIT_USAGE;
	}
	eal_argc = dd < 0 ? argc : dd;
	/* from here on a signal stops the run cleanly, however early */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_sighup;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGHUP, &sa, NULL);
	}

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
		pcr_usage_exit_eal();
	}
	if (n > PCR_MAX_PORTS) {
		PCR_LOG(ERR, "%u ports, at most %d supported", n,
			PCR_MAX_PORTS);
		pcr_usage_exit_eal();
	}
	if (a->cfg.max_port_named >= (int)n) {
		PCR_LOG(ERR,
			"%s: [port %d] does not exist (ports 0..%u)",
			a->cfg.config_file, a->cfg.max_port_named, n - 1);
		pcr_usage_exit_eal();
	}
	for (p = 0; p < n; p++)
		if (!rte_eth_dev_is_valid_port(p)) {
			PCR_LOG(ERR, "port ids are not contiguous (port %u missing)",
				p);
			pcr_usage_exit_eal();
		}
	/* the control socket before anything starts: a path taken by
	 * another pacer, or by a file that is not a socket, is a
	 * configuration error (exit 2) */
	rc = pcr_ctlsock_init(&a->cfg);
	if (rc == -EINVAL || rc == -EEXIST)
		pcr_usage_exit_eal();
	if (rc != 0)
		pcr_fatal("cannot set up the control socket (--control-socket none for none)");
	/* its file goes before the runtime directory on any exit */
	atexit(pcr_ctlsock_close);
	if (rte_lcore_count() < 2) {
		PCR_LOG(ERR,
			"needs 2 lcores or more (e.g. -l 0,1): the main one for control, workers for RX/TX");
		pcr_usage_exit_eal();
	}
	clock_params.calib_ms = (uint32_t)a->cfg.tsc_calib_ms;
	clock_params.period_ms = (uint32_t)a->cfg.clock_period_ms;
	clock_params.window = PCR_CLOCK_WINDOW_DEFAULT;
	clock_params.use_eal = !a->cfg.tsc_measure;
	if (pcr_clock_init(&clock_params) != 0)
		pcr_fatal("no TSC frequency");
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
	a->start_tsc = a->dp.epoch_tsc = rte_rdtsc();
	a->n_ports = n;
	pcr_dp_bind(a);
	for (p = 0; p < n; p++) {
		a->ports[p].id = p;
		a->ports[p].peer = (p ^ 1) < n ? (p ^ 1) : p;
		rte_eth_dev_get_name_by_port(p, a->ports[p].name);
	}
	if (n > 1 && (n & 1))
		PCR_LOG(WARNING, "port %u has no peer: it sends back out of itself",
			n - 1);
	/* a refused tree frees what it built before the usage exit (the
	 * sanitizer build counts it a leak otherwise) */
	if (pcr_tree_build(a) != 0) {
		pcr_tree_free(a);
		pcr_usage_exit_eal();
	}
	if (pcr_tree_view_build(a) != 0)
		pcr_fatal("out of memory for the subscriber tree's views");
	if (pcr_tree_unmatched(a) != 0) {
		pcr_tree_free(a);
		pcr_usage_exit_eal();
	}

	a->dp.dep_dynfield = pcr_wheel_dynfield_register();
	a->dp.flow_dynfield = rte_mbuf_dynfield_register(&flow_field);
	a->dp.arr_dynfield = rte_mbuf_dynfield_register(&arrival_field);
	if (a->dp.dep_dynfield < 0 || a->dp.flow_dynfield < 0 ||
	    a->dp.arr_dynfield < 0)
		pcr_fatal("cannot register mbuf dynamic fields: %s",
		      rte_strerror(rte_errno));

	nb_mbufs = a->cfg.mbufs != 0 ? (unsigned int)a->cfg.mbufs :
				       pcr_default_mbufs(a, n,
						     pcr_rx_lcore_count(rte_lcore_count() - 1,
									n * (unsigned int)a->cfg.tx_queues),
						     rte_lcore_count());
	a->pool = pcr_pool_create(n, nb_mbufs);
	if (a->pool == NULL)
		pcr_fatal("cannot create a pool of %u mbufs (%.0f MiB): %s; give --mbufs or more memory (-m)",
		      nb_mbufs, (double)nb_mbufs * (RTE_MBUF_DEFAULT_BUF_SIZE + 128) / 1048576,
		      rte_strerror(rte_errno));

	/* also what the pool takes: without hugepages a whole 4 KiB page an
	 * mbuf (the mempool keeps an object within a page) */
	rte_mempool_mem_iter(a->pool, pcr_pool_prefault_cb, &pool_bytes);
	for (p = 0; p < n; p++)
		pcr_wheel_setup(a, p, nb_mbufs);
	pcr_policies_init(a);
	pcr_assign_lcores(a);
	RTE_LCORE_FOREACH_WORKER(l) {
		struct pcr_lcore *lc = a->lcores[l];

		if ((lc->roles & PCR_ROLE_RX) &&
		    pcr_flowtab_create(lc, a->cfg.max_flows) != 0)
			pcr_fatal("lcore %u: cannot create a flow table of %" PRIu64
			      " entries: give --max-flows or more memory (-m)",
			      l, a->cfg.max_flows);
	}
	pcr_stage_setup(a);
	for (p = 0; p < n; p++)
		pcr_port_setup(a, p);
	link_wait(a);

	printf("pacer: %u port(s), %u worker lcore(s), %u mbufs (%zu bytes, %s), TSC %" PRIu64
	       " Hz, slot %" PRIu64 " ns, horizon %" PRIu64 " ms (%s)\n",
	       n, a->dp.n_workers, nb_mbufs, pool_bytes,
	       rte_mempool_get_ops(a->pool->ops_index)->name, a->tsc_hz, a->cfg.slot_ns,
	       a->cfg.horizon_ms,
	       a->cfg.horizon_policy == PCR_WHEEL_HORIZON_CAP ? "cap" : "drop");
	if (a->cfg.flow_queue_ms != 0)
		printf("pacer: a flow holds at most %" PRIu64
		       " ms of queue at the tightest rate it is under (--flow-queue; 0 = up to the horizon)\n",
		       a->cfg.flow_queue_ms);
	if (a->cfg.aqm.on)
		printf("pacer: AQM codel per flow: target %" PRIu64 " us, interval %" PRIu64
		       " us, ECN-capable packets %s (--aqm; classes may differ)\n",
		       a->cfg.aqm.target_us, a->cfg.aqm.interval_us,
		       a->cfg.aqm.ecn ? "marked CE, others dropped" : "dropped too");
	else
		printf("pacer: AQM off: a flow's queue is bounded by %s only%s\n",
		       a->cfg.flow_queue_ms != 0 ? "--flow-queue" : "the horizon",
		       a->cfg.replay ? " (--replay)" : "");
	RTE_LCORE_FOREACH_WORKER(l) {
		struct pcr_lcore *lc = a->lcores[l];
		unsigned int k;

		printf("pacer: lcore %u:", l);
		for (k = 0; k < lc->n_rxq; k++)
			printf(" rx port %u queue %u -> port %u;", lc->rxq[k].port,
			       lc->rxq[k].queue, lc->rxq[k].egress);
		for (k = 0; k < lc->n_tx; k++)
			printf(a->ports[lc->tx[k]->port].n_txq > 1 ?
				       " tx port %u queue %u;" : " tx port %u;",
			       lc->tx[k]->port, lc->tx[k]->queue);
		printf("\n");
	}
	fflush(stdout);

	if (pcr_cli_init(&a->cfg) != 0)
		pcr_fatal("cannot set up the command line");
	if (pcr_telemetry_init() != 0)
		pcr_fatal("cannot register the telemetry commands");
	/* live capture: dpdk-dumpcap / dpdk-pdump, secondary processes that
	 * attach through the shared configuration (not with --no-shconf) */
	if (!rte_eal_has_hugepages()) {
		/* rte_pdump_init() would work, but dumpcap, a secondary
		 * process, cannot map memory that is not in hugepages */
		printf("pacer: live capture off: dpdk-dumpcap maps pacer's memory, which needs hugepages (this run has --no-huge; pacer(8), EAL options)\n");
	} else if (rte_pdump_init() == 0) {
		pdump_on = true;
		printf("pacer: live capture on (dpdk-dumpcap --file-prefix=%s -i PORT)\n",
		       strrchr(rte_eal_get_runtime_dir(), '/') + 1);
	} else {
		printf("pacer: live capture off: %s (dpdk-dumpcap needs the shared configuration: no --no-shconf or --in-memory; pacer(8), EAL options)\n",
		       rte_strerror(rte_errno));
	}
	fflush(stdout); /* the live capture line, before anything waits */
	/* with a script, forwarding waits for it (or its `start`) */
	a->dp.forwarding = a->cfg.auto_start && a->cfg.cmdline_file[0] == '\0';
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
		pcr_fatal("out of memory");
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
		struct pcr_txport *tp;
		uint16_t q;

		PCR_TXQ_FOREACH(&a->ports[p], q, tp) {
			pcr_wheel_free(tp->wheel);
			tp->wheel = NULL;
		}
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
	for (p = 0; p < n; p++) {
		uint16_t q;

		for (q = 0; q < a->ports[p].n_txq; q++) {
			rte_free(a->ports[p].txq[q]->node);
			rte_free(a->ports[p].txq[q]);
		}
	}
	pcr_rates_free(a);
	pcr_tree_free(a);
	pcr_classtab_free(a);
	rte_free(a->dp.qsbr);
	pcr_clock_fini();
	rte_mempool_free(a->pool);
	eal_cleanup();
	return status;
}
