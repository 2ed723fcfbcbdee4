/* anysource_no_ack: a wildcard receive retried without acknowledging the
 * failure.
 *
 * MISTAKE: the master collects results with MPI_Irecv(MPI_ANY_SOURCE) and
 * MPI_Wait. When the wait returns MPI_ERR_PROC_FAILED_PENDING, the master
 * finds the dead worker (MPIX_Comm_get_failed), does its missing tasks itself
 * and waits again on the same request, which ULFM keeps active, but never
 * acknowledges the failure. Until it does, ULFM may answer every wildcard
 * receive on the communicator with PENDING, also when a live worker's result
 * is in (a wildcard receive "may match a failed process"; the oracle's blocking
 * MPI_Recv(MPI_ANY_SOURCE) refuses a message that is in the same way): the
 * master spins in MPI_Wait for ever. MPIFT's default mode hands over a message
 * that is in first, so the master only spins until the next result comes. The
 * fixed twin (examples/mistakes/fixed/anysource_no_ack.c) acknowledges the
 * failure (MPIX_Comm_failure_ack) once it has taken over the dead worker's
 * tasks, which re-enables wildcard receives.
 *
 * Roles: rank 0 is the master; workers 1-3 each do the NTASK/3 tasks t with
 * t % 3 == rank - 1, 20 ms each, and send (t, t*t + 1) to the master. The
 * master checks that it has every task's result. Argument V (default -1):
 * world rank V dies at the entry of its third task (-1: no death of its own,
 * for mpift-campaign).
 *
 * PATTERN: MPI_ANY_SOURCE without acknowledging the failure
 * SEMANTICS: adversarial
 * FINDING: is unacknowledged
 * Needs 4 ranks. */
#include "ulfm_common.h"

#define NTASK 48
#define TAG_RESULT 7

#ifndef ACK_FAILURES
#define ACK_FAILURES 0 /* the fixed twin sets it */
#endif

static int result_of(int t) { return t * t + 1; }

/* The master does the tasks of every worker known dead that it has no result
 * for; returns how many it did. */
static int take_over(int *have)
{
    MPI_Group failed, world;
    int n = 0, k, t, w;
    MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(failed, &k);
    for (int i = 0; i < k; i++) {
        MPI_Group_translate_ranks(failed, 1, &i, world, &w);
        for (t = 0; t < NTASK; t++) {
            if (w > 0 && t % 3 == w - 1 && !have[t]) {
                u_sleep_ms(20);
                have[t] = 1;
                n++;
            }
        }
    }
    MPI_Group_free(&failed);
    MPI_Group_free(&world);
    return n;
}

static void master(void)
{
    int have[NTASK] = {0}, got = 0, msg[2], rc, cls;
    MPI_Request r;
    MPI_Irecv(msg, 2, MPI_INT, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &r);
    while (got < NTASK) {
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        cls = u_class(rc);
        if (rc == MPI_SUCCESS) {
            CHECK(msg[0] >= 0 && msg[0] < NTASK && msg[1] == result_of(msg[0]), "bad result (%d, %d)", msg[0], msg[1]);
            if (!have[msg[0]]) { have[msg[0]] = 1; got++; }
            if (got < NTASK) MPI_Irecv(msg, 2, MPI_INT, MPI_ANY_SOURCE, TAG_RESULT, MPI_COMM_WORLD, &r);
        } else if (cls == MPIX_ERR_PROC_FAILED_PENDING) {
            /* A worker died: do its missing tasks here, then wait again on the
             * same request. THE MISTAKE: no acknowledgement, so the wildcard
             * receive may stay PENDING for ever. */
            got += take_over(have);
            if (ACK_FAILURES) MPIX_Comm_failure_ack(MPI_COMM_WORLD);
        } else {
            u_fail("wait=%s", u_name(rc));
            return;
        }
    }
    if (r != MPI_REQUEST_NULL) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    u_note("results=%d", got);
}

int main(int argc, char **argv)
{
    int V, t, k = 0, msg[2];
    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) : -1;
    if (u_rank == 0) {
        master();
    } else {
        for (t = u_rank - 1; t < NTASK; t += 3, k++) {
            if (u_rank == V && k == 2) u_die("at the entry of its third task");
            u_sleep_ms(20);
            msg[0] = t;
            msg[1] = result_of(t);
            if (MPI_Send(msg, 2, MPI_INT, 0, TAG_RESULT, MPI_COMM_WORLD) != MPI_SUCCESS) break;
        }
        u_note("tasks=%d", k);
    }
    return u_finish();
}
