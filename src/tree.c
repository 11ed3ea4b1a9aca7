/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The subscriber tree, control side (src/tree.h): read from LibreQoS's
 * files (lib/isp) before the EAL starts, so a bad file is a usage error
 * with nothing started; built into one tree per egress port (its rates,
 * calendars and leaf buckets) and the address map once the EAL runs; its
 * rates turned into TSC terms with every rate set (pcr_tree_rates()).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "pacer.h"
#include "pcr_clock.h"
#include "pcr_isp.h"
#include "tree.h"


int
pcr_tree_load(struct pcr_app *a)
{
	const struct pcr_config *c = &a->cfg;
	char err[512];
	uint32_t i;
	int rc;

	if (c->network[0] == '\0' && c->subscribers[0] == '\0')
		return 0;
	a->isp = pcr_isp_new();
	if (a->isp == NULL) {
		PCR_LOG(ERR, "out of memory for the subscriber tree");
		return -ENOMEM;
	}
	if (c->network[0] != '\0') {
		rc = pcr_isp_load_network(a->isp, c->network, err, sizeof(err));
		if (rc != 0) {
			PCR_LOG(ERR, "--network: %s", err);
			return rc;
		}
	}
	if (c->subscribers[0] != '\0') {
		rc = pcr_isp_load_subscribers(a->isp, c->subscribers, err,
					      sizeof(err));
		if (rc != 0) {
			PCR_LOG(ERR, "--subscribers: %s", err);
			return rc;
		}
	}
	for (i = 0; i < a->isp->n_nodes; i++) {
		const struct pcr_isp_node *nd = &a->isp->nodes[i];

		if (nd->depth > PCR_TREE_DEPTH_MAX) {
			PCR_LOG(ERR,
				"%s: node '%s' is %u levels deep: pacer places a packet under at most %u nodes above its subscriber",
				c->network, nd->name, nd->depth,
				PCR_TREE_DEPTH_MAX);
			return -EINVAL;
		}
	}
	return 0;
}

/* One port's tree: @p down its download side. */
static int
tree_port(struct pcr_app *a, uint16_t p, bool down, const uint32_t *parent,
	  struct pcr_tree **out)
{
	const struct pcr_isp *isp = a->isp;
	const uint32_t ni = isp->n_nodes, n = ni + isp->n_circuits;
	const uint64_t burst = a->cfg.burst + a->cfg.wire_overhead;
	struct pcr_tree *t;
	uint64_t *bps, *w;
	uint32_t i;

	t = rte_zmalloc("pcr_tree", sizeof(*t), RTE_CACHE_LINE_SIZE);
	bps = rte_zmalloc("pcr_tree_bps", sizeof(*bps) * (n ? n : 1), 0);
	w = rte_zmalloc("pcr_tree_weight", sizeof(*w) * (n ? n : 1), 0);
	if (t == NULL || bps == NULL || w == NULL) {
		rte_free(t);
		rte_free(bps);
		rte_free(w);
		PCR_LOG(ERR, "port %u: no memory for the subscriber tree", p);
		return -ENOMEM;
	}
	*out = t;
	t->weight = w;
	t->n_nodes = n;
	t->n_interior = ni;
	t->unmatched = PCR_TREE_NONE;
	t->down = down;
	t->parent = parent;
	t->map = a->leafmap;
	t->bps = bps;
	for (i = 0; i < ni; i++)
		bps[i] = down ? isp->nodes[i].down_bps : isp->nodes[i].up_bps;
	for (i = 0; i < isp->n_circuits; i++) {
		const struct pcr_isp_circuit *ci = &isp->circuits[i];
		uint64_t min = down ? ci->down_min_bps : ci->up_min_bps;

		bps[ni + i] = down ? ci->down_max_bps : ci->up_max_bps;
		w[ni + i] = min != 0 ? min : PCR_TREE_WEIGHT_DEFAULT;
		if (parent[ni + i] != PCR_TREE_NONE)
			w[parent[ni + i]] += w[ni + i];
	}
	/* children after their parents: the sums go up in one pass back */
	for (i = ni; i-- > 0;) {
		if (w[i] == 0)
			w[i] = PCR_TREE_WEIGHT_DEFAULT; /* no subscriber below */
		if (parent[i] != PCR_TREE_NONE)
			w[parent[i]] += w[i];
	}
	t->cal = rte_zmalloc("pcr_tree_cal", sizeof(*t->cal) * (ni ? ni : 1), 0);
	t->empty = rte_zmalloc("pcr_tree_leaf",
			       sizeof(*t->empty) * (n - ni ? n - ni : 1),
			       RTE_CACHE_LINE_SIZE);
	if (t->cal == NULL || t->empty == NULL) {
		PCR_LOG(ERR, "port %u: no memory for the subscriber tree", p);
		return -ENOMEM;
	}
	for (i = 0; i < ni; i++) {
		struct pcr_cal_params cp;
		struct pcr_rate r;

		if (bps[i] == 0)
			continue;
		if (pcr_rate_init(&r, bps[i], burst, a->tsc_hz) != 0)
			return -ERANGE;
		pcr_cal_params_of(&a->cfg, &r, &cp);
		/* with staging, nothing is placed further ahead than the
		 * lead (what cannot go by then waits, held): a node's
		 * calendar reaches twice the longest lead and a millisecond,
		 * not the horizon (a 50 gbit/s region's calendar: 16 KiB,
		 * not 512) */
		if (a->cfg.stage_lead_us != 0)
			cp.reach = RTE_MIN(cp.reach,
					   pcr_clock_ns_to_cycles(
						   (2 * a->cfg.stage_lead_us + 1000) *
						   1000)
						   << PCR_FINE_SHIFT);
		t->cal[i] = pcr_cal_create(&cp);
		if (t->cal[i] == NULL) {
			PCR_LOG(ERR, "port %u: no memory for node '%s''s calendar",
				p, isp->nodes[i].name);
			return -ENOMEM;
		}
	}
	for (i = 0; i < ni; i++)
		if (t->cal[i] != NULL)
			a->tree_cal_bytes += sizeof(uint64_t) * (t->cal[i]->mask + 1);
	/* every leaf's bucket full (pcr_policy_init()) */
	for (i = 0; i < n - ni; i++)
		t->empty[i] = (uint64_t)0 - PCR_POLICY_IDLE;
	return 0;
}

int
pcr_tree_build(struct pcr_app *a)
{
	const struct pcr_isp *isp = a->isp;
	char err[512];
	uint32_t *parent, i, ni, n;
	uint16_t p;
	int rc;

	if (isp == NULL)
		return 0;
	if (a->cfg.subscriber_port >= a->n_ports) {
		PCR_LOG(ERR,
			"--subscriber-port %" PRIu64 ": there is no such port (ports 0..%u)",
			a->cfg.subscriber_port, a->n_ports - 1);
		return -EINVAL;
	}
	ni = isp->n_nodes;
	n = ni + isp->n_circuits;
	rc = pcr_leafmap_create(&a->leafmap, "pcr_leaves", isp, ni,
				(int)rte_socket_id(), err, sizeof(err));
	if (rc != 0) {
		PCR_LOG(ERR, "--subscribers: %s", err);
		return rc;
	}
	parent = rte_malloc("pcr_tree_parent", sizeof(*parent) * (n ? n : 1), 0);
	if (parent == NULL)
		return -ENOMEM;
	a->tree_parent = parent;
	for (i = 0; i < ni; i++)
		parent[i] = isp->nodes[i].parent < 0 ?
				    PCR_TREE_NONE :
				    (uint32_t)isp->nodes[i].parent;
	for (i = 0; i < isp->n_circuits; i++)
		parent[ni + i] = isp->circuits[i].parent < 0 ?
					 PCR_TREE_NONE :
					 (uint32_t)isp->circuits[i].parent;
	for (p = 0; p < a->n_ports; p++) {
		rc = tree_port(a, p, p == a->cfg.subscriber_port, parent,
			       &a->tree[p]);
		if (rc != 0)
			return rc;
	}
	printf("pacer: subscriber tree: %u nodes, %u subscribers (%u IPv4 and %u IPv6 prefixes), %u levels; port %" PRIu64
	       " faces the subscribers; address map %.1f MiB, node calendars %.1f MiB\n",
	       ni, isp->n_circuits, isp->n_prefixes4, isp->n_prefixes6,
	       isp->node_depth_max + 1, a->cfg.subscriber_port,
	       pcr_leafmap_memsize(a->leafmap) / 1048576.0,
	       a->tree_cal_bytes / 1048576.0);
	return 0;
}

void
pcr_tree_free(struct pcr_app *a)
{
	uint16_t p;
	uint32_t i;

	for (p = 0; p < PCR_MAX_PORTS; p++) {
		struct pcr_tree *t = a->tree[p];

		if (t == NULL)
			continue;
		for (i = 0; t->cal != NULL && i < t->n_interior; i++)
			pcr_cal_free(t->cal[i]);
		rte_free(t->cal);
		rte_free(t->empty);
		rte_free((void *)(uintptr_t)t->bps);
		rte_free((void *)(uintptr_t)t->weight);
		rte_free(t);
		a->tree[p] = NULL;
	}
	rte_free(a->tree_parent);
	a->tree_parent = NULL;
	pcr_leafmap_free(a->leafmap);
	a->leafmap = NULL;
	pcr_tree_view_free(a);
	pcr_isp_free(a->isp);
	a->isp = NULL;
}

int
pcr_tree_unmatched(struct pcr_app *a)
{
	int32_t id;
	uint16_t p;

	if (a->cfg.unmatched[0] == '\0')
		return 0;
	if (a->isp == NULL) {
		PCR_LOG(ERR, "--unmatched %s: there is no subscriber tree (--network, --subscribers)",
			a->cfg.unmatched);
		return -EINVAL;
	}
	id = pcr_tree_node_find(a, a->cfg.unmatched);
	if (id < 0 || (uint32_t)id < a->isp->n_nodes) {
		PCR_LOG(ERR, "--unmatched %s: %s", a->cfg.unmatched,
			id < 0 ? "no subscriber has this Circuit ID" :
				 "a node, not a subscriber (give a Circuit ID)");
		return -EINVAL;
	}
	for (p = 0; p < a->n_ports; p++)
		if (a->tree[p] != NULL)
			a->tree[p]->unmatched = (uint32_t)id;
	printf("pacer: traffic of no subscriber is shaped as subscriber %s (--unmatched)\n",
	       a->cfg.unmatched);
	return 0;
}
