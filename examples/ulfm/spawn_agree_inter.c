/* spawn_agree_inter: the check of the ULFM tutorial's MPIX_Comm_replace (the
 * pattern of HEAT's jacobi_ulfm). The last rank dies; the survivors shrink the
 * world and spawn one process running this program; then parents and child run
 * MPIX_Comm_agree on the spawn intercommunicator: each group gets the other
 * group's AND (parents pass 0x7, the child 0x5: parents read 0x5, the child
 * 0x7); before it, they merge, and an agree over the merged communicator gives
 * the AND of all. Launched without spare processes, the host spawns a second job;
 * at 29b67cc the agreement there returned MPI_ERR_COMM and the child aborted.
 * Where the host cannot spawn (Debian's MPICH under Hydra) the survivors check
 * that the spawn's error names MPIFT_SPARES. The child prints "rank <np>". */
#include "ulfm_common.h"

static void agree_both(MPI_Comm ic, MPI_Comm *m, int mine, int want, int high)
{
    int flag, rc = MPI_Intercomm_merge(ic, high, m);
    CHECK_RC("Intercomm_merge", rc, MPI_SUCCESS);
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(*m, MPI_ERRORS_RETURN);
        flag = mine;
        rc = MPIX_Comm_agree(*m, &flag);
        CHECK(rc == MPI_SUCCESS && flag == 0x5, "agree(merged)=%s flag %#x (want 0x5)", u_name(rc), flag);
    }
    /* Last: on the oracle (Open MPI 5.0.11), a collective after an agreement on
     * an intercommunicator with another job aborts the job. */
    flag = mine;
    rc = MPIX_Comm_agree(ic, &flag);
    CHECK(rc == MPI_SUCCESS && flag == want, "agree(intercomm)=%s flag %#x (want %#x)", u_name(rc), flag, want);
    u_note("agree(intercomm) %#x", flag);
}

int main(int argc, char **argv)
{
    MPI_Comm parent, sh, ic, m = MPI_COMM_NULL;
    int rc, n, len;
    char text[MPI_MAX_ERROR_STRING];

    u_init(&argc, &argv, 1);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
        MPI_Comm_remote_size(parent, &n);
        u_rank = n + 1; /* its final line must not look like a survivor's */
        agree_both(parent, &m, 0x5, 0x7, 1);
        if (m != MPI_COMM_NULL) MPI_Comm_free(&m);
        MPI_Comm_disconnect(&parent);
        return u_finish();
    }
    if (u_rank == u_size - 1) u_die("at start");
    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree(world)", rc, MPIX_ERR_PROC_FAILED);
    MPIX_Comm_failure_ack(MPI_COMM_WORLD);
    rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &sh);
    CHECK_RC("shrink", rc, MPI_SUCCESS);
    if (rc != MPI_SUCCESS) return u_finish();
    MPI_Comm_set_errhandler(sh, MPI_ERRORS_RETURN);
    rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, sh, &ic, MPI_ERRCODES_IGNORE);
    if (rc != MPI_SUCCESS) {
        /* A host that cannot spawn: the error must say how to get a spawn. */
        MPI_Error_string(rc, text, &len);
        u_note("spawn=%s", u_name(rc));
#ifdef MPIFT_VERSION
        CHECK(strstr(text, "MPIFT_SPARES") != NULL, "spawn error without a hint: %s", text);
#endif
        MPI_Comm_free(&sh);
        return u_finish();
    }
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    agree_both(ic, &m, 0x7, 0x5, 0);
    if (m != MPI_COMM_NULL) MPI_Comm_free(&m);
    MPI_Comm_disconnect(&ic);
    MPI_Comm_free(&sh);
    return u_finish();
}
