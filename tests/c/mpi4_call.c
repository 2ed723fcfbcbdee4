/* mpi4_call.c: must NOT compile with MPIFT's headers (scripts/run-tests.sh checks
 * that the compiler rejects it and names the function). MPI_Isendrecv is MPI-4.0,
 * outside MPIFT's scope (src/ffi/mpi4_not_covered.tbl): with MPIFT's handle types
 * the call would hand MPIFT handles to the real MPI. */
#include <mpi.h>

int main(int argc, char **argv)
{
    int a = 1, b = 0;
    MPI_Request r;
    MPI_Init(&argc, &argv);
    MPI_Isendrecv(&a, 1, MPI_INT, 0, 0, &b, 1, MPI_INT, 0, 0, MPI_COMM_SELF, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return b != 1;
}
