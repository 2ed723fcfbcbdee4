/* recv_dead_other_tag: rank 1 sends rank 0 a message with tag 5 on a split of the
 * world, then dies. Rank 0 waits (Waitall) on an Irecv from rank 1 with tag 7,
 * which nothing will ever match: PROC_FAILED, not a hang (the tag-5 message must
 * not keep it waiting; Open MPI 5 ULFM: ERR_IN_STATUS with PROC_FAILED in the
 * status). Then a Recv of the tag-5 message, which arrived before the death: the
 * oracle fails it too (PROC_FAILED); delivering it (SUCCESS, the value sent) is
 * allowed. The other survivors agree and shrink meanwhile. */
#include "ulfm_common.h"

int main(int argc, char **argv)
{
    int rc, x = 41, y = 0, flag = 1;
    MPI_Comm c, s;
    MPI_Request q[1];

    u_init(&argc, &argv, 1);
    MPI_Comm_split(MPI_COMM_WORLD, 0, u_rank, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    if (u_rank == 1) {
        MPI_Send(&x, 1, MPI_INT, 0, 5, c);
        MPI_Barrier(c);
        u_die("after sending tag 5");
    }
    MPI_Barrier(c);
    if (u_rank == 0) {
        MPI_Irecv(&y, 1, MPI_INT, 1, 7, c, &q[0]);
        rc = MPI_Waitall(1, q, MPI_STATUSES_IGNORE);
        u_note("Waitall(tag 7)=%s", u_name(rc));
        CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED || u_class(rc) == MPI_ERR_IN_STATUS,
              "Waitall on a receive from the dead rank=%s", u_name(rc));
        rc = MPI_Recv(&y, 1, MPI_INT, 1, 5, c, MPI_STATUS_IGNORE);
        u_note("Recv(tag 5)=%s", u_name(rc));
        CHECK((rc == MPI_SUCCESS && y == 41) || u_class(rc) == MPIX_ERR_PROC_FAILED,
              "Recv of the message sent before the death=%s, value %d", u_name(rc), y);
    }
    rc = MPIX_Comm_agree(c, &flag);
    MPIX_Comm_failure_ack(c);
    rc = MPIX_Comm_shrink(c, &s);
    CHECK_RC("shrink", rc, MPI_SUCCESS);
    MPI_Comm_free(&s);
    MPI_Comm_free(&c);
    return u_finish();
}
