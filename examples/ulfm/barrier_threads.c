/* barrier_threads: no failure. At MPI_THREAD_MULTIPLE, two threads per process
 * run 500 barriers each, each thread on its own duplicate of the world, at the
 * same time. Every barrier returns SUCCESS.
 *
 * MPIFT: its own barrier's messages share one channel per pair of processes, so
 * a job where a rank runs at MPI_THREAD_MULTIPLE uses the host's barrier
 * (docs/CONFIGURATION.md, MPIFT_BARRIER; a revoke then releases a member inside
 * it only as the host barrier allows); this checks that nothing mixes the
 * threads' barriers up. Needs np >= 2 and a host that provides
 * MPI_THREAD_MULTIPLE (else it says so and passes). */
#include "ulfm_common.h"
#include <pthread.h>

static MPI_Comm dups[2];

static void *loop(void *arg)
{
    int k = *(int *)arg, rc = MPI_SUCCESS, i;
    for (i = 0; i < 500 && rc == MPI_SUCCESS; i++) rc = MPI_Barrier(dups[k]);
    return (void *)(long)rc;
}

int main(int argc, char **argv)
{
    int provided, rc, k, ks[2] = {0, 1};
    void *res[2];
    pthread_t t[2];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &u_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &u_size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (provided < MPI_THREAD_MULTIPLE) {
        u_note("no MPI_THREAD_MULTIPLE (provided %d): skipped", provided);
        return u_finish();
    }
    for (k = 0; k < 2; k++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &dups[k]);
        MPI_Comm_set_errhandler(dups[k], MPI_ERRORS_RETURN);
    }
    for (k = 0; k < 2; k++) pthread_create(&t[k], NULL, loop, &ks[k]);
    for (k = 0; k < 2; k++) pthread_join(t[k], &res[k]);
    for (k = 0; k < 2; k++) CHECK_RC("threads' barriers", (int)(long)res[k], MPI_SUCCESS);
    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC("Barrier(world)", rc, MPI_SUCCESS);
    for (k = 0; k < 2; k++) MPI_Comm_free(&dups[k]);
    u_note("provided=%d", provided);
    return u_finish();
}
