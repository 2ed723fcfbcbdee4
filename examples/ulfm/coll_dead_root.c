/* coll_dead_root: the root (rank 0) dies. Bcast from it (entered before the
 * failure is known: the non-roots wait for its data) returns PROC_FAILED
 * everywhere; Reduce to it returns PROC_FAILED or (allowed at non-roots)
 * success; then Barrier returns PROC_FAILED. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int root = 0, x = -1, sum = -1, rc;

    u_init(&argc, &argv, 1);
    if (u_rank == root) u_die("at start");

    rc = MPI_Bcast(&x, 1, MPI_INT, root, MPI_COMM_WORLD);
    CHECK_RC("Bcast", rc, MPIX_ERR_PROC_FAILED);

    x = u_rank;
    rc = MPI_Reduce(&x, &sum, 1, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    u_note("Reduce=%s", u_name(rc));
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Reduce=%s",
          u_name(rc));

    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC("Barrier", rc, MPIX_ERR_PROC_FAILED);
    return u_finish();
}
