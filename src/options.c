/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Options and the configuration file. Every setting has one entry in
 * opt_defs[]: its long option, its key in the file's [pacer] section, its
 * kind and bounds, and its help line, so the two spellings cannot drift
 * apart. The file is read first; options given on the command line then
 * override it.
 */

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include <rte_cfgfile.h>

#include "config.h"
#include "pcr_clock.h"
#include "pcr_policy.h"

enum opt_kind { K_RATE, K_SIZE, K_U64, K_HPOL, K_BOOL, K_PATH, K_MODE,
		K_OWNER, K_AQM, K_NAME };

struct opt_def {
	const char *name;     /* long option and [pacer] key */
	enum opt_kind kind;
	size_t off;
	uint64_t min, max;
	const char *arg;
	const char *help;
	bool live;            /* a reload changes it in a running pacer */
};

/* Where messages about bad input go: stderr at start, a reload's reply
 * at run time (pcr_options_errors_to()). */
static FILE *err_out;
#define ERR_OUT (err_out != NULL ? err_out : stderr)

void
pcr_options_errors_to(FILE *f)
{
	err_out = f;
}

#define OFF(f) offsetof(struct pcr_config, f)

static const struct opt_def opt_defs[] = {
	{ "rate", K_RATE, OFF(rate_bps), 0, 0, "RATE",
	  "aggregate rate per egress port (tc units: 100mbit, 2.5gbit, 64000; 0/unlimited = none) [unlimited]", true },
	{ "flow-rate", K_RATE, OFF(flow_rate_bps), 0, 0, "RATE",
	  "default per-flow rate [unlimited]", true },
	{ "burst", K_SIZE, OFF(burst), 0, 1ull << 30, "BYTES",
	  "credit an idle policy may bank [1514, one 1500-byte MTU frame]", false },
	{ "wire-overhead", K_U64, OFF(wire_overhead), 0, 256, "BYTES",
	  "bytes added to each frame when counting rate (24 = preamble, FCS, IFG) [0]", false },
	{ "slot", K_U64, OFF(slot_ns), 250, 1000000, "NS",
	  "timing wheel slot width (granularity) [1000]", false },
	{ "horizon", K_U64, OFF(horizon_ms), 1, 60000, "MS",
	  "furthest departure accepted [2000]", true },
	{ "horizon-policy", K_HPOL, OFF(horizon_policy), 0, 0, "drop|cap",
	  "beyond the horizon: drop, or send at the horizon [drop]", true },
	{ "flow-limit", K_U64, OFF(flow_limit), 0, UINT32_MAX, "PKTS",
	  "most packets one flow may have queued, 0 = no limit [0]", true },
	{ "flow-queue", K_U64, OFF(flow_queue_ms), 0, 60000, "MS",
	  "most queue one flow may hold, as time at the tightest rate it is under (its flow rate, its class's, the port's; at least 4 frames), as fq's flow_limit bounds a flow; 0 = none (the horizon bounds it) [100; 0 with --replay]", true },
	{ "aqm", K_AQM, OFF(aqm.on), 0, 0, "codel|off",
	  "active queue management of a flow's queue, as fq_codel does: CoDel (RFC 8289) on the delay each packet will have had when it leaves, known when it is stamped; off: drop-tail at --flow-queue (a link emulator that must reproduce drop-tail) [codel; off with --replay]", true },
	{ "aqm-target", K_U64, OFF(aqm.target_us), 1, 10000000, "US",
	  "CoDel's target: the standing queue a flow may keep [5000]", true },
	{ "aqm-interval", K_U64, OFF(aqm.interval_us), 1, 60000000, "US",
	  "CoDel's interval: above target this long, the flow is signalled (then sooner, interval/sqrt(count)) [100000]", true },
	{ "ecn", K_BOOL, OFF(aqm.ecn), 0, 0, "yes|no",
	  "AQM marks an ECN-capable packet (ECT(0)/ECT(1)) Congestion Experienced instead of dropping it [yes]", true },
	{ "ce-threshold", K_U64, OFF(aqm.ce_threshold_us), 0, 10000000, "US",
	  "mark ECT(1) packets CE whose delay is over US, whatever CoDel says (DCTCP/L4S senders, as fq_codel's ce_threshold); 0 = off [0]", true },
	{ "max-late", K_U64, OFF(max_late_us), 0, 10000000, "US",
	  "while a port's TX lcore sends what is due more than US late (it cannot keep up), refuse at RX what would leave later than that (drop_late); two slots at least; 0 = never: every packet is sent, however late [10000]", true },
	{ "tx-queues", K_U64, OFF(tx_queues), 1, PCR_MAX_TXQ, "N",
	  "TX queues a port sends by, each with its own wheel and served by one TX lcore (the TX lcores take the ports' queues in turn); a flow leaves by one of them, chosen by its hash, so its order holds; the port's and classes' rates hold over all of them [1]", false },
	{ "mbufs", K_U64, OFF(mbufs), 0, (1ull << 26) - 1, "N",
	  "mbuf pool size, 0 = a full horizon of 1500-byte frames at 1 gbit/s, or what of it the EAL's memory holds beside the flow tables and wheels [0]", false },
	{ "exit-on-idle", K_U64, OFF(exit_on_idle_ms), 0, 1ull << 40, "MS",
	  "stop once nothing arrived for MS and all is sent, 0 = never [0]", false },
	{ "control-socket", K_PATH, OFF(control_socket), 0, 0, "PATH",
	  "serve the prompt's commands on this UNIX socket (pacerctl); a file already there is replaced only if it is a socket nobody listens on; none = no socket [pacer.sock in the EAL runtime directory]", false },
	{ "control-socket-mode", K_MODE, OFF(control_socket_mode), 0, 0777, "MODE",
	  "the control socket's permissions, octal: who may connect (0660 with --control-socket-owner :GROUP lets a group read statistics); only root and pacer's own user may change anything [0600]", false },
	{ "control-socket-owner", K_OWNER, OFF(control_socket_owner), 0, 0, "USER[:GROUP]",
	  "the control socket's owner and group (names or numbers; :GROUP alone sets the group) [pacer's own]", false },
	{ "stats-json", K_PATH, OFF(stats_json), 0, 0, "FILE",
	  "write the final statistics as JSON to FILE", false },
	{ "stats-period", K_U64, OFF(stats_period_s), 0, 86400, "S",
	  "print a statistics line every S seconds, 0 = never [0]", false },
	{ "drain-on-exit", K_BOOL, OFF(drain_on_exit), 0, 0, "yes|no",
	  "on SIGINT/SIGTERM send what is queued on time (yes) or drop it [yes]", false },
	{ "tx-hold", K_U64, OFF(tx_hold_ms), 1, 600000, "MS",
	  "drop packets the port has refused for this long [100]", false },
	{ "max-flows", K_U64, OFF(max_flows), 8, 1ull << 28, "N",
	  "flow table entries per RX lcore [1048576]", false },
	{ "flow-idle", K_U64, OFF(flow_idle_ms), 1, 86400000, "MS",
	  "age out flows idle for this long [3000]", false },
	{ "rxd", K_U64, OFF(rxd), 32, 32768, "N", "RX descriptors per queue [1024]", false },
	{ "txd", K_U64, OFF(txd), 32, 32768, "N", "TX descriptors per queue [1024]", false },
	{ "tsc-calib", K_U64, OFF(tsc_calib_ms), PCR_CLOCK_CALIB_MS_MIN,
	  PCR_CLOCK_CALIB_MS_MAX, "MS",
	  "measure the TSC against CLOCK_MONOTONIC_RAW for MS at start [100]", false },
	{ "tsc-measure", K_BOOL, OFF(tsc_measure), 0, 0, "yes|no",
	  "pace with the measured TSC frequency (no: the EAL's estimate, still measured and reported) [yes]", false },
	{ "clock-period", K_U64, OFF(clock_period_ms), 10, 60000, "MS",
	  "re-measure the TSC (and fit NIC clocks) this often [1000]", false },
	{ "offload-horizon", K_U64, OFF(offload_horizon_us), 0, 1000000, "US",
	  "hand packets to a NIC with send-on-timestamp this far ahead of departure, 0 = off [0]", false },
	{ "stage-lead", K_U64, OFF(stage_lead_us), 0, 100000, "US",
	  "under a backlog, hold each flow's packets and stamp the next one, round robin by bytes among flows (as fq), at most this long before it can leave; at least --offload-horizon; 0 = stamp every packet on arrival (first come, first served) [500]", false },
	{ "stage-lead-min", K_U64, OFF(stage_lead_min_us), 0, 100000, "US",
	  "the shortest staging lead: between this and --stage-lead, the lead each 100 ms is the shortest that the gaps between the RX loop's passes leave the link idle for at most 0.01 % of the time; --stage-lead or more fixes it (raised to --offload-horizon) [20]", false },
	{ "order-guard", K_U64, OFF(guard_ms), 0, 60000, "MS",
	  "in a class of completion order, a held flow not stamped for MS goes ahead of every rank for --order-guard-frames frames, 0 = never [100]", false },
	{ "order-guard-frames", K_U64, OFF(guard_frames), 1, 255, "N",
	  "frames the starvation guard sends ahead of every rank [16]", false },
	{ "network", K_PATH, OFF(network), 0, 0, "FILE",
	  "LibreQoS's network.json: the subscriber tree's interior nodes (sites, PoPs, access points), to any depth, each a download and upload ceiling", false },
	{ "subscribers", K_PATH, OFF(subscribers), 0, 0, "FILE",
	  "LibreQoS's ShapedDevices.csv: the subscribers (the tree's leaves), each circuit its addresses and prefixes, its parent node and its download/upload max; a packet's subscriber is found by longest-prefix match of its subscriber-side address; one that matches none goes by the classes alone", false },
	{ "unmatched", K_NAME, OFF(unmatched), 0, 0, "CIRCUIT",
	  "traffic of no subscriber (no address or prefix of ShapedDevices.csv holds it, or not IP) is shaped as this subscriber, by its Circuit ID (a catch-all circuit); without it, by the classes alone [none]", false },
	{ "subscriber-port", K_U64, OFF(subscriber_port), 0, PCR_MAX_PORTS - 1, "PORT",
	  "the port that faces the subscribers: what leaves by it is shaped at the download rates, by destination address; what leaves by its peer at the upload rates, by source [0]", false },
	{ "nic-clock-bits", K_U64, OFF(nic_clock_bits), 1, 64, "N",
	  "width of the NIC clock counter rte_eth_read_clock() reads [64]", false },
};

#define N_OPTS RTE_DIM(opt_defs)
#define OPT_CONFIG 1000
#define OPT_HELP 'h'
#define OPT_NO_DRAIN 1001
#define OPT_INTERACTIVE 'i'
#define OPT_AUTO_START 'a'
#define OPT_CMDLINE_FILE 1002
#define OPT_REPLAY 1003
#define OPT_BASE 2000

const char *
pcr_order_name(enum pcr_order o)
{
	return o == PCR_ORDER_COMPLETION ? "completion" : "fair";
}

int
pcr_order_parse(const char *s, enum pcr_order *o)
{
	if (strcmp(s, "fair") == 0)
		*o = PCR_ORDER_FAIR;
	else if (strcmp(s, "completion") == 0)
		*o = PCR_ORDER_COMPLETION;
	else
		return -1;
	return 0;
}

void
pcr_options_defaults(struct pcr_config *c)
{
	memset(c, 0, sizeof(*c));
	c->burst = PCR_BURST_DEFAULT;
	c->guard_ms = PCR_GUARD_MS_DEFAULT;
	c->guard_frames = PCR_GUARD_FRAMES_DEFAULT;
	c->slot_ns = 1000;
	c->horizon_ms = 2000;
	c->horizon_policy = PCR_WHEEL_HORIZON_DROP;
	c->flow_queue_ms = PCR_FLOW_QUEUE_MS_DEFAULT;
	c->max_late_us = PCR_MAX_LATE_US_DEFAULT;
	c->tx_queues = 1;
	c->drain_on_exit = true;
	c->tx_hold_ms = 100;
	c->max_flows = 1u << 20;
	c->flow_idle_ms = 3000;
	c->rxd = 1024;
	c->txd = 1024;
	c->tsc_calib_ms = PCR_CLOCK_CALIB_MS_DEFAULT;
	c->tsc_measure = true;
	c->clock_period_ms = PCR_CLOCK_PERIOD_MS_DEFAULT;
	c->nic_clock_bits = 64;
	c->stage_lead_us = PCR_STAGE_LEAD_US_DEFAULT;
	c->stage_lead_min_us = PCR_STAGE_LEAD_MIN_US_DEFAULT;
	c->max_port_named = -1;
	c->control_socket_mode = 0600;
	c->aqm.on = true;
	c->aqm.ecn = true;
	c->aqm.target_us = PCR_AQM_TARGET_US_DEFAULT;
	c->aqm.interval_us = PCR_AQM_INTERVAL_US_DEFAULT;
	snprintf(c->classes[0].name, sizeof(c->classes[0].name), "default");
	c->classes[0].match.any = true;
	snprintf(c->classes[0].match_str, sizeof(c->classes[0].match_str),
		 "(anything no other class matches)");
	c->n_classes = 1;
}

void
pcr_options_usage(FILE *f, const char *prog)
{
	size_t i;

	fprintf(f,
		"usage: %s [EAL options] -- [options]\n"
		"Paces packets: what arrives on port N leaves on its peer (0<->1, 2<->3, ...;\n"
		"a lone port sends back out of itself), each no earlier than its departure\n"
		"time from per-flow, per-class and per-port rate policies.\n\n"
		"  --config FILE              INI configuration (see config/pacer.cfg);\n"
		"                             options given here override it\n",
		prog);
	for (i = 0; i < N_OPTS; i++) {
		char left[64];

		snprintf(left, sizeof(left), "--%s %s", opt_defs[i].name,
			 opt_defs[i].arg);
		fprintf(f, "  %-26s %s\n", left, opt_defs[i].help);
	}
	fprintf(f,
		"  %-26s same as --drain-on-exit no\n"
		"  %-26s the pacer> prompt (commands: help); forwarding waits for\n"
		"  %-26s `start` unless -a\n"
		"  %-26s start forwarding at once (the default without -i)\n"
		"  %-26s run the commands in FILE (echoed) once the ports are\n"
		"  %-26s set up, before forwarding starts\n"
		"  %-26s the input is a capture replayed at once, not live\n"
		"  %-26s traffic: a flow queues all of it (--flow-queue 0) and\n"
		"  %-26s no AQM judges the queue it makes (--aqm off), unless\n"
		"  %-26s the file or the command line says otherwise\n"
		"  %-26s this help\n\n"
		"Classes (match rules, class rate, per-flow rate) come from the\n"
		"configuration file or the CLI (add class). Exit status: 0 done,\n"
		"1 run-time failure, 2 bad options or configuration (nothing started).\n",
		"--no-drain-on-exit", "-i, --interactive", "", "-a, --auto-start",
		"--cmdline-file FILE", "", "--replay", "", "", "", "-h, --help");
}

static int
set_value(struct pcr_config *c, const struct opt_def *d, const char *val,
	  const char *where)
{
	char err[256] = "";
	void *p = (char *)c + d->off;
	uint64_t v;

	switch (d->kind) {
	case K_RATE:
		if (pcr_rate_parse(val, &v, err, sizeof(err)) != 0)
			goto bad;
		*(uint64_t *)p = v;
		return 0;
	case K_SIZE:
		if (pcr_size_parse(val, &v, err, sizeof(err)) != 0)
			goto bad;
		if (v < d->min || v > d->max) {
			snprintf(err, sizeof(err),
				 "%s is out of range [%" PRIu64 ", %" PRIu64 "] bytes",
				 val, d->min, d->max);
			goto bad;
		}
		*(uint64_t *)p = v;
		return 0;
	case K_U64:
		if (pcr_u64_parse(val, d->min, d->max, &v, err, sizeof(err)) != 0)
			goto bad;
		*(uint64_t *)p = v;
		return 0;
	case K_HPOL:
		if (strcmp(val, "drop") == 0)
			*(enum pcr_wheel_horizon_policy *)p = PCR_WHEEL_HORIZON_DROP;
		else if (strcmp(val, "cap") == 0)
			*(enum pcr_wheel_horizon_policy *)p = PCR_WHEEL_HORIZON_CAP;
		else {
			snprintf(err, sizeof(err), "'%s' is not drop or cap", val);
			goto bad;
		}
		return 0;
	case K_AQM:
		if (strcmp(val, "codel") == 0)
			*(bool *)p = true;
		else if (strcmp(val, "off") == 0)
			*(bool *)p = false;
		else {
			snprintf(err, sizeof(err), "'%s' is not codel or off", val);
			goto bad;
		}
		return 0;
	case K_BOOL:
		if (strcasecmp(val, "yes") == 0 || strcasecmp(val, "true") == 0 ||
		    strcmp(val, "1") == 0 || strcasecmp(val, "on") == 0)
			*(bool *)p = true;
		else if (strcasecmp(val, "no") == 0 ||
			 strcasecmp(val, "false") == 0 || strcmp(val, "0") == 0 ||
			 strcasecmp(val, "off") == 0)
			*(bool *)p = false;
		else {
			snprintf(err, sizeof(err), "'%s' is not yes or no", val);
			goto bad;
		}
		return 0;
	case K_NAME:
		if (val[0] == '\0' || strlen(val) >= PCR_NAME_MAX) {
			snprintf(err, sizeof(err),
				 "'%.64s' is not a name (1 to %d characters)", val,
				 PCR_NAME_MAX - 1);
			goto bad;
		}
		snprintf((char *)p, PCR_NAME_MAX, "%s", val);
		return 0;
	case K_PATH:
		if (val[0] == '\0' || strlen(val) >= PATH_MAX) {
			snprintf(err, sizeof(err), "'%s' is not a usable path", val);
			goto bad;
		}
		snprintf((char *)p, PATH_MAX, "%s", val);
		return 0;
	case K_MODE: {
		char *end;
		unsigned long m;

		errno = 0;
		m = strtoul(val, &end, 8);
		if (val[0] == '\0' || *end != '\0' || errno != 0 || m > d->max ||
		    val[0] == '-' || val[0] == '+') {
			snprintf(err, sizeof(err),
				 "'%.64s' is not a file mode in octal, 0 to %03" PRIo64,
				 val, d->max);
			goto bad;
		}
		*(uint64_t *)p = m;
		return 0;
	}
	case K_OWNER: {
		uid_t u;
		gid_t g;

		if (strlen(val) >= PATH_MAX ||
		    pcr_owner_parse(val, &u, &g, err, sizeof(err)) != 0) {
			if (err[0] == '\0')
				snprintf(err, sizeof(err), "too long");
			goto bad;
		}
		snprintf((char *)p, PATH_MAX, "%s", val);
		return 0;
	}
	}
	snprintf(err, sizeof(err), "internal: unknown kind");
bad:
	fprintf(ERR_OUT, "pacer: %s: %s\n", where, err);
	return -1;
}

static const struct opt_def *
find_def(const char *name)
{
	size_t i;

	for (i = 0; i < N_OPTS; i++)
		if (strcmp(opt_defs[i].name, name) == 0)
			return &opt_defs[i];
	return NULL;
}

int
pcr_class_new(const struct pcr_config *c, const char *name, bool is_default,
	      struct pcr_class_conf *cl, char *err, size_t errlen)
{
	unsigned int i;

	if (!pcr_class_name_ok(name)) {
		snprintf(err, errlen, "class name '%s': %s", name, PCR_CLASS_NAME_RULE);
		return -1;
	}
	if (is_default) {
		/* as the defaults have it: matches anything, a match_str */
		*cl = c->classes[0];
		return 0;
	}
	memset(cl, 0, sizeof(*cl));
	snprintf(cl->name, sizeof(cl->name), "%s", name);
	if (strcmp(name, "default") == 0) {
		snprintf(err, errlen, "class 'default' exists already (it takes what no other class matches)");
		return -1;
	}
	for (i = 1; i < c->n_classes; i++)
		if (!c->classes[i].deleted && strcmp(c->classes[i].name, name) == 0) {
			snprintf(err, errlen, "class '%s' exists already", name);
			return -1;
		}
	if (pcr_class_slot(c) < 0) {
		snprintf(err, errlen,
			 "%d classes are the most, default included: delete one first",
			 PCR_MAX_CLASSES);
		return -1;
	}
	return 0;
}

int
pcr_options_set_live(struct pcr_config *c, const char *name, const char *value,
		     char *err, size_t errlen)
{
	const struct opt_def *d = find_def(name);
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (d == NULL || !d->live) {
		snprintf(err, errlen, "%s: not an option a running pacer changes", name);
		return -1;
	}
	/* set_value() says why on ERR_OUT: into the reply */
	f = open_memstream(&buf, &len);
	if (f == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	pcr_options_errors_to(f);
	rc = set_value(c, d, value, name);
	pcr_options_errors_to(NULL);
	fclose(f);
	if (rc != 0) {
		const char *m = buf != NULL ? buf : "bad value";

		if (strncmp(m, "pacer: ", 7) == 0)
			m += 7;
		snprintf(err, errlen, "%.*s", (int)strcspn(m, "\n"), m);
	}
	free(buf);
	return rc;
}

struct pcr_aqm_conf
pcr_class_aqm(const struct pcr_config *c, unsigned int k)
{
	const struct pcr_class_conf *cl = &c->classes[k];
	struct pcr_aqm_conf a = c->aqm;

	if (cl->aqm_set & PCR_AQM_SET_ON)
		a.on = cl->aqm.on;
	if (cl->aqm_set & PCR_AQM_SET_ECN)
		a.ecn = cl->aqm.ecn;
	if (cl->aqm_set & PCR_AQM_SET_TARGET)
		a.target_us = cl->aqm.target_us;
	if (cl->aqm_set & PCR_AQM_SET_INTERVAL)
		a.interval_us = cl->aqm.interval_us;
	if (cl->aqm_set & PCR_AQM_SET_CE)
		a.ce_threshold_us = cl->aqm.ce_threshold_us;
	return a;
}

int
pcr_class_slot(const struct pcr_config *c)
{
	int best = -1;
	unsigned int i;

	if (c->n_classes < PCR_MAX_CLASSES)
		return (int)c->n_classes;
	for (i = 1; i < c->n_classes; i++)
		if (c->classes[i].deleted &&
		    (best < 0 ||
		     (int32_t)(c->classes[i].deleted_at -
			       c->classes[best].deleted_at) < 0))
			best = (int)i;
	return best;
}

void
pcr_class_place(struct pcr_config *c, unsigned int k,
		const struct pcr_class_conf *cl)
{
	uint32_t gen = k < c->n_classes ? c->classes[k].gen + 1 : 0;

	c->classes[k] = *cl;
	c->classes[k].deleted = false;
	c->classes[k].gen = gen;
	c->classes[k].seq = ++c->class_clock;
	if (k >= c->n_classes)
		c->n_classes = k + 1;
}

void
pcr_class_delete(struct pcr_config *c, unsigned int k)
{
	c->classes[k].deleted = true;
	c->classes[k].deleted_at = ++c->class_clock;
	c->classes_deleted++;
}

unsigned int
pcr_class_order(const struct pcr_config *c, uint8_t *ids)
{
	unsigned int i, j, n = 0;

	/* insertion by seq: at most 63 */
	for (i = 1; i < c->n_classes; i++) {
		if (c->classes[i].deleted)
			continue;
		for (j = n; j > 0 && (int32_t)(c->classes[ids[j - 1]].seq -
					       c->classes[i].seq) > 0; j--)
			ids[j] = ids[j - 1];
		ids[j] = (uint8_t)i;
		n++;
	}
	return n;
}

/* A user or group name, or a number, into @p id; -1 if neither. */
static int
id_parse(const char *s, bool group, unsigned long *id)
{
	char *end;

	if (s[0] >= '0' && s[0] <= '9') {
		errno = 0;
		*id = strtoul(s, &end, 10);
		return *end == '\0' && errno == 0 && *id < UINT32_MAX ? 0 : -1;
	}
	if (group) {
		const struct group *g = getgrnam(s);

		if (g == NULL)
			return -1;
		*id = g->gr_gid;
	} else {
		const struct passwd *pw = getpwnam(s);

		if (pw == NULL)
			return -1;
		*id = pw->pw_uid;
	}
	return 0;
}

int
pcr_owner_parse(const char *s, uid_t *uid, gid_t *gid, char *err,
		size_t errlen)
{
	char buf[256], *colon;
	unsigned long id;

	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (strlen(s) >= sizeof(buf) || s[0] == '\0') {
		snprintf(err, errlen, "'%.64s': USER, USER:GROUP or :GROUP", s);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	colon = strchr(buf, ':');
	if (colon != NULL)
		*colon++ = '\0';
	if (buf[0] != '\0') {
		if (id_parse(buf, false, &id) != 0) {
			snprintf(err, errlen, "'%.64s': no such user", buf);
			return -1;
		}
		*uid = (uid_t)id;
	}
	if (colon != NULL) {
		if (colon[0] == '\0' || id_parse(colon, true, &id) != 0) {
			snprintf(err, errlen, "'%.64s': no such group", colon);
			return -1;
		}
		*gid = (gid_t)id;
	}
	if (buf[0] == '\0' && colon == NULL) {
		snprintf(err, errlen, "'%.64s': USER, USER:GROUP or :GROUP", s);
		return -1;
	}
	return 0;
}

int
pcr_class_set(struct pcr_class_conf *cl, bool is_default, const char *key,
	      const char *value, char *err, size_t errlen)
{
	char e[256];
	uint64_t v;

	if (strcmp(key, "match") == 0) {
		if (is_default) {
			snprintf(err, errlen,
				 "the default class takes what no other class matches; it has no match");
			return -1;
		}
		if (pcr_match_parse(value, &cl->match, e, sizeof(e)) != 0) {
			snprintf(err, errlen, "%s", e);
			return -1;
		}
		if (strlen(value) >= sizeof(cl->match_str)) {
			snprintf(err, errlen, "match rule longer than %zu bytes",
				 sizeof(cl->match_str) - 1);
			return -1;
		}
		snprintf(cl->match_str, sizeof(cl->match_str), "%s", value);
	} else if (strcmp(key, "rate") == 0 || strcmp(key, "flow-rate") == 0) {
		if (pcr_rate_parse(value, &v, e, sizeof(e)) != 0) {
			snprintf(err, errlen, "%s", e);
			return -1;
		}
		if (key[0] == 'r') {
			cl->rate_bps = v;
		} else {
			cl->flow_rate_bps = v;
			cl->flow_rate_set = true;
		}
	} else if (strcmp(key, "order") == 0) {
		if (pcr_order_parse(value, &cl->order) != 0) {
			snprintf(err, errlen, "'%s': the order is fair or completion", value);
			return -1;
		}
	} else if (strcmp(key, "aqm") == 0) {
		if (strcmp(value, "codel") != 0 && strcmp(value, "off") != 0) {
			snprintf(err, errlen, "aqm '%s': codel or off", value);
			return -1;
		}
		cl->aqm.on = value[0] == 'c';
		cl->aqm_set |= PCR_AQM_SET_ON;
	} else if (strcmp(key, "ecn") == 0) {
		if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0) {
			snprintf(err, errlen, "ecn '%s': yes or no", value);
			return -1;
		}
		cl->aqm.ecn = value[0] == 'y';
		cl->aqm_set |= PCR_AQM_SET_ECN;
	} else if (strcmp(key, "aqm-target") == 0 ||
		   strcmp(key, "aqm-interval") == 0 ||
		   strcmp(key, "ce-threshold") == 0) {
		const struct opt_def *d = find_def(key);

		if (pcr_u64_parse(value, d->min, d->max, &v, e, sizeof(e)) != 0) {
			snprintf(err, errlen, "%s %s: %s (us)", key, value, e);
			return -1;
		}
		if (strcmp(key, "aqm-target") == 0) {
			cl->aqm.target_us = v;
			cl->aqm_set |= PCR_AQM_SET_TARGET;
		} else if (strcmp(key, "aqm-interval") == 0) {
			cl->aqm.interval_us = v;
			cl->aqm_set |= PCR_AQM_SET_INTERVAL;
		} else {
			cl->aqm.ce_threshold_us = v;
			cl->aqm_set |= PCR_AQM_SET_CE;
		}
	} else {
		snprintf(err, errlen, "'%s': a class has match, rate, flow-rate, order, aqm, aqm-target, aqm-interval, ecn, ce-threshold",
			 key);
		return -1;
	}
	return 0;
}

int
pcr_class_done(const struct pcr_class_conf *cl, bool is_default, char *err,
	       size_t errlen)
{
	if (!is_default && cl->match_str[0] == '\0') {
		snprintf(err, errlen, "has no match rule");
		return -1;
	}
	return 0;
}

/* Strict section name: "class NAME" or "port N". */
static int
load_class(struct pcr_config *c, struct rte_cfgfile *cf, const char *sect,
	   const char *file)
{
	const char *name = sect + strlen("class");
	struct rte_cfgfile_entry ent[16];
	struct pcr_class_conf cl;
	bool is_default;
	char err[512];
	unsigned int i;
	int n;

	while (*name == ' ' || *name == '\t')
		name++;
	is_default = strcmp(name, "default") == 0;
	if (pcr_class_new(c, name, is_default, &cl, err, sizeof(err)) != 0) {
		fprintf(ERR_OUT, "pacer: %s: [%s]: %s\n", file, sect, err);
		return -1;
	}
	n = rte_cfgfile_section_num_entries(cf, sect);
	if (n < 0 || n > (int)RTE_DIM(ent)) {
		fprintf(ERR_OUT, "pacer: %s: [%s]: more than %zu keys\n",
			file, sect, RTE_DIM(ent));
		return -1;
	}
	n = rte_cfgfile_section_entries(cf, sect, ent, n);
	for (i = 0; i < (unsigned int)n; i++)
		if (pcr_class_set(&cl, is_default, ent[i].name, ent[i].value, err,
				  sizeof(err)) != 0) {
			fprintf(ERR_OUT, "pacer: %.200s: [%.64s] %.64s: %s\n", file,
				sect, ent[i].name, err);
			return -1;
		}
	if (pcr_class_done(&cl, is_default, err, sizeof(err)) != 0) {
		fprintf(ERR_OUT, "pacer: %s: [%s] %s\n", file, sect, err);
		return -1;
	}
	if (is_default)
		c->classes[0] = cl;
	else
		pcr_class_place(c, c->n_classes, &cl);
	return 0;
}

static int
load_port(struct pcr_config *c, struct rte_cfgfile *cf, const char *sect,
	  const char *file)
{
	struct rte_cfgfile_entry ent[8];
	char err[256], where[512];
	uint64_t port, v;
	int i, n;

	if (pcr_u64_parse(sect + strlen("port "), 0, PCR_MAX_PORTS - 1, &port,
			  err, sizeof(err)) != 0) {
		fprintf(ERR_OUT, "pacer: %s: [%s]: port number %s\n", file, sect,
			err);
		return -1;
	}
	n = rte_cfgfile_section_num_entries(cf, sect);
	if (n < 0 || n > (int)RTE_DIM(ent)) {
		fprintf(ERR_OUT, "pacer: %s: [%s]: more than %zu keys\n",
			file, sect, RTE_DIM(ent));
		return -1;
	}
	n = rte_cfgfile_section_entries(cf, sect, ent, n);
	for (i = 0; i < n; i++) {
		snprintf(where, sizeof(where), "%.200s: [%.64s] %.64s", file, sect,
			 ent[i].name);
		if (strcmp(ent[i].name, "rate") != 0) {
			fprintf(ERR_OUT, "pacer: %s: unknown key (a port has rate)\n",
				where);
			return -1;
		}
		if (pcr_rate_parse(ent[i].value, &v, err, sizeof(err)) != 0) {
			fprintf(ERR_OUT, "pacer: %s: %s\n", where, err);
			return -1;
		}
		c->port_rate_set[port] = true;
		c->port_rate_bps[port] = v;
	}
	if ((int)port > c->max_port_named)
		c->max_port_named = (int)port;
	return 0;
}

/*
 * rte_cfgfile_load() skips some malformed lines silently (text before the
 * first section, for one) and names none: check the syntax first, with
 * line numbers.
 */
static int
check_syntax(FILE *fp, const char *file)
{
	char line[1024];
	bool in_section = false;
	unsigned int no = 0;

	while (fgets(line, sizeof(line), fp) != NULL) {
		char *p = line, *end;

		no++;
		if (strchr(line, '\n') == NULL && !feof(fp)) {
			fprintf(ERR_OUT, "pacer: %s:%u: line longer than %zu characters\n",
				file, no, sizeof(line) - 2);
			return -1;
		}
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strlen(p);
		while (end > p && (end[-1] == '\n' || end[-1] == '\r' ||
				   end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		if (*p == '\0' || *p == ';' || *p == '#')
			continue;
		if (*p == '[') {
			if (end[-1] != ']' || end - p < 3) {
				fprintf(ERR_OUT, "pacer: %s:%u: '%s': a section is [name]\n",
					file, no, p);
				return -1;
			}
			in_section = true;
			continue;
		}
		if (strchr(p, '=') == NULL || *p == '=') {
			fprintf(ERR_OUT,
				"pacer: %s:%u: '%s': not [section], key = value or a ; comment\n",
				file, no, p);
			return -1;
		}
		if (!in_section) {
			fprintf(ERR_OUT, "pacer: %s:%u: '%s' comes before any [section]\n",
				file, no, p);
			return -1;
		}
	}
	return 0;
}

static int
load_config(struct pcr_config *c, const char *file)
{
	struct rte_cfgfile *cf;
	char **sects = NULL;
	int i, n, rc = -1;
	FILE *probe;

	probe = fopen(file, "r");
	if (probe == NULL) {
		fprintf(ERR_OUT, "pacer: --config %s: %s\n", file,
			strerror(errno));
		return -1;
	}
	rc = check_syntax(probe, file);
	fclose(probe);
	if (rc != 0)
		return -1;
	rc = -1;
	cf = rte_cfgfile_load(file, 0);
	if (cf == NULL) {
		fprintf(ERR_OUT,
			"pacer: --config %s: not a valid INI file (a line that is not [section], key = value or a ; comment)\n",
			file);
		return -1;
	}
	n = rte_cfgfile_num_sections(cf, NULL, 0);
	if (n < 0)
		goto out;
	sects = calloc((size_t)n + 1, sizeof(*sects));
	if (sects == NULL)
		goto out;
	for (i = 0; i < n; i++) {
		sects[i] = malloc(CFG_NAME_LEN);
		if (sects[i] == NULL)
			goto out;
	}
	rte_cfgfile_sections(cf, sects, n);
	for (i = 0; i < n; i++) {
		const char *s = sects[i];

		if (strcmp(s, "pacer") == 0) {
			struct rte_cfgfile_entry ent[N_OPTS + 8];
			int k, m;

			m = rte_cfgfile_section_num_entries(cf, s);
			if (m >= 0 && m <= (int)RTE_DIM(ent))
				m = rte_cfgfile_section_entries(cf, s, ent, m);
			if (m < 0 || m > (int)RTE_DIM(ent)) {
				fprintf(ERR_OUT, "pacer: %s: [pacer]: too many entries\n",
					file);
				goto out;
			}
			for (k = 0; k < m; k++) {
				const struct opt_def *d = find_def(ent[k].name);
				char where[512];

				snprintf(where, sizeof(where), "%.200s: [pacer] %.64s",
					 file, ent[k].name);
				if (d == NULL) {
					fprintf(ERR_OUT,
						"pacer: %s: unknown key (see pacer --help; keys are the long options)\n",
						where);
					goto out;
				}
				if (set_value(c, d, ent[k].value, where) != 0)
					goto out;
			}
		} else if (strncmp(s, "class", 5) == 0 &&
			   (s[5] == ' ' || s[5] == '\t' || s[5] == '\0')) {
			if (load_class(c, cf, s, file) != 0)
				goto out;
		} else if (strncmp(s, "port ", 5) == 0) {
			if (load_port(c, cf, s, file) != 0)
				goto out;
		} else {
			fprintf(ERR_OUT,
				"pacer: %s: unknown section [%s] (pacer, port N, class NAME)\n",
				file, s);
			goto out;
		}
	}
	rc = 0;
out:
	if (sects != NULL) {
		for (i = 0; i < n; i++)
			free(sects[i]);
		free(sects);
	}
	rte_cfgfile_close(cf);
	return rc;
}

int
pcr_options_parse(int argc, char **argv, struct pcr_config *c)
{
	struct option lopts[N_OPTS + 8];
	const char *prog = argc > 0 ? argv[0] : "pacer";
	size_t i;
	int opt, idx;

	pcr_options_defaults(c);
	for (i = 0; i < N_OPTS; i++) {
		lopts[i].name = opt_defs[i].name;
		lopts[i].has_arg = required_argument;
		lopts[i].flag = NULL;
		lopts[i].val = OPT_BASE + (int)i;
	}
	lopts[i++] = (struct option){ "config", required_argument, NULL, OPT_CONFIG };
	lopts[i++] = (struct option){ "no-drain-on-exit", no_argument, NULL, OPT_NO_DRAIN };
	lopts[i++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	lopts[i++] = (struct option){ "interactive", no_argument, NULL, OPT_INTERACTIVE };
	lopts[i++] = (struct option){ "auto-start", no_argument, NULL, OPT_AUTO_START };
	lopts[i++] = (struct option){ "cmdline-file", required_argument, NULL, OPT_CMDLINE_FILE };
	lopts[i++] = (struct option){ "replay", no_argument, NULL, OPT_REPLAY };
	lopts[i] = (struct option){ NULL, 0, NULL, 0 };

	/* pass 1: --help, --config, and every syntax error */
	opterr = 0;
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":hia", lopts, &idx)) != -1) {
		switch (opt) {
		case OPT_INTERACTIVE:
			c->interactive = true;
			break;
		case OPT_AUTO_START:
			c->auto_start = true;
			break;
		case OPT_REPLAY:
			c->replay = true;
			break;
		case OPT_CMDLINE_FILE: {
			FILE *fp = fopen(optarg, "r");

			if (fp == NULL) {
				fprintf(ERR_OUT, "pacer: --cmdline-file %s: %s\n",
					optarg, strerror(errno));
				return -1;
			}
			fclose(fp);
			if (strlen(optarg) >= sizeof(c->cmdline_file)) {
				fprintf(ERR_OUT, "pacer: --cmdline-file: path too long\n");
				return -1;
			}
			snprintf(c->cmdline_file, sizeof(c->cmdline_file), "%s",
				 optarg);
			break;
		}
		case OPT_HELP:
			pcr_options_usage(stdout, prog);
			return 1;
		case OPT_CONFIG:
			snprintf(c->config_file, sizeof(c->config_file), "%s",
				 optarg);
			break;
		case ':':
			fprintf(ERR_OUT, "pacer: option '%s' needs a value\n",
				argv[optind - 1]);
			return -1;
		case '?':
			fprintf(ERR_OUT,
				"pacer: unknown option '%s' (see --help)\n",
				argv[optind - 1]);
			return -1;
		default:
			break;
		}
	}
	if (optind < argc) {
		fprintf(ERR_OUT, "pacer: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return -1;
	}
	/* a replay's defaults; the file and the command line still rule */
	if (c->replay) {
		c->aqm.on = false;
		c->flow_queue_ms = 0;
	}
	if (c->config_file[0] != '\0' && load_config(c, c->config_file) != 0)
		return -1;

	if (!c->interactive)
		c->auto_start = true;

	/* pass 2: the command line overrides the file */
	optind = 0;
	while ((opt = getopt_long(argc, argv, ":hia", lopts, &idx)) != -1) {
		if (opt == OPT_NO_DRAIN) {
			c->drain_on_exit = false;
		} else if (opt >= OPT_BASE && opt < OPT_BASE + (int)N_OPTS) {
			const struct opt_def *d = &opt_defs[opt - OPT_BASE];
			char where[64];

			snprintf(where, sizeof(where), "--%s", d->name);
			if (set_value(c, d, optarg, where) != 0)
				return -1;
		}
	}
	if (strlen(c->control_socket) >= sizeof(((struct sockaddr_un *)0)->sun_path) - 1) {
		fprintf(ERR_OUT,
			"pacer: --control-socket: '%s' is longer than a UNIX socket path takes (%zu bytes)\n",
			c->control_socket, sizeof(((struct sockaddr_un *)0)->sun_path) - 2);
		return -1;
	}
	if (c->stage_lead_us != 0 && c->stage_lead_us < c->offload_horizon_us) {
		fprintf(ERR_OUT,
			"pacer: stage-lead %" PRIu64 " us is shorter than offload-horizon %" PRIu64
			" us: a packet stamped that close to its time reaches the NIC late (raise stage-lead, or 0 for no staging)\n",
			c->stage_lead_us, c->offload_horizon_us);
		return -1;
	}
	/* what is due leaves by slots, up to one after its time: a bound
	 * under two would refuse traffic that leaves on time */
	if (c->max_late_us != 0 && c->max_late_us * 1000 < 2 * c->slot_ns) {
		fprintf(ERR_OUT,
			"pacer: max-late %" PRIu64 " us is under two slots (slot %" PRIu64
			" ns): what is due leaves up to a slot after its time, so pacer would refuse traffic it sends on time (at least %" PRIu64
			" us, or 0 for no bound)\n",
			c->max_late_us, c->slot_ns, (2 * c->slot_ns + 999) / 1000);
		return -1;
	}
	return 0;
}

static void rate_write(FILE *f, uint64_t bps);

/* Option @p d's value at @p p as the configuration file takes it back. */
static void
value_write(FILE *f, const struct opt_def *d, const void *p)
{
	switch (d->kind) {
	case K_RATE:
		rate_write(f, *(const uint64_t *)p);
		break;
	case K_SIZE:
	case K_U64:
		fprintf(f, "%" PRIu64, *(const uint64_t *)p);
		break;
	case K_HPOL:
		fprintf(f, "%s", *(const enum pcr_wheel_horizon_policy *)p ==
					 PCR_WHEEL_HORIZON_CAP ? "cap" : "drop");
		break;
	case K_BOOL:
		fprintf(f, "%s", *(const bool *)p ? "yes" : "no");
		break;
	case K_AQM:
		fprintf(f, "%s", *(const bool *)p ? "codel" : "off");
		break;
	case K_PATH:
	case K_OWNER:
	case K_NAME:
		fprintf(f, "%s", (const char *)p);
		break;
	case K_MODE:
		fprintf(f, "%04" PRIo64, *(const uint64_t *)p);
		break;
	}
}

int
pcr_options_restart_diff(const struct pcr_config *now,
			 const struct pcr_config *nw, FILE *f)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < N_OPTS; i++) {
		const struct opt_def *d = &opt_defs[i];
		const void *a = (const char *)now + d->off;
		const void *b = (const char *)nw + d->off;
		bool same;

		if (d->live)
			continue;
		switch (d->kind) {
		case K_PATH:
		case K_OWNER:
		case K_NAME:
			same = strcmp(a, b) == 0;
			break;
		case K_HPOL:
			same = *(const enum pcr_wheel_horizon_policy *)a ==
			       *(const enum pcr_wheel_horizon_policy *)b;
			break;
		case K_BOOL:
		case K_AQM:
			same = *(const bool *)a == *(const bool *)b;
			break;
		default:
			same = *(const uint64_t *)a == *(const uint64_t *)b;
			break;
		}
		if (same)
			continue;
		fprintf(f, "%s%s ", n++ ? ", " : "", d->name);
		value_write(f, d, a);
		fprintf(f, " -> ");
		value_write(f, d, b);
	}
	return (int)n;
}

/* A rate as the configuration file takes it back, exactly. */
static void
rate_write(FILE *f, uint64_t bps)
{
	if (bps == 0)
		fprintf(f, "unlimited");
	else if (bps % 1000000000u == 0)
		fprintf(f, "%" PRIu64 "gbit", bps / 1000000000u);
	else if (bps % 1000000u == 0)
		fprintf(f, "%" PRIu64 "mbit", bps / 1000000u);
	else if (bps % 1000u == 0)
		fprintf(f, "%" PRIu64 "kbit", bps / 1000u);
	else
		fprintf(f, "%" PRIu64, bps);
}

bool
pcr_class_name_ok(const char *name)
{
	size_t n = strlen(name);

	RTE_BUILD_BUG_ON(PCR_CLASS_NAMELEN != 32); /* PCR_CLASS_NAME_RULE */
	return n >= 1 && n < PCR_CLASS_NAMELEN &&
	       strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_-.") == n;
}

/* The AQM settings class @p cl sets itself (the rest are the default's). */
static void
class_aqm_write(FILE *f, const struct pcr_class_conf *cl)
{
	if (cl->aqm_set & PCR_AQM_SET_ON)
		fprintf(f, "aqm = %s\n", cl->aqm.on ? "codel" : "off");
	if (cl->aqm_set & PCR_AQM_SET_TARGET)
		fprintf(f, "aqm-target = %" PRIu64 "\n", cl->aqm.target_us);
	if (cl->aqm_set & PCR_AQM_SET_INTERVAL)
		fprintf(f, "aqm-interval = %" PRIu64 "\n", cl->aqm.interval_us);
	if (cl->aqm_set & PCR_AQM_SET_ECN)
		fprintf(f, "ecn = %s\n", cl->aqm.ecn ? "yes" : "no");
	if (cl->aqm_set & PCR_AQM_SET_CE)
		fprintf(f, "ce-threshold = %" PRIu64 "\n", cl->aqm.ce_threshold_us);
}

void
pcr_options_write(FILE *f, const struct pcr_config *c)
{
	uint8_t ids[PCR_MAX_CLASSES];
	unsigned int k, n;
	size_t i;

	fprintf(f, "[pacer]\n");
	for (i = 0; i < N_OPTS; i++) {
		const struct opt_def *d = &opt_defs[i];
		const void *p = (const char *)c + d->off;

		if ((d->kind == K_PATH || d->kind == K_OWNER || d->kind == K_NAME) &&
		    *(const char *)p == '\0')
			continue;
		fprintf(f, "%s = ", d->name);
		value_write(f, d, p);
		fprintf(f, "\n");
	}
	for (k = 0; k < PCR_MAX_PORTS; k++)
		if (c->port_rate_set[k]) {
			fprintf(f, "\n[port %u]\nrate = ", k);
			rate_write(f, c->port_rate_bps[k]);
			fprintf(f, "\n");
		}
	/* in match order: a file read back matches as the running pacer */
	n = pcr_class_order(c, ids);
	for (k = 0; k < n; k++) {
		const struct pcr_class_conf *cl = &c->classes[ids[k]];

		fprintf(f, "\n[class %s]\nmatch = %s\nrate = ", cl->name,
			cl->match_str);
		rate_write(f, cl->rate_bps);
		if (cl->flow_rate_set) {
			fprintf(f, "\nflow-rate = ");
			rate_write(f, cl->flow_rate_bps);
		}
		fprintf(f, "\norder = %s\n", pcr_order_name(cl->order));
		class_aqm_write(f, cl);
	}
	fprintf(f, "\n[class default]\nrate = ");
	rate_write(f, c->classes[0].rate_bps);
	if (c->classes[0].flow_rate_set) {
		fprintf(f, "\nflow-rate = ");
		rate_write(f, c->classes[0].flow_rate_bps);
	}
	fprintf(f, "\norder = %s\n", pcr_order_name(c->classes[0].order));
	class_aqm_write(f, &c->classes[0]);
}
