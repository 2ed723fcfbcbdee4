/* victim.c: a loop of collectives that keeps going while ranks die, for the
 * injection tests (tests/inject/run.sh). Unmodified MPI source, built with
 * -I include/compat; the kill policies come from the environment or from the
 * options below.
 *
 * Call numbering (what rank=R@call=N counts): MPI_Init is call 1,
 * MPI_Comm_set_errhandler 2, MPI_Comm_rank 3, MPI_Comm_size 4 (5 with
 * --policy: Sim_FT_set_kill_policy is not an MPI call, but it runs after
 * MPI_Comm_size), then one MPI_Allreduce per iteration: iteration i (from 0) is
 * call 5 + i. Every rank that survives prints "rank R: OK calls=C errors=E".
 *
 * Options: --iters N (default 200), --sleep-us U (after every iteration),
 * --policy RULES (Sim_FT_set_kill_policy after MPI_Init), --early RULES (the
 * same before MPI_Init: it replaces the environment's policy there),
 * --callback R:N (a kill callback: world rank R dies at call N). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cb_rank = -1;
static long cb_call = -1;

static int decide(int world_rank, long call, const char *fn, void *ctx)
{
    int *asked = ctx;
    (void)fn;
    ++*asked;
    return world_rank == cb_rank && call >= cb_call;
}

int main(int argc, char **argv)
{
    int rank, size, i, iters = 200, errors = 0, asked = 0, sleep_us = 0;
    const char *policy = NULL;

    for (i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--early") && Sim_FT_set_kill_policy(argv[i + 1]) != 0) {
            printf("FAIL Sim_FT_set_kill_policy(\"%s\") refused before MPI_Init\n", argv[i + 1]);
            return 1;
        }
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sleep-us") && i + 1 < argc) sleep_us = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--policy") && i + 1 < argc) policy = argv[++i];
        else if (!strcmp(argv[i], "--early") && i + 1 < argc) ++i;
        else if (!strcmp(argv[i], "--callback") && i + 1 < argc) sscanf(argv[++i], "%d:%ld", &cb_rank, &cb_call);
    }
    if (policy && Sim_FT_set_kill_policy(policy) != 0) {
        printf("rank %d: FAIL Sim_FT_set_kill_policy(\"%s\") refused\n", rank, policy);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (cb_rank >= 0) Sim_FT_set_kill_callback(decide, &asked);

    for (i = 0; i < iters; i++) {
        int x = rank, sum = -1;
        if (MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS) errors++;
        if (sleep_us > 0) {
            struct timespec ts = {sleep_us / 1000000, (long)(sleep_us % 1000000) * 1000};
            nanosleep(&ts, NULL);
        }
    }
    if (cb_rank >= 0 && asked == 0) printf("rank %d: FAIL the kill callback was never asked\n", rank);
    printf("rank %d: OK calls=%lld errors=%d seed=%llu\n", rank, Sim_FT_call_count(), errors, Sim_FT_get_seed());
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
