/* inter_revoke: no failure. An intercommunicator between group A (world ranks
 * below n/2) and group B; every rank but world rank 0 waits in MPI_Recv from
 * remote rank 0 (a message never sent) when rank 0 (in A) revokes the
 * intercommunicator: both groups' receives end with REVOKED. Then at every rank
 * MPIX_Comm_is_revoked is 1, a Barrier gives REVOKED, and MPIX_Comm_agree still
 * works on the revoked intercommunicator: SUCCESS, and each group gets the AND
 * of the *remote* group's flags (Open MPI 5 ULFM). Needs 2 <= np <= 30. */
#include "ulfm_common.h"
#include "inter_common.h"

int main(int argc, char **argv)
{
    int rc, x = 0, flag, want, r;
    MPI_Comm local, ic;

    u_init(&argc, &argv, 1);
    if (u_size < 2 || u_size > 30) MPI_Abort(MPI_COMM_WORLD, 2);
    rc = i_make(&local, &ic);
    CHECK_RC("Intercomm_create", rc, MPI_SUCCESS);
    rc = MPI_Barrier(ic);
    CHECK_RC("Barrier(before)", rc, MPI_SUCCESS);
    if (u_rank == 0) {
        u_sleep_ms(300);
        rc = MPIX_Comm_revoke(ic);
        CHECK_RC("revoke", rc, MPI_SUCCESS);
    } else {
        rc = MPI_Recv(&x, 1, MPI_INT, 0, 9, ic, MPI_STATUS_IGNORE);
        u_note("Recv=%s", u_name(rc));
        CHECK_RC("Recv(revoked)", rc, MPIX_ERR_REVOKED);
    }
    flag = -1;
    MPIX_Comm_is_revoked(ic, &flag);
    CHECK(flag == 1, "is_revoked=%d", flag);
    rc = MPI_Barrier(ic);
    CHECK_RC("Barrier(revoked)", rc, MPIX_ERR_REVOKED);

    flag = ~(1 << u_rank);
    want = ~0;
    for (r = 0; r < (i_in_a ? i_nb : i_na); r++) want &= ~(1 << i_world(!i_in_a, r));
    rc = MPIX_Comm_agree(ic, &flag);
    u_note("agree=%s", u_name(rc));
    CHECK(rc == MPI_SUCCESS && flag == want, "agree(revoked)=%s flag %#x (want %#x, the remote group's AND)",
          u_name(rc), (unsigned)flag, (unsigned)want);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&local);
    return u_finish();
}
