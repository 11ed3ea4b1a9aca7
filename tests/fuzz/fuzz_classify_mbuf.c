/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * lib/classify over a multi-segment mbuf chain. Input: one byte n_cut
 * (low 3 bits: 0..7 cuts), n_cut little-endian 16-bit cut positions
 * (taken modulo frame length + 1, sorted; equal cuts make empty
 * segments), then the frame. Each segment is its own heap buffer of
 * exactly its length, hand-built into an rte_mbuf chain (no EAL), so ASan
 * stops any read past a segment. The chain's parse must equal, byte for
 * byte, pcr_classify_parse_buf() over the contiguous frame.
 */

#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "classify_check.h"
#include "fuzz.h"
#include "pcr_classify.h"

#define MAX_CUTS 7

static int
cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pcr_fuzz_in in = { data, size };
	struct rte_mbuf seg[MAX_CUTS + 1];
	uint8_t *buf[MAX_CUTS + 1];
	uint32_t cut[MAX_CUTS + 2], len, raw[MAX_CUTS];
	struct pcr_pkt_info flat, chained;
	unsigned int n_cut, i;
	const uint8_t *frame;
	int rc;

	n_cut = (unsigned int)pcr_fuzz_take(&in, 1) & MAX_CUTS;
	for (i = 0; i < n_cut; i++)
		raw[i] = (uint32_t)pcr_fuzz_take(&in, 2);
	frame = in.p;
	len = in.n > UINT16_MAX ? UINT16_MAX : (uint32_t)in.n;

	cut[0] = 0;
	for (i = 0; i < n_cut; i++)
		cut[i + 1] = raw[i] % (len + 1);
	qsort(cut + 1, n_cut, sizeof(cut[0]), cmp_u32);
	cut[n_cut + 1] = len;

	memset(seg, 0, sizeof(seg));
	for (i = 0; i <= n_cut; i++) {
		uint32_t sl = cut[i + 1] - cut[i];

		buf[i] = malloc(sl != 0 ? sl : 1);
		if (buf[i] == NULL)
			abort();
		if (sl != 0)
			memcpy(buf[i], frame + cut[i], sl);
		seg[i].buf_addr = buf[i];
		seg[i].buf_len = (uint16_t)sl;
		seg[i].data_len = (uint16_t)sl;
		seg[i].next = i < n_cut ? &seg[i + 1] : NULL;
	}
	seg[0].pkt_len = len;
	seg[0].nb_segs = (uint16_t)(n_cut + 1);

	memset(&flat, 0xa5, sizeof(flat));
	rc = pcr_classify_parse_buf(len != 0 ? frame : NULL, len, &flat);
	pcr_fuzz_check_info(&flat, rc, len);
	memset(&chained, 0x5a, sizeof(chained));
	rc = pcr_classify_parse(&seg[0], &chained);
	pcr_fuzz_check_info(&chained, rc, len);
	PCR_FUZZ_CHECK(memcmp(&flat, &chained, sizeof(flat)) == 0,
		       "chain of %u segments parses as %s (l4 %u), flat as %s (l4 %u)",
		       n_cut + 1, pcr_classify_result_name(chained.result),
		       chained.l4_offset, pcr_classify_result_name(flat.result),
		       flat.l4_offset);
	for (i = 0; i <= n_cut; i++)
		free(buf[i]);
	return 0;
}
