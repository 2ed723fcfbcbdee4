/* unjoinable_dead: calls on MPI_COMM_WORLD that a dead rank cannot take part in,
 * after the last rank died (failure known via agree): Win_allocate, Win_create,
 * File_open, Comm_create_group with a group that contains the dead rank and with
 * one of live ranks only. None may hang; each returns PROC_FAILED, except
 * Comm_create_group over live ranks, which may also succeed. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, rc, i, n, *ranks, *base = NULL, local[1];
    MPI_Win win;
    MPI_File fh;
    MPI_Group world, g;
    MPI_Comm c;
    char path[128];

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    if (u_rank == victim) u_die("at start");
    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);

    rc = MPI_Win_allocate((MPI_Aint)sizeof(int), (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    u_note("Win_allocate=%s", u_name(rc));
    CHECK_RC("Win_allocate", rc, MPIX_ERR_PROC_FAILED);
    rc = MPI_Win_create(local, (MPI_Aint)sizeof local, (int)sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    u_note("Win_create=%s", u_name(rc));
    CHECK_RC("Win_create", rc, MPIX_ERR_PROC_FAILED);
    snprintf(path, sizeof path, "/tmp/unjoinable_dead.%d", (int)u_size);
    rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                       MPI_INFO_NULL, &fh);
    u_note("File_open=%s", u_name(rc));
    CHECK_RC("File_open", rc, MPIX_ERR_PROC_FAILED);

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    ranks = (int *)malloc(sizeof(int) * (size_t)u_size);
    for (i = 0; i < u_size; i++) ranks[i] = i;
    for (n = u_size; n >= u_size - 1; n--) { /* with the dead rank, then without */
        MPI_Group_incl(world, n, ranks, &g);
        c = MPI_COMM_NULL;
        rc = MPI_Comm_create_group(MPI_COMM_WORLD, g, 9, &c);
        u_note("Comm_create_group(%s)=%s", n == u_size ? "all" : "live", u_name(rc));
        if (n == u_size) {
            CHECK_RC("Comm_create_group with the dead rank", rc, MPIX_ERR_PROC_FAILED);
        } else {
            /* Live ranks only: Open MPI 5 ULFM refuses it (PROC_FAILED); MPIFT creates
             * it, the same answer at every member (docs/ULFM-DIFFERENCES.md). */
            CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Comm_create_group(live)=%s", u_name(rc));
        }
        if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) MPI_Comm_free(&c);
        MPI_Group_free(&g);
    }
    MPI_Group_free(&world);
    free(ranks);
    return u_finish();
}
