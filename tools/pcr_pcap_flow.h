/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_PCAP_FLOW_H
#define PCR_PCAP_FLOW_H

/**
 * @file
 * What pacer-pcapgen and pacer-pcapstat agree on: the marker that
 * pacer-pcapgen writes at the start of the L4 payload of every
 * well-formed flow packet, and a few wire constants.
 *
 * Marker layout, at offset 0 of the L4 payload (right after the 8-byte
 * UDP header or the 20-byte TCP header, which carries no options), all
 * fields big-endian:
 *
 *   offset 0  uint32  flow index (0 .. flows-1; source port - base port)
 *   offset 4  uint32  sequence number within the flow (0, 1, 2, ...,
 *                     plus --seq-start)
 *   offset 8  uint32  PCR_PCAP_MARK_MAGIC ("PCRG")
 *
 * Bytes after the marker are a deterministic pattern. Packets made by
 * --malformed carry no marker. A reader recognises a marker by the magic
 * and, per flow, by the flow index staying the one it first saw.
 */

#include <stdint.h>

#define PCR_PCAP_MARK_FLOW_OFF  0
#define PCR_PCAP_MARK_SEQ_OFF   4
#define PCR_PCAP_MARK_MAGIC_OFF 8
#define PCR_PCAP_MARK_LEN       12
#define PCR_PCAP_MARK_MAGIC     0x50435247u /* "PCRG" */

#define PCR_PCAP_ETH_HLEN   14
#define PCR_PCAP_VLAN_HLEN  4
#define PCR_PCAP_MPLS_HLEN  4
#define PCR_PCAP_IPV4_HLEN  20
#define PCR_PCAP_IPV6_HLEN  40
#define PCR_PCAP_UDP_HLEN   8
#define PCR_PCAP_TCP_HLEN   20

#define PCR_PCAP_ETYPE_IPV4     0x0800
#define PCR_PCAP_ETYPE_ARP      0x0806
#define PCR_PCAP_ETYPE_VLAN     0x8100
#define PCR_PCAP_ETYPE_QINQ     0x88a8
#define PCR_PCAP_ETYPE_QINQ_OLD 0x9100
#define PCR_PCAP_ETYPE_IPV6     0x86dd
#define PCR_PCAP_ETYPE_MPLS_UC  0x8847
#define PCR_PCAP_ETYPE_MPLS_MC  0x8848

#define PCR_PCAP_PROTO_HOPOPTS  0
#define PCR_PCAP_PROTO_TCP      6
#define PCR_PCAP_PROTO_UDP      17
#define PCR_PCAP_PROTO_ROUTING  43
#define PCR_PCAP_PROTO_FRAGMENT 44
#define PCR_PCAP_PROTO_ESP      50
#define PCR_PCAP_PROTO_AH       51
#define PCR_PCAP_PROTO_NONE     59
#define PCR_PCAP_PROTO_DSTOPTS  60
#define PCR_PCAP_PROTO_SCTP     132

/** Frame length limits of pacer-pcapgen (Ethernet header included, FCS not). */
#define PCR_PCAP_FRAME_MIN   60
#define PCR_PCAP_FRAME_MAX   9018
#define PCR_PCAP_FRAME_JUMBO 9000
#define PCR_PCAP_SNAPLEN     65535

static inline uint16_t
pcr_pcap_get_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t
pcr_pcap_get_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | p[3];
}

static inline void
pcr_pcap_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void
pcr_pcap_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

#endif /* PCR_PCAP_FLOW_H */
