/* comm_create_dead: with a known dead member (rank 1), Comm_dup and Comm_split
 * (and Comm_create_group over the live ranks only) fail with PROC_FAILED, also
 * DEAD_LOOPS (500) times in a row (each failed creation must release its context id);
 * after shrink they work, and creating + freeing LOOPS communicators in a loop on
 * the shrunk communicator works. */
#include "ulfm_common.h"

#ifndef LOOPS
#define LOOPS 2000
#endif
#ifndef DEAD_LOOPS
#define DEAD_LOOPS 500
#endif

int main(int argc, char **argv)
{
    int victim = 1, rc, i, n = -1, sum = -1, one = 1;
    MPI_Comm c = MPI_COMM_NULL, s = MPI_COMM_NULL;
    MPI_Group wg, lg;

    u_init(&argc, &argv, 1);
    if (u_rank == victim) u_die("at start");
    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);

    rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
    CHECK_RC("Comm_dup", rc, MPIX_ERR_PROC_FAILED);
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) MPI_Comm_free(&c);
    rc = MPI_Comm_split(MPI_COMM_WORLD, 0, u_rank, &c);
    CHECK_RC("Comm_split", rc, MPIX_ERR_PROC_FAILED);
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) MPI_Comm_free(&c);
    for (i = 0; i < DEAD_LOOPS; i++) {
        rc = (i % 2) ? MPI_Comm_split(MPI_COMM_WORLD, 0, u_rank, &c) : MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (u_class(rc) != MPIX_ERR_PROC_FAILED) break;
        if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
    }
    CHECK(i == DEAD_LOOPS, "failing create loop stopped at %d: %s", i, u_name(rc));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_excl(wg, 1, &victim, &lg);
    rc = MPI_Comm_create_group(MPI_COMM_WORLD, lg, 5, &c);
    u_note("Comm_create_group(live)=%s", u_name(rc));
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED,
          "Comm_create_group=%s", u_name(rc));
    if (rc == MPI_SUCCESS && c != MPI_COMM_NULL) MPI_Comm_free(&c);
    MPI_Group_free(&lg);
    MPI_Group_free(&wg);

    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &s);
    CHECK_RC("shrink", rc, MPI_SUCCESS);
    if (rc != MPI_SUCCESS) return u_finish();
    MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN);

    rc = MPI_Comm_dup(s, &c);
    CHECK_RC("Comm_dup(shrunk)", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) MPI_Comm_free(&c);
    rc = MPI_Comm_split(s, 0, u_rank, &c);
    CHECK_RC("Comm_split(shrunk)", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) MPI_Comm_free(&c);

    for (i = 0; i < LOOPS; i++) {
        rc = (i % 2) ? MPI_Comm_split(s, 0, u_rank, &c) : MPI_Comm_dup(s, &c);
        if (rc != MPI_SUCCESS) break;
        rc = MPI_Comm_free(&c);
        if (rc != MPI_SUCCESS) break;
    }
    CHECK(i == LOOPS, "create/free loop stopped at %d: %s", i, u_name(rc));
    rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, s);
    MPI_Comm_size(s, &n);
    CHECK(rc == MPI_SUCCESS && sum == u_size - 1 && n == u_size - 1,
          "Allreduce(shrunk)=%s sum %d size %d", u_name(rc), sum, n);
    MPI_Comm_free(&s);
    u_note("loops=%d dead_loops=%d", i, DEAD_LOOPS);
    return u_finish();
}
