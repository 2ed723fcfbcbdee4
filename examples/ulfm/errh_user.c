/* errh_user: a handler made with MPI_Comm_create_errhandler on MPI_COMM_WORLD is
 * inherited by a dup d (made before the failure). After the victim dies: Recv
 * from it on d calls the handler once with PROC_FAILED, and the handler revokes
 * d (or, racing with another survivor's revoke, REVOKED: allowed); the next
 * Barrier on d calls it once with REVOKED; Recv from the victim on
 * MPI_COMM_WORLD calls it once with PROC_FAILED (no revoke of the world). */
#include "ulfm_common.h"

#define MAXCALLS 8
static int ncalls = 0, calls_cls[MAXCALLS];
static MPI_Comm calls_comm[MAXCALLS];

static void handler(MPI_Comm *comm, int *code, ...)
{
    int cls = u_class(*code);
    if (ncalls < MAXCALLS) calls_cls[ncalls] = cls, calls_comm[ncalls] = *comm;
    ncalls++;
    if (cls == MPIX_ERR_PROC_FAILED && *comm != MPI_COMM_WORLD) MPIX_Comm_revoke(*comm);
}

int main(int argc, char **argv)
{
    int victim, x, rc, flag = 0;
    MPI_Errhandler eh;
    MPI_Comm d, quiet;

    u_init(&argc, &argv, 0);
    victim = u_size - 1;
    /* Made before the handler is set: keeps MPI_ERRORS_RETURN, results ignored. */
    MPI_Comm_dup(MPI_COMM_WORLD, &quiet);
    MPI_Comm_set_errhandler(quiet, MPI_ERRORS_RETURN);
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &d); /* inherits eh */
    MPI_Barrier(d); /* all dups done before any revoke (see shrink.c) */
    /* Everyone has left Barrier(d) before the victim dies: a death racing with
     * the end of Barrier(d) may fail it (ULFM allows that; MPIFT reports it), and
     * the handler would then revoke d one call early (seen once on Open MPI). */
    MPI_Barrier(quiet);
    if (u_rank == victim) u_die("at start");

    /* PROC_FAILED, or REVOKED if another survivor's handler revoked d first. */
    rc = MPI_Recv(&x, 1, MPI_INT, victim, 1, d, MPI_STATUS_IGNORE);
    u_note("Recv(d)=%s", u_name(rc));
    CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED || u_class(rc) == MPIX_ERR_REVOKED,
          "Recv(d)=%s", u_name(rc));
    CHECK(ncalls == 1 && calls_cls[0] == u_class(rc) && calls_comm[0] == d,
          "after Recv(d): %d handler calls", ncalls);
    MPIX_Comm_is_revoked(d, &flag);
    CHECK(flag == 1, "d not revoked by the handler");

    rc = MPI_Barrier(d);
    CHECK_RC("Barrier(d)", rc, MPIX_ERR_REVOKED);
    CHECK(ncalls == 2 && calls_cls[1] == MPIX_ERR_REVOKED && calls_comm[1] == d,
          "after Barrier(d): %d handler calls", ncalls);

    rc = MPI_Recv(&x, 1, MPI_INT, victim, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_RC("Recv(world)", rc, MPIX_ERR_PROC_FAILED);
    CHECK(ncalls == 3 && calls_cls[2] == MPIX_ERR_PROC_FAILED &&
          calls_comm[2] == MPI_COMM_WORLD, "after Recv(world): %d handler calls", ncalls);

    MPI_Comm_free(&d);
    MPI_Comm_free(&quiet);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);
    u_note("handler_calls=%d", ncalls);
    return u_finish();
}
