/* powerloss.c: an LD_PRELOAD layer that lets a test drop every write that was
 * not fsynced, as a power cut would (tests/proof/powerloss/__init__.py).
 *
 * Every file opened under $POWERLOSS_DIR (except SQLite's "-shm" wal-index,
 * which SQLite rebuilds from the WAL on the first open after a crash) is
 * tracked by file descriptor. Before a write, pwrite or ftruncate on a tracked
 * descriptor reaches the file, an UNDO record goes to $POWERLOSS_LOG: the
 * path, the offset, the file's size before, and the bytes the write is about
 * to overwrite. An fsync or fdatasync appends a SYNC record for the path.
 * The log is written with write(2) on its own O_APPEND descriptor, so it is in
 * the kernel's page cache the moment the write returns and survives SIGKILL.
 * After the kill, power_cut() undoes, newest first, every record after the
 * path's last SYNC.
 *
 * Record layout (little endian, native sizes on x86_64/aarch64):
 *   u8 kind ('W' write, 'T' truncate, 'S' sync)
 *   u32 path length, path bytes
 *   i64 offset     (W: where the write starts; T: the new length; S: the log's
 *                   length when the sync began: the records before it are durable)
 *   i64 size       (the file's size before the operation; S: 0)
 *   i64 count      (W: the bytes written; T, S: 0)
 *   u32 old length, old bytes (what the operation overwrites or cuts off)
 *
 * A failpoint, to cut the power at the worst moment on purpose: with
 * $POWERLOSS_KILL_AT_SYNC=N, the process SIGKILLs itself instead of making
 * the Nth fsync/fdatasync of a tracked file whose path ends with
 * $POWERLOSS_KILL_MATCH (any, if unset): the writes before it are on their
 * way, not yet durable.
 *
 * Build: gcc -shared -fPIC -O2 -o powerloss.so powerloss.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FD 4096

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *paths[MAX_FD];          /* tracked fd -> canonical path ... */
static dev_t devs[MAX_FD];           /* ... and the file it was opened on */
static ino_t inos[MAX_FD];
static char dir[PATH_MAX];
#define PATH_BUF (2 * PATH_MAX + 2)
static size_t dir_len;
static int log_fd = -1;
static long kill_at;                 /* the failpoint: the matching sync to die at (0: none) */
static long matching_syncs;
static const char *kill_match;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off64_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off64_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static void init(void) {
    real_open = dlsym(RTLD_NEXT, "open");
    real_open64 = dlsym(RTLD_NEXT, "open64");
    real_openat = dlsym(RTLD_NEXT, "openat");
    real_openat64 = dlsym(RTLD_NEXT, "openat64");
    real_close = dlsym(RTLD_NEXT, "close");
    real_write = dlsym(RTLD_NEXT, "write");
    real_pwrite = dlsym(RTLD_NEXT, "pwrite");
    real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    real_ftruncate = dlsym(RTLD_NEXT, "ftruncate");
    real_ftruncate64 = dlsym(RTLD_NEXT, "ftruncate64");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    const char *d = getenv("POWERLOSS_DIR");
    const char *l = getenv("POWERLOSS_LOG");
    const char *k = getenv("POWERLOSS_KILL_AT_SYNC");
    kill_at = k ? atol(k) : 0;
    kill_match = getenv("POWERLOSS_KILL_MATCH");
    if (d == NULL || l == NULL) return;  /* not asked to track anything */
    if (realpath(d, dir) == NULL) {
        fprintf(stderr, "powerloss: POWERLOSS_DIR %s: %s\n", d, strerror(errno));
        abort();
    }
    dir_len = strlen(dir);
    log_fd = real_open(l, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (log_fd < 0) {
        fprintf(stderr, "powerloss: cannot open %s: %s\n", l, strerror(errno));
        abort();
    }
}

static void ensure(void) { pthread_once(&once, init); }

static int under_dir(const char *p) {
    return dir_len > 0 && strncmp(p, dir, dir_len) == 0 && p[dir_len] == '/';
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* The path an open would name, built lexically (before the file exists). */
static int lexical(int dirfd, const char *path, char out[PATH_BUF]) {
    char base[PATH_MAX];
    if (path[0] == '/') {
        snprintf(out, PATH_BUF, "%s", path);
        return 0;
    }
    if (dirfd == AT_FDCWD) {
        if (getcwd(base, sizeof base) == NULL) return -1;
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, base, sizeof base - 1);
        if (n < 0) return -1;
        base[n] = 0;
    }
    snprintf(out, PATH_BUF, "%s/%s", base, path);
    return 0;
}

static void log_all(const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = real_write(log_fd, buf, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "powerloss: the undo log failed: %s\n", strerror(errno));
            abort();
        }
        buf += n;
        len -= (size_t)n;
    }
}

/* One record, in one buffer, so a record is written whole or (at a SIGKILL
 * in the middle) as a short tail the reader ignores. */
static void record(char kind, const char *path, int64_t offset, int64_t size, int64_t count,
                   const char *old, uint32_t old_len) {
    uint32_t plen = (uint32_t)strlen(path);
    size_t len = 1 + 4 + plen + 8 + 8 + 8 + 4 + old_len;
    char *buf = malloc(len), *p = buf;
    if (buf == NULL) abort();
    *p++ = kind;
    memcpy(p, &plen, 4); p += 4;
    memcpy(p, path, plen); p += plen;
    memcpy(p, &offset, 8); p += 8;
    memcpy(p, &size, 8); p += 8;
    memcpy(p, &count, 8); p += 8;
    memcpy(p, &old_len, 4); p += 4;
    if (old_len) memcpy(p, old, old_len);
    log_all(buf, len);
    free(buf);
}

static int64_t size_of(int fd) {
    struct stat st;
    if (fstat(fd, &st) != 0) return -1;
    return (int64_t)st.st_size;
}

/* The bytes [offset, offset+count) that exist now, read before they change. */
static void record_overwrite(char kind, int fd, int64_t offset, int64_t count, int64_t size) {
    char *old = NULL;
    uint32_t old_len = 0;
    if (offset < size && count > 0) {
        int64_t n = size - offset < count ? size - offset : count;
        old = malloc((size_t)n);
        if (old == NULL) abort();
        int rfd = fd, own = 0;
        int flags = fcntl(fd, F_GETFL);
        if (flags >= 0 && (flags & O_ACCMODE) == O_WRONLY) {  /* open it again to read */
            rfd = real_open(paths[fd], O_RDONLY | O_CLOEXEC);
            own = rfd >= 0;
        }
        int64_t got = 0;
        while (rfd >= 0 && got < n) {
            ssize_t r = pread(rfd, old + got, (size_t)(n - got), (off_t)(offset + got));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += r;
        }
        if (own) real_close(rfd);
        if (got != n) {
            fprintf(stderr, "powerloss: cannot read the old bytes of %s\n", paths[fd]);
            abort();
        }
        old_len = (uint32_t)got;
    }
    record(kind, paths[fd], offset, size, kind == 'W' ? count : 0, old, old_len);
    free(old);
}

static int tracked(int fd) { return fd >= 0 && fd < MAX_FD && paths[fd] != NULL; }

/* Under the mutex: is fd still the file it was tracked as? (Its number may
 * have been reused after a close this layer did not see, e.g. glibc's own.)
 * Sets *size to the file's size now. */
static int still(int fd, int64_t *size) {
    struct stat st;
    if (!tracked(fd)) return 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != devs[fd] || st.st_ino != inos[fd]) {
        free(paths[fd]);
        paths[fd] = NULL;
        return 0;
    }
    *size = (int64_t)st.st_size;
    return 1;
}

/* After a successful open: track the descriptor if it names a regular file
 * under the directory; do the O_TRUNC we held back, with its undo record. */
static int after_open(int fd, int truncate) {
    if (fd < 0) return fd;
    char link[64], real[PATH_MAX];
    struct stat st;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, real, sizeof real - 1);
    int track = 0;
    if (n > 0 && fd < MAX_FD && fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        real[n] = 0;
        track = under_dir(real) && !ends_with(real, "-shm");
    }
    pthread_mutex_lock(&mu);
    if (fd < MAX_FD) {  /* whatever this number named before is gone */
        free(paths[fd]);
        paths[fd] = track ? strdup(real) : NULL;
        if (track) {
            devs[fd] = st.st_dev;
            inos[fd] = st.st_ino;
        }
    }
    if (truncate) {
        if (track && st.st_size > 0) record_overwrite('T', fd, 0, st.st_size, st.st_size);
        real_ftruncate(fd, 0);
    }
    pthread_mutex_unlock(&mu);
    return fd;
}

/* O_TRUNC is held back for a path under the directory, so the bytes it cuts
 * off can be saved first. */
static int hold_trunc(int dirfd, const char *path, int *flags) {
    char p[PATH_BUF];
    if (dir_len == 0 || !(*flags & O_TRUNC) || !(*flags & (O_WRONLY | O_RDWR))) return 0;
    if (lexical(dirfd, path, p) != 0 || !under_dir(p)) return 0;
    *flags &= ~O_TRUNC;
    return 1;
}

static mode_t mode_arg(int flags, va_list ap) {
    return ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap);
    ensure();
    int t = hold_trunc(AT_FDCWD, path, &flags);
    return after_open(real_open(path, flags, mode), t);
}

int open64(const char *path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap);
    ensure();
    int t = hold_trunc(AT_FDCWD, path, &flags);
    return after_open(real_open64(path, flags, mode), t);
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap);
    ensure();
    int t = hold_trunc(dirfd, path, &flags);
    return after_open(real_openat(dirfd, path, flags, mode), t);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    va_list ap; va_start(ap, flags); mode_t mode = mode_arg(flags, ap); va_end(ap);
    ensure();
    int t = hold_trunc(dirfd, path, &flags);
    return after_open(real_openat64(dirfd, path, flags, mode), t);
}

int close(int fd) {
    ensure();
    if (fd >= 0 && fd < MAX_FD) {
        pthread_mutex_lock(&mu);
        free(paths[fd]);
        paths[fd] = NULL;
        pthread_mutex_unlock(&mu);
    }
    return real_close(fd);
}

ssize_t write(int fd, const void *buf, size_t count) {
    ensure();
    if (!tracked(fd)) return real_write(fd, buf, count);
    pthread_mutex_lock(&mu);
    ssize_t r;
    int64_t size;
    if (!still(fd, &size)) {
        r = real_write(fd, buf, count);
    } else {
        int flags = fcntl(fd, F_GETFL);
        int64_t offset = (flags >= 0 && (flags & O_APPEND)) ? size : (int64_t)lseek(fd, 0, SEEK_CUR);
        record_overwrite('W', fd, offset, (int64_t)count, size);
        r = real_write(fd, buf, count);
    }
    pthread_mutex_unlock(&mu);
    return r;
}

static ssize_t do_pwrite(int fd, const void *buf, size_t count, int64_t offset, int wide) {
    ensure();
    if (!tracked(fd))
        return wide ? real_pwrite64(fd, buf, count, offset) : real_pwrite(fd, buf, count, offset);
    pthread_mutex_lock(&mu);
    int64_t size;
    if (still(fd, &size)) record_overwrite('W', fd, offset, (int64_t)count, size);
    ssize_t r = wide ? real_pwrite64(fd, buf, count, offset) : real_pwrite(fd, buf, count, offset);
    pthread_mutex_unlock(&mu);
    return r;
}

ssize_t pwrite(int fd, const void *buf, size_t count, off_t offset) {
    return do_pwrite(fd, buf, count, offset, 0);
}

ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t offset) {
    return do_pwrite(fd, buf, count, offset, 1);
}

static int do_ftruncate(int fd, int64_t length, int wide) {
    ensure();
    if (!tracked(fd)) return wide ? real_ftruncate64(fd, length) : real_ftruncate(fd, length);
    pthread_mutex_lock(&mu);
    int64_t size;
    if (still(fd, &size)) record_overwrite('T', fd, length, size - length, size);
    int r = wide ? real_ftruncate64(fd, length) : real_ftruncate(fd, length);
    pthread_mutex_unlock(&mu);
    return r;
}

int ftruncate(int fd, off_t length) { return do_ftruncate(fd, length, 0); }

int ftruncate64(int fd, off64_t length) { return do_ftruncate(fd, length, 1); }

static int do_sync(int fd, int data_only) {
    ensure();
    if (!tracked(fd)) return data_only ? real_fdatasync(fd) : real_fsync(fd);
    /* The sync covers the writes logged before it began (the log's length
     * then), not one another thread makes while it runs. Its record goes
     * after it succeeded, so a kill during the sync leaves them undone. */
    pthread_mutex_lock(&mu);
    int64_t barrier = size_of(log_fd), size;
    if (still(fd, &size) && kill_at > 0 && (kill_match == NULL || ends_with(paths[fd], kill_match))
        && ++matching_syncs == kill_at)
        kill(getpid(), SIGKILL);  /* the power goes before this sync */
    pthread_mutex_unlock(&mu);
    int r = data_only ? real_fdatasync(fd) : real_fsync(fd);
    if (r == 0) {
        pthread_mutex_lock(&mu);
        if (still(fd, &size)) record('S', paths[fd], barrier, 0, 0, NULL, 0);
        pthread_mutex_unlock(&mu);
    }
    return r;
}

int fsync(int fd) { return do_sync(fd, 0); }

int fdatasync(int fd) { return do_sync(fd, 1); }
