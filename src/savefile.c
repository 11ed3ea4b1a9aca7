/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright(c) 2026 The pacer authors
 */

/*
 * Writing a file for a client (save config FILE): as an editor saves, not
 * as fopen(path, "w") does. The text goes into a new file in the same
 * directory, is flushed to the disk, and is renamed over the old one, so
 * that a write that fails half way (a full disk, a signal) leaves the old
 * file whole; a symbolic link at the path is refused rather than followed
 * (pacer runs as root: a link must not make it overwrite another file);
 * and a relative path is the client's, not pacer's (resolved against the
 * working directory of the process that asked, /proc/PID/cwd).
 * Kept apart from control.c so that the CLI's fuzz harness, which runs
 * control.c, can stand in for it and never write where a command says.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "control.h"

#define ERRF(...) (snprintf(err, errlen, __VA_ARGS__), -1)

/* @p path made absolute against @p cwd_pid's working directory. */
static int
absolute(const char *path, pid_t cwd_pid, char *abs, size_t abslen,
	 char *err, size_t errlen)
{
	char cwd[PATH_MAX];
	int n;

	if (path[0] == '/') {
		n = snprintf(abs, abslen, "%s", path);
	} else {
		if (cwd_pid > 0) {
			char link[64];
			ssize_t k;

			snprintf(link, sizeof(link), "/proc/%d/cwd", (int)cwd_pid);
			k = readlink(link, cwd, sizeof(cwd) - 1);
			if (k < 0)
				return ERRF("%s is relative and the working directory of the client (pid %d) cannot be read: %s; give an absolute path",
					    path, (int)cwd_pid, strerror(errno));
			cwd[k] = '\0';
		} else if (getcwd(cwd, sizeof(cwd)) == NULL) {
			return ERRF("%s is relative and pacer's working directory cannot be read: %s",
				    path, strerror(errno));
		}
		n = snprintf(abs, abslen, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd,
			     path);
	}
	if (n < 0 || (size_t)n >= abslen)
		return ERRF("%s: path too long", path);
	return 0;
}

int
pcr_file_replace(const char *path, pid_t cwd_pid,
		 int (*fill)(FILE *f, const void *arg), const void *arg,
		 char *abs, size_t abslen, char *err, size_t errlen)
{
	char tmp[PATH_MAX + 16], *slash;
	mode_t mode = 0644;
	bool exists = false;
	struct stat st;
	FILE *f;
	int fd, dfd, e;

	if (path[0] == '\0')
		return ERRF("no file name");
	if (absolute(path, cwd_pid, abs, abslen, err, errlen) != 0)
		return -1;
	if (lstat(abs, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return ERRF("%s is a symbolic link: pacer does not write through one (name the file it points to)",
				    abs);
		if (!S_ISREG(st.st_mode))
			return ERRF("%s exists and is not a regular file", abs);
		exists = true;
		mode = st.st_mode & 07777;
	} else if (errno != ENOENT) {
		return ERRF("%s: %s", abs, strerror(errno));
	}
	if (snprintf(tmp, sizeof(tmp), "%s.XXXXXX", abs) >= (int)sizeof(tmp))
		return ERRF("%s: path too long", abs);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		slash = strrchr(abs, '/');
		return ERRF("%s: cannot create a file in %.*s: %s", abs,
			    (int)(slash != NULL && slash != abs ? slash - abs : 1),
			    abs, strerror(e));
	}
	/* the old file's mode and owner (mkostemp makes it 0600, root's) */
	if (fchmod(fd, mode) != 0 ||
	    (exists && fchown(fd, st.st_uid, st.st_gid) != 0))
		goto fail;
	f = fdopen(fd, "w");
	if (f == NULL)
		goto fail;
	fd = -1;
	if (fill(f, arg) != 0) {
		errno = EIO;
		fclose(f);
		goto fail;
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0) {
		e = errno;
		fclose(f);
		errno = e;
		goto fail;
	}
	if (fclose(f) != 0 || rename(tmp, abs) != 0)
		goto fail;
	/* the rename itself to the disk, as far as the directory allows */
	slash = strrchr(abs, '/');
	if (slash != NULL) {
		char dir[PATH_MAX];

		snprintf(dir, sizeof(dir), "%.*s",
			 (int)(slash == abs ? 1 : slash - abs), abs);
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd >= 0) {
			(void)fsync(dfd);
			close(dfd);
		}
	}
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return ERRF("%s: %s (the file is as it was)", abs, strerror(e));
}
