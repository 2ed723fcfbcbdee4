/* finalize_dead: the victim dies; the survivors learn it (agree) and call
 * MPI_Finalize, which must return; the job exits with status 0. The final line
 * is printed after MPI_Finalize. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int rc;

    u_init(&argc, &argv, 1);
    if (u_rank == u_size - 1) u_die("at start");
    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);
    rc = MPI_Finalize();
    CHECK_RC("Finalize", rc, MPI_SUCCESS);
    u_line(u_failed ? "FAIL" : "OK", u_failed ? u_why : "finalized");
    return u_failed ? 1 : 0;
}
