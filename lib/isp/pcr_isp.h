/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_ISP_H
#define PCR_ISP_H

/**
 * @file
 * An ISP's shaping tree, read from the files LibreQoS operators already
 * keep, into flat arrays a shaper can be built from. No DPDK, no datapath:
 * this is the control path's loading layer.
 *
 * network.json holds the interior nodes (regions, sites, towers, access
 * points): a JSON object whose keys are node names, each value an object
 * with "downloadBandwidthMbps" and "uploadBandwidthMbps" (numbers above 0,
 * fractions allowed), an optional "type" (a string, kept) and optional
 * "children" (an object of the same shape, to any depth); other keys are
 * ignored. Names are unique over the whole tree: ShapedDevices.csv names
 * a circuit's parent by name alone.
 *
 * ShapedDevices.csv holds the subscribers, one device a row, under
 * LibreQoS's header (Circuit ID, Circuit Name, Device ID, Device Name,
 * Parent Node, MAC, IPv4, IPv6, Download Min Mbps, Upload Min Mbps,
 * Download Max Mbps, Upload Max Mbps, Comment), RFC 4180 quoting, '#'
 * lines and blank lines skipped. Rows sharing a Circuit ID are one
 * circuit (a subscriber with several devices) and agree on its name,
 * parent and rates. IPv4/IPv6 hold addresses or prefixes separated by
 * commas and/or blanks; a bare address is a /32 or /128, and host bits
 * under a prefix are cleared (Python's ip_network(strict=False), as
 * LibreQoS reads them). A prefix belongs to one device of one circuit.
 *
 * Rates are whole bits per second: N Mbps is N * 1,000,000 bit/s exactly
 * (fractions rounded to the nearest bit/s), at most PCR_ISP_MBPS_MAX.
 *
 * A load that fails leaves @p isp as it was: each file is read into a
 * fresh set of arrays that replaces the old one only when the whole file
 * is good, and the error is one line, "FILE:LINE: FIELD 'VALUE': why" for
 * the CSV, "FILE:LINE:COLUMN: why" (jansson's) for JSON syntax and
 * "FILE: node 'Site_1/AP_7': FIELD 'VALUE': why" for a bad node.
 *
 * Loads cost O(n log n): rows are grouped by Circuit ID and prefixes
 * checked by sorting, node names found by binary search, never by
 * scanning; 100,000 circuits (116,000 rows, 12 MB) load in about 0.22 s
 * on a 2-vCPU virtual machine, most of it first touches of memory
 * (tests/isp/test_ispgen.sh holds it under 2 s).
 */

#include <stddef.h>
#include <stdint.h>

/**
 * The largest rate taken, in Mbps (1 Pbit/s): far above any link, and low
 * enough that a JSON number (a double) times 1,000,000 is exact to the
 * bit/s for up to six decimals.
 */
#define PCR_ISP_MBPS_MAX 1000000000ULL

/** An interior node of network.json. */
struct pcr_isp_node {
	const char *name;  /**< its key in network.json, unique */
	const char *type;  /**< its "type", "" when it has none */
	int32_t parent;    /**< index of its parent in pcr_isp.nodes, -1: a
			    *   top-level node (under the port's root) */
	uint32_t depth;    /**< 1: top level, 2: its children, ... */
	uint64_t down_bps; /**< downloadBandwidthMbps, in bit/s */
	uint64_t up_bps;   /**< uploadBandwidthMbps, in bit/s */
};

/** A subscriber: the rows of ShapedDevices.csv with one Circuit ID. */
struct pcr_isp_circuit {
	const char *id;          /**< Circuit ID, not empty, unique */
	const char *name;        /**< Circuit Name, may be "" */
	const char *parent_name; /**< Parent Node as written, "" for none */
	int32_t parent;          /**< index in pcr_isp.nodes, -1: directly
				  *   under the port's root */
	uint32_t line;           /**< the line of its first row */
	uint64_t down_min_bps;   /**< Download Min Mbps, in bit/s (may be 0) */
	uint64_t up_min_bps;     /**< Upload Min Mbps, in bit/s (may be 0) */
	uint64_t down_max_bps;   /**< Download Max Mbps, in bit/s (above 0) */
	uint64_t up_max_bps;     /**< Upload Max Mbps, in bit/s (above 0) */
	uint32_t first_device;   /**< its devices: pcr_isp.devices[first_device
				  *   .. first_device + n_devices - 1] */
	uint32_t n_devices;      /**< its rows, at least 1 */
	uint32_t first_prefix;   /**< its prefixes, likewise in
				  *   pcr_isp.prefixes */
	uint32_t n_prefixes;     /**< at least 1 */
};

/** A device: one row of ShapedDevices.csv. */
struct pcr_isp_device {
	const char *id;        /**< Device ID, as written (may be "") */
	const char *name;      /**< Device Name */
	const char *mac;       /**< MAC, as written, not checked */
	const char *comment;   /**< Comment */
	uint32_t circuit;      /**< index in pcr_isp.circuits */
	uint32_t line;         /**< its row's line */
	uint32_t first_prefix; /**< its prefixes (within its circuit's) */
	uint32_t n_prefixes;   /**< may be 0 when another row of the circuit
				*   has its addresses */
};

/** An IPv4 or IPv6 prefix of a device. */
struct pcr_isp_prefix {
	uint8_t addr[16]; /**< network order, host bits 0; IPv4 in the
			   *   first 4 bytes, the rest 0 */
	uint8_t family;   /**< AF_INET or AF_INET6 */
	uint8_t len;      /**< prefix length in bits: 0-32 or 0-128 */
	uint32_t circuit; /**< index in pcr_isp.circuits */
	uint32_t device;  /**< index in pcr_isp.devices */
};

struct pcr_isp_net;
struct pcr_isp_subs;

/**
 * A loaded ISP. The arrays and counts are read-only views of what the
 * last good loads read; they change (and old pointers die) only when a
 * load succeeds. Circuits are in the order of their first rows; devices
 * and prefixes are grouped by circuit, each in file order.
 */
struct pcr_isp {
	const struct pcr_isp_node *nodes;       /**< parents before children */
	uint32_t n_nodes;
	uint32_t node_depth_max;                /**< deepest node, 0: none */
	const struct pcr_isp_circuit *circuits;
	uint32_t n_circuits;
	const struct pcr_isp_device *devices;
	uint32_t n_devices;
	const struct pcr_isp_prefix *prefixes;
	uint32_t n_prefixes;
	uint32_t n_prefixes4;                   /**< of them AF_INET */
	uint32_t n_prefixes6;                   /**< of them AF_INET6 */

	/* private: what the views point into, owned per file */
	struct pcr_isp_net *net_;
	struct pcr_isp_subs *subs_;
};

/** An empty ISP (no nodes, no circuits). @return NULL when out of
 *  memory. */
struct pcr_isp *pcr_isp_new(void);

/** Free @p isp and everything it holds; NULL is fine. */
void pcr_isp_free(struct pcr_isp *isp);

/**
 * Read LibreQoS's network.json at @p path into @p isp, replacing its
 * nodes. Circuits already loaded keep their parents by name: each must
 * name a node of the new file (else the load fails, naming the circuit's
 * line).
 * @return 0; or, with @p isp unchanged and the reason in @p err (one
 * line, truncated to @p errlen): -EINVAL a bad file, -ENOMEM, or the
 * -errno of opening or reading it.
 */
int pcr_isp_load_network(struct pcr_isp *isp, const char *path, char *err,
			 size_t errlen);

/**
 * Read LibreQoS's ShapedDevices.csv at @p path into @p isp, replacing its
 * circuits, devices and prefixes. Parent Node names a node of the network
 * loaded before, or is empty: with no network loaded, every Parent Node
 * must be empty (a flat ISP, every circuit under the port's root).
 * @return as pcr_isp_load_network().
 */
int pcr_isp_load_subscribers(struct pcr_isp *isp, const char *path,
			     char *err, size_t errlen);

/** @return the index in isp->nodes of the node named @p name, -1 when
 *  there is none (O(log n)). */
int32_t pcr_isp_node_find(const struct pcr_isp *isp, const char *name);

#endif /* PCR_ISP_H */
