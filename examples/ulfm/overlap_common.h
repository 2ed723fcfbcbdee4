/* overlap_common.h: what the overlap_* programs share. Include after
 * ulfm_common.h.
 *
 * The survivors' world ranks (ascending) are in ov_live[0..ov_n_live-1]; each
 * program fills them in before its deaths. */
#ifndef OVERLAP_COMMON_H
#define OVERLAP_COMMON_H

#define MAXP 64

static int ov_n_live, ov_live[MAXP];

/* A communicator of the listed world ranks in that order (MPI_COMM_NULL at the
 * others), with MPI_ERRORS_RETURN. Collective over MPI_COMM_WORLD. */
static inline MPI_Comm ov_split_comm(const int *ranks, int k)
{
    int i, color = MPI_UNDEFINED, key = 0;
    MPI_Comm c;
    for (i = 0; i < k; i++)
        if (ranks[i] == u_rank) color = 0, key = i;
    MPI_Comm_split(MPI_COMM_WORLD, color, key, &c);
    if (c != MPI_COMM_NULL) MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

/* Survivors: each sends to the next survivor and receives from the previous;
 * `me` is this rank's index in ov_live. */
static inline void ov_ring(int me)
{
    int to = ov_live[(me + 1) % ov_n_live], from = ov_live[(me + ov_n_live - 1) % ov_n_live];
    int x = 1000 + u_rank, y = -1, rc;
    rc = MPI_Sendrecv(&x, 1, MPI_INT, to, 7, &y, 1, MPI_INT, from, 7, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && y == 1000 + from, "ring Sendrecv=%s got %d (want %d)", u_name(rc),
          y, 1000 + from);
}

/* Shrinks c (named `what` in messages): the survivors, in the old order; an
 * Allreduce on the result works. */
static inline void ov_shrink_check(MPI_Comm c, const char *what, int me)
{
    MPI_Comm s = MPI_COMM_NULL;
    int rc, size = -1, r = -1, sum = -1, want = 0, i;
    rc = MPIX_Comm_shrink(c, &s);
    CHECK_RC(what, rc, MPI_SUCCESS);
    if (rc != MPI_SUCCESS) return;
    MPI_Comm_set_errhandler(s, MPI_ERRORS_RETURN);
    MPI_Comm_size(s, &size);
    MPI_Comm_rank(s, &r);
    CHECK(size == ov_n_live && r == me, "shrunk size %d rank %d (want %d, %d)", size, r, ov_n_live,
          me);
    for (i = 0; i < ov_n_live; i++) want += ov_live[i];
    rc = MPI_Allreduce(&u_rank, &sum, 1, MPI_INT, MPI_SUM, s);
    CHECK(rc == MPI_SUCCESS && sum == want, "Allreduce(shrunk)=%s sum %d (want %d)", u_name(rc),
          sum, want);
    u_note("shrunk=%d", size);
    MPI_Comm_free(&s);
}

#endif
