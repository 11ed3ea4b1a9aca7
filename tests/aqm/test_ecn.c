/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Unit tests of lib/aqm's CE marking (pcr_ecn.h), on frames of every
 * encapsulation the classifier parses (plain, 802.1Q, QinQ, MPLS with 1-3
 * labels; IPv4 with and without options, IPv6), the L3 header found by
 * pcr_classify_parse_buf() as pacer finds it:
 *  - ECT(0) and ECT(1) become CE; the DSCP and every other byte stay; an
 *    IPv4 header's checksum afterwards is the one a reader computes from
 *    scratch (and the header sums to 0xffff), over 200,000 random headers,
 *    every TOS and the checksum's edge values included;
 *  - CE stays CE (reported as marked before); Not-ECT is left alone, every
 *    byte, and reported not capable (the caller drops it).
 */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pcr_classify.h"
#include "pcr_ecn.h"

/* The IPv4 header checksum of @p h (@p len bytes), computed from scratch
 * with its checksum field as 0. */
static uint16_t
ip_csum(const uint8_t *h, unsigned int len)
{
	uint32_t s = 0;
	unsigned int i;

	for (i = 0; i < len; i += 2)
		if (i != 10)
			s += ((uint32_t)h[i] << 8) | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The whole header summed, checksum included: 0xffff when it is right. */
static uint16_t
ip_sum_all(const uint8_t *h, unsigned int len)
{
	uint32_t s = 0;
	unsigned int i;

	for (i = 0; i < len; i += 2)
		s += ((uint32_t)h[i] << 8) | h[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

enum encap { PLAIN, VLAN, QINQ, MPLS1, MPLS3, N_ENCAP };

/* A frame: Ethernet, @p e, then an IPv4 (@p ihl words) or IPv6 header with
 * traffic class @p tos, UDP. @return its length; l3 offset in *@p l3. */
static unsigned int
frame(uint8_t *f, enum encap e, bool v6, unsigned int ihl, uint8_t tos,
      unsigned int *l3)
{
	unsigned int o = 12, i, nl = e == MPLS1 ? 1 : 3;

	memset(f, 0, 256);
	for (i = 0; i < 12; i++)
		f[i] = (uint8_t)(0x10 + i);
	if (e == QINQ) {
		f[o++] = 0x88; f[o++] = 0xa8; f[o++] = 0x00; f[o++] = 0x64;
	}
	if (e == VLAN || e == QINQ) {
		f[o++] = 0x81; f[o++] = 0x00; f[o++] = 0x20; f[o++] = 0x0a;
	}
	if (e == MPLS1 || e == MPLS3) {
		f[o++] = 0x88; f[o++] = 0x47;
		for (i = 0; i < nl; i++) {
			f[o++] = 0x00; f[o++] = 0x01;
			f[o++] = (uint8_t)(0x20 | (i + 1 == nl ? 1 : 0));
			f[o++] = 0x40;
		}
	} else {
		f[o++] = v6 ? 0x86 : 0x08;
		f[o++] = v6 ? 0xdd : 0x00;
	}
	*l3 = o;
	if (v6) {
		f[o] = (uint8_t)(0x60 | (tos >> 4));
		f[o + 1] = (uint8_t)((tos << 4) | 0x0a);
		f[o + 2] = 0xbc; f[o + 3] = 0xde;
		f[o + 5] = 16; f[o + 6] = 17; f[o + 7] = 64;
		for (i = 8; i < 40; i++)
			f[o + i] = (uint8_t)random();
		o += 40;
	} else {
		unsigned int len = ihl * 4;
		uint16_t c;

		for (i = 0; i < len; i++)
			f[o + i] = (uint8_t)random();
		f[o] = (uint8_t)(0x40 | ihl);
		f[o + 1] = tos;
		f[o + 2] = 0; f[o + 3] = (uint8_t)(len + 16);
		f[o + 6] = 0; f[o + 7] = 0; /* not a fragment */
		f[o + 9] = 17;
		c = ip_csum(f + o, len);
		f[o + 10] = (uint8_t)(c >> 8);
		f[o + 11] = (uint8_t)c;
		o += len;
	}
	f[o] = 0x27; f[o + 1] = 0x10; f[o + 2] = 0x14; f[o + 3] = 0x51;
	f[o + 5] = 16;
	return o + 16;
}

static void
one(enum encap e, bool v6, unsigned int ihl, uint8_t tos)
{
	uint8_t f[256], before[256];
	struct pcr_pkt_info info;
	unsigned int l3, len, ecn = tos & PCR_ECN_MASK, i;
	enum pcr_ecn_result r;

	len = frame(f, e, v6, ihl, tos, &l3);
	memcpy(before, f, sizeof(f));
	assert_int_equal(pcr_classify_parse_buf(f, len, &info), PCR_CLASSIFY_OK);
	assert_int_equal(info.l2_len, l3);
	assert_int_equal(pcr_ecn_get(f + info.l2_len, v6), ecn);
	r = pcr_ecn_set_ce(f + info.l2_len, info.key.family == PCR_FLOW_FAMILY_IPV6);
	if (ecn == PCR_ECN_NOT_ECT || ecn == PCR_ECN_CE) {
		assert_int_equal(r, ecn == PCR_ECN_CE ? PCR_ECN_WAS_CE : PCR_ECN_NOT_CAPABLE);
		assert_memory_equal(f, before, sizeof(f));
		return;
	}
	assert_int_equal(r, PCR_ECN_MARKED);
	assert_int_equal(pcr_ecn_get(f + l3, v6), PCR_ECN_CE);
	/* the DSCP as it was */
	if (v6)
		assert_int_equal(((f[l3] & 0x0f) << 2) | (f[l3 + 1] >> 6), tos >> 2);
	else
		assert_int_equal(f[l3 + 1] >> 2, tos >> 2);
	/* nothing else touched: the TOS/TC byte(s) and the checksum only */
	for (i = 0; i < sizeof(f); i++) {
		bool may = v6 ? i == l3 + 1 :
			   i == l3 + 1 || i == l3 + 10 || i == l3 + 11;

		if (!may)
			assert_int_equal(f[i], before[i]);
	}
	if (!v6) {
		uint16_t c = (uint16_t)((f[l3 + 10] << 8) | f[l3 + 11]);

		assert_int_equal(c, ip_csum(f + l3, ihl * 4));
		assert_int_equal(ip_sum_all(f + l3, ihl * 4), 0xffff);
	}
	/* and it parses as before, to the same flow */
	{
		struct pcr_pkt_info again;

		assert_int_equal(pcr_classify_parse_buf(f, len, &again), PCR_CLASSIFY_OK);
		assert_memory_equal(&again.key, &info.key, sizeof(info.key));
	}
}

static void
test_encaps(void **state)
{
	unsigned int e, tos, ihl;

	(void)state;
	srandom(1);
	for (e = 0; e < N_ENCAP; e++)
		for (tos = 0; tos < 256; tos++) {
			one((enum encap)e, true, 5, (uint8_t)tos);
			for (ihl = 5; ihl <= 15; ihl += 5)
				one((enum encap)e, false, ihl, (uint8_t)tos);
		}
}

/* random headers: the incremental checksum always the recomputed one */
static void
test_checksums(void **state)
{
	unsigned int i;

	(void)state;
	srandom(2);
	for (i = 0; i < 200000; i++)
		one((enum encap)(random() % N_ENCAP), false, 5 + random() % 11,
		    (uint8_t)((random() & 0xfc) | (1 + random() % 2)));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encaps),
		cmocka_unit_test(test_checksums),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
