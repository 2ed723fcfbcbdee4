/* ulfm_common.h: shared helpers for the ULFM behaviour programs in examples/ulfm/.
 *
 * Each program checks one ULFM call or failure case and prints exactly one final
 * line per rank: "rank R: OK <details>", "rank R: FAIL <why>", or, for a rank
 * that is about to die, "rank R: DIES <where>" (nothing after the kill). It
 * exits 0 iff its own checks pass. Built against a real ULFM MPI (Open MPI 5
 * --with-ft ulfm: a victim really dies with SIGKILL) or against MPIFT (-I
 * include/compat: a victim becomes a simulated-dead zombie). Include this
 * header first: it sets the feature macro nanosleep needs under -std=c99. */
#ifndef ULFM_COMMON_H
#define ULFM_COMMON_H

#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <mpi.h>
#if defined(OPEN_MPI) && !defined(MPIFT_VERSION)
#include <mpi-ext.h> /* Open MPI 5: MPIX_ ULFM names live in the ftmpi extension */
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef MPIFT_VERSION /* MPIFT: simulated death */
#define KILL_ME() Sim_FT_kill_me()
#else /* real ULFM: really die */
#include <signal.h>
#define KILL_ME() raise(SIGKILL)
#endif

static int u_rank = -1, u_size = 0, u_failed = 0;
static char u_why[1024], u_info[1024];

/* Append to the reason (failed check) or to the details (informational). */
static inline void u_append(char *buf, const char *fmt, va_list ap)
{
    size_t n = strlen(buf);
    if (n + 2 >= 1024) return;
    if (n > 0) buf[n++] = ' ', buf[n] = '\0';
    vsnprintf(buf + n, 1024 - n, fmt, ap);
}
static inline void u_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    u_append(u_info, fmt, ap);
    va_end(ap);
}
static inline void u_fail(const char *fmt, ...)
{
    va_list ap;
    u_failed = 1;
    va_start(ap, fmt);
    u_append(u_why, fmt, ap);
    va_end(ap);
}
#define CHECK(cond, ...) do { if (!(cond)) u_fail(__VA_ARGS__); } while (0)

/* Error class of a return code; MPI_SUCCESS stays MPI_SUCCESS. */
static inline int u_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    return cls;
}
static inline const char *u_name(int rc)
{
    static char other[32];
    int cls = u_class(rc);
    if (cls == MPI_SUCCESS) return "SUCCESS";
    if (cls == MPIX_ERR_PROC_FAILED) return "PROC_FAILED";
    if (cls == MPIX_ERR_PROC_FAILED_PENDING) return "PROC_FAILED_PENDING";
    if (cls == MPIX_ERR_REVOKED) return "REVOKED";
    if (cls == MPI_ERR_IN_STATUS) return "ERR_IN_STATUS";
    if (cls == MPI_ERR_PENDING) return "ERR_PENDING";
    snprintf(other, sizeof other, "class%d", cls);
    return other;
}
/* CHECK_RC(what, rc, CLASS): the call must have returned this class. */
#define CHECK_RC(what, rc, want) \
    CHECK(u_class(rc) == (want), "%s=%s(want %s)", what, u_name(rc), u_name(want))

/* A call that either fails with PROC_FAILED or, where it may succeed
 * (may_succeed), succeeds with the right result (good); notes its outcome. */
static inline void u_judge(const char *what, int rc, int may_succeed, int good)
{
    u_note("%s=%s", what, u_name(rc));
    if (rc == MPI_SUCCESS)
        CHECK(may_succeed && good, "%s succeeded%s", what, may_succeed ? " with wrong result" : " where it must fail");
    else
        CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED, "%s=%s", what, u_name(rc));
}

static inline void u_init(int *argc, char ***argv, int errors_return)
{
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &u_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &u_size);
    if (errors_return) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

/* One final line "rank R: WHAT text", written with a single write(2)-sized
 * flush so that mpiexec never interleaves it with another rank's line. */
static inline void u_line(const char *what, const char *text)
{
    char line[2200];
    snprintf(line, sizeof line, "rank %d: %s %s\n", u_rank, what, text);
    fputs(line, stdout);
    fflush(stdout);
}

/* The victim's last words, then death. Never returns. */
static inline void u_die(const char *where)
{
    u_line("DIES", where);
    KILL_ME();
    for (;;) ; /* not reached */
}

static inline void u_sleep_ms(int ms)
{
    struct timespec ts;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

/* Monotonic time in seconds. */
static inline double u_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Computes (no MPI) for `seconds`, in a loop the compiler cannot drop (its
 * result goes through a volatile). */
static inline double u_compute(double seconds)
{
    static volatile double sink;
    double t0 = u_now_s(), x = 1.0;
    while (u_now_s() - t0 < seconds) x = x * 1.0000001 + 1e-9;
    sink = x;
    return sink;
}

/* Size of the locally known failed group, polled (with progress) until it
 * reaches `want` or ~10 s pass: Open MPI's get_failed lags behind agree. */
static inline int u_poll_failed(MPI_Comm comm, int want, MPI_Group *out)
{
    int n = 0, i, flag;
    for (i = 0; i < 10000; i++) {
        MPIX_Comm_get_failed(comm, out);
        MPI_Group_size(*out, &n);
        if (n >= want || i == 9999) break;
        MPI_Group_free(out);
        MPI_Iprobe(MPI_ANY_SOURCE, 999, comm, &flag, MPI_STATUS_IGNORE);
        u_sleep_ms(1);
    }
    return n;
}

/* Survivors: wait until `nfailed` failures in comm are known here. agree
 * reports an unacknowledged failure uniformly (PROC_FAILED at every survivor),
 * but on Open MPI a rank may leave agree before its own failure detector (which
 * point-to-point consults) has the failure: so poll get_failed as well.
 * Returns agree's code. */
static inline int u_wait_failure(MPI_Comm comm, int nfailed)
{
    int flag = 1, rc = MPIX_Comm_agree(comm, &flag);
    MPI_Group g;
    if (nfailed > 0) {
        int n = u_poll_failed(comm, nfailed, &g);
        MPI_Group_free(&g);
        if (n < nfailed) u_fail("get_failed has %d failures after 10 s (want %d)", n, nfailed);
    }
    return rc;
}

/* Recovery of a step loop (examples/mistakes): the shrink of *comm replaces it
 * (errors returned), and *done becomes the least number of steps any survivor
 * had finished (MPI_Allreduce MIN), where all go on from. MPI_SUCCESS, or the
 * failing call's code, reported with u_fail. */
static inline int u_shrink_resume(MPI_Comm *comm, int *done)
{
    MPI_Comm nc;
    int rc = MPIX_Comm_shrink(*comm, &nc);
    if (rc != MPI_SUCCESS) { u_fail("shrink=%s", u_name(rc)); return rc; }
    MPI_Comm_free(comm);
    *comm = nc;
    MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
    rc = MPI_Allreduce(MPI_IN_PLACE, done, 1, MPI_INT, MPI_MIN, *comm);
    if (rc != MPI_SUCCESS) u_fail("allreduce after shrink=%s", u_name(rc));
    return rc;
}

/* Print the one final line, finalize, return the exit code. */
static inline int u_finish(void)
{
    char buf[2100];
    if (u_failed) {
        snprintf(buf, sizeof buf, "%s | %s", u_why, u_info);
        u_line("FAIL", buf);
    } else {
        u_line("OK", u_info);
    }
    MPI_Finalize();
    return u_failed ? 1 : 0;
}

#endif /* ULFM_COMMON_H */
