/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The subscriber tree as an operator reads it (show node, show tree, show
 * top nodes, telemetry, --stats-json): names to ids, each node's children,
 * its figures, and the rates its counters give over about a second.
 * Control lcore only; the counters it reads have one writer each.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane.h"
#include "pacer.h"
#include "pcr_isp.h"
#include "tree.h"

/* ------------------------------------------------------------------ */
/* What an operator reads                                              */

/*
 * Names to node ids (interior: lib/isp's binary search; subscribers: a
 * sorted index of Circuit IDs, made once), each node's children (first
 * child and next sibling, for show tree), and the rate each node sends at
 * now: the control lcore samples every node's sent bytes about once a
 * second (pcr_tree_sample()), as show flows' rates come from counters.
 */
struct pcr_tree_view {
	uint32_t *by_id;        /**< subscribers' indexes, by Circuit ID */
	uint32_t *first_child;  /**< [n_nodes] PCR_TREE_NONE: none */
	uint32_t *next_sibling; /**< [n_nodes] */
	uint64_t *prev_bytes;   /**< [n_ports x n_nodes] */
	double *rate;           /**< [n_ports x n_nodes] bit/s */
	uint64_t sample_tsc;    /**< the last sample, 0: none yet */
};

static const struct pcr_isp *cmp_isp;

static int
cmp_circuit(const void *a, const void *b)
{
	return strcmp(cmp_isp->circuits[*(const uint32_t *)a].id,
		      cmp_isp->circuits[*(const uint32_t *)b].id);
}

int
pcr_tree_view_build(struct pcr_app *a)
{
	const struct pcr_isp *isp = a->isp;
	struct pcr_tree_view *v;
	uint32_t n, i;

	if (isp == NULL)
		return 0;
	n = isp->n_nodes + isp->n_circuits;
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return -ENOMEM;
	a->tree_view = v;
	v->by_id = malloc(sizeof(*v->by_id) * (isp->n_circuits + 1));
	v->first_child = malloc(sizeof(uint32_t) * (n + 1));
	v->next_sibling = malloc(sizeof(uint32_t) * (n + 1));
	v->prev_bytes = calloc((size_t)a->n_ports * n + 1, sizeof(uint64_t));
	v->rate = calloc((size_t)a->n_ports * n + 1, sizeof(double));
	if (v->by_id == NULL || v->first_child == NULL ||
	    v->next_sibling == NULL || v->prev_bytes == NULL || v->rate == NULL)
		return -ENOMEM;
	for (i = 0; i < isp->n_circuits; i++)
		v->by_id[i] = i;
	cmp_isp = isp;
	qsort(v->by_id, isp->n_circuits, sizeof(*v->by_id), cmp_circuit);
	for (i = 0; i < n; i++)
		v->first_child[i] = v->next_sibling[i] = PCR_TREE_NONE;
	/* backwards, so each list is in file order */
	for (i = n; i-- > 0;) {
		uint32_t par = a->tree_parent[i];

		if (par == PCR_TREE_NONE)
			continue;
		v->next_sibling[i] = v->first_child[par];
		v->first_child[par] = i;
	}
	return 0;
}

void
pcr_tree_view_free(struct pcr_app *a)
{
	struct pcr_tree_view *v = a->tree_view;

	if (v == NULL)
		return;
	free(v->by_id);
	free(v->first_child);
	free(v->next_sibling);
	free(v->prev_bytes);
	free(v->rate);
	free(v);
	a->tree_view = NULL;
}

int32_t
pcr_tree_node_find(const struct pcr_app *a, const char *name)
{
	const struct pcr_isp *isp = a->isp;
	const struct pcr_tree_view *v = a->tree_view;
	uint32_t lo = 0, hi;
	int32_t i;

	if (isp == NULL || v == NULL)
		return -1;
	i = pcr_isp_node_find(isp, name);
	if (i >= 0)
		return i;
	hi = isp->n_circuits;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, isp->circuits[v->by_id[mid]].id);

		if (c == 0)
			return (int32_t)(isp->n_nodes + v->by_id[mid]);
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* What node @p i of port @p p's tree sent (its TX queues summed). */
static void
node_sent(const struct pcr_app *a, uint16_t p, uint32_t i, uint64_t *pk,
	  uint64_t *by)
{
	uint16_t q;

	*pk = *by = 0;
	for (q = 0; q < a->ports[p].n_txq; q++) {
		const struct pcr_txport *tp = a->ports[p].txq[q];

		*pk += __atomic_load_n(&tp->node[i].tx_packets, __ATOMIC_RELAXED);
		*by += __atomic_load_n(&tp->node[i].tx_bytes, __ATOMIC_RELAXED);
	}
}

void
pcr_tree_sample(struct pcr_app *a, uint64_t now_tsc)
{
	struct pcr_tree_view *v = a->tree_view;
	uint32_t n, i;
	uint16_t p;
	double dt;

	if (v == NULL)
		return;
	n = a->isp->n_nodes + a->isp->n_circuits;
	dt = v->sample_tsc != 0 ?
		     (double)(now_tsc - v->sample_tsc) / (double)a->tsc_hz :
		     0;
	for (p = 0; p < a->n_ports; p++) {
		if (a->tree[p] == NULL)
			continue;
		for (i = 0; i < n; i++) {
			uint64_t pk, by, *prev = &v->prev_bytes[(size_t)p * n + i];

			node_sent(a, p, i, &pk, &by);
			v->rate[(size_t)p * n + i] =
				dt > 0 ? (double)(by - *prev) * 8 / dt : 0;
			*prev = by;
		}
	}
	v->sample_tsc = now_tsc;
}

uint64_t
pcr_tree_sample_due(const struct pcr_app *a)
{
	const struct pcr_tree_view *v = a->tree_view;

	return v == NULL ? UINT64_MAX : v->sample_tsc + a->tsc_hz;
}

/* Node @p i's name: an interior node's, or a subscriber's Circuit ID. */
static const char *
node_name(const struct pcr_isp *isp, uint32_t i)
{
	return i < isp->n_nodes ? isp->nodes[i].name :
				  isp->circuits[i - isp->n_nodes].id;
}

void
pcr_tree_node_info(const struct pcr_app *a, uint32_t i,
		   struct pcr_node_info *ni)
{
	const struct pcr_isp *isp = a->isp;
	const struct pcr_tree_view *v = a->tree_view;
	const uint32_t n = isp->n_nodes + isp->n_circuits;
	uint32_t c, k;
	uint16_t p;

	memset(ni, 0, sizeof(*ni));
	ni->id = i;
	ni->name = node_name(isp, i);
	ni->leaf = i >= isp->n_nodes;
	if (ni->leaf) {
		const struct pcr_isp_circuit *ci = &isp->circuits[i - isp->n_nodes];

		ni->type = "subscriber";
		ni->circuit_name = ci->name;
		ni->down_min_bps = ci->down_min_bps;
		ni->up_min_bps = ci->up_min_bps;
		ni->down_max_bps = ci->down_max_bps;
		ni->up_max_bps = ci->up_max_bps;
		ni->devices = ci->n_devices;
		ni->prefixes = ci->n_prefixes;
	} else {
		ni->type = isp->nodes[i].type[0] != '\0' ? isp->nodes[i].type : "node";
		ni->circuit_name = "";
		ni->down_max_bps = isp->nodes[i].down_bps;
		ni->up_max_bps = isp->nodes[i].up_bps;
	}
	ni->parent = a->tree_parent[i] == PCR_TREE_NONE ?
			     NULL :
			     node_name(isp, a->tree_parent[i]);
	for (c = v->first_child[i]; c != PCR_TREE_NONE; c = v->next_sibling[c])
		ni->children++;
	for (k = a->tree_parent[i], ni->depth = 1; k != PCR_TREE_NONE;
	     k = a->tree_parent[k])
		ni->depth++;
	for (p = 0; p < a->n_ports && ni->n_ports < PCR_MAX_PORTS; p++) {
		struct pcr_node_port *np;

		if (a->tree[p] == NULL)
			continue;
		np = &ni->port[ni->n_ports++];
		np->port = p;
		np->down = a->tree[p]->down;
		np->max_bps = a->tree[p]->bps[i];
		np->weight = a->tree[p]->weight[i];
		node_sent(a, p, i, &np->tx_packets, &np->tx_bytes);
		np->rate_bps = v->rate[(size_t)p * n + i];
	}
}

uint32_t
pcr_tree_n_nodes(const struct pcr_app *a)
{
	return a->isp == NULL ? 0 : a->isp->n_nodes + a->isp->n_circuits;
}

uint32_t
pcr_tree_first_child(const struct pcr_app *a, uint32_t i)
{
	return a->tree_view->first_child[i];
}

uint32_t
pcr_tree_next_sibling(const struct pcr_app *a, uint32_t i)
{
	return a->tree_view->next_sibling[i];
}

uint64_t
pcr_tree_bytes(const struct pcr_app *a, uint16_t p, uint32_t i)
{
	uint64_t pk, by;

	node_sent(a, p, i, &pk, &by);
	return by;
}

double
pcr_tree_rate(const struct pcr_app *a, uint16_t p, uint32_t i)
{
	return a->tree_view->rate[(size_t)p * pcr_tree_n_nodes(a) + i];
}
