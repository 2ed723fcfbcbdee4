/* thread_kill: the victim's helper thread kills the process (kill(getpid(),
 * SIGTERM); raise(SIGKILL) on the oracle) while its main thread is inside
 * MPIX_Comm_shrink of a revoked dup. The process dies; the survivors detect the
 * death (agree reports PROC_FAILED or a later operation fails), shrink again and
 * end with a communicator of the np-1 survivors that works. With MPIFT (built
 * with MPIFT_MAP_SIGNALS, defined below) the main thread dies at its next MPI call. */
#define MPIFT_MAP_SIGNALS 1 /* kill() and raise() of the process: simulated deaths */
#include "ulfm_common.h"
#include <pthread.h>
#include <unistd.h>

static volatile int fired = 0;

static void *killer(void *arg)
{
    (void)arg;
    u_sleep_ms(20); /* the main thread is inside the shrink by then */
    fired = 1;
#ifdef MPIFT_VERSION
    kill(getpid(), SIGTERM);
#else
    raise(SIGKILL);
#endif
    return NULL;
}

int main(int argc, char **argv)
{
    int victim, rc, flag = 1, n = -1, rounds = 0, one = 1, sum = 0;
    MPI_Comm d, s = MPI_COMM_NULL, t;
    pthread_t th;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == victim) {
        u_line("DIES", "from a helper thread, main thread in shrink");
        pthread_create(&th, NULL, killer, NULL);
    } else {
        u_sleep_ms(20);
    }
    if (u_rank == 0) MPIX_Comm_revoke(d);
    rc = MPIX_Comm_shrink(d, &s);
    if (u_rank == victim) {
        /* A killed process runs no more code: its next MPI call must not return. */
        while (!fired) u_sleep_ms(1);
        u_sleep_ms(50);
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        u_fail("the main thread is still alive after an MPI call");
        return u_finish();
    }
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "first shrink=%s", u_name(rc));
    if (rc != MPI_SUCCESS) s = MPI_COMM_NULL;
    /* Until the survivors' communicator has np-1 members: agree, shrink again. */
    while (!u_failed && rounds < 10) {
        MPI_Comm cur = s == MPI_COMM_NULL ? d : s;
        MPI_Comm_set_errhandler(cur, MPI_ERRORS_RETURN);
        MPI_Comm_size(cur, &n);
        flag = 1;
        rc = MPIX_Comm_agree(cur, &flag);
        if (rc == MPI_SUCCESS && n == u_size - 1) break;
        rounds++;
        MPIX_Comm_failure_ack(cur);
        rc = MPIX_Comm_shrink(cur, &t);
        CHECK(rc == MPI_SUCCESS, "shrink round %d=%s", rounds, u_name(rc));
        if (rc != MPI_SUCCESS) break;
        if (s != MPI_COMM_NULL) MPI_Comm_free(&s);
        s = t;
    }
    CHECK(s != MPI_COMM_NULL && n == u_size - 1, "survivors' communicator has %d members, want %d", n, u_size - 1);
    if (s != MPI_COMM_NULL) {
        rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, s);
        CHECK(rc == MPI_SUCCESS && sum == u_size - 1, "Allreduce=%s sum %d", u_name(rc), sum);
        MPI_Comm_free(&s);
    }
    MPI_Comm_free(&d);
    u_note("size=%d", n);
    return u_finish();
}
