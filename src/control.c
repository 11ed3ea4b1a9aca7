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
#include <string.h>

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "pacer.h"

int
pcr_rates_build(const struct pcr_app *a, uint16_t p, struct pcr_rates *r)
{
	const struct pcr_config *c = &a->cfg;
	uint64_t burst = c->burst + c->wire_overhead;
	uint64_t agg = c->port_rate_set[p] ? c->port_rate_bps[p] : c->rate_bps;
	uint64_t hz = pcr_clock_tsc_hz();
	unsigned int i;

	memset(r, 0, sizeof(*r));
	r->tsc_hz = hz;
	if (pcr_rate_init(&r->agg, agg, burst, hz) != 0)
		return -ERANGE;
	for (i = 0; i < c->n_classes; i++) {
		const struct pcr_class_conf *cl = &c->classes[i];
		uint64_t fr = cl->flow_rate_set ? cl->flow_rate_bps :
						  c->flow_rate_bps;

		if (pcr_rate_init(&r->cls[i], cl->rate_bps, burst, hz) != 0 ||
		    pcr_rate_init(&r->cls_flow[i], fr, burst, hz) != 0)
			return -ERANGE;
	}
	return 0;
}

int
pcr_rates_publish(struct pcr_app *a)
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
			rc = pcr_rates_build(a, p, nw[p]);
	}
	if (rc != 0) {
		for (p = 0; p < a->n_ports; p++)
			rte_free(nw[p]);
		return rc;
	}
	for (p = 0; p < a->n_ports; p++)
		old[p] = __atomic_exchange_n(&a->ports[p].rates, nw[p],
					     __ATOMIC_ACQ_REL);
	/* every worker has let go of the old sets once it reports in */
	if (a->qsbr != NULL)
		rte_rcu_qsbr_synchronize(a->qsbr, RTE_QSBR_THRID_INVALID);
	for (p = 0; p < a->n_ports; p++)
		rte_free(old[p]);
	a->rates_published++;
	return 0;
}

void
pcr_rates_free(struct pcr_app *a)
{
	uint16_t p;

	for (p = 0; p < a->n_ports; p++) {
		rte_free(a->ports[p].rates);
		a->ports[p].rates = NULL;
	}
}
