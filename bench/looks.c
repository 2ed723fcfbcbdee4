/* looks.c: what the host MPI's completion calls cost on a request that is
 * complete already (plain MPI, no MPIFT), in instructions counted by callgrind:
 * rank 0 starts an MPI_Isend of one int (an eager send: complete at once) and
 * completes it with one of three variants; only that completion is counted
 * (CALLGRIND_TOGGLE_COLLECT around it). MPIFT's calm waits must test before they
 * could block (a blocked host wait cannot be woken), so a test's cost on a
 * complete request is what each calm MPI_Wait pays (bench/README.md, "A test
 * that looks first").
 *
 *   mpicc -O2 bench/looks.c -o looks
 *   mpiexec -n 1 valgrind --tool=callgrind --collect-atstart=no ./looks V : -n 1 ./looks V
 *   (`bench/probe.sh looks` runs the three variants on both MPIs and prints a table)
 *
 * V = 0: MPI_Wait; 1: MPI_Test (MPI_Wait if it was not complete, which is
 * reported); 2: MPI_Request_get_status, then MPI_Wait. 1,000 counted
 * iterations after 50 uncounted ones. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>

int main(int argc, char **argv)
{
    int rank, variant = argc > 1 ? atoi(argv[1]) : 0, x = 1, y, late = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int it = 0; it < 1050; it++) {
        MPI_Request r;
        MPI_Status st;
        int flag = 0;
        if (rank == 0) {
            MPI_Isend(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);
            if (it >= 50) CALLGRIND_TOGGLE_COLLECT;
            if (variant == 0) {
                MPI_Wait(&r, &st);
            } else if (variant == 1) {
                MPI_Test(&r, &flag, &st);
                if (!flag) MPI_Wait(&r, &st);
            } else {
                MPI_Request_get_status(r, &flag, &st);
                MPI_Wait(&r, &st);
            }
            if (it >= 50) CALLGRIND_TOGGLE_COLLECT;
            late += variant != 0 && !flag;
        } else {
            MPI_Recv(&y, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &st);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0 && late) printf("looks: %d sends were not complete at the first look\n", late);
    MPI_Finalize();
    return 0;
}
