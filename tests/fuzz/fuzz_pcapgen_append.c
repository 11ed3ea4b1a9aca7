/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacer-pcapgen's only reader of outside input: --append reads the
 * existing FILE for its last timestamp (append_last_ts(): magic check,
 * libpcap, every record). The input is that file. tools/pcapgen.c is
 * included here (main renamed) to reach the static function; its fail()
 * exits come back by longjmp (-Wl,--wrap=fail), and its fopen/fclose and
 * pcap_open_offline_with_tstamp_precision/pcap_close are tracked, so what
 * exit() would release is released and LeakSanitizer stays on.
 * Checked: it accepts or refuses (exit status 2), never anything else,
 * and on a well-formed nanosecond capture (every record whole, to the
 * end of the file) the timestamp is the last record's, read here
 * independently.
 */

#include <pcap/pcap.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

void __wrap_fail(int status, const char *fmt, ...)
	__attribute__((noreturn));
FILE *pcr_fuzz_fopen(const char *path, const char *mode);
int pcr_fuzz_fclose(FILE *f);
pcap_t *pcr_fuzz_pcap_open(const char *f, u_int prec, char *err);
void pcr_fuzz_pcap_close(pcap_t *p);

static jmp_buf back;
static int fail_status;
static FILE *live_fp;
static pcap_t *live_pcap;
static char in_path[64];

void
__wrap_fail(int status, const char *fmt, ...)
{
	(void)fmt;
	fail_status = status;
	longjmp(back, 1);
}

FILE *
pcr_fuzz_fopen(const char *p, const char *mode)
{
	PCR_FUZZ_CHECK(live_fp == NULL, "second FILE");
	live_fp = fopen(p, mode);
	return live_fp;
}

int
pcr_fuzz_fclose(FILE *f)
{
	PCR_FUZZ_CHECK(f == live_fp, "fclose of another FILE");
	live_fp = NULL;
	return fclose(f);
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

/* pcapgen.c, with its main() and these four calls renamed */
#define main pcr_pcapgen_main
#define fopen pcr_fuzz_fopen
#define fclose pcr_fuzz_fclose
#define pcap_open_offline_with_tstamp_precision pcr_fuzz_pcap_open
#define pcap_close pcr_fuzz_pcap_close
int pcr_pcapgen_main(int argc, char **argv);
#include "pcapgen.c"
#undef main
#undef fopen
#undef fclose
#undef pcap_open_offline_with_tstamp_precision
#undef pcap_close

static uint16_t
rd16(const uint8_t *p, bool swap)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return swap ? __builtin_bswap16(v) : v;
}

static uint32_t
rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

/* last timestamp of a clean nanosecond Ethernet capture, or false */
static bool
clean_last_ts(const uint8_t *d, size_t n, uint64_t *ts)
{
	uint32_t magic, snap;
	size_t off = 24;
	bool swap, any = false;

	if (n < 24)
		return false;
	memcpy(&magic, d, 4);
	if (magic == 0xa1b23c4d)
		swap = false;
	else if (magic == 0x4d3cb2a1)
		swap = true;
	else
		return false;
	snap = rd32(d + 16, swap);
	/* version 2.4, Ethernet, a snaplen libpcap takes as it is */
	if (rd16(d + 4, swap) != 2 || rd16(d + 6, swap) != 4 ||
	    rd32(d + 20, swap) != DLT_EN10MB || snap == 0 || snap > 262144)
		return false;
	while (off < n) {
		uint32_t incl, orig, nsec;

		if (n - off < 16)
			return false;
		nsec = rd32(d + off + 4, swap);
		incl = rd32(d + off + 8, swap);
		orig = rd32(d + off + 12, swap);
		if (incl > snap || incl > orig || nsec >= 1000000000u ||
		    n - off - 16 < incl)
			return false;
		*ts = (uint64_t)rd32(d + off, swap) * 1000000000u + nsec;
		any = true;
		off += 16 + incl;
	}
	return any;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t last = 0, want = 0;
	volatile int status = 0;
	volatile bool any = false;
	FILE *f;

	if (in_path[0] == '\0')
		snprintf(in_path, sizeof(in_path), "/tmp/pcr-fuzz-pcapgen.%d",
			 (int)getpid());
	f = fopen(in_path, "wb");
	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();

	if (setjmp(back) == 0) {
		any = append_last_ts(in_path, &last);
		PCR_FUZZ_CHECK(live_fp == NULL && live_pcap == NULL,
			       "returned with a FILE or pcap_t open");
	} else {
		status = fail_status;
		if (live_fp != NULL)
			pcr_fuzz_fclose(live_fp);
		if (live_pcap != NULL)
			pcr_fuzz_pcap_close(live_pcap);
	}
	PCR_FUZZ_CHECK(status == 0 || status == EXIT_USAGE, "exit status %d",
		       status);
	if (clean_last_ts(data, size, &want)) {
		PCR_FUZZ_CHECK(status == 0 && any && last == want,
			       "clean capture: status %d, last %lu, want %lu",
			       status, (unsigned long)last, (unsigned long)want);
	}
	unlink(in_path);
	return 0;
}
