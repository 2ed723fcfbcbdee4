/* tests/adversary/dup.c: the `constructors` choice of MPIFT_SEMANTICS.
 *
 * Rank 3 dies after a barrier; each survivor learns of it (a receive from
 * rank 3 fails), then up to 16 times: MPI_Comm_dup of MPI_COMM_WORLD (S:
 * success, F: MPI_ERR_PROC_FAILED, X: another code; a new communicator told S
 * must have 4 members, and a send to rank 3 on it must fail, else X), and
 * MPIX_Comm_agree over "my dup succeeded". The first time every survivor's dup
 * succeeded, an MPI_Barrier on the new communicator must fail with
 * MPI_ERR_PROC_FAILED (its dead member took it up and joins with dummy data)
 * rather than hang. Prints "rank R: DUPS <letters> BARRIER <F|S|X|->" (-: no
 * event where every dup succeeded). tests/adversary/run.sh compares these with
 * the run report's choices. */
#include "ulfm_common.h"

static char letter(int rc)
{
    return rc == MPI_SUCCESS ? 'S' : u_class(rc) == MPIX_ERR_PROC_FAILED ? 'F' : 'X';
}

int main(int argc, char **argv)
{
    int v = 0, k, rc, n, flag;
    char text[64], barrier = '-';
    MPI_Comm d;
    u_init(&argc, &argv, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == 3)
        u_die("after the barrier");
    MPI_Recv(&v, 1, MPI_INT, 3, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (k = 0; k < 16; k++) {
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &d);
        text[k] = letter(rc);
        if (rc == MPI_SUCCESS) {
            MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
            MPI_Comm_size(d, &n);
            if (n != 4 || letter(MPI_Send(&v, 1, MPI_INT, 3, 1, d)) != 'F') text[k] = 'X';
        }
        flag = rc == MPI_SUCCESS;
        MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        if (flag) {
            barrier = letter(MPI_Barrier(d));
            MPI_Comm_free(&d);
            k++;
            break;
        }
        if (rc == MPI_SUCCESS) MPI_Comm_free(&d);
    }
    snprintf(text + k, sizeof text - k, " BARRIER %c", barrier);
    u_line("DUPS", text);
    MPI_Finalize();
    return 0;
}
