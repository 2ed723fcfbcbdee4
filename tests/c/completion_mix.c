/* completion_mix: the six completion calls on arrays that mix what programs put
 * in them (MPI-3.1 §3.7.3-3.7.5): MPI_REQUEST_NULL, an inactive persistent
 * request, a started persistent one, non-blocking sends and receives (one with
 * MPI_ANY_SOURCE), all messages already arrived or not. MPIFT answers these
 * on its calm path (engine::batch_fast) when nothing failed, and on its general
 * path otherwise; both must answer what plain MPI answers. Checked: flags,
 * indices, outcount, each status's source, tag and count, which handles became
 * MPI_REQUEST_NULL (persistent ones stay), the empty status of null entries, and
 * MPI_ERR_IN_STATUS with MPI_ERR_TRUNCATE in the status of a truncated receive
 * (MPI_ERRORS_RETURN). Messages go from this rank to itself, so any np works.
 * Prints "OK" and exits 0, or names each failed check and exits 1. */
#include <mpi.h>
#include <stdio.h>

static int failed;
#define CHECK(cond, ...) do { if (!(cond)) { printf("FAIL "); printf(__VA_ARGS__); printf("\n"); failed = 1; } } while (0)

enum { N = 6 };
static int me, sbuf[N], rbuf[N], pval, pbuf;
static MPI_Request req[N], psend;

/* req = {NULL, psend (inactive), Irecv tag 2 (ANY_SOURCE), Isend tag 2,
 * Irecv tag 4, Isend tag 4}. If `arrived`, the sends go first and both messages
 * are here (unexpected) before the receives are posted. */
static void setup(int arrived)
{
    int i, flag;
    MPI_Status st;
    for (i = 0; i < N; i++) rbuf[i] = -1;
    req[0] = MPI_REQUEST_NULL;
    req[1] = psend;
    sbuf[3] = 300 + me;
    sbuf[5] = 500 + me;
    if (arrived) {
        MPI_Isend(&sbuf[3], 1, MPI_INT, me, 2, MPI_COMM_WORLD, &req[3]);
        MPI_Isend(&sbuf[5], 1, MPI_INT, me, 4, MPI_COMM_WORLD, &req[5]);
        for (flag = 0; !flag;) MPI_Iprobe(me, 4, MPI_COMM_WORLD, &flag, &st);
        for (flag = 0; !flag;) MPI_Iprobe(me, 2, MPI_COMM_WORLD, &flag, &st);
    }
    MPI_Irecv(&rbuf[2], 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &req[2]);
    MPI_Irecv(&rbuf[4], 1, MPI_INT, me, 4, MPI_COMM_WORLD, &req[4]);
    if (!arrived) {
        MPI_Isend(&sbuf[3], 1, MPI_INT, me, 2, MPI_COMM_WORLD, &req[3]);
        MPI_Isend(&sbuf[5], 1, MPI_INT, me, 4, MPI_COMM_WORLD, &req[5]);
    }
}

static void check_recv(const char *call, int i, MPI_Status *st)
{
    int cnt = -1;
    MPI_Get_count(st, MPI_INT, &cnt);
    CHECK(st->MPI_SOURCE == me && st->MPI_TAG == i && cnt == 1, "%s: receive %d status src %d tag %d count %d", call, i,
          st->MPI_SOURCE, st->MPI_TAG, cnt);
    CHECK(rbuf[i] == (i == 2 ? 300 : 500) + me, "%s: receive %d got %d", call, i, rbuf[i]);
}

static void check_all(const char *call, MPI_Status *st)
{
    int i;
    for (i = 0; i < N; i++) {
        if (i == 1) CHECK(req[1] == psend, "%s: the persistent request must stay", call);
        else CHECK(req[i] == MPI_REQUEST_NULL, "%s: request %d not released", call, i);
    }
    CHECK(st[0].MPI_SOURCE == MPI_ANY_SOURCE && st[0].MPI_TAG == MPI_ANY_TAG, "%s: null entry's status not empty", call);
    check_recv(call, 2, &st[2]);
    check_recv(call, 4, &st[4]);
}

static void all_calls(int arrived)
{
    MPI_Status st[N];
    int flag, idx, out, ids[N], k, got, i;

    setup(arrived);
    MPI_Waitall(N, req, st);
    check_all("Waitall", st);

    setup(arrived);
    flag = 0;
    while (!flag) MPI_Testall(N, req, &flag, st);
    check_all("Testall", st);

    setup(arrived);
    for (got = 0; got < 4; got++) {
        MPI_Waitany(N, req, &idx, &st[0]);
        CHECK(idx >= 2 && idx < N && req[idx] == MPI_REQUEST_NULL, "Waitany: index %d", idx);
        if (idx == 2 || idx == 4) check_recv("Waitany", idx, &st[0]);
    }
    MPI_Waitany(N, req, &idx, &st[0]);
    CHECK(idx == MPI_UNDEFINED, "Waitany with no active request: index %d", idx);

    setup(arrived);
    for (got = 0; got < 4;) {
        MPI_Testany(N, req, &idx, &flag, &st[0]);
        if (!flag) continue;
        CHECK(idx >= 2 && idx < N && req[idx] == MPI_REQUEST_NULL, "Testany: index %d", idx);
        if (idx == 2 || idx == 4) check_recv("Testany", idx, &st[0]);
        got++;
    }
    MPI_Testany(N, req, &idx, &flag, &st[0]);
    CHECK(flag && idx == MPI_UNDEFINED, "Testany with no active request: flag %d index %d", flag, idx);

    for (i = 0; i < 2; i++) {
        const char *call = i ? "Testsome" : "Waitsome";
        setup(arrived);
        for (got = 0; got < 4;) {
            if (i) MPI_Testsome(N, req, &out, ids, st);
            else MPI_Waitsome(N, req, &out, ids, st);
            CHECK(out >= (i ? 0 : 1) && out <= 4, "%s: outcount %d", call, out);
            for (k = 0; k < out; k++) {
                CHECK(ids[k] >= 2 && req[ids[k]] == MPI_REQUEST_NULL, "%s: index %d", call, ids[k]);
                if (ids[k] == 2 || ids[k] == 4) check_recv(call, ids[k], &st[k]);
            }
            got += out > 0 ? out : 0;
        }
        if (i) MPI_Testsome(N, req, &out, ids, st);
        else MPI_Waitsome(N, req, &out, ids, st);
        CHECK(out == MPI_UNDEFINED, "%s with no active request: outcount %d", call, out);
    }
}

/* A started persistent send and a receive of it in one Waitall; the persistent
 * request stays, inactive, and can start again. */
static void persistent_round(void)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int round;
    for (round = 0; round < 3; round++) {
        pval = 700 + round;
        pbuf = -1;
        MPI_Irecv(&pbuf, 1, MPI_INT, me, 7, MPI_COMM_WORLD, &r[0]);
        MPI_Start(&psend);
        r[1] = psend;
        MPI_Waitall(2, r, st);
        CHECK(r[0] == MPI_REQUEST_NULL && r[1] == psend, "persistent Waitall: handles");
        CHECK(pbuf == 700 + round && st[0].MPI_TAG == 7, "persistent Waitall: got %d tag %d", pbuf, st[0].MPI_TAG);
    }
}

/* A receive of 2 ints into room for 1, beside a good one (MPI_ERRORS_RETURN).
 * The standard allows two answers, and the MPIs differ: MPI_ERR_IN_STATUS with
 * MPI_ERR_TRUNCATE in the truncated receive's status and, in the good one's,
 * success (completed) or MPI_ERR_PENDING (still active; MPICH); or success
 * (Open MPI 4.1 reports no truncation here). Either way the handles must agree
 * with the statuses and the good receive must end with its value. */
static void truncated(int waitall)
{
    MPI_Request r[2];
    MPI_Status st[2];
    int big[2] = {1, 2}, small = -1, good = -1, one = 9, rc, cls, flag = 0;
    const char *call = waitall ? "Waitall" : "Testall";
    MPI_Irecv(&small, 1, MPI_INT, me, 8, MPI_COMM_WORLD, &r[0]);
    MPI_Irecv(&good, 1, MPI_INT, me, 9, MPI_COMM_WORLD, &r[1]);
    MPI_Send(big, 2, MPI_INT, me, 8, MPI_COMM_WORLD);
    MPI_Send(&one, 1, MPI_INT, me, 9, MPI_COMM_WORLD);
    if (waitall) {
        rc = MPI_Waitall(2, r, st);
    } else {
        do rc = MPI_Testall(2, r, &flag, st); while (rc == MPI_SUCCESS && !flag);
    }
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_IN_STATUS || cls == MPI_SUCCESS, "%s truncated: class %d", call, cls);
    CHECK(r[0] == MPI_REQUEST_NULL, "%s truncated: the failed receive not released", call);
    if (cls == MPI_ERR_IN_STATUS) {
        MPI_Error_class(st[0].MPI_ERROR, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "%s truncated status: class %d", call, cls);
        CHECK(st[1].MPI_ERROR == MPI_SUCCESS || st[1].MPI_ERROR == MPI_ERR_PENDING, "%s good status: %d", call,
              st[1].MPI_ERROR);
        CHECK((st[1].MPI_ERROR == MPI_ERR_PENDING) == (r[1] != MPI_REQUEST_NULL), "%s good handle vs status", call);
    }
    if (r[1] != MPI_REQUEST_NULL) MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    CHECK(good == 9, "%s the good receive: %d", call, good);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Send_init(&pval, 1, MPI_INT, me, 7, MPI_COMM_WORLD, &psend);
    all_calls(1);
    all_calls(0);
    persistent_round();
    truncated(1);
    truncated(0);
    MPI_Request_free(&psend);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!failed) printf("OK\n");
    MPI_Finalize();
    return failed;
}
