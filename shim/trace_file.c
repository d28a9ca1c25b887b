// SPDX-License-Identifier: MIT
/*
 * trace_file.c - the trace file: GPUSHIM_OUTPUT expanded to a path, the file created with its
 * header, and every later write. The program owns every descriptor it did not see us open: one
 * that closes all its descriptors (closefrom, a daemon's close loop, a sandbox) or dup2()s over
 * ours must never find our chunks in its file nor its descriptor closed by us. So the trace's
 * descriptor is kept high (the lowest free numbers are what the program's next open() gets),
 * checked to still be our file (device and inode) before every write and before it is closed,
 * and when it is not, left alone and the file opened again by its absolute path.
 * Runs on: the writer thread only (and the fork child's atfork handler, single-threaded).
 */
#define _GNU_SOURCE
#include "shim.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "config.h"

/* The trace's descriptor is moved at or above this number where the limit allows. */
#define TFILE_FD_MIN 512

/* What a pattern that cannot be used falls back to (config.c's default). */
#define TFILE_DEFAULT_PATTERN "gpushim-%h-%p.trace"

static struct {
	int fd;				/* -1: none open */
	dev_t dev;			/* the file we created */
	ino_t ino;
	uint64_t size;			/* bytes written: where the next write goes */
	int is_reopened;		/* the program took our descriptor once: said once */
	int is_closed;			/* we closed it (tfile_close): opened again silently */
	char path[PATH_MAX];		/* absolute where getcwd allowed */
} f = { .fd = -1 };

/* ---- The path ---- */

static int rank_from_env(void)
{
	static const char *const vars[] = { "RANK", "LOCAL_RANK", "SLURM_PROCID",
					    "OMPI_COMM_WORLD_RANK" };
	size_t i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);
		char *end;
		long r;

		if (!v || !*v)
			continue;
		r = strtol(v, &end, 10);
		if (!*end && r >= 0 && r < INT32_MAX)
			return (int)r;
	}
	return -1;
}

/*
 * Expand %h %p %r %% of @pattern. A process with no rank (torchrun's launcher, a plain run)
 * expands %r to "norank-PID": never a rank number another process may own. Returns 0 or
 * -ENAMETOOLONG.
 */
static int expand_path(char *dst, size_t cap, const char *pattern, const char *host, int rank)
{
	size_t n = 0;
	const char *p;

	for (p = pattern; *p; p++) {
		char tmp[32];
		const char *add = tmp;

		if (*p != '%' || !p[1]) {
			tmp[0] = *p;
			tmp[1] = 0;
		} else {
			switch (*++p) {
			case 'h':
				add = host;
				break;
			case 'p':
				snprintf(tmp, sizeof(tmp), "%d", (int)getpid());
				break;
			case 'r':
				if (rank < 0)
					snprintf(tmp, sizeof(tmp), "norank-%d", (int)getpid());
				else
					snprintf(tmp, sizeof(tmp), "%d", rank);
				break;
			case '%':
				strcpy(tmp, "%");
				break;
			default:
				snprintf(tmp, sizeof(tmp), "%%%c", *p);
				break;
			}
		}
		if (n + strlen(add) + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(dst + n, add, strlen(add));
		n += strlen(add);
	}
	dst[n] = 0;
	return 0;
}

/* @path made absolute (the program may chdir before the file is opened again); kept as it is
 * when the working directory is unknown or the result too long. */
static void make_absolute(char *path, size_t cap)
{
	char cwd[PATH_MAX], tmp[PATH_MAX];

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		return;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", cwd, path) >= sizeof(tmp) ||
	    strlen(tmp) >= cap)
		return;
	strcpy(path, tmp);
}

/* ---- The descriptor ---- */

static int is_ours(int fd)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == f.dev && st.st_ino == f.ino;
}

/* @fd moved to a number the program's own open() calls are unlikely to reach. */
static int move_high(int fd)
{
	int high = fcntl(fd, F_DUPFD_CLOEXEC, TFILE_FD_MIN);

	if (high < 0)
		return fd;	/* the limit is lower: keep it where it is */
	close(fd);
	return high;
}

/*
 * The descriptor to write with: ours as we left it, or, when the program closed it or put
 * another file in its place, the file opened again by path (never created: a file that is gone
 * or replaced ends recording). Returns the descriptor or -errno (-ESTALE: not our file).
 */
static int tfile_fd(void)
{
	int fd;

	if (is_ours(f.fd))
		return f.fd;
	f.fd = -1;		/* no longer ours: neither written nor closed */
	fd = open(f.path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!is_ours(fd)) {
		close(fd);
		return -ESTALE;
	}
	f.fd = move_high(fd);
	if (f.is_closed) {
		f.is_closed = 0;	/* a rewrite after the end (calls after END) */
	} else if (!f.is_reopened) {
		f.is_reopened = 1;
		shim_log(LOG_WARN, "the program closed or replaced the trace's descriptor; "
				   "reopened %s", f.path);
	}
	return f.fd;
}

/* Write all of @iov at @off (the file grows past f.size as needed). Returns 0 or -errno. */
static int write_at(int fd, uint64_t off, const struct iovec *iov, int nr)
{
	struct iovec v[8];
	int i = 0;

	if (nr > 8)
		return -EINVAL;
	memcpy(v, iov, sizeof(*iov) * nr);
	while (i < nr) {
		ssize_t n = pwritev(fd, v + i, nr - i, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		off += (uint64_t)n;
		if (off > f.size)
			f.size = off;
		while (i < nr && (size_t)n >= v[i].iov_len) {
			n -= v[i].iov_len;
			i++;
		}
		if (i < nr) {
			v[i].iov_base = (char *)v[i].iov_base + n;
			v[i].iov_len -= n;
		}
	}
	return 0;
}

int tfile_write(const struct iovec *iov, int nr)
{
	int fd = tfile_fd();

	if (fd < 0)
		return fd;
	return write_at(fd, f.size, iov, nr);
}

int tfile_write_at(uint64_t off, const struct iovec *iov, int nr)
{
	int fd = tfile_fd();

	if (fd < 0)
		return fd;
	return write_at(fd, off, iov, nr);
}

int tfile_truncate(uint64_t size)
{
	int fd = tfile_fd();

	if (fd < 0)
		return fd;
	if (ftruncate(fd, (off_t)size) < 0)
		return -errno;
	f.size = size;
	return 0;
}

uint64_t tfile_size(void)
{
	return f.size;
}

const char *tfile_path(void)
{
	return f.path;
}

void tfile_close(void)
{
	if (is_ours(f.fd))
		close(f.fd);
	f.fd = -1;
	f.is_closed = 1;
}

void tfile_reset_after_fork(void)
{
	/* The child's copy of our descriptor (when it still is ours) is the parent's file. */
	tfile_close();
	f.size = 0;
	f.is_reopened = 0;
	f.is_closed = 0;
	f.path[0] = 0;
}

/* ---- Creating the file ---- */

static size_t read_cmdline(char *buf, size_t cap)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd < 0)
		return 0;
	while (len < cap) {
		ssize_t n = read(fd, buf + len, cap - len);

		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	while (len && buf[len - 1] == 0)	/* drop the final NUL */
		len--;
	return len;
}

static int create_excl(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/*
 * The name is taken: this process replaced an earlier program by exec (same pid), a launcher
 * without a rank took it, or a stale trace of a reused pid is there. Take NAME-1.trace,
 * NAME-2.trace, ... (never the existing file). Returns the descriptor, or -1 with errno set;
 * @path holds the name tried last.
 */
static int create_next_free(char *path, size_t cap)
{
	char base[PATH_MAX];
	size_t len = strlen(path);
	const char *ext = len > 6 && !strcmp(path + len - 6, ".trace") ? ".trace" : "";
	int i, fd = -1;

	if (len >= sizeof(base)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(base, path, len - strlen(ext));
	base[len - strlen(ext)] = 0;
	for (i = 1; i < 1000; i++) {
		if ((size_t)snprintf(path, cap, "%s-%d%s", base, i, ext) >= cap) {
			errno = ENAMETOOLONG;
			return -1;
		}
		fd = create_excl(path);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return fd;
}

static int is_directory(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Create the file @pattern names (or the next free name); a directory gets the default name
 * inside it. Returns the descriptor or -errno. */
static int create_from(const char *pattern, const char *host, int rank)
{
	int fd, ret;

	ret = expand_path(f.path, sizeof(f.path), pattern, host, rank);
	if (ret < 0) {
		snprintf(f.path, sizeof(f.path), "%s", pattern);
		return ret;
	}
	if (!f.path[0])
		return -ENOENT;		/* cannot happen: config.c refuses an empty pattern */
	if (f.path[strlen(f.path) - 1] == '/' || is_directory(f.path)) {
		/* A directory: the default name inside it. */
		size_t n = strlen(f.path);
		char name[PATH_MAX];

		ret = expand_path(name, sizeof(name), TFILE_DEFAULT_PATTERN, host, rank);
		if (ret < 0 || n + 1 + strlen(name) >= sizeof(f.path))
			return -ENAMETOOLONG;
		snprintf(f.path + n, sizeof(f.path) - n, "%s%s", f.path[n - 1] == '/' ? "" : "/",
			 name);
	}
	make_absolute(f.path, sizeof(f.path));
	fd = create_excl(f.path);
	if (fd < 0 && errno == EEXIST) {
		char taken[PATH_MAX];

		snprintf(taken, sizeof(taken), "%s", f.path);
		fd = create_next_free(f.path, sizeof(f.path));
		if (fd >= 0)
			shim_log(LOG_WARN, "%s exists (never overwritten); writing %s", taken, f.path);
	}
	return fd < 0 ? -errno : fd;
}

int tfile_create(int is_forked)
{
	static char cmdline[16384];
	static const uint8_t zeros[8];
	struct trace_file_header hdr;
	char host[256] = "unknown";
	struct iovec iov[5];
	size_t cmd_len, ver_len, host_len, total;
	struct timespec mono, real;
	struct stat st;
	int rank = rank_from_env();
	int fd, ret;

	gethostname(host, sizeof(host) - 1);
	host[sizeof(host) - 1] = 0;
	/* The header is made before the file is created (it reads /proc): a process killed
	 * after the creation and before the header is written leaves an empty file, and that
	 * window is now the one system call between them. */
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	cmd_len = read_cmdline(cmdline, sizeof(cmdline));
	ver_len = strlen(GPUSHIM_VERSION);
	host_len = strlen(host);
	total = sizeof(hdr) + ver_len + host_len + cmd_len;

	memset(&hdr, 0, sizeof(hdr));
	memcpy(hdr.magic, TRACE_MAGIC, sizeof(TRACE_MAGIC));
	hdr.version_major = TRACE_VERSION_MAJOR;
	hdr.version_minor = TRACE_VERSION_MINOR;
	hdr.header_bytes = (uint32_t)((total + 7) & ~(size_t)7);
	hdr.pid = (uint32_t)getpid();
	hdr.ppid = (uint32_t)getppid();
	hdr.start_mono_ns = (uint64_t)mono.tv_sec * 1000000000u + mono.tv_nsec;
	hdr.start_real_ns = (uint64_t)real.tv_sec * 1000000000u + real.tv_nsec;
	hdr.flags = is_forked ? TRACE_FILE_FORKED : 0;
	hdr.shim_version_len = (uint16_t)ver_len;
	hdr.host_len = (uint16_t)host_len;
	hdr.cmdline_len = (uint32_t)cmd_len;
	hdr.rank = rank;

	iov[0] = (struct iovec){ &hdr, sizeof(hdr) };
	iov[1] = (struct iovec){ (void *)GPUSHIM_VERSION, ver_len };
	iov[2] = (struct iovec){ host, host_len };
	iov[3] = (struct iovec){ cmdline, cmd_len };
	iov[4] = (struct iovec){ (void *)zeros, hdr.header_bytes - total };

	fd = create_from(shim.cfg.output, host, rank);
	if (fd == -ENAMETOOLONG && strcmp(shim.cfg.output, TFILE_DEFAULT_PATTERN)) {
		/* A pattern too long to name a file: the default in the working directory. One
		 * whose directory is missing or unwritable is an error. */
		char bad[PATH_MAX];
		int err = -fd;

		snprintf(bad, sizeof(bad), "%s", f.path);
		fd = create_from(TFILE_DEFAULT_PATTERN, host, rank);
		shim_log(LOG_WARN, "cannot create trace %s (GPUSHIM_OUTPUT=%s): %s; %s%s", bad,
			 shim.cfg.output, strerror(err), fd >= 0 ? "writing " : "and not the default",
			 fd >= 0 ? f.path : "");
	}
	if (fd < 0) {
		shim_disable("cannot create trace %s: %s", f.path, strerror(-fd));
		return fd;
	}
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		shim_disable("cannot stat trace %s: %s", f.path, strerror(-ret));
		return ret;
	}
	f.dev = st.st_dev;
	f.ino = st.st_ino;
	f.fd = move_high(fd);
	f.size = 0;
	f.is_reopened = 0;
	f.is_closed = 0;
	ret = write_at(f.fd, 0, iov, 5);
	if (ret < 0) {
		shim_disable("cannot write trace %s: %s", f.path, strerror(-ret));
		tfile_close();
		return ret;
	}
	return 0;
}
