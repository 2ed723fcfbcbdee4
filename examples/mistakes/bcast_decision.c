/* bcast_decision: a broadcast used as an agreement.
 *
 * MISTAKE: rank 0 of the working communicator decides each step whether to
 * recover (its last step's MPI_Allreduce failed) and tells the others with
 * MPI_Bcast; a rank that gets an error from that Bcast, or the flag, goes to
 * MPIX_Comm_shrink, and a rank told success with the flag 0 goes on to the
 * step's exchange around a ring. ULFM reports errors locally: a Bcast that a
 * failure touched may succeed at some ranks (their data came from the live
 * root) and fail at others, so the ranks part ways: some wait in the shrink,
 * the others in the exchange for a live neighbour that is in the shrink (a
 * receive from a live rank is not interrupted by another's failure), for ever. The fixed twin
 * (examples/mistakes/fixed/bcast_decision.c) decides with MPIX_Comm_agree,
 * which gives every survivor the same flag.
 *
 * Roles: NSTEP steps; each step is 20 ms of local work, the decision, and the
 * ring exchange of the step's number (MPI_Sendrecv to the right, from the
 * left), checked; rank 0's own failed exchange makes its next decision
 * "recover" (the twin's agreement counts every rank's). After the last step
 * the decision comes once more, then the barrier. After a shrink the
 * survivors go on from the least step any of them had finished (MPI_Allreduce
 * MIN); after the last step an MPI_Barrier lets them leave together. Argument
 * V (default -1): world rank V dies at the entry of step 3 (-1: no death of its
 * own, for mpift-campaign).
 *
 * PATTERN: a broadcast used as an agreement
 * SEMANTICS: adversarial
 * FINDING: is in MPIX_Comm_shrink
 * Needs 4 ranks. */
#include "ulfm_common.h"

#define NSTEP 8

#ifndef AGREE_ON_RECOVERY
#define AGREE_ON_RECOVERY 0 /* the fixed twin sets it */
#endif

/* Whether every rank must recover, as rank 0 decided: THE MISTAKE trusts the
 * Bcast's outcome to be the same everywhere; the twin agrees (every rank's
 * failed exchange counts there, as in the agreement any rank may veto). */
static int must_recover(MPI_Comm comm, int rank, int last_failed)
{
    int flag = rank == 0 ? last_failed : 0, ok;
    if (!AGREE_ON_RECOVERY) return MPI_Bcast(&flag, 1, MPI_INT, 0, comm) != MPI_SUCCESS || flag;
    ok = !last_failed;
    /* The AND of every live rank's flag, and PROC_FAILED at every survivor while a
     * failure is unacknowledged: the same answer everywhere. */
    return MPIX_Comm_agree(comm, &ok) != MPI_SUCCESS || !ok;
}

int main(int argc, char **argv)
{
    int V, done = 0, rank, size, got, rc, last_failed = 0;
    MPI_Comm comm;

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) : -1;
    /* The working communicator: a shrink of MPI_COMM_WORLD (it gives a
     * communicator also when a rank died before it). */
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &comm);
    if (rc != MPI_SUCCESS) { u_fail("first shrink=%s", u_name(rc)); return u_finish(); }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (;;) {
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        if (u_rank == V && done == 2) u_die("at the entry of step 3");
        u_sleep_ms(20); /* the step's local work */
        /* The decision comes first also after the last step: a rank whose last
         * exchange failed has one step less to do than the others. */
        if (must_recover(comm, rank, last_failed)) goto recover;
        if (done == NSTEP) {
            /* Everybody finished: leave together. */
            rc = MPI_Barrier(comm);
            if (rc == MPI_SUCCESS) break;
            goto recover;
        }
        /* The step's exchange around the ring; a failed step is redone after
         * the recovery rank 0 decides next. */
        rc = MPI_Sendrecv(&done, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0, comm, MPI_STATUS_IGNORE);
        last_failed = rc != MPI_SUCCESS;
        if (last_failed) continue;
        CHECK(got == done, "step %d: got step %d from the left", done + 1, got + 1);
        done++;
        continue;
    recover:
        last_failed = 0;
        if (u_shrink_resume(&comm, &done) != MPI_SUCCESS) break;
    }
    MPI_Comm_size(comm, &size);
    u_note("steps=%d size=%d", done, size);
    MPI_Comm_free(&comm);
    return u_finish();
}
