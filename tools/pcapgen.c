/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer-pcapgen: writes nanosecond pcap files of synthetic traffic for
 * testing the pacer and pacer-pcapstat.
 *
 * Schedule: packet i (0-based) gets timestamp start_ns + i * gap_ns. When
 * --malformed kinds are given, every malformed_every-th packet (indices
 * every-1, 2*every-1, ...) is a malformed packet, the kinds taking turns
 * in the order given; all other packets are flow packets, handed to the
 * flows round-robin (the n-th flow packet belongs to flow n % flows).
 * --count counts both.
 *
 * Flow packets: Ethernet (02:00:00:00:00:01 > 02:00:00:00:00:02), optional
 * 802.1ad outer tag and 802.1Q tag, IPv4 (no options, TTL 64, id counting
 * up) or IPv6 (hop limit 64), then UDP or TCP (20-byte header, PSH|ACK,
 * sequence numbers counting payload bytes). Flow i uses source port
 * sport + i; nothing else differs between flows. The L4 payload starts with
 * the marker described in pcr_pcap_flow.h: flow index at payload offset 0,
 * per-flow sequence number at offset 4, magic "PCRG" at offset 8, all
 * big-endian; a deterministic byte pattern follows. IPv4 header, UDP and
 * TCP checksums are correct.
 *
 * Malformed packets use flow 0's addresses and ports (IPv4 or IPv6 ones as
 * the kind needs), carry no marker, and are at least as long as their own
 * headers (the drawn frame size is raised if needed). Checksums are correct
 * wherever the kind leaves a checksum meaningful.
 */

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pcap/pcap.h>

#include "pcr_pcap_flow.h"
#include "pcr_tool.h"

#define PROG       "pacer-pcapgen"
const char pcr_tool_name[] = PROG;

#define DEF_FLOWS       1
#define DEF_COUNT       1000
#define DEF_SIZE        1000
#define DEF_SEED        1
#define DEF_SPORT       10000
#define DEF_DPORT       5201
#define DEF_GAP_NS      1000
#define DEF_START_NS    (1700000000ULL * 1000000000ULL)
#define DEF_MAL_EVERY   2
#define DEF_SRC4        "198.18.0.1"
#define DEF_DST4        "198.19.0.1"
#define DEF_SRC6        "2001:db8::1"
#define DEF_DST6        "2001:db8::2"
#define MAX_MALFORMED   64
#define NS_PER_S        1000000000ULL
/* a classic pcap record holds 32-bit seconds */
#define MAX_TS_NS       ((uint64_t)UINT32_MAX * NS_PER_S + NS_PER_S - 1)

#define IPV4_OPT_LEN    12 /* ipv4-options: IHL 8 */
#define IPV6_EXT_LEN    40 /* ipv6-ext: hop-by-hop + routing + dstopts */
#define IPV6_EXT_TRUNC  8  /* ipv6-ext-trunc: what the frame holds, at least */
#define FRAG_MIN_DATA   24 /* data bytes per fragment, multiple of 8 */
#define ARP_LEN         28
#define SHORT_LEN       10
#define MPLS_LABELS     2

enum gen_malformed {
	MAL_SHORT,
	MAL_BAD_IHL,
	MAL_BAD_LEN,
	MAL_IPV4_OPTIONS,
	MAL_FRAG,
	MAL_IPV6_EXT,
	MAL_IPV6_EXT_TRUNC,
	MAL_MPLS,
	MAL_ARP,
	MAL_JUMBO,
	MAL_KIND_MAX,
};

static const char *const mal_names[MAL_KIND_MAX] = {
	[MAL_SHORT] = "short",
	[MAL_BAD_IHL] = "bad-ihl",
	[MAL_BAD_LEN] = "bad-len",
	[MAL_IPV4_OPTIONS] = "ipv4-options",
	[MAL_FRAG] = "frag",
	[MAL_IPV6_EXT] = "ipv6-ext",
	[MAL_IPV6_EXT_TRUNC] = "ipv6-ext-trunc",
	[MAL_MPLS] = "mpls",
	[MAL_ARP] = "arp",
	[MAL_JUMBO] = "jumbo",
};

/* Configuration, read-only once the options are parsed. */
struct gen_cfg {
	const char *output;
	bool append;
	uint32_t flows;
	uint64_t count;
	uint32_t size_min; /* frame bytes, FCS excluded */
	uint32_t size_max;
	uint64_t seed;
	uint8_t proto; /* PCR_PCAP_PROTO_UDP or _TCP */
	bool ipv6;
	int vlan; /* 802.1Q id, -1 for none */
	int qinq; /* 802.1ad outer id, -1 for none */
	uint8_t tos; /* IPv4 TOS / IPv6 traffic class (DSCP, ECN) of flows */
	uint8_t src4[4], dst4[4];
	uint8_t src6[16], dst6[16];
	uint16_t sport; /* flow i: sport + i */
	uint16_t dport;
	uint64_t gap_ns;
	uint64_t start_ns;
	bool start_given;
	uint32_t seq_start;
	enum gen_malformed mal[MAX_MALFORMED];
	unsigned int n_mal;
	uint64_t mal_every;
};

/* Generator state and counters. */
struct gen_state {
	const struct gen_cfg *cfg;
	uint64_t rng;
	uint32_t *seq;      /* per flow: next marker sequence number */
	uint32_t *tcp_seq;  /* per flow: next TCP sequence number */
	uint32_t mal_tcp_seq;
	uint16_t ip_id;
	uint64_t mal_turn;  /* malformed packets made so far */
	uint64_t frag_turn; /* frag packets made so far */
	uint32_t frag_data; /* data bytes per fragment of the current datagram */
	uint16_t frag_id;
	uint64_t packets;
	uint64_t bytes;
	uint64_t malformed;
	uint8_t frag_dgram[2 * PCR_PCAP_FRAME_MAX]; /* L4 of the datagram */
};

static void
usage(FILE *out)
{
	fprintf(out,
		"Usage: " PROG " -o FILE [options]\n"
		"Write a nanosecond pcap of synthetic UDP/TCP flows.\n"
		"\n"
		"  -o, --output FILE     pcap to write (required; - for stdout)\n"
		"      --append          append to FILE (a nanosecond pcap, or\n"
		"                        absent/empty); timestamps continue after\n"
		"                        its last packet unless --start-ns\n"
		"      --flows N         flows, source ports sport..sport+N-1 (%d)\n"
		"      --count N         packets in all, malformed ones included (%d)\n"
		"      --size BYTES      frame length, Ethernet header included,\n"
		"                        FCS excluded, %d..%d (%d)\n"
		"      --size-min BYTES  with --size-max: sizes uniformly random\n"
		"      --size-max BYTES  in [min, max], deterministic per --seed\n"
		"      --seed N          PRNG seed for random sizes (%d)\n"
		"      --proto udp|tcp   L4 protocol (udp)\n"
		"      --ipv6            IPv6 instead of IPv4\n"
		"      --vlan ID         802.1Q tag with this id (0..4095)\n"
		"      --qinq ID         also an outer 802.1ad (0x88a8) tag; needs --vlan\n"
		"      --tos N           IPv4 TOS / IPv6 traffic class of flow packets,\n"
		"                        DSCP and ECN (1 ECT(1), 2 ECT(0), 3 CE) (0)\n"
		"      --src IP          source address (%s, or %s with --ipv6)\n"
		"      --dst IP          destination address (%s, or %s)\n"
		"      --sport N         source port of flow 0; flow i uses sport+i (%d)\n"
		"      --dport N         destination port (%d)\n"
		"      --gap-ns NS       timestamp step between packets (%d)\n"
		"      --start-ns NS     timestamp of the first packet (%llu)\n"
		"      --seq-start N     first marker sequence number of each flow (0)\n"
		"      --malformed KIND  interleave malformed packets; repeatable, the\n"
		"                        kinds take turns. KIND: short, bad-ihl, bad-len,\n"
		"                        ipv4-options, frag, ipv6-ext, ipv6-ext-trunc,\n"
		"                        mpls, arp, jumbo\n"
		"      --malformed-every N  every N-th packet is malformed (%d)\n"
		"  -h, --help            this text\n"
		"\n"
		"The L4 payload of flow packets starts with the flow index (offset 0),\n"
		"the per-flow sequence number (offset 4) and the magic \"PCRG\"\n"
		"(offset 8), each 32-bit big-endian. Malformed packets have no marker.\n"
		"Prints one summary line to stderr.\n",
		DEF_FLOWS, DEF_COUNT, PCR_PCAP_FRAME_MIN, PCR_PCAP_FRAME_MAX,
		DEF_SIZE, DEF_SEED, DEF_SRC4, DEF_SRC6, DEF_DST4, DEF_DST6,
		DEF_SPORT, DEF_DPORT, DEF_GAP_NS, DEF_START_NS, DEF_MAL_EVERY);
}

/* An address given to --src/--dst; returns the family (4 or 6). */
static int
parse_addr(const char *opt, const char *s, uint8_t *a4, uint8_t *a6)
{
	if (inet_pton(AF_INET, s, a4) == 1)
		return 4;
	if (inet_pton(AF_INET6, s, a6) == 1)
		return 6;
	usage_error("bad %s '%s': not an IPv4 or IPv6 address", opt, s);
}

static enum gen_malformed
parse_malformed(const char *s)
{
	unsigned int k;

	for (k = 0; k < MAL_KIND_MAX; k++)
		if (strcmp(s, mal_names[k]) == 0)
			return k;
	usage_error("bad --malformed '%s': kinds are short, bad-ihl, bad-len, "
		    "ipv4-options, frag, ipv6-ext, ipv6-ext-trunc, mpls, arp, "
		    "jumbo",
		    s);
}

enum {
	OPT_APPEND = 256,
	OPT_FLOWS,
	OPT_COUNT,
	OPT_SIZE,
	OPT_SIZE_MIN,
	OPT_SIZE_MAX,
	OPT_SEED,
	OPT_PROTO,
	OPT_IPV6,
	OPT_VLAN,
	OPT_QINQ,
	OPT_TOS,
	OPT_SRC,
	OPT_DST,
	OPT_SPORT,
	OPT_DPORT,
	OPT_GAP_NS,
	OPT_START_NS,
	OPT_SEQ_START,
	OPT_MALFORMED,
	OPT_MAL_EVERY,
};

static const struct option long_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"append", no_argument, NULL, OPT_APPEND},
	{"flows", required_argument, NULL, OPT_FLOWS},
	{"count", required_argument, NULL, OPT_COUNT},
	{"size", required_argument, NULL, OPT_SIZE},
	{"size-min", required_argument, NULL, OPT_SIZE_MIN},
	{"size-max", required_argument, NULL, OPT_SIZE_MAX},
	{"seed", required_argument, NULL, OPT_SEED},
	{"proto", required_argument, NULL, OPT_PROTO},
	{"ipv6", no_argument, NULL, OPT_IPV6},
	{"vlan", required_argument, NULL, OPT_VLAN},
	{"qinq", required_argument, NULL, OPT_QINQ},
	{"tos", required_argument, NULL, OPT_TOS},
	{"src", required_argument, NULL, OPT_SRC},
	{"dst", required_argument, NULL, OPT_DST},
	{"sport", required_argument, NULL, OPT_SPORT},
	{"dport", required_argument, NULL, OPT_DPORT},
	{"gap-ns", required_argument, NULL, OPT_GAP_NS},
	{"start-ns", required_argument, NULL, OPT_START_NS},
	{"seq-start", required_argument, NULL, OPT_SEQ_START},
	{"malformed", required_argument, NULL, OPT_MALFORMED},
	{"malformed-every", required_argument, NULL, OPT_MAL_EVERY},
	{"help", no_argument, NULL, 'h'},
	{NULL, 0, NULL, 0},
};

/* Bytes of Ethernet header and tags. */
static size_t
l2_len(const struct gen_cfg *c)
{
	return PCR_PCAP_ETH_HLEN + (c->vlan >= 0 ? PCR_PCAP_VLAN_HLEN : 0) +
	       (c->qinq >= 0 ? PCR_PCAP_VLAN_HLEN : 0);
}

static size_t
l4_hlen(const struct gen_cfg *c)
{
	return c->proto == PCR_PCAP_PROTO_TCP ? PCR_PCAP_TCP_HLEN
					      : PCR_PCAP_UDP_HLEN;
}

static void
parse_args(int argc, char **argv, struct gen_cfg *c)
{
	const char *src = NULL, *dst = NULL;
	bool size_given = false, min_given = false, max_given = false;
	uint8_t a4[4], a6[16];
	int opt, src_af = 0, dst_af = 0;
	size_t need;

	memset(c, 0, sizeof(*c));
	c->flows = DEF_FLOWS;
	c->count = DEF_COUNT;
	c->size_min = c->size_max = DEF_SIZE;
	c->seed = DEF_SEED;
	c->proto = PCR_PCAP_PROTO_UDP;
	c->vlan = -1;
	c->qinq = -1;
	c->sport = DEF_SPORT;
	c->dport = DEF_DPORT;
	c->gap_ns = DEF_GAP_NS;
	c->start_ns = DEF_START_NS;
	c->mal_every = DEF_MAL_EVERY;
	inet_pton(AF_INET, DEF_SRC4, c->src4);
	inet_pton(AF_INET, DEF_DST4, c->dst4);
	inet_pton(AF_INET6, DEF_SRC6, c->src6);
	inet_pton(AF_INET6, DEF_DST6, c->dst6);

	while ((opt = getopt_long(argc, argv, "o:h", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			c->output = optarg;
			break;
		case OPT_APPEND:
			c->append = true;
			break;
		case OPT_FLOWS:
			c->flows = parse_u64("--flows", optarg, 1, 65535);
			break;
		case OPT_COUNT:
			c->count = parse_u64("--count", optarg, 0, UINT64_MAX);
			break;
		case OPT_SIZE:
			c->size_min = c->size_max = parse_u64(
				"--size", optarg, PCR_PCAP_FRAME_MIN,
				PCR_PCAP_FRAME_MAX);
			size_given = true;
			break;
		case OPT_SIZE_MIN:
			c->size_min = parse_u64("--size-min", optarg,
						PCR_PCAP_FRAME_MIN,
						PCR_PCAP_FRAME_MAX);
			min_given = true;
			break;
		case OPT_SIZE_MAX:
			c->size_max = parse_u64("--size-max", optarg,
						PCR_PCAP_FRAME_MIN,
						PCR_PCAP_FRAME_MAX);
			max_given = true;
			break;
		case OPT_SEED:
			c->seed = parse_u64("--seed", optarg, 0, UINT64_MAX);
			break;
		case OPT_PROTO:
			if (strcmp(optarg, "udp") == 0)
				c->proto = PCR_PCAP_PROTO_UDP;
			else if (strcmp(optarg, "tcp") == 0)
				c->proto = PCR_PCAP_PROTO_TCP;
			else
				usage_error("bad --proto '%s': must be udp or "
					    "tcp",
					    optarg);
			break;
		case OPT_IPV6:
			c->ipv6 = true;
			break;
		case OPT_VLAN:
			c->vlan = parse_u64("--vlan", optarg, 0, 4095);
			break;
		case OPT_QINQ:
			c->qinq = parse_u64("--qinq", optarg, 0, 4095);
			break;
		case OPT_TOS:
			c->tos = (uint8_t)parse_u64("--tos", optarg, 0, 255);
			break;
		case OPT_SRC:
			src = optarg;
			src_af = parse_addr("--src", optarg, a4, a6);
			if (src_af == 4)
				memcpy(c->src4, a4, sizeof(a4));
			else
				memcpy(c->src6, a6, sizeof(a6));
			break;
		case OPT_DST:
			dst = optarg;
			dst_af = parse_addr("--dst", optarg, a4, a6);
			if (dst_af == 4)
				memcpy(c->dst4, a4, sizeof(a4));
			else
				memcpy(c->dst6, a6, sizeof(a6));
			break;
		case OPT_SPORT:
			c->sport = parse_u64("--sport", optarg, 1, 65535);
			break;
		case OPT_DPORT:
			c->dport = parse_u64("--dport", optarg, 1, 65535);
			break;
		case OPT_GAP_NS:
			c->gap_ns = parse_u64("--gap-ns", optarg, 0, MAX_TS_NS);
			break;
		case OPT_START_NS:
			c->start_ns =
				parse_u64("--start-ns", optarg, 0, MAX_TS_NS);
			c->start_given = true;
			break;
		case OPT_SEQ_START:
			c->seq_start =
				parse_u64("--seq-start", optarg, 0, UINT32_MAX);
			break;
		case OPT_MALFORMED:
			if (c->n_mal == MAX_MALFORMED)
				usage_error("too many --malformed (at most %d)",
					    MAX_MALFORMED);
			c->mal[c->n_mal++] = parse_malformed(optarg);
			break;
		case OPT_MAL_EVERY:
			c->mal_every = parse_u64("--malformed-every", optarg, 1,
						 UINT64_MAX);
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			/* getopt_long has said what was wrong */
			fprintf(stderr, "Try '" PROG " --help'.\n");
			exit(EXIT_USAGE);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (c->output == NULL)
		usage_error("missing -o/--output FILE");

	if (size_given && (min_given || max_given))
		usage_error("--size and --size-min/--size-max exclude each "
			    "other");
	if (min_given != max_given)
		usage_error("--size-min and --size-max go together");
	if (c->size_min > c->size_max)
		usage_error("bad --size-min %u: larger than --size-max %u",
			    c->size_min, c->size_max);
	if (c->qinq >= 0 && c->vlan < 0)
		usage_error("--qinq %d needs --vlan ID (the inner tag)",
			    c->qinq);
	if (src_af != 0 && src_af != (c->ipv6 ? 6 : 4))
		usage_error("bad --src '%s': an IPv%d address, but the flows "
			    "are IPv%d%s",
			    src, src_af, c->ipv6 ? 6 : 4,
			    c->ipv6 ? "" : " (add --ipv6)");
	if (dst_af != 0 && dst_af != (c->ipv6 ? 6 : 4))
		usage_error("bad --dst '%s': an IPv%d address, but the flows "
			    "are IPv%d%s",
			    dst, dst_af, c->ipv6 ? 6 : 4,
			    c->ipv6 ? "" : " (add --ipv6)");
	if ((uint32_t)c->sport + c->flows - 1 > 65535)
		usage_error("bad --flows %u: with --sport %u the source ports "
			    "would run to %u, past 65535",
			    c->flows, c->sport, c->sport + c->flows - 1);

	need = l2_len(c) +
	       (c->ipv6 ? PCR_PCAP_IPV6_HLEN : PCR_PCAP_IPV4_HLEN) +
	       l4_hlen(c) + PCR_PCAP_MARK_LEN;
	if (c->size_min < need)
		usage_error("bad %s %u: %s/%s%s frames with the payload marker "
			    "need at least %zu bytes",
			    min_given ? "--size-min" : "--size", c->size_min,
			    c->ipv6 ? "ipv6" : "ipv4",
			    c->proto == PCR_PCAP_PROTO_TCP ? "tcp" : "udp",
			    c->qinq >= 0	   ? " with two VLAN tags"
			    : c->vlan >= 0 ? " with a VLAN tag"
					   : "",
			    need);
}

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t
gen_rand(struct gen_state *st)
{
	uint64_t z = (st->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t
gen_size(struct gen_state *st)
{
	const struct gen_cfg *c = st->cfg;

	if (c->size_min == c->size_max)
		return c->size_min;
	return c->size_min +
	       (uint32_t)(gen_rand(st) % (c->size_max - c->size_min + 1));
}

/* One's complement sum of big-endian 16-bit words; odd tail zero-padded. */
static uint32_t
csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		sum += pcr_pcap_get_be16(p + i);
		sum = (sum & 0xffff) + (sum >> 16);
	}
	if (len & 1) {
		sum += (uint32_t)p[len - 1] << 8;
		sum = (sum & 0xffff) + (sum >> 16);
	}
	return sum;
}

static uint16_t
csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t
pseudo4(const struct gen_cfg *c, uint8_t proto, uint32_t l4len)
{
	uint32_t sum = 0;

	sum = csum_add(sum, c->src4, 4);
	sum = csum_add(sum, c->dst4, 4);
	sum += proto;
	sum += l4len;
	return sum;
}

static uint32_t
pseudo6(const struct gen_cfg *c, uint8_t proto, uint32_t l4len)
{
	uint32_t sum = 0;

	sum = csum_add(sum, c->src6, 16);
	sum = csum_add(sum, c->dst6, 16);
	sum += l4len >> 16;
	sum += l4len & 0xffff;
	sum += proto;
	return sum;
}

/* Ethernet header and tags; returns the L3 offset. */
static size_t
put_l2(uint8_t *f, const struct gen_cfg *c, uint16_t etype, bool broadcast)
{
	static const uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0x02};
	static const uint8_t smac[6] = {0x02, 0, 0, 0, 0, 0x01};
	size_t off = 12;

	if (broadcast)
		memset(f, 0xff, 6);
	else
		memcpy(f, dmac, 6);
	memcpy(f + 6, smac, 6);
	if (c->qinq >= 0) {
		pcr_pcap_put_be16(f + off, PCR_PCAP_ETYPE_QINQ);
		pcr_pcap_put_be16(f + off + 2, (uint16_t)c->qinq);
		off += PCR_PCAP_VLAN_HLEN;
	}
	if (c->vlan >= 0) {
		pcr_pcap_put_be16(f + off, PCR_PCAP_ETYPE_VLAN);
		pcr_pcap_put_be16(f + off + 2, (uint16_t)c->vlan);
		off += PCR_PCAP_VLAN_HLEN;
	}
	pcr_pcap_put_be16(f + off, etype);
	return off + 2;
}

/*
 * L4 header and payload, @p len bytes at @p p, checksummed with pseudo
 * header sum @p psum. @p mark_seq is NULL for no marker.
 */
static void
put_l4(uint8_t *p, size_t len, uint8_t proto, uint16_t sport, uint16_t dport,
       uint32_t tcp_seq, uint32_t flow, const uint32_t *mark_seq,
       uint32_t psum)
{
	size_t hlen = proto == PCR_PCAP_PROTO_TCP ? PCR_PCAP_TCP_HLEN
						  : PCR_PCAP_UDP_HLEN;
	uint8_t *pl = p + hlen;
	size_t k, plen = len - hlen;
	uint16_t csum;

	memset(p, 0, hlen);
	pcr_pcap_put_be16(p, sport);
	pcr_pcap_put_be16(p + 2, dport);
	if (proto == PCR_PCAP_PROTO_TCP) {
		pcr_pcap_put_be32(p + 4, tcp_seq);
		pcr_pcap_put_be32(p + 8, 1);  /* ack */
		p[12] = (PCR_PCAP_TCP_HLEN / 4) << 4;
		p[13] = 0x18;                 /* PSH | ACK */
		pcr_pcap_put_be16(p + 14, 65535); /* window */
	} else {
		pcr_pcap_put_be16(p + 4, (uint16_t)len);
	}
	for (k = 0; k < plen; k++)
		pl[k] = (uint8_t)(k * 7 + flow);
	if (mark_seq != NULL && plen >= PCR_PCAP_MARK_LEN) {
		pcr_pcap_put_be32(pl + PCR_PCAP_MARK_FLOW_OFF, flow);
		pcr_pcap_put_be32(pl + PCR_PCAP_MARK_SEQ_OFF, *mark_seq);
		pcr_pcap_put_be32(pl + PCR_PCAP_MARK_MAGIC_OFF,
				  PCR_PCAP_MARK_MAGIC);
	}
	csum = csum_fold(csum_add(psum, p, len));
	if (proto == PCR_PCAP_PROTO_UDP && csum == 0)
		csum = 0xffff;
	pcr_pcap_put_be16(p + (proto == PCR_PCAP_PROTO_TCP ? 16 : 6), csum);
}

/* IPv4 header without options and without checksum. */
static void
put_ipv4_hdr(uint8_t *p, const struct gen_cfg *c, size_t ihl, size_t tot,
	     uint16_t id, uint16_t frag)
{
	memset(p, 0, PCR_PCAP_IPV4_HLEN);
	p[0] = (uint8_t)(0x40 | (ihl / 4));
	p[1] = c->tos;
	pcr_pcap_put_be16(p + 2, (uint16_t)tot);
	pcr_pcap_put_be16(p + 4, id);
	pcr_pcap_put_be16(p + 6, frag);
	p[8] = 64;
	p[9] = c->proto;
	memcpy(p + 12, c->src4, 4);
	memcpy(p + 16, c->dst4, 4);
}

static void
ipv4_csum(uint8_t *p, size_t hlen)
{
	p[10] = p[11] = 0;
	pcr_pcap_put_be16(p + 10, csum_fold(csum_add(0, p, hlen)));
}

/*
 * IPv4 datagram at @p p filling @p len bytes: header of @p ihl bytes
 * (options from @p opts), then L4. Returns nothing; checksums correct.
 */
static void
put_ipv4(struct gen_state *st, uint8_t *p, size_t len, size_t ihl,
	 const uint8_t *opts, uint16_t sport, uint32_t *tcp_seq,
	 uint32_t flow, const uint32_t *mark_seq)
{
	const struct gen_cfg *c = st->cfg;
	size_t l4len = len - ihl;

	put_ipv4_hdr(p, c, ihl, len, st->ip_id++, 0);
	if (ihl > PCR_PCAP_IPV4_HLEN)
		memcpy(p + PCR_PCAP_IPV4_HLEN, opts, ihl - PCR_PCAP_IPV4_HLEN);
	ipv4_csum(p, ihl);
	put_l4(p + ihl, l4len, c->proto, sport, c->dport, *tcp_seq, flow,
	       mark_seq, pseudo4(c, c->proto, (uint32_t)l4len));
	*tcp_seq += (uint32_t)(l4len - l4_hlen(c));
}

/* IPv6 packet at @p p filling @p len bytes, extension chain @p ext first. */
static void
put_ipv6(struct gen_state *st, uint8_t *p, size_t len, const uint8_t *ext,
	 size_t ext_len, uint16_t sport, uint32_t *tcp_seq, uint32_t flow,
	 const uint32_t *mark_seq)
{
	const struct gen_cfg *c = st->cfg;
	size_t l4len = len - PCR_PCAP_IPV6_HLEN - ext_len;

	memset(p, 0, PCR_PCAP_IPV6_HLEN);
	p[0] = (uint8_t)(0x60 | (c->tos >> 4));
	p[1] = (uint8_t)(c->tos << 4);
	pcr_pcap_put_be16(p + 4, (uint16_t)(len - PCR_PCAP_IPV6_HLEN));
	p[6] = ext_len > 0 ? PCR_PCAP_PROTO_HOPOPTS : c->proto;
	p[7] = 64;
	memcpy(p + 8, c->src6, 16);
	memcpy(p + 24, c->dst6, 16);
	if (ext_len > 0) /* ext may be NULL: memcpy(d, NULL, 0) is undefined */
		memcpy(p + PCR_PCAP_IPV6_HLEN, ext, ext_len);
	put_l4(p + PCR_PCAP_IPV6_HLEN + ext_len, l4len, c->proto, sport,
	       c->dport, *tcp_seq, flow, mark_seq,
	       pseudo6(c, c->proto, (uint32_t)l4len));
	*tcp_seq += (uint32_t)(l4len - l4_hlen(c));
}

/* A flow packet of flow @p flow; returns the frame length. */
static size_t
make_flow_pkt(struct gen_state *st, uint8_t *f, uint32_t flow, size_t size)
{
	const struct gen_cfg *c = st->cfg;
	uint16_t sport = (uint16_t)(c->sport + flow);
	size_t off;

	off = put_l2(f, c,
		     c->ipv6 ? PCR_PCAP_ETYPE_IPV6 : PCR_PCAP_ETYPE_IPV4,
		     false);
	if (c->ipv6)
		put_ipv6(st, f + off, size - off, NULL, 0, sport,
			 &st->tcp_seq[flow], flow, &st->seq[flow]);
	else
		put_ipv4(st, f + off, size - off, PCR_PCAP_IPV4_HLEN, NULL,
			 sport, &st->tcp_seq[flow], flow, &st->seq[flow]);
	st->seq[flow]++;
	return size;
}

static size_t
max_size(size_t a, size_t b)
{
	return a > b ? a : b;
}

/* IPv4 fragments: a first fragment (MF) and the rest, taking turns. */
static size_t
make_frag(struct gen_state *st, uint8_t *f, size_t size)
{
	const struct gen_cfg *c = st->cfg;
	size_t off = put_l2(f, c, PCR_PCAP_ETYPE_IPV4, false);
	uint32_t data;
	uint8_t *ip = f + off;

	if (st->frag_turn++ % 2 == 0) {
		size = max_size(size, off + PCR_PCAP_IPV4_HLEN + FRAG_MIN_DATA);
		data = (uint32_t)(size - off - PCR_PCAP_IPV4_HLEN) & ~7u;
		st->frag_data = data;
		st->frag_id = st->ip_id++;
		put_l4(st->frag_dgram, 2 * (size_t)data, c->proto, c->sport,
		       c->dport, st->mal_tcp_seq, 0, NULL,
		       pseudo4(c, c->proto, 2 * data));
		st->mal_tcp_seq += 2 * data - (uint32_t)l4_hlen(c);
		put_ipv4_hdr(ip, c, PCR_PCAP_IPV4_HLEN,
			     PCR_PCAP_IPV4_HLEN + data, st->frag_id, 0x2000);
		memcpy(ip + PCR_PCAP_IPV4_HLEN, st->frag_dgram, data);
	} else {
		data = st->frag_data;
		put_ipv4_hdr(ip, c, PCR_PCAP_IPV4_HLEN,
			     PCR_PCAP_IPV4_HLEN + data, st->frag_id,
			     (uint16_t)(data / 8));
		memcpy(ip + PCR_PCAP_IPV4_HLEN, st->frag_dgram + data, data);
	}
	ipv4_csum(ip, PCR_PCAP_IPV4_HLEN);
	return off + PCR_PCAP_IPV4_HLEN + data;
}

static size_t
make_arp(const struct gen_state *st, uint8_t *f)
{
	const struct gen_cfg *c = st->cfg;
	size_t off = put_l2(f, c, PCR_PCAP_ETYPE_ARP, true);
	uint8_t *a = f + off;
	size_t len = max_size(off + ARP_LEN, PCR_PCAP_FRAME_MIN);

	memset(a, 0, len - off);
	pcr_pcap_put_be16(a, 1);                    /* Ethernet */
	pcr_pcap_put_be16(a + 2, PCR_PCAP_ETYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	pcr_pcap_put_be16(a + 6, 1);                /* request */
	memcpy(a + 8, f + 6, 6);                    /* sender MAC */
	memcpy(a + 14, c->src4, 4);
	memcpy(a + 24, c->dst4, 4);                 /* target IP */
	return len;
}

/* A malformed packet of kind @p k; returns the frame length. */
static size_t
make_malformed(struct gen_state *st, uint8_t *f, enum gen_malformed k,
	       size_t size)
{
	/* IHL 8: router alert, then NOPs and an end of list */
	static const uint8_t v4opts[IPV4_OPT_LEN] = {
		0x94, 0x04, 0x00, 0x00, 0x01, 0x01,
		0x01, 0x01, 0x01, 0x01, 0x01, 0x00,
	};
	const struct gen_cfg *c = st->cfg;
	size_t off, l4 = l4_hlen(c), ihl = PCR_PCAP_IPV4_HLEN;
	uint8_t ext[IPV6_EXT_LEN] = {0};
	uint8_t *ip;

	switch (k) {
	case MAL_SHORT:
		put_l2(f, c, PCR_PCAP_ETYPE_IPV4, false);
		return SHORT_LEN;
	case MAL_ARP:
		return make_arp(st, f);
	case MAL_FRAG:
		return make_frag(st, f, size);
	case MAL_BAD_IHL:
	case MAL_BAD_LEN:
	case MAL_IPV4_OPTIONS:
	case MAL_JUMBO:
		off = put_l2(f, c, PCR_PCAP_ETYPE_IPV4, false);
		if (k == MAL_IPV4_OPTIONS)
			ihl += IPV4_OPT_LEN;
		if (k == MAL_JUMBO)
			size = PCR_PCAP_FRAME_JUMBO;
		size = max_size(size, off + ihl + l4);
		ip = f + off;
		put_ipv4(st, ip, size - off, ihl, v4opts, c->sport,
			 &st->mal_tcp_seq, 0, NULL);
		if (k == MAL_BAD_IHL) {
			ip[0] = 0x43;
			ipv4_csum(ip, PCR_PCAP_IPV4_HLEN);
		} else if (k == MAL_BAD_LEN) {
			/* claims 64 bytes more than the frame holds */
			pcr_pcap_put_be16(ip + 2, (uint16_t)(size - off + 64));
			ipv4_csum(ip, PCR_PCAP_IPV4_HLEN);
		}
		return size;
	case MAL_MPLS:
		off = put_l2(f, c, PCR_PCAP_ETYPE_MPLS_UC, false);
		/* label 100, then label 200 with bottom of stack; TTL 64 */
		pcr_pcap_put_be32(f + off, (100u << 12) | 64);
		pcr_pcap_put_be32(f + off + 4, (200u << 12) | 0x100 | 64);
		off += MPLS_LABELS * PCR_PCAP_MPLS_HLEN;
		size = max_size(size, off + ihl + l4);
		put_ipv4(st, f + off, size - off, ihl, NULL, c->sport,
			 &st->mal_tcp_seq, 0, NULL);
		return size;
	case MAL_IPV6_EXT:
		off = put_l2(f, c, PCR_PCAP_ETYPE_IPV6, false);
		size = max_size(size, off + PCR_PCAP_IPV6_HLEN + IPV6_EXT_LEN +
					      l4);
		/* hop-by-hop: PadN of 4 */
		ext[0] = PCR_PCAP_PROTO_ROUTING;
		ext[2] = 1;
		ext[3] = 4;
		/*
		 * routing type 0, segments left 0, one address: the
		 * destination itself, so that a checksum taken with the
		 * routing header's last address (as tcpdump does) or with
		 * the IPv6 destination (segments left 0) agree
		 */
		ext[8] = PCR_PCAP_PROTO_DSTOPTS;
		ext[9] = 2;
		memcpy(ext + 16, c->dst6, 16);
		/* destination options: PadN of 4 */
		ext[32] = c->proto;
		ext[34] = 1;
		ext[35] = 4;
		put_ipv6(st, f + off, size - off, ext, sizeof(ext), c->sport,
			 &st->mal_tcp_seq, 0, NULL);
		return size;
	case MAL_IPV6_EXT_TRUNC:
		off = put_l2(f, c, PCR_PCAP_ETYPE_IPV6, false);
		size = max_size(size,
				off + PCR_PCAP_IPV6_HLEN + IPV6_EXT_TRUNC);
		ip = f + off;
		memset(ip, 0, size - off);
		ip[0] = 0x60;
		pcr_pcap_put_be16(ip + 4,
				  (uint16_t)(size - off - PCR_PCAP_IPV6_HLEN));
		ip[6] = PCR_PCAP_PROTO_HOPOPTS;
		ip[7] = 64;
		memcpy(ip + 8, c->src6, 16);
		memcpy(ip + 24, c->dst6, 16);
		/* hop-by-hop header of 2048 bytes, Pad1 options */
		ip[PCR_PCAP_IPV6_HLEN] = c->proto;
		ip[PCR_PCAP_IPV6_HLEN + 1] = 255;
		return size;
	case MAL_KIND_MAX:
		break;
	}
	return 0;
}

/* Timestamp of the last packet of @p path, for --append; false if none. */
static bool
append_last_ts(const char *path, uint64_t *last_ns)
{
	char errbuf[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *data;
	uint8_t magic[4];
	struct stat sb;
	bool any = false;
	pcap_t *p;
	FILE *fp;
	int rc;

	if (stat(path, &sb) != 0) {
		if (errno == ENOENT)
			return false;
		fail(EXIT_USAGE, "cannot append to '%s': %s", path,
		     strerror(errno));
	}
	if (sb.st_size == 0)
		return false;
	fp = fopen(path, "rb");
	if (fp == NULL)
		fail(EXIT_USAGE, "cannot append to '%s': %s", path,
		     strerror(errno));
	if (fread(magic, 1, 4, fp) != 4)
		fail(EXIT_USAGE, "cannot append to '%s': not a pcap file",
		     path);
	fclose(fp);
	if (pcr_pcap_get_be32(magic) == 0xd4c3b2a1 ||
	    pcr_pcap_get_be32(magic) == 0xa1b2c3d4)
		fail(EXIT_USAGE,
		     "cannot append to '%s': a microsecond pcap; --append "
		     "needs a nanosecond pcap",
		     path);
	if (pcr_pcap_get_be32(magic) != 0x4d3cb2a1 &&
	    pcr_pcap_get_be32(magic) != 0xa1b23c4d)
		fail(EXIT_USAGE,
		     "cannot append to '%s': not a classic pcap file "
		     "(pcapng cannot be appended to)",
		     path);

	p = pcap_open_offline_with_tstamp_precision(
		path, PCAP_TSTAMP_PRECISION_NANO, errbuf);
	if (p == NULL)
		fail(EXIT_USAGE, "cannot append to '%s': %s", path, errbuf);
	if (pcap_datalink(p) != DLT_EN10MB)
		fail(EXIT_USAGE,
		     "cannot append to '%s': link type %s, not Ethernet", path,
		     pcap_datalink_val_to_name(pcap_datalink(p)) != NULL
			     ? pcap_datalink_val_to_name(pcap_datalink(p))
			     : "unknown");
	while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
		/* the file's seconds are unsigned 32-bit; libpcap sign-extends */
		*last_ns = (uint64_t)(uint32_t)h->ts.tv_sec * NS_PER_S +
			   (uint64_t)h->ts.tv_usec;
		any = true;
	}
	if (rc == PCAP_ERROR)
		fail(EXIT_USAGE, "cannot append to '%s': %s", path,
		     pcap_geterr(p));
	pcap_close(p);
	return any;
}

int
main(int argc, char **argv)
{
	static uint8_t frame[PCR_PCAP_FRAME_MAX];
	struct gen_state st;
	struct gen_cfg cfg;
	struct pcap_pkthdr h;
	uint64_t i, ts, last_ns = 0, n_flow = 0;
	pcap_dumper_t *d;
	pcap_t *p;
	uint32_t f;
	FILE *fp;
	size_t len, size;

	parse_args(argc, argv, &cfg);

	if (cfg.append && append_last_ts(cfg.output, &last_ns) &&
	    !cfg.start_given) {
		if (last_ns > MAX_TS_NS - cfg.gap_ns)
			fail(EXIT_USAGE,
			     "cannot append to '%s': its last timestamp "
			     "%" PRIu64 " ns leaves no room",
			     cfg.output, last_ns);
		cfg.start_ns = last_ns + cfg.gap_ns;
	}
	if (cfg.count > 0 && cfg.gap_ns > 0 &&
	    cfg.count - 1 > (MAX_TS_NS - cfg.start_ns) / cfg.gap_ns)
		usage_error("%" PRIu64 " packets %" PRIu64
			    " ns apart from %" PRIu64
			    " ns run past the pcap time limit (2^32 s)",
			    cfg.count, cfg.gap_ns, cfg.start_ns);

	memset(&st, 0, sizeof(st));
	st.cfg = &cfg;
	st.rng = cfg.seed;
	st.ip_id = 1;
	st.mal_tcp_seq = 1;
	st.seq = calloc(cfg.flows, sizeof(*st.seq));
	st.tcp_seq = calloc(cfg.flows, sizeof(*st.tcp_seq));
	if (st.seq == NULL || st.tcp_seq == NULL)
		fail(EXIT_FAILURE, "out of memory for %u flows", cfg.flows);
	for (f = 0; f < cfg.flows; f++) {
		st.seq[f] = cfg.seq_start;
		st.tcp_seq[f] = 1;
	}

	p = pcap_open_dead_with_tstamp_precision(DLT_EN10MB, PCR_PCAP_SNAPLEN,
						 PCAP_TSTAMP_PRECISION_NANO);
	if (p == NULL)
		fail(EXIT_FAILURE, "pcap_open_dead failed");
	d = cfg.append ? pcap_dump_open_append(p, cfg.output)
		       : pcap_dump_open(p, cfg.output);
	if (d == NULL)
		fail(EXIT_USAGE, "cannot write '%s': %s", cfg.output,
		     pcap_geterr(p));

	for (i = 0; i < cfg.count; i++) {
		size = gen_size(&st);
		if (cfg.n_mal > 0 && i % cfg.mal_every == cfg.mal_every - 1) {
			len = make_malformed(
				&st, frame,
				cfg.mal[st.mal_turn++ % cfg.n_mal], size);
			st.malformed++;
		} else {
			len = make_flow_pkt(&st, frame,
					    (uint32_t)(n_flow++ % cfg.flows),
					    size);
		}
		ts = cfg.start_ns + i * cfg.gap_ns;
		h.ts.tv_sec = (time_t)(ts / NS_PER_S);
		h.ts.tv_usec = (suseconds_t)(ts % NS_PER_S);
		h.caplen = h.len = (bpf_u_int32)len;
		pcap_dump((u_char *)d, &h, frame);
		st.packets++;
		st.bytes += len;
	}

	fp = pcap_dump_file(d);
	if (pcap_dump_flush(d) != 0 || ferror(fp))
		fail(EXIT_FAILURE, "write error on '%s': %s", cfg.output,
		     strerror(errno));
	pcap_dump_close(d);
	pcap_close(p);

	fprintf(stderr,
		PROG ": %s %" PRIu64 " packets (%" PRIu64
		     " malformed), %" PRIu64 " bytes, %u flows, %s\n",
		cfg.append ? "appended" : "wrote", st.packets, st.malformed,
		st.bytes, cfg.flows, cfg.output);
	free(st.seq);
	free(st.tcp_seq);
	return EXIT_SUCCESS;
}
