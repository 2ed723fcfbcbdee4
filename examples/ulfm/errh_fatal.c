/* errh_fatal: MPI_COMM_WORLD keeps the default MPI_ERRORS_ARE_FATAL. After the
 * victim dies, Recv from it at every survivor must abort the whole job: the
 * expected outcome is a NONZERO exit status and no survivor line at all. A
 * survivor whose Recv returns prints FAIL. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, x, rc;

    u_init(&argc, &argv, 0);
    victim = u_size - 1;
    if (u_rank == victim) u_die("at start");

    rc = MPI_Recv(&x, 1, MPI_INT, victim, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    u_fail("Recv from the dead rank returned %s under MPI_ERRORS_ARE_FATAL", u_name(rc));
    return u_finish();
}
