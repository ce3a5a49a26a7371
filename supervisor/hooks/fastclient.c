/* The native hook client: `supervisor-hook TARGET [--timeout S] [--root DIR]` without Python.
 *
 * Built by `supervisor install` (supervisor/hooks/native.py) from this file with the machine's
 * `cc`, into a private directory; the build prepends the definitions it is made for:
 * SUPERVISOR_VERSION, SUPERVISOR_PYTHON (the interpreter the server key names), FALLBACK_ARGV
 * (the Python client's command line) and TARGET_NAMES.
 *
 * It does only the relay of the Python client (supervisor/hooks/client.py) on its fast path:
 * find the resident server's socket of the root (the same key), trust it exactly as the Python
 * client does (a `run/` directory that is ours and nobody else may write to, a peer running as
 * this user), send the header line and the payload, and print the answer. Anything it does not
 * handle plainly (no server, a server it does not trust, another version, an unusual command
 * line or environment) goes to the Python client with the payload untouched, by exec: it starts
 * the server and handles the call in-process, so no call goes unsupervised because this client
 * could not answer. Like the Python client it never exits 2, and a server that took the payload
 * and died or wedged gets the fail-safe answer: nothing, exit 0, in time.
 */
#ifndef SUPERVISOR_NOLIBC /* else fastclient_nolibc.h, prepended by native.py, stands in */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#endif

#define READ_LIMIT (16u * 1024u * 1024u) /* client.READ_LIMIT_BYTES */
#define REPLY_MARGIN_S 0.5                /* client.REPLY_MARGIN_S */
#define DEFAULT_TIMEOUT_S 60.0            /* args.DEFAULT_TIMEOUT_S */
#define MAX_TIMEOUT_S 86400.0             /* args.MAX_TIMEOUT_S */

static const char *const fallback_base[] = {FALLBACK_ARGV, NULL};
static const char *const targets[] = {TARGET_NAMES, NULL};
static int g_argc;
static char **g_argv;

/* A growing byte buffer; out of memory ends in the Python client. */
typedef struct {
    char *data;
    size_t len, cap;
} buf_t;

static void fallback(const buf_t *payload);

static void put(buf_t *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + n + 1) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) fallback(NULL);
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void puts_(buf_t *b, const char *s) { put(b, s, strlen(s)); }

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Run the Python client with this call's arguments; `payload` (already read from stdin) becomes
 * its stdin, else stdin is left as it is. Never returns. */
static void fallback(const buf_t *payload) {
    if (payload) {
        int fd = memfd_create("supervisor-hook-payload", 0);
        if (fd < 0) {
            char name[] = "/tmp/supervisor-hook-XXXXXX";
            fd = mkstemp(name);
            if (fd >= 0) unlink(name);
        }
        if (fd >= 0) {
            size_t off = 0;
            while (off < payload->len) {
                ssize_t n = write(fd, payload->data + off, payload->len - off);
                if (n <= 0) break;
                off += (size_t)n;
            }
            lseek(fd, 0, SEEK_SET);
            dup2(fd, 0);
            close(fd);
        }
    }
    size_t base = 0;
    while (fallback_base[base]) base++;
    char **argv = calloc(base + (size_t)g_argc + 1, sizeof(char *));
    if (argv) {
        for (size_t i = 0; i < base; i++) argv[i] = (char *)fallback_base[i];
        for (int i = 1; i < g_argc; i++) argv[base + (size_t)i - 1] = g_argv[i];
        execv(argv[0], argv);
    }
    fprintf(stderr, "supervisor-hook: cannot run the Python client %s: %s\n", fallback_base[0],
            strerror(errno));
    exit(0); /* never 2: the call goes on */
}

/* An absolute path Python's `os.path.abspath` leaves as it is (else the Python client decides). */
static int plain_path(const char *p) {
    size_t n = strlen(p);
    if (n == 0 || p[0] != '/') return 0;
    if (n == 1) return 1;
    if (p[n - 1] == '/' || strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../")) return 0;
    if ((n >= 2 && strcmp(p + n - 2, "/.") == 0) || (n >= 3 && strcmp(p + n - 3, "/..") == 0))
        return 0;
    return 1;
}

/* Python's `abspath(expanduser(value))` for the values this client handles; NULL otherwise. */
static const char *absolute(const char *value) {
    if (value[0] == '~') {
        const char *home = getenv("HOME");
        if (!home || !*home || (value[1] && value[1] != '/')) return NULL;
        buf_t b = {0};
        puts_(&b, home);
        puts_(&b, value + 1);
        return plain_path(b.data) ? b.data : NULL;
    }
    return plain_path(value) ? value : NULL;
}

static int valid_utf8(const unsigned char *s) {
    while (*s) {
        unsigned char c = *s++;
        int more;
        if (c < 0x80) continue;
        if (c >= 0xC2 && c <= 0xDF) more = 1;
        else if (c >= 0xE0 && c <= 0xEF) more = 2;
        else if (c >= 0xF0 && c <= 0xF4) more = 3;
        else return 0;
        if ((c == 0xE0 && s[0] < 0xA0) || (c == 0xED && s[0] >= 0xA0) ||
            (c == 0xF0 && s[0] < 0x90) || (c == 0xF4 && s[0] >= 0x90))
            return 0; /* overlong, a surrogate, beyond U+10FFFF */
        while (more--)
            if ((*s++ & 0xC0) != 0x80) return 0;
    }
    return 1;
}

/* `"text"` as a JSON string; text that is not UTF-8 goes to the Python client. */
static void json_string(buf_t *b, const char *text) {
    if (!valid_utf8((const unsigned char *)text)) fallback(NULL);
    put(b, "\"", 1);
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        char esc[8];
        if (*s == '"' || *s == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*s;
            put(b, esc, 2);
        } else if (*s < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *s);
            puts_(b, esc);
        } else {
            put(b, (const char *)s, 1);
        }
    }
    put(b, "\"", 1);
}

/* client._per_run: a PATH entry ".../arg0.../codex-arg0..." (Codex: its aliases, one directory a
 * run). */
static int per_run(const char *entry, size_t len) {
    size_t slash = len;
    while (slash > 0 && entry[slash - 1] != '/') slash--;
    if (slash == 0 || len - slash < 10 || strncmp(entry + slash, "codex-arg0", 10) != 0) return 0;
    size_t end = slash - 1, start = end; /* the parent: entry[start, end) */
    while (start > 0 && entry[start - 1] != '/') start--;
    return end - start >= 4 && strncmp(entry + start, "arg0", 4) == 0;
}

/* client.shared_path: $PATH without the entries an agent CLI adds for one run. */
static const char *shared_path(void) {
    const char *path = getenv("PATH");
    if (!path) return NULL;
    buf_t b = {0};
    int first = 1;
    for (const char *entry = path;; entry++) {
        const char *colon = strchr(entry, ':');
        size_t len = colon ? (size_t)(colon - entry) : strlen(entry);
        if (!per_run(entry, len)) {
            if (!first) put(&b, ":", 1);
            put(&b, entry, len);
            first = 0;
        }
        if (!colon) break;
        entry = colon;
    }
    if (!b.data) put(&b, "", 0);
    return b.data;
}

/* client.server_key: FNV-1a of the policy setting, interpreter, version and shared environment. */
static void server_key(const char *policy, char out[13]) {
    const char *parts[] = {policy ? policy : "", SUPERVISOR_PYTHON, SUPERVISOR_VERSION,
                           getenv("HOME"), getenv("XDG_CONFIG_HOME"), shared_path()};
    unsigned long long h = 0xCBF29CE484222325ULL;
    for (size_t i = 0; i < sizeof parts / sizeof *parts; i++) {
        if (i) h = (h ^ 0) * 0x100000001B3ULL;
        for (const unsigned char *s = (const unsigned char *)(parts[i] ? parts[i] : ""); *s; s++)
            h = (h ^ *s) * 0x100000001B3ULL;
    }
    char full[17];
    snprintf(full, sizeof full, "%016llx", h);
    memcpy(out, full, 12);
    out[12] = 0;
}

static int known_target(const char *name) {
    for (size_t i = 0; targets[i]; i++)
        if (strcmp(targets[i], name) == 0) return 1;
    return 0;
}

/* args.parse_args for the lines it accepts as they are; anything else: the Python client. */
static void parse(double *timeout, const char **root) {
    if (g_argc < 2 || !known_target(g_argv[1])) fallback(NULL);
    *timeout = DEFAULT_TIMEOUT_S;
    *root = NULL;
    for (int i = 2; i < g_argc; i++) {
        const char *option = g_argv[i], *eq = strchr(option, '=');
        size_t name_len = eq ? (size_t)(eq - option) : strlen(option);
        const char *value = eq ? eq + 1 : "";
        int is_timeout = name_len == 9 && strncmp(option, "--timeout", 9) == 0;
        int is_root = name_len == 6 && strncmp(option, "--root", 6) == 0;
        if (!is_timeout && !is_root) fallback(NULL);
        if (!*value) {
            if (i + 1 >= g_argc) fallback(NULL);
            value = g_argv[++i];
        }
        if (is_root) {
            *root = value;
            continue;
        }
        if (strspn(value, "0123456789.eE+-") != strlen(value)) fallback(NULL);
        char *end;
        errno = 0;
        double t = strtod(value, &end);
        if (errno || *end || !(t > 0) || t > MAX_TIMEOUT_S) fallback(NULL);
        *timeout = t;
    }
}

/* client._parse's root: --root, $SUPERVISOR_HOME, else the Linux default. */
static const char *store_root(const char *given) {
    buf_t b = {0};
    if (!given || !*given) given = getenv("SUPERVISOR_HOME");
    if (!given || !*given) {
#ifndef __linux__
        fallback(NULL); /* client._default_root: Linux only */
#endif
        const char *state = getenv("XDG_STATE_HOME");
        if (state && *state) {
            if (strspn(state, " \t\n\r\f\v") || strchr(" \t\n\r\f\v", state[strlen(state) - 1]))
                fallback(NULL);
            puts_(&b, state);
        } else {
            puts_(&b, "~/.local/state");
        }
        puts_(&b, "/agent-supervisor");
        given = b.data;
    }
    const char *root = absolute(given);
    if (!root) fallback(NULL);
    return root;
}

/* client._trusted: our own server behind a directory nobody else may write to. */
static int trusted(int sock, const char *run) {
    struct stat st;
    uid_t me = geteuid();
    if (lstat(run, &st) != 0 || st.st_uid != me || (st.st_mode & 022) || !S_ISDIR(st.st_mode))
        return 0;
#ifdef SO_PEERCRED
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return 0;
    return cred.uid == me;
#else
    uid_t uid;
    gid_t gid;
    return getpeereid(sock, &uid, &gid) == 0 && uid == me;
#endif
}

/* Connect by the socket's name inside `run` (AF_UNIX paths are limited to ~100 bytes). */
static int connect_to(const char *run, const char *name) {
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    if (sock < 0) return -1;
    struct sockaddr_un addr = {0};
    addr.sun_family = AF_UNIX;
    if (strlen(name) >= sizeof addr.sun_path) goto fail;
    strcpy(addr.sun_path, name);
    int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (here < 0) goto fail;
    int ok = chdir(run) == 0 && connect(sock, (struct sockaddr *)&addr, sizeof addr) == 0;
    int back = fchdir(here);
    close(here);
    if (ok && back == 0) return sock;
fail:
    close(sock);
    return -1;
}

static void set_timeouts(int sock, double seconds) {
    if (seconds < 0.05) seconds = 0.05;
    struct timeval tv = {(time_t)seconds, (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6)};
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

/* stdin's first READ_LIMIT bytes; the rest is read and dropped (the agent is never left
 * blocked on a full pipe). */
static void read_stdin(buf_t *b) {
    char chunk[65536];
    ssize_t n;
    while ((n = read(0, chunk, sizeof chunk)) != 0) {
        if (n < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (b->len < READ_LIMIT) {
            size_t room = READ_LIMIT - b->len;
            put(b, chunk, (size_t)n < room ? (size_t)n : room);
        }
    }
    if (!b->data) put(b, "", 0);
}

/* The header line and the payload, in one `sendmsg` when the socket's buffer takes them (a
 * hook's payload does): the server then reads the whole call at the one wake-up its `accept`
 * has, instead of waking for the header, again for the payload and again for the end. */
static int send_call(int sock, const buf_t *header, const buf_t *payload) {
    struct iovec parts[2] = {{header->data, header->len}, {payload->data, payload->len}};
    struct iovec *at = parts;
    size_t left = 2;
    while (left) {
        struct msghdr message = {0};
        message.msg_iov = at;
        message.msg_iovlen = left;
        ssize_t n = sendmsg(sock, &message, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        size_t sent = (size_t)n;
        while (left && sent >= at->iov_len) {
            sent -= at->iov_len;
            at++;
            left--;
        }
        if (left) {
            at->iov_base = (char *)at->iov_base + sent;
            at->iov_len -= sent;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    double started = now();
    g_argc = argc;
    g_argv = argv;
    if (argc == 2 && strcmp(argv[1], "--check") == 0) {
        /* native.py verifies a build with this: the version and the Python client */
        printf("%s\n%s\n", SUPERVISOR_VERSION, fallback_base[0]);
        return 0;
    }
    const char *daemon = getenv("SUPERVISOR_HOOK_DAEMON");
    if (daemon && strcmp(daemon, "0") == 0) fallback(NULL);
    double timeout;
    const char *given_root;
    parse(&timeout, &given_root);
    const char *root = store_root(given_root);
    const char *policy = getenv("SUPERVISOR_POLICY");
    if (policy && *policy) {
        policy = absolute(policy);
        if (!policy) fallback(NULL);
    } else {
        policy = NULL;
    }
    char key[13];
    server_key(policy, key);
    buf_t run = {0}, name = {0};
    puts_(&run, strcmp(root, "/") ? root : "");
    puts_(&run, "/run");
    puts_(&name, "hook-");
    puts_(&name, key);
    puts_(&name, ".sock");
    char cwd[8192];
    if (!getcwd(cwd, sizeof cwd)) fallback(NULL);

    /* The payload first, then connect: the server is woken when the whole call is there to
     * read (`send_call`), not while the agent is still writing it to our stdin. */
    buf_t payload = {0};
    read_stdin(&payload);
    int sock = connect_to(run.data, name.data);
    if (sock < 0 || !trusted(sock, run.data)) {
        if (sock >= 0) close(sock);
        fallback(&payload); /* it starts the server */
    }
    set_timeouts(sock, timeout - (now() - started) - REPLY_MARGIN_S);

    buf_t header = {0};
    char number[64];
    puts_(&header, "{\"target\": ");
    json_string(&header, argv[1]);
    puts_(&header, ", \"cwd\": ");
    json_string(&header, cwd);
    puts_(&header, ", \"version\": ");
    json_string(&header, SUPERVISOR_VERSION);
    puts_(&header, ", \"root\": ");
    json_string(&header, root);
    snprintf(number, sizeof number, ", \"timeout\": %.6f, \"run\": ", timeout - (now() - started));
    puts_(&header, number);
    const char *session = getenv("SUPERVISOR_RUN_SESSION"); /* runenv.run_of */
    if (session && *session) {
        const char *pid = getenv("SUPERVISOR_RUN_PID");
        puts_(&header, "[");
        json_string(&header, session);
        if (pid && *pid && strspn(pid, "0123456789") == strlen(pid)) {
            if (strlen(pid) > 18) fallback(&payload);
            snprintf(number, sizeof number, ", %llu]", strtoull(pid, NULL, 10));
            puts_(&header, number);
        } else {
            puts_(&header, ", null]");
        }
    } else {
        puts_(&header, "null");
    }
    puts_(&header, ", \"reply\": \"raw\"}\n");
    if (send_call(sock, &header, &payload)) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0; /* wedged: the call goes on */
        close(sock);
        fallback(&payload); /* it closed before taking the call: nothing was recorded */
    }
    shutdown(sock, SHUT_WR);

    buf_t reply = {0};
    char chunk[65536];
    for (;;) {
        ssize_t n = recv(sock, chunk, sizeof chunk, 0);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            return 0; /* the server died or wedged with the payload: the call goes on in time */
        }
        put(&reply, chunk, (size_t)n);
    }
    close(sock);
    /* server.py's raw reply: "<status>\n<stdout>", or "version\n" from another version */
    char *newline = reply.data ? memchr(reply.data, '\n', reply.len) : NULL;
    if (!newline) return 0;
    *newline = 0;
    if (strcmp(reply.data, "version") == 0) fallback(&payload);
    size_t head = (size_t)(newline - reply.data) + 1;
    size_t left = reply.len - head;
    const char *out = reply.data + head;
    while (left) {
        ssize_t n = write(1, out, left);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out += n;
        left -= (size_t)n;
    }
    return strcmp(reply.data, "1") == 0 ? 1 : 0;
}
