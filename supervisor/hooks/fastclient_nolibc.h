/* What `fastclient.c` takes from the C library, without one: the native client's first build
 * (supervisor/hooks/native.py, `NOLIBC`), for Linux on x86-64.
 *
 * Why: the agent starts the client once per hook, and starting a program linked with the C
 * library costs it the library's own start-up (its relocations, CPU-feature and tunables set-up,
 * thread-local storage: 26 page faults for an empty `main`, against 2 without it). On the
 * machine of 2026-11-29, where a page fault costs about 10 us, an empty static `main` took
 * 0.43 ms from spawn to reaping and the same program without the library 0.15 ms; the client's
 * work is a few system calls, so most of a hook's process was the library starting.
 *
 * This file is the small part of the C library the client uses, as plainly as the client needs
 * it: system calls by number, the string functions, an allocator that grows buffers, the four
 * `printf` formats the client prints, `strtod` for the plain decimal numbers it accepts. Where
 * this build cannot be made (another architecture or system, another compiler than GCC, one
 * that will not link without the library) native.py builds `fastclient.c` against the C
 * library as before.
 */
#if !defined(__linux__) || !defined(__x86_64__) || !defined(__GNUC__) || defined(__clang__)
/* Only GCC is told (native.NOLIBC) not to make the loops of `memset` and `memcpy` below into
 * calls of themselves. */
#error "the client without the C library is built for Linux on x86-64 with GCC only"
#endif

#include <stdarg.h>
#include <stddef.h>

typedef long ssize_t;
typedef unsigned int uid_t;
typedef unsigned int gid_t;
typedef unsigned int socklen_t;
typedef long time_t;
typedef long suseconds_t;
typedef long off_t;

#define ENOENT 2
#define EINTR 4
#define EAGAIN 11
#define EWOULDBLOCK EAGAIN
#define ENOMEM 12
#define EEXIST 17
#define ERANGE 34
#define O_RDONLY 00
#define O_RDWR 02
#define O_CREAT 0100
#define O_EXCL 0200
#define O_DIRECTORY 0200000
#define O_CLOEXEC 02000000
#define SEEK_SET 0
#define CLOCK_MONOTONIC 1
#define AF_UNIX 1
#define SOCK_STREAM 1
#define SOL_SOCKET 1
#define SO_PEERCRED 17
#define SO_RCVTIMEO 20
#define SO_SNDTIMEO 21
#define MSG_NOSIGNAL 0x4000
#define SHUT_WR 1
#define S_IFMT 0170000
#define S_IFDIR 0040000
#define S_ISDIR(mode) (((mode) & S_IFMT) == S_IFDIR)
#define AT_FDCWD (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define PROT_READ 1
#define PROT_WRITE 2
#define MAP_PRIVATE 2
#define MAP_ANONYMOUS 0x20

struct timespec {
    time_t tv_sec;
    long tv_nsec;
};
struct timeval {
    time_t tv_sec;
    suseconds_t tv_usec;
};
struct iovec {
    void *iov_base;
    size_t iov_len;
};
struct msghdr {
    void *msg_name;
    socklen_t msg_namelen;
    struct iovec *msg_iov;
    size_t msg_iovlen;
    void *msg_control;
    size_t msg_controllen;
    int msg_flags;
};
struct sockaddr {
    unsigned short sa_family;
    char sa_data[14];
};
struct sockaddr_un {
    unsigned short sun_family;
    char sun_path[108];
};
struct ucred {
    int pid;
    uid_t uid;
    gid_t gid;
};
/* The kernel's `struct stat` on x86-64 (`newfstatat`), of which the client reads two fields. */
struct stat {
    unsigned long st_dev, st_ino, st_nlink;
    unsigned int st_mode, st_uid, st_gid, pad0;
    unsigned long st_rdev;
    long st_size, st_blksize, st_blocks;
    unsigned long times[6];
    long unused[3];
};

static int errno;
static char **environ_;

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

/* A system call's result as the C library gives it: -1 with `errno` set on failure. */
static long checked(long ret) {
    if (ret < 0 && ret > -4096) {
        errno = (int)-ret;
        return -1;
    }
    return ret;
}

#define SYS(n, a, b, c, d, e, f) checked(sys6(n, (long)(a), (long)(b), (long)(c), (long)(d), \
                                              (long)(e), (long)(f)))

static ssize_t read(int fd, void *buf, size_t n) { return SYS(0, fd, buf, n, 0, 0, 0); }
static ssize_t write(int fd, const void *buf, size_t n) { return SYS(1, fd, buf, n, 0, 0, 0); }
static int close(int fd) { return (int)SYS(3, fd, 0, 0, 0, 0, 0); }
static off_t lseek(int fd, off_t off, int whence) { return SYS(8, fd, off, whence, 0, 0, 0); }
static int dup2(int from, int to) { return (int)SYS(33, from, to, 0, 0, 0, 0); }
static int socket(int domain, int type, int proto) {
    return (int)SYS(41, domain, type, proto, 0, 0, 0);
}
static int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    return (int)SYS(42, fd, addr, len, 0, 0, 0);
}
static ssize_t recv(int fd, void *buf, size_t n, int flags) {
    return SYS(45, fd, buf, n, flags, 0, 0);
}
static ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
    return SYS(46, fd, msg, flags, 0, 0, 0);
}
static int shutdown(int fd, int how) { return (int)SYS(48, fd, how, 0, 0, 0, 0); }
static int setsockopt(int fd, int level, int name, const void *value, socklen_t len) {
    return (int)SYS(54, fd, level, name, value, len, 0);
}
static int getsockopt(int fd, int level, int name, void *value, socklen_t *len) {
    return (int)SYS(55, fd, level, name, value, len, 0);
}
static int execv(const char *path, char *const argv[]) {
    return (int)SYS(59, path, argv, environ_, 0, 0, 0);
}
/* The kernel answers `(unreachable)/...` for a directory outside the process's root (a chroot,
 * another mount namespace): not a path, so ENOENT, as the C library says. */
static char *getcwd(char *buf, size_t size) {
    if (SYS(79, buf, size, 0, 0, 0, 0) < 0) return 0;
    if (buf[0] != '/') {
        errno = ENOENT;
        return 0;
    }
    return buf;
}
static int chdir(const char *path) { return (int)SYS(80, path, 0, 0, 0, 0, 0); }
static int fchdir(int fd) { return (int)SYS(81, fd, 0, 0, 0, 0, 0); }
static uid_t geteuid(void) { return (uid_t)sys6(107, 0, 0, 0, 0, 0, 0); }
static int clock_gettime(int clock, struct timespec *t) {
    return (int)SYS(228, clock, t, 0, 0, 0, 0);
}
static __attribute__((noreturn)) void exit(int status) {
    for (;;) sys6(231, status, 0, 0, 0, 0, 0);
}
static int open(const char *path, int flags, ...) {
    int mode = 0;
    if (flags & O_CREAT) { /* (a mode is given only then) */
        va_list ap;
        va_start(ap, flags);
        mode = va_arg(ap, int);
        va_end(ap);
    }
    return (int)SYS(257, AT_FDCWD, path, flags, mode, 0, 0);
}
static int unlink(const char *path) { return (int)SYS(263, AT_FDCWD, path, 0, 0, 0, 0); }
static int lstat(const char *path, struct stat *st) {
    return (int)SYS(262, AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW, 0, 0);
}
static int memfd_create(const char *name, unsigned int flags) {
    return (int)SYS(319, name, flags, 0, 0, 0, 0);
}
/* Only where `memfd_create` is missing (Linux before 3.17): the template's last six characters
 * made up until a new file is created (`O_EXCL`: never an existing file or a link). */
static int mkstemp(char *name) {
    size_t n = 0;
    while (name[n]) n++;
    if (n < 6) return -1;
    for (unsigned long long tries = 0; tries < 100; tries++) {
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        unsigned long long v = (unsigned long long)t.tv_nsec * 2654435761ULL + tries * 7919ULL;
        for (size_t i = n - 6; i < n; i++, v /= 36)
            name[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[v % 36];
        int fd = (int)SYS(257, AT_FDCWD, name, O_RDWR | O_CREAT | O_EXCL, 0600, 0, 0);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

/* The compiler may call these four for copies and initialisers: they are not `static`.
 * `memcpy` and `memset` are the string instructions (the direction flag is clear at every call,
 * by the ABI), not byte loops: a payload at the 16 MiB bound is copied about three times as its
 * buffer grows, and the byte loop cost it about 27 ms of CPU more than the C library's build. */
void *memcpy(void *to, const void *from, size_t n) {
    void *d = to;
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(from), "+c"(n) : : "memory");
    return to;
}
void *memmove(void *to, const void *from, size_t n) {
    unsigned char *d = to;
    const unsigned char *s = from;
    if (d < s) {
        while (n--) *d++ = *s++;
    } else {
        while (n--) d[n] = s[n];
    }
    return to;
}
void *memset(void *to, int c, size_t n) {
    void *d = to;
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(c) : "memory");
    return to;
}
int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y) return *x - *y;
    return 0;
}

static size_t strlen(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}
static int strncmp(const char *a, const char *b, size_t n) {
    for (; n; n--, a++, b++) {
        if (*a != *b) return (unsigned char)*a - (unsigned char)*b;
        if (!*a) return 0;
    }
    return 0;
}
static int strcmp(const char *a, const char *b) { return strncmp(a, b, (size_t)-1); }
static char *strchr(const char *s, int c) {
    for (;; s++) {
        if (*s == (char)c) return (char *)s;
        if (!*s) return 0;
    }
}
static char *strstr(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncmp(hay, needle, n) == 0) return (char *)hay;
    return n ? 0 : (char *)hay;
}
static size_t strspn(const char *s, const char *accept) {
    size_t n = 0;
    while (s[n] && strchr(accept, s[n])) n++;
    return n;
}
static void *memchr(const void *s, int c, size_t n) {
    const unsigned char *p = s;
    for (; n; n--, p++)
        if (*p == (unsigned char)c) return (void *)p;
    return 0;
}
static char *strcpy(char *to, const char *from) {
    memcpy(to, from, strlen(from) + 1);
    return to;
}
static char *getenv(const char *name) {
    size_t n = strlen(name);
    for (char **e = environ_; e && *e; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return 0;
}
/* The C library's words for the errors `execv` gives, the one failure the client reports (the
 * Python client it cannot run): the operator reads the cause, not just that something failed. */
static const char *strerror(int code) {
    switch (code) {
    case 1: return "Operation not permitted";
    case 2: return "No such file or directory";
    case 5: return "Input/output error";
    case 7: return "Argument list too long";
    case 8: return "Exec format error";
    case 12: return "Cannot allocate memory";
    case 13: return "Permission denied";
    case 20: return "Not a directory";
    case 21: return "Is a directory";
    case 24: return "Too many open files";
    case 26: return "Text file busy";
    case 36: return "File name too long";
    case 40: return "Too many levels of symbolic links";
    }
    static char unnamed[32] = "error "; /* another: its number, as no words stand in for it */
    char digits[12];
    int n = 0;
    unsigned v = code < 0 ? 0 : (unsigned)code;
    do digits[n++] = (char)('0' + v % 10); while ((v /= 10) && n < 12);
    for (int i = 0; i < n; i++) unnamed[6 + i] = digits[n - 1 - i];
    unnamed[6 + n] = 0;
    return unnamed;
}

/* Allocation: blocks in one static arena (the client's buffers are a few kilobytes: the pages
 * they touch are few), larger ones mapped. Each block starts with its size. An arena block is
 * never freed (the process lives for one call); a mapped one grows by `mremap`, so a payload at
 * the 16 MiB bound costs what the C library's build costs (27 ms of CPU each, with the `cat` it
 * is handed to, A B B A x 3, load 2-6, 2026-11-29). */
static _Alignas(16) unsigned char arena[256 * 1024];
static size_t arena_used;

static void *alloc(size_t n) {
    size_t need = (n + 16 + 15) & ~(size_t)15;
    unsigned char *block;
    if (need <= sizeof arena - arena_used) {
        block = arena + arena_used;
        arena_used += need;
    } else {
        long got = sys6(9, 0, (long)need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
        if (got < 0 && got > -4096) {
            errno = ENOMEM;
            return 0;
        }
        block = (unsigned char *)got;
    }
    *(size_t *)block = n;
    return block + 16;
}
static void *realloc(void *old, size_t n) {
    unsigned char *was = old ? (unsigned char *)old - 16 : 0;
    if (was && (was < arena || was >= arena + sizeof arena)) {
        /* a mapped block grows where the kernel can put it, its pages kept (`mremap`, as the
         * C library does): a fresh mapping and a copy faulted in every page of a 16 MiB
         * payload's buffer again at each doubling, about 20 ms of CPU */
        size_t had = *(size_t *)was, need = (n + 16 + 15) & ~(size_t)15;
        long got = sys6(25, (long)was, (long)((had + 16 + 15) & ~(size_t)15), (long)need,
                        1 /* MREMAP_MAYMOVE */, 0, 0);
        if (got < 0 && got > -4096) {
            errno = ENOMEM;
            return 0;
        }
        *(size_t *)got = n;
        return (unsigned char *)got + 16;
    }
    void *fresh = alloc(n);
    if (fresh && old) {
        unsigned char *block = (unsigned char *)old - 16;
        size_t had = *(size_t *)block;
        memcpy(fresh, old, had < n ? had : n);
    }
    return fresh;
}
static void *calloc(size_t count, size_t size) {
    if (size && count > (size_t)-1 / size) return 0;
    void *p = alloc(count * size);
    if (p) memset(p, 0, count * size); /* (an arena block was never used before: zero) */
    return p;
}

static unsigned long long strtoull(const char *s, char **end, int base) {
    (void)base; /* (base 10 only) */
    unsigned long long v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + (unsigned long long)(*s++ - '0');
    if (end) *end = (char *)s;
    return v;
}

/* A decimal number, `[+-]digits[.digits][(e|E)[+-]digits]`; `*end` where it stops. */
static double strtod(const char *s, char **end) {
    const char *p = s;
    double sign = 1, v = 0;
    if (*p == '+' || *p == '-') sign = *p++ == '-' ? -1 : 1;
    int digits = 0, scale = 0;
    for (; *p >= '0' && *p <= '9'; p++, digits++) v = v * 10 + (*p - '0');
    if (*p == '.')
        for (p++; *p >= '0' && *p <= '9'; p++, digits++, scale--) v = v * 10 + (*p - '0');
    if (!digits) {
        if (end) *end = (char *)s;
        return 0;
    }
    if (*p == 'e' || *p == 'E') {
        const char *e = p + 1;
        int esign = 1, ev = 0, edigits = 0;
        if (*e == '+' || *e == '-') esign = *e++ == '-' ? -1 : 1;
        for (; *e >= '0' && *e <= '9'; e++, edigits++)
            if (ev < 10000) ev = ev * 10 + (*e - '0');
        if (edigits) {
            scale += esign * ev;
            p = e;
        }
    }
    if (scale > 400 || scale < -400) {
        errno = ERANGE;
        scale = scale > 0 ? 400 : -400;
    }
    for (; scale > 0; scale--) v *= 10;
    for (; scale < 0; scale++) v /= 10;
    if (end) *end = (char *)p;
    return sign * v;
}

/* The formats the client prints: %s, %c, %d, %u, %x (with `ll`, a zero-padded width), and %f
 * with a precision (a finite number: the seconds left of a call). Any other conversion is
 * printed as it is written and takes no argument. */
static int vsnprintf(char *out, size_t size, const char *fmt, va_list ap) {
    size_t n = 0;
#define EMIT(ch) do { if (n + 1 < size) out[n] = (ch); n++; } while (0)
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            EMIT(*fmt);
            continue;
        }
        fmt++;
        int zero = 0, width = 0, precision = 6, longs = 0;
        if (*fmt == '0') {
            zero = 1;
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
        if (*fmt == '.')
            for (precision = 0, fmt++; *fmt >= '0' && *fmt <= '9'; fmt++)
                precision = precision * 10 + (*fmt - '0');
        for (; *fmt == 'l'; fmt++) longs++;
        char digits[64];
        int len = 0;
        if (*fmt == 's') {
            for (const char *s = va_arg(ap, const char *); *s; s++) EMIT(*s);
            continue;
        } else if (*fmt == 'c') {
            EMIT((char)va_arg(ap, int));
            continue;
        } else if (*fmt == 'u' || *fmt == 'x' || *fmt == 'd') {
            unsigned long long v;
            if (*fmt == 'd') {
                long long sv = longs ? va_arg(ap, long long) : va_arg(ap, int);
                if (sv < 0) EMIT('-');
                v = sv < 0 ? 0 - (unsigned long long)sv : (unsigned long long)sv;
            } else {
                v = longs ? va_arg(ap, unsigned long long) : va_arg(ap, unsigned);
            }
            unsigned base = *fmt == 'x' ? 16 : 10;
            do digits[len++] = "0123456789abcdef"[v % base]; while ((v /= base) && len < 64);
        } else if (*fmt == 'f') {
            double v = va_arg(ap, double);
            if (v < 0) {
                EMIT('-');
                v = -v;
            }
            unsigned long long whole = (unsigned long long)v, frac_scale = 1;
            for (int i = 0; i < precision && i < 18; i++) frac_scale *= 10;
            unsigned long long frac =
                (unsigned long long)((v - (double)whole) * (double)frac_scale + 0.5);
            if (frac >= frac_scale) {
                whole++;
                frac -= frac_scale;
            }
            for (int i = 0; i < precision && i < 18; i++, frac /= 10)
                digits[len++] = (char)('0' + frac % 10);
            if (precision) digits[len++] = '.';
            do digits[len++] = (char)('0' + whole % 10); while ((whole /= 10) && len < 64);
        } else {
            EMIT('%');
            if (*fmt) EMIT(*fmt);
            if (!*fmt) break;
            continue;
        }
        for (int pad = width - len; pad > 0; pad--) EMIT(zero ? '0' : ' ');
        while (len) EMIT(digits[--len]);
    }
#undef EMIT
    if (size) out[n < size ? n : size - 1] = 0;
    return (int)n;
}
static int snprintf(char *out, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, size, fmt, ap);
    va_end(ap);
    return n;
}
#define stderr 2
/* A line longer than the buffer on the stack is formatted again into one that holds it (the
 * Python client's path in `--check` and in the message that it cannot be run: cut, the check
 * failed and the operator read half the path). */
static int fprintf(int fd, const char *fmt, ...) {
    char line[1024], *text = line;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t left = n < (int)sizeof line ? (size_t)n : sizeof line - 1;
    if (n >= (int)sizeof line) {
        char *whole = alloc((size_t)n + 1);
        if (whole) {
            vsnprintf(whole, (size_t)n + 1, fmt, again);
            text = whole;
            left = (size_t)n;
        }
    }
    va_end(again);
    for (const char *p = text; left;) {
        ssize_t w = write(fd, p, left);
        if (w <= 0) break;
        p += w;
        left -= (size_t)w;
    }
    return n;
}
#define printf(...) fprintf(1, __VA_ARGS__)

int main(int argc, char **argv);

/* The program's entry: the kernel leaves argc, argv and the environment on the stack. */
__attribute__((used)) void nolibc_start(long *stack) {
    int argc = (int)stack[0];
    char **argv = (char **)(stack + 1);
    environ_ = argv + argc + 1;
    exit(main(argc, argv));
}
__asm__(".text\n"
        ".global _start\n"
        "_start:\n"
        "  xor %rbp, %rbp\n"
        "  mov %rsp, %rdi\n"
        "  and $-16, %rsp\n"
        "  call nolibc_start\n"
        "  hlt\n");
