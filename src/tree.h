/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_TREE_H
#define PCR_TREE_H

/**
 * @file
 * The subscriber tree (issue 36): an ISP's nodes (LibreQoS's network.json:
 * regions, sites, PoPs, access points, to any depth) and its subscribers
 * (ShapedDevices.csv's circuits, the leaves), under each egress port's
 * aggregate. A packet's leaf is found once per flow, by longest-prefix
 * match of its subscriber-side address (lib/leafmap: rte_fib, rte_fib6),
 * and kept in the flow entry; it then leaves at the first time every node
 * from its leaf to the port has room, the rule the classes and the port
 * aggregate follow (lib/policy/pcr_stamp.h), on a path of any length up
 * to PCR_TREE_DEPTH_MAX interior nodes.
 *
 * Memory. An interior node is a bandwidth calendar (lib/policy/pcr_cal.h,
 * sized for its rate and the horizon: up to 512 KiB), as a class is; the
 * 1,200 of a 100,000-subscriber ISP are a few hundred MiB at most. A leaf
 * is a token bucket (one shared word, charged at the packet's departure:
 * tbf's rule, exact), its rate and its counters: a calendar a leaf would
 * be 100,000 of them.
 *
 * Node ids: the interior nodes first, in network.json's order (parents
 * before children), then the leaves in ShapedDevices.csv's order of
 * circuits: leaf id = n_interior + circuit index.
 */

#include <stdbool.h>
#include <stdint.h>

#include "pcr_cal.h"
#include "pcr_classify.h"
#include "pcr_leafmap.h"

/** No node: a flow in no leaf, a node under the port itself. */
#define PCR_TREE_NONE UINT32_MAX
/** Interior nodes on one path that a packet is placed under (with its
 *  class and the port aggregate: PCR_CAL_LEVELS_MAX levels). LibreQoS's
 *  example network.json is six deep. */
#define PCR_TREE_DEPTH_MAX (PCR_CAL_LEVELS_MAX - 2)
/** A leaf's weight without a min rate (bit/s). */
#define PCR_TREE_WEIGHT_DEFAULT 1000000u

/**
 * One egress port's tree: its shape (shared by every port's tree), its
 * rates (download on the port that faces the subscribers, upload on the
 * others) and its state. Built at start (tree.c), read by the RX lcores
 * through pcr_rates.tree; the rates in TSC terms are published with each
 * rate set (pcr_rates.tree_rate), the state (calendars, leaf buckets)
 * lives as long as the tree.
 */
struct pcr_tree {
	uint32_t n_nodes;        /**< interior nodes and leaves */
	uint32_t n_interior;     /**< ids [0, n_interior) are interior */
	bool down;               /**< leaves by destination (the port faces
				  *   the subscribers), else by source */
	const uint32_t *parent;  /**< [n_nodes]: PCR_TREE_NONE under the port */
	const struct pcr_leafmap *map; /**< address -> leaf id */
	const uint64_t *bps;     /**< [n_nodes]: max, bit/s (0: unlimited) */
	/** [n_nodes]: each node's weight among its siblings, bit/s: a
	 *  leaf's min (1 Mbit/s without one), an interior node's the sum of
	 *  its children's (htb's rate under a parent: the sum of the
	 *  children's, as LibreQoS sets them) */
	const uint64_t *weight;
	struct pcr_cal **cal;    /**< [n_interior]: NULL where unlimited */
	uint32_t unmatched;      /**< the leaf of traffic of no subscriber
				  *   (--unmatched), PCR_TREE_NONE: none */
	uint64_t *empty;         /**< [n_nodes - n_interior]: the leaves'
				  *   token buckets (pcr_policy.empty), one
				  *   word each, compare-and-swap where RX
				  *   lcores share them */
};

/** The leaf of a flow with key @p k on @p t's port (NULL: no tree):
 *  PCR_TREE_NONE when its subscriber-side address is in no leaf. */
static inline uint32_t
pcr_tree_leaf(const struct pcr_tree *t, const struct pcr_flow_key *k)
{
	const uint8_t *a;
	uint32_t ip, leaf = PCR_TREE_NONE;

	if (t == NULL)
		return PCR_TREE_NONE;
	a = t->down ? k->dst_addr : k->src_addr;
	if (k->family == PCR_FLOW_FAMILY_IPV4) {
		ip = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 |
		     (uint32_t)a[2] << 8 | a[3];
		leaf = pcr_leafmap_lookup4(t->map, ip);
	} else if (k->family == PCR_FLOW_FAMILY_IPV6) {
		leaf = pcr_leafmap_lookup6(t->map, a);
	}
	return leaf != PCR_TREE_NONE ? leaf : t->unmatched;
}

#endif /* PCR_TREE_H */
