/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pcr_parse.h"

/* Highest rate accepted: 10 Tbit/s, beyond any port this runs on. */
#define RATE_MAX_BPS 10000000000000ull

static const struct {
	const char *name;
	double mult;
} rate_units[] = {
	{ "", 1 },           { "bit", 1 },
	{ "kbit", 1e3 },     { "mbit", 1e6 },
	{ "gbit", 1e9 },     { "tbit", 1e12 },
	{ "kibit", 1024.0 }, { "mibit", 1048576.0 },
	{ "gibit", 1073741824.0 }, { "tibit", 1099511627776.0 },
	{ "bps", 8 },        { "kbps", 8e3 },
	{ "mbps", 8e6 },     { "gbps", 8e9 },
	{ "tbps", 8e12 },
};

int
pcr_rate_parse(const char *s, uint64_t *bps, char *err, size_t errlen)
{
	const char *p;
	char *end;
	double v;
	size_t i;

	if (s == NULL || *s == '\0') {
		snprintf(err, errlen, "empty rate");
		return -EINVAL;
	}
	if (strcasecmp(s, "unlimited") == 0) {
		*bps = 0;
		return 0;
	}
	for (p = s; *p != '\0'; p++)
		if (!isdigit((unsigned char)*p) && *p != '.')
			break;
	if (p == s || !isdigit((unsigned char)s[0])) {
		snprintf(err, errlen,
			 "rate '%s' does not start with a number", s);
		return -EINVAL;
	}
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end != p || !isfinite(v)) {
		snprintf(err, errlen, "rate '%s' is not a number", s);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(rate_units) / sizeof(rate_units[0]); i++)
		if (strcasecmp(p, rate_units[i].name) == 0)
			break;
	if (i == sizeof(rate_units) / sizeof(rate_units[0])) {
		snprintf(err, errlen,
			 "rate '%s': unknown unit '%s' (bit, kbit, mbit, gbit, tbit, kibit..tibit, bps..tbps)",
			 s, p);
		return -EINVAL;
	}
	v *= rate_units[i].mult;
	if (v == 0) {
		*bps = 0;
		return 0;
	}
	if (v < 1) {
		snprintf(err, errlen, "rate '%s' is below 1 bit/s", s);
		return -EINVAL;
	}
	if (v > (double)RATE_MAX_BPS) {
		snprintf(err, errlen, "rate '%s' is above 10tbit", s);
		return -EINVAL;
	}
	*bps = (uint64_t)llround(v);
	return 0;
}

int
pcr_size_parse(const char *s, uint64_t *bytes, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		uint64_t mult;
	} units[] = {
		{ "", 1 },  { "b", 1 },
		{ "k", 1ull << 10 }, { "kb", 1ull << 10 },
		{ "m", 1ull << 20 }, { "mb", 1ull << 20 },
		{ "g", 1ull << 30 }, { "gb", 1ull << 30 },
	};
	const char *p;
	uint64_t v = 0;
	size_t i;

	if (s == NULL || !isdigit((unsigned char)s[0])) {
		snprintf(err, errlen, "size '%s' does not start with a digit",
			 s != NULL ? s : "");
		return -EINVAL;
	}
	for (p = s; isdigit((unsigned char)*p); p++) {
		if (v > (UINT64_MAX - 9) / 10) {
			snprintf(err, errlen, "size '%s' is too large", s);
			return -EINVAL;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcasecmp(p, units[i].name) == 0)
			break;
	if (i == sizeof(units) / sizeof(units[0])) {
		snprintf(err, errlen,
			 "size '%s': unknown unit '%s' (b, kb, mb, gb)", s, p);
		return -EINVAL;
	}
	if (v > UINT64_MAX / units[i].mult) {
		snprintf(err, errlen, "size '%s' is too large", s);
		return -EINVAL;
	}
	*bytes = v * units[i].mult;
	return 0;
}

int
pcr_u64_parse(const char *s, uint64_t min, uint64_t max, uint64_t *v,
	      char *err, size_t errlen)
{
	unsigned long long x;
	char *end;

	if (s == NULL || !isdigit((unsigned char)s[0])) {
		snprintf(err, errlen, "'%s' is not a non-negative integer",
			 s != NULL ? s : "");
		return -EINVAL;
	}
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0') {
		snprintf(err, errlen, "'%s' is not an integer", s);
		return -EINVAL;
	}
	if (x < min || x > max) {
		snprintf(err, errlen, "%s is out of range [%" PRIu64 ", %" PRIu64 "]",
			 s, min, max);
		return -EINVAL;
	}
	*v = x;
	return 0;
}

int
pcr_rate_format(uint64_t bps, char *buf, size_t len)
{
	static const struct {
		uint64_t div;
		const char *unit;
	} u[] = {
		{ 1000000000000ull, "Tbit" }, { 1000000000ull, "Gbit" },
		{ 1000000ull, "Mbit" },       { 1000ull, "Kbit" },
	};
	size_t i;

	if (bps == 0)
		return snprintf(buf, len, "unlimited");
	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++)
		if (bps >= u[i].div)
			return snprintf(buf, len, "%.6g%s",
					(double)bps / (double)u[i].div,
					u[i].unit);
	return snprintf(buf, len, "%" PRIu64 "bit", bps);
}
