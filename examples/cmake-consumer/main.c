/* Unmodified MPI code: MPIFT::MPIFT puts include/compat first, so <mpi.h> is MPIFT. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, sum = 0, flag = 1;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
#ifndef MPIFT_VERSION
#error "the MPIFT::MPIFT target should bring MPIFT's headers"
#endif
    MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    if (rank == 0) printf("consumer: %d ranks, sum %d, agree %d, built for %s\n", size, sum, flag, Sim_FT_built_for());
    MPI_Finalize();
    return (sum == size * (size - 1) / 2 && flag == 1) ? 0 : 1;
}
