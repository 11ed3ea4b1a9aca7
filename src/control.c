/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The control layer: changes made on the control lcore while the workers
 * run. State the fast path reads is never edited in place: a new copy is
 * built, published with one pointer store, and the old one freed once
 * every worker has reported a quiescent state (rte_rcu_qsbr; the workers
 * report once per loop iteration, between bursts).
 */

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_hash.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "config.h"
#include "control.h"
#include "dataplane.h"
#include "pacer.h"
#include "snapshot.h"
#include "pcr_clock.h"

RTE_LOG_REGISTER(pcr_logtype_ctl, pacer.ctl, NOTICE);

/*
 * --flow-queue as bytes for a flow under the rates @p agg (its port's),
 * @p cls (its class's) and @p flow (its own), 0 = unlimited: that long at
 * the tightest finite one, at least PCR_FLOW_QUEUE_MIN_FRAMES full frames;
 * 0 (no bound) without a finite rate or with --flow-queue 0.
 */
static uint64_t
flow_qbytes(const struct pcr_config *c, uint64_t agg, uint64_t cls,
	    uint64_t flow)
{
	uint64_t tight = UINT64_MAX, min;

	if (c->flow_queue_ms == 0)
		return 0;
	if (agg != 0)
		tight = agg;
	if (cls != 0 && cls < tight)
		tight = cls;
	if (flow != 0 && flow < tight)
		tight = flow;
	if (tight == UINT64_MAX)
		return 0;
	min = PCR_FLOW_QUEUE_MIN_FRAMES * (PCR_CAL_FRAME_BYTES + c->wire_overhead);
	return RTE_MAX(tight / 8 * c->flow_queue_ms / 1000, min);
}

/* Class @p k's AQM in TSC terms, into @p r. */
static void
aqm_build(const struct pcr_config *c, unsigned int k, struct pcr_rates *r)
{
	struct pcr_aqm_conf a = pcr_class_aqm(c, k);
	struct pcr_codel_params *p = &r->aqm[k];

	r->aqm_mode[k] = !a.on || c->classes[k].deleted ? 0 :
			 a.ecn ? PCR_AQM_ECN : PCR_AQM_DROP;
	r->aqm_any |= r->aqm_mode[k] != 0;
	p->target = pcr_clock_ns_to_cycles(a.target_us * 1000);
	p->interval = pcr_clock_ns_to_cycles(a.interval_us * 1000);
	p->ce_threshold = pcr_clock_ns_to_cycles(a.ce_threshold_us * 1000);
	p->mtu_bytes = PCR_CAL_FRAME_BYTES;
}

int
pcr_rates_build(const struct pcr_config *c, uint16_t p, struct pcr_rates *r)
{
	uint64_t burst = c->burst + c->wire_overhead;
	uint64_t agg = c->port_rate_set[p] ? c->port_rate_bps[p] : c->rate_bps;
	uint64_t hz = pcr_clock_tsc_hz();
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->tsc_hz = hz;
	r->wire_overhead = (uint32_t)c->wire_overhead;
	r->flow_limit = c->flow_limit;
	r->max_late_tsc = pcr_clock_ns_to_cycles(c->max_late_us * 1000u);
	r->behind_bound_tsc = pcr_clock_ns_to_cycles(
		(c->max_late_us != 0 ? c->max_late_us : PCR_BEHIND_WARN_US) *
		1000u);
	/* the power of two at most a quarter of the bound (1 at least) */
	r->behind_quantum_tsc = rte_align64prevpow2(r->behind_bound_tsc / 4 | 1);
	r->behind_quantum_tsc = RTE_MIN(r->behind_quantum_tsc, PCR_BEHIND_QUANTUM);
	r->horizon_tsc = pcr_clock_ns_to_cycles(c->horizon_ms * 1000000u);
	r->horizon_cap = c->horizon_policy != PCR_WHEEL_HORIZON_DROP;
	if (pcr_rate_init(&r->agg, agg, burst, hz) != 0)
		return -ERANGE;
	for (i = 0; i < c->n_classes; i++) {
		const struct pcr_class_conf *cl = &c->classes[i];
		uint64_t fr = cl->flow_rate_set ? cl->flow_rate_bps :
						  c->flow_rate_bps;

		if (pcr_rate_init(&r->cls[i], cl->rate_bps, burst, hz) != 0 ||
		    pcr_rate_init(&r->cls_flow[i], fr, burst, hz) != 0)
			return -ERANGE;
		r->order[i] = (uint8_t)cl->order;
		r->flow_qbytes[i] = flow_qbytes(c, agg, cl->rate_bps, fr);
		aqm_build(c, i, r);
	}
	return 0;
}

void
pcr_cal_params_of(const struct pcr_config *c, const struct pcr_rate *r,
		  struct pcr_cal_params *cp)
{
	cp->frame_cost = pcr_rate_cost(r, PCR_CAL_FRAME_BYTES +
					  (uint32_t)c->wire_overhead);
	cp->reach = pcr_clock_ns_to_cycles((c->horizon_ms + 1) * 1000000u +
					   PCR_HORIZON_MARGIN_NS)
		    << PCR_FINE_SHIFT;
	cp->back = r->burst;
}

/*
 * The calendar a new rate set needs for one shared rate @p r: the previous
 * set's @p old where it suits the rate, the horizon and the burst (or the
 * rate is unlimited: kept for when it is finite again), else a new one
 * seeded with @p old's reservations.
 */
static int
cal_for(const struct pcr_app *a, const struct pcr_config *c,
	const struct pcr_rate *r, struct pcr_cal *old, struct pcr_cal **out)
{
	struct pcr_cal_params cp;

	pcr_cal_params_of(c, r, &cp);
	*out = old;
	if (pcr_rate_unlimited(r) || (old != NULL && pcr_cal_suits(old, &cp)))
		return 0;
	*out = pcr_cal_create(&cp);
	if (*out == NULL)
		return -errno;
	if (old != NULL)
		pcr_cal_copy(*out, old, pcr_fine(rte_rdtsc(), a->dp.epoch_tsc));
	return 0;
}

/* Port @p p's calendars for the new rates @p nw, from the old set @p old
 * (NULL at start). */
static int
cals_build(const struct pcr_app *a, const struct pcr_config *c,
	   struct pcr_rates *nw, const struct pcr_rates *old)
{
	unsigned int i;
	int rc;

	rc = cal_for(a, c, &nw->agg, old != NULL ? old->agg_cal : NULL,
		     &nw->agg_cal);
	for (i = 0; rc == 0 && i < PCR_MAX_CLASSES; i++) {
		/* a slot a new class took starts with an empty calendar:
		 * nothing of the class it held before is reserved in it */
		uint32_t gen = i < c->n_classes ? c->classes[i].gen : 0;
		bool same = old != NULL && old->cls_gen[i] == gen;

		nw->cls_gen[i] = gen;
		rc = cal_for(a, c, &nw->cls[i], same ? old->cls_cal[i] : NULL,
			     &nw->cls_cal[i]);
	}
	return rc;
}

int
pcr_tree_rates(const struct pcr_app *a, const struct pcr_config *c,
	       uint16_t p, struct pcr_rates *nw, const struct pcr_rates *old)
{
	const struct pcr_tree *t = a->tree[p];
	uint64_t burst = c->burst + c->wire_overhead;
	struct pcr_rate *r;
	uint32_t i;

	nw->tree = t;
	nw->tree_rate = NULL;
	if (t == NULL)
		return 0;
	/* the same terms: the same array */
	if (old != NULL && old->tree_rate != NULL &&
	    old->tsc_hz == nw->tsc_hz && old->tree_burst == burst) {
		nw->tree_rate = old->tree_rate;
		nw->tree_burst = burst;
		return 0;
	}
	r = rte_malloc("pcr_tree_rate", sizeof(*r) * t->n_nodes,
		       RTE_CACHE_LINE_SIZE);
	if (r == NULL)
		return -ENOMEM;
	for (i = 0; i < t->n_nodes; i++)
		if (pcr_rate_init(&r[i], t->bps[i], burst, nw->tsc_hz) != 0) {
			rte_free(r);
			return -ERANGE;
		}
	nw->tree_rate = r;
	nw->tree_burst = burst;
	return 0;
}

/* Free the calendars and tree rates of @p r that @p keep (NULL: none)
 * does not use. */
static void
cals_free_unused(struct pcr_rates *r, const struct pcr_rates *keep)
{
	unsigned int i, j;

	if (r == NULL)
		return;
	if (r->tree_rate != NULL &&
	    (keep == NULL || keep->tree_rate != r->tree_rate))
		rte_free((void *)(uintptr_t)r->tree_rate);
	for (i = 0; i <= PCR_MAX_CLASSES; i++) {
		struct pcr_cal *cal = i == PCR_MAX_CLASSES ? r->agg_cal :
							     r->cls_cal[i];
		bool used = false;

		if (cal == NULL)
			continue;
		for (j = 0; keep != NULL && j < PCR_MAX_CLASSES; j++)
			used |= keep->cls_cal[j] == cal;
		used |= keep != NULL && keep->agg_cal == cal;
		if (!used)
			pcr_cal_free(cal);
	}
}

int
pcr_rates_publish(struct pcr_app *a)
{
	return pcr_rates_publish_cfg(a, &a->cfg);
}

int
pcr_rates_publish_cfg(struct pcr_app *a, const struct pcr_config *c)
{
	struct pcr_rates *nw[PCR_MAX_PORTS], *old[PCR_MAX_PORTS];
	uint16_t p;
	int rc = 0;

	for (p = 0; p < a->n_ports; p++) {
		nw[p] = rte_zmalloc("pcr_rates", sizeof(*nw[p]),
				    RTE_CACHE_LINE_SIZE);
		if (nw[p] == NULL)
			rc = -ENOMEM;
		else if (rc == 0)
			rc = pcr_rates_build(c, p, nw[p]);
		/* calendars before the rates that use them are published */
		if (rc == 0)
			rc = cals_build(a, c, nw[p], a->ports[p].rates);
		if (rc == 0)
			rc = pcr_tree_rates(a, c, p, nw[p], a->ports[p].rates);
	}
	if (rc != 0) {
		for (p = 0; p < a->n_ports; p++) {
			/* only what was made for the set that failed */
			cals_free_unused(nw[p], a->ports[p].rates);
			rte_free(nw[p]);
		}
		return rc;
	}
	for (p = 0; p < a->n_ports; p++)
		old[p] = __atomic_exchange_n(&a->ports[p].rates, nw[p],
					     __ATOMIC_ACQ_REL);
	/* every worker has let go of the old sets once it reports in */
	if (a->dp.qsbr != NULL)
		rte_rcu_qsbr_synchronize(a->dp.qsbr, RTE_QSBR_THRID_INVALID);
	for (p = 0; p < a->n_ports; p++) {
		cals_free_unused(old[p], nw[p]);
		rte_free(old[p]);
	}
	a->rates_published++;
	PCR_CTL_LOG(DEBUG, "rates published (#%" PRIu64 ", TSC %" PRIu64 " Hz)",
		    a->rates_published, nw[0]->tsc_hz);
	return 0;
}

uint64_t
pcr_wheel_horizon_ns(uint64_t horizon_ns, enum pcr_wheel_horizon_policy policy)
{
	return policy == PCR_WHEEL_HORIZON_DROP ?
		       horizon_ns + PCR_HORIZON_MARGIN_NS : horizon_ns;
}


void
pcr_rates_free(struct pcr_app *a)
{
	uint16_t p;

	for (p = 0; p < a->n_ports; p++) {
		cals_free_unused(a->ports[p].rates, NULL);
		rte_free(a->ports[p].rates);
		a->ports[p].rates = NULL;
	}
}

/* ------------------------------------------------------------------ */
/* The lock                                                            */

static pthread_mutex_t ctl_mutex = PTHREAD_MUTEX_INITIALIZER;

void
pcr_ctl_lock(void)
{
	pthread_mutex_lock(&ctl_mutex);
}

void
pcr_ctl_unlock(void)
{
	pthread_mutex_unlock(&ctl_mutex);
}

/* ------------------------------------------------------------------ */
/* Classes                                                             */

int
pcr_classtab_publish(struct pcr_app *a)
{
	return pcr_classtab_publish_cfg(a, &a->cfg);
}

int
pcr_classtab_publish_cfg(struct pcr_app *a, const struct pcr_config *c)
{
	struct pcr_classtab *ct, *old;
	unsigned int i;

	ct = rte_zmalloc("pcr_classtab", sizeof(*ct), RTE_CACHE_LINE_SIZE);
	if (ct == NULL)
		return -ENOMEM;
	old = a->dp.classtab;
	ct->gen = old != NULL ? (uint16_t)(old->gen + 1) : 0;
	ct->n = c->n_classes;
	for (i = 0; i < ct->n; i++) {
		ct->live[i] = !c->classes[i].deleted;
		ct->match[i] = c->classes[i].match;
	}
	ct->n_order = pcr_class_order(c, ct->order);
	__atomic_store_n(&a->dp.classtab, ct, __ATOMIC_RELEASE);
	if (old != NULL) {
		if (a->dp.qsbr != NULL)
			rte_rcu_qsbr_synchronize(a->dp.qsbr, RTE_QSBR_THRID_INVALID);
		rte_free(old);
	}
	return 0;
}

void
pcr_classtab_free(struct pcr_app *a)
{
	rte_free(a->dp.classtab);
	a->dp.classtab = NULL;
}

/* A class named on a command line: its index, or -EINVAL with why in
 * @p err (a name no class could have, or no such class). */
static int
class_named(const struct pcr_config *c, const char *name, char *err,
	    size_t errlen);

static int
class_find(const struct pcr_config *c, const char *name)
{
	unsigned int i;

	for (i = 0; i < c->n_classes; i++)
		if (!c->classes[i].deleted && strcmp(c->classes[i].name, name) == 0)
			return (int)i;
	return -1;
}

static int
class_named(const struct pcr_config *c, const char *name, char *err,
	    size_t errlen)
{
	int id;

	if (!pcr_class_name_ok(name)) {
		snprintf(err, errlen, "class name '%.40s%s' (%zu characters): no class can have it (%s)",
			 name, strlen(name) > 40 ? "..." : "", strlen(name),
			 PCR_CLASS_NAME_RULE);
		return -EINVAL;
	}
	id = class_find(c, name);
	if (id < 0) {
		snprintf(err, errlen, "no class '%s' (show class lists them)", name);
		return -EINVAL;
	}
	return id;
}

/* ------------------------------------------------------------------ */
/* Who asks                                                            */

static struct {
	char who[128];
	pid_t pid;
} origin = { "pacer", 0 };

void
pcr_ctl_origin_set(const char *who, pid_t pid)
{
	snprintf(origin.who, sizeof(origin.who), "%s",
		 who != NULL ? who : "pacer");
	origin.pid = who != NULL ? pid : 0;
}

const char *
pcr_ctl_origin_who(void)
{
	return origin.who;
}

pid_t
pcr_ctl_origin_pid(void)
{
	return origin.pid;
}

/* Every change, once, at the default log level, with who asked: written
 * as the command that makes it, so the log reads as a script. */
#define CHANGED(fmt, ...) \
	PCR_CTL_LOG(NOTICE, fmt " (by %s)", ##__VA_ARGS__, origin.who)

/* A rate as a command takes it back ("unlimited" for 0). */
static const char *
rate_str(uint64_t bps, char *buf, size_t len)
{
	pcr_rate_format(bps, buf, len);
	return buf;
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */

#define ERR(...) (snprintf(err, errlen, __VA_ARGS__), -EINVAL)
#define SPACES " \t\n\v\f\r"

/* a reload is under way: the commands it calls do not log their part */
static bool reloading;

void
pcr_ctl_quit(void)
{
	__atomic_store_n(&pcr_app.quit, true, __ATOMIC_RELEASE);
	CHANGED("quit");
}

int
pcr_ctl_start(char *err, size_t errlen)
{
	if (__atomic_load_n(&pcr_app.dp.forwarding, __ATOMIC_ACQUIRE))
		return ERR("forwarding is already started");
	pcr_app.fwd_touched = true;
	__atomic_store_n(&pcr_app.dp.forwarding, true, __ATOMIC_RELEASE);
	CHANGED("start");
	return 0;
}

int
pcr_ctl_stop(char *err, size_t errlen)
{
	if (!__atomic_load_n(&pcr_app.dp.forwarding, __ATOMIC_ACQUIRE))
		return ERR("forwarding is not started");
	pcr_app.fwd_touched = true;
	__atomic_store_n(&pcr_app.dp.forwarding, false, __ATOMIC_RELEASE);
	CHANGED("stop");
	return 0;
}

/*
 * A command's change is made on a draft: a copy of the running
 * configuration (cfg_draft()), changed, published from the draft
 * (cfg_commit(): the rates, and the class table when classes changed),
 * and only then taken as the running configuration. A publish that fails
 * leaves the running configuration and what the workers read as they
 * were: nothing to undo.
 */
static struct pcr_config *
cfg_draft(void)
{
	struct pcr_config *d = malloc(sizeof(*d));

	if (d != NULL)
		*d = pcr_app.cfg;
	return d;
}

/* The settings a command or a reload changes (the workers read others of
 * the running configuration, which stay untouched). */
static void
cfg_take(struct pcr_config *c, const struct pcr_config *d)
{
	c->rate_bps = d->rate_bps;
	c->flow_rate_bps = d->flow_rate_bps;
	c->flow_limit = d->flow_limit;
	c->flow_queue_ms = d->flow_queue_ms;
	c->max_late_us = d->max_late_us;
	c->aqm = d->aqm;
	c->horizon_ms = d->horizon_ms;
	c->horizon_policy = d->horizon_policy;
	memcpy(c->port_rate_set, d->port_rate_set, sizeof(c->port_rate_set));
	memcpy(c->port_rate_bps, d->port_rate_bps, sizeof(c->port_rate_bps));
	c->max_port_named = d->max_port_named;
	memcpy(c->classes, d->classes, sizeof(c->classes));
	c->n_classes = d->n_classes;
	c->class_clock = d->class_clock;
	c->classes_deleted = d->classes_deleted;
}

/* Publish draft @p d (the class table too when @p classes), then make it
 * the running configuration; @p d is freed. */
static int
cfg_commit(struct pcr_config *d, bool classes, char *err, size_t errlen)
{
	int rc = pcr_rates_publish_cfg(&pcr_app, d);
	unsigned int i;

	/* the rates first (a new class's, with empty calendars), so that a
	 * class has them when flows first match it; a class table that then
	 * fails leaves published rates that differ from the running ones
	 * only in a class no flow can match */
	if (rc == 0 && classes)
		rc = pcr_classtab_publish_cfg(&pcr_app, d);
	/* a slot a new class took: its counters count from here */
	for (i = 1; rc == 0 && i < pcr_app.cfg.n_classes; i++)
		if (d->classes[i].gen != pcr_app.cfg.classes[i].gen)
			pcr_stats_class_restart(i);
	if (rc == 0)
		cfg_take(&pcr_app.cfg, d);
	free(d);
	if (rc != 0)
		return ERR("not changed: %s", strerror(-rc));
	return 0;
}

#define DRAFT(d)                                                              \
	do {                                                                  \
		(d) = cfg_draft();                                            \
		if ((d) == NULL)                                              \
			return ERR("not changed: out of memory");             \
	} while (0)

int
pcr_ctl_set_port_rate(uint16_t port, uint64_t bps, char *err, size_t errlen)
{
	struct pcr_config *d;
	char r[32];

	if (port >= pcr_app.n_ports)
		return ERR("port %u: no such port (ports 0..%u)", port,
			   pcr_app.n_ports - 1);
	DRAFT(d);
	d->port_rate_set[port] = true;
	d->port_rate_bps[port] = bps;
	if ((int)port > d->max_port_named)
		d->max_port_named = port;
	if (cfg_commit(d, false, err, errlen) != 0)
		return -EINVAL;
	CHANGED("set port %u rate %s", port, rate_str(bps, r, sizeof(r)));
	return 0;
}

int
pcr_ctl_set_class_rate(const char *name, bool flow, uint64_t bps, char *err,
		       size_t errlen)
{
	int id = class_named(&pcr_app.cfg, name, err, errlen);
	struct pcr_config *d;
	char r[32];

	if (id < 0)
		return id;
	DRAFT(d);
	if (flow) {
		d->classes[id].flow_rate_bps = bps;
		d->classes[id].flow_rate_set = true;
	} else {
		d->classes[id].rate_bps = bps;
	}
	if (cfg_commit(d, false, err, errlen) != 0)
		return -EINVAL;
	CHANGED("set class %s %s %s", name, flow ? "flow-rate" : "rate",
		rate_str(bps, r, sizeof(r)));
	return 0;
}

int
pcr_ctl_set_class_order(const char *name, enum pcr_order order, char *err,
			size_t errlen)
{
	int id = class_named(&pcr_app.cfg, name, err, errlen);
	struct pcr_config *d;

	if (id < 0)
		return id;
	DRAFT(d);
	d->classes[id].order = order;
	/* the flows held keep their places until each is next stamped, and
	 * then take the new order's level: nothing is moved ahead of its
	 * own flow's packets */
	if (cfg_commit(d, false, err, errlen) != 0)
		return -EINVAL;
	CHANGED("set class %s order %s", name, pcr_order_name(order));
	return 0;
}

int
pcr_ctl_add_class(const struct pcr_class_conf *cl, char *err, size_t errlen)
{
	struct pcr_class_conf chk;
	struct pcr_config *d;
	char e[256];
	int id;

	/* the class builder's checks against the classes now */
	if (pcr_class_new(&pcr_app.cfg, cl->name, false, &chk, e, sizeof(e)) != 0 ||
	    pcr_class_done(cl, false, e, sizeof(e)) != 0)
		return ERR("%s", e);
	DRAFT(d);
	id = pcr_class_slot(d);
	pcr_class_place(d, (unsigned int)id, cl);
	if (cfg_commit(d, true, err, errlen) != 0)
		return -EINVAL;
	CHANGED("add class %s match %s (slot %d)", cl->name, cl->match_str, id);
	return 0;
}

int
pcr_ctl_del_class(const char *name, char *err, size_t errlen)
{
	struct pcr_config *d;
	int id;

	if (strcmp(name, "default") == 0)
		return ERR("the default class cannot be deleted");
	id = class_named(&pcr_app.cfg, name, err, errlen);
	if (id < 0)
		return id;
	DRAFT(d);
	pcr_class_delete(d, (unsigned int)id);
	if (cfg_commit(d, true, err, errlen) != 0)
		return -EINVAL;
	CHANGED("del class %s", name);
	return 0;
}

int
pcr_ctl_set_option(const char *name, const char *value, char *err,
		   size_t errlen)
{
	struct pcr_config *d;
	char e[512];

	DRAFT(d);
	if (pcr_options_set_live(d, name, value, e, sizeof(e)) != 0) {
		free(d);
		return ERR("%s", e);
	}
	if (cfg_commit(d, false, err, errlen) != 0)
		return -EINVAL;
	CHANGED("set %s %s", name, value);
	return 0;
}

int
pcr_ctl_set_class_key(const char *name, const char *key, const char *value,
		      char *err, size_t errlen)
{
	int id = class_named(&pcr_app.cfg, name, err, errlen);
	struct pcr_config *d;
	char e[512];

	if (id < 0)
		return id;
	DRAFT(d);
	if (pcr_class_set(&d->classes[id], id == 0, key, value, e, sizeof(e)) != 0) {
		free(d);
		return ERR("class %s: %s", name, e);
	}
	if (cfg_commit(d, false, err, errlen) != 0)
		return -EINVAL;
	CHANGED("set class %s %s %s", name, key, value);
	return 0;
}

int
pcr_ctl_set_horizon(uint64_t ms, enum pcr_wheel_horizon_policy pol,
		    char *err, size_t errlen)
{
	struct pcr_txport *tp;
	uint64_t deadline;
	uint16_t p, q;

	if (ms < 1 || ms > 60000)
		return ERR("horizon %" PRIu64 ": out of range [1, 60000] ms", ms);
	/* the wheels' consumers (TX lcores) own them and apply it between
	 * bursts: a request each, answered within a second */
	for (p = 0; p < pcr_app.n_ports; p++)
		PCR_TXQ_FOREACH(&pcr_app.ports[p], q, tp) {
			tp->horizon_ns = pcr_wheel_horizon_ns(ms * 1000000u, pol);
			tp->horizon_policy = pol;
			__atomic_add_fetch(&tp->horizon_req, 1, __ATOMIC_RELEASE);
		}
	deadline = rte_rdtsc() + pcr_clock_tsc_hz();
	for (p = 0; p < pcr_app.n_ports; p++)
		PCR_TXQ_FOREACH(&pcr_app.ports[p], q, tp) {
			while (__atomic_load_n(&tp->horizon_done, __ATOMIC_ACQUIRE) !=
			       __atomic_load_n(&tp->horizon_req, __ATOMIC_RELAXED)) {
				if (rte_rdtsc() > deadline)
					return ERR("port %u: its TX lcore did not answer in 1 s", p);
				rte_pause();
			}
			if (tp->horizon_rc != 0)
				return ERR("port %u: horizon %" PRIu64 " ms does not fit its wheel (see docs/design.md, Horizon)",
					   p, ms);
		}
	/* then the timestamper's limit, with the rates (whose calendars
	 * must reach as far: new ones where they do not), once every wheel
	 * takes it */
	pcr_app.cfg.horizon_ms = ms;
	pcr_app.cfg.horizon_policy = pol;
	if (pcr_rates_publish(&pcr_app) != 0)
		PCR_CTL_LOG(WARNING, "horizon %" PRIu64 " ms: no memory for the rates and calendars that reach it; the timestamper keeps the old limit",
			    ms);
	/* a reload logs it with the rest of what it changed */
	if (!reloading)
		CHANGED("set horizon %" PRIu64 " policy %s", ms,
			pol == PCR_WHEEL_HORIZON_CAP ? "cap" : "drop");
	return 0;
}

int
pcr_ctl_set_flow_limit(uint64_t pkts, char *err, size_t errlen)
{
	struct pcr_config *d;

	if (pkts > UINT32_MAX)
		return ERR("flow-limit %" PRIu64 ": out of range [0, %u]", pkts,
			   UINT32_MAX);
	DRAFT(d);
	d->flow_limit = pkts;
	/* the fast path reads it from the published rates */
	if (cfg_commit(d, false, err, errlen) != 0)
		return -EINVAL;
	CHANGED("set flow-limit %" PRIu64, pkts);
	return 0;
}

static int
config_fill(FILE *f, const void *arg)
{
	fprintf(f, "; saved by pacer's `save config`; read back with --config\n");
	pcr_options_write(f, arg);
	return 0;
}

int
pcr_ctl_save_config(const char *path, char *saved, size_t savedlen,
		    char *err, size_t errlen)
{
	char e[512];

	if (pcr_file_replace(path, origin.pid, config_fill, &pcr_app.cfg,
			     saved, savedlen, e, sizeof(e)) != 0)
		return ERR("not saved: %s", e);
	CHANGED("save config %s", saved);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Reload                                                              */

/* @p a and @p b are the same words (a match rule as the file or `add
 * class` spelled it). */
static bool
same_words(const char *a, const char *b)
{
	for (;;) {
		a += strspn(a, SPACES);
		b += strspn(b, SPACES);
		size_t la = strcspn(a, SPACES), lb = strcspn(b, SPACES);

		if (la != lb || strncmp(a, b, la) != 0)
			return false;
		if (la == 0)
			return true;
		a += la;
		b += lb;
	}
}

/* "OLD -> NEW" of a rate, into @p f after @p what, when they differ. */
static void
rate_change(FILE *f, const char *what, uint64_t old, uint64_t nw)
{
	char a[32], b[32];

	if (old == nw)
		return;
	pcr_rate_format(old, a, sizeof(a));
	pcr_rate_format(nw, b, sizeof(b));
	fprintf(f, "; %s %s -> %s", what, a, b);
}

/*
 * Whether the classes of @p nc can replace the running ones as a restart
 * would order them: a class keeps its index for good and a new one takes
 * the next, so the classes kept must be in the same order with the same
 * match, and the new ones after them. @return 0, or -EINVAL with why.
 */
static int
reload_classes_ok(const struct pcr_config *c, const struct pcr_config *nc,
		  char *err, size_t errlen)
{
	const char *first_new = NULL, *last_name = "default";
	unsigned int i, n_add = 0;
	int last = 0;

	for (i = 1; i < nc->n_classes; i++) {
		const struct pcr_class_conf *n = &nc->classes[i];
		int id = class_find(c, n->name);

		if (id < 0) {
			if (first_new == NULL)
				first_new = n->name;
			n_add++;
			continue;
		}
		if (first_new != NULL)
			return ERR("class %s comes after the new class %s: a running pacer adds a class after the others (restart to put it before)",
				   n->name, first_new);
		if ((int32_t)(c->classes[id].seq - c->classes[last].seq) < 0)
			return ERR("classes %s and %s are in the other order (the order rules match in): restart to reorder",
				   last_name, n->name);
		if (!same_words(c->classes[id].match_str, n->match_str))
			return ERR("class %s: match '%s' -> '%s': del class and add class change a running class's rule (or restart)",
				   n->name, c->classes[id].match_str, n->match_str);
		last = id;
		last_name = n->name;
	}
	if (nc->n_classes > PCR_MAX_CLASSES)
		return ERR("%u classes: %d are the most, default included",
			   nc->n_classes, PCR_MAX_CLASSES);
	return 0;
}

/* Apply @p nc's rates, orders and classes to the running configuration
 * (not yet published); what changed into @p f. */
static void
reload_apply(struct pcr_config *c, const struct pcr_config *nc, FILE *f)
{
	unsigned int i, k;
	char what[96];

	if (c->flow_queue_ms != nc->flow_queue_ms)
		fprintf(f, "; flow-queue %" PRIu64 " -> %" PRIu64 " ms",
			c->flow_queue_ms, nc->flow_queue_ms);
	c->flow_queue_ms = nc->flow_queue_ms;
	rate_change(f, "rate", c->rate_bps, nc->rate_bps);
	rate_change(f, "flow-rate", c->flow_rate_bps, nc->flow_rate_bps);
	c->rate_bps = nc->rate_bps;
	c->flow_rate_bps = nc->flow_rate_bps;
	for (k = 0; k < PCR_MAX_PORTS; k++) {
		uint64_t old = c->port_rate_set[k] ? c->port_rate_bps[k] : c->rate_bps;
		uint64_t nw = nc->port_rate_set[k] ? nc->port_rate_bps[k] : nc->rate_bps;

		if (k < pcr_app.n_ports && old != nw) {
			snprintf(what, sizeof(what), "port %u rate", k);
			rate_change(f, what, old, nw);
		}
		c->port_rate_set[k] = nc->port_rate_set[k];
		c->port_rate_bps[k] = nc->port_rate_bps[k];
	}
	c->max_port_named = RTE_MAX(c->max_port_named, nc->max_port_named);
	for (i = 0; i < c->n_classes; i++) {
		struct pcr_class_conf *cl = &c->classes[i];
		int id = cl->deleted ? -1 : i == 0 ? 0 : class_find(nc, cl->name);

		if (cl->deleted)
			continue;
		if (id < 0) {
			pcr_class_delete(c, i);
			fprintf(f, "; class %s deleted", cl->name);
			continue;
		}
		snprintf(what, sizeof(what), "class %s rate", cl->name);
		rate_change(f, what, cl->rate_bps, nc->classes[id].rate_bps);
		snprintf(what, sizeof(what), "class %s flow-rate", cl->name);
		rate_change(f, what,
			    cl->flow_rate_set ? cl->flow_rate_bps : c->flow_rate_bps,
			    nc->classes[id].flow_rate_set ? nc->classes[id].flow_rate_bps :
							    nc->flow_rate_bps);
		if (cl->order != nc->classes[id].order)
			fprintf(f, "; class %s order %s -> %s", cl->name,
				pcr_order_name(cl->order),
				pcr_order_name(nc->classes[id].order));
		cl->rate_bps = nc->classes[id].rate_bps;
		cl->flow_rate_bps = nc->classes[id].flow_rate_bps;
		cl->flow_rate_set = nc->classes[id].flow_rate_set;
		cl->order = nc->classes[id].order;
		if (cl->aqm_set != nc->classes[id].aqm_set ||
		    memcmp(&cl->aqm, &nc->classes[id].aqm, sizeof(cl->aqm)) != 0)
			fprintf(f, "; class %s aqm settings", cl->name);
		cl->aqm = nc->classes[id].aqm;
		cl->aqm_set = nc->classes[id].aqm_set;
	}
	/* new ones after the others, in the file's order (its indexes
	 * are its match order), into free slots: the deletes above left
	 * room for at least as many as the file has */
	for (i = 1; i < nc->n_classes; i++)
		if (class_find(c, nc->classes[i].name) < 0) {
			pcr_class_place(c, (unsigned int)pcr_class_slot(c),
					&nc->classes[i]);
			fprintf(f, "; class %s added (match %s)", nc->classes[i].name,
				nc->classes[i].match_str);
		}
	if (c->flow_limit != nc->flow_limit)
		fprintf(f, "; flow-limit %" PRIu64 " -> %" PRIu64, c->flow_limit,
			nc->flow_limit);
	c->flow_limit = nc->flow_limit;
	if (c->max_late_us != nc->max_late_us)
		fprintf(f, "; max-late %" PRIu64 " -> %" PRIu64 " us",
			c->max_late_us, nc->max_late_us);
	c->max_late_us = nc->max_late_us;
	if (memcmp(&c->aqm, &nc->aqm, sizeof(c->aqm)) != 0)
		fprintf(f, "; aqm %s target %" PRIu64 " interval %" PRIu64
			" us ecn %s ce-threshold %" PRIu64 " us",
			nc->aqm.on ? "codel" : "off", nc->aqm.target_us,
			nc->aqm.interval_us, nc->aqm.ecn ? "yes" : "no",
			nc->aqm.ce_threshold_us);
	c->aqm = nc->aqm;
}

int
pcr_ctl_reload(char *what, size_t whatlen, char *err, size_t errlen)
{
	struct pcr_config *c = &pcr_app.cfg;
	struct pcr_config *nc = calloc(1, sizeof(*nc));
	struct pcr_config *d = NULL;
	char *ebuf = NULL, *sbuf = NULL;
	size_t elen = 0, slen = 0;
	FILE *ef = open_memstream(&ebuf, &elen);
	FILE *sf = open_memstream(&sbuf, &slen);
	const char *pol;
	int rc = -EINVAL, n;

	what[0] = '\0';
	if (nc == NULL || ef == NULL || sf == NULL) {
		(void)ERR("not reloaded: out of memory");
		goto out;
	}
	if (pcr_app.argv == NULL) {
		(void)ERR("not reloaded: no command line to read again");
		goto out;
	}
	/* the file and the command line, as at start */
	pcr_options_errors_to(ef);
	n = pcr_options_parse(pcr_app.argc, pcr_app.argv, nc);
	pcr_options_errors_to(NULL);
	if (n == 0)
		n = pcr_options_restart_diff(c, nc, ef) != 0 ? 2 : 0;
	fflush(ef);
	if (n != 0) {
		/* the parser's first message, without its "pacer: " */
		char *m = ebuf != NULL ? ebuf : "";

		if (strncmp(m, "pacer: ", 7) == 0)
			m += 7;
		m[strcspn(m, "\n")] = '\0';
		if (n == 2)
			(void)ERR("not reloaded: %s: a running pacer keeps these until a restart",
			    m);
		else
			(void)ERR("not reloaded: %s", m[0] != '\0' ? m : "bad options");
		goto out;
	}
	if (reload_classes_ok(c, nc, err, errlen) != 0) {
		char e[512];

		snprintf(e, sizeof(e), "%s", err);
		(void)ERR("not reloaded: %s", e);
		goto out;
	}
	/* the horizon first: the one change that can fail for its own
	 * reason (the wheels' reach); everything else only for memory */
	pol = nc->horizon_policy == PCR_WHEEL_HORIZON_CAP ? "cap" : "drop";
	if (nc->horizon_ms != c->horizon_ms || nc->horizon_policy != c->horizon_policy) {
		char e[256];

		fprintf(sf, "; horizon %" PRIu64 " ms %s -> %" PRIu64 " ms %s",
			c->horizon_ms,
			c->horizon_policy == PCR_WHEEL_HORIZON_CAP ? "cap" : "drop",
			nc->horizon_ms, pol);
		reloading = true;
		rc = pcr_ctl_set_horizon(nc->horizon_ms, nc->horizon_policy, e,
					 sizeof(e));
		reloading = false;
		if (rc != 0) {
			rc = -EINVAL;
			(void)ERR("not reloaded: %s", e);
			goto out;
		}
	}
	/* the rest on a draft of the running configuration (taken after
	 * the horizon, which is the running one's now), published whole */
	d = cfg_draft();
	if (d == NULL) {
		rc = ERR("not reloaded: out of memory (the horizon is the file's already)");
		goto out;
	}
	reload_apply(d, nc, sf);
	rc = cfg_commit(d, true, err, errlen);
	if (rc != 0) {
		char e[512];

		snprintf(e, sizeof(e), "%s", err);
		(void)ERR("not reloaded: %s (the horizon is the file's already)", e);
		goto out;
	}
	fflush(sf);
	snprintf(what, whatlen, "%s",
		 sbuf != NULL && slen > 2 ? sbuf + 2 : "no change");
	CHANGED("reloaded: %s", what);
	rc = 0;
out:
	if (ef != NULL)
		fclose(ef);
	if (sf != NULL)
		fclose(sf);
	free(ebuf);
	free(sbuf);
	free(nc);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Flows                                                               */

static bool
flow_before(const struct pcr_flow_view *a, const struct pcr_flow_view *b,
	    enum pcr_flow_order by)
{
	if (by == PCR_FLOWS_BY_QUEUED && a->queued_bytes != b->queued_bytes)
		return a->queued_bytes > b->queued_bytes;
	if (a->rate_bps != b->rate_bps)
		return a->rate_bps > b->rate_bps;
	return a->tx_bytes > b->tx_bytes;
}

/* The heap of the top flows keeps the worst of them at its root. */
static void
heap_down(struct pcr_flow_view *h, unsigned int n, unsigned int i,
	  enum pcr_flow_order by)
{
	for (;;) {
		unsigned int l = 2 * i + 1, r = l + 1, w = i;
		struct pcr_flow_view t;

		if (l < n && flow_before(&h[w], &h[l], by))
			w = l;
		if (r < n && flow_before(&h[w], &h[r], by))
			w = r;
		if (w == i)
			return;
		t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

static void
heap_up(struct pcr_flow_view *h, unsigned int i, enum pcr_flow_order by)
{
	while (i > 0 && flow_before(&h[(i - 1) / 2], &h[i], by)) {
		struct pcr_flow_view t = h[i];

		h[i] = h[(i - 1) / 2];
		h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

/*
 * The top @p n flows by @p by, from every RX lcore's table, walked by
 * position without stopping the workers (a flow created or aged during
 * the walk may be missed): a heap of @p n, so a million flows cost a
 * million compares and log(n) moves each at most. @return flows in
 * @p out, best first.
 */
unsigned int
pcr_ctl_flows_top(struct pcr_flow_view *out, unsigned int n,
		  enum pcr_flow_order by, uint64_t *total)
{
	double hz = (double)pcr_clock_tsc_hz();
	unsigned int l, k = 0, i;

	*total = 0;
	for (l = 0; l < RTE_MAX_LCORE; l++) {
		struct pcr_lcore *lc = pcr_app.lcores[l];
		struct pcr_flowtab *ft;
		uint32_t pos;

		if (lc == NULL || (ft = lc->ft) == NULL)
			continue;
		for (pos = 0; pos < ft->entries; pos++) {
			const struct pcr_flow *f = &ft->flows[pos];
			struct pcr_flow_view v;
			uint64_t q, pkts, span;
			void *key;

			if (!__atomic_load_n(&f->in_use, __ATOMIC_ACQUIRE))
				continue;
			(*total)++;
			if (n == 0 ||
			    rte_hash_get_key_with_position(ft->h, (int32_t)pos, &key) != 0)
				continue;
			memset(&v, 0, sizeof(v));
			q = __atomic_load_n(&f->queued, __ATOMIC_RELAXED);
			v.queued_packets = pcr_q_pkts(q);
			v.queued_bytes = pcr_q_bytes(q);
			v.class_id = f->class_id;
			v.egress = f->egress;
			if (ft->aqm != NULL) {
				v.aqm_marked = __atomic_load_n(&ft->aqm[pos].marked,
							       __ATOMIC_RELAXED);
				v.drop_aqm = __atomic_load_n(&ft->aqm[pos].dropped,
							     __ATOMIC_RELAXED);
			}
			pkts = f->tx_packets;
			v.tx_packets = pkts;
			v.tx_bytes = f->tx_bytes;
			span = (uint64_t)(uint32_t)(f->last_tx - f->first_tx)
			       << PCR_SPAN_SHIFT;
			/* bytes after the first packet (mean size) over the span */
			if (pkts > 1 && span > 0)
				v.rate_bps = (double)(v.tx_bytes - v.tx_bytes / pkts) *
					     8 * hz / (double)span;
			if (k == n && !flow_before(&v, &out[0], by))
				continue;
			pcr_flow_key_format(key, v.key, sizeof(v.key));
			if (k < n) {
				out[k] = v;
				heap_up(out, k++, by);
			} else {
				out[0] = v;
				heap_down(out, k, 0, by);
			}
		}
	}
	/* best first: the worst to the end, one at a time */
	for (i = k; i > 1; i--) {
		struct pcr_flow_view t = out[0];

		out[0] = out[i - 1];
		out[i - 1] = t;
		heap_down(out, i - 1, 0, by);
	}
	return k;
}

/* ------------------------------------------------------------------ */
/* Cleared statistics                                                  */

static struct pcr_port_snap cleared[PCR_MAX_PORTS];

void
pcr_ctl_clear_stats(int port, const struct pcr_snapshot *now)
{
	uint16_t p;

	for (p = 0; p < pcr_app.n_ports; p++)
		if (port < 0 || port == p)
			cleared[p] = now->port[p];
}

const struct pcr_port_snap *
pcr_ctl_cleared(uint16_t port)
{
	return &cleared[port];
}

/* Completion order's learning (pacer.h, pcr_rank_poll()). */
#define PCR_RANK_YOUNG 64
void
pcr_rank_poll(uint64_t now_tsc)
{
	/* the counts seen so far per class, what the histogram holds (x 256,
	 * fading by 1/8 a rebuild), and when each class is due */
	static uint64_t seen[PCR_MAX_CLASSES][PCR_RANK_OCTAVES];
	static struct pcr_rank_hist acc[PCR_MAX_CLASSES];
	static uint64_t due_tsc[PCR_MAX_CLASSES];
	static uint64_t total[PCR_MAX_CLASSES]; /* transactions learned */
	static uint32_t gen[PCR_MAX_CLASSES]; /* the slot's incarnation */
	const struct pcr_config *c = &pcr_app.cfg;
	unsigned int i, k, l;

	for (i = 0; i < c->n_classes; i++) {
		uint64_t tot[PCR_RANK_OCTAVES] = { 0 };
		bool fresh = false;

		if (c->classes[i].deleted ||
		    c->classes[i].order != PCR_ORDER_COMPLETION)
			continue;
		if (gen[i] != c->classes[i].gen) {
			/* a new class in the slot learns from nothing (the
			 * counts seen stay: they are the RX lcores' totals) */
			gen[i] = c->classes[i].gen;
			memset(&acc[i], 0, sizeof(acc[i]));
			total[i] = 0;
			due_tsc[i] = 0;
			pcr_rank_table_reset(&pcr_app.dp.rank[i]);
		}
		for (l = 0; l < RTE_MAX_LCORE; l++) {
			const struct pcr_lcore *lc = pcr_app.lcores[l];

			if (lc == NULL || lc->ft == NULL)
				continue;
			for (k = 0; k < PCR_RANK_OCTAVES; k++)
				tot[k] += __atomic_load_n(&lc->ft->hist[i].n[k],
							  __ATOMIC_RELAXED);
		}
		for (k = 0; k < PCR_RANK_OCTAVES; k++)
			fresh |= tot[k] != seen[i][k];
		/* once a second; while the class has learned fewer than
		 * PCR_RANK_YOUNG transactions, at once on each new one (a
		 * first table from one odd transaction, a stray ICMPv6
		 * frame, would rank every larger one last for a second) */
		if (!fresh && total[i] == 0)
			continue;
		if ((int64_t)(now_tsc - due_tsc[i]) < 0 &&
		    (total[i] >= PCR_RANK_YOUNG || !fresh))
			continue;
		for (k = 0; k < PCR_RANK_OCTAVES; k++) {
			acc[i].n[k] = acc[i].n[k] - acc[i].n[k] / 8 +
				      (tot[k] - seen[i][k]) * 256;
			total[i] += tot[k] - seen[i][k];
			seen[i][k] = tot[k];
		}
		pcr_rank_table_build(&pcr_app.dp.rank[i], &acc[i]);
		due_tsc[i] = now_tsc + pcr_clock_tsc_hz();
	}
}
