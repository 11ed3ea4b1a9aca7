/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_ECN_H
#define PCR_ECN_H

/**
 * @file
 * Marking a packet Congestion Experienced (RFC 3168) in place, as Linux's
 * INET_ECN_set_ce() does: an ECN-capable packet (ECT(0) or ECT(1)) is
 * marked CE, one marked CE already stays so (both: "marked", the sender
 * hears it), a packet that is not ECN-capable is left alone (the caller
 * drops it instead). IPv4's header checksum is updated incrementally (RFC
 * 1624: HC' = ~(~HC + ~m + m'), over the 16-bit word that holds the TOS
 * byte), IPv6's traffic class has no checksum. The L3 header is found by
 * the caller's parse (pcr_classify: Ethernet, VLAN/QinQ tags, MPLS labels,
 * pcr_pkt_info.l2_len), so every encapsulation it parses is marked alike.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/** The two ECN bits (RFC 3168). */
#define PCR_ECN_MASK 0x03
#define PCR_ECN_NOT_ECT 0x00
#define PCR_ECN_ECT_1 0x01
#define PCR_ECN_ECT_0 0x02
#define PCR_ECN_CE 0x03

/** What pcr_ecn_set_ce() did. */
enum pcr_ecn_result {
	PCR_ECN_NOT_CAPABLE = 0, /**< not ECT: left alone, drop it */
	PCR_ECN_MARKED = 1,      /**< ECT(0)/ECT(1) now CE */
	PCR_ECN_WAS_CE = 2,      /**< CE already: left alone, as marked */
};

/** The ECN field of the IP header at @p l3 (@p v6: IPv6, else IPv4). */
static inline unsigned int
pcr_ecn_get(const uint8_t *l3, bool v6)
{
	/* IPv4: the TOS byte's low bits; IPv6: the traffic class's low
	 * bits, which straddle the first two bytes (version 4, TC 8) */
	return v6 ? (l3[1] >> 4) & PCR_ECN_MASK : l3[1] & PCR_ECN_MASK;
}

/**
 * Mark the IP packet whose header starts at @p l3 CE. IPv4 needs its first
 * 12 bytes (TOS and checksum), IPv6 its first 2, in contiguous memory.
 */
static inline enum pcr_ecn_result
pcr_ecn_set_ce(uint8_t *l3, bool v6)
{
	unsigned int ecn = pcr_ecn_get(l3, v6);

	if (ecn == PCR_ECN_NOT_ECT)
		return PCR_ECN_NOT_CAPABLE;
	if (ecn == PCR_ECN_CE)
		return PCR_ECN_WAS_CE;
	if (v6) {
		l3[1] |= PCR_ECN_CE << 4;
	} else {
		/* the word [version/IHL, TOS] before and after */
		uint32_t old = ((uint32_t)l3[0] << 8) | l3[1];
		uint32_t nw = old | PCR_ECN_CE;
		uint32_t sum = ((uint32_t)l3[10] << 8) | l3[11];

		sum = (~sum & 0xffff) + (~old & 0xffff) + nw;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		sum = ~sum & 0xffff;
		l3[1] = (uint8_t)nw;
		l3[10] = (uint8_t)(sum >> 8);
		l3[11] = (uint8_t)sum;
	}
	return PCR_ECN_MARKED;
}

#endif /* PCR_ECN_H */
