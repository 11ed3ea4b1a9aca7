/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

#ifndef PCR_TEST_EAL_H
#define PCR_TEST_EAL_H

/**
 * @file
 * EAL start-up for unit tests: no hugepages, no PCI, no shared config and a
 * file prefix of the test's own (name + pid), so tests run in parallel never
 * share runtime files or telemetry sockets; and the end of it for them and
 * the benchmarks (bench/), which start their own.
 */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>

/**
 * Start the EAL for test @p name with lcores @p lcores (e.g. "0" or "0-1")
 * and @p mem_mb MiB of memory. Exits the process on failure.
 */
static inline void
pcr_test_eal_init(const char *name, const char *lcores, unsigned int mem_mb)
{
	char prefix[96], mem[16], lc[32];
	char *argv[] = {
		(char *)(uintptr_t)name, "--no-huge", "-m", mem, "--no-pci",
		"--no-shconf", prefix, "-l", lc, "--log-level=lib.eal:error",
		"--no-telemetry", NULL,
	};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1;

	snprintf(prefix, sizeof(prefix), "--file-prefix=pcr-%s-%d", name,
		 (int)getpid());
	snprintf(mem, sizeof(mem), "%u", mem_mb);
	snprintf(lc, sizeof(lc), "%s", lcores);
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "%s: rte_eal_init failed: %s\n", name,
			rte_strerror(rte_errno));
		exit(1);
	}
}

/**
 * rte_eal_cleanup(), then remove the run's EAL runtime directory
 * (/var/run/dpdk/PREFIX as root): DPDK 22.11 leaves it behind, one per run
 * of a file prefix of its own. rmdir() takes it only when empty, as it is
 * after a --no-shconf run.
 */
static inline void
pcr_test_eal_cleanup(void)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	(void)rmdir(dir);
}

#endif /* PCR_TEST_EAL_H */
