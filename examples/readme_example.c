/* examples/readme_example.c: the example in README.md (keep the two the same).
 * Rank 1 dies; the survivors see MPIX_ERR_PROC_FAILED, revoke, shrink, and count
 * themselves on the new communicator. With MPIFT (-Iinclude/compat) or real ULFM. */
#include <mpi.h>
#include <mpi-ext.h> /* the MPIX_ names (Open MPI's ULFM; MPIFT's compat headers have it too) */
#include <signal.h>
#include <stdio.h>
#ifndef MPIFT_VERSION
#define Sim_FT_kill_me() raise(SIGKILL) /* real ULFM: die for real */
#endif

int main(int argc, char **argv)
{
    int rank, one = 1, n = 0, rc, cls;
    MPI_Comm world = MPI_COMM_WORLD, alive;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(world, &rank);
    MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN); /* errors come back as codes */
    if (rank == 1) Sim_FT_kill_me();                   /* rank 1 dies here */
    rc = MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, world);
    MPI_Error_class(rc, &cls);
    if (cls == MPIX_ERR_PROC_FAILED || cls == MPIX_ERR_REVOKED) {
        MPIX_Comm_revoke(world);         /* stop whoever still works in world */
        MPIX_Comm_shrink(world, &alive); /* a new communicator of the survivors */
        MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, alive);
    }
    printf("rank %d: %s, %d ranks left\n", rank,
           cls == MPIX_ERR_PROC_FAILED ? "MPIX_ERR_PROC_FAILED" : "told by a revoke", n);
    MPI_Finalize();
    return 0;
}
