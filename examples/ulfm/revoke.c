/* revoke: no failure; rank 0 revokes c (a dup of MPI_COMM_WORLD) while rank 1
 * is blocked in Recv from live rank 2, which never sends: that Recv returns
 * REVOKED. Every rank then gets REVOKED from Barrier, Send, Recv, Irecv, Ibarrier,
 * Comm_dup on c; is_revoked is 1; agree and shrink still work on c (the shrunk
 * comm is not revoked and works); Comm_free(c) works. Needs np >= 3. */
#include "ulfm_common.h"

/* Outcome of a non-blocking start (code rc) followed by Wait; noted. */
static int nb(int rc, MPI_Request *req, const char *what)
{
    u_note("%s=%s", what, u_name(rc));
    if (rc != MPI_SUCCESS) return rc;
    rc = MPI_Wait(req, MPI_STATUS_IGNORE);
    u_note("+Wait=%s", u_name(rc));
    return rc;
}

int main(int argc, char **argv)
{
    int x = 1, flag = 0, rc, nsize = 0, sum = -1;
    MPI_Comm c, d = MPI_COMM_NULL, s = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;

    u_init(&argc, &argv, 1);
    if (u_size < 3) MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Barrier(c); /* every Comm_dup done before the revoke (see shrink.c) */

    if (u_rank == 0) {
        u_sleep_ms(200); /* let rank 1 block first (either order gives REVOKED) */
        rc = MPIX_Comm_revoke(c);
        CHECK_RC("revoke", rc, MPI_SUCCESS);
    } else if (u_rank == 1) {
        rc = MPI_Recv(&x, 1, MPI_INT, 2, 1, c, MPI_STATUS_IGNORE);
        CHECK_RC("blocked Recv", rc, MPIX_ERR_REVOKED);
    }
    /* Rank 0 never joins this barrier, so it can only end by the revoke. */
    rc = MPI_Barrier(c);
    CHECK_RC("Barrier", rc, MPIX_ERR_REVOKED);

    rc = MPIX_Comm_is_revoked(c, &flag);
    CHECK(rc == MPI_SUCCESS && flag == 1, "is_revoked=%s flag %d", u_name(rc), flag);
    rc = MPI_Send(&x, 1, MPI_INT, (u_rank + 1) % u_size, 2, c);
    CHECK_RC("Send", rc, MPIX_ERR_REVOKED);
    rc = MPI_Recv(&x, 1, MPI_INT, (u_rank + u_size - 1) % u_size, 2, c, MPI_STATUS_IGNORE);
    CHECK_RC("Recv", rc, MPIX_ERR_REVOKED);
    /* Non-blocking: REVOKED at the start or at completion. A small Isend may
     * complete locally (oracle: Isend and Wait both succeed): allowed, reported. */
    rc = nb(MPI_Isend(&x, 1, MPI_INT, (u_rank + 1) % u_size, 3, c, &req), &req, "Isend");
    CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_REVOKED, "Isend+Wait=%s", u_name(rc));
    rc = nb(MPI_Irecv(&x, 1, MPI_INT, (u_rank + u_size - 1) % u_size, 3, c, &req), &req,
            "Irecv");
    CHECK_RC("Irecv(+Wait)", rc, MPIX_ERR_REVOKED);
    rc = nb(MPI_Ibarrier(c, &req), &req, "Ibarrier");
    CHECK_RC("Ibarrier(+Wait)", rc, MPIX_ERR_REVOKED);
    rc = MPI_Comm_dup(c, &d);
    CHECK_RC("Comm_dup", rc, MPIX_ERR_REVOKED);
    if (rc == MPI_SUCCESS && d != MPI_COMM_NULL) MPI_Comm_free(&d);

    flag = ~(1 << u_rank);
    rc = MPIX_Comm_agree(c, &flag);
    CHECK(rc == MPI_SUCCESS && flag == ~((1 << u_size) - 1), "agree=%s flag %#x",
          u_name(rc), (unsigned)flag);

    rc = MPIX_Comm_shrink(c, &s);
    CHECK_RC("shrink", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN);
        MPI_Comm_size(s, &nsize);
        CHECK(nsize == u_size, "shrunk size %d", nsize);
        flag = -1;
        MPIX_Comm_is_revoked(s, &flag);
        CHECK(flag == 0, "shrunk is_revoked=%d", flag);
        x = 1;
        rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, s);
        CHECK(rc == MPI_SUCCESS && sum == u_size, "Allreduce(shrunk)=%s sum %d",
              u_name(rc), sum);
        MPI_Comm_free(&s);
    }
    rc = MPI_Comm_free(&c);
    CHECK_RC("Comm_free(revoked)", rc, MPI_SUCCESS);
    return u_finish();
}
