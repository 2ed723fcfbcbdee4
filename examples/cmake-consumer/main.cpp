// The explicit two-header include, from C++.
#include "MPI-FT.h"
#include "MPI-FT_redefine.h"
#include <cstdio>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_rank(dup, &rank);
    MPI_Comm_free(&dup);
    if (rank == 0) std::printf("consumer_cxx: ok\n");
    MPI_Finalize();
    return dup == MPI_COMM_NULL ? 0 : 1;
}
