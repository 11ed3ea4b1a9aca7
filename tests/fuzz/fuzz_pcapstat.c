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
 * Leaks: on a fail() path the tool leaves its tables and its pcap_t to
 * exit(). Here its realloc, free, pcap_open_offline_with_tstamp_precision
 * and pcap_close are renamed too (-D when pcapstat.c is compiled), so
 * the harness knows what is live: after a fail() it releases it, after a
 * normal return nothing may be live (a leak fails the check), and
 * LeakSanitizer stays on for everything else.
 */

#include <getopt.h>
#include <pcap/pcap.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz.h"

int pcr_pcapstat_main(int argc, char **argv);
void __wrap_fail(int status, const char *fmt, ...)
	__attribute__((noreturn));
void __wrap_usage_error(const char *fmt, ...) __attribute__((noreturn));
/* pcapstat.c's realloc, free, pcap_open_... and pcap_close */
void *pcr_fuzz_realloc(void *p, size_t n);
void pcr_fuzz_free(void *p);
pcap_t *pcr_fuzz_pcap_open(const char *f, u_int prec, char *err);
void pcr_fuzz_pcap_close(pcap_t *p);

#define MAX_LIVE 64

/* what pcapstat.c holds now */
/* what pcapstat.c holds now (addresses, compared only) */
static uintptr_t live[MAX_LIVE];
static unsigned int n_live;
static pcap_t *live_pcap;

static void
live_del(uintptr_t p)
{
	unsigned int i;

	for (i = 0; i < n_live; i++)
		if (live[i] == p) {
			live[i] = live[--n_live];
			return;
		}
	PCR_FUZZ_CHECK(false, "free of %#lx, not allocated by pcapstat.c",
		       (unsigned long)p);
}

void *
pcr_fuzz_realloc(void *p, size_t n)
{
	void *q;

	if (p != NULL)
		live_del((uintptr_t)p);
	q = realloc(p, n);
	PCR_FUZZ_CHECK(q != NULL || n == 0, "out of memory (%zu bytes)", n);
	if (q != NULL) {
		PCR_FUZZ_CHECK(n_live < MAX_LIVE, "more than %d allocations",
			       MAX_LIVE);
		live[n_live++] = (uintptr_t)q;
	}
	return q;
}

void
pcr_fuzz_free(void *p)
{
	if (p != NULL)
		live_del((uintptr_t)p);
	free(p);
}

pcap_t *
pcr_fuzz_pcap_open(const char *f, u_int prec, char *err)
{
	PCR_FUZZ_CHECK(live_pcap == NULL, "second pcap_t");
	live_pcap = pcap_open_offline_with_tstamp_precision(f, prec, err);
	return live_pcap;
}

void
pcr_fuzz_pcap_close(pcap_t *p)
{
	PCR_FUZZ_CHECK(p == live_pcap, "pcap_close of another pcap_t");
	live_pcap = NULL;
	pcap_close(p);
}

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
	if (setjmp(back) == 0) {
		rc = pcr_pcapstat_main(argc, argv);
		PCR_FUZZ_CHECK(n_live == 0 && live_pcap == NULL,
			       "exit 0 with %u allocations and %s pcap_t live",
			       n_live, live_pcap != NULL ? "a" : "no");
	} else {
		/* what exit() would have released */
		rc = fail_status;
		while (n_live > 0)
			pcr_fuzz_free((void *)live[0]);
		if (live_pcap != NULL)
			pcr_fuzz_pcap_close(live_pcap);
	}
	fflush(stdout);
	PCR_FUZZ_CHECK(rc == 0 || rc == 2, "exit status %d", rc);
	unlink(path);
	return 0;
}
