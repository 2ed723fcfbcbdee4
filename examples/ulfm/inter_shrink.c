/* inter_shrink: MPIX_Comm_shrink on an intercommunicator between group A
 * (world ranks below n/2) and group B, after the last rank (in B) died. The
 * ULFM specification: the result is an intercommunicator of the live members of
 * both groups, in their old order. Checked: it is an intercommunicator, A keeps
 * its size and B lost one; an Allgather on it gives each group the remote
 * group's world ranks in order; a Barrier works; MPI_Intercomm_merge (B high)
 * gives every survivor in world order. Open MPI 5.0.11 ULFM fails this shrink
 * with MPI_ERR_INTERN (tests/ulfm/oracle-outcomes.txt). Needs 3 <= np <= 64. */
#include "ulfm_common.h"
#include "inter_common.h"

int main(int argc, char **argv)
{
    int rc, inter = 0, ls = -1, rs = -1, i, got[64], mine, nrem, want, sum;
    MPI_Comm local, ic, sh, merged;

    i_start_last_dies(&argc, &argv, 64, &local, &ic);
    rc = MPIX_Comm_shrink(ic, &sh);
    u_note("shrink=%s", u_name(rc));
    CHECK_RC("shrink", rc, MPI_SUCCESS);
    if (rc != MPI_SUCCESS) return u_finish();
    MPI_Comm_set_errhandler(sh, MPI_ERRORS_RETURN);
    MPI_Comm_test_inter(sh, &inter);
    MPI_Comm_size(sh, &ls);
    MPI_Comm_remote_size(sh, &rs);
    nrem = i_in_a ? i_nb - 1 : i_na;
    CHECK(inter && ls == (i_in_a ? i_na : i_nb - 1) && rs == nrem, "shrunk: inter=%d size %d remote size %d", inter,
          ls, rs);
    if (!inter || rs != nrem) return u_finish();

    mine = u_rank;
    rc = MPI_Allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, sh);
    CHECK_RC("Allgather(shrunk)", rc, MPI_SUCCESS);
    for (i = 0; rc == MPI_SUCCESS && i < nrem; i++)
        CHECK(got[i] == i_world(!i_in_a, i), "remote rank %d is world %d (want %d)", i, got[i], i_world(!i_in_a, i));
    rc = MPI_Barrier(sh);
    CHECK_RC("Barrier(shrunk)", rc, MPI_SUCCESS);

    rc = MPI_Intercomm_merge(sh, i_in_a ? 0 : 1, &merged);
    CHECK_RC("Intercomm_merge", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(merged, MPI_ERRORS_RETURN);
        MPI_Comm_rank(merged, &i);
        CHECK(i == u_rank, "merged rank %d (want %d, the world order)", i, u_rank);
        rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, merged);
        want = (u_size - 1) * (u_size - 2) / 2;
        CHECK(rc == MPI_SUCCESS && sum == want, "Allreduce(merged)=%s sum %d (want %d)", u_name(rc), sum, want);
        MPI_Comm_free(&merged);
    }
    MPI_Comm_free(&sh);
    return u_finish();
}
