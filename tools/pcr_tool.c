/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "pcr_parse.h"
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

/* pacer's own grammar (lib/parse), so that a value means the same to
 * pacer and its tools */
uint64_t
parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	char e[200];
	uint64_t v;

	if (pcr_u64_parse(s, min, max, &v, e, sizeof(e)) != 0)
		usage_error("bad %s '%s': %s", opt, s, e);
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
