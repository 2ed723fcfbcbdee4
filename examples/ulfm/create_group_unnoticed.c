/* create_group_unnoticed: the last rank dies; before any call has reported that
 * failure, the others make a communicator of themselves with MPI_Comm_create_group
 * (MPICH's ft/nbccoll pattern). Open MPI 5 ULFM creates it, and Barrier and Reduce
 * on it succeed: no member is dead. Once a call has reported the failure (a Barrier
 * on the world: PROC_FAILED), Open MPI 5 ULFM refuses create_group over the same
 * live ranks (PROC_FAILED); creating it is allowed too (no member of the group is
 * dead), and is what MPIFT does, so that members that disagree on whether they have
 * seen the failure do not leave the others blocked in it. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, rc, one = 1, sum = -1;
    MPI_Group wg, lg;
    MPI_Comm c = MPI_COMM_NULL;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_excl(wg, 1, &victim, &lg);
    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC("first Barrier", rc, MPI_SUCCESS);
    if (u_rank == victim) u_die("after the first barrier");
    u_sleep_ms(300); /* the death has happened; no call has reported it */

    rc = MPI_Comm_create_group(MPI_COMM_WORLD, lg, 7, &c);
    u_note("create_group(live, unnoticed)=%s", u_name(rc));
    CHECK_RC("create_group before the failure was reported", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        rc = MPI_Barrier(c);
        CHECK_RC("Barrier on it", rc, MPI_SUCCESS);
        rc = MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, 0, c);
        CHECK_RC("Reduce on it", rc, MPI_SUCCESS);
        CHECK(u_rank != 0 || sum == u_size - 1, "Reduce sum %d, want %d", sum, u_size - 1);
        MPI_Comm_free(&c);
    }

    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC("Barrier on the world", rc, MPIX_ERR_PROC_FAILED);
    c = MPI_COMM_NULL;
    rc = MPI_Comm_create_group(MPI_COMM_WORLD, lg, 8, &c);
    u_note("create_group(live, reported)=%s", u_name(rc));
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "create_group after the failure was reported=%s", u_name(rc));
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) MPI_Comm_free(&c);
    MPI_Group_free(&lg);
    MPI_Group_free(&wg);
    return u_finish();
}
