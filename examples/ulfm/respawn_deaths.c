/* respawn_deaths: replace the dead, also when more die while recovering.
 *
 * An iterative computation on W (a dup of the world). Each iteration starts
 * with a checkpoint: MPI_Allgather of every rank's state, so that every rank
 * holds every state of the iteration's start (a rank whose allgather failed
 * keeps the copy it advanced itself after the last good iteration); then
 * MPI_Allreduce, and MPIX_Comm_agree on success. Three deaths, by old rank:
 *   A: rank 2, in iteration 1, after its checkpoint went out;
 *   B: rank (2+2)%n, in the first recovery, after the shrink, before the spawn
 *      (with 4 ranks that is the spawn's root);
 *   C: the process that replaced A, in iteration 3 after its checkpoint.
 * Recovery (every member of W): revoke W, shrink it, agree that the survivors
 * know who is missing, spawn as many processes (this program), agree on the
 * spawn, merge, agree over both groups (local group, then the
 * intercommunicator, as the ULFM tutorials do; parents that give a spawn up
 * revoke its intercommunicator, which releases the children from the merge,
 * and say no in that agreement), then the merged communicator's
 * rank 0 broadcasts the places, the iteration and the checkpoint, the merged
 * communicator is split with the old ranks as keys, and an agree over it ends
 * the recovery. Any failure in between starts over from the shrink; a child
 * whose spawn was given up prints "rank 2xx: OK abandoned", one that took old
 * rank r prints its line as rank 100 + r.
 *
 * At the end every rank's state must equal the failure-free computation and
 * its rank in W must be its old rank. RESPAWN_DEATHS picks the deaths (a sum
 * of 1 A, 2 B, 4 C; default 7, 0 none: kill-point campaigns add their own). Needs 4 <= np <= 16 and,
 * under MPIFT, MPIFT_SPARES=4 (or 3 with 4 ranks). */
#include "ulfm_common.h"
#include <stdlib.h>
#include <string.h>

#define ITERS 5
#define MAXN 16
#define VICTIM_A 2

static int deaths = 7;

/* The failure-free state of rank r after `iters` iterations over n ranks. */
static long long expected(int n, int r, int iters)
{
    long long v[MAXN], s;
    int i, it;
    for (i = 0; i < n; i++) v[i] = i + 1;
    for (it = 0; it < iters; it++) {
        s = 0;
        for (i = 0; i < n; i++) s += v[i];
        for (i = 0; i < n; i++) v[i] += s + i;
    }
    return v[r];
}

/* Where the program is: the same at every member of W after each agree. */
struct where {
    int n, orig, it, spawned; /* spawned: the iteration it joined at, plus 1 */
    long long ck[MAXN]; /* every rank's state at the start of iteration it */
};

static int agreed(MPI_Comm c, int ok)
{
    int rc = MPIX_Comm_agree(c, &ok);
    return rc == MPI_SUCCESS && ok;
}

/* Parents and children, on the merged communicator m (parents first): the
 * dead places, the iteration and the checkpoint from m's rank 0, the split in
 * the old order, an agree on all of it. The children learn their place. */
static int place(MPI_Comm m, struct where *at, const int *dead, int nd, MPI_Comm *nw)
{
    long long msg[3 + 2 * MAXN];
    int rc, rc2, mr, msize, i, nd_all;
    MPI_Comm_rank(m, &mr);
    MPI_Comm_size(m, &msize);
    msg[0] = at->n;
    msg[1] = at->it;
    msg[2] = nd;
    for (i = 0; i < nd; i++) msg[3 + i] = dead[i];
    for (i = 0; i < MAXN; i++) msg[3 + MAXN + i] = at->ck[i];
    rc = MPI_Bcast(msg, 3 + 2 * MAXN, MPI_LONG_LONG, 0, m);
    *nw = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS) {
        at->n = (int)msg[0];
        at->it = (int)msg[1];
        nd_all = (int)msg[2];
        for (i = 0; i < MAXN; i++) at->ck[i] = msg[3 + MAXN + i];
        if (at->orig < 0) at->orig = (int)msg[3 + mr - (msize - nd_all)]; /* a child */
    }
    /* Called even where the broadcast failed (errors need not be the same
     * everywhere); the agree decides. */
    rc2 = MPI_Comm_split(m, 0, at->orig < 0 ? 0 : at->orig, nw);
    if (rc == MPI_SUCCESS) rc = rc2;
    if (agreed(m, rc == MPI_SUCCESS)) {
        MPI_Comm_set_errhandler(*nw, MPI_ERRORS_RETURN);
        return 1;
    }
    if (*nw != MPI_COMM_NULL) MPI_Comm_free(nw);
    return 0;
}

/* A spawned process: merge with the parents, agree over both groups, take
 * its place. 0 if the parents gave this spawn up. */
static int join_as_child(MPI_Comm parent, struct where *at, MPI_Comm *w)
{
    MPI_Comm m;
    int rc, flag, rflag, ok;
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    rc = MPI_Intercomm_merge(parent, 1, &m);
    flag = agreed(MPI_COMM_WORLD, rc == MPI_SUCCESS);
    rflag = agreed(parent, rc == MPI_SUCCESS);
    ok = flag && rflag && rc == MPI_SUCCESS;
    if (ok) {
        MPI_Comm_set_errhandler(m, MPI_ERRORS_RETURN);
        at->orig = -1;
        ok = place(m, at, NULL, 0, w);
    }
    if (rc == MPI_SUCCESS) MPI_Comm_free(&m);
    MPI_Comm_free(&parent);
    return ok;
}

/* Every member of W after a failed iteration: replace the dead, whoever else
 * dies meanwhile. W becomes the repaired communicator. */
static void recover(MPI_Comm *w, struct where *at, const char *self, int *rounds)
{
    MPI_Comm sh, ic, m, nw;
    int rc, size, all[MAXN], dead[MAXN], nd, i, k, flag, rflag;
    for (;;) {
        MPIX_Comm_revoke(*w);
        rc = MPIX_Comm_shrink(*w, &sh);
        if (rc != MPI_SUCCESS) {
            u_fail("shrink: %s", u_name(rc));
            return;
        }
        MPI_Comm_free(w);
        *w = sh;
        MPI_Comm_set_errhandler(sh, MPI_ERRORS_RETURN);
        if (++*rounds > 12) {
            u_fail("gave up after %d recovery rounds", *rounds - 1);
            return;
        }
        if ((deaths & 2) && !at->spawned && *rounds == 1 && at->orig == (VICTIM_A + 2) % at->n)
            u_die("in the first recovery, before the spawn");
        rc = MPI_Allgather(&at->orig, 1, MPI_INT, all, 1, MPI_INT, sh);
        if (!agreed(sh, rc == MPI_SUCCESS)) continue;
        MPI_Comm_size(sh, &size);
        for (nd = 0, k = 0; k < at->n; k++) {
            for (i = 0; i < size && all[i] != k; i++) {}
            if (i == size) dead[nd++] = k;
        }
        rc = MPI_Comm_spawn((char *)self, MPI_ARGV_NULL, nd, MPI_INFO_NULL, 0, sh, &ic, MPI_ERRCODES_IGNORE);
        if (!agreed(sh, rc == MPI_SUCCESS)) {
            if (rc == MPI_SUCCESS) {
                /* The children are in the merge: the revoke releases them, and
                 * the agreement over both groups, which they run too, says no. */
                MPIX_Comm_revoke(ic);
                agreed(ic, 0);
                MPI_Comm_free(&ic);
            }
            continue;
        }
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        rc = MPI_Intercomm_merge(ic, 0, &m);
        flag = agreed(sh, rc == MPI_SUCCESS);
        rflag = agreed(ic, rc == MPI_SUCCESS);
        if (!(flag && rflag && rc == MPI_SUCCESS)) {
            if (rc == MPI_SUCCESS) MPI_Comm_free(&m);
            MPI_Comm_free(&ic);
            continue;
        }
        MPI_Comm_free(&ic);
        MPI_Comm_set_errhandler(m, MPI_ERRORS_RETURN);
        k = place(m, at, dead, nd, &nw);
        MPI_Comm_free(&m);
        if (!k) continue;
        MPI_Comm_free(w);
        *w = nw;
        {
            char list[8 * MAXN] = "";
            for (i = 0; i < nd; i++) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%d", i ? "," : "", dead[i]);
            u_note("replaced %s;", list);
        }
        return;
    }
}

int main(int argc, char **argv)
{
    int rc, r, i, ok, rounds = 0;
    long long v, s, got[MAXN];
    const char *d = getenv("RESPAWN_DEATHS");
    struct where at;
    MPI_Comm parent, w;

    u_init(&argc, &argv, 1);
    if (d && *d) deaths = atoi(d);
    memset(&at, 0, sizeof at);
    MPI_Comm_get_parent(&parent);
    if (parent == MPI_COMM_NULL) {
        at.n = u_size;
        if (at.n < 4 || at.n > MAXN) MPI_Abort(MPI_COMM_WORLD, 2);
        at.orig = u_rank;
        for (i = 0; i < at.n; i++) at.ck[i] = i + 1;
        /* A rank dead before this: W is the world shrunk, and the first
         * iteration finds it short (recovery replaces the missing rank). */
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &w);
        if (!agreed(MPI_COMM_WORLD, rc == MPI_SUCCESS)) {
            if (rc == MPI_SUCCESS) MPI_Comm_free(&w);
            rc = MPIX_Comm_shrink(MPI_COMM_WORLD, &w);
            CHECK_RC("shrink(world)", rc, MPI_SUCCESS);
            if (rc != MPI_SUCCESS) return u_finish();
        }
        MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
    } else {
        at.spawned = -1;
        u_rank = 200 + u_rank; /* until it has a place: 100 + its place */
        if (!join_as_child(parent, &at, &w)) {
            u_note("abandoned");
            return u_finish();
        }
        u_rank = 100 + at.orig;
        at.spawned = at.it + 1;
        u_note("replaced rank %d at iteration %d;", at.orig, at.it);
    }
    while (at.it < ITERS && !u_failed) {
        v = at.ck[at.orig];
        MPI_Comm_size(w, &r);
        rc = r < at.n ? MPI_ERR_OTHER : MPI_Allgather(&v, 1, MPI_LONG_LONG, got, 1, MPI_LONG_LONG, w);
        if (rc == MPI_SUCCESS) memcpy(at.ck, got, sizeof(long long) * at.n);
        if ((deaths & 1) && !at.spawned && at.orig == VICTIM_A && at.it == 1) u_die("after its checkpoint of iteration 1");
        if ((deaths & 4) && at.spawned == 2 && at.orig == VICTIM_A && at.it == 3) u_die("(the replacement) after its checkpoint of iteration 3");
        /* Whatever the allgather returned here (ULFM's errors need not be the
         * same at every rank): a collective skipped by some would block the
         * others. The agree decides. */
        if (r == at.n) {
            int rc2 = MPI_Allreduce(&v, &s, 1, MPI_LONG_LONG, MPI_SUM, w);
            if (rc == MPI_SUCCESS) rc = rc2;
        }
        ok = agreed(w, rc == MPI_SUCCESS);
        if (ok) {
            for (i = 0; i < at.n; i++) at.ck[i] += s + i;
            at.it++;
            continue;
        }
        recover(&w, &at, argv[0], &rounds);
    }
    if (!u_failed) {
        MPI_Comm_rank(w, &r);
        CHECK(r == at.orig, "rank %d in W (want %d)", r, at.orig);
        v = at.ck[at.orig];
        CHECK(v == expected(at.n, at.orig, ITERS), "state %lld (want %lld)", v, expected(at.n, at.orig, ITERS));
        MPI_Comm_free(&w);
    }
    return u_finish();
}
