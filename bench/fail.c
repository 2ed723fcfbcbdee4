/* fail.c: MPIFT's failure-path benchmark. The same source builds with MPIFT
 * (-Iinclude/compat; a rank dies by Sim_FT_kill_me()) and against a real ULFM MPI
 * (Open MPI 5 --with-ft ulfm: the rank really dies by raise(SIGKILL)).
 *
 * Phases, in one job of n >= 2 ranks (victim: the last rank):
 *
 *  revoke  Plan B (source 002, section 4): per repetition, two fresh duplicates A
 *          and B of MPI_COMM_WORLD; --pre barriers on A; then one rank (the
 *          initiator, rotating over the ranks) calls MPIX_Comm_revoke(A) instead
 *          of the barrier, while the others' barrier must return MPI_ERR_REVOKED;
 *          then --post barriers on B. A collective's latency is the longest of the
 *          ranks' latencies. Rows: revoke_normal (median of the barriers on A
 *          before the revoke), revoke_revoked, revoke_call (the initiator's
 *          revoke), revoke_post1 .. revoke_postK, and revoke_early_count (how
 *          many ranks' last barrier before the revoke returned MPI_ERR_REVOKED
 *          because the revoke arrived while it was pending). As Plan B does
 *          (--strict, the default), the initiator leaves A alone after revoking
 *          it and goes on to the barriers on B; --touch makes it also call
 *          MPI_Barrier(A) once (MPI_ERR_REVOKED at once on real ULFM).
 *  base    agree and shrink on a communicator of the survivors-to-be, nobody
 *          dead (reference latencies): agree_nofail, shrink_nofail.
 *  kill    every rank gets a kill time T (now + 50 ms, one clock: the ranks share
 *          a host); the victim dies at T; each survivor is already blocked in an
 *          operation that needs the victim (--observe recv: MPI_Recv from it;
 *          barrier: MPI_Barrier on MPI_COMM_WORLD, repeated until it fails) and
 *          notes when that operation returned the failure. Rows:
 *          kill_observed_<recv|barrier> (the last survivor: every survivor has
 *          observed the failure) and kill_observed_first_<recv|barrier>.
 *  agree   MPIX_Comm_agree on MPI_COMM_WORLD (one dead member): agree_first
 *          (before failure_ack: must return MPI_ERR_PROC_FAILED), then --reps
 *          times after failure_ack: agree.
 *  shrink  MPIX_Comm_shrink of MPI_COMM_WORLD, --reps times: shrink (the first
 *          also as shrink_first).
 *  idle    with --idle S: the survivors sleep S seconds outside MPI before
 *          MPI_Finalize. The victim (MPIFT only: it is a running process) writes
 *          to --zombie FILE the CPU time it used from its death to its exit and
 *          the wall time in between.
 *
 * Control traffic (MPIFT only, from Sim_FT_stats, outside the timing): rows
 * ctl_<what>_<phase>, the sum over the ranks taking part of what MPIFT started
 * for itself (rma: one-sided operations; wake: wake-up messages; dummy: dummy
 * collective joins), per revoke (the whole Plan B repetition), per agree after
 * failure_ack, per shrink with the dead member (the dead rank's own reads, for a
 * shrink it never started, are none).
 *
 * Survivors synchronise before each timed call with a barrier on their own
 * communicator (made before the death), so every latency starts together.
 * Rank 0 appends rows "variant,np,run,metric,rep,value_s" to --csv FILE (stdout
 * by default; the header line goes into an empty file, or to stdout with --header). Exit status 0 only if every check (error classes) passed.
 * Options: --variant NAME --run R --reps K --pre N --post K --observe recv|barrier
 *          --touch|--strict --idle S --zombie FILE --csv FILE --header --skip-revoke */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <mpi.h>
#if defined(OPEN_MPI) && !defined(MPIFT_VERSION)
#include <mpi-ext.h> /* Open MPI 5: the ULFM MPIX_ names */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#ifdef MPIFT_VERSION
#define KILL_ME() Sim_FT_kill_me()
#define DEFAULT_VARIANT "mpift"
#else
#include <signal.h>
#define KILL_ME() raise(SIGKILL)
#define DEFAULT_VARIANT "ulfm"
#endif

static int rank, size, victim, reps = 10, pre = 20, post = 5, run = 0, touch = 0, bad = 0, early_revoked = 0;
static const char *variant = DEFAULT_VARIANT, *zombie_file = NULL;
static FILE *out;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + 1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static int eclass(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
    return c;
}

static void expect(const char *what, int rc, int want)
{
    if (eclass(rc) != want) {
        fprintf(stderr, "fail: rank %d: %s returned class %d, want %d\n", rank, what, eclass(rc), want);
        bad = 1;
    }
}

static void row(const char *metric, int rep, double v)
{
    fprintf(out, "%s,%d,%d,%s,%d,%.9f\n", variant, size, run, metric, rep, v);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Control-traffic counters (Sim_FT_stats) of this process: rma, wake, dummy. */
static void ctl_mark(double v[3])
{
#ifdef MPIFT_VERSION
    Sim_FT_stats_t st;
    Sim_FT_stats(&st);
    v[0] = (double)st.rma_ops, v[1] = (double)st.wake_msgs, v[2] = (double)st.dummy_joins;
#else
    v[0] = v[1] = v[2] = 0;
#endif
}

/* Rows ctl_<rma|wake|dummy>_<phase>: the sum over comm of the counters' growth
 * since `before`, divided by `ops` (collective over comm). */
static void ctl_rows(MPI_Comm comm, const char *phase, const double before[3], int ops)
{
#ifdef MPIFT_VERSION
    static const char *what[3] = {"rma", "wake", "dummy"};
    double now_[3], d[3], sum[3];
    int r;
    ctl_mark(now_);
    for (int i = 0; i < 3; i++) d[i] = now_[i] - before[i];
    MPI_Reduce(d, sum, 3, MPI_DOUBLE, MPI_SUM, 0, comm);
    MPI_Comm_rank(comm, &r);
    for (int i = 0; i < 3 && r == 0; i++) {
        char name[64];
        snprintf(name, sizeof name, "ctl_%s_%s", what[i], phase);
        row(name, 0, sum[i] / ops);
    }
#else
    (void)comm, (void)phase, (void)before, (void)ops;
#endif
}

/* Plan B, one repetition: returns nothing, rank 0 writes the rows. */
static void revoke_rep(int rep, MPI_Comm *keep_a, MPI_Comm *keep_b)
{
    MPI_Comm a, b;
    int initiator = rep % size, n = pre + 2 + post;
    double *lat = calloc(n, sizeof(double)), *worst = calloc(n, sizeof(double));
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(b, MPI_ERRORS_RETURN);
    MPI_Barrier(b); /* A and B exist everywhere before anybody revokes A */
    for (int i = 0; i < pre; i++) {
        double t0 = now();
        int rc = MPI_Barrier(a);
        lat[i] = now() - t0;
        /* The last one may end after the initiator has revoked A (it left first):
         * then MPIFT reports the revoke that arrived while the call was pending
         * (allowed: ULFM leaves pending operations racing with a revoke open). */
        if (i == pre - 1 && eclass(rc) == MPIX_ERR_REVOKED) early_revoked++;
        else expect("barrier on A", rc, MPI_SUCCESS);
    }
    double t0 = now();
    if (rank == initiator) {
        expect("revoke", MPIX_Comm_revoke(a), MPI_SUCCESS);
        lat[pre + 1] = now() - t0; /* the revoke call itself */
        if (touch) expect("initiator's barrier on revoked A", MPI_Barrier(a), MPIX_ERR_REVOKED);
    } else {
        expect("barrier on A being revoked", MPI_Barrier(a), MPIX_ERR_REVOKED);
    }
    lat[pre] = now() - t0;
    for (int j = 0; j < post; j++) {
        double t1 = now();
        int rc = MPI_Barrier(b);
        lat[pre + 2 + j] = now() - t1;
        expect("barrier on B", rc, MPI_SUCCESS);
    }
    MPI_Reduce(lat, worst, n, MPI_DOUBLE, MPI_MAX, 0, b);
    if (rank == 0) {
        int skip = pre > 4 ? 2 : 0, m = pre - skip;
        qsort(worst + skip, m, sizeof(double), cmp_double);
        row("revoke_normal", rep, m % 2 ? worst[skip + m / 2] : 0.5 * (worst[skip + m / 2 - 1] + worst[skip + m / 2]));
        row("revoke_revoked", rep, worst[pre]);
        row("revoke_call", rep, worst[pre + 1]);
        for (int j = 0; j < post; j++) {
            char name[32];
            snprintf(name, sizeof name, "revoke_post%d", j + 1);
            row(name, rep, worst[pre + 2 + j]);
        }
        fflush(out);
    }
    /* Kept until MPI_Finalize: freeing a revoked communicator lets Open MPI 5 reuse
     * its id while revoke traffic is in flight (examples/oracle/README.md). */
    *keep_a = a;
    *keep_b = b;
    free(lat);
    free(worst);
}

/* Longest (and shortest) of the survivors' values, written by rank 0 of surv. */
static void surv_row(MPI_Comm surv, const char *metric, const char *min_metric, int rep, double v)
{
    double hi = 0, lo = 0;
    int r;
    MPI_Reduce(&v, &hi, 1, MPI_DOUBLE, MPI_MAX, 0, surv);
    MPI_Reduce(&v, &lo, 1, MPI_DOUBLE, MPI_MIN, 0, surv);
    MPI_Comm_rank(surv, &r);
    if (r == 0) {
        row(metric, rep, hi);
        if (min_metric) row(min_metric, rep, lo);
        fflush(out);
    }
}

/* Row <metric>_lastin: from the last survivor's start to the last one's end
 * (the ranks share a host, so CLOCK_MONOTONIC is one clock). Unlike <metric>,
 * the time a rank that left the aligning barrier early waits for the others is
 * not counted, so a barrier whose ranks leave it further apart (MPIFT's own
 * barrier after a revoke) does not show as a slower agree or shrink. */
static void lastin_row(MPI_Comm surv, const char *metric, int rep, double t0, double t1)
{
    double t[2] = {t0, t1}, hi[2] = {0, 0};
    char name[64];
    int r;
    MPI_Reduce(t, hi, 2, MPI_DOUBLE, MPI_MAX, 0, surv);
    MPI_Comm_rank(surv, &r);
    if (r == 0) {
        snprintf(name, sizeof name, "%s_lastin", metric);
        row(name, rep, hi[1] - hi[0]);
    }
}

static double zombie_t0, zombie_cpu0;
static void zombie_report(void)
{
    FILE *z = fopen(zombie_file, "a");
    if (!z) return;
    double cpu = cpu_seconds() - zombie_cpu0, wall = now() - zombie_t0;
    if (fseek(z, 0, SEEK_END) == 0 && ftell(z) == 0) fprintf(z, "variant,np,run,cpu_s,wall_s,cpu_fraction\n");
    fprintf(z, "%s,%d,%d,%.3f,%.3f,%.4f\n", variant, size, run, cpu, wall, wall > 0 ? cpu / wall : 0);
    fclose(z);
}

int main(int argc, char **argv)
{
    const char *csv = NULL, *observe = "recv";
    int header = 0, skip_revoke = 0;
    double idle = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--variant")) variant = v, i++;
        else if (!strcmp(a, "--run")) run = atoi(v), i++;
        else if (!strcmp(a, "--reps")) reps = atoi(v), i++;
        else if (!strcmp(a, "--pre")) pre = atoi(v), i++;
        else if (!strcmp(a, "--post")) post = atoi(v), i++;
        else if (!strcmp(a, "--observe")) observe = v, i++;
        else if (!strcmp(a, "--idle")) idle = atof(v), i++;
        else if (!strcmp(a, "--zombie")) zombie_file = v, i++;
        else if (!strcmp(a, "--csv")) csv = v, i++;
        else if (!strcmp(a, "--touch")) touch = 1;
        else if (!strcmp(a, "--strict")) touch = 0;
        else if (!strcmp(a, "--header")) header = 1;
        else if (!strcmp(a, "--skip-revoke")) skip_revoke = 1;
        else {
            if (rank == 0) fprintf(stderr, "fail: unknown option %s\n", a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (size < 2 || reps < 1 || pre < 1 || (strcmp(observe, "recv") && strcmp(observe, "barrier"))) {
        if (rank == 0) fprintf(stderr, "fail: needs 2 ranks or more, --reps >= 1, --pre >= 1, --observe recv|barrier\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    out = stdout;
    if (rank == 0 && csv && !(out = fopen(csv, "a"))) {
        perror(csv);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0 && (header || (out != stdout && fseek(out, 0, SEEK_END) == 0 && ftell(out) == 0)))
        fprintf(out, "variant,np,run,metric,rep,value_s\n");
    victim = size - 1;

    /* revoke (nobody dead yet) */
    MPI_Comm *kept = calloc(2 * reps, sizeof(MPI_Comm));
    double ctl0[3];
    ctl_mark(ctl0);
    for (int r = 0; r < reps && !skip_revoke; r++) revoke_rep(r, &kept[2 * r], &kept[2 * r + 1]);
    if (!skip_revoke) {
        ctl_rows(MPI_COMM_WORLD, "revoke", ctl0, reps);
        int early = 0;
        MPI_Reduce(&early_revoked, &early, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) row("revoke_early_count", 0, early); /* a count, not seconds */
    }

    /* The survivors' own communicator, made while everybody is alive. */
    MPI_Comm surv = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, rank == victim ? MPI_UNDEFINED : 0, rank, &surv);
    if (surv != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(surv, MPI_ERRORS_RETURN);
        /* base: agree and shrink with nobody dead */
        for (int k = 0; k < reps; k++) {
            int flag = 1;
            MPI_Barrier(surv);
            double t0 = now();
            expect("agree (no failure)", MPIX_Comm_agree(surv, &flag), MPI_SUCCESS);
            double t1 = now();
            surv_row(surv, "agree_nofail", NULL, k, t1 - t0);
            lastin_row(surv, "agree_nofail", k, t0, t1);
        }
        for (int k = 0; k < reps; k++) {
            MPI_Comm s;
            MPI_Barrier(surv);
            double t0 = now();
            expect("shrink (no failure)", MPIX_Comm_shrink(surv, &s), MPI_SUCCESS);
            double t1 = now(), d = t1 - t0;
            MPI_Comm_free(&s);
            surv_row(surv, "shrink_nofail", NULL, k, d);
            lastin_row(surv, "shrink_nofail", k, t0, t1);
        }
    }

    /* kill */
    double T = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) T = now() + 0.05;
    MPI_Bcast(&T, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == victim) {
        while (now() < T) {
        }
        if (zombie_file) {
            zombie_t0 = now();
            zombie_cpu0 = cpu_seconds();
            atexit(zombie_report);
        }
        KILL_ME();
        for (;;) {
        } /* not reached */
    }
    int rc, x = 0;
    if (!strcmp(observe, "barrier")) {
        do rc = MPI_Barrier(MPI_COMM_WORLD);
        while (rc == MPI_SUCCESS);
    } else {
        rc = MPI_Recv(&x, 1, MPI_INT, victim, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    double seen = now() - T;
    expect("the observing operation", rc, MPIX_ERR_PROC_FAILED);
    char obs_last[48], obs_first[48];
    snprintf(obs_last, sizeof obs_last, "kill_observed_%s", observe);
    snprintf(obs_first, sizeof obs_first, "kill_observed_first_%s", observe);
    surv_row(surv, obs_last, obs_first, 0, seen);

    /* agree with one dead member */
    int flag = 1;
    MPI_Barrier(surv);
    double t0 = now();
    expect("first agree after the failure", MPIX_Comm_agree(MPI_COMM_WORLD, &flag), MPIX_ERR_PROC_FAILED);
    surv_row(surv, "agree_first", NULL, 0, now() - t0);
    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    ctl_mark(ctl0);
    for (int k = 0; k < reps; k++) {
        flag = 1;
        MPI_Barrier(surv);
        t0 = now();
        expect("agree after failure_ack", MPIX_Comm_agree(MPI_COMM_WORLD, &flag), MPI_SUCCESS);
        double t1 = now();
        surv_row(surv, "agree", NULL, k, t1 - t0);
        lastin_row(surv, "agree", k, t0, t1);
    }
    ctl_rows(surv, "agree", ctl0, reps);

    /* shrink */
    ctl_mark(ctl0);
    for (int k = 0; k < reps; k++) {
        MPI_Comm s;
        int n = 0;
        MPI_Barrier(surv);
        t0 = now();
        expect("shrink", MPIX_Comm_shrink(MPI_COMM_WORLD, &s), MPI_SUCCESS);
        double t1 = now(), d = t1 - t0;
        MPI_Comm_size(s, &n);
        if (n != size - 1) {
            fprintf(stderr, "fail: rank %d: shrink has %d ranks, want %d\n", rank, n, size - 1);
            bad = 1;
        }
        MPI_Comm_free(&s);
        if (k == 0) surv_row(surv, "shrink_first", NULL, 0, d);
        surv_row(surv, "shrink", NULL, k, d);
        lastin_row(surv, "shrink", k, t0, t1);
    }
    ctl_rows(surv, "shrink", ctl0, reps);

    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, surv);
    if (rank == 0 && anybad) fprintf(stderr, "fail: some check failed (see above)\n");
    if (idle > 0) {
        struct timespec ts = {(time_t)idle, (long)((idle - (time_t)idle) * 1e9)};
        nanosleep(&ts, NULL);
    }
    if (rank == 0 && out != stdout) fclose(out);
    MPI_Comm_free(&surv);
    free(kept);
    MPI_Finalize();
    return anybad;
}
