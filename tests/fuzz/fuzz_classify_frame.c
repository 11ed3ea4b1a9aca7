/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * lib/classify over arbitrary bytes as one Ethernet frame: every prefix
 * length of the input is not needed (libFuzzer shrinks inputs itself),
 * but the same bytes are parsed three ways that must agree byte for byte:
 * pcr_classify_parse_buf(), pcr_classify_parse() on a one-segment mbuf
 * over the bytes, and pcr_classify_parse_burst(). The buffer is exactly
 * the frame's size, so ASan stops any read past its end.
 */

#include <string.h>

#include <rte_mbuf.h>

#include "classify_check.h"
#include "fuzz.h"
#include "pcr_classify.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pcr_pkt_info a, b, c;
	struct rte_mbuf m, *pm = &m;
	uint32_t len = size > UINT16_MAX ? UINT16_MAX : (uint32_t)size;
	int rc;

	memset(&a, 0xa5, sizeof(a));
	rc = pcr_classify_parse_buf(len != 0 ? data : NULL, len, &a);
	pcr_fuzz_check_info(&a, rc, len);

	/* a hand-built mbuf: no EAL, no pool; buf_len is the frame */
	memset(&m, 0, sizeof(m));
	m.buf_addr = (void *)(uintptr_t)data;
	m.buf_len = (uint16_t)len;
	m.data_off = 0;
	m.data_len = (uint16_t)len;
	m.pkt_len = len;
	m.nb_segs = 1;
	memset(&b, 0x5a, sizeof(b));
	rc = pcr_classify_parse(&m, &b);
	PCR_FUZZ_CHECK(memcmp(&a, &b, sizeof(a)) == 0,
		       "mbuf and buffer parses differ (%s vs %s)",
		       pcr_classify_result_name(b.result),
		       pcr_classify_result_name(a.result));
	memset(&c, 0x3c, sizeof(c));
	pcr_classify_parse_burst(&pm, 1, &c);
	PCR_FUZZ_CHECK(memcmp(&a, &c, sizeof(a)) == 0, "burst parse differs");
	(void)rc;
	return 0;
}
