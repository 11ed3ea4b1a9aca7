/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_FUZZ_CLASSIFY_CHECK_H
#define PCR_FUZZ_CLASSIFY_CHECK_H

/**
 * @file
 * What pcr_classify.h promises about any frame, checked on every parse of
 * the classify harnesses.
 */

#include <string.h>

#include "fuzz.h"
#include "pcr_classify.h"

static inline void
pcr_fuzz_check_info(const struct pcr_pkt_info *in, int rc, uint32_t len)
{
	static const struct pcr_flow_key zero;
	char buf[PCR_FLOW_KEY_STRLEN];
	int n;

	PCR_FUZZ_CHECK(rc >= 0 && rc < PCR_CLASSIFY_RESULT_MAX, "rc %d", rc);
	PCR_FUZZ_CHECK(rc == (int)in->result, "rc %d, result %d", rc,
		       (int)in->result);
	PCR_FUZZ_CHECK(in->key.rsvd == 0 && in->rsvd == 0, "reserved not 0");
	PCR_FUZZ_CHECK(in->vlan_depth <= PCR_CLASSIFY_MAX_VLAN, "vlan %u",
		       in->vlan_depth);
	PCR_FUZZ_CHECK(in->mpls_depth <= PCR_CLASSIFY_MAX_MPLS, "mpls %u",
		       in->mpls_depth);
	PCR_FUZZ_CHECK(in->l2_len <= len, "l2_len %u > frame %u", in->l2_len,
		       len);
	if (rc == PCR_CLASSIFY_OK || rc == PCR_CLASSIFY_L3_ONLY) {
		PCR_FUZZ_CHECK(in->key.family == PCR_FLOW_FAMILY_IPV4 ||
				       in->key.family == PCR_FLOW_FAMILY_IPV6,
			       "family %u", in->key.family);
		PCR_FUZZ_CHECK(in->l4_offset == in->l2_len + in->l3_len,
			       "l4_offset %u != %u + %u", in->l4_offset,
			       in->l2_len, in->l3_len);
		PCR_FUZZ_CHECK(in->l4_offset <= len, "l4_offset %u > frame %u",
			       in->l4_offset, len);
		PCR_FUZZ_CHECK(in->dscp < 64, "dscp %u", in->dscp);
		if (in->key.family == PCR_FLOW_FAMILY_IPV4)
			PCR_FUZZ_CHECK(in->l3_len >= 20 && in->l3_len <= 60 &&
					       memcmp(in->key.src_addr + 4,
						      zero.src_addr, 12) == 0 &&
					       memcmp(in->key.dst_addr + 4,
						      zero.dst_addr, 12) == 0,
				       "ipv4 l3_len %u or address tail",
				       in->l3_len);
		else
			PCR_FUZZ_CHECK(in->l3_len >= 40, "ipv6 l3_len %u",
				       in->l3_len);
	} else {
		PCR_FUZZ_CHECK(memcmp(&in->key, &zero, sizeof(zero)) == 0,
			       "result %s with a non-default key",
			       pcr_classify_result_name(in->result));
		PCR_FUZZ_CHECK(pcr_flow_key_is_default(&in->key), "default");
		PCR_FUZZ_CHECK(in->l3_len == 0 && in->l4_offset == 0 &&
				       in->dscp == 0 && !in->is_fragment,
			       "L3 fields set for result %s",
			       pcr_classify_result_name(in->result));
	}
	if (rc == PCR_CLASSIFY_OK) {
		PCR_FUZZ_CHECK(!in->is_fragment, "ok and fragment");
		PCR_FUZZ_CHECK(in->key.proto == 6 || in->key.proto == 17 ||
				       in->key.proto == 132,
			       "ok with proto %u", in->key.proto);
		/* the ports were read: they lie within the frame */
		PCR_FUZZ_CHECK(in->l4_offset + 4u <= len,
			       "ports at %u beyond frame %u", in->l4_offset, len);
	} else if (rc == PCR_CLASSIFY_L3_ONLY) {
		PCR_FUZZ_CHECK(in->key.src_port == 0 && in->key.dst_port == 0,
			       "l3-only with ports");
	}
	n = pcr_flow_key_format(&in->key, buf, sizeof(buf));
	PCR_FUZZ_CHECK(n >= 0 && n < (int)sizeof(buf) &&
			       strlen(buf) == (size_t)n,
		       "key format length %d", n);
	PCR_FUZZ_CHECK(strcmp(pcr_classify_result_name(in->result),
			      "unknown") != 0,
		       "result %d has no name", (int)in->result);
}

#endif /* PCR_FUZZ_CLASSIFY_CHECK_H */
