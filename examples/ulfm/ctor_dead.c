/* ctor_dead: communicator constructors and other calls on MPI_COMM_WORLD after
 * the last rank died (failure known via agree). None may hang. Comm_idup (the
 * error comes with its Wait), Graph_create, Dist_graph_create_adjacent,
 * Dist_graph_create: PROC_FAILED at every survivor. Comm_disconnect of a duplicate
 * made before the death: SUCCESS (as the oracle does: it frees the communicator). Intercomm_create between the even and the odd
 * ranks (local communicators made before the death; the victim, an odd non-leader
 * when np is even): PROC_FAILED at the survivors of the victim's group, PROC_FAILED
 * or SUCCESS at the others. Mprobe from the dead rank: PROC_FAILED. */
#include "ulfm_common.h"

static void free_if(MPI_Comm *c)
{
    if (*c != MPI_COMM_NULL) MPI_Comm_free(c);
}

int main(int argc, char **argv)
{
    int victim, rc, i, left, right, n1 = 1, *index, *edges;
    MPI_Comm dup, local, c = MPI_COMM_NULL;
    MPI_Request r;
    MPI_Message m;
    MPI_Status st;

    u_init(&argc, &argv, 1);
    victim = u_size - 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, u_rank % 2, u_rank, &local);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    /* Everyone has left the split before the victim dies: news of a death that
     * arrives while a constructor runs may fail it (ULFM allows that), and the
     * calls below need `local`. */
    MPI_Barrier(MPI_COMM_WORLD);
    if (u_rank == victim) u_die("after the duplicates");
    left = (u_rank - 1 + u_size) % u_size;
    right = (u_rank + 1) % u_size;

    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree", rc, MPIX_ERR_PROC_FAILED);

    rc = MPI_Comm_idup(MPI_COMM_WORLD, &c, &r);
    if (rc == MPI_SUCCESS) rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    u_note("Comm_idup=%s", u_name(rc));
    CHECK_RC("Comm_idup", rc, MPIX_ERR_PROC_FAILED);
    free_if(&c);

    index = (int *)malloc(sizeof(int) * (size_t)u_size);
    edges = (int *)malloc(sizeof(int) * 2 * (size_t)u_size);
    for (i = 0; i < u_size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i - 1 + u_size) % u_size;
        edges[2 * i + 1] = (i + 1) % u_size;
    }
    c = MPI_COMM_NULL;
    rc = MPI_Graph_create(MPI_COMM_WORLD, u_size, index, edges, 0, &c);
    u_note("Graph_create=%s", u_name(rc));
    CHECK_RC("Graph_create", rc, MPIX_ERR_PROC_FAILED);
    if (rc == MPI_SUCCESS) free_if(&c);
    c = MPI_COMM_NULL;
    rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                        MPI_INFO_NULL, 0, &c);
    u_note("Dist_graph_create_adjacent=%s", u_name(rc));
    CHECK_RC("Dist_graph_create_adjacent", rc, MPIX_ERR_PROC_FAILED);
    if (rc == MPI_SUCCESS) free_if(&c);
    c = MPI_COMM_NULL;
    rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &u_rank, &n1, &right, &n1, MPI_INFO_NULL, 0, &c);
    u_note("Dist_graph_create=%s", u_name(rc));
    CHECK_RC("Dist_graph_create", rc, MPIX_ERR_PROC_FAILED);
    if (rc == MPI_SUCCESS) free_if(&c);

    c = MPI_COMM_NULL;
    rc = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, u_rank % 2 == 0 ? 1 : 0, 7, &c);
    u_note("Intercomm_create=%s", u_name(rc));
    if (u_rank % 2 == victim % 2)
        CHECK_RC("Intercomm_create", rc, MPIX_ERR_PROC_FAILED);
    else
        CHECK(rc == MPI_SUCCESS || u_class(rc) == MPIX_ERR_PROC_FAILED, "Intercomm_create=%s", u_name(rc));
    if (rc == MPI_SUCCESS) free_if(&c);

    rc = MPI_Mprobe(victim, 3, MPI_COMM_WORLD, &m, &st);
    u_note("Mprobe=%s", u_name(rc));
    CHECK_RC("Mprobe", rc, MPIX_ERR_PROC_FAILED);

    rc = MPI_Comm_disconnect(&dup);
    u_note("Comm_disconnect=%s", u_name(rc));
    CHECK(rc == MPI_SUCCESS && dup == MPI_COMM_NULL, "Comm_disconnect=%s", u_name(rc));
    if (rc != MPI_SUCCESS) free_if(&dup);
    MPI_Comm_free(&local);
    free(index);
    free(edges);
    return u_finish();
}
