/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The configuration file loader: src/options.c pcr_options_parse() with
 * `--config FILE`, FILE holding the input bytes (check_syntax(), DPDK's
 * rte_cfgfile, the [pacer], [class NAME] and [port N] sections and every
 * value parser behind them). Its error lines go to /dev/null. Checked: it
 * accepts or refuses (never anything else), and an accepted
 * configuration is within the bounds the options document.
 */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_config.h"
#include "fuzz.h"
#include "pacer.h"

static char path[64];
static int devnull = -1;
static struct pcr_config cfg;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(path, sizeof(path), "/tmp/pcr-fuzz-config.%d", (int)getpid());
	devnull = open("/dev/null", O_WRONLY);
	if (devnull < 0)
		abort();
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = { "pacer", "--config", path, NULL };
	FILE *f;
	int rc, saved;

	if (devnull < 0)
		LLVMFuzzerInitialize(NULL, NULL);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();

	fflush(stderr);
	saved = dup(2);
	dup2(devnull, 2);
	rc = pcr_options_parse(3, argv, &cfg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);

	PCR_FUZZ_CHECK(rc == 0 || rc == -1, "pcr_options_parse returned %d", rc);
	if (rc == 0)
		check_config(&cfg);
	unlink(path);
	return 0;
}
