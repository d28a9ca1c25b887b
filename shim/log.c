// SPDX-License-Identifier: MIT
/*
 * log.c - shim_log(), the only shim code that writes to stderr or the GPUSHIM_LOG file.
 * Messages are prefixed "gpushim[pid]: ", limited per level so a broken setup cannot flood the
 * application's stderr, never fatal, and leave errno as they found it. No allocation.
 * Runs on: any thread.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Up to this many messages per level and process: enough to explain, too few to flood. */
#define LOG_MAX_PER_LEVEL 8

static _Atomic int nr_logged[4];

/*
 * GPUSHIM_LOG is opened for each message and closed after it (messages are few): the shim holds
 * no descriptor the program could close or reuse behind its back. Opened like the trace: never
 * through a symbolic link, never waiting (a FIFO with no reader). Where it cannot be opened the
 * message goes to stderr.
 */
static void log_write(const char *buf, size_t len)
{
	int fd = -1;

	if (shim.cfg.log_path)
		fd = open(shim.cfg.log_path,
			  O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (write(fd >= 0 ? fd : STDERR_FILENO, buf, len) < 0) {
		/* nowhere left to complain */
	}
	if (fd >= 0)
		close(fd);
}

void shim_log(int level, const char *fmt, ...)
{
	char buf[512];
	int saved = errno;
	int n, len, nr;
	va_list ap;

	if (level < 0 || level > 3 || level > shim.cfg.log_level)
		return;
	nr = atomic_fetch_add(&nr_logged[level], 1);
	if (nr > LOG_MAX_PER_LEVEL)
		goto out;

	len = snprintf(buf, sizeof(buf), "gpushim[%d]: ", (int)getpid());
	if (nr == LOG_MAX_PER_LEVEL) {
		n = snprintf(buf + len, sizeof(buf) - len, "further messages of this level suppressed");
	} else {
		va_start(ap, fmt);
		n = vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
		va_end(ap);
	}
	if (n < 0)
		goto out;
	len += n;
	if (len > (int)sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	log_write(buf, (size_t)len);
out:
	errno = saved;
}

void log_reset_after_fork(void)
{
	int i;

	for (i = 0; i < 4; i++)
		atomic_store(&nr_logged[i], 0);
}
