/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * lib/policy's value parsers, the ones every option and configuration
 * value goes through: pcr_rate_parse(), pcr_size_parse(), pcr_u64_parse().
 * Input: one selector byte, for u64 also 8 + 8 bytes of bounds, then the
 * text (cut at the first NUL). Checked: an accepted value is within the
 * documented range and reads back (formatted and parsed again) as itself;
 * a refused one leaves the output alone and says why.
 */

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "pcr_policy.h"

#define RATE_MAX_BPS 10000000000000ull
#define SENTINEL 0xfeedfacecafebeefull

static void
check_err(int rc, const char *err, uint64_t v, const char *s)
{
	PCR_FUZZ_CHECK(rc == 0 || rc == -22, "rc %d for '%s'", rc, s);
	if (rc != 0) {
		PCR_FUZZ_CHECK(err[0] != '\0', "refused '%s' without a reason",
			       s);
		PCR_FUZZ_CHECK(v == SENTINEL, "refused '%s' but wrote %" PRIu64,
			       s, v);
	}
}

static void
fuzz_rate(const char *s)
{
	char err[256] = "", fmt[64];
	uint64_t v = SENTINEL, w = SENTINEL;
	int rc;

	rc = pcr_rate_parse(s, &v, err, sizeof(err));
	check_err(rc, err, v, s);
	if (rc != 0)
		return;
	PCR_FUZZ_CHECK(v <= RATE_MAX_BPS, "'%s' -> %" PRIu64 " bit/s", s, v);
	/* pcr_rate_format keeps 6 significant digits */
	rc = pcr_rate_format(v, fmt, sizeof(fmt));
	PCR_FUZZ_CHECK(rc > 0 && rc < (int)sizeof(fmt), "format %d", rc);
	rc = pcr_rate_parse(fmt, &w, err, sizeof(err));
	PCR_FUZZ_CHECK(rc == 0, "'%s' -> %" PRIu64 " -> '%s' refused: %s", s,
		       v, fmt, err);
	PCR_FUZZ_CHECK((v == 0) == (w == 0) &&
			       fabs((double)w - (double)v) <=
				       (double)v * 1e-5 + 0.5,
		       "'%s' -> %" PRIu64 " -> '%s' -> %" PRIu64, s, v, fmt, w);
}

static void
fuzz_size(const char *s)
{
	char err[256] = "", dec[32];
	uint64_t v = SENTINEL, w = SENTINEL;
	int rc;

	rc = pcr_size_parse(s, &v, err, sizeof(err));
	check_err(rc, err, v, s);
	if (rc != 0)
		return;
	snprintf(dec, sizeof(dec), "%" PRIu64, v);
	rc = pcr_size_parse(dec, &w, err, sizeof(err));
	PCR_FUZZ_CHECK(rc == 0 && w == v, "'%s' -> %" PRIu64 " -> '%s' -> %" PRIu64,
		       s, v, dec, w);
}

static void
fuzz_u64(const char *s, uint64_t min, uint64_t max)
{
	char err[256] = "", *end;
	uint64_t v = SENTINEL;
	unsigned long long x;
	int rc;

	rc = pcr_u64_parse(s, min, max, &v, err, sizeof(err));
	check_err(rc, err, v, s);
	if (rc != 0)
		return;
	PCR_FUZZ_CHECK(v >= min && v <= max, "'%s' -> %" PRIu64 " outside [%" PRIu64 ", %" PRIu64 "]",
		       s, v, min, max);
	/* an independent reading: digits only, no sign, no space */
	PCR_FUZZ_CHECK(s[0] >= '0' && s[0] <= '9', "'%s' accepted", s);
	x = strtoull(s, &end, 10);
	PCR_FUZZ_CHECK(*end == '\0' && x == v, "'%s' -> %" PRIu64, s, v);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pcr_fuzz_in in = { data, size };
	unsigned int which = (unsigned int)pcr_fuzz_take(&in, 1) % 3;
	uint64_t min = 0, max = UINT64_MAX;
	char *s;

	if (which == 2) {
		min = pcr_fuzz_take(&in, 8);
		max = pcr_fuzz_take(&in, 8);
	}
	s = malloc(in.n + 1);
	if (s == NULL)
		abort();
	memcpy(s, in.p, in.n);
	s[in.n] = '\0';
	switch (which) {
	case 0:
		fuzz_rate(s);
		break;
	case 1:
		fuzz_size(s);
		break;
	default:
		fuzz_u64(s, min, max);
		break;
	}
	free(s);
	return 0;
}
