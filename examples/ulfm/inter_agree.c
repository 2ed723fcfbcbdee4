/* inter_agree: MPIX_Comm_agree and MPIX_Comm_iagree on an intercommunicator
 * between group A (world ranks below n/2) and group B. ULFM (Open MPI 5): each
 * group gets the AND of the remote group's flags (without a failure:
 * inter_revoke). (1) The last rank (in B) dies: PROC_FAILED at every survivor,
 * the flag the AND of the remote group's live members. (2) B's survivors acknowledge the
 * failure (ack_failed acknowledges 1 there, 0 in A, where the failed group is
 * empty): still PROC_FAILED, since A cannot acknowledge a failure in its
 * remote group (iagree: inter_iagree). Needs 3 <= np <= 30. (On Open MPI
 * 5.0.11 an agree on an intercommunicator before the death left the next
 * collective on it, or the agree on the world after the death, blocked: so
 * the first agree here comes after the death.) */
#include "ulfm_common.h"
#include "inter_common.h"

/* The AND of ~(1 << world rank) over the remote group, skipping `dead`. */
static int remote_and(int dead)
{
    int r, w, want = ~0;
    for (r = 0; r < (i_in_a ? i_nb : i_na); r++) {
        w = i_world(!i_in_a, r);
        if (w != dead) want &= ~(1 << w);
    }
    return want;
}

int main(int argc, char **argv)
{
    int rc, flag, acked = -1;
    MPI_Comm local, ic;

    i_start_last_dies(&argc, &argv, 30, &local, &ic);
    flag = ~(1 << u_rank);
    rc = MPIX_Comm_agree(ic, &flag);
    u_note("agree(1)=%s", u_name(rc));
    CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED && flag == remote_and(u_size - 1),
          "agree(1)=%s flag %#x (want PROC_FAILED, %#x)", u_name(rc), (unsigned)flag,
          (unsigned)remote_and(u_size - 1));

    rc = MPIX_Comm_ack_failed(ic, 1, &acked);
    CHECK(rc == MPI_SUCCESS && acked == (i_in_a ? 0 : 1), "ack_failed=%s acked %d (want %d)", u_name(rc), acked,
          i_in_a ? 0 : 1);
    flag = ~(1 << u_rank);
    rc = MPIX_Comm_agree(ic, &flag);
    u_note("agree(2)=%s", u_name(rc));
    CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED && flag == remote_and(u_size - 1),
          "agree(2)=%s flag %#x (want PROC_FAILED, %#x)", u_name(rc), (unsigned)flag,
          (unsigned)remote_and(u_size - 1));
    return u_finish();
}
