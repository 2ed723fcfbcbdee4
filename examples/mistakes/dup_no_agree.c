/* dup_no_agree: a communicator duplicate used without agreeing that it exists.
 *
 * MISTAKE: each step, a library call works on its own duplicate of the working
 * communicator (MPI_Comm_dup, then an MPI_Allreduce on the duplicate). A rank
 * whose dup fails goes to recovery (MPIX_Comm_revoke and MPIX_Comm_shrink of
 * the working communicator); a rank whose dup succeeded goes on into the
 * library's MPI_Allreduce. ULFM's constructors are not uniform: a dup that a
 * failure touched may give the new communicator at some survivors and an
 * error at others. Then the survivors part ways: some wait in the shrink for
 * the others, who wait in the Allreduce on the duplicate for the first (the
 * revoke of the working communicator does not reach an operation on its
 * duplicate), for ever. The fixed twin (examples/mistakes/fixed/dup_no_agree.c)
 * agrees on the dup's success (MPIX_Comm_agree over "my dup worked"), frees a
 * duplicate the others lack, and recovers together: the pattern of the ULFM
 * examples, which agree after every constructor.
 *
 * Roles: NSTEP steps; each step is 20 ms of local work, the dup, the
 * Allreduce (SUM of the step's number, checked) and the free of the
 * duplicate. After a recovery the survivors go on from the least step any of
 * them had finished (MPI_Allreduce MIN). Argument V (default -1): world rank V
 * dies at the entry of step 3 (-1: no death of its own, for mpift-campaign).
 *
 * PATTERN: a constructor's outcome taken as the same everywhere
 * SEMANTICS: adversarial
 * FINDING: MPI_Allreduce on the communicator from MPI_Comm_dup
 * FINDING: nothing made them agree on its outcome
 * Needs 4 ranks. */
#include "ulfm_common.h"

#define NSTEP 8

#ifndef AGREE_ON_DUP
#define AGREE_ON_DUP 0 /* the fixed twin sets it */
#endif

/* The library's duplicate of `comm` in `*lib`; MPI_SUCCESS if this rank may
 * use it. THE MISTAKE trusts the dup's own outcome; the twin agrees on it. */
static int library_dup(MPI_Comm comm, MPI_Comm *lib)
{
    int rc = MPI_Comm_dup(comm, lib), ok;
    if (!AGREE_ON_DUP) return rc;
    ok = rc == MPI_SUCCESS;
    if (MPIX_Comm_agree(comm, &ok) == MPI_SUCCESS && ok) return MPI_SUCCESS;
    if (rc == MPI_SUCCESS) MPI_Comm_free(lib);
    return MPIX_ERR_PROC_FAILED;
}

int main(int argc, char **argv)
{
    int V, done = 0, rank, size, sum, rc;
    MPI_Comm comm, lib;

    u_init(&argc, &argv, 1);
    V = argc > 1 ? atoi(argv[1]) : -1;
    /* The working communicator: a shrink of MPI_COMM_WORLD (it gives a
     * communicator also when a rank died before it). */
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &comm);
    if (rc != MPI_SUCCESS) { u_fail("first shrink=%s", u_name(rc)); return u_finish(); }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    while (done < NSTEP) {
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        if (u_rank == V && done == 2) u_die("at the entry of step 3");
        u_sleep_ms(20); /* the step's local work */
        if (library_dup(comm, &lib) == MPI_SUCCESS) {
            MPI_Comm_set_errhandler(lib, MPI_ERRORS_RETURN);
            rc = MPI_Allreduce(&done, &sum, 1, MPI_INT, MPI_SUM, lib);
            MPI_Comm_free(&lib);
            if (rc == MPI_SUCCESS) {
                CHECK(sum == done * size, "step %d: sum %d, want %d", done + 1, sum, done * size);
                done++;
                continue;
            }
        }
        MPIX_Comm_revoke(comm);
        if (u_shrink_resume(&comm, &done) != MPI_SUCCESS) break;
    }
    MPI_Comm_size(comm, &size);
    u_note("steps=%d size=%d", done, size);
    MPI_Comm_free(&comm);
    return u_finish();
}
