/* coverage_check.c: calls every function MPIFT redirects (src/ffi/mpi_functions.tbl;
 * tests/coverage.rs checks that each name appears here or in coverage_more.c) on 2-8 ranks and checks what
 * comes back: values received, counts, flags, handles seen by callbacks. Built like
 * api_check.c: plain MPI, explicit MPIFT headers, include/compat, with
 * -Wall -Wextra -Werror from this file and coverage_more.c; tests/cxx/coverage_check.cpp
 * compiles both as C++ too.
 *
 * Referenced but not run: MPI_Abort, MPI_Init (this program starts with
 * MPI_Init_thread; the C++ one with MPI_Init), and the dynamic-process calls
 * unless MPIFT_TEST_DYNAMIC is 1 or names some of spawn, connect, join: they need
 * launcher and network support that a machine may lack (MPICH 4.0's hydra fails
 * MPI_Comm_spawn here even without MPIFT). */
#include "coverage_check.h"

int rank = -1, size = 0, checks = 0, failures = 0;
MPI_Status scratch_statuses[32];
int *unweighted;

/* ---- point-to-point: every send mode, blocking, non-blocking, persistent ---- */
void p2p(MPI_Comm comm)
{
    int left = left_of(rank), right = right_of(rank), v = rank, got = -1, flag = 0, i, n;
    int bufsize = 8 * (MPI_BSEND_OVERHEAD + (int)sizeof(int)), pos;
    char *bsend_buf = (char *)malloc((size_t)bufsize), packed[64];
    void *detached;
    int vals[8];
    MPI_Request r[8], pr[2];
    MPI_Status st, sts[8];
    MPI_Message msg;

    MPI_Send(&v, 1, MPI_INT, right, 1, comm);
    MPI_Recv(&got, 1, MPI_INT, left, 1, comm, &st);
    CHECK(got == left && st.MPI_SOURCE == left && st.MPI_TAG == 1, "Send/Recv");
    MPI_Buffer_attach(bsend_buf, bufsize);
    MPI_Bsend(&v, 1, MPI_INT, right, 2, comm);
    MPI_Recv(&got, 1, MPI_INT, left, 2, comm, MPI_STATUS_IGNORE);
    CHECK(got == left, "Bsend");
    MPI_Ibsend(&v, 1, MPI_INT, right, 3, comm, &r[0]);
    MPI_Recv(&got, 1, MPI_INT, left, 3, comm, MPI_STATUS_IGNORE);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    CHECK(got == left && r[0] == MPI_REQUEST_NULL, "Ibsend");
    /* Ssend pairs with a posted receive; ready sends need it posted before they start. */
    MPI_Irecv(&vals[0], 1, MPI_INT, left, 4, comm, &r[0]);
    MPI_Irecv(&vals[1], 1, MPI_INT, left, 5, comm, &r[1]);
    MPI_Irecv(&vals[2], 1, MPI_INT, left, 6, comm, &r[2]);
    MPI_Irecv(&vals[3], 1, MPI_INT, left, 7, comm, &r[3]);
    MPI_Barrier(comm);
    MPI_Ssend(&v, 1, MPI_INT, right, 4, comm);
    MPI_Rsend(&v, 1, MPI_INT, right, 5, comm);
    MPI_Issend(&v, 1, MPI_INT, right, 6, comm, &r[4]);
    MPI_Irsend(&v, 1, MPI_INT, right, 7, comm, &r[5]);
    MPI_Waitall(6, r, sts);
    for (i = 0; i < 4; i++) CHECK(vals[i] == left && sts[i].MPI_TAG == 4 + i, "Ssend/Rsend/Issend/Irsend");

    /* Persistent: every kind of send request, started twice. */
    MPI_Recv_init(&got, 1, MPI_INT, left, 8, comm, &pr[0]);
    MPI_Send_init(&v, 1, MPI_INT, right, 8, comm, &pr[1]);
    for (i = 0; i < 2; i++) {
        got = -1;
        MPI_Startall(2, pr);
        MPI_Waitall(2, pr, scratch_statuses);
        CHECK(got == left && pr[0] != MPI_REQUEST_NULL, "Recv_init/Send_init/Startall");
    }
    MPI_Request_free(&pr[1]);
    MPI_Ssend_init(&v, 1, MPI_INT, right, 8, comm, &pr[1]);
    MPI_Start(&pr[0]);
    MPI_Start(&pr[1]);
    MPI_Waitall(2, pr, scratch_statuses);
    CHECK(got == left, "Ssend_init/Start");
    MPI_Request_free(&pr[1]);
    MPI_Bsend_init(&v, 1, MPI_INT, right, 8, comm, &pr[1]);
    MPI_Startall(2, pr);
    MPI_Waitall(2, pr, scratch_statuses);
    CHECK(got == left, "Bsend_init");
    MPI_Request_free(&pr[1]);
    MPI_Start(&pr[0]);
    MPI_Barrier(comm); /* every receive is posted: ready mode is legal */
    MPI_Rsend_init(&v, 1, MPI_INT, right, 8, comm, &pr[1]);
    MPI_Start(&pr[1]);
    MPI_Waitall(2, pr, scratch_statuses);
    CHECK(got == left, "Rsend_init");
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);
    CHECK(pr[0] == MPI_REQUEST_NULL && pr[1] == MPI_REQUEST_NULL, "Request_free");
    MPI_Buffer_detach(&detached, &n);
    CHECK(detached == bsend_buf && n == bufsize, "Buffer_detach");
    free(bsend_buf);

    /* An inactive persistent request completes at once with an empty status and
     * stays allocated (MPI-3.1 §3.7.3); a started one to MPI_PROC_NULL completes
     * at once, through every completion call. */
    MPI_Recv_init(&got, 1, MPI_INT, left, 14, comm, &pr[0]);
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    flag = 0;
    MPI_Test(&pr[0], &flag, &st);
    CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG && pr[0] != MPI_REQUEST_NULL,
          "Test of an inactive persistent request");
    st.MPI_TAG = 12345;
    MPI_Wait(&pr[0], &st);
    CHECK(st.MPI_TAG == MPI_ANY_TAG && pr[0] != MPI_REQUEST_NULL, "Wait of an inactive persistent request");
    n = 0;
    MPI_Waitany(1, pr, &n, &st);
    CHECK(n == MPI_UNDEFINED, "Waitany over inactive persistent requests");
    MPI_Waitsome(1, pr, &n, &i, sts);
    CHECK(n == MPI_UNDEFINED && pr[0] != MPI_REQUEST_NULL, "Waitsome over inactive persistent requests");
    MPI_Request_free(&pr[0]);
    MPI_Send_init(&v, 1, MPI_INT, MPI_PROC_NULL, 14, comm, &pr[0]);
    MPI_Recv_init(&got, 1, MPI_INT, MPI_PROC_NULL, 14, comm, &pr[1]);
    for (i = 0; i < 3; i++) {
        MPI_Startall(2, pr);
        st.MPI_SOURCE = 12345;
        if (i == 0) {
            MPI_Wait(&pr[0], MPI_STATUS_IGNORE);
            MPI_Wait(&pr[1], &st);
        } else if (i == 1) {
            MPI_Waitall(2, pr, sts);
            st = sts[1];
        } else {
            MPI_Waitany(1, &pr[1], &n, &st);
            MPI_Waitany(1, &pr[0], &n, MPI_STATUS_IGNORE);
        }
        /* MPICH 4.0 gives the empty status (source MPI_ANY_SOURCE), Open MPI MPI_PROC_NULL. */
        CHECK((st.MPI_SOURCE == MPI_PROC_NULL || st.MPI_SOURCE == MPI_ANY_SOURCE) && pr[0] != MPI_REQUEST_NULL &&
                  pr[1] != MPI_REQUEST_NULL,
              "persistent requests to MPI_PROC_NULL");
    }
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);
#ifdef MPIFT_VERSION
    /* A call that returns one status reports errors as its return code and leaves
     * status.MPI_ERROR as the program set it (as MPICH does; MPI-3.1 §3.2.5). */
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Isend(&v, 1, MPI_INT, right, 15, comm, &r[0]);
    MPI_Recv(&got, 1, MPI_INT, left, 15, comm, &st);
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Recv leaves status.MPI_ERROR alone");
    MPI_Wait(&r[0], &st);
    CHECK(st.MPI_ERROR == MPI_ERR_DIMS, "Wait leaves status.MPI_ERROR alone");
#endif

    v = rank;
    MPI_Sendrecv(&v, 1, MPI_INT, right, 9, &got, 1, MPI_INT, left, 9, comm, &st);
    CHECK(got == left && st.MPI_SOURCE == left, "Sendrecv");
    got = rank;
    MPI_Sendrecv_replace(&got, 1, MPI_INT, right, 10, left, 10, comm, &st);
    CHECK(got == left && st.MPI_TAG == 10, "Sendrecv_replace");

    /* Probes, matched probes and matched receives. */
    MPI_Send(&v, 1, MPI_INT, right, 11, comm);
    MPI_Probe(left, 11, comm, &st);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(n == 1 && st.MPI_SOURCE == left, "Probe");
    flag = 0;
    while (!flag) MPI_Iprobe(left, 11, comm, &flag, &st);
    MPI_Recv(&got, 1, MPI_INT, left, 11, comm, MPI_STATUS_IGNORE);
    CHECK(got == left, "Iprobe");
    MPI_Send(&v, 1, MPI_INT, right, 12, comm);
    MPI_Send(&v, 1, MPI_INT, right, 13, comm);
    MPI_Mprobe(left, 12, comm, &msg, &st);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 12, "Mprobe");
    got = -1;
    MPI_Mrecv(&got, 1, MPI_INT, &msg, &st);
    CHECK(got == left && msg == MPI_MESSAGE_NULL, "Mrecv");
    flag = 0;
    while (!flag) MPI_Improbe(left, 13, comm, &flag, &msg, &st);
    got = -1;
    MPI_Imrecv(&got, 1, MPI_INT, &msg, &r[0]);
    CHECK(r[0] != MPI_REQUEST_NULL, "Imrecv gives a request");
    MPI_Wait(&r[0], &st);
    CHECK(got == left && st.MPI_TAG == 13, "Improbe/Imrecv");

    /* Packing against a communicator. */
    pos = 0;
    MPI_Pack_size(2, MPI_INT, comm, &n);
    CHECK(n >= 2 * (int)sizeof(int) && n <= (int)sizeof packed, "Pack_size");
    vals[0] = 7;
    vals[1] = 8;
    MPI_Pack(vals, 2, MPI_INT, packed, (int)sizeof packed, &pos, comm);
    n = pos;
    pos = 0;
    vals[0] = vals[1] = 0;
    MPI_Unpack(packed, n, &pos, vals, 2, MPI_INT, comm);
    CHECK(vals[0] == 7 && vals[1] == 8, "Pack/Unpack");
}

/* ---- completion calls, cancel, generalized requests, request conversions ---- */
static int greq_calls = 0;
static int greq_query(void *extra, MPI_Status *st)
{
    *(int *)extra |= 1;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, 0);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}
static int greq_free(void *extra)
{
    *(int *)extra |= 2;
    return MPI_SUCCESS;
}
static int greq_cancel(void *extra, int complete)
{
    (void)complete;
    *(int *)extra |= 4;
    return MPI_SUCCESS;
}

void requests(MPI_Comm comm)
{
    int left = left_of(rank), right = right_of(rank), v = rank, in[4], flag, idx, out, inds[4], i, n;
    MPI_Request r[4], back;
    MPI_Status st, sts[4];
    MPI_Fint f;

    for (i = 0; i < 2; i++) {
        MPI_Irecv(&in[i], 1, MPI_INT, left, 20 + i, comm, &r[i]);
        MPI_Isend(&v, 1, MPI_INT, right, 20 + i, comm, &r[2 + i]);
    }
    flag = 0;
    while (!flag) MPI_Testall(4, r, &flag, sts);
    CHECK(in[0] == left && in[1] == left && r[0] == MPI_REQUEST_NULL, "Isend/Irecv/Testall");
    MPI_Irecv(&in[0], 1, MPI_INT, left, 22, comm, &r[0]);
    MPI_Isend(&v, 1, MPI_INT, right, 22, comm, &r[1]);
    flag = 0;
    while (!flag) MPI_Test(&r[1], &flag, &st);
    MPI_Request_get_status(r[0], &flag, &st);
    while (!flag) MPI_Request_get_status(r[0], &flag, &st);
    CHECK(r[0] != MPI_REQUEST_NULL && st.MPI_SOURCE == left, "Request_get_status keeps the request");
    MPI_Wait(&r[0], &st);
    CHECK(r[0] == MPI_REQUEST_NULL && in[0] == left, "Test/Wait");
    MPI_Irecv(&in[0], 1, MPI_INT, left, 23, comm, &r[0]);
    MPI_Isend(&v, 1, MPI_INT, right, 23, comm, &r[1]);
    for (n = 0; n < 2;) {
        MPI_Waitany(2, r, &idx, &st);
        n++;
    }
    CHECK(in[0] == left && r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "Waitany");
    MPI_Irecv(&in[0], 1, MPI_INT, left, 24, comm, &r[0]);
    MPI_Isend(&v, 1, MPI_INT, right, 24, comm, &r[1]);
    for (n = 0; n < 2;) {
        MPI_Testany(2, r, &idx, &flag, &st);
        if (flag && idx != MPI_UNDEFINED) n++;
    }
    CHECK(in[0] == left, "Testany");
    MPI_Irecv(&in[0], 1, MPI_INT, left, 25, comm, &r[0]);
    MPI_Isend(&v, 1, MPI_INT, right, 25, comm, &r[1]);
    for (n = 0; n < 2;) {
        MPI_Waitsome(2, r, &out, inds, sts);
        n += out;
    }
    MPI_Irecv(&in[1], 1, MPI_INT, left, 26, comm, &r[0]);
    MPI_Isend(&v, 1, MPI_INT, right, 26, comm, &r[1]);
    for (n = 0; n < 2;) {
        MPI_Testsome(2, r, &out, inds, sts);
        if (out != MPI_UNDEFINED) n += out;
    }
    CHECK(in[0] == left && in[1] == left, "Waitsome/Testsome");

    /* A receive nobody matches, cancelled. */
    MPI_Irecv(&in[0], 1, MPI_INT, MPI_ANY_SOURCE, 999, comm, &r[0]);
    MPI_Cancel(&r[0]);
    MPI_Wait(&r[0], &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 1 && r[0] == MPI_REQUEST_NULL, "Cancel/Test_cancelled");

    /* Handle conversions: round trips give the same handle. */
    MPI_Irecv(&in[0], 1, MPI_INT, left, 27, comm, &r[0]);
    f = MPI_Request_c2f(r[0]);
    back = MPI_Request_f2c(f);
    CHECK(back == r[0], "Request_c2f/f2c round trip");
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL, "Request_f2c(null)");
    MPI_Send(&v, 1, MPI_INT, right, 27, comm);
    MPI_Wait(&back, MPI_STATUS_IGNORE);
    CHECK(in[0] == left, "converted request completes");

    /* Generalized request: completed by the program, its callbacks run. */
    greq_calls = 0;
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &greq_calls, &r[0]);
    CHECK(r[0] != MPI_REQUEST_NULL, "Grequest_start gives a request");
    MPI_Test(&r[0], &flag, &st);
    CHECK(flag == 0, "generalized request not complete before Grequest_complete");
    MPI_Grequest_complete(r[0]);
    MPI_Wait(&r[0], &st);
    MPI_Get_count(&st, MPI_INT, &n);
    CHECK(r[0] == MPI_REQUEST_NULL && n == 3 && (greq_calls & 3) == 3, "Grequest_complete/Wait");
}

/* ---- collectives, blocking and non-blocking ---- */
void collectives(MPI_Comm comm)
{
    int n = size, i, v, sum, *a = ints(n), *b = ints(n), *c = ints(n), *d = ints(n), *e = ints(n);
    MPI_Datatype *ty = (MPI_Datatype *)malloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Request r[16];
    int k = 0;

    for (i = 0; i < n; i++) {
        c[i] = 1;
        d[i] = i;
        ty[i] = MPI_INT;
    }
    MPI_Barrier(comm);
    v = rank == 0 ? 42 : 0;
    MPI_Bcast(&v, 1, MPI_INT, 0, comm);
    CHECK(v == 42, "Bcast");
    v = rank + 1;
    sum = 0;
    MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_SUM, n - 1, comm);
    if (rank == n - 1) CHECK(sum == n * (n + 1) / 2, "Reduce");
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_MAX, comm);
    CHECK(sum == n, "Allreduce");
    MPI_Gather(&rank, 1, MPI_INT, a, 1, MPI_INT, 0, comm);
    if (rank == 0)
        for (i = 0; i < n; i++) CHECK(a[i] == i, "Gather");
    MPI_Gatherv(&rank, 1, MPI_INT, a, c, d, MPI_INT, 0, comm);
    if (rank == 0)
        for (i = 0; i < n; i++) CHECK(a[i] == i, "Gatherv");
    for (i = 0; i < n; i++) a[i] = 100 + i;
    MPI_Scatter(a, 1, MPI_INT, &v, 1, MPI_INT, 0, comm);
    CHECK(v == 100 + rank, "Scatter");
    MPI_Scatterv(a, c, d, MPI_INT, &v, 1, MPI_INT, n - 1, comm);
    CHECK(v == 100 + rank, "Scatterv");
    MPI_Allgather(&rank, 1, MPI_INT, b, 1, MPI_INT, comm);
    for (i = 0; i < n; i++) CHECK(b[i] == i, "Allgather");
    MPI_Allgatherv(&rank, 1, MPI_INT, b, c, d, MPI_INT, comm);
    for (i = 0; i < n; i++) CHECK(b[i] == i, "Allgatherv");
    for (i = 0; i < n; i++) a[i] = rank * 100 + i;
    MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, comm);
    for (i = 0; i < n; i++) CHECK(b[i] == i * 100 + rank, "Alltoall");
    MPI_Alltoallv(a, c, d, MPI_INT, b, c, d, MPI_INT, comm);
    for (i = 0; i < n; i++) CHECK(b[i] == i * 100 + rank, "Alltoallv");
    for (i = 0; i < n; i++) e[i] = i * (int)sizeof(int); /* Alltoallw: byte displacements */
    MPI_Alltoallw(a, c, e, ty, b, c, e, ty, comm);
    for (i = 0; i < n; i++) CHECK(b[i] == i * 100 + rank, "Alltoallw");
    for (i = 0; i < n; i++) a[i] = i + rank;
    MPI_Reduce_scatter(a, &v, c, MPI_INT, MPI_SUM, comm);
    CHECK(v == n * rank + n * (n - 1) / 2, "Reduce_scatter");
    MPI_Reduce_scatter_block(a, &v, 1, MPI_INT, MPI_SUM, comm);
    CHECK(v == n * rank + n * (n - 1) / 2, "Reduce_scatter_block");
    v = rank + 1;
    MPI_Scan(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(sum == (rank + 1) * (rank + 2) / 2, "Scan");
    MPI_Exscan(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (rank > 0) CHECK(sum == rank * (rank + 1) / 2, "Exscan");

    /* Non-blocking twins, all outstanding at once, then one Waitall. */
    {
        int bc = rank == 1 ? 7 : 0, red = -1, ared = -1, g[64], gv[64], sc = -1, scv = -1, ag[64], agv[64];
        int at[64], atv[64], atw[64], rs = -1, rsb = -1, scn = -1, exs = -1, src[64];
        for (i = 0; i < n; i++) src[i] = rank * 100 + i;
        for (i = 0; i < n; i++) a[i] = 100 + i;
        v = rank + 1;
        MPI_Ibarrier(comm, &r[k++]);
        MPI_Ibcast(&bc, 1, MPI_INT, 1, comm, &r[k++]);
        MPI_Ireduce(&v, &red, 1, MPI_INT, MPI_SUM, 0, comm, &r[k++]);
        MPI_Iallreduce(&v, &ared, 1, MPI_INT, MPI_SUM, comm, &r[k++]);
        MPI_Igather(&rank, 1, MPI_INT, g, 1, MPI_INT, 0, comm, &r[k++]);
        MPI_Igatherv(&rank, 1, MPI_INT, gv, c, d, MPI_INT, 0, comm, &r[k++]);
        MPI_Iscatter(a, 1, MPI_INT, &sc, 1, MPI_INT, 0, comm, &r[k++]);
        MPI_Iscatterv(a, c, d, MPI_INT, &scv, 1, MPI_INT, 0, comm, &r[k++]);
        MPI_Iallgather(&rank, 1, MPI_INT, ag, 1, MPI_INT, comm, &r[k++]);
        MPI_Iallgatherv(&rank, 1, MPI_INT, agv, c, d, MPI_INT, comm, &r[k++]);
        MPI_Ialltoall(src, 1, MPI_INT, at, 1, MPI_INT, comm, &r[k++]);
        MPI_Ialltoallv(src, c, d, MPI_INT, atv, c, d, MPI_INT, comm, &r[k++]);
        MPI_Ialltoallw(src, c, e, ty, atw, c, e, ty, comm, &r[k++]);
        MPI_Ireduce_scatter(d, &rs, c, MPI_INT, MPI_SUM, comm, &r[k++]);
        MPI_Ireduce_scatter_block(d, &rsb, 1, MPI_INT, MPI_SUM, comm, &r[k++]);
        MPI_Iscan(&v, &scn, 1, MPI_INT, MPI_SUM, comm, &r[k++]);
        MPI_Waitall(k, r, scratch_statuses);
        k = 0;
        MPI_Iexscan(&v, &exs, 1, MPI_INT, MPI_SUM, comm, &r[k++]);
        MPI_Wait(&r[0], MPI_STATUS_IGNORE);
        CHECK(bc == 7 && ared == n * (n + 1) / 2 && sc == 100 + rank && scv == 100 + rank, "Ibcast/Iallreduce/Iscatter(v)");
        if (rank == 0) CHECK(red == n * (n + 1) / 2, "Ireduce");
        for (i = 0; i < n; i++) {
            if (rank == 0) CHECK(g[i] == i && gv[i] == i, "Igather(v)");
            CHECK(ag[i] == i && agv[i] == i, "Iallgather(v)");
            CHECK(at[i] == i * 100 + rank && atv[i] == at[i] && atw[i] == at[i], "Ialltoall(v,w)");
        }
        CHECK(rs == n * rank && rsb == n * rank, "Ireduce_scatter(_block)");
        CHECK(scn == (rank + 1) * (rank + 2) / 2, "Iscan");
        if (rank > 0) CHECK(exs == rank * (rank + 1) / 2, "Iexscan");
    }
    free(a);
    free(b);
    free(c);
    free(d);
    free(e);
    free(ty);
}

/* ---- topologies and neighborhood collectives ---- */
void topologies(MPI_Comm comm)
{
    int n = size, left = left_of(rank), right = right_of(rank), i, v, nd, st, nn, ne;
    int dims[2], periods[2], coords[2], remain[2], src, dst, got[4], rc[4], ds[4], cnt[4];
    int *index = ints(n), *edges = ints(2 * n), nbr[4], indeg, outdeg, weighted, sw[4], dw[4];
    MPI_Aint adisp[4];
    MPI_Datatype types[4];
    MPI_Comm cart, sub, graph, dist, dist2;
    MPI_Request r;

    dims[0] = n;
    dims[1] = 1;
    periods[0] = 1;
    periods[1] = 0;
    MPI_Cart_create(comm, 2, dims, periods, 0, &cart);
    MPI_Topo_test(cart, &st);
    CHECK(st == MPI_CART, "Topo_test(cart)");
    MPI_Cartdim_get(cart, &nd);
    CHECK(nd == 2, "Cartdim_get");
    MPI_Cart_get(cart, 2, dims, periods, coords);
    CHECK(dims[0] == n && periods[0] == 1 && coords[0] == rank, "Cart_get");
    MPI_Cart_coords(cart, right, 2, coords);
    MPI_Cart_rank(cart, coords, &v);
    CHECK(coords[0] == right && v == right, "Cart_coords/Cart_rank");
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    CHECK(src == left && dst == right, "Cart_shift");
    MPI_Cart_map(comm, 2, dims, periods, &v);
    CHECK(v >= 0 && v < n, "Cart_map");
    remain[0] = 1;
    remain[1] = 0;
    MPI_Cart_sub(cart, remain, &sub);
    MPI_Comm_size(sub, &v);
    CHECK(v == n, "Cart_sub");
    MPI_Comm_free(&sub);
    /* Neighbors of a 2-D cart with dims (n, 1): left, right, then PROC_NULL twice. */
    for (i = 0; i < 4; i++) got[i] = -1;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, cart);
    CHECK(got[0] == left && got[1] == right && got[2] == -1 && got[3] == -1, "Neighbor_allgather (cart)");
    for (i = 0; i < 4; i++) {
        rc[i] = 1;
        ds[i] = 3 - i;
        got[i] = -1;
    }
    MPI_Neighbor_allgatherv(&rank, 1, MPI_INT, got, rc, ds, MPI_INT, cart);
    CHECK(got[3] == left && got[2] == right, "Neighbor_allgatherv (cart)");
    MPI_Ineighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, cart, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got[0] == left && got[1] == right, "Ineighbor_allgather (cart)");
    MPI_Ineighbor_allgatherv(&rank, 1, MPI_INT, got, rc, ds, MPI_INT, cart, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got[3] == left && got[2] == right, "Ineighbor_allgatherv (cart)");
    MPI_Comm_free(&cart);

    /* A ring as a graph: index/edges the same at every process. */
    for (i = 0; i < n; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = left_of(i);
        edges[2 * i + 1] = right_of(i);
    }
    MPI_Graph_create(comm, n, index, edges, 0, &graph);
    MPI_Topo_test(graph, &st);
    CHECK(st == MPI_GRAPH, "Topo_test(graph)");
    MPI_Graphdims_get(graph, &nn, &ne);
    CHECK(nn == n && ne == 2 * n, "Graphdims_get");
    MPI_Graph_get(graph, n, 2 * n, index, edges);
    CHECK(index[n - 1] == 2 * n && edges[2 * rank + 1] == right, "Graph_get");
    MPI_Graph_neighbors_count(graph, rank, &v);
    MPI_Graph_neighbors(graph, rank, 4, nbr);
    CHECK(v == 2 && nbr[0] == left && nbr[1] == right, "Graph_neighbors(_count)");
    MPI_Graph_map(comm, n, index, edges, &v);
    CHECK(v >= 0 && v < n, "Graph_map");
    for (i = 0; i < 2; i++) got[i] = -1;
    MPI_Neighbor_allgather(&rank, 1, MPI_INT, got, 1, MPI_INT, graph);
    CHECK(got[0] == left && got[1] == right, "Neighbor_allgather (graph)");
    MPI_Comm_free(&graph);

    /* A directed ring as a distributed graph: receive from the left, send right. */
    sw[0] = dw[0] = 1;
    MPI_Dist_graph_create_adjacent(comm, 1, &left, unweighted, 1, &right, unweighted, MPI_INFO_NULL, 0, &dist);
    MPI_Topo_test(dist, &st);
    CHECK(st == MPI_DIST_GRAPH, "Topo_test(dist graph)");
    MPI_Dist_graph_neighbors_count(dist, &indeg, &outdeg, &weighted);
    CHECK(indeg == 1 && outdeg == 1 && !weighted, "Dist_graph_neighbors_count");
    MPI_Dist_graph_neighbors(dist, 1, &src, sw, 1, &dst, dw);
    CHECK(src == left && dst == right, "Dist_graph_neighbors");
    v = rank * 10;
    cnt[0] = 1;
    ds[0] = 0;
    adisp[0] = 0;
    types[0] = MPI_INT;
    got[0] = -1;
    MPI_Neighbor_alltoall(&v, 1, MPI_INT, got, 1, MPI_INT, dist);
    CHECK(got[0] == left * 10, "Neighbor_alltoall");
    got[0] = -1;
    MPI_Neighbor_alltoallv(&v, cnt, ds, MPI_INT, got, cnt, ds, MPI_INT, dist);
    CHECK(got[0] == left * 10, "Neighbor_alltoallv");
    got[0] = -1;
    MPI_Neighbor_alltoallw(&v, cnt, adisp, types, got, cnt, adisp, types, dist);
    CHECK(got[0] == left * 10, "Neighbor_alltoallw");
    got[0] = -1;
    MPI_Ineighbor_alltoall(&v, 1, MPI_INT, got, 1, MPI_INT, dist, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got[0] == left * 10, "Ineighbor_alltoall");
    got[0] = -1;
    MPI_Ineighbor_alltoallv(&v, cnt, ds, MPI_INT, got, cnt, ds, MPI_INT, dist, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got[0] == left * 10, "Ineighbor_alltoallv");
    got[0] = -1;
    MPI_Ineighbor_alltoallw(&v, cnt, adisp, types, got, cnt, adisp, types, dist, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(got[0] == left * 10, "Ineighbor_alltoallw");
    /* The same ring, each process naming one edge (its own outgoing one), weighted. */
    v = 1;
    MPI_Dist_graph_create(comm, 1, &rank, &v, &right, &v, MPI_INFO_NULL, 0, &dist2);
    MPI_Dist_graph_neighbors_count(dist2, &indeg, &outdeg, &weighted);
    MPI_Dist_graph_neighbors(dist2, 1, &src, sw, 1, &dst, dw);
    CHECK(indeg == 1 && outdeg == 1 && weighted && src == left && dst == right && sw[0] == 1, "Dist_graph_create");
    MPI_Comm_free(&dist2);
    MPI_Comm_free(&dist);
    free(index);
    free(edges);
}

/* Everything, between init and finalize; returns the exit code. `more` (the C++
 * program's own checks) runs on the same communicator before the ULFM calls. */
int run_all(char *self_path, void (*more)(MPI_Comm))
{
    MPI_Comm comm;
    int total = 0, flag = 1, dyn = getenv("MPIFT_TEST_DYNAMIC") != NULL;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks");
    {
        /* The version a program sees at run time is the one its macros say (3.1
         * under MPIFT, whatever the real MPI is). */
        int version = 0, subversion = -1;
        MPI_Get_version(&version, &subversion);
        CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION, "Get_version agrees with MPI_VERSION");
#ifdef MPIFT_VERSION
        CHECK(version == 3 && subversion == 1, "MPIFT reports MPI 3.1");
#endif
    }
    unweighted = MPI_UNWEIGHTED;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    p2p(comm);
    requests(comm);
    collectives(comm);
    topologies(comm);
    communicators(comm);
    attributes(comm);
    errors(comm);
    one_sided(comm);
    io(comm);
    dynamic_processes(comm, self_path, dyn);
    if (more != NULL) more(comm);
#ifdef MPIFT_VERSION
    ulfm_names(comm);
#endif
    MPI_Comm_free(&comm);
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("coverage_check: %d checks per rank, %d failures on %d ranks%s\n", checks, total, size,
               dyn ? " (with dynamic processes)" : "");
    MPI_Finalize();
    MPI_Finalized(&flag);
    if (!flag || self_deleted != 1) {
        fprintf(stderr, "rank %d: FAIL Finalized %d, MPI_COMM_SELF attribute deleted at finalize: %d\n", rank, flag,
                self_deleted);
        return 1;
    }
    return total == 0 ? 0 : 1;
}

#ifndef COVERAGE_CHECK_CXX
int main(int argc, char **argv)
{
    int flag = 1, provided = 0;
    MPI_Initialized(&flag);
    if (flag) return 2;
    if (argc < 0) { /* referenced, never run: this program starts with MPI_Init_thread */
        MPI_Init(&argc, &argv);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (argc > 1 && strcmp(argv[1], "--child") == 0) return spawned_child();
    return run_all(argv[0], NULL);
}
#endif
