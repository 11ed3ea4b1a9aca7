/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Corpus replayer: the main() a harness gets when it is not linked with
 * libFuzzer. `harness FILE|DIR...` runs LLVMFuzzerTestOneInput() once on
 * every file given and on every file of every directory given (sorted by
 * name), and fails if there was none: an empty corpus tests nothing.
 * A harness's failed check aborts, so a reproducer in the corpus fails
 * the test.
 */

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long n_run;

static void
run_file(const char *path)
{
	uint8_t *buf = NULL;
	size_t n = 0, cap = 0;
	FILE *f = fopen(path, "rb");

	if (f == NULL) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			cap = cap == 0 ? 4096 : 2 * cap;
			buf = realloc(buf, cap);
			if (buf == NULL) {
				fprintf(stderr, "replay: out of memory\n");
				exit(1);
			}
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		fprintf(stderr, "replay: %s: read error\n", path);
		exit(1);
	}
	fclose(f);
	/* an exact-size copy, so that ASan sees a read one byte past the end */
	{
		uint8_t *exact = malloc(n != 0 ? n : 1);

		if (exact == NULL) {
			fprintf(stderr, "replay: out of memory\n");
			exit(1);
		}
		memcpy(exact, buf, n);
		free(buf);
		LLVMFuzzerTestOneInput(exact, n);
		free(exact);
	}
	n_run++;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
run_dir(const char *dir)
{
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, i;
	DIR *d = opendir(dir);

	if (d == NULL) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		if (names == NULL || (names[n] = strdup(e->d_name)) == NULL) {
			fprintf(stderr, "replay: out of memory\n");
			exit(1);
		}
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		run_file(path);
		free(names[i]);
	}
	free(names);
}

int
main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i],
				strerror(errno));
			return 1;
		}
		if (S_ISDIR(st.st_mode))
			run_dir(argv[i]);
		else
			run_file(argv[i]);
	}
	if (n_run == 0) {
		fprintf(stderr, "replay: no input in %s...\n", argv[1]);
		return 1;
	}
	fprintf(stderr, "replay: %lu inputs, no failure\n", n_run);
	return 0;
}
