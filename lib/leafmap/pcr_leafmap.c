/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * An ISP's prefixes into DPDK's FIBs (pcr_leafmap.h).
 *
 * Each family's prefixes are copied into an array of routes, sorted by
 * length then address and added shortest first: a twice-given prefix is
 * then two neighbours, and a cover (IPv6) is added after every prefix
 * shorter than it, so the leaf it must carry is what the FIB returns for
 * its address at that moment. The tables are sized from the same sorted
 * arrays before the FIBs are created (DPDK cannot grow them).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mempool.h>

#include "pcr_leafmap.h"

/* "MP_" + NAME + "_4" fits a mempool name (RTE_MEMPOOL_NAMESIZE counts
 * the NUL) */
_Static_assert(3 + PCR_LEAFMAP_NAME_MAX + 2 == RTE_MEMPOOL_NAMESIZE - 1,
	       "PCR_LEAFMAP_NAME_MAX no longer matches DPDK's mempool names");

/* routes per lookup call of the bulk forms (their next hops on the
 * stack: 512 bytes) */
#define BULK_CHUNK 64

struct pcr_leafmap {
	struct rte_fib *fib4;  /* NULL: no IPv4 prefixes */
	struct rte_fib6 *fib6; /* NULL: no IPv6 prefixes */
	struct pcr_leafmap_info info;
};

/* A route to add: one of the ISP's prefixes, or an IPv6 cover */
struct route {
	uint8_t addr[16]; /* network order, host bits 0 */
	uint8_t len;
	uint8_t cover; /* 1: a cover (sorts after a prefix equal to it) */
	uint32_t pfx;  /* index in isp->prefixes (a cover: the prefix it
			* was made for) */
};

/* An IPv6 /8k block a route ends in (k: 3..15), the tbl8 groups on its
 * path being k - 2 */
struct block {
	uint8_t addr[16];
	uint8_t k;
};

static void __attribute__((format(printf, 3, 4)))
errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* clear the bits of @p a past the first @p len */
static void
mask_addr(uint8_t a[16], unsigned int len)
{
	unsigned int i;

	for (i = 0; i < 16; i++) {
		if (len >= 8 * (i + 1))
			continue;
		if (len <= 8 * i)
			a[i] = 0;
		else
			a[i] &= (uint8_t)(0xff00 >> (len - 8 * i));
	}
}

/* "ADDR/LEN (circuit 'ID')" of prefix @p i into @p buf */
static const char *
pfx_text(char *buf, size_t size, const struct pcr_isp *isp, uint32_t i)
{
	const struct pcr_isp_prefix *p = &isp->prefixes[i];
	char a[INET6_ADDRSTRLEN];

	if (inet_ntop(p->family == AF_INET ? AF_INET : AF_INET6, p->addr, a,
		      sizeof(a)) == NULL)
		snprintf(a, sizeof(a), "?");
	if (isp->circuits != NULL && p->circuit < isp->n_circuits)
		snprintf(buf, size, "%s/%u (circuit '%.64s')", a, p->len,
			 isp->circuits[p->circuit].id);
	else
		snprintf(buf, size, "%s/%u (circuit %u)", a, p->len,
			 p->circuit);
	return buf;
}

#define PFX_TEXT_BYTES (INET6_ADDRSTRLEN + 112)

static int
route_cmp(const void *a, const void *b)
{
	const struct route *x = a, *y = b;
	int c;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	c = memcmp(x->addr, y->addr, sizeof(x->addr));
	if (c != 0)
		return c;
	return (int)x->cover - (int)y->cover;
}

static int
block_cmp(const void *a, const void *b)
{
	const struct block *x = a, *y = b;

	if (x->k != y->k)
		return x->k < y->k ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

static int
u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* the bytes DPDK's heaps hold on every socket */
static size_t
heap_used(void)
{
	struct rte_malloc_socket_stats st;
	unsigned int i;
	size_t sum = 0;

	for (i = 0; i < rte_socket_count(); i++)
		if (rte_malloc_get_socket_stats(rte_socket_id_by_idx(i), &st) ==
		    0)
			sum += st.heap_allocsz_bytes;
	return sum;
}

static inline uint32_t
leaf_of(uint64_t nh)
{
	return nh == PCR_LEAFMAP_NH_NONE ? PCR_LEAF_NONE : (uint32_t)nh;
}

/*
 * @p n routes of one family out of @p isp's prefixes into a new array,
 * sorted, IPv6 with their covers, and each prefix given twice refused.
 * *@p n_out: the routes kept.
 */
static int
routes_build(const struct pcr_isp *isp, uint8_t family, uint32_t n,
	     struct route **out, uint32_t *n_out, char *err, size_t errlen)
{
	char t1[PFX_TEXT_BYTES], t2[PFX_TEXT_BYTES];
	size_t cap = family == AF_INET6 ? 2 * (size_t)n : n;
	struct route *r;
	uint32_t i, k = 0, w;

	r = malloc((cap + 1) * sizeof(*r));
	if (r == NULL) {
		errf(err, errlen, "leafmap: out of memory for %u routes", n);
		return -ENOMEM;
	}
	for (i = 0; i < isp->n_prefixes; i++) {
		const struct pcr_isp_prefix *p = &isp->prefixes[i];
		struct route *e;

		if (p->family != family)
			continue;
		e = &r[k++];
		memcpy(e->addr, p->addr, sizeof(e->addr));
		if (family == AF_INET)
			memset(e->addr + 4, 0, 12);
		mask_addr(e->addr, p->len);
		e->len = p->len;
		e->cover = 0;
		e->pfx = i;
		/* the /(8k+1) of the byte its length ends in */
		if (family == AF_INET6 && p->len > 24 &&
		    (p->len - 1) % 8 != 0) {
			struct route *c = &r[k++];

			*c = *e;
			c->len = (uint8_t)((p->len - 1) / 8 * 8 + 1);
			mask_addr(c->addr, c->len);
			c->cover = 1;
		}
	}
	qsort(r, k, sizeof(*r), route_cmp);
	/* a prefix equal to the one before is an error; a cover equal to
	 * the route before (a prefix or a cover) is not needed */
	for (i = 0, w = 0; i < k; i++) {
		if (w > 0 && r[w - 1].len == r[i].len &&
		    memcmp(r[w - 1].addr, r[i].addr, 16) == 0) {
			if (r[i].cover)
				continue;
			errf(err, errlen,
			     "leafmap: prefix %s: the prefix of %s too",
			     pfx_text(t1, sizeof(t1), isp, r[i].pfx),
			     pfx_text(t2, sizeof(t2), isp, r[w - 1].pfx));
			free(r);
			return -EINVAL;
		}
		r[w++] = r[i];
	}
	*out = r;
	*n_out = w;
	return 0;
}

/* tbl8 groups the IPv4 FIB needs: one per /24 holding a longer route */
static int
tbl8_count4(const struct route *r, uint32_t n, uint32_t *groups, char *err,
	    size_t errlen)
{
	uint32_t *key, i, m = 0, g = 0;

	key = malloc(((size_t)n + 1) * sizeof(*key));
	if (key == NULL) {
		errf(err, errlen, "leafmap: out of memory for %u routes", n);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		if (r[i].len > 24)
			key[m++] = (uint32_t)r[i].addr[0] << 16 |
				   (uint32_t)r[i].addr[1] << 8 | r[i].addr[2];
	qsort(key, m, sizeof(*key), u32_cmp);
	for (i = 0; i < m; i++)
		if (i == 0 || key[i] != key[i - 1])
			g++;
	free(key);
	*groups = g;
	return 0;
}

/* tbl8 groups the IPv6 FIB needs, routes and covers added as
 * pcr_leafmap.h says: k - 2 for each /8k block a route ends in */
static int
tbl8_count6(const struct route *r, uint32_t n, uint64_t *groups, char *err,
	    size_t errlen)
{
	struct block *b;
	uint32_t i, m = 0;
	uint64_t g = 0;

	b = malloc(((size_t)n + 1) * sizeof(*b));
	if (b == NULL) {
		errf(err, errlen, "leafmap: out of memory for %u routes", n);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		if (r[i].len <= 24)
			continue;
		b[m].k = (uint8_t)((r[i].len - 1) / 8);
		memcpy(b[m].addr, r[i].addr, 16);
		mask_addr(b[m].addr, 8u * b[m].k);
		m++;
	}
	qsort(b, m, sizeof(*b), block_cmp);
	for (i = 0; i < m; i++)
		if (i == 0 || block_cmp(&b[i], &b[i - 1]) != 0)
			g += b[i].k - 2u;
	free(b);
	*groups = g;
	return 0;
}

/* -errno of an rte_fib(6)_create() that failed, its message in @p err */
static int
create_err(const char *fib_name, const char *what, uint32_t routes,
	   uint32_t groups, char *err, size_t errlen)
{
	int e = rte_errno;

	errf(err, errlen, "leafmap: %s '%s' (%u routes, %u tbl8 groups): %s%s",
	     what, fib_name, routes, groups, rte_strerror(e),
	     e == EEXIST ? " (a map of that name is live)" : "");
	return e == EEXIST ? -EEXIST : e == ENOMEM ? -ENOMEM : -EINVAL;
}

/* -errno of an rte_fib(6)_add() that returned @p rc */
static int
add_err(const struct pcr_isp *isp, const struct route *e, int rc, char *err,
	size_t errlen)
{
	char t[PFX_TEXT_BYTES];

	errf(err, errlen, "leafmap: %s prefix %s: %s",
	     e->cover ? "the cover of" : "adding",
	     pfx_text(t, sizeof(t), isp, e->pfx), rte_strerror(-rc));
	return rc == -ENOSPC || rc == -ENOMEM ? -ENOMEM : -EINVAL;
}

static int
build4(struct pcr_leafmap *m, const char *name, const struct pcr_isp *isp,
       uint32_t n, uint32_t base, int socket_id, char *err, size_t errlen)
{
	struct rte_fib_conf conf;
	char fname[PCR_LEAFMAP_NAME_MAX + 3];
	struct route *r;
	uint32_t nr, groups, i;
	int rc;

	rc = routes_build(isp, AF_INET, n, &r, &nr, err, errlen);
	if (rc != 0)
		return rc;
	rc = tbl8_count4(r, nr, &groups, err, errlen);
	if (rc != 0)
		goto out;
	memset(&conf, 0, sizeof(conf));
	conf.type = RTE_FIB_DIR24_8;
	conf.default_nh = PCR_LEAFMAP_NH_NONE;
	conf.max_routes = (int)nr;
	conf.dir24_8.nh_sz = RTE_FIB_DIR24_8_4B;
	conf.dir24_8.num_tbl8 = RTE_MAX(groups, 1u);
	snprintf(fname, sizeof(fname), "%s_4", name);
	m->fib4 = rte_fib_create(fname, socket_id, &conf);
	if (m->fib4 == NULL) {
		rc = create_err(fname, "rte_fib_create", nr,
				conf.dir24_8.num_tbl8, err, errlen);
		goto out;
	}
	for (i = 0; i < nr; i++) {
		const struct route *e = &r[i];
		uint32_t ip = (uint32_t)e->addr[0] << 24 |
			      (uint32_t)e->addr[1] << 16 |
			      (uint32_t)e->addr[2] << 8 | e->addr[3];

		rc = rte_fib_add(m->fib4, ip, e->len,
				 base + isp->prefixes[e->pfx].circuit);
		if (rc != 0) {
			rc = add_err(isp, e, rc, err, errlen);
			goto out;
		}
	}
	m->info.routes4 = nr;
	m->info.tbl8_4 = conf.dir24_8.num_tbl8;
out:
	free(r);
	return rc;
}

static int
build6(struct pcr_leafmap *m, const char *name, const struct pcr_isp *isp,
       uint32_t n, uint32_t base, int socket_id, char *err, size_t errlen)
{
	struct rte_fib6_conf conf;
	char fname[PCR_LEAFMAP_NAME_MAX + 3];
	struct route *r;
	uint32_t nr, i, covers = 0;
	uint64_t groups;
	int rc;

	rc = routes_build(isp, AF_INET6, n, &r, &nr, err, errlen);
	if (rc != 0)
		return rc;
	rc = tbl8_count6(r, nr, &groups, err, errlen);
	if (rc != 0)
		goto out;
	if (groups >= PCR_LEAFMAP_NH_NONE - 64) {
		errf(err, errlen,
		     "leafmap: %u IPv6 prefixes need %llu tbl8 "
		     "groups, more than a FIB takes",
		     n, (unsigned long long)groups);
		rc = -EINVAL;
		goto out;
	}
	memset(&conf, 0, sizeof(conf));
	conf.type = RTE_FIB6_TRIE;
	conf.default_nh = PCR_LEAFMAP_NH_NONE;
	conf.max_routes = (int)nr;
	conf.trie.nh_sz = RTE_FIB6_TRIE_4B;
	/* one group more: DPDK builds a byte-aligned prefix's path one level
	 * too deep (a /56 through byte 7) and folds the last group back once
	 * the prefix is written, so an insert may hold one group its final
	 * state does not; rounded up to 64 groups (64 KiB) of slack, as
	 * DIR24_8 rounds its own */
	conf.trie.num_tbl8 = (uint32_t)RTE_ALIGN_CEIL(groups + 1, 64);
	snprintf(fname, sizeof(fname), "%s_6", name);
	m->fib6 = rte_fib6_create(fname, socket_id, &conf);
	if (m->fib6 == NULL) {
		rc = create_err(fname, "rte_fib6_create", nr,
				conf.trie.num_tbl8, err, errlen);
		goto out;
	}
	for (i = 0; i < nr; i++) {
		struct route *e = &r[i];
		uint64_t nh;

		if (e->cover) {
			/* what its address gets from the shorter routes,
			 * all added by now */
			rte_fib6_lookup_bulk(m->fib6, &e->addr, &nh, 1);
			covers++;
		} else {
			nh = base + isp->prefixes[e->pfx].circuit;
		}
		rc = rte_fib6_add(m->fib6, e->addr, e->len, nh);
		if (rc != 0) {
			rc = add_err(isp, e, rc, err, errlen);
			goto out;
		}
	}
	m->info.routes6 = nr - covers;
	m->info.covers6 = covers;
	m->info.tbl8_6 = conf.trie.num_tbl8;
out:
	free(r);
	return rc;
}

int
pcr_leafmap_create(struct pcr_leafmap **out, const char *name,
		   const struct pcr_isp *isp, uint32_t base, int socket_id,
		   char *err, size_t errlen)
{
	char t[PFX_TEXT_BYTES];
	struct pcr_leafmap *m;
	uint32_t i, n4 = 0, n6 = 0;
	size_t heap0;
	int rc;

	if (out == NULL || name == NULL || isp == NULL ||
	    (isp->n_prefixes > 0 && isp->prefixes == NULL)) {
		errf(err, errlen, "leafmap: no map, name or ISP given");
		return -EINVAL;
	}
	if (name[0] == '\0' || strlen(name) > PCR_LEAFMAP_NAME_MAX) {
		errf(err, errlen,
		     "leafmap: name '%.64s': not 1 to %u "
		     "characters (DPDK's FIB names)",
		     name, PCR_LEAFMAP_NAME_MAX);
		return -EINVAL;
	}
	if ((uint64_t)base + isp->n_circuits > PCR_LEAFMAP_NH_NONE) {
		errf(err, errlen,
		     "leafmap: base %u + %u circuits: leaf ids "
		     "past %u, the largest a 4-byte next hop holds",
		     base, isp->n_circuits, PCR_LEAFMAP_NH_NONE - 1);
		return -EINVAL;
	}
	for (i = 0; i < isp->n_prefixes; i++) {
		const struct pcr_isp_prefix *p = &isp->prefixes[i];
		const char *why = NULL;

		if (p->family == AF_INET)
			n4++;
		else if (p->family == AF_INET6)
			n6++;
		else
			why = "neither AF_INET nor AF_INET6";
		if (p->len > (p->family == AF_INET ? 32 : 128))
			why = "length past the address";
		if (p->circuit >= isp->n_circuits)
			why = "circuit index past the ISP's circuits";
		if (why != NULL) {
			errf(err, errlen, "leafmap: prefix %s: %s",
			     pfx_text(t, sizeof(t), isp, i), why);
			return -EINVAL;
		}
	}
	/* DPDK sizes a FIB's route pool at twice an int */
	if (n4 > INT_MAX / 4 || n6 > INT_MAX / 4) {
		errf(err, errlen,
		     "leafmap: %u IPv4 and %u IPv6 prefixes: "
		     "more than a FIB takes",
		     n4, n6);
		return -EINVAL;
	}

	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		errf(err, errlen, "leafmap: out of memory");
		return -ENOMEM;
	}
	heap0 = heap_used();
	rc = n4 > 0 ? build4(m, name, isp, n4, base, socket_id, err, errlen)
		    : 0;
	if (rc == 0 && n6 > 0)
		rc = build6(m, name, isp, n6, base, socket_id, err, errlen);
	if (rc != 0) {
		pcr_leafmap_free(m);
		return rc;
	}
	m->info.memsize = sizeof(*m) + (heap_used() - heap0);
	*out = m;
	return 0;
}

void
pcr_leafmap_free(struct pcr_leafmap *m)
{
	if (m == NULL)
		return;
	rte_fib_free(m->fib4);
	rte_fib6_free(m->fib6);
	free(m);
}

uint32_t
pcr_leafmap_lookup4(const struct pcr_leafmap *m, uint32_t ip)
{
	uint64_t nh;

	if (m->fib4 == NULL)
		return PCR_LEAF_NONE;
	rte_fib_lookup_bulk(m->fib4, &ip, &nh, 1);
	return leaf_of(nh);
}

uint32_t
pcr_leafmap_lookup6(const struct pcr_leafmap *m, const uint8_t ip[16])
{
	uint8_t a[1][16];
	uint64_t nh;

	if (m->fib6 == NULL)
		return PCR_LEAF_NONE;
	memcpy(a[0], ip, 16);
	rte_fib6_lookup_bulk(m->fib6, a, &nh, 1);
	return leaf_of(nh);
}

void
pcr_leafmap_lookup4_bulk(const struct pcr_leafmap *m, const uint32_t *ips,
			 uint32_t *leaves, unsigned int n)
{
	uint64_t nh[BULK_CHUNK];
	unsigned int i, j, c;

	if (m->fib4 == NULL) {
		for (i = 0; i < n; i++)
			leaves[i] = PCR_LEAF_NONE;
		return;
	}
	for (i = 0; i < n; i += c) {
		c = RTE_MIN(n - i, (unsigned int)BULK_CHUNK);
		/* rte_fib only reads the addresses */
		rte_fib_lookup_bulk(m->fib4, (uint32_t *)(uintptr_t)(ips + i),
				    nh, (int)c);
		for (j = 0; j < c; j++)
			leaves[i + j] = leaf_of(nh[j]);
	}
}

void
pcr_leafmap_lookup6_bulk(const struct pcr_leafmap *m, const uint8_t (*ips)[16],
			 uint32_t *leaves, unsigned int n)
{
	uint64_t nh[BULK_CHUNK];
	unsigned int i, j, c;

	if (m->fib6 == NULL) {
		for (i = 0; i < n; i++)
			leaves[i] = PCR_LEAF_NONE;
		return;
	}
	for (i = 0; i < n; i += c) {
		c = RTE_MIN(n - i, (unsigned int)BULK_CHUNK);
		/* rte_fib6 only reads the addresses */
		rte_fib6_lookup_bulk(m->fib6,
				     (uint8_t(*)[16])(uintptr_t)(ips + i), nh,
				     (int)c);
		for (j = 0; j < c; j++)
			leaves[i + j] = leaf_of(nh[j]);
	}
}

size_t
pcr_leafmap_memsize(const struct pcr_leafmap *m)
{
	return m->info.memsize;
}

void
pcr_leafmap_info(const struct pcr_leafmap *m, struct pcr_leafmap_info *info)
{
	*info = m->info;
}
