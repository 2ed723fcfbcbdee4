/* gather_no_revoke: a failed collective taken as failed everywhere.
 *
 * MISTAKE: the master (rank 0 of the working communicator) hands out each task
 * with MPI_Bcast and collects the results with MPI_Gather. A rank whose
 * collective fails goes straight to MPIX_Comm_shrink without MPIX_Comm_revoke,
 * trusting that every rank got the same error. ULFM reports errors locally: a
 * rank whose part was real may be told success and go on to the next
 * collective, where it waits for ranks that are in the shrink, which wait for
 * it. The fixed twin (examples/mistakes/fixed/gather_no_revoke.c) revokes
 * first: the rank told success gets MPI_ERR_REVOKED from its next call and
 * joins the shrink.
 *
 * Roles: NTASK tasks; each task is 20 ms of local work, the master's MPI_Bcast
 * of the task, and an MPI_Gather of every worker's t*t to the master, which
 * checks the sum. After a shrink every survivor restarts from the least task
 * any survivor had finished (MPI_Allreduce MIN); after the last task an
 * MPI_Barrier lets them leave together. Argument V (default -1): world rank V
 * dies at the entry of task 3 (-1: no death of its own, for mpift-campaign).
 *
 * MPIFT, V = 1, 2, 3 x MPIFT_SEED = 1-4 (12 runs each, `timeout 6-8`):
 *   Open MPI 4.1: default mode 0 of 12 hang; MPIFT_SEMANTICS=adversarial 6 of 12;
 *   MPICH 4.0: default mode 7 of 12 (a Gather's non-root, or a Bcast's member
 *     that finished before the death's news arrived, is told success: ULFM
 *     allows it, and MPIFT's default mode gives it there); adversarial 10 of 12;
 *   the fixed twin: 0 of 12 in either mode (MPICH).
 * mpift-campaign diagnose, adversarial, seed 1, V = 2: HANG, in one of two
 * shapes by timing. (a) "rank 0 waits in MPI_Gather ...: rank 1 is in
 * MPIX_Comm_shrink ... A survivor that went to recovery (MPIX_Comm_shrink) did
 * not revoke the communicator ..., so rank 0 was never interrupted." (b) rank 1
 * waits in the next MPI_Bcast, ranks 0 and 3 in MPIX_Comm_shrink, and the dead
 * rank 2 blocks in its part of the Gather that rank 3 skipped; the paragraph
 * then names the live members in other calls that hold the dead rank's part
 * (the forensics called this shape MPIFT's hang before issue 56's second stop).
 *
 * PATTERN: non-uniform collective error, no revoke
 * SEMANTICS: adversarial
 * FINDING: is in MPIX_Comm_shrink
 * Needs 4 ranks. */
#include "ulfm_common.h"

#define NTASK 8

#ifndef REVOKE_ON_COLLECTIVE_ERROR
#define REVOKE_ON_COLLECTIVE_ERROR 0 /* the fixed twin sets it */
#endif

int main(int argc, char **argv)
{
    int V, rank, size, done = 0, task, r, sum, i, rc, all[64];
    MPI_Comm comm;

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) : -1;
    /* The working communicator: a shrink of MPI_COMM_WORLD (unlike a dup, it
     * gives a communicator also when a rank died before it). */
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &comm);
    if (rc != MPI_SUCCESS) { u_fail("first shrink=%s", u_name(rc)); return u_finish(); }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (;;) {
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        if (done == NTASK) {
            /* Everybody finished: leave together (a rank still in recovery
             * fails the barrier here, whose result depends on every member). */
            rc = MPI_Barrier(comm);
            if (rc == MPI_SUCCESS) break;
            goto recover;
        }
        if (u_rank == V && done == 2) u_die("at the entry of task 3");
        u_sleep_ms(20); /* the task's local work: news of a death arrives meanwhile */
        task = rank == 0 ? done + 1 : -1;
        rc = MPI_Bcast(&task, 1, MPI_INT, 0, comm);
        if (rc != MPI_SUCCESS) {
            if (REVOKE_ON_COLLECTIVE_ERROR) MPIX_Comm_revoke(comm);
            goto recover; /* without the revoke: THE MISTAKE */
        }
        r = rank == 0 ? 0 : task * task;
        rc = MPI_Gather(&r, 1, MPI_INT, all, 1, MPI_INT, 0, comm);
        if (rc != MPI_SUCCESS) {
            if (REVOKE_ON_COLLECTIVE_ERROR) MPIX_Comm_revoke(comm);
            goto recover; /* without the revoke: THE MISTAKE */
        }
        if (rank == 0) {
            for (sum = 0, i = 1; i < size; i++) sum += all[i];
            CHECK(sum == (size - 1) * task * task, "task %d: sum %d, want %d", task, sum, (size - 1) * task * task);
        }
        done++;
        continue;
    recover:
        if (u_shrink_resume(&comm, &done) != MPI_SUCCESS) break;
    }
    u_note("tasks=%d", done);
    MPI_Comm_free(&comm);
    return u_finish();
}
