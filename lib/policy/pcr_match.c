/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pcr_match.h"

#define TOK_MAX 64

static const struct {
	const char *name;
	uint8_t proto;
} protos[] = {
	{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "gre", 47 },
	{ "esp", 50 }, { "icmpv6", 58 }, { "sctp", 132 },
};

/* 'p'roto, 's'rc, 'd'st, 'S'port, 'D'port */
static char
term_id(const char *tok)
{
	if (strcasecmp(tok, "proto") == 0)
		return 'p';
	if (strcasecmp(tok, "src") == 0)
		return 's';
	if (strcasecmp(tok, "dst") == 0)
		return 'd';
	if (strcasecmp(tok, "sport") == 0)
		return 'S';
	return 'D';
}

static int
parse_uint(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || *v > max)
		return -1;
	return 0;
}

static int
parse_prefix(const char *s, struct pcr_prefix *p, uint8_t *family,
	     char *err, size_t errlen)
{
	char buf[TOK_MAX];
	char *slash;
	unsigned long len;
	unsigned int i, bits;
	uint8_t fam;

	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash++ = '\0';
	memset(p, 0, sizeof(*p));
	if (inet_pton(AF_INET, buf, p->addr) == 1) {
		fam = PCR_FLOW_FAMILY_IPV4;
		bits = 32;
	} else if (inet_pton(AF_INET6, buf, p->addr) == 1) {
		fam = PCR_FLOW_FAMILY_IPV6;
		bits = 128;
	} else {
		snprintf(err, errlen, "'%s' is not an IPv4 or IPv6 address",
			 buf);
		return -EINVAL;
	}
	len = bits;
	if (slash != NULL && parse_uint(slash, bits, &len) != 0) {
		snprintf(err, errlen, "prefix length '%s' in '%s' is not 0..%u",
			 slash, s, bits);
		return -EINVAL;
	}
	if (*family != 0 && *family != fam) {
		snprintf(err, errlen, "'%s' mixes IPv4 and IPv6", s);
		return -EINVAL;
	}
	*family = fam;
	for (i = 0; i < 16; i++) {
		unsigned int b = len > i * 8 ? (unsigned int)len - i * 8 : 0;

		p->mask[i] = b >= 8 ? 0xff : (uint8_t)(0xff00 >> b);
		p->addr[i] &= p->mask[i];
	}
	p->set = true;
	return 0;
}

static int
parse_ports(const char *s, uint16_t *lo, uint16_t *hi, char *err,
	    size_t errlen)
{
	char buf[TOK_MAX];
	char *dash;
	unsigned long a, b;

	snprintf(buf, sizeof(buf), "%s", s);
	dash = strchr(buf, '-');
	if (dash != NULL)
		*dash++ = '\0';
	if (parse_uint(buf, 65535, &a) != 0 ||
	    (dash != NULL && parse_uint(dash, 65535, &b) != 0)) {
		snprintf(err, errlen, "port '%s' is not N or N-M within 0..65535",
			 s);
		return -EINVAL;
	}
	if (dash == NULL)
		b = a;
	if (b < a) {
		snprintf(err, errlen, "port range '%s' is empty", s);
		return -EINVAL;
	}
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

/*
 * True (with why in @p err) if the word sscanf("%63s") took from @p p,
 * @p n characters, stops short of the word's end: a longer word would
 * otherwise be read as two ("dport 0...080ipv4" as "dport 80 ipv4").
 */
static bool
word_cut(const char *p, int n, char *err, size_t errlen)
{
	if (p[n] == '\0' || isspace((unsigned char)p[n]))
		return false;
	snprintf(err, errlen, "'%.20s...' is longer than %d characters", p,
		 TOK_MAX - 1);
	return true;
}

int
pcr_match_parse(const char *s, struct pcr_match *m, char *err, size_t errlen)
{
	char tok[TOK_MAX], arg[TOK_MAX];
	const char *p = s;
	unsigned int seen = 0, nterms = 0;
	int n;

	memset(m, 0, sizeof(*m));
	for (;;) {
		unsigned int bit;

		while (isspace((unsigned char)*p))
			p++;
		if (*p == '\0')
			break;
		if (sscanf(p, "%63s%n", tok, &n) != 1)
			break;
		if (word_cut(p, n, err, errlen))
			return -EINVAL;
		p += n;
		nterms++;
		if (strcasecmp(tok, "any") == 0) {
			bit = 1u << 0;
			m->any = true;
		} else if (strcasecmp(tok, "ipv4") == 0 ||
			   strcasecmp(tok, "ipv6") == 0) {
			uint8_t fam = tok[3] == '4' ? PCR_FLOW_FAMILY_IPV4 :
						      PCR_FLOW_FAMILY_IPV6;

			bit = 1u << 1;
			if (m->family != 0 && m->family != fam) {
				snprintf(err, errlen,
					 "'%s' contradicts the family of an address",
					 tok);
				return -EINVAL;
			}
			m->family = fam;
		} else if (strcasecmp(tok, "proto") == 0 ||
			   strcasecmp(tok, "src") == 0 ||
			   strcasecmp(tok, "dst") == 0 ||
			   strcasecmp(tok, "sport") == 0 ||
			   strcasecmp(tok, "dport") == 0) {
			int rc = 0;

			while (isspace((unsigned char)*p))
				p++;
			if (sscanf(p, "%63s%n", arg, &n) != 1) {
				snprintf(err, errlen, "'%s' needs a value",
					 tok);
				return -EINVAL;
			}
			if (word_cut(p, n, err, errlen))
				return -EINVAL;
			p += n;
			switch (term_id(tok)) {
			case 'p': {
				unsigned long v;
				size_t i;

				bit = 1u << 2;
				for (i = 0; i < RTE_DIM(protos); i++)
					if (strcasecmp(arg, protos[i].name) == 0)
						break;
				if (i < RTE_DIM(protos))
					v = protos[i].proto;
				else if (parse_uint(arg, 255, &v) != 0) {
					snprintf(err, errlen,
						 "protocol '%s' is not tcp, udp, sctp, icmp, icmpv6, gre, esp or 0..255",
						 arg);
					return -EINVAL;
				}
				m->has_proto = true;
				m->proto = (uint8_t)v;
				break;
			}
			case 's':
				bit = 1u << 3;
				rc = parse_prefix(arg, &m->src, &m->family, err,
						  errlen);
				break;
			case 'd':
				bit = 1u << 4;
				rc = parse_prefix(arg, &m->dst, &m->family, err,
						  errlen);
				break;
			case 'S':
				bit = 1u << 5;
				m->has_sport = true;
				rc = parse_ports(arg, &m->sport_lo, &m->sport_hi,
						 err, errlen);
				break;
			default:
				bit = 1u << 6;
				m->has_dport = true;
				rc = parse_ports(arg, &m->dport_lo, &m->dport_hi,
						 err, errlen);
				break;
			}
			if (rc != 0)
				return rc;
		} else {
			snprintf(err, errlen,
				 "unknown term '%s' (any, ipv4, ipv6, proto, src, dst, sport, dport)",
				 tok);
			return -EINVAL;
		}
		if (seen & bit) {
			snprintf(err, errlen, "'%s' given twice", tok);
			return -EINVAL;
		}
		seen |= bit;
	}
	if (nterms == 0) {
		snprintf(err, errlen, "empty match (write 'any' to match everything)");
		return -EINVAL;
	}
	if (m->any && nterms > 1) {
		snprintf(err, errlen, "'any' cannot be combined with other terms");
		return -EINVAL;
	}
	return 0;
}

static bool
prefix_match(const struct pcr_prefix *p, const uint8_t *addr)
{
	unsigned int i;

	if (!p->set)
		return true;
	for (i = 0; i < 16; i++)
		if ((addr[i] & p->mask[i]) != p->addr[i])
			return false;
	return true;
}

bool
pcr_match_key(const struct pcr_match *m, const struct pcr_flow_key *k)
{
	bool has_ports;

	if (m->any)
		return true;
	if (k->family == PCR_FLOW_FAMILY_NONE)
		return false;
	if (m->family != 0 && m->family != k->family)
		return false;
	if (m->has_proto && m->proto != k->proto)
		return false;
	if (!prefix_match(&m->src, k->src_addr) ||
	    !prefix_match(&m->dst, k->dst_addr))
		return false;
	has_ports = k->proto == 6 || k->proto == 17 || k->proto == 132;
	if (m->has_sport && (!has_ports || k->src_port < m->sport_lo ||
			     k->src_port > m->sport_hi))
		return false;
	if (m->has_dport && (!has_ports || k->dst_port < m->dport_lo ||
			     k->dst_port > m->dport_hi))
		return false;
	return true;
}
