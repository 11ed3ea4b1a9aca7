/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer-pcapstat's header parser held to lib/classify's: pcapstat keeps its
 * own copy (it has no DPDK, and reads Linux cooked and raw-IP captures
 * too), written after lib/classify, so the same Ethernet frame must give
 * both the same result and the same flow key, or pacer-pcapstat would
 * judge per-flow rates of flows pacer never saw. The harness #includes
 * tools/pcapstat.c (its parser is static; its main() renamed away) and
 * parses the input as one Ethernet frame both ways.
 */

#include <string.h>

#include "fuzz.h"
#include "pcr_classify.h"

/* pcapstat's own (1e9, a double) for its code; DPDK's is not used here */
#undef NS_PER_S
int pcr_pcapstat_main(int argc, char **argv);
#define main pcr_pcapstat_main
#include "../../tools/pcapstat.c"
#undef main

_Static_assert(sizeof(struct flow_key) == sizeof(struct pcr_flow_key),
	       "pcapstat's flow key and lib/classify's differ in layout");
_Static_assert((int)CLS_OK == (int)PCR_CLASSIFY_OK &&
		       (int)CLS_L3_ONLY == (int)PCR_CLASSIFY_L3_ONLY &&
		       (int)CLS_NON_IP == (int)PCR_CLASSIFY_NON_IP &&
		       (int)CLS_TRUNCATED == (int)PCR_CLASSIFY_TRUNCATED &&
		       (int)CLS_BAD_HEADER == (int)PCR_CLASSIFY_BAD_HEADER,
	       "pcapstat's results and lib/classify's differ");

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t len = size > UINT16_MAX ? UINT16_MAX : (uint32_t)size;
	struct pcr_pkt_info info;
	struct parse ps;
	int rc;

	rc = pcr_classify_parse_buf(len != 0 ? data : NULL, len, &info);
	memset(&ps, 0x5a, sizeof(ps));
	ps.p = data;
	ps.len = len;
	parse_frame(&ps, DLT_EN10MB);
	PCR_FUZZ_CHECK((int)ps.result == rc, "results differ: pcapstat %s, lib/classify %s",
		       cls_names[ps.result], pcr_classify_result_name(rc));
	PCR_FUZZ_CHECK(memcmp(&ps.key, &info.key, sizeof(ps.key)) == 0,
		       "flow keys differ (result %s)", cls_names[ps.result]);
	if (rc == PCR_CLASSIFY_OK)
		PCR_FUZZ_CHECK(ps.l4_off == info.l4_offset,
			       "L4 offsets differ: pcapstat %u, lib/classify %u",
			       ps.l4_off, info.l4_offset);
	return 0;
}
