/* get_failed_ack: MPIX_Comm_get_failed lists the known failed ranks in detection
 * order and grows as a prefix (v1 = last rank dies, then v2 = last-but-one);
 * failure_get_acked is empty until failure_ack; ack_failed(comm, n, &acked)
 * acknowledges the first n known failures and reports how many are acked.
 * get_failed is polled (it lags behind agree in Open MPI). Needs np >= 3. */
#include "ulfm_common.h"

/* World rank of member i of g, or -1. */
static int member(MPI_Group g, int i)
{
    MPI_Group wg;
    int r = -1;
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(g, 1, &i, wg, &r);
    MPI_Group_free(&wg);
    return r;
}
static int gsize(MPI_Group g) { int n = -1; MPI_Group_size(g, &n); return n; }

int main(int argc, char **argv)
{
    int v1, v2, n, rc, acked = -1;
    MPI_Group g1, g2, ga;

    u_init(&argc, &argv, 1);
    if (u_size < 3) MPI_Abort(MPI_COMM_WORLD, 2);
    v1 = u_size - 1, v2 = u_size - 2;
    if (u_rank == v1) u_die("first");

    u_wait_failure(MPI_COMM_WORLD, 0);
    n = u_poll_failed(MPI_COMM_WORLD, 1, &g1);
    CHECK(n == 1 && member(g1, 0) == v1, "get_failed#1 size %d first %d", n,
          n > 0 ? member(g1, 0) : -1);
    rc = MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &ga);
    CHECK(rc == MPI_SUCCESS && gsize(ga) == 0, "get_acked before ack=%s size %d",
          u_name(rc), gsize(ga));
    MPI_Group_free(&ga);

    u_wait_failure(MPI_COMM_WORLD, 0); /* everybody has seen the first failure */
    if (u_rank == v2) u_die("second");

    u_wait_failure(MPI_COMM_WORLD, 0);
    n = u_poll_failed(MPI_COMM_WORLD, 2, &g2);
    CHECK(n == 2 && member(g2, 0) == v1 && member(g2, 1) == v2,
          "get_failed#2 size %d members %d,%d (prefix of #1 expected)", n,
          member(g2, 0), n > 1 ? member(g2, 1) : -1);
    MPI_Group_free(&g1);
    MPI_Group_free(&g2);

    rc = MPIX_Comm_ack_failed(MPI_COMM_WORLD, 0, &acked);
    CHECK(rc == MPI_SUCCESS && acked == 0, "ack_failed(0)=%s acked %d", u_name(rc), acked);
    rc = MPIX_Comm_ack_failed(MPI_COMM_WORLD, 1, &acked);
    CHECK(rc == MPI_SUCCESS && acked == 1, "ack_failed(1)=%s acked %d", u_name(rc), acked);
    rc = MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &ga);
    u_note("get_acked_after_ack_failed(1)=%d", gsize(ga));
    MPI_Group_free(&ga);
    rc = MPIX_Comm_ack_failed(MPI_COMM_WORLD, u_size, &acked);
    CHECK(rc == MPI_SUCCESS && acked == 2, "ack_failed(all)=%s acked %d", u_name(rc), acked);

    rc = MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    CHECK_RC("failure_ack", rc, MPI_SUCCESS);
    rc = MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &ga);
    CHECK(rc == MPI_SUCCESS && gsize(ga) == 2, "get_acked after ack=%s size %d",
          u_name(rc), gsize(ga));
    MPI_Group_free(&ga);
    return u_finish();
}
