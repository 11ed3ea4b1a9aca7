/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * The CLI grammar: src/cli.c's command table through DPDK's cmdline
 * parser, its handlers, and the control layer behind them (src/control.c,
 * the rate, size and match parsers), without the EAL. The input is a
 * script, as --cmdline-file runs one: a line per command.
 *
 * The appliance around them is two ports; what needs the EAL is a test
 * double here:
 *  - rte_zmalloc/rte_free are posix_memalign/free (-Wl,--wrap, as grout's
 *    unit tests wrap what they replace);
 *  - the TX lcores' side of the `set horizon` handshake (dataplane.c
 *    tx_port_requests) runs in pcr_clock_tsc_hz(), which control.c calls
 *    between posting its request and waiting for the answer; a request
 *    left unanswered after a line means the handshake changed, and fails;
 *  - `save config FILE` writes the harness's own file whatever FILE says
 *    (pcr_file_replace(), src/savefile.c, is a double here; fopen and
 *    fopen64 are wrapped too: while a command runs, a file opened for
 *    writing is the harness's), except FILE under /nonexistent/, which
 *    fails as a missing directory would;
 *  - statistics, wheels and clocks report zeros.
 *
 * Checked after every line:
 *  - the configuration is within the bounds the options document (the
 *    checks fuzz_config applies to a loaded file, check_config.h);
 *  - a line the parser refuses, or whose handler prints "error:", changed
 *    nothing: the configuration, written out, is what it was before;
 *  - what the fast path reads follows the configuration: every port's
 *    published rates are the ones pcr_rates_build() derives from it, the
 *    published class table has its classes, live or deleted;
 * and after the script, `save config` and a fresh `--config` load of the
 * file give back the same configuration, written out byte for byte.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"

/* the grammar and its statics, with the harness's allocation wrappers */
#include "cli.c"

#include "check_config.h"

#define FUZZ_MAX_LINES 64

struct pcr_app pcr_app;
static struct pcr_txport txports[2];
static struct pcr_config base;
static char base_path[64], save_path[64];
static const char *save_asked; /* FILE of the last `save config` */
static int out_fd = -1, devnull = -1;
static struct cmdline *cl;

/* ------------------------------------------------------------------ */
/* Test doubles                                                        */

void *__wrap_rte_zmalloc(const char *type, size_t size, unsigned int align);
void __wrap_rte_free(void *p);
FILE *__wrap_fopen(const char *path, const char *mode);
FILE *__wrap_fopen64(const char *path, const char *mode);
FILE *__real_fopen(const char *path, const char *mode);
FILE *__real_fopen64(const char *path, const char *mode);

void *
__wrap_rte_zmalloc(const char *type, size_t size, unsigned int align)
{
	void *p;

	(void)type;
	if (align < sizeof(void *))
		align = sizeof(void *);
	if (posix_memalign(&p, align, size) != 0)
		return NULL;
	memset(p, 0, size);
	return p;
}

void
__wrap_rte_free(void *p)
{
	free(p);
}

/* While a command runs, every file opened for writing is the harness's. */
static bool commands_running;

static const char *
fopen_path(const char *path, const char *mode)
{
	if (!commands_running || strpbrk(mode, "wa+") == NULL)
		return path;
	save_asked = path;
	if (strncmp(path, "/nonexistent/", 13) == 0)
		return NULL;
	return save_path;
}

/* fopen() or fopen64() of the path fopen_path() says */
static FILE *
wrapped_open(FILE *(*real)(const char *, const char *), const char *path,
	     const char *mode)
{
	const char *p = fopen_path(path, mode);

	if (p == NULL) {
		errno = ENOENT;
		return NULL;
	}
	return real(p, mode);
}

FILE *
__wrap_fopen(const char *path, const char *mode)
{
	return wrapped_open(__real_fopen, path, mode);
}

FILE *
__wrap_fopen64(const char *path, const char *mode)
{
	return wrapped_open(__real_fopen64, path, mode);
}

/* the TX lcores' answer to `set horizon` (see the top of the file) */
static void
tx_lcores_answer(void)
{
	uint16_t p;

	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_txport *tp = pcr_app.ports[p].txq[0];
		uint32_t r = __atomic_load_n(&tp->horizon_req, __ATOMIC_ACQUIRE);

		if (r == tp->horizon_done)
			continue;
		/* as a wheel of 1 µs slots, 4 levels of 256 does: 4295 s */
		tp->horizon_rc = tp->horizon_ns > (1ull << 32) * 1000 ? -ERANGE : 0;
		__atomic_store_n(&tp->horizon_done, r, __ATOMIC_RELEASE);
	}
}

uint64_t
pcr_clock_tsc_hz(void)
{
	tx_lcores_answer();
	return 2000000000ull;
}

uint64_t
pcr_clock_ns_to_cycles(uint64_t ns)
{
	return ns * 2;
}

void
pcr_clock_info_get(struct pcr_clock_info *i)
{
	memset(i, 0, sizeof(*i));
	i->tsc_hz = 2000000000ull;
}

int
pcr_clock_nic_info_get(uint16_t port, struct pcr_clock_nic_info *i)
{
	(void)port;
	memset(i, 0, sizeof(*i));
	return -ENOTSUP;
}

void
pcr_wheel_info_get(const struct pcr_wheel *w, struct pcr_wheel_info *i)
{
	(void)w;
	memset(i, 0, sizeof(*i));
	i->granularity_ns = 1000;
}

void
pcr_stats_snapshot(struct pcr_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->consistent = true;
}

void
pcr_stats_json(const struct pcr_snapshot *s, FILE *f, int64_t in_use, bool final)
{
	(void)s;
	fprintf(f, "{\"%s\":%lld}\n", final ? "mempool_in_use_at_exit" : "mempool_in_use",
		(long long)in_use);
}

void
pcr_stats_prometheus(const struct pcr_snapshot *s, FILE *f)
{
	(void)s;
	fprintf(f, "pacer_mbufs 0\n");
}

void
pcr_stats_snapshot_live(struct pcr_snapshot *s)
{
	pcr_stats_snapshot(s);
}

void
pcr_stats_class_restart(unsigned int k)
{
	(void)k;
}

int
pcr_stats_rate(uint16_t p, double *rx_bps, double *tx_bps, double *window_s)
{
	(void)p;
	*rx_bps = *tx_bps = *window_s = 0;
	return -1;
}

int
pcr_file_replace(const char *path, pid_t cwd_pid,
		 int (*fill)(FILE *f, const void *arg), const void *arg,
		 char *abs, size_t abslen, char *err, size_t errlen)
{
	FILE *f;

	(void)cwd_pid;
	save_asked = path;
	snprintf(abs, abslen, "%s", path);
	if (strncmp(path, "/nonexistent/", 13) == 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(ENOENT));
		return -1;
	}
	f = __real_fopen(save_path, "w");
	if (f == NULL || fill(f, arg) != 0) {
		if (f != NULL)
			fclose(f);
		snprintf(err, errlen, "%s: cannot write", path);
		return -1;
	}
	return fclose(f) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* The harness                                                         */

static char *
config_text(const struct pcr_config *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f == NULL)
		abort();
	pcr_options_write(f, c);
	fclose(f);
	return buf;
}

/* pcr_options_parse() of `--config path`, its messages to /dev/null */
static int
load(const char *path, struct pcr_config *c)
{
	char arg0[] = "pacer", arg1[] = "--config", arg2[64];
	char *argv[] = { arg0, arg1, arg2, NULL };
	int rc, saved;

	snprintf(arg2, sizeof(arg2), "%s", path);

	fflush(stderr);
	saved = dup(2);
	dup2(devnull, 2);
	rc = pcr_options_parse(3, argv, c);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return rc;
}

static const char base_ini[] =
	"[pacer]\n"
	"rate = 100mbit\n"
	"flow-rate = 10mbit\n"
	"[class video]\n"
	"match = proto udp dport 5004-5010\n"
	"rate = 40mbit\n"
	"[class bulk]\n"
	"match = proto tcp\n"
	"flow-rate = 2mbit\n"
	"[port 1]\n"
	"rate = 1gbit\n";

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *f;
	uint16_t p;

	(void)argc;
	(void)argv;
	snprintf(base_path, sizeof(base_path), "/tmp/pcr-fuzz-cli-base.%d",
		 (int)getpid());
	snprintf(save_path, sizeof(save_path), "/tmp/pcr-fuzz-cli-save.%d",
		 (int)getpid());
	devnull = open("/dev/null", O_WRONLY);
	out_fd = memfd_create("pcr-fuzz-cli", 0);
	if (devnull < 0 || out_fd < 0)
		abort();
	f = fopen(base_path, "w");
	if (f == NULL || fputs(base_ini, f) < 0 || fclose(f) != 0)
		abort();
	if (load(base_path, &base) != 0)
		abort();
	unlink(base_path);
	pcr_app.n_ports = 2;
	for (p = 0; p < 2; p++) {
		pcr_app.ports[p].id = p;
		pcr_app.ports[p].peer = p ^ 1;
		snprintf(pcr_app.ports[p].name, sizeof(pcr_app.ports[p].name),
			 "net_null%u", p);
		txports[p].port = p;
		pcr_app.ports[p].txq[0] = &txports[p];
		pcr_app.ports[p].n_txq = 1;
	}
	/* ethdev's "Invalid port_id" for `show port xstats`: no EAL ports */
	rte_log_set_global_level(RTE_LOG_EMERG);
	cl = cmdline_new(main_ctx, "", -1, out_fd);
	if (cl == NULL)
		abort();
	return 0;
}

/* A fresh appliance at the base configuration. */
static void
reset(void)
{
	pcr_app.cfg = base;
	pcr_app.dp.forwarding = false;
	pcr_app.fwd_touched = false;
	pcr_app.quit = false;
	resume_tsc = 0;
	if (pcr_rates_publish(&pcr_app) != 0 ||
	    pcr_classtab_publish(&pcr_app) != 0)
		abort();
}

/* What the line printed, NUL-terminated (the memfd is emptied). */
static char *
take_output(void)
{
	off_t n = lseek(out_fd, 0, SEEK_CUR);
	char *buf = malloc((size_t)n + 1);

	if (buf == NULL || pread(out_fd, buf, (size_t)n, 0) != n)
		abort();
	buf[n] = '\0';
	if (ftruncate(out_fd, 0) != 0 || lseek(out_fd, 0, SEEK_SET) != 0)
		abort();
	return buf;
}

/* Every finite shared rate has a calendar of the shape its rate, the
 * horizon and the burst call for (a bucket of two to four frames unless
 * the ring's size sets it): kept or replaced on every change. */
static void
check_cal(uint16_t p, const char *what, const struct pcr_cal *cal,
	  const struct pcr_rate *r)
{
	struct pcr_cal_params cp;

	if (pcr_rate_unlimited(r))
		return;
	PCR_FUZZ_CHECK(cal != NULL, "port %u: %s has a rate and no calendar",
		       p, what);
	pcr_cal_params_of(&pcr_app.cfg, r, &cp);
	PCR_FUZZ_CHECK(pcr_cal_suits(cal, &cp),
		       "port %u: %s's calendar (bucket %" PRIu64 ") does not suit its rate",
		       p, what, cal->width);
}

static void
check_cals(uint16_t p)
{
	const struct pcr_rates *r = pcr_app.ports[p].rates;
	unsigned int i;

	check_cal(p, "the aggregate", r->agg_cal, &r->agg);
	for (i = 0; i < pcr_app.cfg.n_classes; i++)
		check_cal(p, "a class", r->cls_cal[i], &r->cls[i]);
}

static void
check_published(void)
{
	const struct pcr_config *c = &pcr_app.cfg;
	const struct pcr_classtab *ct = pcr_app.dp.classtab;
	unsigned int i;
	uint16_t p;

	for (p = 0; p < pcr_app.n_ports; p++) {
		struct pcr_rates want;

		PCR_FUZZ_CHECK(pcr_rates_build(&pcr_app.cfg, p, &want) == 0,
			       "port %u: the configuration's rates do not build", p);
		PCR_FUZZ_CHECK(memcmp(&want, pcr_app.ports[p].rates,
				      offsetof(struct pcr_rates, agg_cal)) == 0,
			       "port %u: published rates are not the configuration's", p);
		check_cals(p);
	}
	PCR_FUZZ_CHECK(ct->n == c->n_classes, "class table has %u of %u classes",
		       ct->n, c->n_classes);
	for (i = 0; i < ct->n; i++)
		PCR_FUZZ_CHECK(ct->live[i] == !c->classes[i].deleted,
			       "class %u live in the table, deleted in the configuration", i);
}

/* One command, as script_step() runs it. */
static void
run_line(const char *line)
{
	char cmd[1100], *before, *after, *out;
	uint16_t p;
	int rc;

	snprintf(cmd, sizeof(cmd), "%s\n", line);
	before = config_text(&pcr_app.cfg);
	commands_running = true;
	rc = cmdline_parse(cl, cmd);
	commands_running = false;
	resume_tsc = 0; /* `sleep` only holds the next line back */
	out = take_output();
	after = config_text(&pcr_app.cfg);
	for (p = 0; p < pcr_app.n_ports; p++)
		PCR_FUZZ_CHECK(txports[p].horizon_done == txports[p].horizon_req,
			       "%s: port %u: the horizon handshake changed (%u asked, %u answered): %s",
			       line, p, txports[p].horizon_req,
			       txports[p].horizon_done, out);
	/* cmdline_parse(): the line's length when it ran, < 0 refused */
	if (rc < 0)
		PCR_FUZZ_CHECK(strcmp(before, after) == 0,
			       "'%s' refused by the parser (%d) changed the configuration",
			       line, rc);
	if (strncmp(out, "error:", 6) == 0 || strstr(out, "\nerror:") != NULL)
		PCR_FUZZ_CHECK(strcmp(before, after) == 0,
			       "'%s' refused (%s) changed the configuration",
			       line, out);
	check_config(&pcr_app.cfg);
	check_published();
	free(before);
	free(after);
	free(out);
}

/* `save config` and a fresh load give the same configuration back. */
static void
check_round_trip(void)
{
	static struct pcr_config back;
	char *want, *got, *out;
	int rc;

	save_asked = NULL;
	commands_running = true;
	rc = cmdline_parse(cl, "save config /tmp/pacer-fuzz.cfg\n");
	commands_running = false;
	out = take_output();
	PCR_FUZZ_CHECK(rc > 0 && save_asked != NULL &&
			       strstr(out, "error") == NULL,
		       "save config: %s", out);
	rc = load(save_path, &back);
	want = config_text(&pcr_app.cfg);
	PCR_FUZZ_CHECK(rc == 0, "the saved configuration does not load:\n%s",
		       want);
	got = config_text(&back);
	PCR_FUZZ_CHECK(strcmp(want, got) == 0,
		       "saved and loaded back, the configuration differs:\n%s\n----\n%s",
		       want, got);
	check_config(&back);
	free(want);
	free(got);
	free(out);
	unlink(save_path);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[1024];
	unsigned int lines = 0;
	size_t i = 0;

	if (cl == NULL)
		LLVMFuzzerInitialize(NULL, NULL);
	reset();
	while (i < size && lines < FUZZ_MAX_LINES) {
		size_t n = 0;

		while (i < size && data[i] != '\n') {
			if (n < sizeof(line) - 1)
				line[n++] = data[i] == '\0' ? ' ' : (char)data[i];
			i++;
		}
		i++; /* the newline */
		line[n] = '\0';
		lines++;
		run_line(line);
	}
	check_round_trip();
	return 0;
}
