/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_FUZZ_H
#define PCR_FUZZ_H

/**
 * @file
 * What every harness in tests/fuzz shares. A harness defines
 * LLVMFuzzerTestOneInput() (and optionally LLVMFuzzerInitialize()); it is
 * linked either with libFuzzer (-Dfuzz=enabled, clang) or with replay.c,
 * a main() that runs the harness once over each file of a corpus, so
 * every corpus entry is a regression test of the normal suite.
 *
 * A harness checks its properties with PCR_FUZZ_CHECK(): a failed check
 * prints what broke and aborts, which both drivers report as a crash.
 */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define PCR_FUZZ_CHECK(cond, ...)                                              \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/** Little-endian reader over the fuzz input; past the end it reads zeros. */
struct pcr_fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint64_t
pcr_fuzz_take(struct pcr_fuzz_in *in, unsigned int bytes)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++) {
		if (in->n > 0) {
			v |= (uint64_t)in->p[0] << (8 * i);
			in->p++;
			in->n--;
		}
	}
	return v;
}

/** A value in [lo, hi] from @p bytes input bytes. */
static inline uint64_t
pcr_fuzz_range(struct pcr_fuzz_in *in, unsigned int bytes, uint64_t lo,
	       uint64_t hi)
{
	uint64_t v = pcr_fuzz_take(in, bytes);

	if (lo == 0 && hi == UINT64_MAX)
		return v;
	return lo + v % (hi - lo + 1);
}

#endif /* PCR_FUZZ_H */
