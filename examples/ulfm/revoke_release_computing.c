/* revoke_release_computing: no failure. Rank 0 is blocked in MPI_Barrier(A);
 * rank 1 revokes A ~200 ms later and goes on to MPI_Barrier(B); ranks 2.. compute
 * without calling MPI. ULFM: after the revoke no operation on A blocks, so rank 0
 * returns REVOKED while the others still compute. Checked without timing: once
 * released, rank 0 creates a file; every other rank (rank 1 before its revoke's
 * Barrier(B) returns, ranks 2.. in their compute loop) must see it appear before
 * it calls MPI again (they give up after LIMIT_S seconds). Then all leave
 * MPI_Barrier(B) with SUCCESS. Needs np >= 2; the ranks must share a file system
 * (one host).
 *
 * With COMPUTING_IBARRIER (revoke_release_computing_ibarrier.c) rank 0 waits in
 * MPI_Wait on an MPI_Ibarrier(A) instead.
 *
 * MPIFT: its own MPI_Barrier (engine::barrier) leaves as soon as rank 0 learns
 * of the revoke (the revoker's hint message), without waiting for the computing
 * ranks, which a host MPI's blocking barrier would need (issue 19). */
#include "ulfm_common.h"
#include <unistd.h>

#ifndef LIMIT_S
#define LIMIT_S 20
#endif

/* Computes (no MPI) until `path` exists or LIMIT_S seconds passed; 1 if it did. */
static int compute_until(const char *path)
{
    double t0 = u_now_s();
    while (u_now_s() - t0 < LIMIT_S) {
        u_compute(0.001);
        if (access(path, F_OK) == 0) return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rc, seen = 1;
    long id;
    char path[256];
    MPI_Comm a, b;
    FILE *f;

    u_init(&argc, &argv, 1);
    id = (long)getpid();
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "/tmp/revoke_release_computing.%ld", id);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_set_errhandler(b, MPI_ERRORS_RETURN);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_set_errhandler(a, MPI_ERRORS_RETURN);
    MPI_Barrier(b); /* A exists everywhere before anybody revokes it */
    if (u_rank == 0) {
#ifdef COMPUTING_IBARRIER
        MPI_Request req;
        rc = MPI_Ibarrier(a, &req);
        CHECK_RC("Ibarrier(A)", rc, MPI_SUCCESS);
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
#else
        rc = MPI_Barrier(a);
#endif
        CHECK_RC("Barrier(A)", rc, MPIX_ERR_REVOKED);
        f = fopen(path, "w");
        CHECK(f != NULL, "cannot create %s", path);
        if (f) fclose(f);
    } else if (u_rank == 1) {
        u_sleep_ms(200); /* rank 0 is inside Barrier(A) by now */
        rc = MPIX_Comm_revoke(a);
        CHECK_RC("revoke(A)", rc, MPI_SUCCESS);
    } else {
        seen = compute_until(path);
        CHECK(seen, "rank 0 not released within %d s while this rank computed outside MPI", LIMIT_S);
    }
    rc = MPI_Barrier(b);
    CHECK_RC("Barrier(B)", rc, MPI_SUCCESS);
    if (u_rank == 1) {
        /* Barrier(B) needed rank 0, so rank 0 was released: the file exists. */
        seen = access(path, F_OK) == 0;
        CHECK(seen, "Barrier(B) returned but %s does not exist", path);
    }
    rc = MPI_Barrier(b);
    CHECK_RC("Barrier(B) 2", rc, MPI_SUCCESS);
    if (u_rank == 0) unlink(path);
    rc = MPI_Comm_free(&a);
    CHECK_RC("Comm_free(A)", rc, MPI_SUCCESS);
    MPI_Comm_free(&b);
    return u_finish();
}
