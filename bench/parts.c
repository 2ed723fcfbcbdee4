/* parts.c: what the host MPI charges for the pieces MPIFT's failure path is
 * built of, measured in plain MPI (no MPIFT), so bench/README.md can say what
 * bounds each failure-path latency that stays above real ULFM's.
 *
 * n ranks; the last one stands for the dead rank: it sleeps outside MPI (1 ms
 * naps, polling for the end with MPI_Iprobe), as an MPIFT zombie mostly does.
 * The others, the survivors, measure (each a median over --reps repetitions of
 * the slowest survivor's time, a barrier aligning the starts):
 *   barrier, allreduce   MPI_Barrier / MPI_Allreduce of one int among the survivors
 *   create_group         MPI_Comm_create_group of the world's survivors (what
 *                        MPIFT's shrink does once the agreement has decided)
 *   dup                  MPI_Comm_dup of the survivors' communicator
 *   rget, fetch_op       one MPI_Rget of 8 bytes + MPI_Wait, one MPI_Fetch_and_op
 *                        + MPI_Win_flush, rank 0 to rank 1 (rank 1 meanwhile in a
 *                        barrier: inside MPI, as a stuck member), mean of 1,000
 *   handoff              one process stores a value in its window memory, another
 *                        that polls it (MPI_Rget, then sched_yield between polls,
 *                        as MPIFT's agreement and revoke do) sees it: half the
 *                        round trip between ranks 0 and 1, the others waiting
 *                        inside MPI
 * Rank 0 appends rows "variant,np,run,metric,rep,value_s" (variant "host") to
 * --csv FILE, the format of bench/fail.c. Options: --reps R (40), --run K. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int rank, size, reps = 40, run = 0;
static FILE *out;

static void nap_ms(int ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}

/* The slowest survivor's value of `mine`, one row per repetition. */
static void row(MPI_Comm surv, const char *metric, int rep, double mine)
{
    double worst = 0;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, surv);
    if (rank == 0) fprintf(out, "host,%d,%d,%s,%d,%.9f\n", size, run, metric, rep, worst);
}

int main(int argc, char **argv)
{
    const char *csv = NULL;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--run") && i + 1 < argc) run = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
    }
    if (size < 3) {
        if (rank == 0) fprintf(stderr, "parts: needs 3 or more ranks\n");
        MPI_Finalize();
        return 0;
    }
    out = stdout;
    if (rank == 0 && csv) {
        out = fopen(csv, "a");
        if (!out) { perror(csv); MPI_Abort(MPI_COMM_WORLD, 1); }
        fseek(out, 0, SEEK_END);
        if (ftell(out) == 0) fprintf(out, "variant,np,run,metric,rep,value_s\n");
    }
    int64_t *mem;
    MPI_Win win;
    MPI_Win_allocate(8 * sizeof(int64_t), sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    memset(mem, 0, 8 * sizeof(int64_t));
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    MPI_Barrier(MPI_COMM_WORLD);

    int dead = size - 1;
    MPI_Comm surv;
    MPI_Comm_split(MPI_COMM_WORLD, rank == dead ? MPI_UNDEFINED : 0, rank, &surv);
    if (rank == dead) {
        /* Asleep outside MPI until a survivor says the measurements are over. */
        int flag = 0;
        while (!flag) {
            nap_ms(1);
            MPI_Iprobe(0, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        }
        MPI_Recv(NULL, 0, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Group world, sg;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_excl(world, 1, &dead, &sg);
        for (int k = 0; k < reps; k++) {
            MPI_Barrier(surv);
            double t = MPI_Wtime();
            MPI_Barrier(surv);
            row(surv, "barrier", k, MPI_Wtime() - t);
        }
        for (int k = 0; k < reps; k++) {
            int x = 1, y;
            MPI_Barrier(surv);
            double t = MPI_Wtime();
            MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_BAND, surv);
            row(surv, "allreduce", k, MPI_Wtime() - t);
        }
        for (int k = 0; k < reps; k++) {
            MPI_Comm c;
            MPI_Barrier(surv);
            double t = MPI_Wtime();
            MPI_Comm_create_group(MPI_COMM_WORLD, sg, 7, &c);
            row(surv, "create_group", k, MPI_Wtime() - t);
            MPI_Comm_free(&c);
        }
        for (int k = 0; k < reps; k++) {
            MPI_Comm c;
            MPI_Barrier(surv);
            double t = MPI_Wtime();
            MPI_Comm_dup(surv, &c);
            row(surv, "dup", k, MPI_Wtime() - t);
            MPI_Comm_free(&c);
        }
        /* One-sided operations, rank 0 on rank 1 while rank 1 is in a barrier. */
        enum { OPS = 1000 };
        for (int k = 0; k < reps / 4 + 1; k++) {
            double tr = 0, tf = 0;
            if (rank == 0) {
                int64_t v = 0, one = 1, old;
                double t = MPI_Wtime();
                for (int i = 0; i < OPS; i++) {
                    MPI_Request q;
                    MPI_Rget(&v, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win, &q);
                    MPI_Wait(&q, MPI_STATUS_IGNORE);
                }
                tr = (MPI_Wtime() - t) / OPS;
                t = MPI_Wtime();
                for (int i = 0; i < OPS; i++) {
                    MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 1, MPI_SUM, win);
                    MPI_Win_flush(1, win);
                }
                tf = (MPI_Wtime() - t) / OPS;
            }
            MPI_Barrier(surv);
            row(surv, "rget", k, tr);
            row(surv, "fetch_op", k, tf);
        }
        /* Hand-off: rank 0 publishes k in mem[2]; rank 1 polls it and answers in
         * its own mem[2]; rank 0 polls that. Polls yield the CPU in between. */
        for (int k = 1; k <= reps; k++) {
            double h = 0;
            MPI_Barrier(surv);
            if (rank <= 1) {
                int peer = 1 - rank;
                double t = MPI_Wtime();
                if (rank == 0) {
                    __atomic_store_n(&mem[2], (int64_t)k, __ATOMIC_SEQ_CST);
                }
                for (;;) {
                    int64_t v = 0;
                    MPI_Request q;
                    MPI_Rget(&v, 1, MPI_INT64_T, peer, 2, 1, MPI_INT64_T, win, &q);
                    MPI_Wait(&q, MPI_STATUS_IGNORE);
                    if (v == k) break;
                    sched_yield();
                }
                if (rank == 1) {
                    __atomic_store_n(&mem[2], (int64_t)k, __ATOMIC_SEQ_CST);
                }
                h = (MPI_Wtime() - t) / 2;
                if (rank == 1) h = 0; /* rank 0 timed the round trip */
            }
            row(surv, "handoff", k - 1, h);
        }
        if (rank == 0) MPI_Send(NULL, 0, MPI_INT, dead, 99, MPI_COMM_WORLD);
        MPI_Group_free(&sg);
        MPI_Group_free(&world);
        MPI_Comm_free(&surv);
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    if (out != stdout) fclose(out);
    MPI_Finalize();
    return 0;
}
