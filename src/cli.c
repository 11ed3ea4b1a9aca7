/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The command line (DPDK's cmdline library), as testpmd does it: the whole
 * grammar is here (tokens, help strings, handlers); handlers only parse
 * what cmdline could not and call the control layer (control.c), which
 * checks every value and changes nothing on bad input.
 *
 * Two inputs, both fed from the control loop (never blocking it):
 *  - --cmdline-file: one line at a time through cmdline_parse(), each
 *    echoed after the prompt; `sleep MS` holds the next line back;
 *  - -i: stdin in raw mode (cmdline_stdin_new(): editing, history, tab
 *    completion), read when poll() says there is input.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_string.h>
#include <cmdline_rdline.h>
#include <cmdline_socket.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "config.h"
#include "control.h"
#include "counters.h"
#include "dataplane.h"
#include "pacer.h"
#include "snapshot.h"
#include "tree.h"
#include "pcr_clock.h"

#define PROMPT "pacer> "

static struct cmdline *cl_stdin;   /* -i, once the script is done */
static bool interactive;
static struct cmdline *cl_script;  /* --cmdline-file */
static FILE *script;
static unsigned int script_line;
static uint64_t resume_tsc;        /* `sleep`: nothing runs before this */

/* What a rate of 0 means, said where one is set: tc's spelling of no
 * limit, which an operator may have meant as "stop" */
#define UNLIMITED_NOTE "rate 0: unlimited (no limit; show class and show port stats say 'unlimited')"

/* Print what a control-layer call said. */
static void
report(struct cmdline *cl, int rc, const char *err, const char *ok)
{
	if (rc != 0)
		cmdline_printf(cl, "error: %s\n", err);
	else if (ok != NULL)
		cmdline_printf(cl, "%s\n", ok);
}

/* Run @p fn(FILE *, arg) into memory and print it on the command line. */
static void
print_with(struct cmdline *cl, void (*fn)(FILE *, const void *),
	   const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL) {
		cmdline_printf(cl, "error: out of memory\n");
		return;
	}
	fn(f, arg);
	fclose(f);
	if (buf != NULL && len > 0)
		cmdline_printf(cl, "%s", buf);
	free(buf);
}

/* A statistics snapshot to free(), or NULL (and a message). */
static struct pcr_snapshot *
snapshot_new(struct cmdline *cl)
{
	struct pcr_snapshot *s = malloc(sizeof(*s));

	if (s == NULL)
		cmdline_printf(cl, "error: out of memory\n");
	else
		pcr_stats_snapshot_live(s);
	return s;
}

/* Why cmdline_parse() refused a line (@p rc < 0), and whether help lists
 * what it could have been. */
static const char *
parse_failure(int rc, const char **hint)
{
	*hint = rc == CMDLINE_PARSE_AMBIGUOUS ? "" : " (help lists them)";
	return rc == CMDLINE_PARSE_AMBIGUOUS ? "ambiguous command" :
	       rc == CMDLINE_PARSE_NOMATCH   ? "command not found" :
					       "bad arguments";
}

/* ------------------------------------------------------------------ */
/* Values: the faces parse, the control layer (control.c) takes them   */
/* typed. Each prints "error: ..." and returns -1 on a bad one.        */

static int
rate_val(struct cmdline *cl, const char *s, uint64_t *bps)
{
	char e[PCR_CLI_LINE_MAX + 256];

	if (pcr_rate_parse(s, bps, e, sizeof(e)) != 0) {
		cmdline_printf(cl, "error: %s\n", e);
		return -1;
	}
	return 0;
}

static int
u64_val(struct cmdline *cl, const char *what, const char *s, uint64_t lo,
	uint64_t hi, uint64_t *v)
{
	char e[PCR_CLI_LINE_MAX + 256];

	if (pcr_u64_parse(s, lo, hi, v, e, sizeof(e)) != 0) {
		cmdline_printf(cl, "error: %s %s: %s\n", what, s, e);
		return -1;
	}
	return 0;
}

/*
 * "match RULE... [rate RATE] [flow-rate RATE] [order ORDER]" into @p c
 * with the one class builder (options.c), as the file's [class NAME]:
 * the rule is everything between match and the first rate / flow-rate /
 * order word. 0, or -1 with why in @p e.
 */
static int
class_spec(const char *name, const char *spec, struct pcr_class_conf *c,
	   char *e, size_t elen)
{
	char buf[512], rule[256] = "", why[256];
	char *tok, *save = NULL;
	int state = 0; /* 0: want "match", 1: in the rule, 2: after it */

	if (pcr_class_new(&pcr_app.cfg, name, false, c, e, elen) != 0)
		return -1;
	if (strlen(spec) >= sizeof(buf)) {
		snprintf(e, elen, "command too long");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", spec);
	/* every isspace() character separates words, as the match parser
	 * and rte_cfgfile (which trims them) take them */
	for (tok = strtok_r(buf, " \t\n\v\f\r", &save); tok != NULL;
	     tok = strtok_r(NULL, " \t\n\v\f\r", &save)) {
		if (state == 0) {
			if (strcmp(tok, "match") != 0) {
				snprintf(e, elen, "'%s': add class NAME match RULE [rate RATE] [flow-rate RATE] [order fair|completion]",
					 tok);
				return -1;
			}
			state = 1;
		} else if (strcmp(tok, "rate") == 0 || strcmp(tok, "flow-rate") == 0 ||
			   strcmp(tok, "order") == 0 || strcmp(tok, "aqm") == 0 ||
			   strcmp(tok, "aqm-target") == 0 ||
			   strcmp(tok, "aqm-interval") == 0 ||
			   strcmp(tok, "ecn") == 0 ||
			   strcmp(tok, "ce-threshold") == 0) {
			const char *v = strtok_r(NULL, " \t\n\v\f\r", &save);

			if (v == NULL) {
				snprintf(e, elen, "%s needs a value", tok);
				return -1;
			}
			if (pcr_class_set(c, false, tok, v, why, sizeof(why)) != 0) {
				snprintf(e, elen, "%s", why);
				return -1;
			}
			state = 2;
		} else if (state == 1) {
			if (strlen(rule) + strlen(tok) + 2 > sizeof(rule)) {
				snprintf(e, elen, "match rule too long");
				return -1;
			}
			if (rule[0] != '\0')
				strcat(rule, " ");
			strcat(rule, tok);
		} else {
			snprintf(e, elen, "'%s' after the rates and order", tok);
			return -1;
		}
	}
	if (rule[0] == '\0') {
		snprintf(e, elen, "no match rule (add class NAME match RULE [rate RATE] [flow-rate RATE] [order fair|completion])");
		return -1;
	}
	if (pcr_class_set(c, false, "match", rule, why, sizeof(why)) != 0) {
		snprintf(e, elen, "match %s: %s", rule, why);
		return -1;
	}
	return pcr_class_done(c, false, e, elen);
}

/* "N" or "all": the port, -1 for all, or -2 (and a message) if neither. */
static int
port_arg(struct cmdline *cl, const char *s)
{
	uint64_t p;
	char e[PCR_CLI_LINE_MAX + 256];

	if (strcmp(s, "all") == 0)
		return -1;
	if (pcr_u64_parse(s, 0, pcr_app.n_ports - 1, &p, e, sizeof(e)) != 0) {
		cmdline_printf(cl, "error: port %s: %s (ports 0..%u, or all)\n",
			       s, e, pcr_app.n_ports - 1);
		return -2;
	}
	return (int)p;
}

/* ------------------------------------------------------------------ */
/* Renderers                                                           */

struct show_port_arg {
	const struct pcr_snapshot *s;
	int port;
};

static void
show_port_stats(FILE *f, const void *v)
{
	const struct show_port_arg *a = v;
	double hz = (double)pcr_clock_tsc_hz();
	unsigned int i;
	uint16_t p;

	for (p = 0; p < pcr_app.n_ports; p++) {
		const struct pcr_port_snap *n = &a->s->port[p];
		const struct pcr_port_snap *z = pcr_ctl_cleared(p);
		double rx_bps, tx_bps, win_s;
		char r[32];

		if (a->port >= 0 && a->port != p)
			continue;
		pcr_rate_format(pcr_app.ports[p].rates->agg.bps, r, sizeof(r));
		fprintf(f, "  ######## port %u (%s) -> port %u, rate as an egress %s ########\n",
			p, pcr_app.ports[p].name, pcr_app.ports[p].peer, r);
		for (i = 0; i < pcr_n_port_counters; i++) {
			const struct pcr_counter *k = &pcr_port_counters[i];
			uint64_t val = pcr_counter_value(k, n);

			/* counters from the last clear, levels as they are */
			if (k->kind != PCR_GAUGE)
				val -= pcr_counter_value(k, z);
			fprintf(f, "  %s: %-*" PRIu64,
				k->name, (int)(24 - strlen(k->name)), val);
			if (i % 3 == 2 || i + 1 == pcr_n_port_counters)
				fprintf(f, "\n");
		}
		fprintf(f, "  link: %s\n", n->link_up ? "up" : "down");
		/* over a fixed window the control loop samples, the same
		 * for every client whenever it asks */
		if (pcr_stats_rate(p, &rx_bps, &tx_bps, &win_s) == 0)
			fprintf(f, "  RX: %.3f Mbit/s  TX: %.3f Mbit/s (over the last %.1f s)\n",
				rx_bps / 1e6, tx_bps / 1e6, win_s);
		fprintf(f, "  departure error: p50 %.0f ns  p99 %.0f ns  max %.0f ns (%" PRIu64
			" packets since start)\n",
			(double)pcr_hist_quantile(&n->err, 500000) * 1e9 / hz,
			(double)pcr_hist_quantile(&n->err, 990000) * 1e9 / hz,
			(double)n->err.max * 1e9 / hz, n->err.count);
		if (n->qdelay.count != 0)
			fprintf(f, "  queue delay: p50 %.0f us  p99 %.0f us  max %.0f us (%" PRIu64
				" packets since start)\n",
				(double)pcr_hist_quantile(&n->qdelay, 500000) * 1e6 / hz,
				(double)pcr_hist_quantile(&n->qdelay, 990000) * 1e6 / hz,
				(double)n->qdelay.max * 1e6 / hz, n->qdelay.count);
	}
}

/* show counters: the port counter table, one line each */
static void
show_counters(FILE *f, const void *v)
{
	static const char *const kinds[] = {
		[PCR_COUNTER] = "counter", [PCR_GAUGE] = "gauge", [PCR_DROP] = "drop",
	};
	int wn = 4, wu = 4;
	unsigned int i;

	RTE_SET_USED(v);
	/* columns as wide as their longest entry */
	for (i = 0; i < pcr_n_port_counters; i++) {
		wn = RTE_MAX(wn, (int)strlen(pcr_port_counters[i].name));
		wu = RTE_MAX(wu, (int)strlen(pcr_port_counters[i].unit));
	}
	fprintf(f, "  %-*s %-7s %-*s %s\n", wn, "name", "kind", wu, "unit",
		"counts");
	for (i = 0; i < pcr_n_port_counters; i++) {
		const struct pcr_counter *k = &pcr_port_counters[i];

		fprintf(f, "  %-*s %-7s %-*s %s%s\n", wn, k->name, kinds[k->kind],
			wu, k->unit, k->kind == PCR_DROP ? "dropped: " : "", k->help);
	}
}

static void
show_wheel(FILE *f, const void *v)
{
	const struct show_port_arg *a = v;
	uint16_t p;
	unsigned int l;

	for (p = 0; p < pcr_app.n_ports; p++) {
		const struct pcr_port_snap *n = &a->s->port[p];
		struct pcr_wheel_info wi;

		if (a->port >= 0 && a->port != p)
			continue;
		/* every TX queue's wheel has the same geometry; the counts
		 * are their sums */
		pcr_wheel_info_get(pcr_app.ports[p].txq[0]->wheel, &wi);
		if (pcr_app.ports[p].n_txq > 1)
			fprintf(f, "  ######## wheels of port %u: %u TX queues, each as below, counts summed ########\n",
				p, pcr_app.ports[p].n_txq);
		else
			fprintf(f, "  ######## wheel of port %u ########\n", p);
		fprintf(f, "  granularity %" PRIu64 " ns, horizon %" PRIu64
			" ns (%s; the wheel's own %" PRIu64 " ns, at most %" PRIu64
			" ns), %u levels x %u slots, memory %zu bytes\n",
			wi.granularity_ns, pcr_app.cfg.horizon_ms * 1000000u,
			wi.horizon_policy == PCR_WHEEL_HORIZON_CAP ? "cap" : "drop",
			wi.horizon_ns,
			wi.horizon_max_ns, wi.levels, 1u << wi.slot_bits, wi.memsize);
		fprintf(f, "  queued %" PRIu64 " (inbox %" PRIu64 "), by level:",
			n->wheel.queued, n->wheel.inbox);
		for (l = 0; l < n->wheel.levels; l++)
			fprintf(f, " L%u %" PRIu64 " (slot %" PRIu64 " ns)", l,
				n->wheel.level_occupancy[l], wi.level_span_ns[l]);
		fprintf(f, "\n  enqueued %" PRIu64 " dequeued %" PRIu64 " late %" PRIu64
			" horizon_cap %" PRIu64 " spill %" PRIu64 " cascaded %" PRIu64
			" direct %" PRIu64 " advances %" PRIu64 " dropped %" PRIu64
			"\n",
			n->wheel.enqueued, n->wheel.dequeued, n->wheel.late,
			n->wheel.horizon_cap, n->wheel.spill, n->wheel.cascaded,
			n->wheel.direct, n->wheel.advances, n->wheel.dropped);
	}
}

static void
show_class(FILE *f, const void *v)
{
	const struct pcr_snapshot *s = v;
	const struct pcr_config *c = &pcr_app.cfg;
	uint8_t ids[PCR_MAX_CLASSES];
	uint64_t pk = 0, by = 0;
	unsigned int i, n;
	uint16_t p;

	fprintf(f, "  %-16s %-12s %-12s %-10s %-22s %12s %14s %10s %10s  %s\n",
		"class", "rate", "flow-rate", "order", "aqm", "tx_packets",
		"tx_bytes", "aqm_marked", "drop_aqm", "match");
	/* in match order, default last */
	n = pcr_class_order(c, ids);
	ids[n++] = 0;
	for (i = 0; i < n; i++) {
		unsigned int k = ids[i];
		const struct pcr_class_conf *cl = &c->classes[k];
		struct pcr_aqm_conf aq = pcr_class_aqm(c, k);
		uint64_t mk = 0, dr = 0;
		char r[32], fr[32], aqs[64];

		pk = by = 0;
		for (p = 0; p < pcr_app.n_ports; p++) {
			pk += s->port[p].cls[k].tx_packets;
			by += s->port[p].cls[k].tx_bytes;
			mk += s->port[p].cls[k].aqm_marked;
			dr += s->port[p].cls[k].drop_aqm;
		}
		if (aq.on)
			snprintf(aqs, sizeof(aqs), "codel %g/%gms%s",
				 (double)aq.target_us / 1000,
				 (double)aq.interval_us / 1000,
				 aq.ecn ? " ecn" : "");
		else
			snprintf(aqs, sizeof(aqs), "off");
		pcr_rate_format(cl->rate_bps, r, sizeof(r));
		pcr_rate_format(pcr_app.ports[0].rates->cls_flow[k].bps, fr,
				sizeof(fr));
		fprintf(f, "  %-16s %-12s %-12s %-10s %-22s %12" PRIu64 " %14" PRIu64
			" %10" PRIu64 " %10" PRIu64 "  %s\n",
			cl->name, r, fr, pcr_order_name(cl->order), aqs, pk, by,
			mk, dr,
			k == 0 ? "(what no other class matches)" : cl->match_str);
	}
	/* what the classes deleted since start sent: counters do not
	 * vanish with their class */
	if (c->classes_deleted == 0)
		return;
	pk = by = 0;
	for (p = 0; p < pcr_app.n_ports; p++) {
		pk += s->port[p].cls_deleted.tx_packets;
		by += s->port[p].cls_deleted.tx_bytes;
	}
	fprintf(f, "  %-16s %-12s %-12s %-10s %-22s %12" PRIu64 " %14" PRIu64 " %10s %10s  (%u classes deleted since start, together)\n",
		"(deleted)", "-", "-", "-", "-", pk, by, "-", "-",
		c->classes_deleted);
}

struct show_flows_arg {
	unsigned int top;
	enum pcr_flow_order by;
};

static void
show_flows(FILE *f, const void *v)
{
	const struct show_flows_arg *a = v;
	struct pcr_flow_view *fv;
	unsigned int n, i;
	uint64_t total;

	/* room for as many as there are, not as many as asked */
	pcr_ctl_flows_top(NULL, 0, a->by, &total);
	n = (unsigned int)RTE_MIN((uint64_t)a->top, total + 64);
	fv = calloc(n ? n : 1, sizeof(*fv));
	if (fv == NULL) {
		fprintf(f, "error: out of memory for %u flows\n", n);
		return;
	}
	n = pcr_ctl_flows_top(fv, n, a->by, &total);
	fprintf(f, "  %" PRIu64 " flows; top %u by %s\n", total, n,
		a->by == PCR_FLOWS_BY_QUEUED ? "queued bytes" : "rate");
	fprintf(f, "  %-44s %-12s %4s %10s %12s %12s %14s %14s %10s %10s\n", "flow",
		"class", "out", "queued", "queued_bytes", "tx_packets", "tx_bytes",
		"rate_bps", "aqm_marked", "drop_aqm");
	for (i = 0; i < n; i++)
		fprintf(f, "  %-44s %-12s %4u %10" PRIu64 " %12" PRIu64 " %12" PRIu64
			" %14" PRIu64 " %14.0f %10u %10u\n",
			fv[i].key, pcr_app.cfg.classes[fv[i].class_id].name,
			fv[i].egress, fv[i].queued_packets, fv[i].queued_bytes,
			fv[i].tx_packets, fv[i].tx_bytes, fv[i].rate_bps,
			fv[i].aqm_marked, fv[i].drop_aqm);
	free(fv);
}

static void
show_config(FILE *f, const void *v)
{
	RTE_SET_USED(v);
	pcr_options_write(f, &pcr_app.cfg);
}

static void
show_clock(FILE *f, const void *v)
{
	struct pcr_clock_info ci;
	uint16_t p;

	RTE_SET_USED(v);
	pcr_clock_info_get(&ci);
	fprintf(f, "  TSC %" PRIu64 " Hz in use (%s); measured %.1f Hz, EAL %" PRIu64
		" Hz, tsc_ppm %+.3f\n  fit: %u samples over %.1f s, rms %.1f ns, %u rejected, %" PRIu64
		" republished\n",
		ci.tsc_hz, pcr_app.cfg.tsc_measure ? "measured" : "the EAL's",
		ci.tsc_hz_fit, ci.tsc_hz_eal, ci.tsc_ppm, ci.samples,
		(double)ci.span_ns / 1e9, ci.rms_ns, ci.rejected, ci.updates);
	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_clock_nic_info ni;

		if (pcr_clock_nic_info_get(p, &ni) != 0 || !ni.valid) {
			fprintf(f, "  port %u: no NIC clock; %s\n", p,
				pcr_app.ports[p].tx_offload ? "send-on-timestamp" :
							      "pacing in software");
			continue;
		}
		fprintf(f, "  port %u: NIC clock %.1f Hz (%u bits), fit rms %.1f ns over %u samples; %s\n",
			p, ni.nic_hz, ni.bits, ni.rms_ns, ni.samples,
			pcr_app.ports[p].tx_offload ? "send-on-timestamp" :
						      "pacing in software");
	}
}

/* ------------------------------------------------------------------ */
/* The grammar                                                          */

#define STR(st, fld, s) TOKEN_STRING_INITIALIZER(struct st, fld, s)

/*
 * A value: one word of any length a command line holds. cmdline's own
 * string token takes at most 126 characters and past that reports only
 * "bad arguments"; this one hands the handler the whole word, so that a
 * class name or a rate too long gets the message about that value.
 */
typedef char pcr_word_t[PCR_CLI_LINE_MAX + 1];

static int
word_parse(cmdline_parse_token_hdr_t *tk, const char *buf, void *res,
	   unsigned int ressize)
{
	unsigned int n = 0;

	RTE_SET_USED(tk);
	if (buf == NULL)
		return -1;
	while (!cmdline_isendoftoken(buf[n]))
		n++;
	if (n == 0 || n >= sizeof(pcr_word_t))
		return -1;
	if (res != NULL) {
		if (ressize < sizeof(pcr_word_t))
			return -1;
		memcpy(res, buf, n);
		((char *)res)[n] = '\0';
	}
	return (int)n;
}

static int
word_help(cmdline_parse_token_hdr_t *tk, char *dst, unsigned int size)
{
	RTE_SET_USED(tk);
	snprintf(dst, size, "WORD");
	return 0;
}

static struct cmdline_token_ops word_ops = {
	.parse = word_parse,
	.get_help = word_help,
};

#define WORD(st, fld) { &word_ops, offsetof(struct st, fld) }

/* start / stop / quit / help / show class / show config / show clock */
struct cmd_word_result {
	cmdline_fixed_string_t a, b;
};

static void
cmd_start_parsed(void *res, struct cmdline *cl, void *data)
{
	char err[256];

	RTE_SET_USED(res);
	RTE_SET_USED(data);
	report(cl, pcr_ctl_start(err, sizeof(err)), err, "Forwarding started");
}

static void
cmd_stop_parsed(void *res, struct cmdline *cl, void *data)
{
	char err[256];

	RTE_SET_USED(res);
	RTE_SET_USED(data);
	report(cl, pcr_ctl_stop(err, sizeof(err)), err,
	       "Forwarding stopped: no more RX; what is queued leaves on time");
}

static void
cmd_quit_parsed(void *res, struct cmdline *cl, void *data)
{
	RTE_SET_USED(res);
	RTE_SET_USED(data);
	pcr_ctl_quit();
	cmdline_quit(cl);
}

static void
cmd_reload_parsed(void *res, struct cmdline *cl, void *data)
{
	char what[1024], err[1024];
	int rc;

	RTE_SET_USED(res);
	RTE_SET_USED(data);
	rc = pcr_ctl_reload(what, sizeof(what), err, sizeof(err));
	if (rc == 0)
		cmdline_printf(cl, "reloaded: %s\n", what);
	else
		report(cl, rc, err, NULL);
}

static cmdline_parse_token_string_t cmd_start_a = STR(cmd_word_result, a, "start");
static cmdline_parse_inst_t cmd_start = {
	.f = cmd_start_parsed,
	.help_str = "start: start forwarding (RX polling)",
	.tokens = { (void *)&cmd_start_a, NULL },
};
static cmdline_parse_token_string_t cmd_stop_a = STR(cmd_word_result, a, "stop");
static cmdline_parse_inst_t cmd_stop = {
	.f = cmd_stop_parsed,
	.help_str = "stop: stop forwarding (RX); what is queued still leaves on time",
	.tokens = { (void *)&cmd_stop_a, NULL },
};
static cmdline_parse_token_string_t cmd_reload_a = STR(cmd_word_result, a, "reload");
static cmdline_parse_inst_t cmd_reload = {
	.f = cmd_reload_parsed,
	.help_str = "reload: read --config and the command line's options again and take their rates, horizon, flow-limit and classes (as SIGHUP; all or nothing)",
	.tokens = { (void *)&cmd_reload_a, NULL },
};
static cmdline_parse_token_string_t cmd_quit_a = STR(cmd_word_result, a, "quit");
static cmdline_parse_inst_t cmd_quit = {
	.f = cmd_quit_parsed,
	.help_str = "quit: exit as on SIGTERM (drain what is queued, unless --drain-on-exit no)",
	.tokens = { (void *)&cmd_quit_a, NULL },
};

static void cmd_help_parsed(void *res, struct cmdline *cl, void *data);
static cmdline_parse_token_string_t cmd_help_a = STR(cmd_word_result, a, "help");
static cmdline_parse_inst_t cmd_help = {
	.f = cmd_help_parsed,
	.help_str = "help: this list",
	.tokens = { (void *)&cmd_help_a, NULL },
};

static void
cmd_show_word_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_word_result *r = res;
	struct pcr_snapshot *s;

	RTE_SET_USED(data);
	if (strcmp(r->b, "config") == 0) {
		print_with(cl, show_config, NULL);
		return;
	}
	if (strcmp(r->b, "clock") == 0) {
		print_with(cl, show_clock, NULL);
		return;
	}
	if (strcmp(r->b, "counters") == 0) {
		print_with(cl, show_counters, NULL);
		return;
	}
	s = snapshot_new(cl);
	if (s == NULL)
		return;
	print_with(cl, show_class, s);
	free(s);
}

static cmdline_parse_token_string_t cmd_show_word_a = STR(cmd_word_result, a, "show");
static cmdline_parse_token_string_t cmd_show_word_b =
	STR(cmd_word_result, b, "class#config#clock#counters");
static cmdline_parse_inst_t cmd_show_word = {
	.f = cmd_show_word_parsed,
	.help_str = "show class|config|clock|counters: classes with rates and counters; the configuration as save config writes it; the clocks; what each port counter counts",
	.tokens = { (void *)&cmd_show_word_a, (void *)&cmd_show_word_b, NULL },
};

/* show stats json|prometheus: the whole statistics as one document */
struct cmd_stats_result {
	cmdline_fixed_string_t a, b, fmt;
};

static void
stats_json(FILE *f, const void *v)
{
	pcr_stats_json(v, f,
		       pcr_app.pool != NULL ?
			       (int64_t)rte_mempool_in_use_count(pcr_app.pool) :
			       -1,
		       false);
}

static void
stats_prometheus(FILE *f, const void *v)
{
	pcr_stats_prometheus(v, f);
}

static void
cmd_show_stats_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_stats_result *r = res;
	struct pcr_snapshot *s = snapshot_new(cl);

	RTE_SET_USED(data);
	if (s == NULL)
		return;
	print_with(cl, strcmp(r->fmt, "json") == 0 ? stats_json : stats_prometheus,
		   s);
	free(s);
}

static cmdline_parse_token_string_t cmd_show_stats_a = STR(cmd_stats_result, a, "show");
static cmdline_parse_token_string_t cmd_show_stats_b = STR(cmd_stats_result, b, "stats");
static cmdline_parse_token_string_t cmd_show_stats_c =
	STR(cmd_stats_result, fmt, "json#prometheus");
static cmdline_parse_inst_t cmd_show_stats = {
	.f = cmd_show_stats_parsed,
	.help_str = "show stats json|prometheus: every counter, as --stats-json writes them or in the Prometheus text format",
	.tokens = { (void *)&cmd_show_stats_a, (void *)&cmd_show_stats_b,
		    (void *)&cmd_show_stats_c, NULL },
};

/* show port stats|xstats X, clear port stats X, show wheel X */
struct cmd_port_result {
	cmdline_fixed_string_t a, b, c;
	pcr_word_t port;
};

static void
cmd_show_port_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_port_result *r = res;
	struct show_port_arg a;
	struct pcr_snapshot *s;
	int port = port_arg(cl, r->port);

	RTE_SET_USED(data);
	if (port < -1)
		return;
	if (strcmp(r->c, "xstats") == 0) {
		struct rte_eth_xstat_name *names;
		struct rte_eth_xstat *vals;
		int n, i;

		if (port < 0) {
			cmdline_printf(cl, "error: show port xstats takes one port\n");
			return;
		}
		n = rte_eth_xstats_get_names((uint16_t)port, NULL, 0);
		if (n < 0) {
			cmdline_printf(cl, "error: port %d: no xstats: %s\n", port,
				       strerror(-n));
			return;
		}
		names = calloc((size_t)n + 1, sizeof(*names));
		vals = calloc((size_t)n + 1, sizeof(*vals));
		if (names != NULL && vals != NULL &&
		    rte_eth_xstats_get_names((uint16_t)port, names, (unsigned int)n) == n &&
		    rte_eth_xstats_get((uint16_t)port, vals, (unsigned int)n) == n) {
			cmdline_printf(cl, "  ######## NIC extended statistics for port %d ########\n",
				       port);
			for (i = 0; i < n; i++)
				cmdline_printf(cl, "  %s: %" PRIu64 "\n",
					       names[vals[i].id].name, vals[i].value);
		} else {
			cmdline_printf(cl, "error: port %d: cannot read xstats\n", port);
		}
		free(names);
		free(vals);
		return;
	}
	s = snapshot_new(cl);
	if (s == NULL)
		return;
	a.s = s;
	a.port = port;
	if (strcmp(r->a, "clear") == 0) {
		pcr_ctl_clear_stats(port, s);
		cmdline_printf(cl, "Statistics cleared for %s\n",
			       port < 0 ? "all ports" : r->port);
	} else if (strcmp(r->b, "wheel") == 0) {
		print_with(cl, show_wheel, &a);
	} else {
		print_with(cl, show_port_stats, &a);
	}
	free(s);
}

static cmdline_parse_token_string_t cmd_show_port_a = STR(cmd_port_result, a, "show");
static cmdline_parse_token_string_t cmd_show_port_b = STR(cmd_port_result, b, "port");
static cmdline_parse_token_string_t cmd_show_port_c = STR(cmd_port_result, c, "stats#xstats");
static cmdline_parse_token_hdr_t cmd_show_port_d = WORD(cmd_port_result, port);
static cmdline_parse_inst_t cmd_show_port = {
	.f = cmd_show_port_parsed,
	.help_str = "show port stats N|all, show port xstats N: pacer's counters (since clear port stats); the PMD's extended statistics",
	.tokens = { (void *)&cmd_show_port_a, (void *)&cmd_show_port_b,
		    (void *)&cmd_show_port_c, (void *)&cmd_show_port_d, NULL },
};
static cmdline_parse_token_string_t cmd_clear_port_a = STR(cmd_port_result, a, "clear");
static cmdline_parse_token_string_t cmd_clear_port_b = STR(cmd_port_result, b, "port");
static cmdline_parse_token_string_t cmd_clear_port_c = STR(cmd_port_result, c, "stats");
static cmdline_parse_token_hdr_t cmd_clear_port_d = WORD(cmd_port_result, port);
static cmdline_parse_inst_t cmd_clear_port = {
	.f = cmd_show_port_parsed,
	.help_str = "clear port stats N|all: count show port stats from now (telemetry and --stats-json are not affected)",
	.tokens = { (void *)&cmd_clear_port_a, (void *)&cmd_clear_port_b,
		    (void *)&cmd_clear_port_c, (void *)&cmd_clear_port_d, NULL },
};

struct cmd_wheel_result {
	cmdline_fixed_string_t a, b;
	pcr_word_t port;
};

static void
cmd_show_wheel_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_wheel_result *r = res;
	struct cmd_port_result pr;

	memset(&pr, 0, sizeof(pr));
	snprintf(pr.a, sizeof(pr.a), "show");
	snprintf(pr.b, sizeof(pr.b), "wheel");
	snprintf(pr.port, sizeof(pr.port), "%s", r->port);
	cmd_show_port_parsed(&pr, cl, data);
}

static cmdline_parse_token_string_t cmd_show_wheel_a = STR(cmd_wheel_result, a, "show");
static cmdline_parse_token_string_t cmd_show_wheel_b = STR(cmd_wheel_result, b, "wheel");
static cmdline_parse_token_hdr_t cmd_show_wheel_c = WORD(cmd_wheel_result, port);
static cmdline_parse_inst_t cmd_show_wheel = {
	.f = cmd_show_wheel_parsed,
	.help_str = "show wheel N|all: occupancy by level, horizon, granularity, counters",
	.tokens = { (void *)&cmd_show_wheel_a, (void *)&cmd_show_wheel_b,
		    (void *)&cmd_show_wheel_c, NULL },
};

/* show flows [top N [by queued|rate]] */
struct cmd_flows_result {
	cmdline_fixed_string_t a, b, top, by, order;
	pcr_word_t n;
};

static void
cmd_show_flows_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_flows_result *r = res;
	struct show_flows_arg a = { .top = 10, .by = PCR_FLOWS_BY_QUEUED };
	uint64_t v;
	char e[PCR_CLI_LINE_MAX + 256];

	if (data != NULL) { /* with "top N" */
		if (pcr_u64_parse(r->n, 1, UINT32_MAX, &v, e, sizeof(e)) != 0) {
			cmdline_printf(cl, "error: top %s: %s\n", r->n, e);
			return;
		}
		a.top = (unsigned int)v;
		if (strcmp(r->order, "rate") == 0)
			a.by = PCR_FLOWS_BY_RATE;
	}
	print_with(cl, show_flows, &a);
}

static cmdline_parse_token_string_t cmd_flows_a = STR(cmd_flows_result, a, "show");
static cmdline_parse_token_string_t cmd_flows_b = STR(cmd_flows_result, b, "flows");
static cmdline_parse_token_string_t cmd_flows_top = STR(cmd_flows_result, top, "top");
static cmdline_parse_token_hdr_t cmd_flows_n = WORD(cmd_flows_result, n);
static cmdline_parse_token_string_t cmd_flows_by = STR(cmd_flows_result, by, "by");
static cmdline_parse_token_string_t cmd_flows_order = STR(cmd_flows_result, order, "queued#rate");
static cmdline_parse_inst_t cmd_show_flows = {
	.f = cmd_show_flows_parsed,
	.help_str = "show flows: the 10 flows with the most bytes queued",
	.tokens = { (void *)&cmd_flows_a, (void *)&cmd_flows_b, NULL },
};
static cmdline_parse_inst_t cmd_show_flows_top = {
	.f = cmd_show_flows_parsed,
	.data = (void *)1,
	.help_str = "show flows top N [by queued|rate]: the N flows with the most bytes queued (or the highest rate)",
	.tokens = { (void *)&cmd_flows_a, (void *)&cmd_flows_b,
		    (void *)&cmd_flows_top, (void *)&cmd_flows_n, NULL },
};
static cmdline_parse_inst_t cmd_show_flows_top_by = {
	.f = cmd_show_flows_parsed,
	.data = (void *)1,
	.help_str = "show flows top N by queued|rate",
	.tokens = { (void *)&cmd_flows_a, (void *)&cmd_flows_b,
		    (void *)&cmd_flows_top, (void *)&cmd_flows_n,
		    (void *)&cmd_flows_by, (void *)&cmd_flows_order, NULL },
};

/* ------------------------------------------------------------------ */
/* The subscriber tree: show node / show tree / show top nodes          */

/* A rate in tc's units, for a table. */
static void
rate_str(char *buf, size_t len, double bps)
{
	if (bps >= 1e9)
		snprintf(buf, len, "%.3gGbit", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(buf, len, "%.3gMbit", bps / 1e6);
	else if (bps >= 1e3)
		snprintf(buf, len, "%.3gKbit", bps / 1e3);
	else
		snprintf(buf, len, "%.0fbit", bps);
}

/* No tree: say how to have one. */
static bool
tree_missing(FILE *f)
{
	if (pcr_tree_n_nodes(&pcr_app) != 0)
		return false;
	fprintf(f, "error: no subscriber tree (start pacer with --network and/or --subscribers)\n");
	return true;
}

static void
show_node(FILE *f, const void *v)
{
	const char *name = v;
	struct pcr_node_info ni;
	int32_t id;
	unsigned int k;

	if (tree_missing(f))
		return;
	id = pcr_tree_node_find(&pcr_app, name);
	if (id < 0) {
		fprintf(f, "error: node '%s': no such node or Circuit ID in the tree\n",
			name);
		return;
	}
	pcr_tree_node_info(&pcr_app, (uint32_t)id, &ni);
	fprintf(f, "  %s (%s%s%s), depth %u, under %s, %u children\n", ni.name,
		ni.type, ni.leaf && ni.circuit_name[0] ? ": " : "",
		ni.leaf ? ni.circuit_name : "", ni.depth,
		ni.parent != NULL ? ni.parent : "the port", ni.children);
	if (ni.leaf)
		fprintf(f, "  min %.6g/%.6g Mbps, max %.6g/%.6g Mbps (down/up), %u devices, %u prefixes\n",
			ni.down_min_bps / 1e6, ni.up_min_bps / 1e6,
			ni.down_max_bps / 1e6, ni.up_max_bps / 1e6, ni.devices,
			ni.prefixes);
	else
		fprintf(f, "  max %.6g/%.6g Mbps (down/up)\n", ni.down_max_bps / 1e6,
			ni.up_max_bps / 1e6);
	fprintf(f, "  %4s %-9s %10s %10s %12s %14s %10s\n", "port", "direction",
		"max", "weight", "tx_packets", "tx_bytes", "rate");
	for (k = 0; k < ni.n_ports; k++) {
		const struct pcr_node_port *np = &ni.port[k];
		char mx[32], w[32], r[32];

		rate_str(mx, sizeof(mx), (double)np->max_bps);
		rate_str(w, sizeof(w), (double)np->weight);
		rate_str(r, sizeof(r), np->rate_bps);
		fprintf(f, "  %4u %-9s %10s %10s %12" PRIu64 " %14" PRIu64 " %10s\n",
			np->port, np->down ? "download" : "upload", mx, w,
			np->tx_packets, np->tx_bytes, r);
	}
}

struct show_tree_arg {
	int32_t root;       /* -1: the port's top level */
	unsigned int depth;
};

/* Most lines show tree prints (a 100,000-subscriber tree at full depth
 * is not read at a prompt: show top nodes, --stats-json). */
#define SHOW_TREE_LINES 2000

static void
tree_line(FILE *f, uint32_t i, unsigned int indent)
{
	struct pcr_node_info ni;
	char mx[32], r[32];
	const struct pcr_node_port *np;
	unsigned int k;

	pcr_tree_node_info(&pcr_app, i, &ni);
	/* the download side's figures: the port that faces the subscribers */
	for (k = 0, np = &ni.port[0]; k < ni.n_ports; k++)
		if (ni.port[k].down)
			np = &ni.port[k];
	rate_str(mx, sizeof(mx), (double)np->max_bps);
	rate_str(r, sizeof(r), np->rate_bps);
	fprintf(f, "  %*s%-*s %-10s %10s %10s %14" PRIu64 "\n", (int)indent * 2, "",
		(int)(32 > indent * 2 ? 32 - indent * 2 : 1), ni.name, ni.type, mx, r,
		np->tx_bytes);
}

static void
show_tree(FILE *f, const void *v)
{
	const struct show_tree_arg *a = v;
	uint32_t stack[PCR_TREE_DEPTH_MAX + 2], n = pcr_tree_n_nodes(&pcr_app);
	unsigned int lines = 0, top, skipped = 0;
	uint32_t i;

	if (tree_missing(f))
		return;
	fprintf(f, "  %-32s %-10s %10s %10s %14s   (download: port %" PRIu64 ")\n",
		"node", "type", "max", "rate", "tx_bytes",
		pcr_app.cfg.subscriber_port);
	/* depth first, iteratively: a node, then its children */
	for (i = 0; i < n; i++) {
		uint32_t c;

		if (a->root >= 0 ? i != (uint32_t)a->root :
				   pcr_app.tree_parent[i] != PCR_TREE_NONE)
			continue;
		top = 0;
		stack[top++] = i;
		while (top > 0) {
			uint32_t x = stack[top - 1];

			if (x == PCR_TREE_NONE) {
				top--;
				continue;
			}
			/* replace x by its next sibling (within this walk),
			 * then go down into x's children */
			stack[top - 1] = top == 1 ? PCR_TREE_NONE :
					 pcr_tree_next_sibling(&pcr_app, x);
			if (lines++ < SHOW_TREE_LINES)
				tree_line(f, x, top - 1);
			else
				skipped++;
			c = pcr_tree_first_child(&pcr_app, x);
			if (c != PCR_TREE_NONE && top < a->depth &&
			    top < RTE_DIM(stack))
				stack[top++] = c;
		}
	}
	if (skipped != 0)
		fprintf(f, "  ... %u more nodes (show tree NAME, or a smaller depth)\n",
			skipped);
}

struct show_top_arg {
	unsigned int n;
	bool by_bytes;
};

static void
show_top_nodes(FILE *f, const void *v)
{
	const struct show_top_arg *a = v;
	uint32_t n = pcr_tree_n_nodes(&pcr_app), i, k = 0, *ids;
	uint16_t p = (uint16_t)pcr_app.cfg.subscriber_port;
	double *key;

	if (tree_missing(f))
		return;
	ids = calloc(a->n + 1, sizeof(*ids));
	key = calloc(a->n + 1, sizeof(*key));
	if (ids == NULL || key == NULL) {
		free(ids);
		free(key);
		fprintf(f, "error: out of memory\n");
		return;
	}
	/* the top N by insertion: N is small, the tree is not walked twice */
	for (i = 0; i < n; i++) {
		double x = a->by_bytes ? (double)pcr_tree_bytes(&pcr_app, p, i) :
					 pcr_tree_rate(&pcr_app, p, i);
		uint32_t j;

		if (k == a->n && x <= key[k - 1])
			continue;
		j = k < a->n ? k++ : k - 1;
		while (j > 0 && key[j - 1] < x) {
			key[j] = key[j - 1];
			ids[j] = ids[j - 1];
			j--;
		}
		key[j] = x;
		ids[j] = i;
	}
	fprintf(f, "  top %u nodes by %s (port %u)\n", k,
		a->by_bytes ? "bytes sent" : "rate now", p);
	fprintf(f, "  %-32s %-10s %10s %10s %14s\n", "node", "type", "max",
		"rate", "tx_bytes");
	for (i = 0; i < k; i++)
		tree_line(f, ids[i], 0);
	free(ids);
	free(key);
}

/* show node NAME */
struct cmd_node_result {
	cmdline_fixed_string_t a, b, c;
	pcr_word_t x, y;
};

static void
cmd_show_node_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_node_result *r = res;

	RTE_SET_USED(data);
	print_with(cl, show_node, r->x);
}

static cmdline_parse_token_string_t cmd_node_a = STR(cmd_node_result, a, "show");
static cmdline_parse_token_string_t cmd_node_b = STR(cmd_node_result, b, "node");
static cmdline_parse_token_hdr_t cmd_node_x = WORD(cmd_node_result, x);
static cmdline_parse_inst_t cmd_show_node = {
	.f = cmd_show_node_parsed,
	.help_str = "show node NAME: a node of the subscriber tree, or a subscriber by Circuit ID: rates, weights, what it sent, its rate now",
	.tokens = { (void *)&cmd_node_a, (void *)&cmd_node_b, (void *)&cmd_node_x,
		    NULL },
};

/* show tree [NAME] [depth N] */
static void
cmd_show_tree_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_node_result *r = res;
	struct show_tree_arg a = { -1, 3 };
	uintptr_t form = (uintptr_t)data; /* 1: NAME, 2: depth N, 3: both */
	char e[PCR_CLI_LINE_MAX + 256];
	uint64_t d;

	if ((form & 1) && pcr_tree_n_nodes(&pcr_app) != 0) {
		a.root = pcr_tree_node_find(&pcr_app, r->x);
		if (a.root < 0) {
			cmdline_printf(cl, "error: node '%s': no such node or Circuit ID in the tree\n",
				       r->x);
			return;
		}
	}
	if (form & 2) {
		if (pcr_u64_parse(form == 3 ? r->y : r->x, 1, PCR_TREE_DEPTH_MAX + 1, &d,
				  e, sizeof(e)) != 0) {
			cmdline_printf(cl, "error: depth %s: %s\n",
				       form == 3 ? r->y : r->x, e);
			return;
		}
		a.depth = (unsigned int)d;
	}
	print_with(cl, show_tree, &a);
}

static cmdline_parse_token_string_t cmd_tree_b = STR(cmd_node_result, b, "tree");
static cmdline_parse_token_string_t cmd_tree_c = STR(cmd_node_result, c, "depth");
static cmdline_parse_token_hdr_t cmd_tree_y = WORD(cmd_node_result, y);
static cmdline_parse_inst_t cmd_show_tree = {
	.f = cmd_show_tree_parsed,
	.help_str = "show tree: the subscriber tree from the top, 3 levels",
	.tokens = { (void *)&cmd_node_a, (void *)&cmd_tree_b, NULL },
};
static cmdline_parse_inst_t cmd_show_tree_name = {
	.f = cmd_show_tree_parsed,
	.data = (void *)1,
	.help_str = "show tree NAME: the subtree under NAME, 3 levels",
	.tokens = { (void *)&cmd_node_a, (void *)&cmd_tree_b, (void *)&cmd_node_x,
		    NULL },
};
static cmdline_parse_inst_t cmd_show_tree_depth = {
	.f = cmd_show_tree_parsed,
	.data = (void *)2,
	.help_str = "show tree depth N: the tree from the top, N levels",
	.tokens = { (void *)&cmd_node_a, (void *)&cmd_tree_b, (void *)&cmd_tree_c,
		    (void *)&cmd_node_x, NULL },
};
static cmdline_parse_inst_t cmd_show_tree_name_depth = {
	.f = cmd_show_tree_parsed,
	.data = (void *)3,
	.help_str = "show tree NAME depth N: the subtree under NAME, N levels",
	.tokens = { (void *)&cmd_node_a, (void *)&cmd_tree_b, (void *)&cmd_node_x,
		    (void *)&cmd_tree_c, (void *)&cmd_tree_y, NULL },
};

/* show top nodes N [by rate|bytes] */
struct cmd_top_result {
	cmdline_fixed_string_t a, b, c, by, order;
	pcr_word_t n;
};

static void
cmd_show_top_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_top_result *r = res;
	struct show_top_arg a = { 10, false };
	char e[PCR_CLI_LINE_MAX + 256];
	uint64_t v;

	if (pcr_u64_parse(r->n, 1, 10000, &v, e, sizeof(e)) != 0) {
		cmdline_printf(cl, "error: top nodes %s: %s\n", r->n, e);
		return;
	}
	a.n = (unsigned int)v;
	a.by_bytes = data != NULL && strcmp(r->order, "bytes") == 0;
	print_with(cl, show_top_nodes, &a);
}

static cmdline_parse_token_string_t cmd_top_a = STR(cmd_top_result, a, "show");
static cmdline_parse_token_string_t cmd_top_b = STR(cmd_top_result, b, "top");
static cmdline_parse_token_string_t cmd_top_c = STR(cmd_top_result, c, "nodes");
static cmdline_parse_token_hdr_t cmd_top_n = WORD(cmd_top_result, n);
static cmdline_parse_token_string_t cmd_top_by = STR(cmd_top_result, by, "by");
static cmdline_parse_token_string_t cmd_top_order = STR(cmd_top_result, order, "rate#bytes");
static cmdline_parse_inst_t cmd_show_top = {
	.f = cmd_show_top_parsed,
	.help_str = "show top nodes N [by rate|bytes]: the N nodes and subscribers sending the most now (or most sent)",
	.tokens = { (void *)&cmd_top_a, (void *)&cmd_top_b, (void *)&cmd_top_c,
		    (void *)&cmd_top_n, NULL },
};
static cmdline_parse_inst_t cmd_show_top_by = {
	.f = cmd_show_top_parsed,
	.data = (void *)1,
	.help_str = "show top nodes N by rate|bytes",
	.tokens = { (void *)&cmd_top_a, (void *)&cmd_top_b, (void *)&cmd_top_c,
		    (void *)&cmd_top_n, (void *)&cmd_top_by, (void *)&cmd_top_order,
		    NULL },
};

/* set port N rate R */
struct cmd_set4_result {
	cmdline_fixed_string_t a, b, c;
	pcr_word_t x, v;
};

static void
cmd_set_port_rate_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_set4_result *r = res;
	char err[256], e[PCR_CLI_LINE_MAX + 256];
	uint64_t port, bps;

	RTE_SET_USED(data);
	if (pcr_u64_parse(r->x, 0, pcr_app.n_ports - 1, &port, e, sizeof(e)) != 0) {
		cmdline_printf(cl, "error: port %s: %s (ports 0..%u)\n", r->x, e,
			       pcr_app.n_ports - 1);
		return;
	}
	if (rate_val(cl, r->v, &bps) != 0)
		return;
	report(cl, pcr_ctl_set_port_rate((uint16_t)port, bps, err, sizeof(err)),
	       err, bps == 0 ? UNLIMITED_NOTE : NULL);
}

static cmdline_parse_token_string_t cmd_spr_a = STR(cmd_set4_result, a, "set");
static cmdline_parse_token_string_t cmd_spr_b = STR(cmd_set4_result, b, "port");
static cmdline_parse_token_hdr_t cmd_spr_x = WORD(cmd_set4_result, x);
static cmdline_parse_token_string_t cmd_spr_c = STR(cmd_set4_result, c, "rate");
static cmdline_parse_token_hdr_t cmd_spr_v = WORD(cmd_set4_result, v);
static cmdline_parse_inst_t cmd_set_port_rate = {
	.f = cmd_set_port_rate_parsed,
	.help_str = "set port N rate RATE: the port's aggregate as an egress (tc units, unlimited)",
	.tokens = { (void *)&cmd_spr_a, (void *)&cmd_spr_b, (void *)&cmd_spr_x,
		    (void *)&cmd_spr_c, (void *)&cmd_spr_v, NULL },
};

/* set class NAME rate|flow-rate R */
static void
cmd_set_class_rate_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_set4_result *r = res;
	char err[256];
	uint64_t bps;

	RTE_SET_USED(data);
	if (rate_val(cl, r->v, &bps) != 0)
		return;
	report(cl, pcr_ctl_set_class_rate(r->x, strcmp(r->c, "flow-rate") == 0,
					  bps, err, sizeof(err)),
	       err, bps == 0 ? UNLIMITED_NOTE : NULL);
}

static cmdline_parse_token_string_t cmd_scr_a = STR(cmd_set4_result, a, "set");
static cmdline_parse_token_string_t cmd_scr_b = STR(cmd_set4_result, b, "class");
static cmdline_parse_token_hdr_t cmd_scr_x = WORD(cmd_set4_result, x);
static cmdline_parse_token_string_t cmd_scr_c = STR(cmd_set4_result, c, "rate#flow-rate");
static cmdline_parse_token_hdr_t cmd_scr_v = WORD(cmd_set4_result, v);
static cmdline_parse_inst_t cmd_set_class_rate = {
	.f = cmd_set_class_rate_parsed,
	.help_str = "set class NAME rate|flow-rate RATE: the class's aggregate, or its per-flow rate",
	.tokens = { (void *)&cmd_scr_a, (void *)&cmd_scr_b, (void *)&cmd_scr_x,
		    (void *)&cmd_scr_c, (void *)&cmd_scr_v, NULL },
};

/* set class NAME order fair|completion */
static void
cmd_set_class_order_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_set4_result *r = res;
	enum pcr_order o;
	char err[256];

	RTE_SET_USED(data);
	if (pcr_order_parse(r->v, &o) != 0) {
		cmdline_printf(cl, "error: order '%s': fair or completion\n", r->v);
		return;
	}
	report(cl, pcr_ctl_set_class_order(r->x, o, err, sizeof(err)), err,
	       NULL);
}

static cmdline_parse_token_string_t cmd_sco_a = STR(cmd_set4_result, a, "set");
static cmdline_parse_token_string_t cmd_sco_b = STR(cmd_set4_result, b, "class");
static cmdline_parse_token_hdr_t cmd_sco_x = WORD(cmd_set4_result, x);
static cmdline_parse_token_string_t cmd_sco_c = STR(cmd_set4_result, c, "order");
static cmdline_parse_token_hdr_t cmd_sco_v = WORD(cmd_set4_result, v);
static cmdline_parse_inst_t cmd_set_class_order = {
	.f = cmd_set_class_order_parsed,
	.help_str = "set class NAME order fair|completion: which held flow goes next: round robin, or the transaction likeliest to finish first",
	.tokens = { (void *)&cmd_sco_a, (void *)&cmd_sco_b, (void *)&cmd_sco_x,
		    (void *)&cmd_sco_c, (void *)&cmd_sco_v, NULL },
};

/* set flow-limit N, set aqm... V, del class NAME, save config FILE */
struct cmd_set2_result {
	cmdline_fixed_string_t a, b;
	pcr_word_t v;
};

/* set class NAME aqm|aqm-target|aqm-interval|ecn|ce-threshold VALUE */
static void
cmd_set_class_key_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_set4_result *r = res;
	char err[PCR_CLI_LINE_MAX + 256];

	RTE_SET_USED(data);
	report(cl, pcr_ctl_set_class_key(r->x, r->c, r->v, err, sizeof(err)),
	       err, NULL);
}

static cmdline_parse_token_string_t cmd_sck_a = STR(cmd_set4_result, a, "set");
static cmdline_parse_token_string_t cmd_sck_b = STR(cmd_set4_result, b, "class");
static cmdline_parse_token_hdr_t cmd_sck_x = WORD(cmd_set4_result, x);
static cmdline_parse_token_string_t cmd_sck_c =
	STR(cmd_set4_result, c, "aqm#aqm-target#aqm-interval#ecn#ce-threshold");
static cmdline_parse_token_hdr_t cmd_sck_v = WORD(cmd_set4_result, v);
static cmdline_parse_inst_t cmd_set_class_key = {
	.f = cmd_set_class_key_parsed,
	.help_str = "set class NAME aqm|aqm-target|aqm-interval|ecn|ce-threshold VALUE: the class's own AQM setting (codel|off, US, US, yes|no, US)",
	.tokens = { (void *)&cmd_sck_a, (void *)&cmd_sck_b, (void *)&cmd_sck_x,
		    (void *)&cmd_sck_c, (void *)&cmd_sck_v, NULL },
};

/* set aqm|aqm-target|aqm-interval|ecn|ce-threshold VALUE */
static void
cmd_set_aqm_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_set2_result *r = res;
	char err[PCR_CLI_LINE_MAX + 256];

	RTE_SET_USED(data);
	report(cl, pcr_ctl_set_option(r->b, r->v, err, sizeof(err)), err, NULL);
}

static cmdline_parse_token_string_t cmd_saqm_a = STR(cmd_set2_result, a, "set");
static cmdline_parse_token_string_t cmd_saqm_b =
	STR(cmd_set2_result, b, "aqm#aqm-target#aqm-interval#ecn#ce-threshold");
static cmdline_parse_token_hdr_t cmd_saqm_v = WORD(cmd_set2_result, v);
static cmdline_parse_inst_t cmd_set_aqm = {
	.f = cmd_set_aqm_parsed,
	.help_str = "set aqm|aqm-target|aqm-interval|ecn|ce-threshold VALUE: the AQM's default setting, for every class that does not set its own",
	.tokens = { (void *)&cmd_saqm_a, (void *)&cmd_saqm_b, (void *)&cmd_saqm_v,
		    NULL },
};

/* set horizon MS policy drop|cap */
static void
cmd_set_horizon_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_set4_result *r = res;
	char err[256];
	uint64_t ms;

	RTE_SET_USED(data);
	if (u64_val(cl, "horizon", r->x, 1, 60000, &ms) != 0)
		return;
	/* the grammar takes only drop or cap */
	report(cl, pcr_ctl_set_horizon(ms, strcmp(r->v, "cap") == 0 ?
						   PCR_WHEEL_HORIZON_CAP :
						   PCR_WHEEL_HORIZON_DROP,
				       err, sizeof(err)),
	       err, NULL);
}

static cmdline_parse_token_string_t cmd_sh_a = STR(cmd_set4_result, a, "set");
static cmdline_parse_token_string_t cmd_sh_b = STR(cmd_set4_result, b, "horizon");
static cmdline_parse_token_hdr_t cmd_sh_x = WORD(cmd_set4_result, x);
static cmdline_parse_token_string_t cmd_sh_c = STR(cmd_set4_result, c, "policy");
static cmdline_parse_token_string_t cmd_sh_v = STR(cmd_set4_result, v, "drop#cap");
static cmdline_parse_inst_t cmd_set_horizon = {
	.f = cmd_set_horizon_parsed,
	.help_str = "set horizon MS policy drop|cap: the furthest departure accepted, and what happens beyond it",
	.tokens = { (void *)&cmd_sh_a, (void *)&cmd_sh_b, (void *)&cmd_sh_x,
		    (void *)&cmd_sh_c, (void *)&cmd_sh_v, NULL },
};

/* set flow-limit N, del class NAME, save config FILE, sleep MS */

static void
cmd_two_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_set2_result *r = res;
	char err[PATH_MAX + 256];
	int rc;

	RTE_SET_USED(data);
	if (strcmp(r->a, "del") == 0) {
		rc = pcr_ctl_del_class(r->v, err, sizeof(err));
	} else if (strcmp(r->a, "save") == 0) {
		char saved[PATH_MAX];

		rc = pcr_ctl_save_config(r->v, saved, sizeof(saved), err,
					 sizeof(err));
		if (rc == 0)
			cmdline_printf(cl, "configuration saved to %s\n", saved);
	} else {
		uint64_t v;

		if (u64_val(cl, "flow-limit", r->v, 0, UINT32_MAX, &v) != 0)
			return;
		rc = pcr_ctl_set_flow_limit(v, err, sizeof(err));
	}
	report(cl, rc, err, NULL);
}

static cmdline_parse_token_string_t cmd_sfl_a = STR(cmd_set2_result, a, "set");
static cmdline_parse_token_string_t cmd_sfl_b = STR(cmd_set2_result, b, "flow-limit");
static cmdline_parse_token_hdr_t cmd_sfl_v = WORD(cmd_set2_result, v);
static cmdline_parse_inst_t cmd_set_flow_limit = {
	.f = cmd_two_parsed,
	.help_str = "set flow-limit PKTS: most packets one flow may have queued, 0 = none",
	.tokens = { (void *)&cmd_sfl_a, (void *)&cmd_sfl_b, (void *)&cmd_sfl_v, NULL },
};
static cmdline_parse_token_string_t cmd_del_a = STR(cmd_set2_result, a, "del");
static cmdline_parse_token_string_t cmd_del_b = STR(cmd_set2_result, b, "class");
static cmdline_parse_token_hdr_t cmd_del_v = WORD(cmd_set2_result, v);
static cmdline_parse_inst_t cmd_del_class = {
	.f = cmd_two_parsed,
	.help_str = "del class NAME: its flows go to the class that matches them next (or default)",
	.tokens = { (void *)&cmd_del_a, (void *)&cmd_del_b, (void *)&cmd_del_v, NULL },
};
static cmdline_parse_token_string_t cmd_save_a = STR(cmd_set2_result, a, "save");
static cmdline_parse_token_string_t cmd_save_b = STR(cmd_set2_result, b, "config");
static cmdline_parse_token_hdr_t cmd_save_v = WORD(cmd_set2_result, v);
static cmdline_parse_inst_t cmd_save_config = {
	.f = cmd_two_parsed,
	.help_str = "save config FILE: write the running configuration as an INI file --config reads",
	.tokens = { (void *)&cmd_save_a, (void *)&cmd_save_b, (void *)&cmd_save_v, NULL },
};

struct cmd_sleep_result {
	cmdline_fixed_string_t a;
	pcr_word_t v;
};

static void
cmd_sleep_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_sleep_result *r = res;
	uint64_t ms;
	char e[PCR_CLI_LINE_MAX + 256];

	RTE_SET_USED(data);
	if (script == NULL) {
		cmdline_printf(cl, "error: sleep is for --cmdline-file scripts\n");
		return;
	}
	if (pcr_u64_parse(r->v, 0, 3600000, &ms, e, sizeof(e)) != 0) {
		cmdline_printf(cl, "error: sleep %s: %s\n", r->v, e);
		return;
	}
	/* the control loop keeps running; only the next command waits */
	resume_tsc = rte_rdtsc() + ms * (pcr_clock_tsc_hz() / 1000);
}

static cmdline_parse_token_string_t cmd_sleep_a = STR(cmd_sleep_result, a, "sleep");
static cmdline_parse_token_hdr_t cmd_sleep_v = WORD(cmd_sleep_result, v);
static cmdline_parse_inst_t cmd_sleep = {
	.f = cmd_sleep_parsed,
	.help_str = "sleep MS: run the next command MS later (--cmdline-file only); pacing goes on",
	.tokens = { (void *)&cmd_sleep_a, (void *)&cmd_sleep_v, NULL },
};

/* add class NAME match RULE... [rate RATE] [flow-rate RATE] [order ORDER] */
struct cmd_add_result {
	cmdline_fixed_string_t a, b;
	pcr_word_t name;
	cmdline_multi_string_t spec;
};

static void
cmd_add_class_parsed(void *res, struct cmdline *cl, void *data)
{
	struct cmd_add_result *r = res;
	struct pcr_class_conf c;
	char err[512];

	RTE_SET_USED(data);
	if (class_spec(r->name, r->spec, &c, err, sizeof(err)) != 0) {
		cmdline_printf(cl, "error: %s\n", err);
		return;
	}
	report(cl, pcr_ctl_add_class(&c, err, sizeof(err)), err, NULL);
}

static cmdline_parse_token_string_t cmd_add_a = STR(cmd_add_result, a, "add");
static cmdline_parse_token_string_t cmd_add_b = STR(cmd_add_result, b, "class");
static cmdline_parse_token_hdr_t cmd_add_name = WORD(cmd_add_result, name);
static cmdline_parse_token_string_t cmd_add_spec = STR(cmd_add_result, spec, TOKEN_STRING_MULTI);
static cmdline_parse_inst_t cmd_add_class = {
	.f = cmd_add_class_parsed,
	.help_str = "add class NAME match RULE [rate RATE] [flow-rate RATE] [order fair|completion]: a class after the others (RULE as in the config file)",
	.tokens = { (void *)&cmd_add_a, (void *)&cmd_add_b, (void *)&cmd_add_name,
		    (void *)&cmd_add_spec, NULL },
};

static cmdline_parse_ctx_t main_ctx[] = {
	(cmdline_parse_inst_t *)&cmd_start,
	(cmdline_parse_inst_t *)&cmd_stop,
	(cmdline_parse_inst_t *)&cmd_reload,
	(cmdline_parse_inst_t *)&cmd_show_port,
	(cmdline_parse_inst_t *)&cmd_clear_port,
	(cmdline_parse_inst_t *)&cmd_show_wheel,
	(cmdline_parse_inst_t *)&cmd_show_word,
	(cmdline_parse_inst_t *)&cmd_show_stats,
	(cmdline_parse_inst_t *)&cmd_show_flows,
	(cmdline_parse_inst_t *)&cmd_show_flows_top,
	(cmdline_parse_inst_t *)&cmd_show_flows_top_by,
	(cmdline_parse_inst_t *)&cmd_show_node,
	(cmdline_parse_inst_t *)&cmd_show_tree,
	(cmdline_parse_inst_t *)&cmd_show_tree_name,
	(cmdline_parse_inst_t *)&cmd_show_tree_depth,
	(cmdline_parse_inst_t *)&cmd_show_tree_name_depth,
	(cmdline_parse_inst_t *)&cmd_show_top,
	(cmdline_parse_inst_t *)&cmd_show_top_by,
	(cmdline_parse_inst_t *)&cmd_set_port_rate,
	(cmdline_parse_inst_t *)&cmd_set_class_rate,
	(cmdline_parse_inst_t *)&cmd_set_class_order,
	(cmdline_parse_inst_t *)&cmd_set_class_key,
	(cmdline_parse_inst_t *)&cmd_set_aqm,
	(cmdline_parse_inst_t *)&cmd_add_class,
	(cmdline_parse_inst_t *)&cmd_del_class,
	(cmdline_parse_inst_t *)&cmd_set_horizon,
	(cmdline_parse_inst_t *)&cmd_set_flow_limit,
	(cmdline_parse_inst_t *)&cmd_save_config,
	(cmdline_parse_inst_t *)&cmd_sleep,
	(cmdline_parse_inst_t *)&cmd_help,
	(cmdline_parse_inst_t *)&cmd_quit,
	NULL,
};

static void
cmd_help_parsed(void *res, struct cmdline *cl, void *data)
{
	unsigned int i;

	RTE_SET_USED(res);
	RTE_SET_USED(data);
	cmdline_printf(cl, "Commands (tab completes; RATE in tc units, e.g. 10mbit, 2.5gbit, unlimited):\n");
	for (i = 0; main_ctx[i] != NULL; i++)
		cmdline_printf(cl, "  %s\n", main_ctx[i]->help_str);
}

/* ------------------------------------------------------------------ */
/* Feeding the command lines                                           */

int
pcr_cli_init(const struct pcr_config *c)
{
	if (c->cmdline_file[0] != '\0') {
		script = fopen(c->cmdline_file, "r");
		if (script == NULL) {
			fprintf(stderr, "pacer: --cmdline-file %s: %s\n",
				c->cmdline_file, strerror(errno));
			return -1;
		}
		/* no prompt of its own: script_step() echoes each line */
		cl_script = cmdline_new(main_ctx, "", -1, STDOUT_FILENO);
		if (cl_script == NULL)
			return -1;
	}
	interactive = c->interactive;
	return 0;
}

/* One line of the script, echoed; false at its end. */
static bool
script_step(void)
{
	char line[1024], cmd[1026], *p, *e;
	int rc;

	if (fgets(line, sizeof(line), script) == NULL) {
		fclose(script);
		script = NULL;
		cmdline_free(cl_script);
		cl_script = NULL;
		return false;
	}
	script_line++;
	p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	e = p + strlen(p);
	while (e > p && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' ||
			 e[-1] == '\t'))
		*--e = '\0';
	if (*p == '\0' || *p == '#')
		return true;
	printf(PROMPT "%s\n", p);
	fflush(stdout);
	snprintf(cmd, sizeof(cmd), "%s\n", p); /* cmdline_parse() wants a line */
	{
		char who[PATH_MAX + 32];

		snprintf(who, sizeof(who), "script %s:%u",
			 pcr_app.cfg.cmdline_file, script_line);
		pcr_ctl_origin_set(who, 0);
	}
	rc = cmdline_parse(cl_script, cmd);
	pcr_ctl_origin_set(NULL, 0);
	if (rc < 0) {
		const char *hint, *why = parse_failure(rc, &hint);

		printf("error: line %u: %s: %s%s\n", script_line, why, p, hint);
	}
	fflush(stdout);
	return true;
}

bool
pcr_cli_poll(void)
{
	if (resume_tsc != 0) {
		if (rte_rdtsc() < resume_tsc)
			return script != NULL;
		resume_tsc = 0;
	}
	if (script != NULL) {
		/* a script runs first, and a line at a time */
		while (script != NULL && resume_tsc == 0 &&
		       !__atomic_load_n(&pcr_app.quit, __ATOMIC_ACQUIRE))
			script_step();
		if (script != NULL)
			return true;
	}
	if (interactive && cl_stdin == NULL &&
	    !__atomic_load_n(&pcr_app.quit, __ATOMIC_ACQUIRE)) {
		/* the prompt comes once the script is done */
		cl_stdin = cmdline_stdin_new(main_ctx, PROMPT);
		if (cl_stdin == NULL) {
			fprintf(stderr, "pacer: cannot read commands from stdin\n");
			interactive = false;
		}
	}
	if (cl_stdin != NULL) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		char buf[256];
		ssize_t n;
		int rc;

		while (resume_tsc == 0 && poll(&pfd, 1, 0) > 0) {
			n = read(STDIN_FILENO, buf, sizeof(buf));
			if (n <= 0) {
				/* end of input: as quit */
				cmdline_printf(cl_stdin, "\n");
				__atomic_store_n(&pcr_app.quit, true, __ATOMIC_RELEASE);
				break;
			}
			/* ctrl-d on an empty line: as quit */
			pcr_ctl_origin_set("prompt", 0);
			rc = cmdline_in(cl_stdin, buf, (int)n);
			pcr_ctl_origin_set(NULL, 0);
			if (rc < 0) {
				cmdline_printf(cl_stdin, "\n");
				__atomic_store_n(&pcr_app.quit, true, __ATOMIC_RELEASE);
			}
			if (__atomic_load_n(&pcr_app.quit, __ATOMIC_ACQUIRE))
				break;
		}
	}
	return false;
}

/* printf to a file descriptor (cmdline_cirbuf.h takes the name dprintf). */
static void __rte_format_printf(2, 3)
fd_printf(int fd, const char *fmt, ...)
{
	char b[PCR_CLI_LINE_MAX + 128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	if (n > 0 && write(fd, b, RTE_MIN((size_t)n, sizeof(b) - 1)) < 0) {
		/* the reply says error either way */
	}
}

int
pcr_cli_run(const char *line, int out_fd)
{
	/* cmdline_free() closes its output (above stderr): a copy of ours */
	int fd = dup(out_fd);
	struct cmdline *cl = fd >= 0 ? cmdline_new(main_ctx, "", -1, fd) : NULL;
	char cmd[PCR_CLI_LINE_MAX + 2];
	int rc;

	if (cl == NULL) {
		if (fd >= 0)
			close(fd);
		fd_printf(out_fd, "error: out of memory\n");
		return -1;
	}
	snprintf(cmd, sizeof(cmd), "%s\n", line); /* cmdline_parse() wants a line */
	rc = cmdline_parse(cl, cmd);
	cmdline_free(cl);
	if (rc >= 0)
		return 0; /* on success, the length parsed */
	{
		const char *hint, *why = parse_failure(rc, &hint);

		fd_printf(out_fd, "error: %s: %s%s\n", why, line, hint);
	}
	return -1;
}

void
pcr_cli_fini(void)
{
	if (script != NULL) {
		fclose(script);
		script = NULL;
	}
	if (cl_script != NULL) {
		cmdline_free(cl_script);
		cl_script = NULL;
	}
	if (cl_stdin != NULL) {
		cmdline_stdin_exit(cl_stdin); /* restores the terminal, frees */
		cl_stdin = NULL;
	}
}
