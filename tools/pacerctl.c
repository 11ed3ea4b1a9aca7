/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * pacerctl: commands of pacer's prompt grammar to a running pacer, over its
 * control socket (src/ctlsock.c has the protocol: a line out; the output,
 * a NUL, "ok" or "error" back). One command from the command line, or (-f)
 * a file of them, one at a time over one connection. The exit status is
 * the commands': 0 ok, 1 a command failed (its "error: ..." on stderr), 2
 * pacerctl could not ask (usage, no socket, a reply that stopped coming).
 * No DPDK here.
 */

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* a request's longest line, as the server takes it (PCR_CLI_LINE_MAX) */
#define LINE_MAX_BYTES 1024
#define SOCK_PATH_BYTES sizeof(((struct sockaddr_un *)0)->sun_path)
/* the reply buffer's first size, and the least room a recv() gets */
#define REPLY_CHUNK 65536

static void
usage(FILE *f)
{
	fprintf(f,
		"Usage: pacerctl [options] COMMAND...\n"
		"       pacerctl [options] -f FILE\n"
		"Run commands of pacer's prompt on a running pacer (pacer(8), COMMANDS).\n\n"
		"  -s, --socket PATH      the control socket (pacer --control-socket)\n"
		"      --file-prefix P    the EAL file prefix pacer runs with [rte]: its socket\n"
		"                         is pacer.sock in that runtime directory\n"
		"  -f, --file FILE        run each line of FILE (- for stdin) as a command, in\n"
		"                         order, over one connection; blank lines and lines\n"
		"                         starting with # are skipped\n"
		"  -e, --err-exit         with -f: stop at the first command that fails\n"
		"      --json             the reply as JSON: {\"command\", \"ok\", \"output\"};\n"
		"                         with show stats, the statistics document itself;\n"
		"                         with -f, one JSON document a line\n"
		"      --prometheus       with show stats: the Prometheus text format\n"
		"  -t, --timeout S        give up when no byte of a reply came for S seconds [10]\n"
		"  -h, --help             this text\n\n"
		"The socket, when neither -s nor --file-prefix is given: $PACER_SOCKET, else\n"
		"pacer.sock of the file prefix rte.\n"
		"Exit status: 0 ok, 1 a command failed, 2 pacerctl could not ask.\n"
		"Example: pacerctl set port 1 rate 50mbit; pacerctl show stats --prometheus\n");
}

/* The socket in the EAL's runtime directory for @p prefix, as
 * rte_eal_init() makes it. */
static bool
default_socket(char *buf, size_t len, const char *prefix)
{
	const char *base = "/var/run";
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int k;

	if (getuid() != 0)
		base = xdg != NULL ? xdg : "/tmp";
	k = snprintf(buf, len, "%s/dpdk/%s/pacer.sock", base, prefix);
	return k > 0 && (size_t)k < len;
}

/*
 * The length of the UTF-8 sequence that starts @p s (@p len bytes left),
 * 0 when it is none: a stray continuation byte, an overlong form, a
 * surrogate, past U+10FFFF, or cut short. JSON is UTF-8 (RFC 8259), so
 * anything else in a reply must not reach the document as it is.
 */
static size_t
utf8_len(const unsigned char *s, size_t len)
{
	uint32_t cp, min;
	size_t n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
		min = 0x80;
	} else if ((s[0] & 0xf0) == 0xe0) {
		n = 3;
		cp = s[0] & 0x0f;
		min = 0x800;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
		min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/*
 * @p len bytes as a JSON string, whatever they hold: valid UTF-8 as it is,
 * each byte of anything else as U+FFFD, every control character escaped.
 * Runs of plain bytes go out in one fwrite(): a reply may be 100s of MB.
 */
static void
json_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	const unsigned char *run = p;

	fputc('"', f);
	while (p < end) {
		const char *esc;
		char u[8];
		size_t n;

		switch (*p) {
		case '"':
			esc = "\\\"";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\n':
			esc = "\\n";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		default:
			if (*p < 0x20 || *p == 0x7f) {
				snprintf(u, sizeof(u), "\\u%04x", *p);
				esc = u;
			} else if (*p < 0x80) {
				p++;
				continue;
			} else {
				n = utf8_len(p, (size_t)(end - p));
				if (n != 0) {
					p += n;
					continue;
				}
				esc = "\\ufffd";
			}
			break;
		}
		fwrite(run, 1, (size_t)(p - run), f);
		fputs(esc, f);
		run = ++p;
	}
	fwrite(run, 1, (size_t)(p - run), f);
	fputc('"', f);
}

/* One command, as it goes out. */
struct request {
	char *line;          /* the command, then '\n' */
	size_t len;          /* with the '\n' */
	bool stats;          /* show stats: a document comes back */
	unsigned int lineno; /* in the -f file; 0 from the command line */
};

struct ctl {
	const char *path;    /* the socket */
	const char *file;    /* -f, as errors name it; NULL without */
	bool json, prom;
	int timeout_ms;
	int fd;
	char *buf;           /* what came back and is not yet used */
	size_t len, cap;
};

/* "pacerctl: " and, for a line of the -f file, where it is */
static void
where(const struct ctl *c, unsigned int lineno)
{
	if (lineno != 0)
		fprintf(stderr, "pacerctl: %s:%u: ", c->file, lineno);
	else
		fputs("pacerctl: ", stderr);
}

/*
 * @p r for the command @p cmd: the command line's rules (length, show
 * stats with --json or --prometheus) hold for each line of a file too, and
 * are checked before anything is sent.
 */
static bool
request_make(struct request *r, const struct ctl *c, const char *cmd,
	     size_t len, unsigned int lineno)
{
	const char *fmt = "";

	r->lineno = lineno;
	if (len > LINE_MAX_BYTES) {
		where(c, lineno);
		fprintf(stderr, "the command is longer than %d bytes\n", LINE_MAX_BYTES);
		return false;
	}
	/* only a file can hold one; the server would refuse it */
	if (memchr(cmd, '\0', len) != NULL) {
		where(c, lineno);
		fprintf(stderr, "a command is a line of text: it has a NUL byte\n");
		return false;
	}
	r->stats = len == strlen("show stats") && memcmp(cmd, "show stats", len) == 0;
	if (c->prom && !r->stats) {
		where(c, lineno);
		fprintf(stderr, "--prometheus goes with show stats\n");
		return false;
	}
	if (r->stats && !c->json && !c->prom) {
		where(c, lineno);
		fprintf(stderr, "show stats takes --json or --prometheus (show port stats all is the text)\n");
		return false;
	}
	if (r->stats)
		fmt = c->prom ? " prometheus" : " json";
	r->len = len + strlen(fmt) + 1;
	r->line = malloc(r->len + 1);
	if (r->line == NULL) {
		fprintf(stderr, "pacerctl: out of memory\n");
		return false;
	}
	memcpy(r->line, cmd, len);
	memcpy(r->line + len, fmt, strlen(fmt));
	r->line[r->len - 1] = '\n';
	r->line[r->len] = '\0';
	return true;
}

/*
 * The commands of the -f file: every line is checked before any is sent,
 * so a file with a bad line changes nothing. 0, or 2 (told why).
 */
static int
requests_read(struct ctl *c, const char *name, struct request **out, size_t *n_out)
{
	FILE *f = strcmp(name, "-") == 0 ? stdin : fopen(name, "r");
	struct request *reqs = NULL;
	size_t n = 0, cap = 0, sz = 0;
	unsigned int lineno = 0;
	char *text = NULL;
	bool bad = false;
	ssize_t k;

	if (f == NULL) {
		fprintf(stderr, "pacerctl: %s: %s\n", name, strerror(errno));
		return 2;
	}
	while ((k = getline(&text, &sz, f)) >= 0) {
		size_t len = (size_t)k, i = 0;

		lineno++;
		if (len > 0 && text[len - 1] == '\n')
			len--;
		if (len > 0 && text[len - 1] == '\r')
			len--;
		while (i < len && (text[i] == ' ' || text[i] == '\t'))
			i++;
		if (i == len || text[i] == '#')
			continue;
		if (n == cap) {
			struct request *g;

			cap = cap != 0 ? cap * 2 : 16;
			g = realloc(reqs, cap * sizeof(*reqs));
			if (g == NULL) {
				fprintf(stderr, "pacerctl: out of memory\n");
				bad = true;
				break;
			}
			reqs = g;
		}
		/* a bad line is told and the rest still checked: all the
		 * file's mistakes at once */
		if (request_make(&reqs[n], c, text, len, lineno))
			n++;
		else
			bad = true;
	}
	if (ferror(f)) {
		fprintf(stderr, "pacerctl: %s: %s\n", c->file, strerror(errno));
		bad = true;
	}
	free(text);
	if (f != stdin)
		fclose(f);
	*out = reqs;
	*n_out = n;
	return bad ? 2 : 0;
}

static const char *
user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw != NULL)
		return pw->pw_name;
	snprintf(buf, len, "%u", (unsigned int)uid);
	return buf;
}

static const char *
group_name(gid_t gid, char *buf, size_t len)
{
	struct group *gr = getgrgid(gid);

	if (gr != NULL)
		return gr->gr_name;
	snprintf(buf, len, "%u", (unsigned int)gid);
	return buf;
}

/*
 * connect() said EACCES: not "is pacer running?" (it is), but who may
 * connect: the socket's mode and owner, or the directory on the way that
 * is closed to us.
 */
static void
explain_denied(const char *path)
{
	char dir[SOCK_PATH_BYTES], ub[16], gb[16];
	struct stat st;
	char *slash;

	if (stat(path, &st) == 0) {
		fprintf(stderr,
			"pacerctl: %s: permission denied: the socket is mode %04o, owner %s, group %s, and you (uid %u) may not write to it: run pacerctl as root, or as a member of its group with the socket group-writable (pacer's --control-socket-mode and --control-socket-owner set them)\n",
			path, (unsigned int)(st.st_mode & 07777),
			user_name(st.st_uid, ub, sizeof(ub)),
			group_name(st.st_gid, gb, sizeof(gb)), (unsigned int)getuid());
		return;
	}
	/* stat() refused too: the deepest directory it still reaches is the
	 * one we may not search */
	snprintf(dir, sizeof(dir), "%s", path);
	while ((slash = strrchr(dir, '/')) != NULL) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		if (stat(dir, &st) == 0) {
			fprintf(stderr,
				"pacerctl: %s: permission denied: its directory %s is mode %04o, owner %s, group %s, closed to you (uid %u): run pacerctl as root, or as a user that directory lets in\n",
				path, dir, (unsigned int)(st.st_mode & 07777),
				user_name(st.st_uid, ub, sizeof(ub)),
				group_name(st.st_gid, gb, sizeof(gb)),
				(unsigned int)getuid());
			return;
		}
		if (slash == dir)
			break;
	}
	fprintf(stderr, "pacerctl: %s: %s\n", path, strerror(EACCES));
}

/* The connection, or -1 with why it failed and what to look at. */
static int
ctl_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, e;

	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0) {
		fprintf(stderr, "pacerctl: socket: %s\n", strerror(errno));
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return fd;
	e = errno;
	close(fd);
	switch (e) {
	case EACCES:
	case EPERM:
		explain_denied(path);
		break;
	case ENOENT:
		fprintf(stderr, "pacerctl: %s: no such socket: is pacer running, with this --file-prefix or --control-socket?\n",
			path);
		break;
	case ECONNREFUSED:
		/* connect() says the same of a file that is no socket */
		if (stat(path, &st) == 0 && !S_ISSOCK(st.st_mode))
			fprintf(stderr, "pacerctl: %s: not a socket\n", path);
		else
			fprintf(stderr, "pacerctl: %s: nobody listens on it (a pacer that died left it?)\n",
				path);
		break;
	default:
		fprintf(stderr, "pacerctl: %s: %s\n", path, strerror(e));
		break;
	}
	return -1;
}

static bool
request_send(struct ctl *c, const struct request *r)
{
	size_t off = 0;

	while (off < r->len) {
		ssize_t k = send(c->fd, r->line + off, r->len - off, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			where(c, r->lineno);
			fprintf(stderr, "%s: %s\n", c->path, strerror(errno));
			return false;
		}
		off += (size_t)k;
	}
	return true;
}

/*
 * The next reply, whole: its output is c->buf[0, *out_len), its status in
 * @p ok, its length with the NUL and the status line in @p used. The
 * timeout runs from the last byte that came, not from the request: a reply
 * of 100s of MB that keeps coming is never cut, one that stops is given up.
 * The buffer doubles as it fills, so a big reply costs a few copies, and
 * each byte is searched once for the end.
 */
static bool
reply_read(struct ctl *c, unsigned int lineno, size_t *out_len, size_t *used,
	   bool *ok)
{
	size_t scan = 0, nul = SIZE_MAX;

	for (;;) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
		char *p;
		ssize_t k;
		int pr;

		if (nul == SIZE_MAX && scan < c->len) {
			p = memchr(c->buf + scan, '\0', c->len - scan);
			if (p != NULL) {
				nul = (size_t)(p - c->buf);
				scan = nul + 1;
			} else {
				scan = c->len;
			}
		}
		if (nul != SIZE_MAX && scan < c->len) {
			p = memchr(c->buf + scan, '\n', c->len - scan);
			if (p != NULL) {
				*out_len = nul;
				*used = (size_t)(p - c->buf) + 1;
				*ok = *used - nul - 1 == 3 &&
				      memcmp(c->buf + nul + 1, "ok\n", 3) == 0;
				return true;
			}
			scan = c->len;
		}
		pr = poll(&pfd, 1, c->timeout_ms);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0) {
			where(c, lineno);
			if (pr == 0)
				fprintf(stderr, "%s: no byte of the reply came for %g s (--timeout)\n",
					c->path, c->timeout_ms / 1000.0);
			else
				fprintf(stderr, "%s: poll: %s\n", c->path, strerror(errno));
			return false;
		}
		if (c->cap - c->len < REPLY_CHUNK) {
			size_t cap = c->cap != 0 ? c->cap * 2 : REPLY_CHUNK;
			char *g = cap > c->cap ? realloc(c->buf, cap) : NULL;

			if (g == NULL) {
				where(c, lineno);
				fprintf(stderr, "out of memory for a reply over %zu bytes\n",
					c->len);
				return false;
			}
			c->buf = g;
			c->cap = cap;
		}
		k = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			where(c, lineno);
			fprintf(stderr, "%s: connection closed before the reply ended\n",
				c->path);
			if (c->len > 0)
				fwrite(c->buf, 1, c->len, stderr);
			return false;
		}
		c->len += (size_t)k;
	}
}

/* {"command","ok","output"}: the reply of anything but a good show stats */
static void
json_wrapper(const struct request *r, bool ok, const char *out, size_t out_len)
{
	fputs("{\"command\":", stdout);
	json_string(stdout, r->line, r->len - 1);
	printf(",\"ok\":%s,\"output\":", ok ? "true" : "false");
	json_string(stdout, out, out_len);
	fputs("}\n", stdout);
}

/* A failed command's output on stderr; from a file, each line says where
 * the command is. */
static void
print_error(const struct ctl *c, const struct request *r, const char *out,
	    size_t len)
{
	size_t off = 0;

	if (r->lineno == 0) {
		fwrite(out, 1, len, stderr);
		return;
	}
	/* what went to stdout before it comes first in a shared terminal */
	fflush(stdout);
	if (len == 0) {
		where(c, r->lineno);
		fprintf(stderr, "error: %.*s failed\n", (int)(r->len - 1), r->line);
		return;
	}
	while (off < len) {
		const char *nl = memchr(out + off, '\n', len - off);
		size_t n = nl != NULL ? (size_t)(nl - out) - off : len - off;

		where(c, r->lineno);
		fwrite(out + off, 1, n, stderr);
		fputc('\n', stderr);
		off += n + 1;
	}
}

/*
 * The reply to @p r on stdout (or a failure's text on stderr). With -f and
 * --json, one document a line (JSON Lines): the statistics document's line
 * breaks, whitespace between its tokens (JSON has no raw one in a string),
 * become spaces; the Prometheus text (--prometheus beside --json) is no
 * document and goes in the wrapper.
 */
static void
reply_print(const struct ctl *c, const struct request *r, bool ok,
	    const char *out, size_t len)
{
	size_t i;

	if (c->json && r->stats && ok && c->file == NULL) {
		fwrite(out, 1, len, stdout);
	} else if (c->json && r->stats && ok && !c->prom) {
		while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\r' ||
				   out[len - 1] == ' ' || out[len - 1] == '\t'))
			len--;
		if (len == 0) {
			json_wrapper(r, ok, out, len);
			return;
		}
		for (i = 0; i < len; i++)
			fputc(out[i] == '\n' || out[i] == '\r' ? ' ' : out[i], stdout);
		fputc('\n', stdout);
	} else if (c->json) {
		json_wrapper(r, ok, out, len);
	} else if (ok) {
		fwrite(out, 1, len, stdout);
	} else {
		print_error(c, r, out, len);
	}
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "file-prefix", required_argument, NULL, 'p' },
		{ "file", required_argument, NULL, 'f' },
		{ "err-exit", no_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "prometheus", no_argument, NULL, 'P' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .timeout_ms = 10000, .fd = -1 };
	char path[SOCK_PATH_BYTES] = "";
	const char *prefix = NULL, *file = NULL, *env;
	struct request *reqs = NULL;
	size_t n_reqs = 0, i;
	bool err_exit = false, failed = false;
	int o, rc = 0;

	while ((o = getopt_long(argc, argv, "s:f:et:h", opts, NULL)) != -1) {
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
		case 'f':
			file = optarg;
			break;
		case 'e':
			err_exit = true;
			break;
		case 'j':
			c.json = true;
			break;
		case 'P':
			c.prom = true;
			break;
		case 't': {
			double t;
			char *e;

			t = strtod(optarg, &e);
			if (*e != '\0' || !(t > 0 && t <= 3600)) {
				fprintf(stderr, "pacerctl: --timeout: '%s' is not a number of seconds in (0, 3600]\n",
					optarg);
				return 2;
			}
			/* poll() counts ms: a timeout under one is one */
			c.timeout_ms = t * 1000 < 1 ? 1 : (int)(t * 1000 + 0.5);
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
	if (file != NULL && optind < argc) {
		fprintf(stderr, "pacerctl: -f takes the commands from %s: no COMMAND words beside it\n",
			file);
		usage(stderr);
		return 2;
	}
	if (file == NULL && optind == argc) {
		fprintf(stderr, "pacerctl: no command (pacerctl help lists pacer's)\n");
		usage(stderr);
		return 2;
	}

	/* -s, else --file-prefix, else $PACER_SOCKET, else the default
	 * prefix's: the command line says more than the environment */
	env = getenv("PACER_SOCKET");
	if (path[0] != '\0') {
		/* -s */
	} else if (prefix == NULL && env != NULL && env[0] != '\0') {
		if (strlen(env) >= sizeof(path) - 1) {
			fprintf(stderr, "pacerctl: PACER_SOCKET: '%s' is longer than a UNIX socket path takes\n",
				env);
			return 2;
		}
		snprintf(path, sizeof(path), "%s", env);
	} else if (!default_socket(path, sizeof(path),
				   prefix != NULL ? prefix : "rte")) {
		fprintf(stderr, "pacerctl: --file-prefix: '%s' makes a socket path longer than a UNIX socket takes\n",
			prefix != NULL ? prefix : "rte");
		return 2;
	}
	c.path = path;

	if (file != NULL) {
		c.file = strcmp(file, "-") == 0 ? "stdin" : file;
		rc = requests_read(&c, file, &reqs, &n_reqs);
		if (rc != 0)
			goto out;
	} else {
		char cmd[LINE_MAX_BYTES + 1];
		size_t n = 0;
		int a;

		for (a = optind; a < argc; a++) {
			size_t k = strlen(argv[a]) + (a > optind);

			if (k > LINE_MAX_BYTES - n) {
				fprintf(stderr, "pacerctl: the command is longer than %d bytes\n",
					LINE_MAX_BYTES);
				return 2;
			}
			snprintf(cmd + n, sizeof(cmd) - n, "%s%s", a > optind ? " " : "",
				 argv[a]);
			n += k;
		}
		reqs = calloc(1, sizeof(*reqs));
		if (reqs == NULL || !request_make(reqs, &c, cmd, n, 0)) {
			rc = 2;
			goto out;
		}
		n_reqs = 1;
	}

	c.fd = ctl_connect(c.path);
	if (c.fd < 0) {
		rc = 2;
		goto out;
	}
	/*
	 * One request at a time: -e must not have sent what follows a
	 * failure, and the server drops a client whose unread replies pile
	 * up past 4 MiB.
	 */
	for (i = 0; i < n_reqs; i++) {
		size_t out_len, used;
		bool ok;

		if (!request_send(&c, &reqs[i]) ||
		    !reply_read(&c, reqs[i].lineno, &out_len, &used, &ok)) {
			rc = 2;
			goto out;
		}
		reply_print(&c, &reqs[i], ok, c.buf, out_len);
		if (file != NULL)
			fflush(stdout);
		memmove(c.buf, c.buf + used, c.len - used);
		c.len -= used;
		if (!ok) {
			failed = true;
			if (err_exit && file != NULL && i + 1 < n_reqs) {
				fprintf(stderr, "pacerctl: %s:%u: stopped there (--err-exit): %zu command(s) not sent\n",
					c.file, reqs[i].lineno, n_reqs - i - 1);
				break;
			}
		}
	}
	rc = failed ? 1 : 0;
out:
	if (c.fd >= 0)
		close(c.fd);
	/* a reply that did not reach stdout was not printed */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "pacerctl: stdout: the reply could not be written\n");
		rc = 2;
	}
	for (i = 0; i < n_reqs; i++)
		free(reqs[i].line);
	free(reqs);
	free(c.buf);
	return rc;
}
