/* respawn: replace the dead. An iterative computation on W (a dup of the world):
 * every iteration each rank checkpoints its state at its right neighbour
 * (MPI_Sendrecv), then MPI_Allreduce, then MPIX_Comm_agree on success; rank 2
 * dies in iteration 2 once its checkpoint went out. The survivors revoke and shrink
 * W, spawn one process running this program (MPI_Comm_spawn from the shrunk
 * communicator), merge with it (MPI_Intercomm_merge, the child high), split the
 * merged communicator with the old ranks as keys so that the child takes the
 * dead rank's place, send it the dead rank's checkpoint from its buddy, roll
 * back to the iteration's start and redo it. The child finds its place from a
 * broadcast on the merged communicator. At the end every rank's state must
 * equal the failure-free computation (each rank simulates it) and its rank in W
 * its original rank. The child prints its line as "rank <np>" (its own world
 * rank is 0). Where the host MPI cannot spawn (MPICH 4.0 under Hydra), the
 * survivors check that MPI_Comm_spawn returned an error and stop there.
 * Needs 3 <= np <= 16. */
#include "ulfm_common.h"

#define ITERS 5
#define DIE_AT 2
#define VICTIM 2

/* The failure-free state of rank r after `iters` iterations over n ranks. */
static long long expected(int n, int r, int iters)
{
    long long v[16], s;
    int i, it;
    for (i = 0; i < n; i++) v[i] = i + 1;
    for (it = 0; it < iters; it++) {
        s = 0;
        for (i = 0; i < n; i++) s += v[i];
        for (i = 0; i < n; i++) v[i] += s + i;
    }
    return v[r];
}

/* Parents and child: the merged communicator M gives the child its place
 * (the dead rank's old rank) and the iteration to redo; W becomes M split in
 * the old order. */
static void rejoin(MPI_Comm m, int *orig, int dead, int *it, MPI_Comm *w)
{
    int info[2] = {dead, *it}, rc;
    rc = MPI_Bcast(info, 2, MPI_INT, 0, m);
    CHECK_RC("Bcast(merged)", rc, MPI_SUCCESS);
    *it = info[1];
    if (*orig < 0) *orig = info[0]; /* the child */
    rc = MPI_Comm_split(m, 0, *orig, w);
    CHECK_RC("Comm_split(merged)", rc, MPI_SUCCESS);
    MPI_Comm_set_errhandler(*w, MPI_ERRORS_RETURN);
}

int main(int argc, char **argv)
{
    int rc, n, orig, it = 0, ok, arc, r, size, dead = -1, spawned = 0, child;
    long long v, ck_left = -1, s;
    MPI_Comm parent, w, sh, ic, m;

    u_init(&argc, &argv, 1);
    MPI_Comm_get_parent(&parent);
    child = parent != MPI_COMM_NULL;
    if (!child) {
        n = u_size;
        if (n < 3 || n > 16) MPI_Abort(MPI_COMM_WORLD, 2);
        orig = u_rank;
        v = orig + 1;
        MPI_Comm_dup(MPI_COMM_WORLD, &w);
        MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    } else {
        /* The replacement: its place and state come from the survivors. */
        MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
        MPI_Comm_remote_size(parent, &n);
        n += 1;
        u_rank = n; /* its final line must not look like a survivor's */
        rc = MPI_Intercomm_merge(parent, 1, &m);
        CHECK_RC("Intercomm_merge(child)", rc, MPI_SUCCESS);
        if (rc != MPI_SUCCESS) return u_finish();
        orig = -1;
        rejoin(m, &orig, -1, &it, &w);
        rc = MPI_Recv(&v, 1, MPI_LONG_LONG, (orig + 1) % n, 9, w, MPI_STATUS_IGNORE);
        CHECK_RC("Recv(checkpoint)", rc, MPI_SUCCESS);
        u_note("replaced rank %d at iteration %d", orig, it);
        MPI_Comm_free(&m);
        MPI_Comm_disconnect(&parent);
    }

    while (it < ITERS) {
        rc = MPI_Sendrecv(&v, 1, MPI_LONG_LONG, (orig + 1) % n, 8, &ck_left, 1, MPI_LONG_LONG, (orig + n - 1) % n, 8,
                          w, MPI_STATUS_IGNORE);
        if (!child && orig == VICTIM && it == DIE_AT) u_die("after its checkpoint of iteration 2");
        if (rc == MPI_SUCCESS) rc = MPI_Allreduce(&v, &s, 1, MPI_LONG_LONG, MPI_SUM, w);
        ok = (rc == MPI_SUCCESS);
        arc = MPIX_Comm_agree(w, &ok);
        if (arc == MPI_SUCCESS && ok) {
            v += s + orig;
            it++;
            continue;
        }
        /* Recovery: shrink, spawn the replacement, merge, put it in place. */
        MPIX_Comm_revoke(w);
        rc = MPIX_Comm_shrink(w, &sh);
        CHECK_RC("shrink", rc, MPI_SUCCESS);
        if (rc != MPI_SUCCESS) return u_finish();
        MPI_Comm_set_errhandler(sh, MPI_ERRORS_RETURN);
        {
            /* The dead rank: the old rank missing from the shrunk communicator. */
            int mine = orig, all[16], i, k;
            MPI_Comm_size(sh, &size);
            MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, sh);
            for (k = 0; k < n; k++) {
                for (i = 0; i < size && all[i] != k; i++) {}
                if (i == size) dead = k;
            }
        }
        CHECK(dead == VICTIM && size == n - 1, "shrunk size %d, missing rank %d (want %d, %d)", size, dead, n - 1, VICTIM);
        rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, sh, &ic, MPI_ERRCODES_IGNORE);
        if (rc != MPI_SUCCESS) {
            /* A host MPI that cannot spawn: the error is the outcome. */
            u_note("spawn=%s", u_name(rc));
            return u_finish();
        }
        spawned = 1;
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        rc = MPI_Intercomm_merge(ic, 0, &m);
        CHECK_RC("Intercomm_merge(parents)", rc, MPI_SUCCESS);
        if (rc != MPI_SUCCESS) return u_finish();
        MPI_Comm_set_errhandler(m, MPI_ERRORS_RETURN);
        MPI_Comm_free(&w);
        rejoin(m, &orig, dead, &it, &w);
        if (orig == (dead + 1) % n) {
            /* The dead rank's buddy holds its checkpoint of this iteration. */
            rc = MPI_Send(&ck_left, 1, MPI_LONG_LONG, dead, 9, w);
            CHECK_RC("Send(checkpoint)", rc, MPI_SUCCESS);
        }
        MPI_Comm_free(&m);
        MPI_Comm_disconnect(&ic);
        MPI_Comm_free(&sh);
    }
    MPI_Comm_rank(w, &r);
    CHECK(r == orig, "rank %d in W (want %d)", r, orig);
    CHECK(v == expected(n, orig, ITERS), "state %lld (want %lld)", v, expected(n, orig, ITERS));
    if (!child) u_note("spawned=%d", spawned);
    MPI_Comm_free(&w);
    return u_finish();
}
