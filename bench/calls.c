/* calls.c: the failure-free per-call cost of MPI operations, in instructions, under
 * valgrind's callgrind (driven by bench/callgrind.sh), and in time (bench/time.sh).
 * One source, built plain and with MPIFT (-Iinclude/compat: the source is unchanged).
 *
 *   mpiexec -n 1 valgrind --tool=callgrind --collect-atstart=no calls OPS K [GAP_US]
 *           : -n 1 calls OPS K [GAP_US]
 *   (OPS: a comma-separated list; exactly 2 ranks, MPI_COMM_WORLD, 1 int; both
 *   ranks on one host)
 *   mpiexec -n NP calls OPS K   (not under valgrind; NP even: rank r's point-to-point
 *   peer is r^1, collectives on MPI_COMM_WORLD) prints, on rank 0, one line per OP:
 *   "time OP US" (US: the slowest rank's microseconds per iteration over the K
 *   iterations after the warm-up, each rank's loop between two barriers)
 *
 * One iteration of each OP (the unit bench/callgrind.sh divides by):
 *   allreduce  test 1: MPI_Allreduce (MPI_SUM)
 *   sendrecv   test 2: rank 0 MPI_Send then MPI_Recv, rank 1 MPI_Recv then MPI_Send
 *              (a ping-pong: one send and one receive on each rank)
 *   isend      test 3: the same ping-pong with MPI_Isend / MPI_Irecv + MPI_Wait each
 *   bcast      test 4: MPI_Bcast from rank 0
 *   mixed      test 5: one MPI_Allreduce, then one sendrecv iteration
 *   waitall    both ranks MPI_Irecv + MPI_Isend to the other, MPI_Waitall of the 2
 *   waitany    the same, completed by two MPI_Waitany
 *   waitsome   the same, completed by MPI_Waitsome until both are done
 *   testall    the same, completed by MPI_Testall until it says done
 *   testany    the same, completed by MPI_Testany until both are done
 *   testsome   the same, completed by MPI_Testsome until both are done
 *   startall   persistent MPI_Recv_init + MPI_Send_init (made once), MPI_Startall
 *              of the 2, MPI_Waitall
 *   sendrecv1  one MPI_Sendrecv with the other rank
 *   iallreduce MPI_Iallreduce (MPI_SUM) + MPI_Wait
 *   halo       a halo exchange with 4 neighbours (at 2 ranks all are the other
 *              rank, tags 0-3): 4 MPI_Irecv + 4 MPI_Isend, MPI_Waitall of the 8
 *   barrier    MPI_Barrier
 *   allreduce64k  MPI_Allreduce (MPI_SUM) of 65536 ints (256 KiB; issue 36's
 *              large-message row: bench/time.sh, not bench/callgrind.sh's default)
 *
 * Per OP: 50 warm-up iterations, MPI_Barrier, then
 *   CALLGRIND_ZERO_STATS; CALLGRIND_TOGGLE_COLLECT; K iterations;
 *   CALLGRIND_TOGGLE_COLLECT; CALLGRIND_DUMP_STATS_AT(OP)
 * so each OP gets its own dump (desc "Trigger: Client Request: OP"). With
 * --collect-atstart=no, the toggle switches collection for the calling thread only:
 * the count is the main thread's (helper threads of the host MPI, e.g. Open MPI's
 * progress/PMIx threads, never collect; MPIFT has no threads of its own).
 *
 * Only rank 0 is measured, and it must not wait: a rank waiting for its peer spins
 * in the host MPI's progress loop a number of times that depends on timing (up to
 * 10x the work of the call on a loaded machine). So, when rank 0 runs under
 * valgrind, a handshake outside MPI (a counter in a shared file in /dev/shm)
 * makes rank 0 wait, not counted, before every call that needs data from rank 1
 * until rank 1 (best run natively: it answers at once) has sent that data, plus
 * GAP_US microseconds (default 50) for the sends rank 1 makes inside a call it
 * entered (a collective, or Isend before MPI_Waitall). Rank 0 then finds the data
 * on its first poll. The MPI calls are the same as without the handshake.
 *
 * Outside valgrind the client requests are no-ops and the program is a check.
 * Every received value is checked; a wrong one prints a line and exits 1.
 * Rank 0 prints "calls: pid P ok" at the end. */
#define _POSIX_C_SOURCE 200809L /* strdup, getpid, mkstemp, ftruncate, nanosleep */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>

static int rank, size, peer, errors;
#include "handshake.h"

static void check(const char *op, long i, int got, int want)
{
    if (got != want && errors++ < 5)
        fprintf(stderr, "calls: rank %d %s iteration %ld: got %d, want %d\n", rank, op, i, got, want);
}

static void pingpong(const char *op, long i, int nonblocking)
{
    int v, w;
    MPI_Request r;
    if (rank % 2 == 0) {
        v = (int)i;
        if (nonblocking) {
            MPI_Isend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            await();
            MPI_Irecv(&w, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
            await();
            MPI_Recv(&w, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        check(op, i, w, (int)i + 1);
    } else {
        if (nonblocking) {
            MPI_Irecv(&w, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&w, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        check(op, i, w, (int)i);
        v = w + 1;
        if (nonblocking) {
            MPI_Isend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
        }
        sent();
    }
}

/* The sum over the ranks of rank + i. */
static int rank_sum(long i)
{
    return size * (int)i + size * (size - 1) / 2;
}

static void allreduce(const char *op, long i)
{
    int v = rank + (int)i, s = -1;
    sent();
    await();
    MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(op, i, s, rank_sum(i));
}

/* allreduce64k: element j of rank r's vector is r + j, set once; the first
 * and last elements change per iteration (r + iteration), so a stale result
 * is caught without a pass over the vector in the timed loop. */
#define BIG 65536
static int big_in[BIG], big_out[BIG], big_ready;

static void allreduce_big(const char *op, long it)
{
    if (!big_ready) {
        for (int j = 0; j < BIG; j++) big_in[j] = rank + j;
        big_ready = 1;
    }
    big_in[0] = big_in[BIG - 1] = rank + (int)it;
    big_out[0] = big_out[BIG / 2] = big_out[BIG - 1] = -1;
    sent();
    await();
    MPI_Allreduce(big_in, big_out, BIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(op, it, big_out[0], rank_sum(it));
    check(op, it, big_out[BIG / 2], rank_sum(BIG / 2));
    check(op, it, big_out[BIG - 1], rank_sum(it));
}

/* Completes r[0..n) by the completion call `how` (an index into ops[]: waitall,
 * waitany, waitsome, testall, testany, testsome). */
static void complete_all(int how, int n, MPI_Request *r)
{
    MPI_Status st[8]; /* not MPI_STATUSES_IGNORE: GCC 12 warns on MPICH's prototype */
    int left = n, idx[8], k, flag;
    switch (how) {
    case 6:
        for (k = 0; k < n; k++) MPI_Waitany(n, r, &idx[0], &st[0]);
        break;
    case 7:
        while (left > 0) {
            MPI_Waitsome(n, r, &k, idx, st);
            left -= k;
        }
        break;
    case 8:
        for (flag = 0; !flag;) MPI_Testall(n, r, &flag, st);
        break;
    case 9:
        while (left > 0) {
            MPI_Testany(n, r, &idx[0], &flag, &st[0]);
            if (flag && idx[0] != MPI_UNDEFINED) left--;
        }
        break;
    case 10:
        while (left > 0) {
            MPI_Testsome(n, r, &k, idx, st);
            if (k != MPI_UNDEFINED) left -= k;
        }
        break;
    default:
        MPI_Waitall(n, r, st);
    }
}

/* Irecv + Isend of one int with the other rank (`nb` pairs, tags 0..nb-1),
 * completed by `how` (see complete_all). */
static void exchange(int how, const char *name, long i, int nb)
{
    int v[4], w[4], k;
    MPI_Request r[8];
    await();
    for (k = 0; k < nb; k++) {
        v[k] = 2 * (int)i + rank + 100 * k, w[k] = -1;
        MPI_Irecv(&w[k], 1, MPI_INT, peer, k, MPI_COMM_WORLD, &r[k]);
    }
    for (k = 0; k < nb; k++) MPI_Isend(&v[k], 1, MPI_INT, peer, k, MPI_COMM_WORLD, &r[nb + k]);
    sent();
    complete_all(how, 2 * nb, r);
    for (k = 0; k < nb; k++) check(name, i, w[k], 2 * (int)i + peer + 100 * k);
}

/* Persistent requests of `startall`, made at its first iteration. */
static MPI_Request persist[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
static int pv, pw;

static void startall(const char *name, long i)
{
    MPI_Status st[2];
    if (persist[0] == MPI_REQUEST_NULL) {
        MPI_Recv_init(&pw, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &persist[0]);
        MPI_Send_init(&pv, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &persist[1]);
    }
    pv = 2 * (int)i + rank, pw = -1;
    await();
    MPI_Startall(2, persist);
    sent();
    MPI_Waitall(2, persist, st);
    check(name, i, pw, 2 * (int)i + peer);
}

/* One iteration of op (an index into ops[]). */
static void step(int op, const char *name, long i)
{
    switch (op) {
    case 0:
        allreduce(name, i);
        break;
    case 1:
        pingpong(name, i, 0);
        break;
    case 2:
        pingpong(name, i, 1);
        break;
    case 3: {
        /* Rank 0 is the root and waits for nothing; the handshake keeps it from
         * running ahead of rank 1 by more than one broadcast. */
        int v = rank == 0 ? (int)i : -1;
        sent();
        await();
        MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
        check(name, i, v, (int)i);
        break;
    }
    case 4:
        allreduce(name, i);
        pingpong(name, i, 0);
        break;
    case 11:
        startall(name, i);
        break;
    case 12: {
        int v = 2 * (int)i + rank, w = -1;
        sent(); /* rank 1's send goes out inside its MPI_Sendrecv */
        await();
        MPI_Sendrecv(&v, 1, MPI_INT, peer, 0, &w, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(name, i, w, 2 * (int)i + peer);
        break;
    }
    case 13: {
        int v = rank + (int)i, s = -1;
        MPI_Request r;
        sent();
        await();
        MPI_Iallreduce(&v, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check(name, i, s, rank_sum(i));
        break;
    }
    case 14:
        exchange(5, name, i, 4);
        break;
    case 15:
        sent();
        await();
        MPI_Barrier(MPI_COMM_WORLD);
        break;
    case 16:
        allreduce_big(name, i);
        break;
    default:
        exchange(op, name, i, 1);
        break;
    }
}

static const char *ops[] = {"allreduce", "sendrecv", "isend",    "bcast",    "mixed",
                            "waitall",   "waitany",  "waitsome", "testall",  "testany",
                            "testsome",  "startall", "sendrecv1", "iallreduce", "halo",
                            "barrier",   "allreduce64k"};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = rank ^ 1;
    long k = argc == 3 || argc == 4 ? atol(argv[2]) : 0;
    if (size % 2 || k <= 0) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 calls OP[,OP...] K [GAP_US]  (an even number of ranks, 2 under\n"
                            "  valgrind; see the header)\n"
                            "  (OP: allreduce sendrecv isend bcast mixed waitall waitany waitsome testall\n"
                            "   testany testsome startall sendrecv1 iallreduce halo barrier\n"
                            "   allreduce64k)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc == 4) gap_ns = 1000L * atol(argv[3]);
    setup_handshake("calls");
    if (handshake && size != 2) {
        if (rank == 0) fprintf(stderr, "calls: under valgrind, exactly 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *list = strdup(argv[1]);
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        int op = 0;
        while (op < NOPS && strcmp(ops[op], name)) op++;
        if (op == NOPS) {
            if (rank == 0) fprintf(stderr, "calls: unknown operation %s\n", name);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (long i = 0; i < 50; i++) step(op, name, i);
        MPI_Barrier(MPI_COMM_WORLD);
        CALLGRIND_ZERO_STATS;
        CALLGRIND_TOGGLE_COLLECT;
        collecting = 1;
        double t0 = MPI_Wtime();
        for (long i = 0; i < k; i++) step(op, name, i);
        double t = MPI_Wtime() - t0, slowest = 0;
        collecting = 0;
        CALLGRIND_TOGGLE_COLLECT;
        CALLGRIND_DUMP_STATS_AT(name);
        if (!handshake) {
            MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) printf("time %s %.4f\n", name, slowest / (double)k * 1e6);
        }
    }
    free(list);
    if (persist[0] != MPI_REQUEST_NULL) {
        MPI_Request_free(&persist[0]);
        MPI_Request_free(&persist[1]);
    }
    int bad = errors, anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && !anybad) printf("calls: pid %d ok\n", (int)getpid());
    MPI_Finalize();
    return anybad ? 1 : 0;
}
