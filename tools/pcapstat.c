/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer-pcapstat: what a capture of departures says about pacing.
 *
 * Every packet is read once (nanosecond timestamps whatever the file's own
 * resolution), classified into a flow, and its timestamp, wire length and
 * flow kept in three arrays; everything else is computed from those
 * arrays at the end:
 *
 * - rate: (wire bytes of all packets but the last) * 8 / (t_last - t_first),
 *   so that N packets sent at exactly R bit/s give R; 0 below 2 packets.
 *   Wire bytes are the original length (not caplen) plus --wire-overhead.
 * - gaps: differences between consecutive timestamps (of the capture, or
 *   of one flow), nearest-rank percentiles over a sorted copy. A timestamp
 *   earlier than the one before it gives a gap of 0 and is counted
 *   (ts_backwards).
 * - windows: for each W, the most wire bytes of packets starting in any
 *   [t, t + W) with t a packet's timestamp (two pointers over the packets
 *   in time order), and how far that exceeds what the reference rate
 *   allows in W: max(0, max_bytes - rate * W / 8).
 * - seq_errors: packets whose pacer-pcapgen marker (pcr_pcap_flow.h) has a
 *   sequence number lower than that of the flow's previous marked packet.
 *   A flow adopts the marker flow index of its first marked packet; marks
 *   with another index are not taken as that flow's.
 *
 * Flow keys follow lib/classify (pcr_classify.h) so the flows counted here
 * are the flows the pacer sees: VLAN tags (0x8100, 0x88a8, 0x9100; at most
 * 4) and MPLS labels (at most 8) skipped; TCP/UDP/SCTP 5-tuples; addresses
 * and protocol for other IP, IPv4 fragments and IPv6 fragment headers, ESP
 * and no-next-header; one default flow ("non-ip") for frames that are not
 * IP, are cut inside a header, or have a malformed IP header. Nothing is
 * read beyond caplen. The parse outcome of each packet is counted
 * (classify: ok, l3_only, non_ip, truncated, bad_header).
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <pcap/pcap.h>

#include "pcr_pcap_flow.h"
#include "pcr_parse.h"
#include "pcr_tool.h"

#define PROG       "pacer-pcapstat"
const char pcr_tool_name[] = PROG;

#define MAX_WINDOWS       16
#define MAX_WIRE_OVERHEAD 65535
#define MAX_VLAN          4 /* PCR_CLASSIFY_MAX_VLAN */
#define MAX_MPLS          8 /* PCR_CLASSIFY_MAX_MPLS */
#define MAX_IPV6_EXT      8 /* PCR_CLASSIFY_MAX_IPV6_EXT */
#define FRAG6_HLEN        8
#define PORTS_LEN         4
#define IPV4_MF           0x2000
#define IPV4_OFFSET_MASK  0x1fff
#define MPLS_BOS          0x01
#define NS_PER_S          1e9
#define LINUX_SLL_HLEN    16
#define LINUX_SLL2_HLEN   20
#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

static const uint64_t def_windows_ns[] = {1000000, 100000};

/* Same layout and meaning as struct pcr_flow_key (lib/classify). */
struct flow_key {
	uint8_t src_addr[16];
	uint8_t dst_addr[16];
	uint16_t src_port;
	uint16_t dst_port;
	uint8_t family; /* 0 (default flow), 4 or 6 */
	uint8_t proto;
	uint16_t rsvd;
};

enum cls_result {
	CLS_OK,
	CLS_L3_ONLY,
	CLS_NON_IP,
	CLS_TRUNCATED,
	CLS_BAD_HEADER,
	CLS_MAX,
};

static const char *const cls_names[CLS_MAX] = {
	[CLS_OK] = "ok",
	[CLS_L3_ONLY] = "l3_only",
	[CLS_NON_IP] = "non_ip",
	[CLS_TRUNCATED] = "truncated",
	[CLS_BAD_HEADER] = "bad_header",
};

/* One frame being parsed. */
struct parse {
	const uint8_t *p;
	uint32_t len; /* caplen: nothing at or beyond it is read */
	struct flow_key key;
	uint32_t l4_off;   /* CLS_OK: start of the L4 header */
	uint32_t limit;    /* CLS_OK: end of the datagram, within len */
	enum cls_result result;
};

struct gap_stats {
	uint64_t min_ns, p50_ns, p99_ns, max_ns;
};

struct flow {
	struct flow_key key;
	uint64_t packets;
	uint64_t bytes;      /* original lengths */
	uint64_t wire_bytes; /* original lengths + overhead */
	uint64_t first_ns, last_ns;
	uint32_t last_wire;  /* wire bytes of the last packet */
	uint32_t mark_flow;  /* marker flow index adopted */
	bool mark_known;
	uint32_t last_seq;
	uint64_t seq_errors;
	uint64_t gap_off; /* this flow's gaps in stats.flow_gaps */
	uint64_t gap_fill;
	struct gap_stats gap;
	double rate_bps;
};

struct flow_table {
	struct flow *flows;
	size_t n, cap;
	uint32_t *slots; /* flow index + 1; 0 is empty */
	size_t n_slots;  /* power of two, at least 2 * n */
};

struct cfg {
	const char *file;
	bool json;
	uint32_t wire_overhead;
	double rate_bps; /* 0: use the achieved rate */
	uint64_t windows_ns[MAX_WINDOWS];
	unsigned int n_windows;
	uint64_t skip;
	uint64_t flows_top;
	bool flows_top_given;
	uint64_t ideal_gap_ns;
	double time_scale; /* 1: timestamps as recorded */
};

/* Everything kept per packet, in file order. */
struct pkts {
	uint64_t *ts_ns;
	uint32_t *wire;
	uint32_t *flow;
	size_t n, cap;
};

struct window_res {
	uint64_t window_ns;
	uint64_t max_bytes;
	double burst_above_rate_bytes;
};

struct totals {
	uint64_t packets, bytes, wire_bytes;
	uint64_t first_ns, last_ns, duration_ns;
	uint64_t skipped;
	uint64_t ts_backwards;
	uint64_t seq_errors;
	uint64_t gaps_below;
	uint64_t cls[CLS_MAX];
	double rate_bps;
	double rate_ref_bps; /* for the windows */
	struct gap_stats gap;
	struct window_res win[MAX_WINDOWS];
};

static void
usage(FILE *out)
{
	fprintf(out,
		"Usage: " PROG " FILE [options]\n"
		"Rates, gaps, bursts and reordering in a capture of departures\n"
		"(pcap or pcapng; Ethernet, raw IP or Linux cooked).\n"
		"\n"
		"      --json              one JSON object instead of a table\n"
		"      --wire-overhead B   bytes added to each packet's original\n"
		"                          length for rates and windows (0); e.g.\n"
		"                          24 for FCS + preamble + IFG\n"
		"      --rate RATE         reference rate for --window bursts: a\n"
		"                          number (decimals allowed) with unit bit,\n"
		"                          kbit, mbit, gbit or tbit (SI, as tc);\n"
		"                          default: the achieved rate\n"
		"      --window NS         window for the burst figures; repeatable\n"
		"                          (default 1000000 and 100000)\n"
		"      --skip N            ignore the first N packets\n"
		"      --flows-top N       show only the N largest flows (all)\n"
		"      --ideal-gap-ns NS   also count gaps shorter than NS\n"
		"      --time-scale F      multiply every time since the first\n"
		"                          packet by F (0.5 .. 2), e.g. to turn\n"
		"                          net_pcap's EAL-clock timestamps into\n"
		"                          measured time: tsc_hz_eal / tsc_hz\n"
		"  -h, --help              this text\n"
		"\n"
		"Rates are (bytes of all packets but the last) * 8 / (t_last -\n"
		"t_first); gaps are nearest-rank percentiles; seq_errors counts\n"
		"packets whose pacer-pcapgen sequence number is lower than the\n"
		"previous one of their flow. Bad input exits with status 2.\n");
}

/* A rate as pacer takes it (lib/parse: tc's spellings, bps = bytes/s),
 * in bit/s; above 0. */
static double
parse_rate(const char *s)
{
	char e[200];
	uint64_t bps;

	if (pcr_rate_parse(s, &bps, e, sizeof(e)) != 0)
		usage_error("bad --rate '%s': %s", s, e);
	if (bps == 0)
		usage_error("bad --rate '%s': a rate to judge against is above 0", s);
	return (double)bps;
}

enum {
	OPT_JSON = 256,
	OPT_WIRE_OVERHEAD,
	OPT_RATE,
	OPT_WINDOW,
	OPT_SKIP,
	OPT_FLOWS_TOP,
	OPT_IDEAL_GAP_NS,
	OPT_TIME_SCALE,
};

static const struct option long_opts[] = {
	{"json", no_argument, NULL, OPT_JSON},
	{"wire-overhead", required_argument, NULL, OPT_WIRE_OVERHEAD},
	{"rate", required_argument, NULL, OPT_RATE},
	{"window", required_argument, NULL, OPT_WINDOW},
	{"skip", required_argument, NULL, OPT_SKIP},
	{"flows-top", required_argument, NULL, OPT_FLOWS_TOP},
	{"ideal-gap-ns", required_argument, NULL, OPT_IDEAL_GAP_NS},
	{"time-scale", required_argument, NULL, OPT_TIME_SCALE},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

static void
parse_args(int argc, char **argv, struct cfg *c)
{
	unsigned int k;
	int opt;

	memset(c, 0, sizeof(*c));
	c->time_scale = 1;
	while ((opt = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_JSON:
			c->json = true;
			break;
		case OPT_WIRE_OVERHEAD:
			c->wire_overhead = parse_u64("--wire-overhead", optarg,
						     0, MAX_WIRE_OVERHEAD);
			break;
		case OPT_RATE:
			c->rate_bps = parse_rate(optarg);
			break;
		case OPT_WINDOW:
			if (c->n_windows == MAX_WINDOWS)
				usage_error("too many --window (at most %d)",
					    MAX_WINDOWS);
			c->windows_ns[c->n_windows++] =
				parse_u64("--window", optarg, 1, UINT64_MAX);
			break;
		case OPT_SKIP:
			c->skip = parse_u64("--skip", optarg, 0, UINT64_MAX);
			break;
		case OPT_FLOWS_TOP:
			c->flows_top =
				parse_u64("--flows-top", optarg, 0, UINT64_MAX);
			c->flows_top_given = true;
			break;
		case OPT_IDEAL_GAP_NS:
			c->ideal_gap_ns = parse_u64("--ideal-gap-ns", optarg,
						    1, UINT64_MAX);
			break;
		case OPT_TIME_SCALE:
			c->time_scale = parse_double("--time-scale", optarg, 0.5, 2);
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			fprintf(stderr, "Try '" PROG " --help'.\n");
			exit(EXIT_USAGE);
		}
	}
	if (optind == argc)
		usage_error("missing FILE");
	if (optind + 1 < argc)
		usage_error("one FILE only, got '%s' and '%s'", argv[optind],
			    argv[optind + 1]);
	c->file = argv[optind];
	if (c->n_windows == 0)
		for (k = 0; k < sizeof(def_windows_ns) / sizeof(def_windows_ns[0]);
		     k++)
			c->windows_ns[c->n_windows++] = def_windows_ns[k];
}

/* Parsing, after lib/classify. Bounds are checked before every read. */

static bool
fits(uint32_t off, uint32_t len, uint32_t limit)
{
	return off <= limit && len <= limit - off;
}

static enum cls_result
parse_fail(struct parse *ps, enum cls_result r)
{
	memset(&ps->key, 0, sizeof(ps->key));
	ps->result = r;
	return r;
}

static enum cls_result
parse_done(struct parse *ps, enum cls_result r, uint32_t l4_off,
	   uint32_t limit)
{
	ps->l4_off = l4_off;
	ps->limit = limit;
	ps->result = r;
	return r;
}

static bool
proto_has_ports(uint8_t proto)
{
	return proto == PCR_PCAP_PROTO_TCP || proto == PCR_PCAP_PROTO_UDP ||
	       proto == PCR_PCAP_PROTO_SCTP;
}

static enum cls_result
parse_l4(struct parse *ps, uint32_t off, uint32_t limit, uint8_t proto)
{
	ps->key.proto = proto;
	if (!proto_has_ports(proto))
		return parse_done(ps, CLS_L3_ONLY, off, limit);
	if (!fits(off, PORTS_LEN, limit))
		return parse_fail(ps, CLS_TRUNCATED);
	ps->key.src_port = pcr_pcap_get_be16(ps->p + off);
	ps->key.dst_port = pcr_pcap_get_be16(ps->p + off + 2);
	return parse_done(ps, CLS_OK, off, limit);
}

static enum cls_result
parse_ipv4(struct parse *ps, uint32_t off)
{
	uint32_t ihl, total, limit = ps->len;
	const uint8_t *p;
	uint16_t frag;

	if (!fits(off, PCR_PCAP_IPV4_HLEN, ps->len))
		return parse_fail(ps, CLS_TRUNCATED);
	p = ps->p + off;
	ihl = (uint32_t)(p[0] & 0x0f) * 4;
	total = pcr_pcap_get_be16(p + 2);
	if ((p[0] >> 4) != 4 || ihl < PCR_PCAP_IPV4_HLEN || total < ihl)
		return parse_fail(ps, CLS_BAD_HEADER);
	frag = pcr_pcap_get_be16(p + 6);
	ps->key.family = 4;
	memcpy(ps->key.src_addr, p + 12, 4);
	memcpy(ps->key.dst_addr, p + 16, 4);
	if (!fits(off, ihl, limit))
		return parse_fail(ps, CLS_TRUNCATED);
	if (total < limit - off)
		limit = off + total;
	if (frag & (IPV4_MF | IPV4_OFFSET_MASK)) {
		ps->key.proto = p[9];
		return parse_done(ps, CLS_L3_ONLY, off + ihl, limit);
	}
	return parse_l4(ps, off + ihl, limit, p[9]);
}

static enum cls_result
parse_ipv6(struct parse *ps, uint32_t off)
{
	uint32_t hlen, payload, limit = ps->len;
	const uint8_t *p;
	unsigned int n_ext;
	uint8_t nh;

	if (!fits(off, PCR_PCAP_IPV6_HLEN, ps->len))
		return parse_fail(ps, CLS_TRUNCATED);
	p = ps->p + off;
	if ((p[0] >> 4) != 6)
		return parse_fail(ps, CLS_BAD_HEADER);
	payload = pcr_pcap_get_be16(p + 4);
	nh = p[6];
	ps->key.family = 6;
	memcpy(ps->key.src_addr, p + 8, 16);
	memcpy(ps->key.dst_addr, p + 24, 16);
	off += PCR_PCAP_IPV6_HLEN;
	/* payload length 0: jumbogram or nothing; the frame decides */
	if (payload != 0 && payload < limit - off)
		limit = off + payload;

	for (n_ext = 0;; n_ext++) {
		switch (nh) {
		case PCR_PCAP_PROTO_HOPOPTS:
		case PCR_PCAP_PROTO_ROUTING:
		case PCR_PCAP_PROTO_DSTOPTS:
		case PCR_PCAP_PROTO_AH:
		case PCR_PCAP_PROTO_FRAGMENT:
			break;
		case PCR_PCAP_PROTO_ESP:
		case PCR_PCAP_PROTO_NONE:
			ps->key.proto = nh;
			return parse_done(ps, CLS_L3_ONLY, off, limit);
		default:
			return parse_l4(ps, off, limit, nh);
		}
		if (n_ext == MAX_IPV6_EXT)
			return parse_fail(ps, CLS_BAD_HEADER);
		if (!fits(off, 2, limit))
			return parse_fail(ps, CLS_TRUNCATED);
		p = ps->p + off;
		if (nh == PCR_PCAP_PROTO_FRAGMENT)
			hlen = FRAG6_HLEN;
		else if (nh == PCR_PCAP_PROTO_AH)
			hlen = ((uint32_t)p[1] + 2) * 4;
		else
			hlen = ((uint32_t)p[1] + 1) * 8;
		if (!fits(off, hlen, limit))
			return parse_fail(ps, CLS_TRUNCATED);
		off += hlen;
		if (nh == PCR_PCAP_PROTO_FRAGMENT) {
			ps->key.proto = p[0];
			return parse_done(ps, CLS_L3_ONLY, off, limit);
		}
		nh = p[0];
	}
}

/* From the EtherType at @p off - 2 (already read as @p etype) onwards. */
static enum cls_result
parse_from_etype(struct parse *ps, uint32_t off, uint16_t etype)
{
	unsigned int i;

	for (i = 0; i < MAX_VLAN &&
		    (etype == PCR_PCAP_ETYPE_VLAN ||
		     etype == PCR_PCAP_ETYPE_QINQ ||
		     etype == PCR_PCAP_ETYPE_QINQ_OLD);
	     i++) {
		if (!fits(off, PCR_PCAP_VLAN_HLEN, ps->len))
			return parse_fail(ps, CLS_TRUNCATED);
		etype = pcr_pcap_get_be16(ps->p + off + 2);
		off += PCR_PCAP_VLAN_HLEN;
	}
	switch (etype) {
	case PCR_PCAP_ETYPE_IPV4:
		return parse_ipv4(ps, off);
	case PCR_PCAP_ETYPE_IPV6:
		return parse_ipv6(ps, off);
	case PCR_PCAP_ETYPE_MPLS_UC:
	case PCR_PCAP_ETYPE_MPLS_MC:
		break;
	default:
		return parse_fail(ps, CLS_NON_IP);
	}
	for (i = 0;; i++) {
		if (i == MAX_MPLS)
			return parse_fail(ps, CLS_NON_IP);
		if (!fits(off, PCR_PCAP_MPLS_HLEN, ps->len))
			return parse_fail(ps, CLS_TRUNCATED);
		off += PCR_PCAP_MPLS_HLEN;
		if (ps->p[off - 2] & MPLS_BOS)
			break;
	}
	if (!fits(off, 1, ps->len))
		return parse_fail(ps, CLS_TRUNCATED);
	switch (ps->p[off] >> 4) {
	case 4:
		return parse_ipv4(ps, off);
	case 6:
		return parse_ipv6(ps, off);
	default:
		return parse_fail(ps, CLS_NON_IP);
	}
}

static enum cls_result
parse_frame(struct parse *ps, int dlt)
{
	memset(&ps->key, 0, sizeof(ps->key));
	ps->l4_off = ps->limit = 0;

	switch (dlt) {
	case DLT_EN10MB:
		if (!fits(0, PCR_PCAP_ETH_HLEN, ps->len))
			return parse_fail(ps, CLS_TRUNCATED);
		return parse_from_etype(ps, PCR_PCAP_ETH_HLEN,
					pcr_pcap_get_be16(ps->p + 12));
	case DLT_LINUX_SLL:
		if (!fits(0, LINUX_SLL_HLEN, ps->len))
			return parse_fail(ps, CLS_TRUNCATED);
		return parse_from_etype(ps, LINUX_SLL_HLEN,
					pcr_pcap_get_be16(ps->p + 14));
	case DLT_LINUX_SLL2:
		if (!fits(0, LINUX_SLL2_HLEN, ps->len))
			return parse_fail(ps, CLS_TRUNCATED);
		return parse_from_etype(ps, LINUX_SLL2_HLEN,
					pcr_pcap_get_be16(ps->p));
	default: /* raw IP */
		if (!fits(0, 1, ps->len))
			return parse_fail(ps, CLS_TRUNCATED);
		if ((ps->p[0] >> 4) == 4)
			return parse_ipv4(ps, 0);
		if ((ps->p[0] >> 4) == 6)
			return parse_ipv6(ps, 0);
		return parse_fail(ps, CLS_NON_IP);
	}
}

static bool
dlt_supported(int dlt)
{
	switch (dlt) {
	case DLT_EN10MB:
	case DLT_LINUX_SLL:
	case DLT_LINUX_SLL2:
	case DLT_RAW:
#ifdef DLT_IPV4
	case DLT_IPV4:
#endif
#ifdef DLT_IPV6
	case DLT_IPV6:
#endif
		return true;
	default:
		return false;
	}
}

/* The pacer-pcapgen marker of a parsed UDP/TCP packet, if there is one. */
static bool
find_mark(const struct parse *ps, uint32_t *flow, uint32_t *seq)
{
	uint32_t pl, hlen;
	const uint8_t *m;

	if (ps->result != CLS_OK)
		return false;
	if (ps->key.proto == PCR_PCAP_PROTO_UDP) {
		hlen = PCR_PCAP_UDP_HLEN;
	} else if (ps->key.proto == PCR_PCAP_PROTO_TCP) {
		if (!fits(ps->l4_off, 13, ps->limit))
			return false;
		hlen = (uint32_t)(ps->p[ps->l4_off + 12] >> 4) * 4;
		if (hlen < PCR_PCAP_TCP_HLEN)
			return false;
	} else {
		return false;
	}
	if (!fits(ps->l4_off, hlen, ps->limit))
		return false;
	pl = ps->l4_off + hlen;
	if (!fits(pl, PCR_PCAP_MARK_LEN, ps->limit))
		return false;
	m = ps->p + pl;
	if (pcr_pcap_get_be32(m + PCR_PCAP_MARK_MAGIC_OFF) !=
	    PCR_PCAP_MARK_MAGIC)
		return false;
	*flow = pcr_pcap_get_be32(m + PCR_PCAP_MARK_FLOW_OFF);
	*seq = pcr_pcap_get_be32(m + PCR_PCAP_MARK_SEQ_OFF);
	return true;
}

/* Flow table: open addressing, linear probing. */

static uint64_t
key_hash(const struct flow_key *k)
{
	uint64_t w, h = 0x243f6a8885a308d3ULL;
	size_t i;

	for (i = 0; i < sizeof(*k); i += sizeof(w)) {
		memcpy(&w, (const uint8_t *)k + i, sizeof(w));
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	return h;
}

static void *
xrealloc(void *p, size_t n, size_t size)
{
	void *q;

	if (n != 0 && size > SIZE_MAX / n)
		fail(EXIT_FAILURE, "out of memory (%zu x %zu bytes)", n, size);
	q = realloc(p, n * size);
	if (q == NULL && n != 0)
		fail(EXIT_FAILURE, "out of memory (%zu x %zu bytes)", n, size);
	return q;
}

static void
table_rehash(struct flow_table *t, size_t n_slots)
{
	size_t i, s;

	free(t->slots);
	t->slots = xrealloc(NULL, n_slots, sizeof(*t->slots));
	memset(t->slots, 0, n_slots * sizeof(*t->slots));
	t->n_slots = n_slots;
	for (i = 0; i < t->n; i++) {
		s = key_hash(&t->flows[i].key) & (n_slots - 1);
		while (t->slots[s] != 0)
			s = (s + 1) & (n_slots - 1);
		t->slots[s] = (uint32_t)(i + 1);
	}
}

static uint32_t
table_find_or_add(struct flow_table *t, const struct flow_key *k)
{
	size_t s;
	uint32_t v;

	if (t->n_slots == 0 || 2 * (t->n + 1) > t->n_slots)
		table_rehash(t, t->n_slots == 0 ? 1024 : 2 * t->n_slots);
	s = key_hash(k) & (t->n_slots - 1);
	while ((v = t->slots[s]) != 0) {
		if (memcmp(&t->flows[v - 1].key, k, sizeof(*k)) == 0)
			return v - 1;
		s = (s + 1) & (t->n_slots - 1);
	}
	if (t->n == UINT32_MAX - 1)
		fail(EXIT_FAILURE, "too many flows");
	if (t->n == t->cap) {
		t->cap = t->cap == 0 ? 256 : 2 * t->cap;
		t->flows = xrealloc(t->flows, t->cap, sizeof(*t->flows));
	}
	memset(&t->flows[t->n], 0, sizeof(t->flows[t->n]));
	t->flows[t->n].key = *k;
	t->slots[s] = (uint32_t)(t->n + 1);
	return (uint32_t)t->n++;
}

static void
pkts_push(struct pkts *pk, uint64_t ts_ns, uint32_t wire, uint32_t flow)
{
	if (pk->n == pk->cap) {
		pk->cap = pk->cap == 0 ? 65536 : 2 * pk->cap;
		pk->ts_ns = xrealloc(pk->ts_ns, pk->cap, sizeof(*pk->ts_ns));
		pk->wire = xrealloc(pk->wire, pk->cap, sizeof(*pk->wire));
		pk->flow = xrealloc(pk->flow, pk->cap, sizeof(*pk->flow));
	}
	pk->ts_ns[pk->n] = ts_ns;
	pk->wire[pk->n] = wire;
	pk->flow[pk->n] = flow;
	pk->n++;
}

static void
account_seq(struct flow *f, uint32_t mark_flow, uint32_t seq)
{
	if (!f->mark_known) {
		f->mark_known = true;
		f->mark_flow = mark_flow;
	} else if (mark_flow != f->mark_flow) {
		return;
	} else if (seq < f->last_seq) {
		f->seq_errors++;
	}
	f->last_seq = seq;
}

static void
read_capture(const struct cfg *c, struct flow_table *t, struct pkts *pk,
	     struct totals *tot)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint64_t seen = 0, ts;
	uint32_t idx, mflow, seq, wire;
	struct parse ps;
	struct flow *f;
	pcap_t *p;
	int dlt, rc;

	p = pcap_open_offline_with_tstamp_precision(
		c->file, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (p == NULL)
		fail(EXIT_USAGE, "cannot read '%s': %s", c->file, errbuf);
	dlt = pcap_datalink(p);
	/* each exit closes the capture first: nothing left to exit() */
	if (!dlt_supported(dlt)) {
		pcap_close(p);
		fail(EXIT_USAGE,
		     "cannot read '%s': link type %d (%s) is not Ethernet, raw "
		     "IP or Linux cooked",
		     c->file, dlt,
		     pcap_datalink_val_to_name(dlt) != NULL
			     ? pcap_datalink_val_to_name(dlt)
			     : "unknown");
	}

	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		if (seen++ < c->skip) {
			tot->skipped++;
			continue;
		}
		ps.p = data;
		ps.len = h->caplen;
		parse_frame(&ps, dlt);
		tot->cls[ps.result]++;
		idx = table_find_or_add(t, &ps.key);
		f = &t->flows[idx];

		/* the file's seconds are unsigned 32-bit; libpcap sign-extends */
		ts = (uint64_t)(uint32_t)h->ts.tv_sec * 1000000000ULL +
		     (uint64_t)h->ts.tv_usec;
		wire = h->len + c->wire_overhead;
		/* first_ns and last_ns: from the packet array in compute(),
		 * after --time-scale */
		f->packets++;
		f->bytes += h->len;
		f->wire_bytes += wire;
		f->last_wire = wire;
		if (find_mark(&ps, &mflow, &seq))
			account_seq(f, mflow, seq);
		pkts_push(pk, ts, wire, idx);
	}
	if (rc == PCAP_ERROR) {
		snprintf(errbuf, sizeof(errbuf), "%s", pcap_geterr(p));
		pcap_close(p);
		fail(EXIT_USAGE, "cannot read '%s': %s (after %" PRIu64
				 " packets)",
		     c->file, errbuf, seen);
	}
	pcap_close(p);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least p% of values <= it. */
static uint64_t
nearest_rank(const uint64_t *sorted, uint64_t n, unsigned int pct)
{
	uint64_t rank = (pct * n + 99) / 100;

	return sorted[rank == 0 ? 0 : rank - 1];
}

static void
gap_stats_of(uint64_t *gaps, uint64_t n, struct gap_stats *g)
{
	memset(g, 0, sizeof(*g));
	if (n == 0)
		return;
	qsort(gaps, n, sizeof(*gaps), cmp_u64);
	g->min_ns = gaps[0];
	g->p50_ns = nearest_rank(gaps, n, 50);
	g->p99_ns = nearest_rank(gaps, n, 99);
	g->max_ns = gaps[n - 1];
}

static double
rate_of(uint64_t wire_bytes_but_last, uint64_t duration_ns)
{
	if (duration_ns == 0)
		return 0;
	return (double)wire_bytes_but_last * 8.0 * NS_PER_S /
	       (double)duration_ns;
}

struct ts_wire {
	uint64_t ts_ns;
	uint64_t wire;
};

static int
cmp_ts_wire(const void *a, const void *b)
{
	const struct ts_wire *x = a, *y = b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

/* Most bytes in any [t, t + w) starting at a packet; @p tw in time order. */
static uint64_t
window_max_bytes(const struct ts_wire *tw, size_t n, uint64_t w)
{
	uint64_t sum = 0, best = 0;
	size_t i, j = 0;

	for (i = 0; i < n; i++) {
		if (j < i) {
			j = i;
			sum = 0;
		}
		while (j < n && tw[j].ts_ns - tw[i].ts_ns < w)
			sum += tw[j++].wire;
		if (sum > best)
			best = sum;
		sum -= tw[i].wire;
	}
	return best;
}

static void
compute(const struct cfg *c, struct flow_table *t, const struct pkts *pk,
	struct totals *tot)
{
	uint64_t *gaps, *flow_gaps, off = 0, g;
	struct ts_wire *tw;
	struct flow *f;
	unsigned int k;
	size_t i;
	double allowed;

	tot->packets = pk->n;
	/* each flow's first and last time, as every other time here, from
	 * the packet array (so scaled by --time-scale like the rest) */
	for (i = pk->n; i-- > 0;)
		t->flows[pk->flow[i]].first_ns = pk->ts_ns[i];
	for (i = 0; i < pk->n; i++)
		t->flows[pk->flow[i]].last_ns = pk->ts_ns[i];
	for (i = 0; i < t->n; i++) {
		f = &t->flows[i];
		tot->bytes += f->bytes;
		tot->wire_bytes += f->wire_bytes;
		tot->seq_errors += f->seq_errors;
		f->gap_off = off;
		off += f->packets - 1; /* every flow has a packet */
		if (f->last_ns > f->first_ns)
			f->rate_bps = rate_of(f->wire_bytes - f->last_wire,
					      f->last_ns - f->first_ns);
	}
	if (pk->n == 0)
		return;

	tot->first_ns = pk->ts_ns[0];
	tot->last_ns = pk->ts_ns[pk->n - 1];
	if (tot->last_ns > tot->first_ns) {
		tot->duration_ns = tot->last_ns - tot->first_ns;
		tot->rate_bps = rate_of(tot->wire_bytes - pk->wire[pk->n - 1],
					tot->duration_ns);
	}

	/* gaps of the capture and of each flow, in one pass */
	gaps = xrealloc(NULL, pk->n, sizeof(*gaps));
	flow_gaps = xrealloc(NULL, off + 1, sizeof(*flow_gaps));
	for (i = 0; i < pk->n; i++) {
		if (i > 0) {
			if (pk->ts_ns[i] < pk->ts_ns[i - 1]) {
				tot->ts_backwards++;
				g = 0;
			} else {
				g = pk->ts_ns[i] - pk->ts_ns[i - 1];
			}
			gaps[i - 1] = g;
			if (g < c->ideal_gap_ns)
				tot->gaps_below++;
		}
		f = &t->flows[pk->flow[i]];
		if (f->gap_fill++ > 0) {
			g = pk->ts_ns[i] >= f->last_ns ? pk->ts_ns[i] - f->last_ns
							: 0;
			flow_gaps[f->gap_off + f->gap_fill - 2] = g;
		}
		/* last_ns is the previous timestamp during this pass */
		f->last_ns = pk->ts_ns[i];
	}
	gap_stats_of(gaps, pk->n - 1, &tot->gap);
	for (i = 0; i < t->n; i++) {
		f = &t->flows[i];
		gap_stats_of(flow_gaps + f->gap_off, f->packets - 1, &f->gap);
	}
	free(flow_gaps);
	free(gaps);

	/* windows, over the packets in time order */
	tw = xrealloc(NULL, pk->n, sizeof(*tw));
	for (i = 0; i < pk->n; i++) {
		tw[i].ts_ns = pk->ts_ns[i];
		tw[i].wire = pk->wire[i];
	}
	if (tot->ts_backwards > 0)
		qsort(tw, pk->n, sizeof(*tw), cmp_ts_wire);
	tot->rate_ref_bps = c->rate_bps > 0 ? c->rate_bps : tot->rate_bps;
	for (k = 0; k < c->n_windows; k++) {
		struct window_res *w = &tot->win[k];

		w->window_ns = c->windows_ns[k];
		w->max_bytes = window_max_bytes(tw, pk->n, w->window_ns);
		allowed = tot->rate_ref_bps * (double)w->window_ns /
			  (8.0 * NS_PER_S);
		w->burst_above_rate_bytes = (double)w->max_bytes > allowed
						    ? (double)w->max_bytes -
							      allowed
						    : 0;
	}
	free(tw);
}

static const struct flow *sort_base;

/* Bytes descending, then first seen first. */
static int
cmp_flow_idx(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct flow *fx = &sort_base[x], *fy = &sort_base[y];

	if (fx->bytes != fy->bytes)
		return fx->bytes > fy->bytes ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void
key_format(const struct flow_key *k, char *buf, size_t len)
{
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	const char *l4 = NULL;
	int af = k->family == 4 ? AF_INET : AF_INET6;

	if (k->family == 0) {
		snprintf(buf, len, "non-ip");
		return;
	}
	inet_ntop(af, k->src_addr, src, sizeof(src));
	inet_ntop(af, k->dst_addr, dst, sizeof(dst));
	if (k->proto == PCR_PCAP_PROTO_TCP)
		l4 = "tcp";
	else if (k->proto == PCR_PCAP_PROTO_UDP)
		l4 = "udp";
	else if (k->proto == PCR_PCAP_PROTO_SCTP)
		l4 = "sctp";
	if (l4 == NULL || (k->src_port == 0 && k->dst_port == 0))
		snprintf(buf, len, "ipv%u proto %u %s > %s", k->family,
			 k->proto, src, dst);
	else if (af == AF_INET)
		snprintf(buf, len, "%s %s:%u > %s:%u", l4, src, k->src_port,
			 dst, k->dst_port);
	else
		snprintf(buf, len, "%s [%s]:%u > [%s]:%u", l4, src,
			 k->src_port, dst, k->dst_port);
}

static void
json_string(const char *s)
{
	putchar('"');
	for (; *s != '\0'; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void
json_gaps(const struct gap_stats *g)
{
	printf("{\"min\":%" PRIu64 ",\"p50\":%" PRIu64 ",\"p99\":%" PRIu64
	       ",\"max\":%" PRIu64 "}",
	       g->min_ns, g->p50_ns, g->p99_ns, g->max_ns);
}

static void
print_json(const struct cfg *c, const struct flow_table *t,
	   const struct totals *tot, const uint32_t *order, size_t shown)
{
	char key[128];
	unsigned int k;
	size_t i;

	printf("{\"file\":");
	json_string(c->file);
	printf(",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64
	       ",\"wire_bytes\":%" PRIu64 ",\"wire_overhead\":%u"
	       ",\"skipped\":%" PRIu64 ",\"first_ns\":%" PRIu64
	       ",\"last_ns\":%" PRIu64 ",\"duration_ns\":%" PRIu64
	       ",\"rate_bps\":%.1f,\"gap_ns\":",
	       tot->packets, tot->bytes, tot->wire_bytes, c->wire_overhead,
	       tot->skipped, tot->first_ns, tot->last_ns, tot->duration_ns,
	       tot->rate_bps);
	json_gaps(&tot->gap);
	printf(",\"ideal_gap_ns\":%" PRIu64 ",\"gaps_below\":%" PRIu64
	       ",\"ts_backwards\":%" PRIu64 ",\"seq_errors\":%" PRIu64
	       ",\"classify\":{",
	       c->ideal_gap_ns, tot->gaps_below, tot->ts_backwards,
	       tot->seq_errors);
	for (k = 0; k < CLS_MAX; k++)
		printf("%s\"%s\":%" PRIu64, k ? "," : "", cls_names[k],
		       tot->cls[k]);
	printf("},\"rate_ref_bps\":%.1f,\"windows\":[", tot->rate_ref_bps);
	for (k = 0; k < c->n_windows; k++)
		printf("%s{\"window_ns\":%" PRIu64 ",\"max_bytes\":%" PRIu64
		       ",\"burst_above_rate_bytes\":%.1f}",
		       k ? "," : "", tot->win[k].window_ns,
		       tot->win[k].max_bytes,
		       tot->win[k].burst_above_rate_bytes);
	printf("],\"flow_count\":%zu,\"flows\":[", t->n);
	for (i = 0; i < shown; i++) {
		const struct flow *f = &t->flows[order[i]];

		key_format(&f->key, key, sizeof(key));
		printf("%s{\"key\":", i ? "," : "");
		json_string(key);
		printf(",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64
		       ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64
		       ",\"rate_bps\":%.1f,\"gap_ns\":",
		       f->packets, f->bytes, f->first_ns, f->last_ns,
		       f->rate_bps);
		json_gaps(&f->gap);
		printf(",\"seq_errors\":%" PRIu64 "}", f->seq_errors);
	}
	printf("]}\n");
}

static void
print_text(const struct cfg *c, const struct flow_table *t,
	   const struct totals *tot, const uint32_t *order, size_t shown)
{
	char key[128];
	unsigned int k;
	size_t i;

	printf("file          %s\n", c->file);
	printf("packets       %" PRIu64 " (skipped %" PRIu64 ")\n",
	       tot->packets, tot->skipped);
	printf("bytes         %" PRIu64 " (wire %" PRIu64 ", overhead %u per "
	       "packet)\n",
	       tot->bytes, tot->wire_bytes, c->wire_overhead);
	printf("time ns       %" PRIu64 " .. %" PRIu64 " (duration %" PRIu64
	       ")\n",
	       tot->first_ns, tot->last_ns, tot->duration_ns);
	printf("rate          %.1f bit/s (%.6f Gbit/s)\n", tot->rate_bps,
	       tot->rate_bps / 1e9);
	printf("gap ns        min %" PRIu64 "  p50 %" PRIu64 "  p99 %" PRIu64
	       "  max %" PRIu64 "\n",
	       tot->gap.min_ns, tot->gap.p50_ns, tot->gap.p99_ns,
	       tot->gap.max_ns);
	if (c->ideal_gap_ns > 0)
		printf("gaps below    %" PRIu64 " (< %" PRIu64 " ns)\n",
		       tot->gaps_below, c->ideal_gap_ns);
	printf("seq errors    %" PRIu64 "\n", tot->seq_errors);
	printf("ts backwards  %" PRIu64 "\n", tot->ts_backwards);
	printf("classify     ");
	for (k = 0; k < CLS_MAX; k++)
		printf(" %s %" PRIu64, cls_names[k], tot->cls[k]);
	printf("\n\n%14s %14s %24s   (rate %.1f bit/s%s)\n", "window_ns",
	       "max_bytes", "burst_above_rate_bytes", tot->rate_ref_bps,
	       c->rate_bps > 0 ? ", --rate" : ", achieved");
	for (k = 0; k < c->n_windows; k++)
		printf("%14" PRIu64 " %14" PRIu64 " %24.1f\n",
		       tot->win[k].window_ns, tot->win[k].max_bytes,
		       tot->win[k].burst_above_rate_bytes);
	printf("\nflows: %zu", t->n);
	if (shown < t->n)
		printf(" (largest %zu shown)", shown);
	printf("\n%10s %12s %16s %10s %10s %10s %10s %8s  %s\n", "packets",
	       "bytes", "rate_bps", "gap_min", "gap_p50", "gap_p99", "gap_max",
	       "seq_err", "key");
	for (i = 0; i < shown; i++) {
		const struct flow *f = &t->flows[order[i]];

		key_format(&f->key, key, sizeof(key));
		printf("%10" PRIu64 " %12" PRIu64 " %16.1f %10" PRIu64
		       " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %8" PRIu64
		       "  %s\n",
		       f->packets, f->bytes, f->rate_bps, f->gap.min_ns,
		       f->gap.p50_ns, f->gap.p99_ns, f->gap.max_ns,
		       f->seq_errors, key);
	}
}

int
main(int argc, char **argv)
{
	struct flow_table table = {0};
	struct pkts pk = {0};
	struct totals tot;
	struct cfg cfg;
	uint32_t *order;
	size_t i, shown;

	parse_args(argc, argv, &cfg);
	memset(&tot, 0, sizeof(tot));
	read_capture(&cfg, &table, &pk, &tot);
	if (cfg.time_scale != 1)
		for (i = 1; i < pk.n; i++)
			pk.ts_ns[i] = pk.ts_ns[0] +
				      (uint64_t)llround((double)(int64_t)(pk.ts_ns[i] - pk.ts_ns[0]) *
							cfg.time_scale);
	compute(&cfg, &table, &pk, &tot);

	order = xrealloc(NULL, table.n + 1, sizeof(*order));
	for (i = 0; i < table.n; i++)
		order[i] = (uint32_t)i;
	sort_base = table.flows;
	qsort(order, table.n, sizeof(*order), cmp_flow_idx);
	shown = table.n;
	if (cfg.flows_top_given && cfg.flows_top < shown)
		shown = (size_t)cfg.flows_top;

	if (cfg.json)
		print_json(&cfg, &table, &tot, order, shown);
	else
		print_text(&cfg, &table, &tot, order, shown);
	if (fflush(stdout) != 0 || ferror(stdout))
		fail(EXIT_FAILURE, "write error on stdout: %s",
		     strerror(errno));

	free(order);
	free(table.flows);
	free(table.slots);
	free(pk.ts_ns);
	free(pk.wire);
	free(pk.flow);
	return EXIT_SUCCESS;
}
