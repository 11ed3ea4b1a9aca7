/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Header parser and flow key extractor; see pcr_classify.h for the rules.
 *
 * One parser, two ways of getting bytes: every header is fetched through
 * classify_read(), which returns a pointer into the first segment when the
 * header lies there (always, for pcr_classify_parse_buf()) and otherwise
 * copies it into a stack buffer with rte_pktmbuf_read(). The parser is
 * always-inline and instantiated twice: with no mbuf (the copy branch folds
 * away) and with one.
 *
 * Each fetched header is consumed before the next fetch, so one scratch
 * buffer of the largest header read (the IPv6 fixed header) is enough.
 * Every offset is checked against a limit (frame or IP datagram end) before
 * it is read or skipped, with subtractions that cannot wrap.
 */

#include <arpa/inet.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "pcr_classify.h"

_Static_assert(sizeof(struct pcr_flow_key) == 40,
	       "pcr_flow_key must have no padding");
_Static_assert(sizeof(struct pcr_flow_key) % 4 == 0,
	       "rte_hash_crc keys must be a multiple of 4 bytes");
_Static_assert(offsetof(struct pcr_flow_key, src_port) == 32 &&
		       offsetof(struct pcr_flow_key, family) == 36 &&
		       offsetof(struct pcr_flow_key, rsvd) == 38,
	       "pcr_flow_key layout");
_Static_assert(sizeof(struct pcr_pkt_info) == 64 &&
		       offsetof(struct pcr_pkt_info, result) == 60,
	       "pcr_pkt_info: one cache line, no padding");

#define CLASSIFY_ETH_HLEN   14
#define CLASSIFY_VLAN_HLEN  4
#define CLASSIFY_MPLS_HLEN  4
#define CLASSIFY_IPV4_HLEN  20
#define CLASSIFY_IPV6_HLEN  40
#define CLASSIFY_FRAG6_HLEN 8
#define CLASSIFY_PORTS_LEN  4
/* largest single read: the IPv6 fixed header */
#define CLASSIFY_SCRATCH    CLASSIFY_IPV6_HLEN

#define ETYPE_IPV4     0x0800
#define ETYPE_IPV6     0x86dd
#define ETYPE_VLAN     0x8100
#define ETYPE_QINQ     0x88a8
#define ETYPE_QINQ_OLD 0x9100
#define ETYPE_MPLS_UC  0x8847
#define ETYPE_MPLS_MC  0x8848

#define PROTO_HOPOPTS  0
#define PROTO_TCP      6
#define PROTO_UDP      17
#define PROTO_ROUTING  43
#define PROTO_FRAGMENT 44
#define PROTO_ESP      50
#define PROTO_AH       51
#define PROTO_NONE     59
#define PROTO_DSTOPTS  60
#define PROTO_SCTP     132

#define IPV4_MF          0x2000
#define IPV4_OFFSET_MASK 0x1fff
#define MPLS_BOS         0x01 /* in the third byte of a label entry */

/*
 * Offsets fit l4_offset (uint16_t): at most Ethernet + 4 tags + 8 labels
 * + IPv6 + 8 extension headers of at most 2048 bytes each.
 */
_Static_assert(CLASSIFY_ETH_HLEN + PCR_CLASSIFY_MAX_VLAN * CLASSIFY_VLAN_HLEN +
			       PCR_CLASSIFY_MAX_MPLS * CLASSIFY_MPLS_HLEN +
			       CLASSIFY_IPV6_HLEN +
			       PCR_CLASSIFY_MAX_IPV6_EXT * 2048 <=
		       UINT16_MAX,
	       "l4_offset too narrow");

/* Where the bytes come from. */
struct classify_reader {
	const uint8_t *flat;      /* bytes readable in place */
	uint32_t flat_len;        /* how many */
	uint32_t pkt_len;         /* bytes in the frame */
	const struct rte_mbuf *m; /* chain holding the rest, or NULL */
};

/*
 * @p len bytes at @p off: in place if they lie in the flat part, else
 * copied to @p scratch (at least @p len bytes); NULL past the frame.
 */
static __rte_always_inline const uint8_t *
classify_read(const struct classify_reader *r, uint32_t off, uint32_t len,
	      uint8_t *scratch)
{
	if (likely(off <= r->flat_len && len <= r->flat_len - off))
		return r->flat + off;
	if (r->m == NULL || off > r->pkt_len || len > r->pkt_len - off)
		return NULL;
	return rte_pktmbuf_read(r->m, off, len, scratch);
}

/* True if @p len bytes at @p off end at or before @p limit. */
static __rte_always_inline bool
classify_fits(uint32_t off, uint32_t len, uint32_t limit)
{
	return off <= limit && len <= limit - off;
}

static __rte_always_inline uint16_t
classify_be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static __rte_always_inline bool
classify_is_vlan_tpid(uint16_t etype)
{
	return etype == ETYPE_VLAN || etype == ETYPE_QINQ ||
	       etype == ETYPE_QINQ_OLD;
}

static __rte_always_inline bool
classify_proto_has_ports(uint8_t proto)
{
	return proto == PROTO_TCP || proto == PROTO_UDP || proto == PROTO_SCTP;
}

/* Default flow: all-zero key and no L3 facts; the L2 facts stay. */
static __rte_always_inline int
classify_fail(struct pcr_pkt_info *info, enum pcr_classify_result res)
{
	memset(&info->key, 0, sizeof(info->key));
	info->l3_len = 0;
	info->l4_offset = 0;
	info->dscp = 0;
	info->is_fragment = false;
	info->result = res;
	return res;
}

static __rte_always_inline int
classify_done(struct pcr_pkt_info *info, enum pcr_classify_result res,
	      uint32_t l4_off)
{
	info->l3_len = l4_off - info->l2_len;
	info->l4_offset = (uint16_t)l4_off;
	info->result = res;
	return res;
}

/*
 * Upper layer at @p off, protocol @p proto, datagram ending at @p limit;
 * family, addresses and dscp already in @p info.
 */
static __rte_always_inline int
classify_l4(const struct classify_reader *r, uint32_t off, uint32_t limit,
	    uint8_t proto, struct pcr_pkt_info *info, uint8_t *scratch)
{
	const uint8_t *p;

	info->key.proto = proto;
	if (!classify_proto_has_ports(proto))
		return classify_done(info, PCR_CLASSIFY_L3_ONLY, off);
	if (!classify_fits(off, CLASSIFY_PORTS_LEN, limit))
		return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
	p = classify_read(r, off, CLASSIFY_PORTS_LEN, scratch);
	if (unlikely(p == NULL))
		return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
	info->key.src_port = classify_be16(p);
	info->key.dst_port = classify_be16(p + 2);
	return classify_done(info, PCR_CLASSIFY_OK, off);
}

static __rte_always_inline int
classify_ipv4(const struct classify_reader *r, uint32_t off,
	      struct pcr_pkt_info *info, uint8_t *scratch)
{
	uint32_t ihl, total, limit = r->pkt_len;
	uint16_t frag;
	uint8_t proto;
	const uint8_t *p;

	p = classify_read(r, off, CLASSIFY_IPV4_HLEN, scratch);
	if (p == NULL)
		return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
	ihl = (uint32_t)(p[0] & 0x0f) * 4;
	total = classify_be16(p + 2);
	if (unlikely((p[0] >> 4) != 4 || ihl < CLASSIFY_IPV4_HLEN ||
		     total < ihl))
		return classify_fail(info, PCR_CLASSIFY_BAD_HEADER);
	frag = classify_be16(p + 6);
	proto = p[9];
	info->dscp = p[1] >> 2;
	info->key.family = PCR_FLOW_FAMILY_IPV4;
	memcpy(info->key.src_addr, p + 12, 4);
	memcpy(info->key.dst_addr, p + 16, 4);

	if (unlikely(!classify_fits(off, ihl, limit)))
		return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
	if (total < limit - off)
		limit = off + total;
	if (unlikely(frag & (IPV4_MF | IPV4_OFFSET_MASK))) {
		info->is_fragment = true;
		info->key.proto = proto;
		return classify_done(info, PCR_CLASSIFY_L3_ONLY, off + ihl);
	}
	return classify_l4(r, off + ihl, limit, proto, info, scratch);
}

static __rte_always_inline int
classify_ipv6(const struct classify_reader *r, uint32_t off,
	      struct pcr_pkt_info *info, uint8_t *scratch)
{
	uint32_t hlen, payload, limit = r->pkt_len;
	unsigned int n_ext;
	uint8_t nh;
	const uint8_t *p;

	p = classify_read(r, off, CLASSIFY_IPV6_HLEN, scratch);
	if (p == NULL)
		return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
	if (unlikely((p[0] >> 4) != 6))
		return classify_fail(info, PCR_CLASSIFY_BAD_HEADER);
	info->dscp = (uint8_t)(((p[0] & 0x0f) << 2) | (p[1] >> 6));
	payload = classify_be16(p + 4);
	nh = p[6];
	info->key.family = PCR_FLOW_FAMILY_IPV6;
	memcpy(info->key.src_addr, p + 8, 16);
	memcpy(info->key.dst_addr, p + 24, 16);

	off += CLASSIFY_IPV6_HLEN;
	/* payload length 0: jumbogram or nothing; let the frame decide */
	if (payload != 0 && payload < limit - off)
		limit = off + payload;

	for (n_ext = 0;; n_ext++) {
		switch (nh) {
		case PROTO_HOPOPTS:
		case PROTO_ROUTING:
		case PROTO_DSTOPTS:
		case PROTO_AH:
		case PROTO_FRAGMENT:
			break;
		case PROTO_ESP:
		case PROTO_NONE:
			info->key.proto = nh;
			return classify_done(info, PCR_CLASSIFY_L3_ONLY, off);
		default:
			return classify_l4(r, off, limit, nh, info, scratch);
		}

		if (unlikely(n_ext == PCR_CLASSIFY_MAX_IPV6_EXT))
			return classify_fail(info, PCR_CLASSIFY_BAD_HEADER);
		if (!classify_fits(off, 2, limit))
			return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
		p = classify_read(r, off, 2, scratch);
		if (unlikely(p == NULL))
			return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
		if (nh == PROTO_FRAGMENT)
			hlen = CLASSIFY_FRAG6_HLEN;
		else if (nh == PROTO_AH)
			hlen = ((uint32_t)p[1] + 2) * 4;
		else
			hlen = ((uint32_t)p[1] + 1) * 8;
		if (!classify_fits(off, hlen, limit))
			return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
		off += hlen;
		if (nh == PROTO_FRAGMENT) {
			info->is_fragment = true;
			info->key.proto = p[0];
			return classify_done(info, PCR_CLASSIFY_L3_ONLY, off);
		}
		nh = p[0];
	}
}

static __rte_always_inline int
classify_parse(const struct classify_reader *r, struct pcr_pkt_info *info)
{
	uint8_t scratch[CLASSIFY_SCRATCH];
	const uint8_t *p;
	uint32_t off;
	uint16_t etype;
	unsigned int i;

	memset(info, 0, sizeof(*info));

	p = classify_read(r, 0, CLASSIFY_ETH_HLEN, scratch);
	if (p == NULL)
		return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
	etype = classify_be16(p + 12);
	info->ether_type = etype;
	off = CLASSIFY_ETH_HLEN;
	info->l2_len = off;

	while (classify_is_vlan_tpid(etype) &&
	       info->vlan_depth < PCR_CLASSIFY_MAX_VLAN) {
		p = classify_read(r, off, CLASSIFY_VLAN_HLEN, scratch);
		if (p == NULL)
			return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
		info->vlan_tci = classify_be16(p);
		etype = classify_be16(p + 2);
		info->ether_type = etype;
		info->vlan_depth++;
		off += CLASSIFY_VLAN_HLEN;
		info->l2_len = off;
	}

	switch (etype) {
	case ETYPE_IPV4:
		return classify_ipv4(r, off, info, scratch);
	case ETYPE_IPV6:
		return classify_ipv6(r, off, info, scratch);
	case ETYPE_MPLS_UC:
	case ETYPE_MPLS_MC:
		break;
	default:
		return classify_fail(info, PCR_CLASSIFY_NON_IP);
	}

	for (i = 0;; i++) {
		if (i == PCR_CLASSIFY_MAX_MPLS)
			return classify_fail(info, PCR_CLASSIFY_NON_IP);
		p = classify_read(r, off, CLASSIFY_MPLS_HLEN, scratch);
		if (p == NULL)
			return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
		off += CLASSIFY_MPLS_HLEN;
		info->l2_len = off;
		info->mpls_depth++;
		if (p[2] & MPLS_BOS)
			break;
	}
	p = classify_read(r, off, 1, scratch);
	if (p == NULL)
		return classify_fail(info, PCR_CLASSIFY_TRUNCATED);
	switch (p[0] >> 4) {
	case 4:
		return classify_ipv4(r, off, info, scratch);
	case 6:
		return classify_ipv6(r, off, info, scratch);
	default:
		return classify_fail(info, PCR_CLASSIFY_NON_IP);
	}
}

int
pcr_classify_parse_buf(const void *frame, uint32_t len,
		       struct pcr_pkt_info *info)
{
	const struct classify_reader r = {
		.flat = frame,
		.flat_len = frame != NULL ? len : 0,
		.pkt_len = frame != NULL ? len : 0,
		.m = NULL,
	};

	return classify_parse(&r, info);
}

static __rte_always_inline int
classify_parse_mbuf(const struct rte_mbuf *m, struct pcr_pkt_info *info)
{
	struct classify_reader r = {
		.flat = rte_pktmbuf_mtod(m, const uint8_t *),
		.flat_len = rte_pktmbuf_data_len(m),
		.pkt_len = rte_pktmbuf_pkt_len(m),
		.m = NULL,
	};

	if (likely(r.flat_len >= r.pkt_len)) {
		r.flat_len = r.pkt_len;
		return classify_parse(&r, info);
	}
	r.m = m;
	return classify_parse(&r, info);
}

int
pcr_classify_parse(const struct rte_mbuf *m, struct pcr_pkt_info *info)
{
	return classify_parse_mbuf(m, info);
}

/* The parser inlined into the loop: no call a packet (about 20
 * instructions of a packet's 55 on the non-IP path were the call's). */
void
pcr_classify_parse_burst(struct rte_mbuf *const *pkts, uint16_t n,
			 struct pcr_pkt_info *info)
{
	uint16_t i;

	for (i = 0; i < n; i++) {
		if (i + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 1], void *));
		classify_parse_mbuf(pkts[i], &info[i]);
	}
}

static const char *
classify_l4_name(uint8_t proto)
{
	switch (proto) {
	case PROTO_TCP:
		return "tcp";
	case PROTO_UDP:
		return "udp";
	case PROTO_SCTP:
		return "sctp";
	default:
		return NULL;
	}
}

int
pcr_flow_key_format(const struct pcr_flow_key *k, char *buf, size_t len)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	const char *l4;
	int af;

	switch (k->family) {
	case PCR_FLOW_FAMILY_NONE:
		return snprintf(buf, len, "non-ip");
	case PCR_FLOW_FAMILY_IPV4:
		af = AF_INET;
		break;
	case PCR_FLOW_FAMILY_IPV6:
		af = AF_INET6;
		break;
	default:
		return snprintf(buf, len, "family %u?", k->family);
	}
	if (inet_ntop(af, k->src_addr, src, sizeof(src)) == NULL ||
	    inet_ntop(af, k->dst_addr, dst, sizeof(dst)) == NULL)
		return snprintf(buf, len, "ipv%u ?", k->family);

	/* a key without ports is an L3_ONLY key, whatever its protocol */
	l4 = classify_l4_name(k->proto);
	if (l4 == NULL || (k->src_port == 0 && k->dst_port == 0))
		return snprintf(buf, len, "ipv%u proto %u %s > %s", k->family,
				k->proto, src, dst);
	if (af == AF_INET)
		return snprintf(buf, len, "%s %s:%u > %s:%u", l4, src,
				k->src_port, dst, k->dst_port);
	return snprintf(buf, len, "%s [%s]:%u > [%s]:%u", l4, src, k->src_port,
			dst, k->dst_port);
}

const char *
pcr_classify_result_name(enum pcr_classify_result r)
{
	switch (r) {
	case PCR_CLASSIFY_OK:
		return "ok";
	case PCR_CLASSIFY_L3_ONLY:
		return "l3-only";
	case PCR_CLASSIFY_NON_IP:
		return "non-ip";
	case PCR_CLASSIFY_TRUNCATED:
		return "truncated";
	case PCR_CLASSIFY_BAD_HEADER:
		return "bad-header";
	case PCR_CLASSIFY_RESULT_MAX:
		break;
	}
	return "unknown";
}
