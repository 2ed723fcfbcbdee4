/* coll_before_death: an operation that completed before a failure succeeds. After
 * a first failure and a shrink, the survivors run an Allreduce and a Barrier on the
 * shrunk communicator, ROUNDS times; right after the last Barrier one of them dies.
 * That Barrier had completed before the death (the victim left it, so everyone had
 * entered it): SUCCESS at every survivor, as on Open MPI 5 ULFM. The next Barrier
 * fails. Needs np >= 3. */
#include "ulfm_common.h"

#ifndef ROUNDS
#define ROUNDS 20
#endif

int main(int argc, char **argv)
{
    int rc, one = 1, sum = 0, n = 0, sr = -1, i;
    MPI_Comm s;

    u_init(&argc, &argv, 1);
    if (u_rank == u_size - 1) u_die("at start");
    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &s);
    CHECK_RC("shrink", rc, MPI_SUCCESS);
    MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN);
    MPI_Comm_size(s, &n);
    MPI_Comm_rank(s, &sr);
    for (i = 0; i < ROUNDS && !u_failed; i++) {
        rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, s);
        CHECK(rc == MPI_SUCCESS && sum == n, "Allreduce=%s sum %d, want %d", u_name(rc), sum, n);
        rc = MPI_Barrier(s);
        if (i == ROUNDS - 1 && sr == n - 1) u_die("right after the last barrier");
        CHECK(rc == MPI_SUCCESS, "Barrier %d that completed before the death=%s", i, u_name(rc));
    }
    rc = MPI_Barrier(s);
    CHECK_RC("Barrier after the death", rc, MPIX_ERR_PROC_FAILED);
    u_note("size=%d", n);
    MPI_Comm_free(&s);
    return u_finish();
}
