/* tests/campaign/minimize_prog.c: a program whose failure depends on which ranks
 * die, and on nothing else, for tests/campaign/minimize.sh.
 *
 *   minimize_prog HOLDERS     e.g. `minimize_prog 2,4` or `minimize_prog 3`
 *
 * A checkpoint is kept on the ranks listed in HOLDERS. Every rank works through
 * STEPS local MPI calls (calls 3 .. STEPS+2 alternate MPI_Comm_rank and
 * MPI_Comm_size: kill points that touch no other rank), then the survivors
 * shrink MPI_COMM_WORLD and learn who is left. The first survivor prints
 * `result: OK` while a holder is alive and `result: LOST` when every holder is
 * dead. So deaths at any of those calls give LOST exactly when they include every
 * holder: the outcome does not depend on timing (each victim dies inside its loop,
 * before the shrink, which waits for every rank to either join or die). */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 300

int main(int argc, char **argv)
{
    int rank = 0, size = 0, me, alive_mask = 0, mine, holders = 0;
    MPI_Comm alive;
    MPI_Init(&argc, &argv);                                     /* call 1 */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN); /* call 2 */
    for (int i = 0; i < STEPS; i += 2) {
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
    }
    if (argc != 2 || size > 30) {
        if (rank == 0) fprintf(stderr, "usage: minimize_prog HOLDERS (e.g. 2,4; at most 30 ranks)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *list = strdup(argv[1]);
    for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) holders |= 1 << atoi(t);
    free(list);
    if (MPIX_Comm_shrink(MPI_COMM_WORLD, &alive) != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: MPIX_Comm_shrink failed\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    mine = 1 << rank;
    MPI_Allreduce(&mine, &alive_mask, 1, MPI_INT, MPI_BOR, alive);
    MPI_Comm_rank(alive, &me);
    if (me == 0) {
        printf("survivors:");
        for (int r = 0; r < size; r++)
            if (alive_mask & (1 << r)) printf(" %d", r);
        if (alive_mask & holders)
            printf("\nresult: OK (a checkpoint holder is alive)\n");
        else
            printf("\nresult: LOST (every checkpoint holder, %s, is dead)\n", argv[1]);
    }
    MPI_Comm_free(&alive);
    MPI_Finalize();
    return 0;
}
