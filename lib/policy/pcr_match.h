/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_MATCH_H
#define PCR_MATCH_H

/**
 * @file
 * Class match rules over flow keys, in a tc-flower-like spelling:
 *
 *     any
 *     [ipv4|ipv6] [proto tcp|udp|sctp|icmp|icmpv6|gre|esp|N]
 *     [src PREFIX] [dst PREFIX] [sport N[-M]] [dport N[-M]]
 *
 * Terms are ANDed; each may appear once. PREFIX is an IPv4 or IPv6
 * address with an optional /LEN (a host when absent); it also fixes the
 * family. A port term matches only keys that have ports (TCP, UDP, SCTP
 * 5-tuples). Only `any` matches the default (non-IP) flow. A rule sees
 * only the flow key, so every packet of a flow is in the same class.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcr_classify.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pcr_prefix {
	uint8_t addr[16]; /**< network order, masked */
	uint8_t mask[16];
	bool set;
};

struct pcr_match {
	bool any;
	uint8_t family;    /**< 0 (either), 4 or 6 */
	bool has_proto;
	uint8_t proto;
	struct pcr_prefix src, dst;
	bool has_sport, has_dport;
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
};

/**
 * Parse rule @p s into @p m.
 * @return 0, or -EINVAL with why (naming the offending term) in @p err.
 */
int pcr_match_parse(const char *s, struct pcr_match *m, char *err,
		    size_t errlen);

/** True if flow key @p k satisfies rule @p m. */
bool pcr_match_key(const struct pcr_match *m, const struct pcr_flow_key *k);

#ifdef __cplusplus
}
#endif

#endif /* PCR_MATCH_H */
