/* inter_common.h: the intercommunicator the inter_* programs share. Include
 * after ulfm_common.h.
 *
 * Group A is the world ranks below size/2, group B the others; the leaders are
 * each group's first rank, the peer communicator MPI_COMM_WORLD. */
#ifndef INTER_COMMON_H
#define INTER_COMMON_H

static int i_na, i_nb, i_in_a;

/* Makes the intercommunicator (errors return) and its local communicator. */
static inline int i_make(MPI_Comm *local, MPI_Comm *ic)
{
    int rc;
    i_na = u_size / 2;
    i_nb = u_size - i_na;
    i_in_a = u_rank < i_na;
    MPI_Comm_split(MPI_COMM_WORLD, i_in_a ? 0 : 1, u_rank, local);
    rc = MPI_Intercomm_create(*local, 0, MPI_COMM_WORLD, i_in_a ? i_na : 0, 77, ic);
    if (rc == MPI_SUCCESS) MPI_Comm_set_errhandler(*ic, MPI_ERRORS_RETURN);
    return rc;
}

/* World rank of rank r of group A (in_a) or B. */
static inline int i_world(int in_a, int r)
{
    return in_a ? r : i_na + r;
}

/* The world ranks of a group, one int per member, through translation. */
static inline void i_group_worlds(MPI_Group g, int *n, int *out, int max)
{
    int i, r[64];
    MPI_Group wg;
    MPI_Group_size(g, n);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    for (i = 0; i < *n && i < max && i < 64; i++) r[i] = i;
    MPI_Group_translate_ranks(g, *n < max ? *n : max, r, wg, out);
    MPI_Group_free(&wg);
}

/* The start the programs with a death share: the intercommunicator (checked
 * with a Barrier), then the last rank (in B) dies and the survivors wait until
 * the world knows it. Returns only at the survivors. */
static inline void i_start_last_dies(int *argc, char ***argv, int maxnp, MPI_Comm *local, MPI_Comm *ic)
{
    int rc;
    u_init(argc, argv, 1);
    if (u_size < 3 || u_size > maxnp) MPI_Abort(MPI_COMM_WORLD, 2);
    rc = i_make(local, ic);
    CHECK_RC("Intercomm_create", rc, MPI_SUCCESS);
    rc = MPI_Barrier(*ic);
    CHECK_RC("Barrier(before)", rc, MPI_SUCCESS);
    if (u_rank == u_size - 1) u_die("after Intercomm_create");
    rc = u_wait_failure(MPI_COMM_WORLD, 1);
    CHECK_RC("agree(world)", rc, MPIX_ERR_PROC_FAILED);
}

#endif
