/* api_check.c: calls the redirected MPI functions and checks their outcomes.
 * The same source is built three ways by tests/run-mpi-suite.sh: against plain
 * MPI, against MPIFT with the explicit two-header include (-DMPIFT_EXPLICIT_HEADERS),
 * and unmodified with -I<prefix>/include/compat. All must pass, with
 * -Wall -Wextra -Werror. Run with 2 or more ranks. */
#ifdef MPIFT_EXPLICIT_HEADERS
#include "MPI-FT.h"
#include "MPI-FT_redefine.h"
#else
#include <mpi.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A predefined handle in a static initialiser, as plain MPI allows. */
static MPI_Comm g_world = MPI_COMM_WORLD;
static MPI_Request g_null_request = MPI_REQUEST_NULL;

static int rank = -1, checks = 0, failures = 0;
#define CHECK(cond, what)                                                          \
    do {                                                                           \
        checks++;                                                                  \
        if (!(cond)) {                                                             \
            failures++;                                                            \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, what, __LINE__); \
        }                                                                          \
    } while (0)

static int handler_calls = 0, handler_code = 0;
static MPI_Comm handler_comm;
static void my_handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_comm = *comm;
    handler_code = *code;
}

static int error_class_of(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

static void point_to_point(MPI_Comm comm, int size)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int sendv = rank * 10, recvv = -1, i, n, flag;
    int buf[64];
    MPI_Status st;
    MPI_Request reqs[4];
    MPI_Status sts[2];
    MPI_Comm probe_comm;

    MPI_Sendrecv(&sendv, 1, MPI_INT, right, 7, &recvv, 1, MPI_INT, left, 7, comm, &st);
    CHECK(recvv == left * 10 && st.MPI_SOURCE == left && st.MPI_TAG == 7, "Sendrecv ring and status");

    /* Wildcard probes on a communicator of their own, so that they cannot match
     * the messages of the later steps. */
    MPI_Comm_dup(comm, &probe_comm);
    if (rank == 0) {
        for (i = 1; i < size; i++) {
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, probe_comm, &st);
            MPI_Get_count(&st, MPI_INT, &n);
            CHECK(n == st.MPI_SOURCE + 1 && st.MPI_TAG == 100 + st.MPI_SOURCE, "Probe/Get_count");
            MPI_Recv(buf, 64, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, probe_comm, &st);
            CHECK(buf[0] == st.MPI_SOURCE && buf[n - 1] == st.MPI_SOURCE, "Recv after Probe");
        }
    } else {
        for (i = 0; i < rank + 1; i++) buf[i] = rank;
        MPI_Ssend(buf, rank + 1, MPI_INT, 0, 100 + rank, probe_comm);
    }
    MPI_Comm_free(&probe_comm);

    reqs[0] = reqs[1] = MPI_REQUEST_NULL;
    MPI_Irecv(&recvv, 1, MPI_INT, left, 8, comm, &reqs[0]);
    MPI_Isend(&sendv, 1, MPI_INT, right, 8, comm, &reqs[1]);
    CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL, "Irecv/Isend give requests");
    MPI_Waitall(2, reqs, sts);
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "Waitall nulls requests");
    CHECK(recvv == left * 10 && sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 8, "Isend/Irecv data and status");

    MPI_Irecv(&recvv, 1, MPI_INT, MPI_ANY_SOURCE, 9, comm, &reqs[0]);
    MPI_Isend(&sendv, 1, MPI_INT, right, 9, comm, &reqs[1]);
    n = 0;
    while (n < 2) {
        int idx = -1;
        MPI_Waitany(2, reqs, &idx, &st);
        CHECK(idx == 0 || idx == 1, "Waitany index");
        if (idx == 0) CHECK(st.MPI_SOURCE == left && recvv == left * 10, "Waitany status of the receive");
        n++;
    }
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "Waitany nulls requests");
    MPI_Waitany(2, reqs, &i, &st);
    CHECK(i == MPI_UNDEFINED, "Waitany on null requests gives MPI_UNDEFINED");

    MPI_Irecv(&recvv, 1, MPI_INT, left, 10, comm, &reqs[0]);
    MPI_Isend(&sendv, 1, MPI_INT, right, 10, comm, &reqs[1]);
    {
        int done = 0, outcount, indices[2];
        while (done < 2) {
            MPI_Testsome(2, reqs, &outcount, indices, sts);
            if (outcount != MPI_UNDEFINED) done += outcount;
        }
    }
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "Testsome nulls requests");

    /* Persistent requests stay valid after completion. */
    MPI_Recv_init(&recvv, 1, MPI_INT, left, 11, comm, &reqs[0]);
    MPI_Send_init(&sendv, 1, MPI_INT, right, 11, comm, &reqs[1]);
    for (i = 0; i < 3; i++) {
        recvv = -1;
        sendv = rank * 10 + i;
        MPI_Startall(2, reqs);
        MPI_Waitall(2, reqs, sts);
        CHECK(reqs[0] != MPI_REQUEST_NULL && reqs[1] != MPI_REQUEST_NULL, "persistent requests stay valid");
        CHECK(recvv == left * 10 + i, "persistent data");
    }
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL, "Request_free nulls");

    reqs[2] = g_null_request;
    CHECK(MPI_Wait(&reqs[2], &st) == MPI_SUCCESS, "Wait on MPI_REQUEST_NULL");
    flag = 0;
    MPI_Test(&reqs[2], &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 1, "Test on MPI_REQUEST_NULL is complete");
    sendv = rank * 10;
}

static void collectives(MPI_Comm comm, int size)
{
    int i, v, sum, *all = (int *)malloc(sizeof(int) * (size_t)size);
    int *counts = (int *)malloc(sizeof(int) * (size_t)size), *displs = (int *)malloc(sizeof(int) * (size_t)size);
    MPI_Request req;
    int flag = 0;

    MPI_Barrier(comm);
    v = (rank == 0) ? 42 : -1;
    MPI_Bcast(&v, 1, MPI_INT, 0, comm);
    CHECK(v == 42, "Bcast");
    v = rank + 1;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(sum == size * (size + 1) / 2, "Allreduce");
    sum = -1;
    MPI_Reduce(&v, &sum, 1, MPI_INT, MPI_MAX, size - 1, comm);
    if (rank == size - 1) CHECK(sum == size, "Reduce at root");
    MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, comm);
    if (rank == 0)
        for (i = 0; i < size; i++) CHECK(all[i] == i, "Gather");
    for (i = 0; i < size; i++) all[i] = 100 + i;
    v = -1;
    MPI_Scatter(all, 1, MPI_INT, &v, 1, MPI_INT, 0, comm);
    CHECK(v == 100 + rank, "Scatter");
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, comm);
    for (i = 0; i < size; i++) CHECK(all[i] == i, "Allgather");
    for (i = 0; i < size; i++) { counts[i] = 1; displs[i] = size - 1 - i; }
    MPI_Allgatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, comm);
    for (i = 0; i < size; i++) CHECK(all[size - 1 - i] == i, "Allgatherv");
    {
        int *sb = (int *)malloc(sizeof(int) * (size_t)size);
        for (i = 0; i < size; i++) sb[i] = rank * 1000 + i;
        MPI_Alltoall(sb, 1, MPI_INT, all, 1, MPI_INT, comm);
        for (i = 0; i < size; i++) CHECK(all[i] == i * 1000 + rank, "Alltoall");
        free(sb);
    }
    MPI_Scan(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(sum == 100 * (rank + 1) + rank * (rank + 1) / 2, "Scan");

    MPI_Ibarrier(comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(req == MPI_REQUEST_NULL, "Ibarrier + Wait");
    v = rank + 1;
    MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm, &req);
    while (!flag) MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    CHECK(sum == size * (size + 1) / 2 && req == MPI_REQUEST_NULL, "Iallreduce + Test");
    v = (rank == 1) ? 7 : 0;
    MPI_Ibcast(&v, 1, MPI_INT, 1, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(v == 7, "Ibcast");
    free(all);
    free(counts);
    free(displs);
}

static void communicators(int size)
{
    MPI_Comm dup, split, none, cart;
    MPI_Group g, g2;
    int result, r, s, v, len, dims[1], periods[1], coords[1];
    char name[MPI_MAX_OBJECT_NAME];

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD, "Comm_dup gives a new handle");
    MPI_Comm_compare(dup, MPI_COMM_WORLD, &result);
    CHECK(result == MPI_CONGRUENT, "Comm_compare dup vs world");
    MPI_Comm_compare(g_world, MPI_COMM_WORLD, &result);
    CHECK(result == MPI_IDENT, "Comm_compare world vs world");
    MPI_Comm_set_name(dup, "mpift-dup");
    MPI_Comm_get_name(dup, name, &len);
    CHECK(strcmp(name, "mpift-dup") == 0, "Comm_set_name/get_name");

    MPI_Comm_split(dup, rank % 2, -rank, &split);
    MPI_Comm_rank(split, &r);
    MPI_Comm_size(split, &s);
    CHECK(s == (size + 1 - rank % 2) / 2, "Comm_split size");
    CHECK(r == s - 1 - rank / 2, "Comm_split key ordering");
    v = 1;
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_SUM, split);
    CHECK(v == s, "collective on split communicator");
    MPI_Comm_split(dup, rank == 0 ? 0 : MPI_UNDEFINED, 0, &none);
    CHECK((rank == 0) == (none != MPI_COMM_NULL), "Comm_split with MPI_UNDEFINED gives MPI_COMM_NULL");
    if (none != MPI_COMM_NULL) MPI_Comm_free(&none);

    MPI_Comm_group(dup, &g);
    r = 0;
    MPI_Group_incl(g, 1, &r, &g2);
    MPI_Comm_create(dup, g2, &none);
    CHECK((rank == 0) == (none != MPI_COMM_NULL), "Comm_create");
    if (none != MPI_COMM_NULL) MPI_Comm_free(&none);
    MPI_Group_free(&g2);
    MPI_Group_free(&g);

    dims[0] = size;
    periods[0] = 1;
    MPI_Cart_create(dup, 1, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 1, coords);
    CHECK(coords[0] == rank, "Cart_coords");
    MPI_Cart_rank(cart, coords, &r);
    CHECK(r == rank, "Cart_rank");
    MPI_Comm_free(&cart);

    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    CHECK(dup == MPI_COMM_NULL && split == MPI_COMM_NULL, "Comm_free sets MPI_COMM_NULL");
}

static void error_handling(int size)
{
    MPI_Comm dup, child;
    MPI_Errhandler eh, got;
    int rc, v = 0, len;
    char msg[MPI_MAX_ERROR_STRING];

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, dup);
    CHECK(rc != MPI_SUCCESS && error_class_of(rc) == MPI_ERR_RANK, "ERRORS_RETURN: bad rank gives MPI_ERR_RANK");
    MPI_Error_string(rc, msg, &len);
    CHECK(len > 0 && (int)strlen(msg) == len, "Error_string of a real MPI error");
    MPI_Comm_get_errhandler(dup, &got);
    CHECK(got == MPI_ERRORS_RETURN, "Comm_get_errhandler");

    MPI_Comm_create_errhandler(my_handler, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    MPI_Errhandler_free(&eh);
    rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, dup);
    CHECK(handler_calls == 1, "user handler called once");
    CHECK(handler_comm == dup, "user handler sees the program's own handle");
    CHECK(handler_code == rc && error_class_of(rc) == MPI_ERR_RANK, "user handler gets the error code");

    MPI_Comm_dup(dup, &child);
    rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, child);
    CHECK(handler_calls == 2 && handler_comm == child, "new communicators inherit the handler");
    MPI_Comm_call_errhandler(child, MPI_ERR_OTHER);
    CHECK(handler_calls == 3 && handler_code == MPI_ERR_OTHER, "Comm_call_errhandler");
    MPI_Comm_free(&child);
    MPI_Comm_free(&dup);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Comm_rank(MPI_COMM_NULL, &v);
    CHECK(rc != MPI_SUCCESS && error_class_of(rc) == MPI_ERR_COMM, "MPI_COMM_NULL gives MPI_ERR_COMM");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

#ifdef MPIFT_VERSION
/* The ULFM API, failure-free: what ULFM specifies when no process has failed. */
static void ulfm(int size)
{
    MPI_Comm dup, shrunk;
    MPI_Group failed;
    int flag, *attr, rc, n, len, gsize;
    char msg[MPI_MAX_ERROR_STRING];

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &attr, &flag);
    CHECK(flag && *attr, "MPIX_FT attribute is set on MPI_COMM_WORLD");
    CHECK(error_class_of(MPIX_ERR_PROC_FAILED) == MPIX_ERR_PROC_FAILED, "Error_class(PROC_FAILED)");
    CHECK(MPI_ERR_REVOKED == MPIX_ERR_REVOKED && MPI_ERR_PROC_FAILED_PENDING == MPIX_ERR_PROC_FAILED_PENDING,
          "unprefixed error names");
    MPI_Error_string(MPIX_ERR_REVOKED, msg, &len);
    CHECK(strstr(msg, "revoked") != NULL, "Error_string(REVOKED)");

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    flag = (rank == 0) ? 0x3 : 0x1;
    rc = MPIX_Comm_agree(dup, &flag);
    CHECK(rc == MPI_SUCCESS && flag == 0x1, "agree is a bitwise AND");
    MPIX_Comm_get_failed(dup, &failed);
    MPI_Group_size(failed, &gsize);
    CHECK(gsize == 0, "get_failed is empty");
    MPI_Group_free(&failed);
    MPIX_Comm_ack_failed(dup, size, &n);
    CHECK(n == 0, "ack_failed acknowledges nothing");
    MPIX_Comm_failure_ack(dup);
    MPIX_Comm_failure_get_acked(dup, &failed);
    MPI_Group_size(failed, &gsize);
    CHECK(gsize == 0, "failure_get_acked is empty");
    MPI_Group_free(&failed);

    MPIX_Comm_revoke(dup);
    MPIX_Comm_is_revoked(dup, &flag);
    CHECK(flag == 1, "is_revoked after revoke");
    rc = MPI_Barrier(dup);
    CHECK(rc == MPIX_ERR_REVOKED, "Barrier on a revoked communicator");
    rc = MPI_Comm_rank(dup, &n);
    CHECK(rc == MPI_SUCCESS && n == rank, "local calls work on a revoked communicator");
    flag = 1;
    rc = MPI_Comm_agree(dup, &flag);
    CHECK(rc == MPI_SUCCESS && flag == 1, "agree works on a revoked communicator");
    rc = MPIX_Comm_shrink(dup, &shrunk);
    CHECK(rc == MPI_SUCCESS, "shrink works on a revoked communicator");
    MPI_Comm_size(shrunk, &n);
    CHECK(n == size, "shrink keeps every live rank");
    MPI_Comm_rank(shrunk, &n);
    CHECK(n == rank, "shrink keeps the rank order");
    MPIX_Comm_is_revoked(shrunk, &flag);
    CHECK(flag == 0, "a shrunk communicator is not revoked");
    MPI_Barrier(shrunk);
    MPI_Comm_free(&shrunk);
    MPI_Comm_free(&dup);
}
#endif

int main(int argc, char **argv)
{
    int size, total_failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(g_world, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size >= 2, "needs at least 2 ranks");
    if (size >= 2) {
        point_to_point(MPI_COMM_WORLD, size);
        collectives(MPI_COMM_WORLD, size);
        communicators(size);
        error_handling(size);
#ifdef MPIFT_VERSION
        ulfm(size);
#endif
    }
    MPI_Allreduce(&failures, &total_failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("api_check: %d checks per rank, %d failures on %d ranks\n", checks, total_failures, size);
    MPI_Finalize();
    return total_failures == 0 ? 0 : 1;
}
