/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Unit tests of lib/leafmap: ShapedDevices.csv files written to a scratch
 * directory, loaded by lib/isp and mapped.
 *  - a small ISP: IPv4 /32s, a /32 inside another circuit's /24 (the
 *    longest wins), an IPv6 /56 inside a /48 and a /128 inside that /56,
 *    misses: exact leaves, with a base offset, single and bulk lookups;
 *  - /0 prefixes (default routes) under longer ones;
 *  - one family only: the other has no FIB and misses everything;
 *  - 20,000 random circuits (IPv4 /16-/32 packed into a /12, IPv6
 *    /32-/128 packed into 2001:db8::/32, so prefixes nest at every
 *    length): 20,000 addresses a family, random and inside prefixes,
 *    against a brute-force longest match over every prefix;
 *  - errors: a live name, a long name, a base whose leaf ids pass the
 *    next hop, a twice-given prefix (an ISP built by hand): the message
 *    whole, nothing of DPDK's heap kept, the name free again after.
 * With an argument (pacer-ispgen), instead: pacer-ispgen's 100,000
 * subscribers mapped, the create time and memory printed, every prefix's
 * first and last address checked.
 */

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cmocka.h>

#include <rte_malloc.h>

#include "pcr_isp.h"
#include "pcr_leafmap.h"
#include "pcr_test_eal.h"

static char dir[64];
static char csv_path[128];
static char err[1024];
static const char *ispgen; /* argv[1]: the 100K run */

#define HDR                                                                    \
	"Circuit ID,Circuit Name,Device ID,Device Name,Parent Node,MAC,IPv4,"  \
	"IPv6,Download Min Mbps,Upload Min Mbps,Download Max Mbps,Upload Max " \
	"Mbps,Comment\n"

#define MIB (1024.0 * 1024.0)

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
}

static int
setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "%s/pcr-leafmap-test.XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(csv_path, sizeof(csv_path), "%s/ShapedDevices.csv", dir);
	return 0;
}

static int
teardown(void **state)
{
	char path[160];

	(void)state;
	unlink(csv_path);
	snprintf(path, sizeof(path), "%s/network.json", dir);
	unlink(path);
	return rmdir(dir);
}

/* an ISP of @p csv (ShapedDevices.csv, no network) */
static struct pcr_isp *
load(const char *csv)
{
	struct pcr_isp *isp = pcr_isp_new();

	assert_non_null(isp);
	put(csv_path, csv);
	if (pcr_isp_load_subscribers(isp, csv_path, err, sizeof(err)) != 0)
		fail_msg("load: %s", err);
	return isp;
}

static uint32_t
v4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return ntohl(a.s_addr);
}

static const uint8_t *
v6(const char *s)
{
	static uint8_t a[8][16];
	static unsigned int n;
	uint8_t *p = a[n++ % 8];

	assert_int_equal(inet_pton(AF_INET6, s, p), 1);
	return p;
}

/* the bytes DPDK's heaps hold */
static size_t
heap(void)
{
	struct rte_malloc_socket_stats st;

	assert_int_equal(rte_malloc_get_socket_stats(0, &st), 0);
	return st.heap_allocsz_bytes;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct pcr_leafmap *
create(const char *name, const struct pcr_isp *isp, uint32_t base)
{
	struct pcr_leafmap *m = NULL;

	if (pcr_leafmap_create(&m, name, isp, base, SOCKET_ID_ANY, err,
			       sizeof(err)) != 0)
		fail_msg("create %s: %s", name, err);
	assert_non_null(m);
	return m;
}

/* every address of @p a4 (and @p a6) gives the same leaf from the bulk
 * lookups as from the single ones */
static void
check_bulk(const struct pcr_leafmap *m, const uint32_t *a4, unsigned int n4,
	   const uint8_t (*a6)[16], unsigned int n6)
{
	uint32_t *l = malloc((RTE_MAX(n4, n6) + 1) * sizeof(*l));
	unsigned int i;

	assert_non_null(l);
	pcr_leafmap_lookup4_bulk(m, a4, l, n4);
	for (i = 0; i < n4; i++)
		assert_int_equal(l[i], pcr_leafmap_lookup4(m, a4[i]));
	pcr_leafmap_lookup6_bulk(m, a6, l, n6);
	for (i = 0; i < n6; i++)
		assert_int_equal(l[i], pcr_leafmap_lookup6(m, a6[i]));
	free(l);
}

/* ---- a small ISP ---- */

/*
 * c1 (0): 198.51.100.0/24 and 2001:db8:1::/48;
 * c2 (1): 198.51.100.7 inside c1's /24, 2001:db8:1:2200::/56 inside c1's
 *         /48, on two devices (rows 1 and 3);
 * c3 (2): 203.0.113.9 and the /128 2001:db8:9::1;
 * c4 (3): 10.0.0.0/8 and 2001:db8:1:2200::77, inside c2's /56.
 */
static const char small_csv[] =
	HDR "c1,,d1,,,,198.51.100.0/24,2001:db8:1::/48,0,0,100,20,\n"
	    "c2,,d2,,,,198.51.100.7,,0,0,100,20,\n"
	    "c3,,d3,,,,203.0.113.9,2001:db8:9::1,0,0,100,20,\n"
	    "c2,,d4,,,,,2001:db8:1:2200::/56,0,0,100,20,\n"
	    "c4,,d5,,,,10.0.0.0/8,2001:db8:1:2200::77,0,0,100,20,\n";

static void
check_small(const struct pcr_leafmap *m, uint32_t b)
{
	const uint32_t N = PCR_LEAF_NONE;

	/* IPv4: the /32 inside c1's /24 is c2's, the rest of it c1's */
	assert_int_equal(pcr_leafmap_lookup4(m, v4("198.51.100.7")), b + 1);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("198.51.100.6")), b + 0);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("198.51.100.8")), b + 0);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("198.51.100.0")), b + 0);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("198.51.100.255")), b + 0);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("198.51.101.0")), N);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("198.51.99.255")), N);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("203.0.113.9")), b + 2);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("203.0.113.8")), N);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("203.0.113.10")), N);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("10.0.0.0")), b + 3);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("10.255.255.255")), b + 3);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("11.0.0.0")), N);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("0.0.0.0")), N);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("255.255.255.255")), N);

	/* IPv6: /48 (c1) > /56 (c2) > /128 (c4) */
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:1::")), b + 0);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:1:21ff:ffff:ffff:"
						   "ffff:ffff")),
			 b + 0);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:1:2200::")),
			 b + 1);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:1:22ff:ffff:ffff:"
						   "ffff:ffff")),
			 b + 1);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:1:2300::")),
			 b + 0);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:1:2200::77")),
			 b + 3);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:1:2200::76")),
			 b + 1);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:1:2200::78")),
			 b + 1);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:1:ffff:ffff:ffff:"
						   "ffff:ffff")),
			 b + 0);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:2::")), N);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:0:ffff::")), N);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:9::1")), b + 2);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:9::")), N);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:9::2")), N);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("::")), N);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("ffff:ffff:ffff:ffff:ffff:"
						   "ffff:ffff:ffff")),
			 N);
}

static void
test_small(void **state)
{
	struct pcr_isp *isp = load(small_csv);
	struct pcr_leafmap_info info;
	struct pcr_leafmap *m;
	uint32_t a4[200];
	uint8_t a6[300][16];
	unsigned int i;

	(void)state;
	assert_int_equal(isp->n_circuits, 4);
	assert_string_equal(isp->circuits[1].id, "c2");
	m = create("small", isp, 0);
	check_small(m, 0);
	pcr_leafmap_info(m, &info);
	assert_int_equal(info.routes4, 4);
	assert_int_equal(info.tbl8_4, 2); /* 198.51.100/24, 203.0.113/24 */
	assert_int_equal(info.routes6, 4);
	/* /41 for the /48, /49 for the /56, /121 for the /128s
	 * (2001:db8:1:2200::/121 and 2001:db8:9::/121) */
	assert_int_equal(info.covers6, 4);
	/* the /40 block of the /41: 3 groups, the /48 of the /49: 4, the
	 * /120s of the /121s: 13 each; one for an insert, rounded to 64 */
	assert_int_equal(info.tbl8_6, 64);
	/* two 64 MiB tables and their groups */
	assert_true(pcr_leafmap_memsize(m) >= (size_t)128 << 20);
	assert_true(pcr_leafmap_memsize(m) < (size_t)136 << 20);
	assert_int_equal(pcr_leafmap_memsize(m), info.memsize);
	print_message("small: %zu bytes (%.2f MiB)\n", pcr_leafmap_memsize(m),
		      (double)pcr_leafmap_memsize(m) / MIB);

	/* bulk: every address around the /24 and the /56's edges, more
	 * than one chunk */
	for (i = 0; i < 200; i++)
		a4[i] = v4("198.51.99.200") + i;
	for (i = 0; i < 300; i++) {
		memcpy(a6[i], v6("2001:db8:1:2200::"), 16);
		a6[i][15] = (uint8_t)i;
		if (i >= 256)
			a6[i][6] = 0x23;
		if (i % 3 == 0)
			a6[i][7] = 0xff;
	}
	check_bulk(m, a4, 200, (const uint8_t(*)[16])a6, 300);
	assert_int_equal(pcr_leafmap_lookup6(m, a6[0x77]), 3);
	pcr_leafmap_free(m);

	/* a base offset: every leaf moves by it */
	m = create("small-base", isp, 1000000);
	check_small(m, 1000000);
	pcr_leafmap_free(m);
	/* the largest base: the last circuit's leaf just under the next
	 * hop's "none" */
	m = create("small-top", isp, PCR_LEAFMAP_NH_NONE - 4);
	check_small(m, PCR_LEAFMAP_NH_NONE - 4);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("10.1.2.3")),
			 PCR_LEAFMAP_NH_NONE - 1);
	pcr_leafmap_free(m);
	pcr_isp_free(isp);
}

/* /0s under longer prefixes: every address is someone's */
static void
test_default(void **state)
{
	struct pcr_isp *isp =
		load(HDR "all,,d1,,,,0.0.0.0/0,::/0,0,0,100,20,\n"
			 "one,,d2,,,,192.0.2.1,2001:db8::1,0,0,100,20,\n"
			 "net,,d3,,,,192.0.2.0/25,2001:db8::/64,0,0,100,20,\n");
	struct pcr_leafmap *m = create("default", isp, 5);
	uint32_t x = 0x9e3779b9;
	unsigned int i;

	(void)state;
	assert_int_equal(pcr_leafmap_lookup4(m, v4("0.0.0.0")), 5);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("255.255.255.255")), 5);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("192.0.2.1")), 6);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("192.0.2.2")), 7);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("192.0.2.128")), 5);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("::")), 5);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8::1")), 6);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8::2")), 7);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:0:1::")), 5);
	/* covers carry what is around them: the /121 of 2001:db8::1 the
	 * /64's leaf, the /57 of the /64 the /0's */
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8::7f")), 7);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8::80")), 7);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:0:0:8000::")), 7);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:0:7f::")), 5);
	for (i = 0; i < 1000; i++) {
		x = x * 1103515245 + 12345;
		if (x >> 8 != v4("192.0.2.0") >> 8)
			assert_int_equal(pcr_leafmap_lookup4(m, x), 5);
	}
	pcr_leafmap_free(m);
	pcr_isp_free(isp);
}

/* one family only: no FIB (and no 64 MiB) for the other */
static void
test_one_family(void **state)
{
	struct pcr_isp *isp = load(HDR "a,,d1,,,,192.0.2.1,,0,0,100,20,\n");
	struct pcr_leafmap *m = create("v4only", isp, 0);
	struct pcr_leafmap_info info;
	uint32_t l[2], a4[2] = {v4("192.0.2.1"), v4("192.0.2.2")};
	uint8_t a6[2][16] = {{0}};

	(void)state;
	assert_int_equal(pcr_leafmap_lookup4(m, v4("192.0.2.1")), 0);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("::")), PCR_LEAF_NONE);
	pcr_leafmap_lookup6_bulk(m, (const uint8_t(*)[16])a6, l, 2);
	assert_int_equal(l[0], PCR_LEAF_NONE);
	assert_int_equal(l[1], PCR_LEAF_NONE);
	pcr_leafmap_info(m, &info);
	assert_int_equal(info.routes6, 0);
	assert_int_equal(info.tbl8_6, 0);
	assert_true(pcr_leafmap_memsize(m) < (size_t)66 << 20);
	pcr_leafmap_free(m);
	pcr_isp_free(isp);

	isp = load(HDR "a,,d1,,,,,2001:db8::/32,0,0,100,20,\n");
	m = create("v6only", isp, 0);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("2001:db8:ff::")), 0);
	assert_int_equal(pcr_leafmap_lookup4(m, v4("192.0.2.1")),
			 PCR_LEAF_NONE);
	pcr_leafmap_lookup4_bulk(m, a4, l, 2);
	assert_int_equal(l[0], PCR_LEAF_NONE);
	assert_int_equal(l[1], PCR_LEAF_NONE);
	assert_true(pcr_leafmap_memsize(m) < (size_t)66 << 20);
	pcr_leafmap_free(m);
	pcr_isp_free(isp);

	/* no prefixes at all: an empty map */
	isp = pcr_isp_new();
	m = create("empty", isp, 0);
	assert_int_equal(pcr_leafmap_lookup4(m, 0), PCR_LEAF_NONE);
	assert_int_equal(pcr_leafmap_lookup6(m, v6("::")), PCR_LEAF_NONE);
	assert_true(pcr_leafmap_memsize(m) < 4096);
	pcr_leafmap_free(m);
	pcr_isp_free(isp);
}

/* ---- errors ---- */

static void
expect_err(int rc, struct pcr_leafmap *m, const char *msg)
{
	assert_null(m);
	assert_true(rc < 0);
	assert_string_equal(err, msg);
}

static void
test_errors(void **state)
{
	struct pcr_isp *isp = load(small_csv);
	struct pcr_isp *isp6 =
		load(HDR "x,,d1,,,,,2001:db8::/32,0,0,100,20,\n");
	struct pcr_leafmap *m, *m2 = NULL, *m3 = NULL;
	struct pcr_isp_prefix pf[3];
	struct pcr_isp_circuit ci[2];
	struct pcr_isp fake;
	size_t h0;
	int rc;

	(void)state;
	/* a live name: the second map fails and keeps nothing */
	m = create("twice", isp, 0);
	h0 = heap();
	rc = pcr_leafmap_create(&m2, "twice", isp, 0, SOCKET_ID_ANY, err,
				sizeof(err));
	assert_int_equal(rc, -EEXIST);
	expect_err(rc, m2,
		   "leafmap: rte_fib_create 'twice_4' (4 routes, 2 "
		   "tbl8 groups): File exists (a map of that name is live)");
	assert_int_equal(heap(), h0);
	pcr_leafmap_free(m);
	/* free again once the first is gone */
	m = create("twice", isp, 0);
	pcr_leafmap_free(m);

	/* the IPv6 FIB's name is taken, the IPv4 one was built: freed */
	m = create("half", isp6, 0);
	h0 = heap();
	rc = pcr_leafmap_create(&m2, "half", isp, 0, SOCKET_ID_ANY, err,
				sizeof(err));
	assert_int_equal(rc, -EEXIST);
	expect_err(rc, m2,
		   "leafmap: rte_fib6_create 'half_6' (8 routes, 64 "
		   "tbl8 groups): File exists (a map of that name is live)");
	assert_int_equal(heap(), h0);
	pcr_leafmap_free(m);
	m = create("half", isp, 0);
	pcr_leafmap_free(m);

	/* names: the longest DPDK's mempool names take, one more, none */
	m = create("n2345678901234567890", isp, 0);
	pcr_leafmap_free(m);
	rc = pcr_leafmap_create(&m2, "n23456789012345678901", isp, 0,
				SOCKET_ID_ANY, err, sizeof(err));
	assert_int_equal(rc, -EINVAL);
	expect_err(rc, m2,
		   "leafmap: name 'n23456789012345678901': not 1 to "
		   "20 characters (DPDK's FIB names)");
	rc = pcr_leafmap_create(&m2, "", isp, 0, SOCKET_ID_ANY, err,
				sizeof(err));
	assert_int_equal(rc, -EINVAL);

	/* a base past the next hop: 4 circuits from 2^31 - 4 reach it */
	rc = pcr_leafmap_create(&m2, "base", isp, PCR_LEAFMAP_NH_NONE - 3,
				SOCKET_ID_ANY, err, sizeof(err));
	assert_int_equal(rc, -EINVAL);
	expect_err(rc, m2,
		   "leafmap: base 2147483644 + 4 circuits: leaf ids "
		   "past 2147483646, the largest a 4-byte next hop holds");

	/* an ISP built by hand: the same /56 twice (host bits aside), a
	 * bad length; the message names both circuits */
	memset(&fake, 0, sizeof(fake));
	memset(pf, 0, sizeof(pf));
	memset(ci, 0, sizeof(ci));
	ci[0].id = "first";
	ci[1].id = "second";
	memcpy(pf[0].addr, v6("2001:db8:0:100::"), 16);
	pf[0].family = AF_INET6;
	pf[0].len = 56;
	pf[1].addr[0] = 192;
	pf[1].addr[2] = 2;
	pf[1].addr[3] = 1;
	pf[1].family = AF_INET;
	pf[1].len = 32;
	memcpy(pf[2].addr, v6("2001:db8:0:1ff::"), 16);
	pf[2].family = AF_INET6;
	pf[2].len = 56;
	pf[2].circuit = 1;
	fake.circuits = ci;
	fake.n_circuits = 2;
	fake.prefixes = pf;
	fake.n_prefixes = 3;
	h0 = heap();
	rc = pcr_leafmap_create(&m3, "fake", &fake, 0, SOCKET_ID_ANY, err,
				sizeof(err));
	assert_int_equal(rc, -EINVAL);
	expect_err(rc, m3,
		   "leafmap: prefix 2001:db8:0:1ff::/56 (circuit "
		   "'second'): the prefix of 2001:db8:0:100::/56 (circuit "
		   "'first') too");
	/* the IPv4 FIB built before it freed */
	assert_int_equal(heap(), h0);
	pf[2].len = 129;
	rc = pcr_leafmap_create(&m3, "fake", &fake, 0, SOCKET_ID_ANY, err,
				sizeof(err));
	expect_err(rc, m3,
		   "leafmap: prefix 2001:db8:0:1ff::/129 (circuit "
		   "'second'): length past the address");
	pf[2].len = 56;
	pf[2].circuit = 2;
	rc = pcr_leafmap_create(&m3, "fake", &fake, 0, SOCKET_ID_ANY, err,
				sizeof(err));
	expect_err(rc, m3,
		   "leafmap: prefix 2001:db8:0:1ff::/56 (circuit 2): "
		   "circuit index past the ISP's circuits");
	/* a /57 with host bits: the upper half of the first /56 */
	pf[2].circuit = 1;
	pf[2].len = 57;
	m3 = create("fake", &fake, 0);
	assert_int_equal(pcr_leafmap_lookup6(m3, v6("2001:db8:0:100::1")), 0);
	assert_int_equal(pcr_leafmap_lookup6(m3, v6("2001:db8:0:17f::1")), 0);
	assert_int_equal(pcr_leafmap_lookup6(m3, v6("2001:db8:0:180::1")), 1);
	assert_int_equal(pcr_leafmap_lookup4(m3, v4("192.0.2.1")), 0);
	pcr_leafmap_free(m3);
	pcr_leafmap_free(NULL);
	pcr_isp_free(isp6);
	pcr_isp_free(isp);
}

/* ---- random prefixes against a brute-force longest match ---- */

#define R_CIRCUITS 20000
#define R_ADDRS	   20000

struct ref4 {
	uint32_t net, mask, leaf;
	uint8_t len;
};

struct ref6 {
	uint64_t hi, lo, mhi, mlo;
	uint32_t leaf;
	uint8_t len;
};

static uint64_t rng = 0x853c49e6748fea9bULL;

static uint64_t
rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t
mask64(int bits)
{
	if (bits <= 0)
		return 0;
	if (bits >= 64)
		return UINT64_MAX;
	return UINT64_MAX << (64 - bits);
}

/* a set of prefixes seen: (address hash, length) in open addressing */
#define SEEN_SLOTS (1u << 17)
static uint64_t seen[SEEN_SLOTS];

static bool
seen_add(uint64_t hi, uint64_t lo, uint8_t len)
{
	uint64_t k = (hi * 0x9e3779b97f4a7c15ULL) ^
		     (lo * 0xc2b2ae3d27d4eb4fULL) ^ len;
	uint32_t i;

	k |= 1; /* 0: an empty slot */
	for (i = (uint32_t)(k >> 40) & (SEEN_SLOTS - 1);;
	     i = (i + 1) & (SEEN_SLOTS - 1)) {
		if (seen[i] == k)
			return false;
		if (seen[i] == 0) {
			seen[i] = k;
			return true;
		}
	}
}

static void
v6_put(uint8_t a[16], uint64_t hi, uint64_t lo)
{
	int i;

	for (i = 0; i < 8; i++) {
		a[i] = (uint8_t)(hi >> (56 - 8 * i));
		a[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
}

static uint32_t
ref_lookup4(const struct ref4 *r, unsigned int n, uint32_t ip)
{
	uint32_t leaf = PCR_LEAF_NONE;
	int best = -1;
	unsigned int i;

	for (i = 0; i < n; i++)
		if ((ip & r[i].mask) == r[i].net && r[i].len > best) {
			best = r[i].len;
			leaf = r[i].leaf;
		}
	return leaf;
}

static uint32_t
ref_lookup6(const struct ref6 *r, unsigned int n, uint64_t hi, uint64_t lo)
{
	uint32_t leaf = PCR_LEAF_NONE;
	int best = -1;
	unsigned int i;

	for (i = 0; i < n; i++)
		if ((hi & r[i].mhi) == r[i].hi && (lo & r[i].mlo) == r[i].lo &&
		    r[i].len > best) {
			best = r[i].len;
			leaf = r[i].leaf;
		}
	return leaf;
}

/*
 * An IPv4 prefix /16-/32 inside 10.0.0.0/12 (so /16s hold /24s hold
 * /32s), and for about half the circuits an IPv6 one /32-/128 inside
 * 2001:db8::/32, its third and fourth 16-bit groups from a few values
 * and its last 64 bits from a few hundred (so prefixes nest at every
 * length and share tbl8 groups); every tenth circuit a second IPv4
 * prefix. A prefix taken before is drawn again, length included.
 */
static void
test_random(void **state)
{
	const uint32_t base = 7;
	struct ref4 *r4 = calloc(2 * R_CIRCUITS, sizeof(*r4));
	struct ref6 *r6 = calloc(R_CIRCUITS, sizeof(*r6));
	size_t csv_cap = (size_t)R_CIRCUITS * 160, o;
	char *csv = malloc(csv_cap);
	uint32_t *a4 = malloc(R_ADDRS * sizeof(*a4));
	uint8_t(*a6)[16] = malloc(R_ADDRS * sizeof(*a6));
	uint64_t *a6hi = malloc(R_ADDRS * sizeof(uint64_t));
	uint64_t *a6lo = malloc(R_ADDRS * sizeof(uint64_t));
	unsigned int n4 = 0, n6 = 0, i, j, hit4 = 0, hit6 = 0;
	struct pcr_leafmap_info info;
	struct pcr_leafmap *m;
	struct pcr_isp *isp;
	double t0, t_create;

	(void)state;
	assert_non_null(r4);
	assert_non_null(r6);
	assert_non_null(csv);
	assert_non_null(a4);
	assert_non_null(a6);
	assert_non_null(a6hi);
	assert_non_null(a6lo);
	memset(seen, 0, sizeof(seen));
	o = (size_t)snprintf(csv, csv_cap, HDR);
	for (i = 0; i < R_CIRCUITS; i++) {
		char t4[2][INET6_ADDRSTRLEN + 8], t6[INET6_ADDRSTRLEN + 8],
			a[INET6_ADDRSTRLEN];
		unsigned int k, nk = i % 10 == 3 ? 2 : 1;

		for (k = 0; k < nk; k++) {
			struct ref4 *r = &r4[n4++];
			struct in_addr ia;

			do {
				r->len = (uint8_t)(16 + rnd() % 17);
				r->mask = (uint32_t)mask64(r->len + 32);
				r->net = (0x0a000000u |
					  (uint32_t)(rnd() & 0xfffff)) &
					 r->mask;
			} while (!seen_add(r->net, 4, r->len));
			r->leaf = base + i;
			ia.s_addr = htonl(r->net);
			inet_ntop(AF_INET, &ia, a, sizeof(a));
			snprintf(t4[k], sizeof(t4[k]), "%s/%u", a, r->len);
		}
		t6[0] = '\0';
		if (rnd() % 2 == 0) {
			struct ref6 *r = &r6[n6++];
			uint8_t b[16];

			do {
				r->len = (uint8_t)(32 + rnd() % 97);
				r->mhi = mask64(r->len);
				r->mlo = mask64(r->len - 64);
				r->hi = (0x20010db800000000ULL |
					 (rnd() % 3) << 16 | (rnd() % 5) << 8 |
					 (rnd() % 4)) &
					r->mhi;
				if (rnd() % 2)
					r->hi |= (rnd() & 0xffffffffULL) &
						 r->mhi;
				r->lo = ((rnd() % 300) << 56 |
					 (rnd() % 2 ? rnd() % 5 : rnd())) &
					r->mlo;
			} while (!seen_add(r->hi, r->lo, r->len));
			r->leaf = base + i;
			v6_put(b, r->hi, r->lo);
			inet_ntop(AF_INET6, b, a, sizeof(a));
			snprintf(t6, sizeof(t6), "%s/%u", a, r->len);
		}
		o += (size_t)snprintf(csv + o, csv_cap - o,
				      "r%u,,d%u,,,,%s%s%s,%s,0,0,100,20,\n", i,
				      i, t4[0], nk > 1 ? " " : "",
				      nk > 1 ? t4[1] : "", t6);
		assert_true(o < csv_cap);
	}
	isp = load(csv);
	free(csv);
	assert_int_equal(isp->n_circuits, R_CIRCUITS);
	assert_int_equal(isp->n_prefixes4, n4);
	assert_int_equal(isp->n_prefixes6, n6);

	t0 = now_s();
	m = create("random", isp, base);
	t_create = now_s() - t0;
	pcr_leafmap_info(m, &info);
	assert_int_equal(info.routes4, n4);
	assert_int_equal(info.routes6, n6);

	/* addresses: a third inside a prefix, a third in the packed
	 * ranges, a third anywhere */
	for (i = 0; i < R_ADDRS; i++) {
		uint64_t hi, lo;

		switch (i % 3) {
		case 0: {
			const struct ref4 *r = &r4[rnd() % n4];
			const struct ref6 *q = &r6[rnd() % n6];

			a4[i] = r->net | ((uint32_t)rnd() & ~r->mask);
			hi = q->hi | (rnd() & ~q->mhi);
			lo = q->lo | (rnd() & ~q->mlo);
			break;
		}
		case 1:
			a4[i] = 0x0a000000u | ((uint32_t)rnd() & 0xfffff);
			hi = 0x20010db800000000ULL | (rnd() % 3) << 16 |
			     (rnd() % 5) << 8 | (rnd() % 4);
			lo = (rnd() % 300) << 56 | rnd() % 5;
			break;
		default:
			a4[i] = (uint32_t)rnd();
			hi = rnd();
			lo = rnd();
			break;
		}
		a6hi[i] = hi;
		a6lo[i] = lo;
		v6_put(a6[i], hi, lo);
	}
	for (i = 0; i < R_ADDRS; i++) {
		uint32_t want4 = ref_lookup4(r4, n4, a4[i]);
		uint32_t want6 = ref_lookup6(r6, n6, a6hi[i], a6lo[i]);
		uint32_t got4 = pcr_leafmap_lookup4(m, a4[i]);
		uint32_t got6 = pcr_leafmap_lookup6(m, a6[i]);

		if (got4 != want4)
			fail_msg("10.x %08x: leaf %u, the longest prefix's %u",
				 a4[i], got4, want4);
		if (got6 != want6)
			fail_msg("v6 %016llx %016llx: leaf %u, the longest "
				 "prefix's %u",
				 (unsigned long long)a6hi[i],
				 (unsigned long long)a6lo[i], got6, want6);
		hit4 += want4 != PCR_LEAF_NONE;
		hit6 += want6 != PCR_LEAF_NONE;
	}
	/* most addresses of the first two thirds hit, some miss */
	assert_true(hit4 > R_ADDRS / 2 && hit4 < R_ADDRS);
	assert_true(hit6 > R_ADDRS / 4 && hit6 < R_ADDRS);
	check_bulk(m, a4, R_ADDRS, (const uint8_t(*)[16])a6, R_ADDRS);
	/* each prefix's own first address: its leaf or a longer one's */
	for (j = 0; j < n4; j++)
		assert_int_equal(pcr_leafmap_lookup4(m, r4[j].net),
				 ref_lookup4(r4, n4, r4[j].net));
	print_message("random: %u circuits, %u IPv4 and %u IPv6 prefixes "
		      "(+%u covers), tbl8 groups %u + %u, %.1f MiB, create "
		      "%.1f ms; %u/%u IPv4 and %u/%u IPv6 addresses hit\n",
		      R_CIRCUITS, n4, n6, info.covers6, info.tbl8_4,
		      info.tbl8_6, (double)info.memsize / MIB, t_create * 1e3,
		      hit4, R_ADDRS, hit6, R_ADDRS);
	pcr_leafmap_free(m);
	pcr_isp_free(isp);
	free(r4);
	free(r6);
	free(a4);
	free(a6);
	free(a6hi);
	free(a6lo);
}

/* ---- pacer-ispgen's 100,000 subscribers (with an argument) ---- */

/* the fastest of 5 passes of the bulk lookups of @p n addresses, in ns
 * an address (a pass reads the tables cold the first time) */
static double
time_bulk(const struct pcr_leafmap *m, const uint32_t *a4,
	  const uint8_t (*a6)[16], uint32_t *l, unsigned int n)
{
	double best = 1e9, t;
	int pass;

	for (pass = 0; pass < 5; pass++) {
		t = now_s();
		if (a4 != NULL)
			pcr_leafmap_lookup4_bulk(m, a4, l, n);
		else
			pcr_leafmap_lookup6_bulk(m, a6, l, n);
		t = (now_s() - t) * 1e9 / n;
		best = t < best ? t : best;
	}
	return best;
}

static void
test_ispgen_100k(void **state)
{
	char cmd[512];
	struct pcr_isp *isp = pcr_isp_new();
	struct pcr_leafmap_info info;
	struct pcr_leafmap *m = NULL;
	uint32_t *a4, *l;
	uint8_t(*a6)[16];
	unsigned int n4 = 0, n6 = 0, i, k, run;
	double t0, t_create[2], t4, t6;

	(void)state;
	assert_non_null(isp);
	snprintf(cmd, sizeof(cmd),
		 "'%s' --subscribers 100000 --out '%s' >/dev/null", ispgen,
		 dir);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/network.json", dir);
	if (pcr_isp_load_network(isp, cmd, err, sizeof(err)) != 0 ||
	    pcr_isp_load_subscribers(isp, csv_path, err, sizeof(err)) != 0)
		fail_msg("load: %s", err);
	a4 = malloc(2 * (size_t)isp->n_prefixes * sizeof(*a4));
	a6 = malloc(2 * (size_t)isp->n_prefixes * sizeof(*a6));
	l = malloc(2 * (size_t)isp->n_prefixes * sizeof(*l));
	assert_non_null(a4);
	assert_non_null(a6);
	assert_non_null(l);

	/* twice: the first create touches DPDK's memory for the first time
	 * (4 KiB pages here, --no-huge), the second reuses it */
	for (run = 0; run < 2; run++) {
		pcr_leafmap_free(m);
		m = NULL;
		t0 = now_s();
		if (pcr_leafmap_create(&m, "ispgen", isp, 0, SOCKET_ID_ANY, err,
				       sizeof(err)) != 0)
			fail_msg("create: %s", err);
		t_create[run] = now_s() - t0;
	}
	pcr_leafmap_info(m, &info);

	/* each prefix's first and last address: its circuit (pacer-ispgen's
	 * prefixes do not nest) */
	for (i = 0; i < isp->n_prefixes; i++) {
		const struct pcr_isp_prefix *p = &isp->prefixes[i];

		if (p->family == AF_INET) {
			uint32_t a = (uint32_t)p->addr[0] << 24 |
				     (uint32_t)p->addr[1] << 16 |
				     (uint32_t)p->addr[2] << 8 | p->addr[3];

			a4[n4++] = a;
			a4[n4++] = a | (uint32_t)~mask64(32 + p->len);
		} else {
			memcpy(a6[n6], p->addr, 16);
			memcpy(a6[n6 + 1], p->addr, 16);
			for (k = p->len; k < 128; k++)
				a6[n6 + 1][k / 8] |= (uint8_t)(0x80 >> (k % 8));
			n6 += 2;
		}
	}
	t4 = time_bulk(m, a4, NULL, l, n4);
	for (i = 0, k = 0; i < isp->n_prefixes; i++)
		if (isp->prefixes[i].family == AF_INET) {
			assert_int_equal(l[k], isp->prefixes[i].circuit);
			assert_int_equal(l[k + 1], isp->prefixes[i].circuit);
			k += 2;
		}
	t6 = time_bulk(m, NULL, (const uint8_t(*)[16])a6, l, n6);
	for (i = 0, k = 0; i < isp->n_prefixes; i++)
		if (isp->prefixes[i].family == AF_INET6) {
			assert_int_equal(l[k], isp->prefixes[i].circuit);
			assert_int_equal(l[k + 1], isp->prefixes[i].circuit);
			k += 2;
		}
	print_message("ispgen 100K: %u circuits, %u IPv4 and %u IPv6 "
		      "prefixes (+%u covers), tbl8 groups %u + %u; create "
		      "%.0f ms (memory touched first), %.0f ms (again); %zu "
		      "bytes (%.1f MiB, %.0f bytes a circuit); bulk lookups "
		      "%.1f ns (IPv4), %.1f ns (IPv6) an address\n",
		      isp->n_circuits, info.routes4, info.routes6, info.covers6,
		      info.tbl8_4, info.tbl8_6, t_create[0] * 1e3,
		      t_create[1] * 1e3, info.memsize,
		      (double)info.memsize / MIB,
		      (double)info.memsize / isp->n_circuits, t4, t6);
	pcr_leafmap_free(m);
	pcr_isp_free(isp);
	free(a4);
	free(a6);
	free(l);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small),
		cmocka_unit_test(test_default),
		cmocka_unit_test(test_one_family),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_random),
	};
	const struct CMUnitTest big[] = {
		cmocka_unit_test(test_ispgen_100k),
	};
	int ret;

	pcr_test_eal_init("leafmap", "0", 512);
	if (argc > 1) {
		ispgen = argv[1];
		ret = cmocka_run_group_tests_name("leafmap-100k", big, setup,
						  teardown);
	} else {
		ret = cmocka_run_group_tests(tests, setup, teardown);
	}
	pcr_test_eal_cleanup();
	return ret;
}
