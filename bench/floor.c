// floor.c - the "floor" for the jp-actors benchmarks: the same workloads
// done directly against the OS, single-threaded, with posix_spawn, pidfds,
// non-blocking pipes and one epoll. Whatever jp-actors measures is compared
// against the figures this program prints.
//
//   jp-floor W1..W7|W9|W10 [--n N] [--bytes B]   one JSON line on stdout
//   jp-floor stamp DELAY_MS               child helper: sleep, print CLOCK_MONOTONIC ns
//   jp-floor write BYTES                  child helper: write BYTES of 'x' to stdout
//
// Build: gcc -O2 -Wall -Wextra -o jp-floor bench/floor.c
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define PIPE_SIZE (1 << 20)
#define READ_BUF (1 << 20)
#define MAX_EVENTS 256

enum { K_PIDFD, K_OUT, K_ERR };   // low bits of an epoll tag; the rest is the child index

struct child {
    pid_t pid;                    // kept after reaping, W6 probes the group afterwards
    int pidfd, in, out, err;      // -1 once closed
    bool reaped, keep_pidfd;
    int status;
    size_t out_bytes;             // total stdout bytes seen
    size_t cap_len;               // first bytes of stdout, NUL-terminated
    char cap[32];
};

struct loop {
    int epfd;
    struct child *kids;
    int n, pos;                   // pending events from the last epoll_wait
    struct epoll_event ev[MAX_EVENTS];
};

static char g_self[PATH_MAX];
static int g_devnull = -1;
static struct child *g_kids;      // so die() can kill whatever is still running
static size_t g_nkids;
static char g_buf[READ_BUF];
static size_t g_bytes = 268435456;   // --bytes, for W4
static const char *g_samples;        // --samples FILE, for W3: each exit (bench/exit_gaps.hpp)
static const char *g_cpu;            // --cpu FILE: where the time went (bench/cpu_use.hpp)

// ---------------------------------------------------------------- helpers

__attribute__((noreturn, format(printf, 1, 2)))
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("jp-floor: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    // Never leave children behind: each leads its own group, kill the group.
    for (size_t i = 0; i < g_nkids; i++) {
        struct child *c = &g_kids[i];
        if (c->pid > 0 && !c->reaped) {
            kill(-c->pid, SIGKILL);
            waitpid(c->pid, NULL, 0);
        }
    }
    exit(1);
}

// Dies with errno's text if a system call failed; passes its result through.
static long sys(long rc, const char *what)
{
    if (rc < 0)
        die("%s: %s", what, strerror(errno));
    return rc;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static double us_since(uint64_t t0)
{
    return (double)(now_ns() - t0) / 1e3;
}

static void close_fd(int *fd)
{
    if (*fd >= 0) {
        close(*fd);
        *fd = -1;
    }
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        die("out of memory");
    return p;
}

// An epoll set plus slots for n children (slot i's events are tagged i).
static void loop_init(struct loop *lp, size_t n)
{
    lp->epfd = (int)sys(epoll_create1(EPOLL_CLOEXEC), "epoll_create1");
    lp->kids = xcalloc(n, sizeof *lp->kids);
    for (size_t i = 0; i < n; i++)
        lp->kids[i].pidfd = lp->kids[i].in = lp->kids[i].out = lp->kids[i].err = -1;
    lp->n = lp->pos = 0;
    g_kids = lp->kids;
    g_nkids = n;
}

static void loop_done(struct loop *lp)
{
    close(lp->epfd);
    free(lp->kids);
    g_kids = NULL;
    g_nkids = 0;
}

static void watch(int epfd, int fd, uint64_t tag)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };
    sys(epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev), "epoll_ctl");
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Nearest-rank percentile; sorts v in place.
static double pct(double *v, size_t n, double q)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, cmp_double);
    size_t i = (size_t)(q * (double)n);
    return v[i < n ? i : n - 1];
}

// Prints {"workload":W,"figures":{k:v,...}}; args are (const char *, double)
// pairs ending with NULL.
static void emit(const char *workload, ...)
{
    va_list ap;
    va_start(ap, workload);
    printf("{\"workload\":\"%s\",\"figures\":{", workload);
    const char *key;
    for (int first = 1; (key = va_arg(ap, const char *)); first = 0) {
        double v = va_arg(ap, double);
        bool integral = v == (double)(long long)v;
        printf(integral ? "%s\"%s\":%.0f" : "%s\"%s\":%.3f", first ? "" : ",", key, v);
    }
    printf("}}\n");
    va_end(ap);
    fflush(stdout);
}

// ---------------------------------------------------------------- memory

static long status_kib(const char *key)
{
    char buf[8192];
    size_t len = 0;
    int fd = (int)sys(open("/proc/self/status", O_RDONLY | O_CLOEXEC), "/proc/self/status");
    ssize_t r;
    while (len < sizeof buf - 1 && (r = read(fd, buf + len, sizeof buf - 1 - len)) > 0)
        len += (size_t)r;
    close(fd);
    buf[len] = 0;
    char *p = strstr(buf, key);
    if (!p)
        die("%s not in /proc/self/status", key);
    return strtol(p + strlen(key), NULL, 10);
}

// Returns idle RSS (KiB) and resets the peak so VmHWM covers only what follows.
static long mem_begin(void)
{
    long idle = status_kib("VmRSS:");
    int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "5", 1) != 1)
        die("reset peak RSS via /proc/self/clear_refs: %s", strerror(errno));
    close(fd);
    return idle;
}

static long mem_growth_kib(long idle)
{
    return status_kib("VmHWM:") - idle;
}

// ---------------------------------------------------------------- children

// pipe2 + O_NONBLOCK on the parent's end only: the child's end stays blocking,
// since O_NONBLOCK lives on the open file description it would otherwise share.
static void make_pipe(int p[2], int parent_end)
{
    sys(pipe2(p, O_CLOEXEC), "pipe2");
    int fl = (int)sys(fcntl(p[parent_end], F_GETFL), "F_GETFL");
    sys(fcntl(p[parent_end], F_SETFL, fl | O_NONBLOCK), "F_SETFL");
    sys(fcntl(p[0], F_SETPIPE_SZ, PIPE_SIZE), "F_SETPIPE_SZ");
}

// W1 also times children in their own session, as jp-actors starts them (so that
// none can open its terminal): setsid costs the kernel a scheduler autogroup that
// a process group alone does not (bench/README.md, "Issue 18 on this VM
// (2026-11-27, session 23)").
static bool g_own_session;

// Spawns argv (absolute path) as kids[idx] in its own process group (or session)
// and registers its pidfd and output pipes with the loop's epoll.
static void spawn(struct loop *lp, size_t idx, const char *const argv[], bool with_stdin)
{
    struct child *c = &lp->kids[idx];
    int in[2] = { -1, -1 }, out[2], err[2];
    if (with_stdin)
        make_pipe(in, 1);
    make_pipe(out, 0);
    make_pipe(err, 0);

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none;
    sigemptyset(&none);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, with_stdin ? in[0] : g_devnull, 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawnattr_init(&at);
    posix_spawnattr_setflags(&at, (g_own_session ? POSIX_SPAWN_SETSID : POSIX_SPAWN_SETPGROUP) |
                                      POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    int rc = posix_spawn(&c->pid, argv[0], &fa, &at, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);

    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&err[1]);
    c->in = in[1];
    c->out = out[0];
    c->err = err[0];
    if (rc != 0) {
        c->pid = 0;
        die("posix_spawn %s: %s", argv[0], strerror(rc));
    }
    c->pidfd = (int)sys(syscall(SYS_pidfd_open, c->pid, 0), "pidfd_open");
    watch(lp->epfd, c->pidfd, (uint64_t)idx << 2 | K_PIDFD);
    watch(lp->epfd, c->out, (uint64_t)idx << 2 | K_OUT);
    watch(lp->epfd, c->err, (uint64_t)idx << 2 | K_ERR);
}

// Reads *fd until EAGAIN or EOF (then closes it); a no-op once closed.
// Stdout's first bytes are kept in c->cap; everything else is discarded.
static void drain(struct child *c, int *fd)
{
    bool is_out = fd == &c->out;
    while (*fd >= 0) {
        ssize_t r = read(*fd, g_buf, sizeof g_buf);
        if (r > 0) {
            if (is_out) {
                size_t room = sizeof c->cap - 1 - c->cap_len;
                size_t k = (size_t)r < room ? (size_t)r : room;
                memcpy(c->cap + c->cap_len, g_buf, k);
                c->cap_len += k;
                c->cap[c->cap_len] = 0;
                c->out_bytes += (size_t)r;
            }
        } else if (r == 0) {
            close_fd(fd);   // also drops it from the epoll set
            return;
        } else if (errno == EAGAIN) {
            return;
        } else if (errno != EINTR) {
            die("read: %s", strerror(errno));
        }
    }
}

// The child has exited (pidfd readable): reap it, drain and close its pipes.
static void finish(struct loop *lp, struct child *c)
{
    sys(waitpid(c->pid, &c->status, 0), "waitpid");
    c->reaped = true;
    drain(c, &c->out);   // the writer is gone, so this reads to EOF and closes
    drain(c, &c->err);
    close_fd(&c->out);   // in case a grandchild still holds the write end
    close_fd(&c->err);
    close_fd(&c->in);
    if (c->keep_pidfd)
        epoll_ctl(lp->epfd, EPOLL_CTL_DEL, c->pidfd, NULL);  // stays readable forever
    else
        close_fd(&c->pidfd);
}

// Runs the event loop until some child exits; returns it finished (reaped,
// drained, closed). Output arriving before that is drained as it comes.
static struct child *next_exit(struct loop *lp)
{
    for (;;) {
        while (lp->pos < lp->n) {
            uint64_t tag = lp->ev[lp->pos++].data.u64;
            struct child *c = &lp->kids[tag >> 2];
            if ((tag & 3) != K_PIDFD) {
                drain(c, (tag & 3) == K_OUT ? &c->out : &c->err);
            } else if (!c->reaped) {   // stale events for finished children are skipped
                finish(lp, c);
                return c;
            }
        }
        int n = epoll_wait(lp->epfd, lp->ev, MAX_EVENTS, -1);
        if (n < 0 && errno != EINTR)
            die("epoll_wait: %s", strerror(errno));
        lp->n = n < 0 ? 0 : n;
        lp->pos = 0;
    }
}

static void expect_success(const struct child *c, const char *what)
{
    if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0)
        die("%s: child %d ended with status 0x%x", what, (int)c->pid, c->status);
}

static uint64_t parse_stamp(const struct child *c)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(c->cap, &end, 10);
    if (errno || end == c->cap || *end != '\n')
        die("bad stamp output \"%s\"", c->cap);
    return v;
}

// ---------------------------------------------------------------- workloads

static const char *const argv_true[] = { "/bin/true", NULL };

static void w1(size_t n)
{
    struct loop lp;
    loop_init(&lp, 2 * n);   // one slot per run: stale events can't hit a newer child
    // Its own process group, then its own session, alternating: drift hits both.
    double *lat[2] = { xcalloc(n, sizeof(double)), xcalloc(n, sizeof(double)) }, sum[2] = { 0, 0 };
    for (size_t i = 0; i < n; i++) {
        for (int session = 0; session < 2; session++) {
            g_own_session = session;
            uint64_t t0 = now_ns();
            spawn(&lp, 2 * i + (size_t)session, argv_true, false);
            struct child *c = next_exit(&lp);
            lat[session][i] = us_since(t0);
            expect_success(c, "W1");
            sum[session] += lat[session][i];
        }
    }
    g_own_session = false;
    double mean = n ? sum[0] / (double)n : 0, session_mean = n ? sum[1] / (double)n : 0;
    double p50 = pct(lat[0], n, 0.50), p99 = pct(lat[0], n, 0.99);
    emit("W1", "mean_us", mean, "p50_us", p50, "p99_us", p99, "session_mean_us", session_mean, NULL);
    free(lat[0]);
    free(lat[1]);
    loop_done(&lp);
}

static void w2(size_t n)
{
    static const char *const argv_sh[] = { "/bin/sh", "-c", "sleep 0.2; echo done", NULL };
    struct loop lp;
    loop_init(&lp, n);
    long idle = mem_begin();
    uint64_t t0 = now_ns();
    for (size_t i = 0; i < n; i++)
        spawn(&lp, i, argv_sh, false);
    for (size_t left = n; left > 0; left--) {
        struct child *c = next_exit(&lp);
        expect_success(c, "W2");
        if (strcmp(c->cap, "done\n") != 0)
            die("W2: unexpected output \"%s\"", c->cap);
    }
    double wall_ms = us_since(t0) / 1e3;
    double growth = (double)mem_growth_kib(idle) / 1024.0;
    emit("W2", "wall_ms", wall_ms, "rss_growth_mb", growth, NULL);
    loop_done(&lp);
}

static void w3(size_t n)
{
    struct loop lp;
    loop_init(&lp, n);
    double *late = xcalloc(n, sizeof(double)), *all = xcalloc(n, sizeof(double));
    double *after = xcalloc(n, sizeof(double));   // the stamp, after the spawn phase
    size_t nlate = 0;
    char delay[16];
    const char *argv[] = { g_self, "stamp", delay, NULL };
    for (size_t i = 0; i < n; i++) {
        snprintf(delay, sizeof delay, "%zu", (i * 379) % 1000);
        spawn(&lp, i, argv, false);
    }
    uint64_t t_spawned = now_ns();
    for (size_t i = 0; i < n; i++) {
        struct child *c = next_exit(&lp);
        uint64_t now = now_ns();
        expect_success(c, "W3");
        uint64_t stamp = parse_stamp(c);
        double us = (double)(int64_t)(now - stamp) / 1e3;
        all[i] = us;
        after[i] = (double)((int64_t)stamp - (int64_t)t_spawned) / 1e3;
        if (stamp > t_spawned)   // earlier stamps measure the spawn backlog, not wakeup
            late[nlate++] = us;
    }
    if (g_samples) {   // the same lines as jp-bench's (format_exit_samples); before pct sorts all[]
        FILE *f = fopen(g_samples, "w");
        if (!f)
            die("--samples %s: %s", g_samples, strerror(errno));
        fprintf(f, "# W3's exits: us after the spawn phase (below 0: during it), us from the stamp to the answer\n");
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%.1f %.1f\n", after[i], all[i]);
        if (fclose(f) != 0)
            die("--samples %s: %s", g_samples, strerror(errno));
    }
    double p50 = pct(late, nlate, 0.50), p99 = pct(late, nlate, 0.99);
    double p50_all = pct(all, n, 0.50), p99_all = pct(all, n, 0.99);
    emit("W3", "p50_us", p50, "p99_us", p99, "p50_all_us", p50_all, "p99_all_us", p99_all, NULL);
    free(after);
    free(late);
    free(all);
    loop_done(&lp);
}

static void w4(size_t n)
{
    (void)n;
    size_t bytes = g_bytes;
    char arg[32];
    snprintf(arg, sizeof arg, "%zu", bytes);
    const char *argv[] = { g_self, "write", arg, NULL };
    struct loop lp;
    loop_init(&lp, 1);
    long idle = mem_begin();
    uint64_t t0 = now_ns();
    spawn(&lp, 0, argv, false);
    struct child *c = next_exit(&lp);   // finish() reads the pipe to EOF
    double secs = us_since(t0) / 1e6;
    double growth = (double)mem_growth_kib(idle) / 1024.0;
    expect_success(c, "W4");
    if (c->out_bytes != bytes)
        die("W4: read %zu bytes, expected %zu", c->out_bytes, bytes);
    emit("W4", "mb_per_s", (double)bytes / 1e6 / secs, "rss_growth_mb", growth, NULL);
    loop_done(&lp);
}

static void w5(size_t n)
{
    static const char *const argv_cat[] = { "/bin/cat", NULL };
    struct loop lp;
    loop_init(&lp, 1);
    spawn(&lp, 0, argv_cat, true);
    struct child *c = &lp.kids[0];
    double *lat = xcalloc(n, sizeof(double));
    struct epoll_event ev[4];
    for (size_t i = 0; i < n; i++) {
        char want[32], got[32];
        size_t len = (size_t)snprintf(want, sizeof want, "line %zu\n", i), have = 0;
        uint64_t t0 = now_ns();
        // One short line into an empty 1 MiB pipe: never partial, never EAGAIN.
        if (write(c->in, want, len) != (ssize_t)len)
            die("W5: write to cat: %s", strerror(errno));
        while (have < len) {
            if (epoll_wait(lp.epfd, ev, 4, -1) < 0 && errno != EINTR)
                die("epoll_wait: %s", strerror(errno));
            ssize_t r = read(c->out, got + have, sizeof got - have);
            if (r > 0)
                have += (size_t)r;
            else if (r == 0)
                die("W5: cat closed its stdout");
            else if (errno != EAGAIN && errno != EINTR)
                die("read: %s", strerror(errno));
        }
        if (have != len || memcmp(got, want, len) != 0)
            die("W5: echo mismatch in round %zu", i);
        lat[i] = us_since(t0);
    }
    close_fd(&c->in);   // EOF makes cat exit
    next_exit(&lp);
    expect_success(c, "W5");
    double p50 = pct(lat, n, 0.50), p99 = pct(lat, n, 0.99);
    emit("W5", "p50_us", p50, "p99_us", p99, NULL);
    free(lat);
    loop_done(&lp);
}

static void w6(size_t n)
{
    static const char *const argv_sleep[] = { "/bin/sleep", "60", NULL };
    struct rlimit rl;
    sys(getrlimit(RLIMIT_NOFILE, &rl), "getrlimit");
    rl.rlim_cur = rl.rlim_max;
    sys(setrlimit(RLIMIT_NOFILE, &rl), "setrlimit");

    struct loop lp;
    loop_init(&lp, n);
    long idle = mem_begin();
    uint64_t t0 = now_ns();
    for (size_t i = 0; i < n; i++)
        spawn(&lp, i, argv_sleep, false);
    double spawn_s = us_since(t0) / 1e6;
    long growth = mem_growth_kib(idle);

    uint64_t t1 = now_ns();
    for (size_t i = 0; i < n; i++)
        sys(kill(-lp.kids[i].pid, SIGTERM), "kill");
    for (size_t left = n; left > 0; left--)
        next_exit(&lp);
    double abort_ms = us_since(t1) / 1e3;

    size_t left = 0;
    for (size_t i = 0; i < n; i++)
        if (kill(-lp.kids[i].pid, 0) == 0)
            left++;
    emit("W6", "spawn_rate_per_s", (double)n / spawn_s,
         "rss_per_handle_kib", n ? (double)growth / (double)n : 0.0,
         "abort_ms", abort_ms, "left", (double)left, NULL);
    loop_done(&lp);
}

static void w7(size_t n)
{
    enum { STOPPED = 10, DUPS = 1000 };
    struct loop lp;
    loop_init(&lp, STOPPED + 1);

    // Phase 1: awaiting handles whose processes are already gone.
    for (size_t i = 0; i < STOPPED; i++) {
        lp.kids[i].keep_pidfd = true;
        spawn(&lp, i, argv_true, false);
    }
    for (size_t i = 0; i < STOPPED; i++)
        expect_success(next_exit(&lp), "W7");
    struct pollfd pf[STOPPED];
    for (size_t i = 0; i < STOPPED; i++)
        pf[i] = (struct pollfd){ .fd = lp.kids[i].pidfd, .events = POLLIN };
    uint64_t t0 = now_ns();
    for (size_t k = 0; k < n; k++) {
        if (poll(pf, STOPPED, 0) != STOPPED)
            die("W7: stopped pidfds not all readable");
        for (size_t i = 0; i < STOPPED; i++)
            if (!(pf[i].revents & POLLIN))
                die("W7: stopped pidfd without POLLIN");
    }
    double secs = us_since(t0) / 1e6;
    double awaits = secs > 0 ? (double)n / secs : 0;

    // Phase 2: 1000 waiters on one running child, each its own epoll entry.
    const char *argv[] = { g_self, "stamp", "300", NULL };
    struct child *c = &lp.kids[STOPPED];
    spawn(&lp, STOPPED, argv, false);
    int ep = (int)sys(epoll_create1(EPOLL_CLOEXEC), "epoll_create1");
    int dups[DUPS];
    for (int j = 0; j < DUPS; j++) {
        dups[j] = (int)sys(fcntl(c->pidfd, F_DUPFD_CLOEXEC, 0), "dup pidfd");
        watch(ep, dups[j], (uint64_t)j);
    }
    double lat[DUPS];
    struct epoll_event ev[DUPS];
    uint64_t stamp = 0;
    bool have_stamp = false;
    for (int fired = 0; fired < DUPS;) {
        int m = epoll_wait(ep, ev, DUPS, -1);
        if (m < 0 && errno != EINTR)
            die("epoll_wait: %s", strerror(errno));
        for (int e = 0; e < m; e++) {
            uint64_t now = now_ns();
            if (!have_stamp) {   // written before exit, so already in the pipe
                drain(c, &c->out);
                stamp = parse_stamp(c);
                have_stamp = true;
            }
            lat[fired++] = (double)(int64_t)(now - stamp) / 1e3;
            int fd = dups[ev[e].data.u64];
            epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL);   // a dup's entry outlives close()
            close(fd);
        }
    }
    close(ep);
    finish(&lp, c);
    expect_success(c, "W7");
    for (size_t i = 0; i < STOPPED; i++)
        close_fd(&lp.kids[i].pidfd);
    double p50 = pct(lat, DUPS, 0.50), p99 = pct(lat, DUPS, 0.99);
    emit("W7", "awaits_per_s", awaits, "p50_us", p50, "p99_us", p99, NULL);
    loop_done(&lp);
}

// W9's floor: a request and its answer between two processes over a loopback TCP
// connection (a node's fetch crosses one such; TCP_NODELAY on both ends, each end
// waiting in the kernel for the other). The child answers every request of
// REQ bytes with ANS bytes until EOF.
enum { W9_REQ = 96, W9_ANS = 192 };

static void read_all(int fd, char *buf, size_t len, const char *what)
{
    for (size_t have = 0; have < len;) {
        ssize_t r = read(fd, buf + have, len - have);
        if (r > 0)
            have += (size_t)r;
        else if (r == 0)
            die("%s: connection closed", what);
        else if (errno != EINTR)
            die("%s: read: %s", what, strerror(errno));
    }
}

static void write_all(int fd, const char *buf, size_t len, const char *what)
{
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, buf + done, len - done);
        if (w > 0)
            done += (size_t)w;
        else if (w < 0 && errno != EINTR)
            die("%s: write: %s", what, strerror(errno));
    }
}

static void nodelay(int fd)
{
    int one = 1;
    sys(setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one), "TCP_NODELAY");
}

static void w9(size_t n)
{
    // Both ends connected before the fork: nothing the child does can leave the
    // parent waiting for a connection. A dead peer is an error, not a SIGPIPE.
    signal(SIGPIPE, SIG_IGN);
    int lfd = (int)sys(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket");
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t alen = sizeof addr;
    sys(bind(lfd, (struct sockaddr *)&addr, sizeof addr), "bind");
    sys(listen(lfd, 1), "listen");
    sys(getsockname(lfd, (struct sockaddr *)&addr, &alen), "getsockname");
    int child_end = (int)sys(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), "socket");
    sys(connect(child_end, (struct sockaddr *)&addr, sizeof addr), "connect");
    int fd = (int)sys(accept4(lfd, NULL, NULL, SOCK_CLOEXEC), "accept");
    close_fd(&lfd);
    nodelay(fd);
    nodelay(child_end);
    pid_t pid = (pid_t)sys(fork(), "fork");
    if (pid == 0) {   // the answering end: every request answered until EOF
        close(fd);
        char req[W9_REQ], ans[W9_ANS];
        memset(ans, 'a', sizeof ans);
        for (;;) {
            ssize_t r = 0;
            size_t have = 0;
            while (have < sizeof req && (r = read(child_end, req + have, sizeof req - have)) != 0) {
                if (r > 0)
                    have += (size_t)r;
                else if (errno != EINTR)
                    _exit(1);
            }
            if (have < sizeof req)
                _exit(have == 0 ? 0 : 1);   // EOF between requests: done
            write_all(child_end, ans, sizeof ans, "W9 answer");
        }
    }
    close_fd(&child_end);
    char req[W9_REQ], ans[W9_ANS];
    memset(req, 'q', sizeof req);
    double *lat = xcalloc(n, sizeof(double));
    for (size_t i = 0; i < n; i++) {
        uint64_t t0 = now_ns();
        write_all(fd, req, sizeof req, "W9 request");
        read_all(fd, ans, sizeof ans, "W9");
        lat[i] = us_since(t0);
    }
    close_fd(&fd);   // EOF ends the child
    int status = 0;
    pid_t r;
    while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (r != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("W9: the answering process failed");
    emit("W9", "remote_fetch_p50_us", pct(lat, n, 0.50), NULL);
    free(lat);
}

// W10: how late a look answers. A look waits up to wait_ms, or less where the tool
// waits for input, as an agent's `fetch` and `spawn` do: the floor is one poll() with
// that timeout, and for a prompt the same rule as a handle's (quiet for SETTLE_MS
// after the prompt, and the child blocked reading its stdin) tested as often as one
// can.
#define W10_WAIT_MS 20
#define W10_SETTLE_MS 100

// Whether pid sleeps in a read of its fd 0 (/proc/PID/syscall: "NR ARG0 ...").
static bool reads_stdin(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t r = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (r <= 0)
        return false;
    buf[r] = 0;
    char *end;
    long nr = strtol(buf, &end, 10);
    return end != buf && nr == SYS_read && strtol(end, NULL, 16) == 0;
}

static void w10(size_t n)
{
    static const char *const argv_silent[] = { "/bin/sleep", "600", NULL };
    static const char *const argv_prompt[] = { "/bin/sh", "-c", "printf 'name? '; read x; exit 0", NULL };
    size_t prompts = n / 5 ? n / 5 : 1;
    struct loop lp;
    loop_init(&lp, 1 + prompts);
    double *late = xcalloc(n, sizeof(double)), *prompt = xcalloc(prompts, sizeof(double));

    spawn(&lp, 0, argv_silent, true);
    struct child *s = &lp.kids[0];
    for (size_t i = 0; i < n; i++) {
        struct pollfd p = { .fd = s->out, .events = POLLIN };
        uint64_t t0 = now_ns();
        if (poll(&p, 1, W10_WAIT_MS) != 0)
            die("W10: sleep's stdout woke a poll");
        late[i] = us_since(t0) - W10_WAIT_MS * 1000.0;
    }
    sys(kill(-s->pid, SIGKILL), "kill");
    next_exit(&lp);

    for (size_t i = 0; i < prompts; i++) {
        uint64_t t0 = now_ns();
        spawn(&lp, 1 + i, argv_prompt, true);
        struct child *c = &lp.kids[1 + i];
        size_t seen = 0, want = strlen("name? ");
        for (;;) {   // the prompt, then SETTLE_MS without output
            struct pollfd p = { .fd = c->out, .events = POLLIN };
            int r = poll(&p, 1, seen < want ? -1 : W10_SETTLE_MS);
            if (r == 0)
                break;
            if (r < 0 && errno != EINTR)
                die("poll: %s", strerror(errno));
            ssize_t k = r > 0 ? read(c->out, g_buf, sizeof g_buf) : 0;
            if (r > 0 && k <= 0)
                die("W10: the prompt's child closed its stdout");
            seen += r > 0 ? (size_t)k : 0;
        }
        while (!reads_stdin(c->pid))   // then whether it reads, every millisecond
            poll(NULL, 0, 1);
        prompt[i] = us_since(t0);
        close_fd(&c->in);   // EOF: read fails, sh exits
        expect_success(next_exit(&lp), "W10");
    }
    emit("W10", "late_p50_us", pct(late, n, 0.5), "late_p99_us", pct(late, n, 0.99), "prompt_p50_us",
         pct(prompt, prompts, 0.5), "prompt_p99_us", pct(prompt, prompts, 0.99), NULL);
    free(late);
    free(prompt);
    loop_done(&lp);
}

// ---------------------------------------------------------------- child helpers

static int stamp_mode(long ms)
{
    struct timespec d = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&d, &d) < 0 && errno == EINTR)
        ;
    char line[32];
    int len = snprintf(line, sizeof line, "%llu\n", (unsigned long long)now_ns());
    return write(1, line, (size_t)len) == len ? 0 : 1;
}

static int write_mode(size_t bytes)
{
    static char buf[64 * 1024];
    memset(buf, 'x', sizeof buf);
    while (bytes > 0) {   // every byte is 'x', so after a partial write just go on
        ssize_t w = write(1, buf, bytes < sizeof buf ? bytes : sizeof buf);
        if (w > 0)
            bytes -= (size_t)w;
        else if (w < 0 && errno != EINTR)
            return 1;
    }
    return 0;
}

// ---------------------------------------------------------------- main

static size_t parse_size(const char *s, const char *what)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-')
        die("bad %s: %s", what, s);
    return (size_t)v;
}

// --cpu: each thread's schedstat and the process's and its children's rusage, before
// and after a workload, written per operation in bench/cpu_use.hpp's format.
#define CPU_MAX_THREADS 64
struct cpu_thread { long tid; char comm[32]; double on_cpu, runqueue, slices, preempted; };
struct cpu_times {
    double wall_ns, user_us, sys_us, child_user_us, child_sys_us;
    size_t n;
    struct cpu_thread t[CPU_MAX_THREADS];
};

static size_t read_small(const char *path, char *buf, size_t size)
{
    buf[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t r = read(fd, buf, size - 1);
    close(fd);
    buf[r > 0 ? r : 0] = 0;
    return r > 0 ? (size_t)r : 0;
}

static double tv_us(struct timeval t) { return (double)t.tv_sec * 1e6 + (double)t.tv_usec; }

static void read_cpu_times(struct cpu_times *c)
{
    memset(c, 0, sizeof *c);
    c->wall_ns = (double)now_ns();
    DIR *dir = opendir("/proc/self/task");
    struct dirent *e;
    while (dir && (e = readdir(dir)) && c->n < CPU_MAX_THREADS) {
        if (e->d_name[0] == '.')
            continue;
        struct cpu_thread *t = &c->t[c->n];
        char path[320], buf[4096];
        t->tid = strtol(e->d_name, NULL, 10);
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        read_small(path, t->comm, sizeof t->comm);
        for (char *p = t->comm; *p; p++)
            if (*p == '\n' || *p == ' ')
                *p = *p == ' ' ? '_' : 0;
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        read_small(path, buf, sizeof buf);
        if (sscanf(buf, "%lf %lf %lf", &t->on_cpu, &t->runqueue, &t->slices) != 3)
            continue;   // it ended while being read: left out, as one that ended before
        snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
        read_small(path, buf, sizeof buf);
        char *nv = strstr(buf, "nonvoluntary_ctxt_switches:");
        t->preempted = nv ? strtod(nv + strlen("nonvoluntary_ctxt_switches:"), NULL) : 0;
        c->n++;
    }
    if (dir)
        closedir(dir);
    struct rusage self, kids;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &kids);
    c->user_us = tv_us(self.ru_utime);
    c->sys_us = tv_us(self.ru_stime);
    c->child_user_us = tv_us(kids.ru_utime);
    c->child_sys_us = tv_us(kids.ru_stime);
}

static void write_cpu_use(const struct cpu_times *b, const struct cpu_times *a, const char *workload, size_t ops)
{
    FILE *f = fopen(g_cpu, "w");
    if (!f)
        die("--cpu %s: %s", g_cpu, strerror(errno));
    double n = ops ? (double)ops : 1, on_cpu = 0, runqueue = 0;
    fprintf(f, "# where the time went: %s, %zu ops, us per op (wall %.1f)\n", workload, ops,
            (a->wall_ns - b->wall_ns) / 1e3 / n);
    for (size_t i = 0; i < a->n; i++) {
        static const struct cpu_thread none;   // a thread that started since: from zero
        const struct cpu_thread *bt = &none;
        for (size_t j = 0; j < b->n; j++)
            if (b->t[j].tid == a->t[i].tid)
                bt = &b->t[j];
        double cpu = (a->t[i].on_cpu - bt->on_cpu) / 1e3 / n, wait = (a->t[i].runqueue - bt->runqueue) / 1e3 / n;
        on_cpu += cpu;
        runqueue += wait;
        fprintf(f, "thread %s %ld on_cpu %.1f runqueue %.1f slices %.2f preempted %.2f\n", a->t[i].comm, a->t[i].tid,
                cpu, wait, (a->t[i].slices - bt->slices) / n, (a->t[i].preempted - bt->preempted) / n);
    }
    fprintf(f, "threads on_cpu %.1f runqueue %.1f\n", on_cpu, runqueue);
    fprintf(f, "process user %.1f sys %.1f\n", (a->user_us - b->user_us) / n, (a->sys_us - b->sys_us) / n);
    fprintf(f, "children user %.1f sys %.1f\n", (a->child_user_us - b->child_user_us) / n,
            (a->child_sys_us - b->child_sys_us) / n);
    if (fclose(f) != 0)
        die("--cpu %s: %s", g_cpu, strerror(errno));
}

static const struct {
    const char *name;
    void (*run)(size_t n);
    size_t default_n;
} workloads[] = {
    { "W1", w1, 2000 }, { "W2", w2, 1000 }, { "W3", w3, 200 }, { "W4", w4, 1 },
    { "W5", w5, 2000 }, { "W6", w6, 5000 }, { "W7", w7, 10000 }, { "W9", w9, 2000 },
    { "W10", w10, 100 },
};

int main(int argc, char **argv)
{
    if (argc < 2)
        die("usage: jp-floor W1..W7|W9|W10 [--n N] [--bytes B] [--samples FILE] [--cpu FILE] | stamp DELAY_MS | write BYTES");
    const char *mode = argv[1];
    if (strcmp(mode, "stamp") == 0 || strcmp(mode, "write") == 0) {
        if (argc != 3)
            die("usage: jp-floor %s NUMBER", mode);
        size_t v = parse_size(argv[2], mode);
        return mode[0] == 's' ? stamp_mode((long)v) : write_mode(v);
    }

    size_t n = SIZE_MAX;   // not given: the workload's default
    for (int i = 2; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--n") == 0) {
            n = parse_size(argv[++i], "--n");
        } else if (i + 1 < argc && strcmp(argv[i], "--bytes") == 0) {
            g_bytes = parse_size(argv[++i], "--bytes");
        } else if (i + 1 < argc && strcmp(argv[i], "--samples") == 0) {
            if (strcmp(mode, "W3") != 0)
                die("--samples is W3's only (its exits one by one), not %s's", mode);
            g_samples = argv[++i];
        } else if (i + 1 < argc && strcmp(argv[i], "--cpu") == 0) {
            if (strcmp(mode, "W9") == 0)
                die("--cpu is W1-W7's only (W9's other side is another process)");
            g_cpu = argv[++i];
        } else {
            die("unknown argument: %s", argv[i]);
        }
    }

    g_self[sys(readlink("/proc/self/exe", g_self, sizeof g_self - 1), "readlink")] = 0;
    g_devnull = (int)sys(open("/dev/null", O_RDONLY | O_CLOEXEC), "/dev/null");

    for (size_t i = 0; i < sizeof workloads / sizeof workloads[0]; i++) {
        if (strcmp(mode, workloads[i].name) == 0) {
            size_t count = n != SIZE_MAX ? n : workloads[i].default_n;
            static struct cpu_times before, after; // big: not on the stack
            if (g_cpu)
                read_cpu_times(&before);
            workloads[i].run(count);
            if (g_cpu) {
                read_cpu_times(&after);
                // W1 spawns twice a run (its own group, then its own session): per spawn;
                // W4 is one writer whatever --n says, as jp-bench's
                size_t ops = strcmp(mode, "W1") == 0 ? 2 * count : strcmp(mode, "W4") == 0 ? 1 : count;
                write_cpu_use(&before, &after, mode, ops);
            }
            return 0;
        }
    }
    die("unknown mode: %s", mode);
}
