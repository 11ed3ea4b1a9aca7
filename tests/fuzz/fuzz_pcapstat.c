/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer-pcapstat's reader, end to end: the input is a capture file
 * (libpcap's reader, then tools/pcapstat.c's own header parser, flow
 * table, marker and sequence accounting, gap percentiles, windows and
 * both reports). pcapstat.c is compiled with main renamed
 * pcr_pcapstat_main and linked with --wrap=fail,--wrap=usage_error: its
 * exits on bad input come back here by longjmp (the tool exits 1 or 2 on
 * those; a crash, sanitizer report or hang is what counts). The options
 * come from the input's length, so a corpus of plain captures still
 * varies --wire-overhead, --window, --rate, --skip and the text report.
 *
 * Leaks: on a fail() path the tool leaves its tables to exit(); here
 * that would read as a leak, so LeakSanitizer is off during the call.
 * The replay test (tests/fuzz/replay_pcapstat.sh) runs the real binary
 * over the corpus, where LeakSanitizer is on.
 */

#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"

int pcr_pcapstat_main(int argc, char **argv);
void __wrap_fail(int status, const char *fmt, ...)
	__attribute__((noreturn));
void __wrap_usage_error(const char *fmt, ...) __attribute__((noreturn));
void __lsan_disable(void) __attribute__((weak));
void __lsan_enable(void) __attribute__((weak));

static jmp_buf back;
static int fail_status;
static char path[64];

void
__wrap_fail(int status, const char *fmt, ...)
{
	(void)fmt;
	fail_status = status;
	longjmp(back, 1);
}

void
__wrap_usage_error(const char *fmt, ...)
{
	(void)fmt;
	fail_status = 2;
	longjmp(back, 1);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/tmp/pcr-fuzz-pcapstat.%d", (int)getpid());
	if (freopen("/dev/null", "w", stdout) == NULL)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char ovh[16], win[32], skip[16];
	char *argv[16];
	int argc = 0;
	volatile int rc = -1;
	FILE *f;

	if (path[0] == '\0')
		LLVMFuzzerInitialize(NULL, NULL);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();

	snprintf(ovh, sizeof(ovh), "%zu", size % 41);
	snprintf(win, sizeof(win), "%zu", 1 + (size * 7919u) % 20000000u);
	snprintf(skip, sizeof(skip), "%zu", (size / 7) % 3);
	argv[argc++] = "pacer-pcapstat";
	if (size % 2 == 0)
		argv[argc++] = "--json";
	argv[argc++] = "--wire-overhead";
	argv[argc++] = ovh;
	argv[argc++] = "--window";
	argv[argc++] = win;
	if (size % 3 == 0) {
		argv[argc++] = "--rate";
		argv[argc++] = size % 5 == 0 ? "1bit" : "10gbit";
	}
	if (size % 5 == 1) {
		argv[argc++] = "--skip";
		argv[argc++] = skip;
	}
	if (size % 4 == 1) {
		argv[argc++] = "--ideal-gap-ns";
		argv[argc++] = "1000";
	}
	argv[argc++] = path;
	argv[argc] = NULL;

	optind = 0; /* glibc: start getopt afresh */
	if (__lsan_disable != NULL)
		__lsan_disable();
	if (setjmp(back) == 0)
		rc = pcr_pcapstat_main(argc, argv);
	else
		rc = fail_status;
	if (__lsan_enable != NULL)
		__lsan_enable();
	fflush(stdout);
	PCR_FUZZ_CHECK(rc == 0 || rc == 1 || rc == 2, "exit status %d", rc);
	unlink(path);
	return 0;
}
