/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacerctl: one command of pacer's prompt grammar to a running pacer, over
 * its control socket (src/ctlsock.c has the protocol: a line out; the
 * output, a NUL, "ok" or "error" back). The exit status is the command's:
 * 0 ok, 1 the command failed (its "error: ..." on stderr), 2 pacerctl
 * could not ask (usage, no socket, timeout). No DPDK here.
 */

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define LINE_MAX_BYTES 1024

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: pacerctl [options] COMMAND...\n"
		"Run one command of pacer's prompt on a running pacer (pacer(8), COMMANDS).\n\n"
		"  -s, --socket PATH      the control socket (pacer --control-socket)\n"
		"      --file-prefix P    the EAL file prefix pacer runs with [rte]: its socket\n"
		"                         is pacer.sock in that runtime directory\n"
		"      --json             the reply as JSON: {\"command\", \"ok\", \"output\"};\n"
		"                         with show stats, the statistics document itself\n"
		"      --prometheus       with show stats: the Prometheus text format\n"
		"  -t, --timeout S        give up after S seconds [10]\n"
		"  -h, --help             this text\n\n"
		"Exit status: 0 ok, 1 the command failed, 2 pacerctl could not ask.\n"
		"Example: pacerctl set port 1 rate 50mbit; pacerctl show stats --prometheus\n");
}

/* The EAL's runtime directory for @p prefix, as rte_eal_init() makes it. */
static void
default_socket(char *buf, size_t len, const char *prefix)
{
	const char *base = "/var/run";
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	if (getuid() != 0)
		base = xdg != NULL ? xdg : "/tmp";
	snprintf(buf, len, "%s/dpdk/%s/pacer.sock", base, prefix);
}

static void
json_string(FILE *f, const char *s, size_t len)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "file-prefix", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[sizeof(sa.sun_path)] = "", line[LINE_MAX_BYTES + 2];
	const char *prefix = "rte";
	bool json = false, prom = false, stats;
	double timeout = 10, deadline;
	char *reply = NULL, *nul;
	size_t len = 0, cap = 0, n;
	int o, i, fd;

	while ((o = getopt_long(argc, argv, "s:t:h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			if (strlen(optarg) >= sizeof(path) - 1) {
				fprintf(stderr, "pacerctl: --socket: '%s' is longer than a UNIX socket path takes\n",
					optarg);
				return 2;
			}
			snprintf(path, sizeof(path), "%s", optarg);
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'j':
			json = true;
			break;
		case 'P':
			prom = true;
			break;
		case 't': {
			char *e;

			timeout = strtod(optarg, &e);
			if (*e != '\0' || !(timeout > 0 && timeout <= 3600)) {
				fprintf(stderr, "pacerctl: --timeout: '%s' is not a number of seconds in (0, 3600]\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "pacerctl: no command (pacerctl help lists pacer's)\n");
		usage(stderr);
		return 2;
	}
	if (path[0] == '\0')
		default_socket(path, sizeof(path), prefix);
	line[0] = '\0';
	n = 0;
	for (i = optind; i < argc; i++) {
		int k = snprintf(line + n, sizeof(line) - n, "%s%s", i > optind ? " " : "",
				 argv[i]);

		if (k < 0 || (size_t)k >= sizeof(line) - n - 1) {
			fprintf(stderr, "pacerctl: the command is longer than %d bytes\n",
				LINE_MAX_BYTES);
			return 2;
		}
		n += (size_t)k;
	}
	stats = strcmp(line, "show stats") == 0;
	if (prom && !stats) {
		fprintf(stderr, "pacerctl: --prometheus goes with show stats\n");
		return 2;
	}
	if (stats && (json || prom))
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s",
				      prom ? " prometheus" : " json");
	else if (stats) {
		fprintf(stderr, "pacerctl: show stats takes --json or --prometheus (show port stats all is the text)\n");
		return 2;
	}
	line[n++] = '\n';

	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		fprintf(stderr, "pacerctl: %s: %s (is pacer running, with this --file-prefix or --control-socket?)\n",
			path, strerror(errno));
		return 2;
	}
	if (send(fd, line, n, MSG_NOSIGNAL) != (ssize_t)n) {
		fprintf(stderr, "pacerctl: %s: %s\n", path, strerror(errno));
		return 2;
	}
	/* the reply: output, NUL, status line */
	deadline = now_s() + timeout;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = deadline - now_s();
		ssize_t r;

		nul = len > 0 ? memchr(reply, '\0', len) : NULL;
		if (nul != NULL && memchr(nul + 1, '\n', len - (size_t)(nul + 1 - reply)) != NULL)
			break;
		if (left <= 0 || poll(&pfd, 1, (int)(left * 1000) + 1) <= 0) {
			fprintf(stderr, "pacerctl: %s: no reply within %g s\n", path, timeout);
			return 2;
		}
		if (cap - len < 65536) {
			char *g = realloc(reply, cap + 65536 + 1);

			if (g == NULL) {
				fprintf(stderr, "pacerctl: out of memory\n");
				return 2;
			}
			reply = g;
			cap += 65536;
		}
		r = recv(fd, reply + len, cap - len, 0);
		if (r <= 0) {
			fprintf(stderr, "pacerctl: %s: connection closed before the reply ended\n",
				path);
			if (len > 0)
				fwrite(reply, 1, len, stderr);
			return 2;
		}
		len += (size_t)r;
	}
	close(fd);
	{
		size_t out_len = (size_t)(nul - reply);
		bool ok = strncmp(nul + 1, "ok\n", 3) == 0;

		line[n - 1] = '\0';
		if (json && !stats) {
			printf("{\"command\":");
			json_string(stdout, line, strlen(line));
			printf(",\"ok\":%s,\"output\":", ok ? "true" : "false");
			json_string(stdout, reply, out_len);
			printf("}\n");
		} else {
			fwrite(reply, 1, out_len, ok ? stdout : stderr);
		}
		free(reply);
		return ok ? 0 : 1;
	}
}
