/* spawn_multiple_dead: MPI_Comm_spawn_multiple of this program twice (1 process
 * with argument "one", 2 with "two x") from MPI_COMM_WORLD; each child checks
 * its world (3 processes) and its arguments, the parents check the error codes.
 * Everybody merges the intercommunicator (children high); the last process of
 * the merged communicator (a child) dies; the others' MPI_Barrier and
 * MPIX_Comm_agree on the merged communicator must report the death
 * (MPIX_ERR_PROC_FAILED from the agree). Children print their lines as rank
 * 100 + their world rank. Under MPIFT it needs MPIFT_SPARES=3. */
#include "ulfm_common.h"
#include <string.h>
int main(int argc, char **argv)
{
    MPI_Comm parent, ic, m;
    int rc, r, n, ok;
    u_init(&argc, &argv, 1);
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        char *cmds[2] = {argv[0], argv[0]};
        char *a0[] = {"one", NULL}, *a1[] = {"two", "x", NULL};
        char **argvs[2] = {a0, a1};
        int np[2] = {1, 2}, codes[3] = {-1, -1, -1};
        MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
        rc = MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &ic, codes);
        CHECK_RC("spawn_multiple", rc, MPI_SUCCESS);
        if (rc != MPI_SUCCESS) return u_finish();
        if (u_rank == 0) CHECK(codes[0] == 0 && codes[1] == 0 && codes[2] == 0, "codes %d %d %d", codes[0], codes[1], codes[2]);
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        rc = MPI_Intercomm_merge(ic, 0, &m);
    } else {
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        CHECK(n == 3, "child world %d", n);
        if (u_rank == 0) CHECK(argc == 2 && !strcmp(argv[1], "one"), "argv %d %s", argc, argc > 1 ? argv[1] : "-");
        else CHECK(argc == 3 && !strcmp(argv[1], "two") && !strcmp(argv[2], "x"), "argv %d", argc);
        u_rank += 100;
        MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
        rc = MPI_Intercomm_merge(parent, 1, &m);
    }
    CHECK_RC("merge", rc, MPI_SUCCESS);
    if (rc != MPI_SUCCESS) return u_finish();
    MPI_Comm_set_errhandler(m, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m, &r);
    MPI_Comm_size(m, &n);
    if (r == n - 1) u_die("last of the merged");
    ok = 1;
    MPI_Barrier(m); /* may succeed or fail: the agree must know */
    rc = MPIX_Comm_agree(m, &ok);
    CHECK(u_class(rc) == MPIX_ERR_PROC_FAILED, "agree %s", u_name(rc));
    u_note("size %d", n);
    return u_finish();
}
