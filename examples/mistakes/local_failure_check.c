/* local_failure_check: a rank's own knowledge of failures taken as everyone's.
 *
 * MISTAKE: at the start of each step's communication, every rank asks
 * MPIX_Comm_get_failed whether a rank died and, if one did, goes to
 * MPIX_Comm_shrink; otherwise it makes the step's exchange around a ring
 * (MPI_Sendrecv to the right, from the left; its errors are left to the next
 * step's check). The decision is local: ULFM detects a failure per observer,
 * so one survivor may see the death while another does not yet. The one that
 * sees it waits in the shrink; the other goes on to the exchange, where it
 * waits for a message from a live rank that is in the shrink (a receive from a
 * live rank is not interrupted by another's failure): both wait for ever. On one machine detection is
 * fast and about simultaneous, so the checks agree; on a big machine (or with
 * MPIFT_SEMANTICS=adversarial, whose `latency` choice gives each survivor its
 * own detection delay) they do not. The fixed twin
 * (examples/mistakes/fixed/local_failure_check.c) agrees on the decision with
 * MPIX_Comm_agree, which gives every survivor the same answer.
 *
 * Roles: NSTEP steps; each step is 20 ms of local work, the failure check,
 * and the ring exchange of the step's number (checked). After a shrink the survivors go
 * on from the least step any of them had finished (MPI_Allreduce MIN); after the
 * last step an MPI_Barrier lets them leave together. Argument V (default -1):
 * world rank V dies at the entry of step 3 (-1: no death of its own, for
 * mpift-campaign).
 *
 * PATTERN: local failure knowledge decides a collective action
 * SEMANTICS: adversarial
 * FINDING: is in MPIX_Comm_shrink
 * Needs 4 ranks. */
#include "ulfm_common.h"

#define NSTEP 8

#ifndef AGREE_ON_RECOVERY
#define AGREE_ON_RECOVERY 0 /* the fixed twin sets it */
#endif

/* Whether this rank must recover: THE MISTAKE decides alone; the twin agrees. */
static int must_recover(MPI_Comm comm)
{
    MPI_Group failed;
    int nf = 0, flag;
    MPIX_Comm_get_failed(comm, &failed);
    MPI_Group_size(failed, &nf);
    MPI_Group_free(&failed);
    if (!AGREE_ON_RECOVERY) return nf > 0;
    flag = nf == 0;
    /* The AND of every live rank's flag, and PROC_FAILED at every survivor while a
     * failure is unacknowledged: the same answer everywhere. */
    if (MPIX_Comm_agree(comm, &flag) != MPI_SUCCESS) return 1;
    return !flag;
}

int main(int argc, char **argv)
{
    int V, done = 0, rank, size, got, rc;
    MPI_Comm comm;

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) : -1;
    /* The working communicator: a shrink of MPI_COMM_WORLD (it gives a
     * communicator also when a rank died before it). */
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &comm);
    if (rc != MPI_SUCCESS) { u_fail("first shrink=%s", u_name(rc)); return u_finish(); }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (;;) {
        if (done == NSTEP) {
            /* Everybody finished: leave together (a rank still in recovery
             * fails the barrier here). */
            rc = MPI_Barrier(comm);
            if (rc == MPI_SUCCESS) break;
            goto recover;
        }
        if (u_rank == V && done == 2) u_die("at the entry of step 3");
        u_sleep_ms(20); /* the step's local work: news of a death arrives meanwhile */
        if (must_recover(comm)) goto recover;
        /* The step's exchange around the ring; its errors are left to the next
         * step's check. */
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        rc = MPI_Sendrecv(&done, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0, comm, MPI_STATUS_IGNORE);
        CHECK(rc != MPI_SUCCESS || got == done, "step %d: got step %d from the left", done + 1, got + 1);
        done++;
        continue;
    recover:
        if (u_shrink_resume(&comm, &done) != MPI_SUCCESS) break;
    }
    MPI_Comm_size(comm, &size);
    u_note("steps=%d size=%d", done, size);
    MPI_Comm_free(&comm);
    return u_finish();
}
