/* agree: the flag is the bitwise AND of the live ranks' contributions. Rank r
 * contributes ~(1 << r). Before the failure: SUCCESS. After the victim died:
 * PROC_FAILED at every survivor (twice: reading the result does not acknowledge)
 * with the flag still the AND of the live contributions. After failure_ack at
 * every survivor: SUCCESS (agree and iagree). */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int victim, i, rc, flag, want_all, want_live, round;
    MPI_Request req;
    MPI_Group acked;

    u_init(&argc, &argv, 1);
    victim = u_size / 2;
    want_all = ~((1 << u_size) - 1);
    want_live = want_all | (1 << victim); /* the dead rank's bit stays set */

    flag = ~(1 << u_rank);
    rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    CHECK(rc == MPI_SUCCESS && flag == want_all, "agree0=%s flag %#x", u_name(rc),
          (unsigned)flag);
    if (u_rank == victim) u_die("after the first agree");

    for (round = 1; round <= 2; round++) {
        flag = ~(1 << u_rank);
        rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
        CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED && flag == want_live,
              "agree%d=%s flag %#x (want %#x)", round, u_name(rc), (unsigned)flag,
              (unsigned)want_live);
    }

    rc = MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    CHECK_RC("failure_ack", rc, MPI_SUCCESS);
    rc = MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked);
    i = -1;
    if (rc == MPI_SUCCESS) MPI_Group_size(acked, &i), MPI_Group_free(&acked);
    CHECK(i == 1, "acked size %d", i);

    flag = ~(1 << u_rank);
    rc = MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
    CHECK(rc == MPI_SUCCESS && flag == want_live, "agree3 after ack=%s flag %#x",
          u_name(rc), (unsigned)flag);

    flag = ~(1 << u_rank);
    rc = MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &req);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && flag == want_live, "iagree after ack=%s flag %#x",
          u_name(rc), (unsigned)flag);
    return u_finish();
}
