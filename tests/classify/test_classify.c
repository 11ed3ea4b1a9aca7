/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Unit tests of lib/classify: hand-built frames for every rule of the
 * parser with the exact expected pcr_pkt_info (every field, then the whole
 * struct byte for byte), the same frames through mbuf chains split at every
 * offset (2 segments) and every pair of offsets (3 segments) with garbage
 * in the unused data room, flow identity across fragments and VLANs, key
 * formatting, and a seeded robustness loop over 200k random and mutated
 * frames that checks the parser's invariants and compares the mbuf path
 * with the flat one.
 */

#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "pcr_classify.h"
#include "pcr_test_eal.h"

#define FRAME_MAX  512
#define POOL_N     255
#define SEG_ROOM   (FRAME_MAX + RTE_PKTMBUF_HEADROOM)
#define GARBAGE    0xa5
#define RAND_ITERS 200000

#define A4 "198.18.0.1"
#define B4 "198.19.0.1"
#define A6 "2001:db8::1"
#define B6 "2001:db8::2"

static struct rte_mempool *pool;

/* ---- frame builder ---------------------------------------------------- */

struct frame {
	uint8_t b[FRAME_MAX];
	uint32_t len;
};

static void
put(struct frame *f, const void *p, uint32_t n)
{
	assert_true(f->len + n <= FRAME_MAX);
	memcpy(f->b + f->len, p, n);
	f->len += n;
}

static void
put8(struct frame *f, uint8_t v)
{
	put(f, &v, 1);
}

static void
put16(struct frame *f, uint16_t v)
{
	put8(f, (uint8_t)(v >> 8));
	put8(f, (uint8_t)v);
}

static void
put32(struct frame *f, uint32_t v)
{
	put16(f, (uint16_t)(v >> 16));
	put16(f, (uint16_t)v);
}

static void
set16(struct frame *f, uint32_t off, uint16_t v)
{
	f->b[off] = (uint8_t)(v >> 8);
	f->b[off + 1] = (uint8_t)v;
}

/* @p n bytes of a pattern that would parse as ports if misread */
static void
fill(struct frame *f, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		put8(f, (uint8_t)(0x31 + i));
}

static void
addr(int af, const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	assert_int_equal(inet_pton(af, s, out), 1);
}

static void
eth(struct frame *f, uint16_t etype)
{
	static const uint8_t macs[12] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1};

	put(f, macs, sizeof(macs));
	put16(f, etype);
}

static void
vlan(struct frame *f, uint16_t tci, uint16_t etype)
{
	put16(f, tci);
	put16(f, etype);
}

static void
mpls(struct frame *f, uint32_t label, int bos)
{
	put32(f, label << 12 | (bos ? 0x100u : 0) | 64);
}

/* IPv4 header with @p ihl_words (options zero-filled NOPs); returns its
 * offset; the total length is written by ip4_end(). */
static uint32_t
ip4(struct frame *f, uint8_t tos, uint8_t proto, uint16_t frag,
    unsigned int ihl_words)
{
	uint32_t off = f->len;
	uint8_t a[16];
	unsigned int i;

	put8(f, (uint8_t)(0x40 | ihl_words));
	put8(f, tos);
	put16(f, 0);      /* total length: ip4_end() */
	put16(f, 0x1234); /* id */
	put16(f, frag);
	put8(f, 64);      /* ttl */
	put8(f, proto);
	put16(f, 0);      /* checksum: not checked */
	addr(AF_INET, A4, a);
	put(f, a, 4);
	addr(AF_INET, B4, a);
	put(f, a, 4);
	for (i = 5; i < ihl_words; i++)
		put32(f, 0x01010101); /* NOPs */
	return off;
}

static void
ip4_end(struct frame *f, uint32_t off)
{
	set16(f, off + 2, (uint16_t)(f->len - off));
}

static uint32_t
ip6(struct frame *f, uint8_t tc, uint8_t nh)
{
	uint32_t off = f->len;
	uint8_t a[16];

	put32(f, 0x60000000u | (uint32_t)tc << 20 | 0x12345);
	put16(f, 0); /* payload length: ip6_end() */
	put8(f, nh);
	put8(f, 64);
	addr(AF_INET6, A6, a);
	put(f, a, 16);
	addr(AF_INET6, B6, a);
	put(f, a, 16);
	return off;
}

static void
ip6_end(struct frame *f, uint32_t off)
{
	set16(f, off + 4, (uint16_t)(f->len - off - 40));
}

/* hop-by-hop / routing / destination options: (len + 1) * 8 bytes */
static void
ext6(struct frame *f, uint8_t nh, uint8_t len)
{
	put8(f, nh);
	put8(f, len);
	fill(f, ((uint32_t)len + 1) * 8 - 2);
}

/* AH: (len + 2) * 4 bytes */
static void
ah6(struct frame *f, uint8_t nh, uint8_t len)
{
	put8(f, nh);
	put8(f, len);
	fill(f, ((uint32_t)len + 2) * 4 - 2);
}

static void
frag6(struct frame *f, uint8_t nh, uint16_t offset_units, int more)
{
	put8(f, nh);
	put8(f, 0);
	put16(f, (uint16_t)(offset_units << 3 | (more ? 1 : 0)));
	put32(f, 0xdeadbeef);
}

/* L4 header of @p hlen bytes starting with the ports */
static void
l4(struct frame *f, uint16_t sport, uint16_t dport, uint32_t hlen)
{
	put16(f, sport);
	put16(f, dport);
	fill(f, hlen - 4);
}

/* ---- expected results ------------------------------------------------- */

static void
key4(struct pcr_flow_key *k, uint8_t proto, uint16_t sport, uint16_t dport)
{
	memset(k, 0, sizeof(*k));
	k->family = PCR_FLOW_FAMILY_IPV4;
	k->proto = proto;
	addr(AF_INET, A4, k->src_addr);
	addr(AF_INET, B4, k->dst_addr);
	k->src_port = sport;
	k->dst_port = dport;
}

static void
key6(struct pcr_flow_key *k, uint8_t proto, uint16_t sport, uint16_t dport)
{
	memset(k, 0, sizeof(*k));
	k->family = PCR_FLOW_FAMILY_IPV6;
	k->proto = proto;
	addr(AF_INET6, A6, k->src_addr);
	addr(AF_INET6, B6, k->dst_addr);
	k->src_port = sport;
	k->dst_port = dport;
}

/* result, L2 facts, and (OK/L3_ONLY only) L3 facts; key set separately */
static void
expect(struct pcr_pkt_info *e, enum pcr_classify_result r, uint16_t etype,
       uint32_t l2, uint32_t l3, uint8_t dscp)
{
	e->result = r;
	e->ether_type = etype;
	e->l2_len = l2;
	if (r == PCR_CLASSIFY_OK || r == PCR_CLASSIFY_L3_ONLY) {
		e->l3_len = l3;
		e->l4_offset = (uint16_t)(l2 + l3);
		e->dscp = dscp;
	}
}

#define CHECK_FIELD(got, exp, field, what)                                    \
	do {                                                                  \
		if ((got)->field != (exp)->field) {                           \
			print_error("%s: " #field " = %lld, want %lld\n",     \
				    (what), (long long)(got)->field,          \
				    (long long)(exp)->field);                 \
			fail();                                               \
		}                                                             \
	} while (0)

static void
check_info(const char *what, const struct pcr_pkt_info *got,
	   const struct pcr_pkt_info *exp)
{
	char g[PCR_FLOW_KEY_STRLEN], w[PCR_FLOW_KEY_STRLEN];

	CHECK_FIELD(got, exp, result, what);
	if (memcmp(&got->key, &exp->key, sizeof(got->key)) != 0) {
		pcr_flow_key_format(&got->key, g, sizeof(g));
		pcr_flow_key_format(&exp->key, w, sizeof(w));
		print_error("%s: key \"%s\", want \"%s\"\n", what, g, w);
		fail();
	}
	CHECK_FIELD(got, exp, l2_len, what);
	CHECK_FIELD(got, exp, l3_len, what);
	CHECK_FIELD(got, exp, l4_offset, what);
	CHECK_FIELD(got, exp, vlan_tci, what);
	CHECK_FIELD(got, exp, ether_type, what);
	CHECK_FIELD(got, exp, vlan_depth, what);
	CHECK_FIELD(got, exp, mpls_depth, what);
	CHECK_FIELD(got, exp, dscp, what);
	CHECK_FIELD(got, exp, is_fragment, what);
	CHECK_FIELD(got, exp, rsvd, what);
	if (memcmp(got, exp, sizeof(*got)) != 0) {
		print_error("%s: pcr_pkt_info differs byte-wise\n", what);
		fail();
	}
}

/* ---- the cases ---------------------------------------------------------
 * Each builds a frame and the exact info the parser must return. */

typedef void (*case_fn)(struct frame *f, struct pcr_pkt_info *e);

static void
case_ipv4_udp(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0xb8 | 0x01, 17, 0, 5); /* EF + ECN bit */
	l4(f, 10000, 5201, 8);
	fill(f, 18);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x0800, 14, 20, 46);
	key4(&e->key, 17, 10000, 5201);
}

static void
case_ipv4_tcp(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 6, 0x4000, 5); /* DF: not a fragment */
	l4(f, 43210, 443, 20);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x0800, 14, 20, 0);
	key4(&e->key, 6, 43210, 443);
}

static void
case_ipv4_sctp(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0x28, 132, 0, 5);
	l4(f, 36412, 38412, 12);
	fill(f, 16);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x0800, 14, 20, 10);
	key4(&e->key, 132, 36412, 38412);
}

static void
case_ipv4_options(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0, 8);
	l4(f, 53, 1053, 8);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x0800, 14, 32, 0);
	key4(&e->key, 17, 53, 1053);
}

static void
case_ipv4_options_max(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 6, 0, 15);
	l4(f, 1, 2, 20);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x0800, 14, 60, 0);
	key4(&e->key, 6, 1, 2);
}

static void
case_ipv4_frag_first(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0x2000, 5); /* MF, offset 0 */
	l4(f, 10000, 5201, 8);
	fill(f, 64);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x0800, 14, 20, 0);
	e->is_fragment = true;
	key4(&e->key, 17, 0, 0);
}

static void
case_ipv4_frag_later(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 185, 5); /* offset 1480, last */
	fill(f, 40);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x0800, 14, 20, 0);
	e->is_fragment = true;
	key4(&e->key, 17, 0, 0);
}

static void
case_ipv4_frag_middle_options(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0x2000 | 185, 6); /* MF and offset, 4 option bytes */
	ip4_end(f, o);                       /* no data at all */
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x0800, 14, 24, 0);
	e->is_fragment = true;
	key4(&e->key, 17, 0, 0);
}

static void
case_ipv4_bad_ihl(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0, 5);
	l4(f, 1, 2, 8);
	ip4_end(f, o);
	f->b[o] = 0x44; /* IHL 4 */
	expect(e, PCR_CLASSIFY_BAD_HEADER, 0x0800, 14, 0, 0);
}

static void
case_ipv4_bad_version(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0, 5);
	l4(f, 1, 2, 8);
	ip4_end(f, o);
	f->b[o] = 0x65; /* version 6 under EtherType IPv4 */
	expect(e, PCR_CLASSIFY_BAD_HEADER, 0x0800, 14, 0, 0);
}

static void
case_ipv4_bad_total(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0, 5);
	l4(f, 1, 2, 8);
	set16(f, o + 2, 19); /* < 20, frame itself fine */
	expect(e, PCR_CLASSIFY_BAD_HEADER, 0x0800, 14, 0, 0);
}

static void
case_ipv4_total_lt_options(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0, 6);
	l4(f, 1, 2, 8);
	set16(f, o + 2, 20); /* < IHL * 4 = 24 */
	expect(e, PCR_CLASSIFY_BAD_HEADER, 0x0800, 14, 0, 0);
}

/* total length beyond the frame (cut by a capture): still parsed */
static void
case_ipv4_total_beyond_frame(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0, 5);
	l4(f, 4000, 5000, 8);
	set16(f, o + 2, 1500);
	expect(e, PCR_CLASSIFY_OK, 0x0800, 14, 20, 0);
	key4(&e->key, 17, 4000, 5000);
}

/* total length beyond the frame and the ports cut */
static void
case_ipv4_ports_cut(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 6, 0, 5);
	put16(f, 4000); /* only the source port */
	set16(f, o + 2, 1500);
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x0800, 14, 0, 0);
}

/* total length says the datagram ends before the ports; Ethernet padding
 * after it must not be taken for them */
static void
case_ipv4_ports_in_padding(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0, 5);
	put16(f, 4000);
	ip4_end(f, o); /* total 22 */
	fill(f, 60 - f->len);
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x0800, 14, 0, 0);
}

static void
case_ipv4_options_cut(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 6, 0, 15);
	set16(f, o + 2, 80);
	f->len = o + 40; /* 20 of the 40 option bytes missing */
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x0800, 14, 0, 0);
}

static void
case_ipv4_short(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 17, 0, 5);
	ip4_end(f, o);
	f->len = o + 19;
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x0800, 14, 0, 0);
}

static void
case_ipv4_icmp(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0xc0, 1, 0, 5);
	l4(f, 0x0800, 0x1234, 8); /* echo request */
	fill(f, 56);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x0800, 14, 20, 48);
	key4(&e->key, 1, 0, 0);
}

/* no L4 needed for a protocol without ports, even with no payload */
static void
case_ipv4_gre_empty(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x0800);
	o = ip4(f, 0, 47, 0, 5);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x0800, 14, 20, 0);
	key4(&e->key, 47, 0, 0);
}

static void
case_ipv6_udp(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0xb8 | 0x02, 17);
	l4(f, 40000, 53, 8);
	fill(f, 30);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x86dd, 14, 40, 46);
	key6(&e->key, 17, 40000, 53);
}

static void
case_ipv6_icmp(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 58);
	l4(f, 0x8000, 0x1234, 8);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x86dd, 14, 40, 0);
	key6(&e->key, 58, 0, 0);
}

static void
case_ipv6_ext_chain(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0x20, 0);
	ext6(f, 43, 0); /* hop-by-hop, 8 */
	ext6(f, 60, 2); /* routing, 24 */
	ext6(f, 6, 1);  /* destination options, 16 */
	l4(f, 50000, 22, 20);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x86dd, 14, 40 + 8 + 24 + 16, 8);
	key6(&e->key, 6, 50000, 22);
}

static void
case_ipv6_ah(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 51);
	ah6(f, 17, 4); /* 24 bytes */
	l4(f, 500, 4500, 8);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x86dd, 14, 64, 0);
	key6(&e->key, 17, 500, 4500);
}

static void
case_ipv6_frag_first(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 44);
	frag6(f, 17, 0, 1);
	l4(f, 40000, 53, 8);
	fill(f, 64);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x86dd, 14, 48, 0);
	e->is_fragment = true;
	key6(&e->key, 17, 0, 0);
}

static void
case_ipv6_frag_later(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 44);
	frag6(f, 17, 9, 0);
	fill(f, 24);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x86dd, 14, 48, 0);
	e->is_fragment = true;
	key6(&e->key, 17, 0, 0);
}

/* routing header, then the fragment header */
static void
case_ipv6_routing_frag(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 43);
	ext6(f, 44, 2);
	frag6(f, 6, 100, 1);
	fill(f, 16);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x86dd, 14, 40 + 24 + 8, 0);
	e->is_fragment = true;
	key6(&e->key, 6, 0, 0);
}

static void
case_ipv6_esp(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 50);
	fill(f, 32);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x86dd, 14, 40, 0);
	key6(&e->key, 50, 0, 0);
}

static void
case_ipv6_no_next(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 0);
	ext6(f, 59, 0);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_L3_ONLY, 0x86dd, 14, 48, 0);
	key6(&e->key, 59, 0, 0);
}

/* hop-by-hop header claims 88 bytes; the frame has 16 */
static void
case_ipv6_chain_truncated(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 0);
	put8(f, 17);
	put8(f, 10);
	fill(f, 14);
	ip6_end(f, o);
	set16(f, o + 4, 200); /* payload length beyond the frame too */
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x86dd, 14, 0, 0);
}

/* extension header ends exactly at the frame end: ports missing */
static void
case_ipv6_chain_ports_missing(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 60);
	ext6(f, 17, 0);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x86dd, 14, 0, 0);
}

static void
chain6(struct frame *f, unsigned int n_ext, uint8_t last_nh)
{
	unsigned int i;

	for (i = 0; i < n_ext; i++)
		ext6(f, i + 1 < n_ext ? 60 : last_nh, 0);
}

static void
case_ipv6_chain_8(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 60);
	chain6(f, PCR_CLASSIFY_MAX_IPV6_EXT, 17);
	l4(f, 7, 9, 8);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x86dd, 14, 40 + 8 * 8, 0);
	key6(&e->key, 17, 7, 9);
}

static void
case_ipv6_chain_9(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 60);
	chain6(f, PCR_CLASSIFY_MAX_IPV6_EXT + 1, 17);
	l4(f, 7, 9, 8);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_BAD_HEADER, 0x86dd, 14, 0, 0);
}

/* 8 extension headers then a fragment header: 9 */
static void
case_ipv6_chain_8_frag(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 60);
	chain6(f, PCR_CLASSIFY_MAX_IPV6_EXT, 44);
	frag6(f, 17, 0, 1);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_BAD_HEADER, 0x86dd, 14, 0, 0);
}

static void
case_ipv6_bad_version(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 17);
	l4(f, 1, 2, 8);
	ip6_end(f, o);
	f->b[o] = 0x45;
	expect(e, PCR_CLASSIFY_BAD_HEADER, 0x86dd, 14, 0, 0);
}

static void
case_ipv6_short(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 17);
	f->len = o + 39;
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x86dd, 14, 0, 0);
}

/* payload length ends the datagram after the hop-by-hop header */
static void
case_ipv6_payload_bound(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x86dd);
	o = ip6(f, 0, 0);
	ext6(f, 17, 0);
	l4(f, 1, 2, 8);
	set16(f, o + 4, 8);
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x86dd, 14, 0, 0);
}

/* payload length 0 (jumbogram): bounded by the frame */
static void
case_ipv6_jumbo(struct frame *f, struct pcr_pkt_info *e)
{
	eth(f, 0x86dd);
	ip6(f, 0, 0);
	ext6(f, 17, 0);
	l4(f, 1, 2, 8);
	expect(e, PCR_CLASSIFY_OK, 0x86dd, 14, 48, 0);
	key6(&e->key, 17, 1, 2);
}

static void
case_vlan(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x8100);
	vlan(f, 0x2064, 0x0800); /* PCP 1, VID 100 */
	o = ip4(f, 0xb8, 17, 0, 5);
	l4(f, 10000, 5201, 8);
	fill(f, 18);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x0800, 18, 20, 46);
	e->vlan_depth = 1;
	e->vlan_tci = 0x2064;
	key4(&e->key, 17, 10000, 5201);
}

static void
case_qinq(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x88a8);
	vlan(f, 0x00c8, 0x8100);
	vlan(f, 0xe064, 0x86dd);
	o = ip6(f, 0, 17);
	l4(f, 40000, 53, 8);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x86dd, 22, 40, 0);
	e->vlan_depth = 2;
	e->vlan_tci = 0xe064;
	key6(&e->key, 17, 40000, 53);
}

static void
case_vlan_9100(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x9100);
	vlan(f, 10, 0x8100);
	vlan(f, 20, 0x0800);
	o = ip4(f, 0, 6, 0, 5);
	l4(f, 1234, 80, 20);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x0800, 22, 20, 0);
	e->vlan_depth = 2;
	e->vlan_tci = 20;
	key4(&e->key, 6, 1234, 80);
}

static void
case_vlan_4(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x88a8);
	vlan(f, 1, 0x8100);
	vlan(f, 2, 0x8100);
	vlan(f, 3, 0x8100);
	vlan(f, 4, 0x0800);
	o = ip4(f, 0, 17, 0, 5);
	l4(f, 10, 20, 8);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x0800, 30, 20, 0);
	e->vlan_depth = 4;
	e->vlan_tci = 4;
	key4(&e->key, 17, 10, 20);
}

/* a fifth tag is beyond the cap: default flow */
static void
case_vlan_5(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x88a8);
	vlan(f, 1, 0x8100);
	vlan(f, 2, 0x8100);
	vlan(f, 3, 0x8100);
	vlan(f, 4, 0x8100);
	vlan(f, 5, 0x0800);
	o = ip4(f, 0, 17, 0, 5);
	l4(f, 10, 20, 8);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_NON_IP, 0x8100, 30, 0, 0);
	e->vlan_depth = 4;
	e->vlan_tci = 4;
}

static void
case_vlan_cut(struct frame *f, struct pcr_pkt_info *e)
{
	eth(f, 0x8100);
	vlan(f, 0x0064, 0x8100);
	put16(f, 0x00c8); /* second tag: TCI only */
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x8100, 18, 0, 0);
	e->vlan_depth = 1;
	e->vlan_tci = 0x0064;
}

static void
case_mpls2_ipv4(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x8847);
	mpls(f, 100, 0);
	mpls(f, 200, 1);
	o = ip4(f, 0, 17, 0, 5);
	l4(f, 10000, 5201, 8);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x8847, 22, 20, 0);
	e->mpls_depth = 2;
	key4(&e->key, 17, 10000, 5201);
}

static void
case_vlan_mpls_ipv6(struct frame *f, struct pcr_pkt_info *e)
{
	uint32_t o;

	eth(f, 0x8100);
	vlan(f, 7, 0x8848);
	mpls(f, 16, 1);
	o = ip6(f, 0x04, 6);
	l4(f, 179, 40000, 20);
	ip6_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x8848, 22, 40, 1);
	e->vlan_depth = 1;
	e->vlan_tci = 7;
	e->mpls_depth = 1;
	key6(&e->key, 6, 179, 40000);
}

static void
case_mpls_8(struct frame *f, struct pcr_pkt_info *e)
{
	unsigned int i;
	uint32_t o;

	eth(f, 0x8847);
	for (i = 0; i < PCR_CLASSIFY_MAX_MPLS; i++)
		mpls(f, 100 + i, i + 1 == PCR_CLASSIFY_MAX_MPLS);
	o = ip4(f, 0, 17, 0, 5);
	l4(f, 1, 2, 8);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_OK, 0x8847, 14 + 32, 20, 0);
	e->mpls_depth = 8;
	key4(&e->key, 17, 1, 2);
}

/* no bottom-of-stack within the cap */
static void
case_mpls_9(struct frame *f, struct pcr_pkt_info *e)
{
	unsigned int i;
	uint32_t o;

	eth(f, 0x8847);
	for (i = 0; i <= PCR_CLASSIFY_MAX_MPLS; i++)
		mpls(f, 100 + i, i == PCR_CLASSIFY_MAX_MPLS);
	o = ip4(f, 0, 17, 0, 5);
	l4(f, 1, 2, 8);
	ip4_end(f, o);
	expect(e, PCR_CLASSIFY_NON_IP, 0x8847, 14 + 32, 0, 0);
	e->mpls_depth = 8;
}

/* pseudowire control word after the stack: not IP */
static void
case_mpls_cw(struct frame *f, struct pcr_pkt_info *e)
{
	eth(f, 0x8847);
	mpls(f, 300, 1);
	put32(f, 0); /* control word */
	eth(f, 0x0800);
	fill(f, 40);
	expect(e, PCR_CLASSIFY_NON_IP, 0x8847, 18, 0, 0);
	e->mpls_depth = 1;
}

static void
case_mpls_cut(struct frame *f, struct pcr_pkt_info *e)
{
	eth(f, 0x8847);
	mpls(f, 300, 0);
	put16(f, 0x0123);
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x8847, 18, 0, 0);
	e->mpls_depth = 1;
}

static void
case_mpls_empty(struct frame *f, struct pcr_pkt_info *e)
{
	eth(f, 0x8847);
	mpls(f, 300, 1);
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x8847, 18, 0, 0);
	e->mpls_depth = 1;
}

static void
case_arp(struct frame *f, struct pcr_pkt_info *e)
{
	eth(f, 0x0806);
	put16(f, 1);
	put16(f, 0x0800);
	put8(f, 6);
	put8(f, 4);
	put16(f, 1);
	fill(f, 20);
	fill(f, 60 - f->len);
	expect(e, PCR_CLASSIFY_NON_IP, 0x0806, 14, 0, 0);
}

/* 802.3 length field, LLC: not IP */
static void
case_llc(struct frame *f, struct pcr_pkt_info *e)
{
	eth(f, 46);
	fill(f, 46);
	expect(e, PCR_CLASSIFY_NON_IP, 46, 14, 0, 0);
}

static void
case_eth_only(struct frame *f, struct pcr_pkt_info *e)
{
	eth(f, 0x0800);
	expect(e, PCR_CLASSIFY_TRUNCATED, 0x0800, 14, 0, 0);
}

static void
case_frame_10(struct frame *f, struct pcr_pkt_info *e)
{
	eth(f, 0x0800);
	f->len = 10;
	expect(e, PCR_CLASSIFY_TRUNCATED, 0, 0, 0, 0);
}

static void
case_frame_0(struct frame *f, struct pcr_pkt_info *e)
{
	f->len = 0;
	expect(e, PCR_CLASSIFY_TRUNCATED, 0, 0, 0, 0);
}

#define CASES(X)                                                              \
	X(ipv4_udp)                                                           \
	X(ipv4_tcp)                                                           \
	X(ipv4_sctp)                                                          \
	X(ipv4_options)                                                       \
	X(ipv4_options_max)                                                   \
	X(ipv4_frag_first)                                                    \
	X(ipv4_frag_later)                                                    \
	X(ipv4_frag_middle_options)                                           \
	X(ipv4_bad_ihl)                                                       \
	X(ipv4_bad_version)                                                   \
	X(ipv4_bad_total)                                                     \
	X(ipv4_total_lt_options)                                              \
	X(ipv4_total_beyond_frame)                                            \
	X(ipv4_ports_cut)                                                     \
	X(ipv4_ports_in_padding)                                              \
	X(ipv4_options_cut)                                                   \
	X(ipv4_short)                                                         \
	X(ipv4_icmp)                                                          \
	X(ipv4_gre_empty)                                                     \
	X(ipv6_udp)                                                           \
	X(ipv6_icmp)                                                          \
	X(ipv6_ext_chain)                                                     \
	X(ipv6_ah)                                                            \
	X(ipv6_frag_first)                                                    \
	X(ipv6_frag_later)                                                    \
	X(ipv6_routing_frag)                                                  \
	X(ipv6_esp)                                                           \
	X(ipv6_no_next)                                                       \
	X(ipv6_chain_truncated)                                               \
	X(ipv6_chain_ports_missing)                                           \
	X(ipv6_chain_8)                                                       \
	X(ipv6_chain_9)                                                       \
	X(ipv6_chain_8_frag)                                                  \
	X(ipv6_bad_version)                                                   \
	X(ipv6_short)                                                         \
	X(ipv6_payload_bound)                                                 \
	X(ipv6_jumbo)                                                         \
	X(vlan)                                                               \
	X(qinq)                                                               \
	X(vlan_9100)                                                          \
	X(vlan_4)                                                             \
	X(vlan_5)                                                             \
	X(vlan_cut)                                                           \
	X(mpls2_ipv4)                                                         \
	X(vlan_mpls_ipv6)                                                     \
	X(mpls_8)                                                             \
	X(mpls_9)                                                             \
	X(mpls_cw)                                                            \
	X(mpls_cut)                                                           \
	X(mpls_empty)                                                         \
	X(arp)                                                                \
	X(llc)                                                                \
	X(eth_only)                                                           \
	X(frame_10)                                                           \
	X(frame_0)

struct test_case {
	const char *name;
	case_fn build;
};

#define CASE_ENTRY(n) {#n, case_##n},
static const struct test_case cases[] = {CASES(CASE_ENTRY)};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static void
build_case(const struct test_case *c, struct frame *f, struct pcr_pkt_info *e)
{
	memset(f, 0, sizeof(*f));
	memset(e, 0, sizeof(*e));
	c->build(f, e);
}

/* Parse from a heap copy of exactly the frame's size, so that AddressSanitizer
 * (or valgrind) sees any read past the end. */
static int
parse_exact(const uint8_t *frame, uint32_t len, struct pcr_pkt_info *info)
{
	uint8_t *copy = malloc(len > 0 ? len : 1);
	int r;

	assert_non_null(copy);
	if (len > 0)
		memcpy(copy, frame, len);
	memset(info, 0x5a, sizeof(*info)); /* the parser must write it all */
	r = pcr_classify_parse_buf(len > 0 ? copy : NULL, len, info);
	free(copy);
	return r;
}

static void
run_case(const struct test_case *c)
{
	struct pcr_pkt_info got, exp;
	struct frame f;
	int r;

	build_case(c, &f, &exp);
	r = parse_exact(f.b, f.len, &got);
	assert_int_equal(r, got.result);
	check_info(c->name, &got, &exp);
}

static const struct test_case *
case_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < N_CASES; i++)
		if (strcmp(cases[i].name, name) == 0)
			return &cases[i];
	fail_msg("no case %s", name);
	return NULL;
}

#define CASE_TEST(n)                                                          \
	static void test_case_##n(void **state)                               \
	{                                                                     \
		(void)state;                                                  \
		run_case(case_by_name(#n));                                   \
	}
CASES(CASE_TEST)

/* ---- flow identity ----------------------------------------------------- */

static void
parse_case(const char *name, struct pcr_pkt_info *info)
{
	struct pcr_pkt_info exp;
	struct frame f;

	build_case(case_by_name(name), &f, &exp);
	pcr_classify_parse_buf(f.b, f.len, info);
}

static void
assert_same_flow(const char *a, const char *b)
{
	struct pcr_pkt_info ia, ib;

	parse_case(a, &ia);
	parse_case(b, &ib);
	assert_memory_equal(&ia.key, &ib.key, sizeof(ia.key));
	assert_int_equal(pcr_flow_key_hash(&ia.key, 0),
			 pcr_flow_key_hash(&ib.key, 0));
	assert_int_equal(pcr_flow_key_hash(&ia.key, 0x12345678),
			 pcr_flow_key_hash(&ib.key, 0x12345678));
}

static void
assert_other_flow(const char *a, const char *b)
{
	struct pcr_pkt_info ia, ib;

	parse_case(a, &ia);
	parse_case(b, &ib);
	assert_memory_not_equal(&ia.key, &ib.key, sizeof(ia.key));
}

static void
test_flow_identity(void **state)
{
	(void)state;
	/* every fragment of a datagram in one flow */
	assert_same_flow("ipv4_frag_first", "ipv4_frag_later");
	assert_same_flow("ipv4_frag_first", "ipv4_frag_middle_options");
	assert_same_flow("ipv6_frag_first", "ipv6_frag_later");
	/* VLANs and MPLS are not part of the key */
	assert_same_flow("ipv4_udp", "vlan");
	assert_same_flow("ipv4_udp", "mpls2_ipv4");
	assert_same_flow("ipv6_udp", "qinq");
	/* every kind of failure is the one default flow */
	assert_same_flow("arp", "frame_0");
	assert_same_flow("arp", "ipv4_bad_ihl");
	assert_same_flow("arp", "ipv6_chain_truncated");
	assert_same_flow("arp", "vlan_5");
	assert_other_flow("ipv4_udp", "ipv4_tcp");
	assert_other_flow("ipv4_udp", "ipv4_frag_first");
	assert_other_flow("ipv6_udp", "ipv6_frag_first");
}

static void
test_hash(void **state)
{
	struct pcr_flow_key k, k2;

	(void)state;
	key4(&k, 17, 10000, 5201);
	/* the documented equivalence with rte_hash's crc hash function */
	assert_int_equal(pcr_flow_key_hash(&k, 7), rte_hash_crc(&k, 40, 7));
	/* every field matters */
	k2 = k;
	k2.src_port++;
	assert_int_not_equal(pcr_flow_key_hash(&k, 0),
			     pcr_flow_key_hash(&k2, 0));
	k2 = k;
	k2.dst_addr[3] ^= 1;
	assert_int_not_equal(pcr_flow_key_hash(&k, 0),
			     pcr_flow_key_hash(&k2, 0));
	k2 = k;
	k2.family = PCR_FLOW_FAMILY_IPV6;
	assert_int_not_equal(pcr_flow_key_hash(&k, 0),
			     pcr_flow_key_hash(&k2, 0));
	assert_false(pcr_flow_key_is_default(&k));
	memset(&k2, 0, sizeof(k2));
	assert_true(pcr_flow_key_is_default(&k2));
	k2.rsvd = 1;
	assert_false(pcr_flow_key_is_default(&k2));
	assert_int_equal(sizeof(struct pcr_flow_key) % 4, 0);
}

/* ---- formatting -------------------------------------------------------- */

static void
assert_format(const char *case_name, const char *want)
{
	struct pcr_pkt_info info;
	char buf[PCR_FLOW_KEY_STRLEN];
	int n;

	parse_case(case_name, &info);
	n = pcr_flow_key_format(&info.key, buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, (int)strlen(want));
}

static void
test_format(void **state)
{
	struct pcr_flow_key k;
	char buf[PCR_FLOW_KEY_STRLEN], small[8];
	int n;

	(void)state;
	assert_format("ipv4_udp", "udp 198.18.0.1:10000 > 198.19.0.1:5201");
	assert_format("ipv4_tcp", "tcp 198.18.0.1:43210 > 198.19.0.1:443");
	assert_format("ipv4_sctp", "sctp 198.18.0.1:36412 > 198.19.0.1:38412");
	assert_format("ipv4_icmp", "ipv4 proto 1 198.18.0.1 > 198.19.0.1");
	assert_format("ipv4_frag_later",
		      "ipv4 proto 17 198.18.0.1 > 198.19.0.1");
	assert_format("ipv6_udp", "udp [2001:db8::1]:40000 > [2001:db8::2]:53");
	assert_format("ipv6_icmp", "ipv6 proto 58 2001:db8::1 > 2001:db8::2");
	assert_format("ipv6_esp", "ipv6 proto 50 2001:db8::1 > 2001:db8::2");
	assert_format("arp", "non-ip");
	assert_format("frame_0", "non-ip");

	memset(&k, 0, sizeof(k));
	k.family = 7;
	n = pcr_flow_key_format(&k, buf, sizeof(buf));
	assert_string_equal(buf, "family 7?");
	assert_int_equal(n, 9);

	/* the longest key there is fits PCR_FLOW_KEY_STRLEN */
	memset(&k, 0xff, sizeof(k));
	k.family = PCR_FLOW_FAMILY_IPV6;
	k.proto = 132;
	n = pcr_flow_key_format(&k, buf, sizeof(buf));
	assert_true(n > 0 && n < PCR_FLOW_KEY_STRLEN);
	assert_string_equal(buf, "sctp [ffff:ffff:ffff:ffff:ffff:ffff:ffff:"
				 "ffff]:65535 > [ffff:ffff:ffff:ffff:ffff:"
				 "ffff:ffff:ffff]:65535");

	/* snprintf semantics: cut, NUL-terminated, full length returned */
	key4(&k, 17, 10000, 5201);
	memset(small, 'x', sizeof(small));
	n = pcr_flow_key_format(&k, small, sizeof(small));
	assert_int_equal(n, (int)strlen("udp 198.18.0.1:10000 > 198.19.0.1:5201"));
	assert_string_equal(small, "udp 198");
	assert_int_equal(pcr_flow_key_format(&k, NULL, 0), n);
}

static void
test_result_names(void **state)
{
	(void)state;
	assert_string_equal(pcr_classify_result_name(PCR_CLASSIFY_OK), "ok");
	assert_string_equal(pcr_classify_result_name(PCR_CLASSIFY_L3_ONLY),
			    "l3-only");
	assert_string_equal(pcr_classify_result_name(PCR_CLASSIFY_NON_IP),
			    "non-ip");
	assert_string_equal(pcr_classify_result_name(PCR_CLASSIFY_TRUNCATED),
			    "truncated");
	assert_string_equal(pcr_classify_result_name(PCR_CLASSIFY_BAD_HEADER),
			    "bad-header");
	assert_string_equal(pcr_classify_result_name(PCR_CLASSIFY_RESULT_MAX),
			    "unknown");
	assert_string_equal(
		pcr_classify_result_name((enum pcr_classify_result)-1),
		"unknown");
}

/* ---- mbufs -------------------------------------------------------------- */

/*
 * A chain holding @p f split at @p cut[0..n_cut-1] (non-decreasing), so
 * n_cut + 1 segments, some possibly empty. Every data room is filled with
 * garbage first: bytes beyond a segment's data_len must never be read.
 */
static struct rte_mbuf *
chain_new(const struct frame *f, const uint32_t *cut, unsigned int n_cut)
{
	struct rte_mbuf *head = NULL, *m;
	uint32_t from = 0, to;
	unsigned int i;
	char *p;

	for (i = 0; i <= n_cut; i++) {
		to = i < n_cut ? cut[i] : f->len;
		m = rte_pktmbuf_alloc(pool);
		assert_non_null(m);
		memset(m->buf_addr, GARBAGE, m->buf_len);
		p = rte_pktmbuf_append(m, (uint16_t)(to - from));
		assert_true(p != NULL || to == from);
		if (to > from)
			memcpy(p, f->b + from, to - from);
		if (head == NULL)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
		from = to;
	}
	assert_int_equal(rte_pktmbuf_pkt_len(head), f->len);
	return head;
}

static void
check_chain(const struct test_case *c, const struct frame *f,
	    const struct pcr_pkt_info *exp, const uint32_t *cut,
	    unsigned int n_cut)
{
	struct pcr_pkt_info got;
	struct rte_mbuf *m = chain_new(f, cut, n_cut);
	char what[128];
	int r;

	memset(&got, 0x5a, sizeof(got));
	r = pcr_classify_parse(m, &got);
	if (n_cut == 1)
		snprintf(what, sizeof(what), "%s split at %u", c->name, cut[0]);
	else
		snprintf(what, sizeof(what), "%s split at %u,%u", c->name,
			 cut[0], cut[1]);
	assert_int_equal(r, got.result);
	check_info(what, &got, exp);
	rte_pktmbuf_free(m);
}

static void
test_mbuf_single_segment(void **state)
{
	struct pcr_pkt_info exp, got;
	struct rte_mbuf *m;
	struct frame f;
	size_t i;

	(void)state;
	for (i = 0; i < N_CASES; i++) {
		build_case(&cases[i], &f, &exp);
		m = chain_new(&f, NULL, 0);
		assert_int_equal(m->nb_segs, 1);
		memset(&got, 0x5a, sizeof(got));
		assert_int_equal(pcr_classify_parse(m, &got), exp.result);
		check_info(cases[i].name, &got, &exp);
		rte_pktmbuf_free(m);
	}
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
test_mbuf_two_segments(void **state)
{
	struct pcr_pkt_info exp;
	struct frame f;
	uint32_t cut;
	size_t i;

	(void)state;
	for (i = 0; i < N_CASES; i++) {
		build_case(&cases[i], &f, &exp);
		for (cut = 0; cut <= f.len; cut++)
			check_chain(&cases[i], &f, &exp, &cut, 1);
	}
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
test_mbuf_three_segments(void **state)
{
	struct pcr_pkt_info exp;
	struct frame f;
	uint32_t cut[2], hdr_end;
	size_t i;

	(void)state;
	for (i = 0; i < N_CASES; i++) {
		build_case(&cases[i], &f, &exp);
		/* every pair of cuts within the first 136 bytes: all the
		 * headers of every case, and a few bytes more */
		hdr_end = RTE_MIN(f.len, 136u);
		for (cut[0] = 0; cut[0] <= hdr_end; cut[0]++)
			for (cut[1] = cut[0]; cut[1] <= hdr_end; cut[1]++)
				check_chain(&cases[i], &f, &exp, cut, 2);
	}
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void
test_mbuf_burst(void **state)
{
	struct rte_mbuf *pkts[N_CASES];
	struct pcr_pkt_info exp[N_CASES], got[N_CASES];
	struct frame f;
	uint32_t cut;
	size_t i;

	(void)state;
	for (i = 0; i < N_CASES; i++) {
		build_case(&cases[i], &f, &exp[i]);
		cut = f.len / 3;
		pkts[i] = chain_new(&f, &cut, i & 1); /* every other chained */
	}
	memset(got, 0x5a, sizeof(got));
	pcr_classify_parse_burst(pkts, N_CASES, got);
	for (i = 0; i < N_CASES; i++) {
		check_info(cases[i].name, &got[i], &exp[i]);
		rte_pktmbuf_free(pkts[i]);
	}
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* ---- robustness ------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t
rng(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static uint32_t
rng_below(uint32_t n)
{
	return (uint32_t)(rng() % n);
}

static const uint8_t interesting[] = {
	0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x08, 0x0f, 0x11, 0x20, 0x2b,
	0x2c, 0x32, 0x33, 0x3a, 0x3b, 0x3c, 0x40, 0x44, 0x45, 0x46, 0x4f,
	0x60, 0x6f, 0x81, 0x84, 0x86, 0x88, 0x91, 0xa8, 0xdd, 0x47, 0x48,
	0xfe, 0xff,
};

static const uint16_t etypes[] = {
	0x0800, 0x86dd, 0x8100, 0x88a8, 0x9100, 0x8847, 0x8848, 0x0806,
};

static void
mutate(struct frame *f)
{
	unsigned int n = 1 + rng_below(4), i;
	uint32_t pos;

	for (i = 0; i < n; i++) {
		switch (rng_below(6)) {
		case 0: /* random byte */
			if (f->len > 0)
				f->b[rng_below(f->len)] = (uint8_t)rng();
			break;
		case 1: /* interesting byte, biased to the headers */
			if (f->len > 0) {
				pos = rng_below(RTE_MIN(f->len, 96u));
				f->b[pos] = interesting[rng_below(
					sizeof(interesting))];
			}
			break;
		case 2: /* cut */
			f->len = rng_below(f->len + 1);
			break;
		case 3: /* random 16-bit field */
			if (f->len > 1) {
				pos = rng_below(f->len - 1);
				set16(f, pos, (uint16_t)rng());
			}
			break;
		case 4: /* an EtherType/TPID at an even offset */
			if (f->len > 13) {
				pos = 12 + 2 * rng_below((f->len - 12) / 2);
				if (pos + 1 < f->len)
					set16(f, pos, etypes[rng_below(
						RTE_DIM(etypes))]);
			}
			break;
		default: /* grow with random bytes */
			while (f->len < FRAME_MAX && rng_below(8) != 0)
				f->b[f->len++] = (uint8_t)rng();
			break;
		}
	}
}

static void
random_frame(struct frame *f)
{
	uint32_t i;

	f->len = rng_below(FRAME_MAX + 1);
	for (i = 0; i < f->len; i++)
		f->b[i] = (uint8_t)rng();
	if (f->len >= 14)
		set16(f, 12, etypes[rng_below(RTE_DIM(etypes))]);
	if (f->len >= 15 && rng_below(2))
		f->b[14] = (uint8_t)(rng_below(2) ? 0x45 : 0x60);
}

static void
check_invariants(const struct frame *f, const struct pcr_pkt_info *info,
		 int r)
{
	static const uint8_t zero12[12];
	char buf[PCR_FLOW_KEY_STRLEN], small[16];
	size_t cut;
	int n;

	assert_int_equal(r, info->result);
	assert_true(r >= 0 && r < PCR_CLASSIFY_RESULT_MAX);
	assert_true(info->vlan_depth <= PCR_CLASSIFY_MAX_VLAN);
	assert_true(info->mpls_depth <= PCR_CLASSIFY_MAX_MPLS);
	assert_true(info->l2_len <= f->len);
	assert_int_equal(info->rsvd, 0);
	assert_int_equal(info->key.rsvd, 0);
	assert_true(info->l2_len ==
		    14u + 4u * info->vlan_depth + 4u * info->mpls_depth ||
		    (info->l2_len == 0 && r == PCR_CLASSIFY_TRUNCATED));
	switch (r) {
	case PCR_CLASSIFY_OK:
		assert_true(info->key.proto == 6 || info->key.proto == 17 ||
			    info->key.proto == 132);
		assert_false(info->is_fragment);
		assert_true((uint32_t)info->l4_offset + 4 <= f->len);
		/* fall through */
	case PCR_CLASSIFY_L3_ONLY:
		assert_true(info->key.family == 4 || info->key.family == 6);
		assert_int_equal(info->l4_offset,
				 info->l2_len + info->l3_len);
		assert_true(info->l4_offset <= f->len);
		assert_true(info->l3_len >=
			    (info->key.family == 4 ? 20u : 40u));
		if (info->key.family == 4) {
			assert_memory_equal(info->key.src_addr + 4, zero12, 12);
			assert_memory_equal(info->key.dst_addr + 4, zero12, 12);
			assert_true(info->l3_len <= 60);
		}
		if (r == PCR_CLASSIFY_L3_ONLY) {
			assert_int_equal(info->key.src_port, 0);
			assert_int_equal(info->key.dst_port, 0);
		}
		break;
	default:
		assert_true(pcr_flow_key_is_default(&info->key));
		assert_int_equal(info->l3_len, 0);
		assert_int_equal(info->l4_offset, 0);
		assert_int_equal(info->dscp, 0);
		assert_false(info->is_fragment);
		break;
	}
	n = pcr_flow_key_format(&info->key, buf, sizeof(buf));
	assert_true(n > 0 && n < (int)sizeof(buf));
	assert_int_equal(strlen(buf), (size_t)n);
	cut = 1 + rng_below(sizeof(small));
	assert_int_equal(pcr_flow_key_format(&info->key, small, cut), n);
	assert_int_equal(strlen(small), RTE_MIN((size_t)n, cut - 1));
}

static void
test_robustness(void **state)
{
	unsigned int count[PCR_CLASSIFY_RESULT_MAX] = {0};
	struct pcr_pkt_info info, again, seg;
	struct pcr_pkt_info exp;
	struct rte_mbuf *m;
	struct frame f;
	uint32_t cut[2];
	unsigned int i, n_cut;
	int r;

	(void)state;
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < RAND_ITERS; i++) {
		if (rng_below(8) == 0) {
			random_frame(&f);
		} else {
			build_case(&cases[rng_below(N_CASES)], &f, &exp);
			mutate(&f);
		}
		r = parse_exact(f.b, f.len, &info);
		check_invariants(&f, &info, r);
		count[r]++;

		pcr_classify_parse_buf(f.b, f.len, &again);
		assert_memory_equal(&info, &again, sizeof(info));

		/* 1 in 16 also as a random chain of 2 or 3 segments */
		if ((i & 15) == 0) {
			n_cut = 1 + rng_below(2);
			cut[0] = rng_below(f.len + 1);
			cut[1] = cut[0] + rng_below(f.len - cut[0] + 1);
			m = chain_new(&f, cut, n_cut);
			pcr_classify_parse(m, &seg);
			assert_memory_equal(&info, &seg, sizeof(info));
			rte_pktmbuf_free(m);
		}
	}
	print_message("robustness: %u frames: ok %u, l3-only %u, non-ip %u, "
		      "truncated %u, bad-header %u\n",
		      RAND_ITERS, count[PCR_CLASSIFY_OK],
		      count[PCR_CLASSIFY_L3_ONLY], count[PCR_CLASSIFY_NON_IP],
		      count[PCR_CLASSIFY_TRUNCATED],
		      count[PCR_CLASSIFY_BAD_HEADER]);
	/* the generator reaches every outcome, in earnest */
	for (i = 0; i < PCR_CLASSIFY_RESULT_MAX; i++)
		assert_true(count[i] >= RAND_ITERS / 100);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* NULL frame with a length: nothing to read, TRUNCATED */
static void
test_null_frame(void **state)
{
	struct pcr_pkt_info info;

	(void)state;
	assert_int_equal(pcr_classify_parse_buf(NULL, 100, &info),
			 PCR_CLASSIFY_TRUNCATED);
	assert_true(pcr_flow_key_is_default(&info.key));
	assert_int_equal(info.l2_len, 0);
}

#define CASE_UNIT_TEST(n) cmocka_unit_test(test_case_##n),

int
main(void)
{
	const struct CMUnitTest tests[] = {
		CASES(CASE_UNIT_TEST)
		cmocka_unit_test(test_null_frame),
		cmocka_unit_test(test_flow_identity),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_result_names),
		cmocka_unit_test(test_mbuf_single_segment),
		cmocka_unit_test(test_mbuf_two_segments),
		cmocka_unit_test(test_mbuf_three_segments),
		cmocka_unit_test(test_mbuf_burst),
		cmocka_unit_test(test_robustness),
	};
	int ret;

	pcr_test_eal_init("classify", "0", 256);
	pool = rte_pktmbuf_pool_create("classify", POOL_N, 0, 0, SEG_ROOM,
				       SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "classify: mbuf pool: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	ret = cmocka_run_group_tests(tests, NULL, NULL);
	rte_mempool_free(pool);
	pcr_test_eal_cleanup();
	return ret;
}
