/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * lib/policy/pcr_match.c, the class match rules of the configuration
 * file. Input: the rule text up to the first NUL, then 40 bytes of a flow
 * key. Checked: a refused rule says why; an accepted one is consistent
 * (masked prefixes, non-empty port ranges, 'any' alone, no whitespace-
 * separated word longer than a term can be, so no word is silently split
 * in two); it matches the default key only if it is 'any', and a key of
 * the other family never. And for the fuzzed key: the exact rule written
 * from it ("ipv4 proto 17 src A dst B sport S dport D") parses and
 * matches it, and no longer matches once one field differs.
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pcr_classify.h"
#include "pcr_match.h"

#define TOK_MAX 64

static void
check_rule(const char *s, const struct pcr_match *m)
{
	static const struct pcr_flow_key def;
	const char *p = s;
	unsigned int i;

	while (*p != '\0') {
		size_t n;

		while (isspace((unsigned char)*p))
			p++;
		n = 0;
		while (p[n] != '\0' && !isspace((unsigned char)p[n]))
			n++;
		PCR_FUZZ_CHECK(n < TOK_MAX, "'%s' accepted with a %zu-character word",
			       s, n);
		p += n;
	}
	PCR_FUZZ_CHECK(m->family == 0 || m->family == 4 || m->family == 6,
		       "family %u", m->family);
	for (i = 0; i < 16; i++)
		PCR_FUZZ_CHECK((m->src.addr[i] & ~m->src.mask[i]) == 0 &&
				       (m->dst.addr[i] & ~m->dst.mask[i]) == 0,
			       "'%s': prefix not masked", s);
	PCR_FUZZ_CHECK(!m->has_sport || m->sport_lo <= m->sport_hi, "sport");
	PCR_FUZZ_CHECK(!m->has_dport || m->dport_lo <= m->dport_hi, "dport");
	PCR_FUZZ_CHECK(!m->any || (m->family == 0 && !m->has_proto &&
				   !m->src.set && !m->dst.set &&
				   !m->has_sport && !m->has_dport),
		       "'%s': any with other terms", s);
	PCR_FUZZ_CHECK(pcr_match_key(m, &def) == m->any,
		       "'%s' and the default flow", s);
}

/* the rule that names @p k exactly */
static void
exact_rule(const struct pcr_flow_key *k, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	int af = k->family == 4 ? AF_INET : AF_INET6;
	bool ports = k->proto == 6 || k->proto == 17 || k->proto == 132;
	int n;

	inet_ntop(af, k->src_addr, a, sizeof(a));
	inet_ntop(af, k->dst_addr, b, sizeof(b));
	n = snprintf(buf, len, "ipv%u proto %u src %s dst %s", k->family,
		     k->proto, a, b);
	if (ports)
		snprintf(buf + n, len - (size_t)n, " sport %u dport %u",
			 k->src_port, k->dst_port);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t tlen = nul != NULL ? (size_t)(nul - data) : size;
	struct pcr_flow_key k, k2;
	struct pcr_match m, x;
	char err[256] = "", rule[256];
	char *s;
	int rc;

	s = malloc(tlen + 1);
	if (s == NULL)
		abort();
	memcpy(s, data, tlen);
	s[tlen] = '\0';
	rc = pcr_match_parse(s, &m, err, sizeof(err));
	PCR_FUZZ_CHECK(rc == 0 || (rc == -22 && err[0] != '\0'),
		       "'%s': rc %d, '%s'", s, rc, err);
	if (rc == 0)
		check_rule(s, &m);

	/* the key: what follows the NUL, zero-padded, made a valid key */
	memset(&k, 0, sizeof(k));
	if (nul != NULL) {
		size_t rest = size - tlen - 1;

		memcpy(&k, nul + 1, rest < sizeof(k) ? rest : sizeof(k));
	}
	k.rsvd = 0;
	k.family = (k.family & 1) ? PCR_FLOW_FAMILY_IPV6 : PCR_FLOW_FAMILY_IPV4;
	if (k.family == PCR_FLOW_FAMILY_IPV4) {
		memset(k.src_addr + 4, 0, 12);
		memset(k.dst_addr + 4, 0, 12);
	}
	if (!(k.proto == 6 || k.proto == 17 || k.proto == 132))
		k.src_port = k.dst_port = 0;
	if (rc == 0 && m.family != 0 && m.family != k.family)
		PCR_FUZZ_CHECK(!pcr_match_key(&m, &k), "'%s' matched ipv%u", s,
			       k.family);

	exact_rule(&k, rule, sizeof(rule));
	rc = pcr_match_parse(rule, &x, err, sizeof(err));
	PCR_FUZZ_CHECK(rc == 0, "'%s' refused: %s", rule, err);
	check_rule(rule, &x);
	PCR_FUZZ_CHECK(pcr_match_key(&x, &k), "'%s' does not match its key",
		       rule);
	k2 = k;
	k2.dst_addr[k.family == 4 ? 3 : 15] ^= 1;
	PCR_FUZZ_CHECK(!pcr_match_key(&x, &k2), "'%s' matches another address",
		       rule);
	k2 = k;
	k2.proto ^= 0x80;
	PCR_FUZZ_CHECK(!pcr_match_key(&x, &k2), "'%s' matches another protocol",
		       rule);
	free(s);
	return 0;
}
