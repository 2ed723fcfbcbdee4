/* shrink: (1) rank 0 (a root) dies; shrink(MPI_COMM_WORLD) gives the same group
 * everywhere in the old order (allgather the old ranks on the new comm);
 * (2) shrink of a revoked dup works and is not revoked; (3) a second failure
 * (the last rank) and a second shrink removes it too. Needs np >= 3. */
#include "ulfm_common.h"

#define MAXP 64

/* Members of s must be exactly the world ranks [first, first+n) in order. */
static void check_order(MPI_Comm s, const char *what, int first, int n)
{
    int size = -1, i, rc, old[MAXP];
    MPI_Comm_size(s, &size);
    CHECK(size == n, "%s size %d (want %d)", what, size, n);
    if (size != n) return;
    rc = MPI_Allgather(&u_rank, 1, MPI_INT, old, 1, MPI_INT, s);
    CHECK_RC(what, rc, MPI_SUCCESS);
    for (i = 0; rc == MPI_SUCCESS && i < n; i++)
        CHECK(old[i] == first + i, "%s: new rank %d is old %d (want %d)", what, i,
              old[i], first + i);
}

int main(int argc, char **argv)
{
    int rc, flag = 1, v2;
    MPI_Comm s1 = MPI_COMM_NULL, d, s2 = MPI_COMM_NULL, s3 = MPI_COMM_NULL;

    u_init(&argc, &argv, 1);
    if (u_size < 3 || u_size > MAXP) MPI_Abort(MPI_COMM_WORLD, 2);
    v2 = u_size - 1;
    if (u_rank == 0) u_die("at start");

    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &s1);
    CHECK_RC("shrink1", rc, MPI_SUCCESS);
    if (rc != MPI_SUCCESS) return u_finish();
    MPI_Comm_set_errhandler(s1, MPI_ERRORS_RETURN);
    check_order(s1, "shrink1", 1, u_size - 1);

    /* (2) shrink a revoked communicator */
    MPI_Comm_dup(s1, &d);
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    /* Open MPI 5.0.11 segfaults (ompi_comm_revoke_local) if a revoke reaches a
     * rank still inside the Comm_dup that made d: let every dup finish first. */
    MPI_Barrier(d);
    if (u_rank == 1) MPIX_Comm_revoke(d);
    rc = MPI_Barrier(d); /* rank 1 never joins: ends by the revoke */
    CHECK_RC("Barrier(revoked)", rc, MPIX_ERR_REVOKED);
    rc = MPIX_Comm_shrink(d, &s2);
    CHECK_RC("shrink(revoked)", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(s2, MPI_ERRORS_RETURN);
        flag = -1;
        MPIX_Comm_is_revoked(s2, &flag);
        CHECK(flag == 0, "shrink(revoked) is_revoked=%d", flag);
        check_order(s2, "shrink(revoked)", 1, u_size - 1);
        MPI_Comm_free(&s2);
    }
    MPI_Comm_free(&d);

    /* (3) a second failure, a second shrink. The barrier keeps the death after
     * everyone's part (2): a collective whose member dies right after it completed
     * may report PROC_FAILED at a rank that learns of the death before it leaves
     * (ULFM allows it; MPIFT does so, docs/ULFM-DIFFERENCES.md). */
    MPI_Barrier(s1);
    if (u_rank == v2) u_die("after the first shrink");
    rc = u_wait_failure(s1, 1);
    CHECK_RC("agree(s1)", rc, MPIX_ERR_PROC_FAILED);
    rc = MPIX_Comm_shrink(s1, &s3);
    CHECK_RC("shrink2", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(s3, MPI_ERRORS_RETURN);
        check_order(s3, "shrink2", 1, u_size - 2);
        rc = MPI_Barrier(s3);
        CHECK_RC("Barrier(shrink2)", rc, MPI_SUCCESS);
        MPI_Comm_free(&s3);
    }
    MPI_Comm_free(&s1);
    return u_finish();
}
