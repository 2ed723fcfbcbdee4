/* inter_iagree: MPIX_Comm_iagree on an intercommunicator between group A (world
 * ranks below n/2) and group B, after the last rank (in B) died: MPI_Wait gives
 * PROC_FAILED at every survivor and the flag is the AND of the remote group's
 * live members, as MPIX_Comm_agree gives (inter_agree). Open MPI 5.0.11 ULFM
 * returns PROC_FAILED without setting the flag, and in one probe run then
 * blocked in MPI_Finalize (tests/ulfm/oracle-outcomes.txt). Needs
 * 3 <= np <= 30. */
#include "ulfm_common.h"
#include "inter_common.h"

int main(int argc, char **argv)
{
    int rc, flag, r, w, want = ~0;
    MPI_Comm local, ic;
    MPI_Request req;

    i_start_last_dies(&argc, &argv, 30, &local, &ic);
    for (r = 0; r < (i_in_a ? i_nb : i_na); r++) {
        w = i_world(!i_in_a, r);
        if (w != u_size - 1) want &= ~(1 << w);
    }
    flag = ~(1 << u_rank);
    rc = MPIX_Comm_iagree(ic, &flag, &req);
    CHECK_RC("iagree start", rc, MPI_SUCCESS);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    u_note("iagree=%s", u_name(rc));
    CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED && flag == want, "iagree=%s flag %#x (want PROC_FAILED, %#x)",
          u_name(rc), (unsigned)flag, (unsigned)want);
    return u_finish();
}
