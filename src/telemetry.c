/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * DPDK telemetry commands (dpdk-telemetry.py, the local socket the EAL
 * opens): /pacer/stats, /pacer/wheel, /pacer/classes, /pacer/flows,
 * /pacer/config. The callbacks run on the EAL's telemetry thread; each takes
 * the control lock, so it never meets a CLI command or the control loop's
 * own snapshot half way. Telemetry values nest one level (a dict of
 * dicts of numbers/strings), so nested figures are flattened into keys
 * ("drop_horizon", "level0"); the names follow --stats-json's. Names
 * take only letters, digits, '_' and '/': classes are keyed by name with
 * anything else made '_' (the real name inside), flows "flow0".. in order,
 * configuration keys "section/key" ("pacer/rate", "class/video/match").
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

#include "config.h"
#include "control.h"
#include "counters.h"
#include "dataplane.h"
#include "pacer.h"
#include "snapshot.h"
#include "pcr_clock.h"

/* Telemetry names take letters, digits, '_' and '/' only. */
static void
tel_name(char *dst, size_t len, const char *src)
{
	size_t i;

	for (i = 0; i + 1 < len && src[i] != '\0'; i++)
		dst[i] = isalnum((unsigned char)src[i]) || src[i] == '_' ||
				 src[i] == '/' ? src[i] : '_';
	dst[i] = '\0';
}

static int
port_param(const char *params, int *port)
{
	char e[128];
	uint64_t v;

	*port = -1;
	if (params == NULL || params[0] == '\0')
		return 0;
	if (pcr_u64_parse(params, 0, pcr_app.n_ports - 1, &v, e, sizeof(e)) != 0)
		return -EINVAL;
	*port = (int)v;
	return 0;
}

static void
port_dict(struct rte_tel_data *d, const struct pcr_port_snap *ps, uint16_t p)
{
	size_t i;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", pcr_app.ports[p].name);
	rte_tel_data_add_dict_u64(d, "peer", pcr_app.ports[p].peer);
	rte_tel_data_add_dict_string(d, "link", ps->link_up ? "up" : "down");
	rte_tel_data_add_dict_u64(d, "rate_bps", pcr_app.ports[p].rates->agg.bps);
	for (i = 0; i < pcr_n_port_counters; i++)
		rte_tel_data_add_dict_u64(d, pcr_port_counters[i].name,
					  pcr_counter_value(&pcr_port_counters[i], ps));
	rte_tel_data_add_dict_u64(d, "departure_error_p50_ns",
				  pcr_stats_ns(pcr_hist_quantile(&ps->err, 500000)));
	rte_tel_data_add_dict_u64(d, "departure_error_p99_ns",
				  pcr_stats_ns(pcr_hist_quantile(&ps->err, 990000)));
	rte_tel_data_add_dict_u64(d, "departure_error_max_ns",
				  pcr_stats_ns(ps->err.max));
	rte_tel_data_add_dict_u64(d, "queue_delay_p50_ns",
				  pcr_stats_ns(pcr_hist_quantile(&ps->qdelay, 500000)));
	rte_tel_data_add_dict_u64(d, "queue_delay_p99_ns",
				  pcr_stats_ns(pcr_hist_quantile(&ps->qdelay, 990000)));
	rte_tel_data_add_dict_u64(d, "queue_delay_max_ns",
				  pcr_stats_ns(ps->qdelay.max));
}

static struct pcr_snapshot *
snapshot(void)
{
	struct pcr_snapshot *s = malloc(sizeof(*s));

	if (s != NULL)
		pcr_stats_snapshot_live(s);
	return s;
}

typedef void (*port_fill_fn)(struct rte_tel_data *d,
			     const struct pcr_port_snap *ps, uint16_t p);

/* The clock and the pool, beside every port's counters in /pacer/stats. */
static void
stats_extra(struct rte_tel_data *d, const struct pcr_snapshot *s)
{
	struct pcr_clock_info ci;

	pcr_clock_info_get(&ci);
	rte_tel_data_add_dict_u64(d, "tsc_hz", ci.tsc_hz);
	rte_tel_data_add_dict_u64(d, "tsc_hz_eal", ci.tsc_hz_eal);
	rte_tel_data_add_dict_int(d, "tsc_ppb", (int)(ci.tsc_ppm * 1000));
	rte_tel_data_add_dict_u64(d, "consistent", s->consistent);
	rte_tel_data_add_dict_u64(d, "snapshot_retries", s->sync_retries);
	rte_tel_data_add_dict_u64(d, "snapshot_inconsistent",
				  s->sync_inconsistent);
	rte_tel_data_add_dict_u64(d, "snapshots", s->snapshots);
	rte_tel_data_add_dict_u64(d, "snapshots_shared", s->snapshots_shared);
	rte_tel_data_add_dict_u64(d, "snapshot_park_ns", pcr_stats_ns(s->park_tsc));
	rte_tel_data_add_dict_u64(d, "snapshot_park_max_ns",
				  pcr_stats_ns(s->park_max_tsc));
	rte_tel_data_add_dict_u64(d, "forwarding",
				  __atomic_load_n(&pcr_app.dp.forwarding, __ATOMIC_ACQUIRE));
	rte_tel_data_add_dict_u64(d, "mbufs_in_use",
				  rte_mempool_in_use_count(pcr_app.pool));
	rte_tel_data_add_dict_u64(d, "mbufs", pcr_app.pool->size);
}

/*
 * A per-port command: with a port id, that port's dict (@p fill); without,
 * "port0", "port1", ... and, if @p extra, what it adds.
 */
static int
per_port(const char *params, struct rte_tel_data *d, port_fill_fn fill,
	 void (*extra)(struct rte_tel_data *, const struct pcr_snapshot *))
{
	struct pcr_snapshot *s;
	int port;
	uint16_t p;

	if (port_param(params, &port) != 0)
		return -EINVAL;
	pcr_ctl_lock();
	if (pcr_app.closing) {
		pcr_ctl_unlock();
		return -EBUSY;
	}
	s = snapshot();
	if (s == NULL) {
		pcr_ctl_unlock();
		return -ENOMEM;
	}
	if (port >= 0) {
		fill(d, &s->port[port], (uint16_t)port);
	} else {
		rte_tel_data_start_dict(d);
		for (p = 0; p < pcr_app.n_ports; p++) {
			struct rte_tel_data *c = rte_tel_data_alloc();
			char k[16];

			if (c == NULL)
				break;
			fill(c, &s->port[p], p);
			snprintf(k, sizeof(k), "port%u", p);
			rte_tel_data_add_dict_container(d, k, c, 0);
		}
		if (extra != NULL)
			extra(d, s);
	}
	free(s);
	pcr_ctl_unlock();
	return 0;
}

/* /pacer/stats[,PORT]: one port's counters, or every port's and the clock */
static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	return per_port(params, d, port_dict, stats_extra);
}

static void
wheel_dict(struct rte_tel_data *d, const struct pcr_port_snap *ps, uint16_t p)
{
	struct pcr_wheel_info wi;
	unsigned int l;
	char k[16];

	/* every TX queue's wheel has queue 0's geometry; counts are sums */
	pcr_wheel_info_get(pcr_app.ports[p].txq[0]->wheel, &wi);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "tx_queues", pcr_app.ports[p].n_txq);
	rte_tel_data_add_dict_u64(d, "granularity_ns", wi.granularity_ns);
	rte_tel_data_add_dict_u64(d, "horizon_ns", pcr_app.cfg.horizon_ms * 1000000u);
	rte_tel_data_add_dict_u64(d, "wheel_horizon_ns", wi.horizon_ns);
	rte_tel_data_add_dict_string(d, "horizon_policy",
				     wi.horizon_policy == PCR_WHEEL_HORIZON_CAP ? "cap" : "drop");
	rte_tel_data_add_dict_u64(d, "levels", wi.levels);
	rte_tel_data_add_dict_u64(d, "slots", 1u << wi.slot_bits);
	rte_tel_data_add_dict_u64(d, "memsize", wi.memsize);
	rte_tel_data_add_dict_u64(d, "queued", ps->wheel.queued);
	rte_tel_data_add_dict_u64(d, "inbox", ps->wheel.inbox);
	for (l = 0; l < ps->wheel.levels; l++) {
		snprintf(k, sizeof(k), "level%u", l);
		rte_tel_data_add_dict_u64(d, k, ps->wheel.level_occupancy[l]);
	}
	rte_tel_data_add_dict_u64(d, "enqueued", ps->wheel.enqueued);
	rte_tel_data_add_dict_u64(d, "dequeued", ps->wheel.dequeued);
	rte_tel_data_add_dict_u64(d, "late", ps->wheel.late);
	rte_tel_data_add_dict_u64(d, "horizon_cap", ps->wheel.horizon_cap);
	rte_tel_data_add_dict_u64(d, "spill", ps->wheel.spill);
	rte_tel_data_add_dict_u64(d, "cascaded", ps->wheel.cascaded);
	rte_tel_data_add_dict_u64(d, "direct", ps->wheel.direct);
}

/* /pacer/wheel[,PORT] */
static int
tel_wheel(const char *cmd, const char *params, struct rte_tel_data *d)
{
	RTE_SET_USED(cmd);
	return per_port(params, d, wheel_dict, NULL);
}

/* /pacer/classes: per class, its rates, rule and counters (all ports) */
static int
tel_classes(const char *cmd, const char *params, struct rte_tel_data *d)
{
	const struct pcr_config *c = &pcr_app.cfg;
	struct pcr_snapshot *s;
	char name[PCR_CLASS_NAMELEN];
	unsigned int i;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	pcr_ctl_lock();
	if (pcr_app.closing) {
		pcr_ctl_unlock();
		return -EBUSY;
	}
	s = snapshot();
	if (s == NULL) {
		pcr_ctl_unlock();
		return -ENOMEM;
	}
	rte_tel_data_start_dict(d);
	for (i = 0; i < c->n_classes; i++) {
		struct rte_tel_data *x;
		uint64_t pk = 0, by = 0, mk = 0, dr = 0;
		struct pcr_aqm_conf aq;
		uint16_t p;

		if (c->classes[i].deleted || (x = rte_tel_data_alloc()) == NULL)
			continue;
		for (p = 0; p < pcr_app.n_ports; p++) {
			pk += s->port[p].cls[i].tx_packets;
			by += s->port[p].cls[i].tx_bytes;
			mk += s->port[p].cls[i].aqm_marked;
			dr += s->port[p].cls[i].drop_aqm;
		}
		aq = pcr_class_aqm(c, i);
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_string(x, "name", c->classes[i].name);
		rte_tel_data_add_dict_string(x, "match", i ? c->classes[i].match_str : "");
		rte_tel_data_add_dict_u64(x, "rate_bps", c->classes[i].rate_bps);
		rte_tel_data_add_dict_u64(x, "flow_rate_bps",
					  pcr_app.ports[0].rates->cls_flow[i].bps);
		rte_tel_data_add_dict_string(x, "order",
					     pcr_order_name(c->classes[i].order));
		rte_tel_data_add_dict_u64(x, "tx_packets", pk);
		rte_tel_data_add_dict_u64(x, "tx_bytes", by);
		rte_tel_data_add_dict_string(x, "aqm", aq.on ? "codel" : "off");
		rte_tel_data_add_dict_u64(x, "ecn", aq.ecn);
		rte_tel_data_add_dict_u64(x, "aqm_target_us", aq.target_us);
		rte_tel_data_add_dict_u64(x, "aqm_interval_us", aq.interval_us);
		rte_tel_data_add_dict_u64(x, "ce_threshold_us", aq.ce_threshold_us);
		rte_tel_data_add_dict_u64(x, "aqm_marked", mk);
		rte_tel_data_add_dict_u64(x, "drop_aqm", dr);
		tel_name(name, sizeof(name), c->classes[i].name);
		rte_tel_data_add_dict_container(d, name, x, 0);
	}
	/* the classes deleted since start, together ('(' is not a name) */
	if (c->classes_deleted != 0) {
		struct rte_tel_data *x = rte_tel_data_alloc();
		uint64_t pk = 0, by = 0;
		uint16_t p;

		for (p = 0; p < pcr_app.n_ports; p++) {
			pk += s->port[p].cls_deleted.tx_packets;
			by += s->port[p].cls_deleted.tx_bytes;
		}
		if (x != NULL) {
			rte_tel_data_start_dict(x);
			rte_tel_data_add_dict_u64(x, "classes", c->classes_deleted);
			rte_tel_data_add_dict_u64(x, "tx_packets", pk);
			rte_tel_data_add_dict_u64(x, "tx_bytes", by);
			rte_tel_data_add_dict_container(d, "_deleted", x, 0);
		}
	}
	free(s);
	pcr_ctl_unlock();
	return 0;
}

/* /pacer/flows[,N]: the N (10) flows with the most bytes queued */
static int
tel_flows(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct pcr_flow_view *fv;
	uint64_t n = 10, total;
	unsigned int k, i;
	char e[128], name[16];

	RTE_SET_USED(cmd);
	if (params != NULL && params[0] != '\0' &&
	    pcr_u64_parse(params, 1, 200, &n, e, sizeof(e)) != 0)
		return -EINVAL;
	fv = calloc(n, sizeof(*fv));
	if (fv == NULL)
		return -ENOMEM;
	pcr_ctl_lock();
	if (pcr_app.closing) {
		pcr_ctl_unlock();
		free(fv);
		return -EBUSY;
	}
	k = pcr_ctl_flows_top(fv, (unsigned int)n, PCR_FLOWS_BY_QUEUED, &total);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "flows", total);
	for (i = 0; i < k; i++) {
		struct rte_tel_data *x = rte_tel_data_alloc();

		if (x == NULL)
			break;
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_string(x, "key", fv[i].key);
		rte_tel_data_add_dict_string(x, "class",
					     pcr_app.cfg.classes[fv[i].class_id].name);
		rte_tel_data_add_dict_u64(x, "egress", fv[i].egress);
		rte_tel_data_add_dict_u64(x, "queued", fv[i].queued_packets);
		rte_tel_data_add_dict_u64(x, "queued_bytes", fv[i].queued_bytes);
		rte_tel_data_add_dict_u64(x, "tx_packets", fv[i].tx_packets);
		rte_tel_data_add_dict_u64(x, "tx_bytes", fv[i].tx_bytes);
		rte_tel_data_add_dict_u64(x, "rate_bps", (uint64_t)fv[i].rate_bps);
		snprintf(name, sizeof(name), "flow%u", i);
		rte_tel_data_add_dict_container(d, name, x, 0);
	}
	pcr_ctl_unlock();
	free(fv);
	return 0;
}

/* /pacer/config: the configuration, as `show config` (INI text by line) */
static int
tel_config(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char *buf = NULL, *line, *save = NULL, section[64] = "";
	size_t len = 0;
	FILE *f;

	RTE_SET_USED(cmd);
	RTE_SET_USED(params);
	f = open_memstream(&buf, &len);
	if (f == NULL)
		return -ENOMEM;
	pcr_ctl_lock();
	pcr_options_write(f, &pcr_app.cfg);
	pcr_ctl_unlock();
	fclose(f);
	/* "section/key": "value", section "port/0", "class/NAME" */
	rte_tel_data_start_dict(d);
	for (line = strtok_r(buf, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char key[RTE_TEL_MAX_STRING_LEN], *eq;

		if (line[0] == '[') {
			char *sp;

			snprintf(section, sizeof(section), "%.*s",
				 (int)strcspn(line + 1, "]"), line + 1);
			sp = strchr(section, ' ');
			if (sp != NULL)
				*sp = '/';
			continue;
		}
		eq = strstr(line, " = ");
		if (eq == NULL)
			continue;
		*eq = '\0';
		snprintf(key, sizeof(key), "%s/%s", section, line);
		tel_name(key, sizeof(key), key);
		rte_tel_data_add_dict_string(d, key, eq + 3);
	}
	free(buf);
	return 0;
}

/* /pacer/node,NAME: a node of the subscriber tree, or a subscriber by
 * Circuit ID (show node's figures, by port). */
static int
tel_node(const char *cmd, const char *params, struct rte_tel_data *d)
{
	struct pcr_node_info ni;
	unsigned int k;
	int32_t id;

	RTE_SET_USED(cmd);
	if (params == NULL || params[0] == '\0')
		return -EINVAL;
	pcr_ctl_lock();
	if (pcr_app.closing) {
		pcr_ctl_unlock();
		return -EBUSY;
	}
	id = pcr_tree_node_find(&pcr_app, params);
	if (id < 0) {
		pcr_ctl_unlock();
		return -ENOENT;
	}
	pcr_tree_node_info(&pcr_app, (uint32_t)id, &ni);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "name", ni.name);
	rte_tel_data_add_dict_string(d, "type", ni.type);
	rte_tel_data_add_dict_string(d, "parent", ni.parent != NULL ? ni.parent : "");
	rte_tel_data_add_dict_u64(d, "depth", ni.depth);
	rte_tel_data_add_dict_u64(d, "children", ni.children);
	rte_tel_data_add_dict_u64(d, "down_max_bps", ni.down_max_bps);
	rte_tel_data_add_dict_u64(d, "up_max_bps", ni.up_max_bps);
	rte_tel_data_add_dict_u64(d, "down_min_bps", ni.down_min_bps);
	rte_tel_data_add_dict_u64(d, "up_min_bps", ni.up_min_bps);
	for (k = 0; k < ni.n_ports; k++) {
		struct rte_tel_data *x = rte_tel_data_alloc();
		char name[16];

		if (x == NULL)
			break;
		rte_tel_data_start_dict(x);
		rte_tel_data_add_dict_string(x, "direction",
					     ni.port[k].down ? "download" : "upload");
		rte_tel_data_add_dict_u64(x, "max_bps", ni.port[k].max_bps);
		rte_tel_data_add_dict_u64(x, "weight_bps", ni.port[k].weight);
		rte_tel_data_add_dict_u64(x, "tx_packets", ni.port[k].tx_packets);
		rte_tel_data_add_dict_u64(x, "tx_bytes", ni.port[k].tx_bytes);
		rte_tel_data_add_dict_u64(x, "rate_bps", (uint64_t)ni.port[k].rate_bps);
		snprintf(name, sizeof(name), "port%u", ni.port[k].port);
		rte_tel_data_add_dict_container(d, name, x, 0);
	}
	pcr_ctl_unlock();
	return 0;
}

int
pcr_telemetry_init(void)
{
	if (rte_telemetry_register_cmd("/pacer/stats", tel_stats,
			"Pacer counters per port (flattened --stats-json names) and the clock. Parameter: port id") != 0 ||
	    rte_telemetry_register_cmd("/pacer/wheel", tel_wheel,
			"Timing wheel per port: geometry, occupancy by level, counters. Parameter: port id") != 0 ||
	    rte_telemetry_register_cmd("/pacer/classes", tel_classes,
			"Classes: rule, rates, counters over all ports. No parameters") != 0 ||
	    rte_telemetry_register_cmd("/pacer/flows", tel_flows,
			"The flows with the most bytes queued. Parameter: how many (10)") != 0 ||
	    rte_telemetry_register_cmd("/pacer/config", tel_config,
			"The running configuration, section.key: value. No parameters") != 0 ||
	    rte_telemetry_register_cmd("/pacer/node", tel_node,
			"A node of the subscriber tree, or a subscriber by Circuit ID: rates, weight, sent, rate now, by port. Parameter: name") != 0)
		return -1;
	return 0;
}
