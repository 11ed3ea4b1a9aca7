/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_CLASSIFY_H
#define PCR_CLASSIFY_H

/**
 * @file
 * Defensive packet header parser and flow key extractor.
 *
 * The pacer keeps per-flow state in an rte_hash keyed by struct
 * pcr_flow_key. Every frame, however malformed, maps to exactly one key:
 * either a real flow (5-tuple or addresses + protocol) or the all-zero
 * *default flow*, so nothing is ever left unclassified. The result says
 * which case applied and why (struct pcr_pkt_info::result); the caller
 * counts results per lcore.
 *
 * What is parsed
 * --------------
 * - Ethernet II. An EtherType below 0x0600 (802.3 length) or unknown is
 *   non-IP.
 * - Up to PCR_CLASSIFY_MAX_VLAN VLAN tags, TPID 0x8100, 0x88a8 or 0x9100
 *   in any order. A further tag beyond the cap is non-IP. VLAN ids are not
 *   part of the key: a flow is the same flow on every VLAN (the innermost
 *   TCI is reported in pcr_pkt_info::vlan_tci for callers that care).
 * - MPLS (0x8847, 0x8848): labels are skipped up to bottom-of-stack, at
 *   most PCR_CLASSIFY_MAX_MPLS; then the payload is taken as IPv4 or IPv6
 *   from its first nibble, anything else (pseudowire control word,
 *   Ethernet over MPLS) is non-IP. A stack without bottom-of-stack within
 *   the cap is non-IP.
 * - IPv4 with options (IHL 5..15). Any fragment (MF set or offset != 0) is
 *   L3_ONLY with is_fragment set: first and later fragments of a datagram
 *   get the same key (addresses + protocol, ports 0) and so the same flow.
 * - IPv6 with extension headers hop-by-hop (0), routing (43), destination
 *   options (60) and AH (51) walked, at most PCR_CLASSIFY_MAX_IPV6_EXT of
 *   them. A fragment header (44) stops the walk: L3_ONLY, is_fragment set,
 *   protocol = the fragment header's next header, for every fragment
 *   (atomic ones included). ESP (50) and no-next-header (59) are L3_ONLY
 *   with that protocol. Any other next header is the upper-layer protocol.
 * - TCP (6), UDP (17) and SCTP (132) give a 5-tuple key (OK); their first
 *   4 bytes (the ports) must lie within both the frame and the IP datagram,
 *   else the frame is TRUNCATED. Any other protocol (ICMP, ICMPv6, GRE...)
 *   is L3_ONLY.
 *
 * Bounds
 * ------
 * Nothing is read beyond the frame's length. The IP datagram is bounded
 * by min(frame end, IPv4 total length / IPv6 40 + payload length); IPv6
 * payload length 0 (jumbogram) means "the frame". A datagram longer than
 * the frame is still parsed (a capture may have cut it); headers the
 * bound cuts are TRUNCATED. Bytes after the datagram (Ethernet padding)
 * are never taken for headers.
 *
 * Failures
 * --------
 * NON_IP, TRUNCATED and BAD_HEADER all give the all-zero key. The L2
 * fields (l2_len, vlan_tci, ether_type, vlan_depth, mpls_depth) say what
 * was parsed; the L3
 * fields (l3_len, l4_offset, dscp, is_fragment) are zero unless the
 * result is OK or L3_ONLY.
 *
 * Cost
 * ----
 * No allocation, no logging, no locks. A frame whose headers lie in the
 * first segment is read in place; headers that straddle segments are
 * copied, a few bytes at a time, into a small buffer on the stack with
 * rte_pktmbuf_read(). pcr_classify_parse_buf() is the same parser over
 * plain bytes, for tests and fuzzers without an EAL.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash_crc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most VLAN tags skipped. */
#define PCR_CLASSIFY_MAX_VLAN 4
/** Most MPLS labels skipped. */
#define PCR_CLASSIFY_MAX_MPLS 8
/** Most IPv6 extension headers walked; one more is BAD_HEADER. */
#define PCR_CLASSIFY_MAX_IPV6_EXT 8

/** Address family of a flow key (pcr_flow_key::family). */
#define PCR_FLOW_FAMILY_NONE 0 /**< default flow: not IP or not parsed */
#define PCR_FLOW_FAMILY_IPV4 4
#define PCR_FLOW_FAMILY_IPV6 6

/** Space pcr_flow_key_format() needs for any key, NUL included. */
#define PCR_FLOW_KEY_STRLEN 128

/**
 * Flow key, the rte_hash key of the pacer's flow table.
 *
 * Fixed size (40 bytes, a multiple of 4 and of 8 for rte_hash_crc), no
 * compiler padding (checked by static assertions) and an explicit reserved
 * field that the parser always zeroes, so keys can be compared with
 * memcmp() and hashed as bytes. Whoever builds a key by hand must zero it
 * first (memset or `= {0}`).
 *
 * Addresses are in network byte order as on the wire; IPv4 addresses fill
 * the first 4 bytes, the other 12 are zero. Ports are in host byte order,
 * 0 when the packet has none (L3_ONLY). The VLAN id is deliberately not
 * part of the key.
 */
struct pcr_flow_key {
	uint8_t src_addr[16]; /**< source address, network order */
	uint8_t dst_addr[16]; /**< destination address, network order */
	uint16_t src_port;    /**< L4 source port, host order, or 0 */
	uint16_t dst_port;    /**< L4 destination port, host order, or 0 */
	uint8_t family;       /**< PCR_FLOW_FAMILY_* (0, 4 or 6) */
	uint8_t proto;        /**< IP protocol / IPv6 upper-layer next header */
	uint16_t rsvd;        /**< 0 from the parser; pacer's flow table
			       *   keys it with the ingress port */
} __rte_aligned(8);

/** Outcome of parsing one frame. */
enum pcr_classify_result {
	/** TCP, UDP or SCTP over IPv4/IPv6: 5-tuple key. */
	PCR_CLASSIFY_OK = 0,
	/**
	 * IP without ports (other protocol, fragment, ESP, no-next-header):
	 * key with family, addresses and protocol, ports 0.
	 */
	PCR_CLASSIFY_L3_ONLY,
	/** Not IP: default flow, key all zero. */
	PCR_CLASSIFY_NON_IP,
	/** The frame (or IP datagram) ends inside a header: key all zero. */
	PCR_CLASSIFY_TRUNCATED,
	/**
	 * Malformed IP header: IPv4 version != 4, IHL < 5 or total length
	 * < IHL * 4; IPv6 version != 6; more than PCR_CLASSIFY_MAX_IPV6_EXT
	 * extension headers. Key all zero.
	 */
	PCR_CLASSIFY_BAD_HEADER,
	PCR_CLASSIFY_RESULT_MAX, /**< number of results, not a result */
};

/**
 * What pcr_classify_parse() learnt about a frame: 64 bytes, no implicit
 * padding, every byte written by the parser (memcmp-able).
 * Offsets and lengths are in bytes from the start of the frame.
 */
struct pcr_pkt_info {
	struct pcr_flow_key key; /**< flow key; all zero unless OK/L3_ONLY */
	/** Ethernet + VLAN tags + MPLS labels parsed: offset of L3. */
	uint32_t l2_len;
	/** IPv4 header with options / IPv6 header with walked extensions. */
	uint32_t l3_len;
	/** l2_len + l3_len: start of the L4 header (or of the fragment's data). */
	uint16_t l4_offset;
	/** Innermost VLAN TCI (PCP, DEI, id), host order; 0 if untagged. */
	uint16_t vlan_tci;
	/**
	 * Last EtherType read, host order: the one after the VLAN tags
	 * (0x8847/0x8848 for MPLS, a TPID if the tag cap was hit); 0 if the
	 * Ethernet header itself is cut.
	 */
	uint16_t ether_type;
	uint8_t vlan_depth;  /**< VLAN tags skipped, 0..PCR_CLASSIFY_MAX_VLAN */
	uint8_t mpls_depth;  /**< MPLS labels skipped, 0..PCR_CLASSIFY_MAX_MPLS */
	uint8_t dscp;        /**< DSCP (traffic class >> 2, ECN excluded) */
	bool is_fragment;    /**< IPv4 fragment or IPv6 fragment header */
	uint16_t rsvd;       /**< always 0 */
	enum pcr_classify_result result; /**< also returned by the parse calls */
};

/**
 * Parse @p len bytes at @p frame (an Ethernet frame).
 *
 * @param frame
 *   The frame; may be NULL if @p len is 0.
 * @param len
 *   Its length in bytes; nothing beyond it is read.
 * @param info
 *   Filled in completely, whatever the result.
 * @return
 *   info->result, as an int (a value of enum pcr_classify_result).
 */
int pcr_classify_parse_buf(const void *frame, uint32_t len,
			   struct pcr_pkt_info *info);

/**
 * Parse the frame in mbuf @p m (single- or multi-segment), reading no
 * more than rte_pktmbuf_pkt_len(m) bytes. Single-segment mbufs go to
 * pcr_classify_parse_buf(); chains share its code with a reader that
 * copies only headers that cross a segment boundary.
 *
 * @return
 *   info->result, as an int (a value of enum pcr_classify_result).
 */
int pcr_classify_parse(const struct rte_mbuf *m, struct pcr_pkt_info *info);

/**
 * Parse @p n mbufs into @p info[0..n-1], prefetching the next frame's
 * headers while parsing the current one.
 */
void pcr_classify_parse_burst(struct rte_mbuf *const *pkts, uint16_t n,
			      struct pcr_pkt_info *info);

/**
 * Hash of a flow key with rte_hash_crc (CRC32-C; SSE4.2 when available).
 * Same value as an rte_hash created with `.hash_func = rte_hash_crc` and
 * `.key_len = sizeof(struct pcr_flow_key)`, so it can feed
 * rte_hash_lookup_with_hash() and friends.
 */
static inline uint32_t
pcr_flow_key_hash(const struct pcr_flow_key *k, uint32_t init)
{
	return rte_hash_crc(k, sizeof(*k), init);
}

/** True if @p k is the all-zero default-flow key. */
static inline bool
pcr_flow_key_is_default(const struct pcr_flow_key *k)
{
	uint64_t w, acc = 0;
	unsigned int i;

	for (i = 0; i < sizeof(*k); i += sizeof(w)) {
		memcpy(&w, (const uint8_t *)k + i, sizeof(w));
		acc |= w;
	}
	return acc == 0;
}

/**
 * Write a key for humans into @p buf, snprintf-style:
 * "udp 198.18.0.1:10000 > 198.19.0.1:5201",
 * "tcp [2001:db8::1]:443 > [2001:db8::2]:50000",
 * "ipv4 proto 1 198.18.0.1 > 198.19.0.1" (no ports: L3_ONLY keys),
 * "ipv6 proto 58 2001:db8::1 > 2001:db8::2", "non-ip" (default key),
 * "family 7?" (not a key the parser makes).
 *
 * @return
 *   Length of the whole string (without NUL), as snprintf(); the output
 *   was cut if this is >= @p len. @p buf is NUL-terminated if @p len > 0.
 *   PCR_FLOW_KEY_STRLEN bytes always suffice.
 */
int pcr_flow_key_format(const struct pcr_flow_key *k, char *buf, size_t len);

/**
 * Name of a result: "ok", "l3-only", "non-ip", "truncated", "bad-header";
 * "unknown" for anything else. Never NULL.
 */
const char *pcr_classify_result_name(enum pcr_classify_result r);

#ifdef __cplusplus
}
#endif

#endif /* PCR_CLASSIFY_H */
