/* ishrink_overlap: the last rank dies; once every survivor knows it, the
 * survivors start MPIX_Comm_ishrink on MPI_COMM_WORLD, rank 0 LATE_MS after the
 * others. The early ones compute between MPI_Test calls: the shrink cannot
 * complete before rank 0 started it, so some Test must say "not complete". Then
 * the new communicator is used: np-1 ranks in the old order, not revoked, and an
 * Allreduce and a ring exchange on it work.
 *
 * Open MPI 5.0's ULFM (the oracle) has no MPIX_Comm_ishrink: without
 * OMPI_HAVE_MPIX_COMM_ISHRINK this program uses the blocking shrink and notes
 * it, so the oracle still gives the outcome of the communicator's use. */
#include "ulfm_common.h"

#ifndef LATE_MS
#define LATE_MS 300
#endif

int main(int argc, char **argv)
{
    int rc, victim, n = 0, r = -1, flag = -1, sum = -1, want_sum, pending = 0, x, y = -1;
    MPI_Comm s = MPI_COMM_NULL;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == victim) u_die("at start");
    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree after the death", rc, MPIX_ERR_PROC_FAILED);
    if (u_rank == 0) u_sleep_ms(LATE_MS);
#ifdef OMPI_HAVE_MPIX_COMM_ISHRINK
    {
        MPI_Request req;
        int done = 0, i;
        rc = MPIX_Comm_ishrink(MPI_COMM_WORLD, &s, &req);
        CHECK_RC("ishrink start", rc, MPI_SUCCESS);
        for (i = 0; rc == MPI_SUCCESS && !done && i < 30000; i++) {
            u_compute(0.002);
            rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            if (!done) pending++;
        }
        CHECK(rc == MPI_SUCCESS && done, "ishrink Test=%s done=%d", u_name(rc), done);
        if (u_rank != 0) CHECK(pending > 0, "no Test saw the shrink pending (rank 0 late by %d ms)", LATE_MS);
        u_note("ishrink overlapped=%s", u_rank == 0 ? "late" : (pending > 0 ? "yes" : "no"));
    }
#else
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &s);
    CHECK_RC("shrink (no ishrink here)", rc, MPI_SUCCESS);
    u_note("ishrink=unavailable");
#endif
    if (rc == MPI_SUCCESS && s != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN);
        MPI_Comm_size(s, &n);
        MPI_Comm_rank(s, &r);
        CHECK(n == u_size - 1 && r == u_rank, "shrunk size %d rank %d", n, r);
        MPIX_Comm_is_revoked(s, &flag);
        CHECK(flag == 0, "shrunk is_revoked=%d", flag);
        want_sum = (u_size - 1) * (u_size - 2) / 2;
        rc = MPI_Allreduce(&u_rank, &sum, 1, MPI_INT, MPI_SUM, s);
        CHECK(rc == MPI_SUCCESS && sum == want_sum, "Allreduce(shrunk)=%s sum %d (want %d)", u_name(rc), sum,
              want_sum);
        if (n > 1) {
            x = 1000 + r;
            rc = MPI_Sendrecv(&x, 1, MPI_INT, (r + 1) % n, 5, &y, 1, MPI_INT, (r + n - 1) % n, 5, s,
                              MPI_STATUS_IGNORE);
            CHECK(rc == MPI_SUCCESS && y == 1000 + (r + n - 1) % n, "ring(shrunk)=%s got %d", u_name(rc), y);
        }
        MPI_Comm_free(&s);
    }
    return u_finish();
}
