/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "pcr_tool.h"

void
fail(int status, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", pcr_tool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
}

void
usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", pcr_tool_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see --help)\n");
	exit(EXIT_USAGE);
}

uint64_t
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)s[0]))
		usage_error("bad %s '%s': not an unsigned decimal number", opt,
			    s);
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		usage_error("bad %s '%s': too large", opt, s);
	if (errno != 0 || *end != '\0')
		usage_error("bad %s '%s': not an unsigned decimal number", opt,
			    s);
	if (v < min || v > max)
		usage_error("bad %s '%s': must be between %" PRIu64
			    " and %" PRIu64,
			    opt, s, min, max);
	return v;
}

double
parse_double(const char *opt, const char *s, double min, double max)
{
	double v;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(v >= min && v <= max))
		usage_error("%s %s: not a number in %.15g .. %.15g", opt, s, min,
			    max);
	return v;
}
