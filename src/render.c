/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * A snapshot rendered (stats.c takes it): the periodic stats line and the
 * final report, the --stats-json document and the Prometheus text. A
 * port's counters come from the counter table (counters.c), so each has
 * one name in all of them.
 */

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_mempool.h>

#include "config.h"
#include "counters.h"
#include "dataplane.h"
#include "pacer.h"
#include "snapshot.h"
#include "pcr_cal.h"
#include "pcr_classify.h"
#include "pcr_clock.h"
#include "pcr_isp.h"
#include "pcr_hist.h"
#include "pcr_policy.h"

/* @p cycles in ns, at the rate pcr_stats_ns() converts with */
static double
ns_of(uint64_t cycles)
{
	uint64_t hz = pcr_app.tsc_hz != 0 ? pcr_app.tsc_hz : pcr_clock_tsc_hz();

	return (double)cycles * 1e9 / (double)hz;
}

void
pcr_stats_print_line(const struct pcr_snapshot *s,
		     const struct pcr_snapshot *prev, FILE *f)
{
	double dt = prev != NULL ? ns_of(s->tsc - prev->tsc) / 1e9 : 0;
	unsigned int p;

	fprintf(f, "[%8.3fs]", ns_of(s->tsc - pcr_app.start_tsc) / 1e9);
	for (p = 0; p < pcr_app.n_ports; p++) {
		const struct pcr_port_snap *ps = &s->port[p];
		double rx_bps = 0, tx_bps = 0;

		if (dt > 0) {
			rx_bps = (double)(ps->rx_bytes - prev->port[p].rx_bytes) *
				 8 / dt;
			tx_bps = (double)(ps->tx_bytes - prev->port[p].tx_bytes) *
				 8 / dt;
		}
		fprintf(f,
			" port %u: rx %" PRIu64 " (%.2f Mbit/s) tx %" PRIu64
			" (%.2f Mbit/s) queued %" PRIu64 " dropped %" PRIu64 ";",
			p, ps->rx_packets, rx_bps / 1e6, ps->tx_packets,
			tx_bps / 1e6, ps->queued, ps->dropped);
	}
	fprintf(f, " departure error p99 %.0f ns\n",
		ns_of(pcr_hist_quantile(&s->err, 990000)));
	fflush(f);
}

void
pcr_stats_print_final(const struct pcr_snapshot *s, FILE *f)
{
	const struct pcr_config *c = &pcr_app.cfg;
	unsigned int p, i;

	fprintf(f, "\n%-6s %12s %14s %12s %14s %8s %8s %8s %8s\n", "port",
		"rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "queued",
		"dropped", "late", "tx_retry");
	for (p = 0; p < pcr_app.n_ports; p++) {
		const struct pcr_port_snap *ps = &s->port[p];

		fprintf(f,
			"%-6u %12" PRIu64 " %14" PRIu64 " %12" PRIu64 " %14" PRIu64
			" %8" PRIu64 " %8" PRIu64 " %8" PRIu64 " %8" PRIu64 "\n",
			p, ps->rx_packets, ps->rx_bytes, ps->tx_packets,
			ps->tx_bytes, ps->queued, ps->dropped, ps->tx_late,
			ps->tx_retry);
		if (ps->dropped != 0) {
			fprintf(f, "       dropped:");
			for (i = 0; i < pcr_n_port_counters; i++) {
				const struct pcr_counter *k = &pcr_port_counters[i];

				if (k->kind == PCR_DROP && pcr_counter_value(k, ps) != 0)
					fprintf(f, " %s %" PRIu64, k->name,
						pcr_counter_value(k, ps));
			}
			fprintf(f, "\n");
		}
		if (ps->classify[PCR_CLASSIFY_NON_IP] +
			    ps->classify[PCR_CLASSIFY_TRUNCATED] +
			    ps->classify[PCR_CLASSIFY_BAD_HEADER] !=
		    0)
			fprintf(f,
				"       default flow: non-ip %" PRIu64 " truncated %" PRIu64
				" bad-header %" PRIu64 " (forwarded)\n",
				ps->classify[PCR_CLASSIFY_NON_IP],
				ps->classify[PCR_CLASSIFY_TRUNCATED],
				ps->classify[PCR_CLASSIFY_BAD_HEADER]);
	}
	if (c->n_classes > 1 || c->classes[0].rate_bps != 0) {
		fprintf(f, "\n%-6s %-16s %12s %12s %12s %14s\n", "port", "class",
			"rate", "flow-rate", "tx_packets", "tx_bytes");
		for (p = 0; p < pcr_app.n_ports; p++)
			for (i = 0; i < c->n_classes; i++) {
				char r1[32], r2[32];

				if (c->classes[i].deleted)
					continue;

				pcr_rate_format(c->classes[i].rate_bps, r1,
						sizeof(r1));
				pcr_rate_format(pcr_app.ports[p].rates->cls_flow[i].bps,
						r2, sizeof(r2));
				fprintf(f,
					"%-6u %-16s %12s %12s %12" PRIu64 " %14" PRIu64 "\n",
					p, c->classes[i].name, r1, r2,
					s->port[p].cls[i].tx_packets,
					s->port[p].cls[i].tx_bytes);
			}
	}
	{
		struct pcr_clock_info ci;

		pcr_clock_info_get(&ci);
		fprintf(f,
			"\nclock: TSC %" PRIu64 " Hz measured (EAL %" PRIu64
			" Hz, tsc_ppm %+.1f), fit residual %.1f ns over %u samples spanning %.1f s, %" PRIu64
			" update(s)\n",
			ci.tsc_hz, ci.tsc_hz_eal, ci.tsc_ppm, ci.rms_ns,
			ci.samples, (double)ci.span_ns / 1e9, ci.updates);
	}
	fprintf(f,
		"departure error (transmit - scheduled): p50 %.0f ns, p99 %.0f ns, p99.9 %.0f ns, max %.0f ns over %" PRIu64
		" packets\n",
		ns_of(pcr_hist_quantile(&s->err, 500000)),
		ns_of(pcr_hist_quantile(&s->err, 990000)),
		ns_of(pcr_hist_quantile(&s->err, 999000)), ns_of(s->err.max),
		s->err.count);
}

static void
json_hist(FILE *f, const struct pcr_hist *h)
{
	fprintf(f,
		"{\"count\":%" PRIu64 ",\"p50\":%.0f,\"p99\":%.0f,\"p999\":%.0f,\"max\":%.0f}",
		h->count, ns_of(pcr_hist_quantile(h, 500000)),
		ns_of(pcr_hist_quantile(h, 990000)),
		ns_of(pcr_hist_quantile(h, 999000)), ns_of(h->max));
}

/* "tsc_hz", "tsc_hz_eal", "tsc_ppm" and the measurement behind them. */
static void
json_clock(FILE *f)
{
	struct pcr_clock_info ci;

	pcr_clock_info_get(&ci);
	fprintf(f,
		",\"tsc_hz\":%" PRIu64 ",\"tsc_hz_eal\":%" PRIu64 ",\"tsc_ppm\":%.3f"
		",\"clock\":{\"reference\":\"CLOCK_MONOTONIC_RAW\",\"tsc_hz_fit\":%.1f"
		",\"rms_ns\":%.1f,\"samples\":%u,\"rejected\":%u,\"span_ns\":%" PRIu64
		",\"updates\":%" PRIu64 ",\"rates_published\":%" PRIu64 "}",
		ci.tsc_hz, ci.tsc_hz_eal, ci.tsc_ppm, ci.tsc_hz_fit, ci.rms_ns,
		ci.samples, ci.rejected, ci.span_ns, ci.updates,
		pcr_app.rates_published);
}

static void
json_nic_clock(FILE *f, uint16_t port)
{
	struct pcr_clock_nic_info ni;

	if (pcr_clock_nic_info_get(port, &ni) != 0 || !ni.valid) {
		fprintf(f, "null");
		return;
	}
	fprintf(f,
		"{\"bits\":%u,\"nic_hz\":%.1f,\"ticks_per_cycle\":%.12f,\"rms_ticks\":%.2f"
		",\"rms_ns\":%.2f,\"samples\":%u,\"rejected\":%u,\"read_errors\":%" PRIu64 "}",
		ni.bits, ni.nic_hz, ni.ticks_per_cycle, ni.rms_ticks, ni.rms_ns,
		ni.samples, ni.rejected, ni.read_errors);
}

static void
json_flows(FILE *f)
{
	const char *sep = "";
	unsigned int l;

	fprintf(f, "\"flows\":[");
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		struct pcr_lcore *lc = pcr_app.lcores[l];
		const void *key;
		void *data;
		uint32_t iter = 0;
		int32_t pos;

		if (lc == NULL || lc->ft == NULL)
			continue;
		while ((pos = rte_hash_iterate(lc->ft->h, &key, &data, &iter)) >= 0) {
			const struct pcr_flow *fl = &lc->ft->flows[pos];
			char k[PCR_FLOW_KEY_STRLEN];
			double rate = 0;

			pcr_flow_key_format(key, k, sizeof(k));
			uint64_t span = (uint64_t)(uint32_t)(fl->last_tx - fl->first_tx)
					<< PCR_SPAN_SHIFT;

			if (fl->tx_packets > 1 && span > 0)
				/* after the first packet (mean size) over the span */
				rate = (double)(fl->tx_bytes - fl->tx_bytes / fl->tx_packets) * 8 /
				       (ns_of(span) / 1e9);
			fprintf(f,
				"%s{\"key\":\"%s\",\"class\":\"%s\",\"egress\":%u,\"tx_packets\":%" PRIu64
				",\"tx_bytes\":%" PRIu64 ",\"rate_bps\":%.1f}",
				sep, k, pcr_app.cfg.classes[fl->class_id].name,
				fl->egress, fl->tx_packets, fl->tx_bytes, rate);
			sep = ",";
		}
	}
	fprintf(f, "]");
}

static uint64_t bucket_bytes(const struct pcr_cal *cal,
			     const struct pcr_rate *r);

/* @p s as a JSON string: names come from operators' files. */
static void
json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

/*
 * The subscriber tree by port (src/tree.h): each node's name (a leaf's
 * Circuit ID), parent, max rate, calendar bucket and what it sent, its TX
 * queues summed. Read live, as the flows are: each counter has one writer.
 */
static void
json_tree(FILE *f)
{
	const struct pcr_app *a = &pcr_app;
	const struct pcr_isp *isp = a->isp;
	const char *psep = "";
	uint16_t p, q;
	uint32_t i;

	if (isp == NULL)
		return;
	fprintf(f, ",\"tree\":{\"nodes\":%u,\"subscribers\":%u,\"ports\":[",
		isp->n_nodes, isp->n_circuits);
	for (p = 0; p < a->n_ports; p++) {
		const struct pcr_tree *t = a->tree[p];
		const struct pcr_rates *rs = a->ports[p].rates;

		if (t == NULL)
			continue;
		fprintf(f, "%s{\"port\":%u,\"direction\":\"%s\",\"nodes\":[",
			psep, p, t->down ? "download" : "upload");
		psep = ",";
		for (i = 0; i < t->n_nodes; i++) {
			const bool leaf = i >= t->n_interior;
			const char *name = leaf ?
				isp->circuits[i - t->n_interior].id :
				isp->nodes[i].name;
			uint64_t pk = 0, by = 0;

			for (q = 0; q < a->ports[p].n_txq; q++) {
				const struct pcr_txport *tp = a->ports[p].txq[q];

				pk += tp->node[i].tx_packets;
				by += tp->node[i].tx_bytes;
			}
			fprintf(f, "%s{\"name\":", i ? "," : "");
			json_string(f, name);
			fprintf(f, ",\"parent\":");
			if (t->parent[i] == PCR_TREE_NONE)
				fprintf(f, "null");
			else
				json_string(f, isp->nodes[t->parent[i]].name);
			fprintf(f, ",\"leaf\":%s,\"max_bps\":%" PRIu64
				",\"bucket_bytes\":%" PRIu64 ",\"tx_packets\":%" PRIu64
				",\"tx_bytes\":%" PRIu64 "}",
				leaf ? "true" : "false", t->bps[i],
				leaf || rs == NULL ? 0 :
				bucket_bytes(t->cal[i], &rs->tree_rate[i]),
				pk, by);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}");
}

/* Wire bytes one calendar bucket of a shared policy holds (0: none). */
static uint64_t
bucket_bytes(const struct pcr_cal *cal, const struct pcr_rate *r)
{
	return cal != NULL && !pcr_rate_unlimited(r) ?
		       pcr_cal_bucket_bytes(cal, r->fpb) :
		       0;
}

int
pcr_stats_write_json(const struct pcr_snapshot *s, const char *path,
		     int64_t mempool_in_use)
{
	FILE *f = fopen(path, "w");

	if (f == NULL) {
		fprintf(stderr, "pacer: --stats-json %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	pcr_stats_json(s, f, mempool_in_use, true);
	if (fclose(f) != 0) {
		fprintf(stderr, "pacer: --stats-json %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* A class's counters, as Prometheus series (pacer_class_NAME_total). */
static const struct {
	const char *name, *unit;
	size_t off;
} cls_counters[] = {
	{ "tx_packets", "packets", offsetof(struct pcr_class_stats, tx_packets) },
	{ "tx_bytes", "bytes", offsetof(struct pcr_class_stats, tx_bytes) },
};

/* Subscribers the Prometheus text names one by one: the top by rate now
 * on each port (every interior node is named; 100,000 subscribers would
 * be a cardinality no scraper wants). */
#define PROM_TOP_LEAVES 10

/* @p s as a Prometheus label value (backslash, quote, newline escaped). */
static void
prom_label(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fprintf(f, "\\n");
		else
			fputc(*s, f);
	}
}

/* One node's series on port @p p. */
static void
prom_node(FILE *f, uint16_t p, uint32_t i)
{
	struct pcr_node_info ni;
	unsigned int k;

	pcr_tree_node_info(&pcr_app, i, &ni);
	for (k = 0; k < ni.n_ports; k++) {
		if (ni.port[k].port != p)
			continue;
		fprintf(f, "pacer_node_tx_bytes_total{port=\"%u\",node=\"", p);
		prom_label(f, ni.name);
		fprintf(f, "\",type=\"%s\"} %" PRIu64 "\n", ni.leaf ? "subscriber" : "node",
			ni.port[k].tx_bytes);
		fprintf(f, "pacer_node_rate_bps{port=\"%u\",node=\"", p);
		prom_label(f, ni.name);
		fprintf(f, "\",type=\"%s\"} %.0f\n", ni.leaf ? "subscriber" : "node",
			ni.port[k].rate_bps);
	}
}

/* The subscriber tree: every interior node, the top subscribers. */
static void
prom_tree(FILE *f)
{
	const struct pcr_isp *isp = pcr_app.isp;
	uint32_t i, top[PROM_TOP_LEAVES];
	double key[PROM_TOP_LEAVES];
	unsigned int k, j;
	uint16_t p;

	if (isp == NULL)
		return;
	fprintf(f, "# HELP pacer_node_tx_bytes_total bytes a node of the subscriber tree sent (its interior nodes, and the top %u subscribers by rate now)\n"
		   "# TYPE pacer_node_tx_bytes_total counter\n"
		   "# HELP pacer_node_rate_bps what it sends now (over about a second), bit/s\n"
		   "# TYPE pacer_node_rate_bps gauge\n", PROM_TOP_LEAVES);
	for (p = 0; p < pcr_app.n_ports; p++) {
		if (pcr_app.tree[p] == NULL)
			continue;
		for (i = 0; i < isp->n_nodes; i++)
			prom_node(f, p, i);
		for (i = isp->n_nodes, k = 0; i < isp->n_nodes + isp->n_circuits; i++) {
			double x = pcr_tree_rate(&pcr_app, p, i);

			if (k == PROM_TOP_LEAVES && x <= key[k - 1])
				continue;
			j = k < PROM_TOP_LEAVES ? k++ : k - 1;
			for (; j > 0 && key[j - 1] < x; j--) {
				key[j] = key[j - 1];
				top[j] = top[j - 1];
			}
			key[j] = x;
			top[j] = i;
		}
		for (j = 0; j < k; j++)
			prom_node(f, p, top[j]);
	}
}

void
pcr_stats_prometheus(const struct pcr_snapshot *s, FILE *f)
{
	static const struct { const char *q; uint32_t ppm; } qs[] = {
		{ "0.5", 500000 }, { "0.99", 990000 }, { "0.999", 999000 },
	};
	unsigned int i, p, k;

	const struct pcr_config *cf = &pcr_app.cfg;
	uint8_t ids[PCR_MAX_CLASSES];
	unsigned int n;

	/* counters end in _total, as Prometheus names them (dropped_total
	 * does already) */
	for (i = 0; i < pcr_n_port_counters; i++) {
		const struct pcr_counter *c = &pcr_port_counters[i];
		const char *sfx = c->kind == PCR_GAUGE ? "" :
				  strstr(c->name, "_total") != NULL ? "" : "_total";

		fprintf(f, "# HELP pacer_%s%s %s%s (%s)\n# TYPE pacer_%s%s %s\n",
			c->name, sfx, c->kind == PCR_DROP ? "dropped: " : "", c->help,
			c->unit, c->name, sfx,
			c->kind == PCR_GAUGE ? "gauge" : "counter");
		for (p = 0; p < pcr_app.n_ports; p++)
			fprintf(f, "pacer_%s%s{port=\"%u\",name=\"%s\"} %" PRIu64 "\n",
				c->name, sfx, p, pcr_app.ports[p].name,
				pcr_counter_value(c, &s->port[p]));
	}
	/* per class and port (a class's series starts afresh when its slot
	 * takes a new class: the name differs) */
	n = pcr_class_order(cf, ids);
	ids[n++] = 0;
	for (i = 0; i < RTE_DIM(cls_counters); i++) {
		const char *nm = cls_counters[i].name;

		fprintf(f, "# HELP pacer_class_%s_total sent on the port by the class's flows (%s)\n"
			   "# TYPE pacer_class_%s_total counter\n",
			nm, cls_counters[i].unit, nm);
		for (p = 0; p < pcr_app.n_ports; p++)
			for (k = 0; k < n; k++)
				fprintf(f, "pacer_class_%s_total{port=\"%u\",name=\"%s\",class=\"%s\"} %" PRIu64 "\n",
					nm, p, pcr_app.ports[p].name,
					cf->classes[ids[k]].name,
					*(const uint64_t *)((const char *)&s->port[p].cls[ids[k]] +
							    cls_counters[i].off));
	}
	fprintf(f, "# HELP pacer_class_rate_bps the class's aggregate rate, bit/s (0: unlimited)\n"
		   "# TYPE pacer_class_rate_bps gauge\n");
	for (k = 0; k < n; k++)
		fprintf(f, "pacer_class_rate_bps{class=\"%s\"} %" PRIu64 "\n",
			cf->classes[ids[k]].name, cf->classes[ids[k]].rate_bps);
	fprintf(f, "# HELP pacer_rate_bps the port's aggregate rate as an egress, bit/s (0: unlimited)\n"
		   "# TYPE pacer_rate_bps gauge\n");
	for (p = 0; p < pcr_app.n_ports; p++)
		fprintf(f, "pacer_rate_bps{port=\"%u\",name=\"%s\"} %" PRIu64 "\n",
			p, pcr_app.ports[p].name,
			__atomic_load_n(&pcr_app.ports[p].rates, __ATOMIC_ACQUIRE)->agg.bps);
	fprintf(f, "# HELP pacer_link_up 1 while the port's link is up\n"
		   "# TYPE pacer_link_up gauge\n");
	for (p = 0; p < pcr_app.n_ports; p++)
		fprintf(f, "pacer_link_up{port=\"%u\",name=\"%s\"} %u\n", p,
			pcr_app.ports[p].name, s->port[p].link_up ? 1 : 0);
	fprintf(f, "# HELP pacer_departure_error_ns transmit time minus departure time, quantiles since start\n"
		   "# TYPE pacer_departure_error_ns gauge\n");
	for (p = 0; p < pcr_app.n_ports; p++)
		for (k = 0; k < RTE_DIM(qs); k++)
			fprintf(f, "pacer_departure_error_ns{port=\"%u\",name=\"%s\",quantile=\"%s\"} %.0f\n",
				p, pcr_app.ports[p].name, qs[k].q,
				ns_of(pcr_hist_quantile(&s->port[p].err, qs[k].ppm)));
	prom_tree(f);
	fprintf(f, "# HELP pacer_mbufs_in_use mbufs out of the pool now\n"
		   "# TYPE pacer_mbufs_in_use gauge\npacer_mbufs_in_use %u\n",
		rte_mempool_in_use_count(pcr_app.pool));
	fprintf(f, "# HELP pacer_mbufs the pool's size\n"
		   "# TYPE pacer_mbufs gauge\npacer_mbufs %u\n",
		pcr_app.pool->size);
}

void
pcr_stats_json(const struct pcr_snapshot *s, FILE *f, int64_t mempool_in_use,
	       bool final)
{
	const struct pcr_config *c = &pcr_app.cfg;
	uint8_t ids[PCR_MAX_CLASSES];
	unsigned int p, i, r, k, n_ids;
	const char *sep;

	fprintf(f, "{\"ports\":[");
	for (p = 0; p < pcr_app.n_ports; p++) {
		const struct pcr_port_snap *ps = &s->port[p];

		fprintf(f,
			"%s{\"port\":%u,\"name\":\"%s\",\"peer\":%u,\"rate_bps\":%" PRIu64
			",\"link\":\"%s\",\"bucket_bytes\":%" PRIu64,
			p ? "," : "", p, pcr_app.ports[p].name,
			pcr_app.ports[p].peer, pcr_app.ports[p].rates->agg.bps,
			ps->link_up ? "up" : "down",
			bucket_bytes(pcr_app.ports[p].rates->agg_cal,
				     &pcr_app.ports[p].rates->agg));
		for (i = 0; i < pcr_n_port_counters; i++)
			fprintf(f, ",\"%s\":%" PRIu64, pcr_port_counters[i].name,
				pcr_counter_value(&pcr_port_counters[i], ps));
		fprintf(f, ",\"classify\":{");
		for (r = 0; r < PCR_CLASSIFY_RESULT_MAX; r++)
			fprintf(f, "%s\"%s\":%" PRIu64, r ? "," : "",
				pcr_classify_result_name(r), ps->classify[r]);
		fprintf(f,
			"},\"wheel\":{\"enqueued\":%" PRIu64
			",\"dequeued\":%" PRIu64 ",\"queued\":%" PRIu64
			",\"inbox\":%" PRIu64 ",\"late\":%" PRIu64
			",\"horizon_cap\":%" PRIu64 ",\"spill\":%" PRIu64
			",\"cascaded\":%" PRIu64 ",\"direct\":%" PRIu64
			",\"levels\":[",
			ps->wheel.enqueued, ps->wheel.dequeued, ps->wheel.queued,
			ps->wheel.inbox, ps->wheel.late, ps->wheel.horizon_cap,
			ps->wheel.spill, ps->wheel.cascaded, ps->wheel.direct);
		for (i = 0; i < ps->wheel.levels; i++)
			fprintf(f, "%s%" PRIu64, i ? "," : "",
				ps->wheel.level_occupancy[i]);
		fprintf(f, "]},\"classes\":[");
		/* default, then the others in match order */
		n_ids = pcr_class_order(c, ids + 1) + 1;
		ids[0] = 0;
		for (k = 0, sep = ""; k < n_ids; k++) {
			struct pcr_aqm_conf aq;

			i = ids[k];
			aq = pcr_class_aqm(c, i);
			fprintf(f,
				"%s{\"class\":\"%s\",\"match\":\"%s\",\"rate_bps\":%" PRIu64
				",\"flow_rate_bps\":%" PRIu64 ",\"bucket_bytes\":%" PRIu64
				",\"tx_packets\":%" PRIu64
				",\"tx_bytes\":%" PRIu64 ",\"aqm\":\"%s\",\"ecn\":%s"
				",\"aqm_target_us\":%" PRIu64 ",\"aqm_interval_us\":%" PRIu64
				",\"ce_threshold_us\":%" PRIu64 ",\"aqm_marked\":%" PRIu64
				",\"drop_aqm\":%" PRIu64 "}",
				sep, c->classes[i].name,
				i ? c->classes[i].match_str : "",
				c->classes[i].rate_bps,
				pcr_app.ports[p].rates->cls_flow[i].bps,
				bucket_bytes(pcr_app.ports[p].rates->cls_cal[i],
					     &pcr_app.ports[p].rates->cls[i]),
				ps->cls[i].tx_packets, ps->cls[i].tx_bytes,
				aq.on ? "codel" : "off", aq.ecn ? "true" : "false",
				aq.target_us, aq.interval_us, aq.ce_threshold_us,
				ps->cls[i].aqm_marked, ps->cls[i].drop_aqm);
			sep = ",";
		}
		fprintf(f, "],\"deleted_classes\":{\"classes\":%u,\"tx_packets\":%" PRIu64
			",\"tx_bytes\":%" PRIu64 "}",
			c->classes_deleted, ps->cls_deleted.tx_packets,
			ps->cls_deleted.tx_bytes);
		fprintf(f, ",\"departure_error_ns\":");
		json_hist(f, &ps->err);
		fprintf(f, ",\"queue_delay_ns\":");
		json_hist(f, &ps->qdelay);
		fprintf(f, ",\"tx_offload\":%s,\"nic_clock\":",
			pcr_app.ports[p].tx_offload ? "true" : "false");
		json_nic_clock(f, (uint16_t)p);
		fprintf(f, "}");
	}
	fprintf(f, "],\"departure_error_ns\":");
	json_hist(f, &s->err);
	json_clock(f);
	fprintf(f,
		",\"slot_ns\":%" PRIu64 ",\"horizon_ms\":%" PRIu64
		",\"wire_overhead\":%" PRIu64 ",\"burst\":%" PRIu64
		",\"duration_ns\":%.0f,\"consistent\":%s,"
		"\"snapshot_retries\":%" PRIu64 ",\"snapshot_inconsistent\":%" PRIu64
		",\"snapshots\":%" PRIu64 ",\"snapshots_shared\":%" PRIu64
		",\"snapshot_park_ns\":%.0f,\"snapshot_park_max_ns\":%.0f,",
		c->slot_ns, c->horizon_ms, c->wire_overhead,
		c->burst, ns_of(s->tsc - pcr_app.start_tsc),
		s->consistent ? "true" : "false", s->sync_retries,
		s->sync_inconsistent, s->snapshots, s->snapshots_shared,
		ns_of(s->park_tsc), ns_of(s->park_max_tsc));
	fprintf(f, "\"lcores\":[");
	for (i = 0; i < s->n_lcores; i++) {
		const struct pcr_lcore_snap *l = &s->lcore[i];

		fprintf(f, "%s{\"lcore\":%u,\"role\":\"%s\",\"rx_packets\":%" PRIu64
			",\"tx_packets\":%" PRIu64 ",\"run_delay_ns\":",
			i ? "," : "", l->lcore_id,
			l->roles == (PCR_ROLE_RX | PCR_ROLE_TX) ? "rx+tx" :
			l->roles == PCR_ROLE_RX ? "rx" :
			l->roles == PCR_ROLE_TX ? "tx" : "none",
			l->rx_packets, l->tx_packets);
		if (l->run_delay_ns == UINT64_MAX)
			fprintf(f, "null");
		else
			fprintf(f, "%" PRIu64, l->run_delay_ns);
		fprintf(f, ",\"stalls\":%" PRIu64 ",\"stall_ns\":%.0f}",
			l->stalls, ns_of(l->stall_tsc));
	}
	fprintf(f, "],");
	json_flows(f);
	json_tree(f);
	fprintf(f, ",\"%s\":%" PRId64 "}\n",
		final ? "mempool_in_use_at_exit" : "mempool_in_use",
		mempool_in_use);
}
