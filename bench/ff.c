/* ff.c: MPIFT's failure-free benchmark, the performance tests 1-5 of the thesis
 * (section 6.2.1), timed per message size.
 *
 *   1  MPI_Allreduce (MPI_SUM)
 *   2  n/2 pairs: even rank r MPI_Send to r+1, which MPI_Recv's
 *   3  the same with MPI_Isend / MPI_Irecv + MPI_Wait
 *   4  MPI_Bcast from rank 0
 *   5  tests 1 and 2 alternately (one Allreduce, then one Send/Recv, per iteration)
 *   6  MPI_Barrier (not one of the thesis's; the size is ignored: use --exps 0)
 *
 * Each test runs `iters` (128) iterations per size, sizes 4^0 .. 4^max_exp ints
 * (default 1 .. 2^20), on MPI_COMM_WORLD, after an untimed warm-up of the same
 * size. The time of a block of 128 iterations is the longest of the ranks' times
 * (a barrier before each block aligns the starts). Sizes up to 4096 ints
 * are timed in --blocks blocks (default 5, one CSV row each: 128 small
 * operations take only tens of microseconds, a scheduler tick would dominate a
 * single sample), larger sizes in one.
 *
 * The same source builds without MPIFT (plain MPI) and with it (-Iinclude/compat:
 * the source is unchanged). With MPIFT it also reads the layer's accounting
 * (Sim_FT_stats) around every timed loop, outside the timing: control messages
 * (one-sided operations on other processes' windows and wake messages) summed
 * over the ranks, per application MPI call in the loop; and, at the end, the
 * layer's own communicators against the program's, before and after the program
 * duplicates MPI_COMM_WORLD 4 times.
 *
 * Rank 0 appends CSV rows to --csv FILE (default stdout):
 *   variant,np,rep,block,test,size_ints,iters,time_s,ctrl_msgs,app_calls,dummy_joins
 * and, with --acct FILE, one row
 *   variant,np,rep,layer_comms,user_comms,layer_comms_4dups,user_comms_4dups,layer_windows,init_collectives
 * Options: --tests 1,2,3,4,5 --max-exp K (or --exps 0,2,4: the sizes' exponents of 4)
 *          --iters N --blocks B --variant NAME --rep R
 *          --mimic (plain build: MPIFT's extra MPI state without its code, see below)
 *          --csv FILE --acct FILE (appended to; the header line goes into an empty
 *          file) --header (header line also on stdout). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MPIFT_VERSION
#define HAVE_STATS 1
#else
#define HAVE_STATS 0
#endif

static int rank, size, iters = 128, max_exp = 10, rep = 0, blocks = 5;

/* --mimic (plain build only): what MPIFT adds to the real MPI's state, without its
 * code, to tell the two costs apart: an RMA window over MPI_COMM_WORLD in a
 * lock_all epoch, a duplicate of MPI_COMM_WORLD with a receive always posted on it,
 * and blocking Send/Recv done as Isend/Irecv + MPI_Waitany over {request, that
 * receive} (MPIFT's engine/news/news.rs, engine/complete/complete.rs). */
static int mimic = 0;
static MPI_Request wake = MPI_REQUEST_NULL;

static void mimic_wait(MPI_Request *r)
{
    MPI_Request pair[2] = {*r, wake};
    int idx;
    MPI_Waitany(2, pair, &idx, MPI_STATUS_IGNORE);
    *r = pair[0];
}
static const char *variant = "plain";

/* Control traffic so far in this process (0 without MPIFT). */
static void traffic(unsigned long long out[2])
{
#if HAVE_STATS
    Sim_FT_stats_t s;
    Sim_FT_stats(&s);
    out[0] = s.rma_ops + s.wake_msgs;
    out[1] = s.dummy_joins;
#else
    out[0] = out[1] = 0;
#endif
}

static void p2p(int *buf, int count, int nonblocking)
{
    int peer = (rank % 2 == 0) ? rank + 1 : rank - 1;
    MPI_Request r;
    if (peer >= size) return; /* odd size: the last rank has no partner */
    if (rank % 2 == 0) {
        if (nonblocking) {
            MPI_Isend(buf, count, MPI_INT, peer, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            if (mimic) {
                MPI_Isend(buf, count, MPI_INT, peer, 0, MPI_COMM_WORLD, &r);
                mimic_wait(&r);
            } else {
                MPI_Send(buf, count, MPI_INT, peer, 0, MPI_COMM_WORLD);
            }
        }
    } else {
        if (nonblocking) {
            MPI_Irecv(buf, count, MPI_INT, peer, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            if (mimic) {
                MPI_Irecv(buf, count, MPI_INT, peer, 0, MPI_COMM_WORLD, &r);
                mimic_wait(&r);
            } else {
                MPI_Recv(buf, count, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
    }
}

/* One iteration of test t; returns the MPI calls this rank made. */
static int step(int t, int *in, int *out, int count)
{
    int paired = !((size % 2 == 1) && rank == size - 1);
    switch (t) {
    case 1:
        MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        return 1;
    case 2:
        p2p(in, count, 0);
        return paired;
    case 3:
        p2p(in, count, 1);
        return 2 * paired;
    case 4:
        MPI_Bcast(in, count, MPI_INT, 0, MPI_COMM_WORLD);
        return 1;
    case 6:
        MPI_Barrier(MPI_COMM_WORLD);
        return 1;
    default:
        MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        p2p(in, count, 0);
        return 1 + paired;
    }
}

int main(int argc, char **argv)
{
    char tests[64] = "1,2,3,4,5", exps[64] = "";
    const char *csv = NULL, *acct = NULL;
    int header = 0;
    FILE *f = stdout;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--tests")) snprintf(tests, sizeof tests, "%s", v), i++;
        else if (!strcmp(a, "--max-exp")) max_exp = atoi(v), i++;
        else if (!strcmp(a, "--exps")) snprintf(exps, sizeof exps, "%s", v), i++;
        else if (!strcmp(a, "--iters")) iters = atoi(v), i++;
        else if (!strcmp(a, "--blocks")) blocks = atoi(v), i++;
        else if (!strcmp(a, "--variant")) variant = v, i++;
        else if (!strcmp(a, "--rep")) rep = atoi(v), i++;
        else if (!strcmp(a, "--csv")) csv = v, i++;
        else if (!strcmp(a, "--acct")) acct = v, i++;
        else if (!strcmp(a, "--header")) header = 1;
        else if (!strcmp(a, "--mimic") && !HAVE_STATS) mimic = 1;
        else {
            if (rank == 0) fprintf(stderr, "ff: unknown option %s\n", a);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (rank == 0 && csv && !(f = fopen(csv, "a"))) {
        perror(csv);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0 && (header || (f != stdout && fseek(f, 0, SEEK_END) == 0 && ftell(f) == 0)))
        fprintf(f, "variant,np,rep,block,test,size_ints,iters,time_s,ctrl_msgs,app_calls,dummy_joins\n");

    /* The sizes: 4^e ints for e in --exps, else e = 0 .. max_exp. */
    int es[16], ne = 0;
    if (exps[0]) {
        for (char *q = strtok(exps, ","); q && ne < 16; q = strtok(NULL, ",")) es[ne++] = atoi(q);
    } else {
        for (int e = 0; e <= max_exp && ne < 16; e++) es[ne++] = e;
    }
    max_exp = 0;
    for (int k = 0; k < ne; k++) {
        if (es[k] < 0 || es[k] > 12) {
            if (rank == 0) fprintf(stderr, "ff: size exponent %d out of 0..12\n", es[k]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (es[k] > max_exp) max_exp = es[k];
    }
    int maxcount = 1 << (2 * max_exp);
    MPI_Win win = MPI_WIN_NULL;
    MPI_Comm side = MPI_COMM_NULL;
    unsigned long long wake_buf[4];
    if (mimic) {
        void *base;
        MPI_Win_allocate(65536, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
        MPI_Comm_dup(MPI_COMM_WORLD, &side);
        MPI_Recv_init(wake_buf, 4, MPI_UNSIGNED_LONG_LONG, MPI_ANY_SOURCE, 1, side, &wake);
        MPI_Start(&wake);
    }
    int *in = malloc(sizeof(int) * maxcount), *out = malloc(sizeof(int) * maxcount);
    for (int i = 0; i < maxcount; i++) in[i] = rank + i;

    for (const char *p = tests; *p; p++) {
        int t = *p - '0';
        if (t < 1 || t > 6) continue;
        for (int k = 0; k < ne; k++) {
            int count = 1 << (2 * es[k]), nblocks = count <= 4096 ? blocks : 1;
            /* Warm-up, untimed: a whole block for small sizes (the first block after a
             * size change was measurably slower), one iteration for large ones. */
            for (int it = 0; it < (nblocks > 1 ? iters : 1); it++) step(t, in, out, count);
            for (int b = 0; b < nblocks; b++) {
                unsigned long long before[2], after[2], d[3], sum[3];
                MPI_Barrier(MPI_COMM_WORLD);
                traffic(before);
                long calls = 0;
                double t0 = MPI_Wtime();
                for (int it = 0; it < iters; it++) calls += step(t, in, out, count);
                double mine = MPI_Wtime() - t0, worst = 0;
                traffic(after);
                d[0] = after[0] - before[0];
                d[1] = (unsigned long long)calls;
                d[2] = after[1] - before[1];
                MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
                MPI_Reduce(d, sum, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
                if (rank == 0) {
                    fprintf(f, "%s,%d,%d,%d,%d,%d,%d,%.9f,%llu,%llu,%llu\n", variant, size, rep, b, t, count, iters,
                            worst, sum[0], sum[1], sum[2]);
                    fflush(f);
                }
            }
        }
    }

    if (acct) {
        /* The layer's communicators against the program's, before and after the
         * program makes 4 more (layer_comms stays 1: the shadow). */
        unsigned long long a[4] = {0, 0, 0, 0}, w = 0, ic = 0;
        MPI_Comm dups[4];
#if HAVE_STATS
        Sim_FT_stats_t s;
        Sim_FT_stats(&s);
        a[0] = s.layer_comms_live, a[1] = s.user_comms;
#endif
        for (int i = 0; i < 4; i++) MPI_Comm_dup(MPI_COMM_WORLD, &dups[i]);
#if HAVE_STATS
        Sim_FT_stats(&s);
        a[2] = s.layer_comms_live, a[3] = s.user_comms, w = s.layer_windows, ic = s.init_collectives;
#endif
        for (int i = 0; i < 4; i++) MPI_Comm_free(&dups[i]);
        if (rank == 0) {
            FILE *g = fopen(acct, "a");
            if (!g) {
                perror(acct);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            if (fseek(g, 0, SEEK_END) == 0 && ftell(g) == 0)
                fprintf(g, "variant,np,rep,layer_comms,user_comms,layer_comms_4dups,user_comms_4dups,"
                           "layer_windows,init_collectives\n");
            fprintf(g, "%s,%d,%d,%llu,%llu,%llu,%llu,%llu,%llu\n", variant, size, rep, a[0], a[1], a[2], a[3], w, ic);
            fclose(g);
        }
    }
    if (mimic) {
        MPI_Cancel(&wake);
        MPI_Wait(&wake, MPI_STATUS_IGNORE);
        MPI_Request_free(&wake);
        MPI_Comm_free(&side);
        MPI_Win_unlock_all(win);
        MPI_Win_free(&win);
    }
    if (rank == 0 && f != stdout) fclose(f);
    free(in);
    free(out);
    MPI_Finalize();
    return 0;
}
