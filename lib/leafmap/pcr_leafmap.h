/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_LEAFMAP_H
#define PCR_LEAFMAP_H

/**
 * @file
 * Subscriber addresses to leaves: the longest prefix of a loaded ISP
 * (pcr_isp.h) that holds an address names its circuit, and the circuit
 * is a leaf of the shaping tree. A packet's subscriber-side address is
 * looked up once per packet, so the cost must not grow with the number
 * of circuits: DPDK's FIBs give a fixed number of table reads whatever
 * the routes (rte_fib DIR24_8 for IPv4, rte_fib6 TRIE for IPv6).
 *
 * IPv4 (DIR24_8). A 2^24-entry table indexed by the address's first 24
 * bits, 4 bytes an entry (leaf ids need more than 16 bits): 64 MiB
 * whatever the ISP. An entry either holds the leaf or points to a tbl8
 * group, 256 entries (1 KiB) for the last byte, one for each /24 that
 * holds a prefix longer than /24. A lookup reads one or two entries. The
 * map sizes the groups to the number of such /24s (DPDK rounds it up to
 * 64): exactly what DIR24_8 reserves.
 *
 * IPv6 (TRIE). The same 64 MiB table for the first 24 bits, then one tbl8
 * group per further byte a prefix reaches: a /56 is found in 1 + 4 reads,
 * a /128 in 1 + 13. DPDK sizes the groups up front and reserves, for each
 * route added, every group between the byte its covering route ends at
 * and its own, as if no other route shared them: 50,000 sibling /56s
 * reserve 200,000 groups (195 MiB), though they share all but a few
 * hundred (measured: a FIB of 20,000 groups refuses the 5,001st /56).
 * The map therefore adds a "cover" route for each prefix longer than
 * /24: the /(8k+1) holding a prefix of length 8k+1 to 8k+8 (a /49 for a
 * /56, a /121 for a /128), once per cover, all routes added shortest
 * first. A cover carries what its addresses would get without it (the
 * leaf of the longest prefix around it, or none), so no lookup changes;
 * the second cover of a /8k block and every prefix under a cover reserve
 * nothing, and the groups reserved come to at most k - 2 for each /8k
 * block a prefix ends in (4 for each /48 holding /56s). That bounds the
 * groups used too: every group sits on the path of such a block. Plus
 * one, because DPDK builds a byte-aligned prefix one level too deep and
 * folds that group back once it is written (a lone /32 needs 2 groups),
 * rounded up to 64 (64 KiB).
 *
 * Figures (pacer-ispgen --subscribers 100000: 116,771 IPv4 /32s in
 * 198.18.0.0/15, 49,788 IPv6 /56s in 2001:db8::/32; tests/leafmap's
 * leafmap-100k on a 2-vCPU virtual machine, 4 KiB pages): 483 IPv4
 * groups; 389 covers and 832 IPv6 groups (199,152 without covers).
 * 194.4 MiB in all, 2,039 bytes a circuit: the two 64 MiB tables, 1.3
 * MiB of groups and 65 MiB of DPDK's RIBs (every route as a tree node,
 * kept for changes: DPDK pools two nodes a route, about 204 bytes each
 * with the pool's headers). Built in 0.12 s (0.7 s where DPDK's memory
 * is touched for the first time). Bulk lookups of the prefixes' own
 * addresses, tables warm: 1.5 ns (IPv4), 3.5 ns (IPv6) an address.
 *
 * Next hops. A 4-byte next hop holds at most 2^31 - 1
 * (PCR_LEAFMAP_NH_NONE): the FIBs return it for an address no prefix
 * holds, and the lookups turn it into PCR_LEAF_NONE; leaf ids are
 * therefore below it.
 *
 * Threads. Built and freed on the control path; lookups from any lcore at
 * the same time (they only read). A changed ISP gets a new map (a second
 * name) that replaces the old one once built.
 */

#include <stddef.h>
#include <stdint.h>

#include "pcr_isp.h"

/** What a lookup returns for an address no prefix holds. */
#define PCR_LEAF_NONE UINT32_MAX

/** The next hop the FIBs hold for "no prefix": the largest a 4-byte
 *  DIR24_8 or TRIE next hop takes (an entry holds it shifted left by
 *  one, its low bit marking a pointer to a tbl8 group). */
#define PCR_LEAFMAP_NH_NONE ((UINT32_C(1) << 31) - 1)

/**
 * Longest map name. DPDK names each FIB's route pool "MP_" + the FIB's
 * name, a mempool name holds 25 characters, and the map's two FIBs are
 * named NAME_4 and NAME_6.
 */
#define PCR_LEAFMAP_NAME_MAX 20

struct pcr_leafmap;

/**
 * Build the map of @p isp's prefixes: an address held by prefix p maps to
 * leaf @p base + p.circuit (the longest prefix wins: a /32 inside another
 * circuit's /24 is the /32's; a /0 holds every address no longer prefix
 * does). A family without prefixes gets no FIB (and no 64 MiB): its
 * lookups return PCR_LEAF_NONE. The map keeps nothing of @p isp. DPDK's
 * EAL must be up: the FIBs live in its memory.
 *
 * @param name  unique among live maps (DPDK's FIBs are named objects of
 *   the process), at most PCR_LEAFMAP_NAME_MAX characters
 * @param socket_id  NUMA socket of the tables, or SOCKET_ID_ANY
 * @return 0 with the map in *@p out; or, with nothing allocated and the
 *   reason in @p err (one line, naming the prefix and circuit where one
 *   is at fault): -EINVAL a bad name, a leaf id that reaches
 *   PCR_LEAFMAP_NH_NONE, a bad or twice-given prefix; -EEXIST a map of
 *   that name is live; -ENOMEM DPDK's memory (or malloc) ran out.
 */
int pcr_leafmap_create(struct pcr_leafmap **out, const char *name,
		       const struct pcr_isp *isp, uint32_t base, int socket_id,
		       char *err, size_t errlen);

/** Free @p m and its FIBs; NULL is fine. No lookup may be running. */
void pcr_leafmap_free(struct pcr_leafmap *m);

/** @return the leaf of IPv4 address @p ip (host order, as rte_fib takes
 *  it), PCR_LEAF_NONE when no prefix holds it. @p m: a built map (as
 *  for every lookup). */
uint32_t pcr_leafmap_lookup4(const struct pcr_leafmap *m, uint32_t ip);

/** @return the leaf of IPv6 address @p ip (network order),
 *  PCR_LEAF_NONE when no prefix holds it. */
uint32_t pcr_leafmap_lookup6(const struct pcr_leafmap *m, const uint8_t ip[16]);

/** The leaves of @p n IPv4 addresses (host order) into @p leaves: what
 *  pcr_leafmap_lookup4() gives each, a burst at a time (the FIB
 *  prefetches the next addresses' entries). */
void pcr_leafmap_lookup4_bulk(const struct pcr_leafmap *m, const uint32_t *ips,
			      uint32_t *leaves, unsigned int n);

/** The leaves of @p n IPv6 addresses into @p leaves, as
 *  pcr_leafmap_lookup4_bulk(). */
void pcr_leafmap_lookup6_bulk(const struct pcr_leafmap *m,
			      const uint8_t (*ips)[16], uint32_t *leaves,
			      unsigned int n);

/**
 * @return the bytes of DPDK memory the map holds (its FIBs' tables and
 * route pools: what DPDK's heaps grew by while it was built, so another
 * thread allocating from them meanwhile is counted too) and of its own
 * struct. At least 64 MiB for each family it has prefixes of.
 */
size_t pcr_leafmap_memsize(const struct pcr_leafmap *m);

/** Figures of a built map, for reports and tests. */
struct pcr_leafmap_info {
	uint32_t routes4; /**< IPv4 prefixes added */
	uint32_t tbl8_4;  /**< tbl8 groups the IPv4 FIB was sized for */
	uint32_t routes6; /**< IPv6 prefixes added */
	uint32_t covers6; /**< IPv6 cover routes added (see above) */
	uint32_t tbl8_6;  /**< tbl8 groups the IPv6 FIB was sized for */
	size_t memsize;	  /**< pcr_leafmap_memsize() */
};

/** Fill @p info with @p m's figures. */
void pcr_leafmap_info(const struct pcr_leafmap *m,
		      struct pcr_leafmap_info *info);

#endif /* PCR_LEAFMAP_H */
