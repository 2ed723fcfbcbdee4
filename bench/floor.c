/* floor.c: the least a layer with MPIFT's failure-free obligations can add to an
 * MPI call, in instructions (issue 36's 5 % criterion, bench/README.md, "The
 * floor"). Plain MPI, no MPIFT: the same iterations as bench/calls.c's waitall,
 * halo, isend and bcast rows, made once straight on the host and once through a
 * minimal layer written here, which keeps only what MPIFT must keep when
 * nothing fails and does each with the fewest instructions its author found:
 *
 * - every call: the call counter (fault injection's kill points) and one load
 *   and branch of a "something is known" word;
 * - a start: the communicator's lookup (a one-entry cache in front of the
 *   registry), a send's count towards its peer (a dead peer's verdicts), the
 *   host's start, a request slot from an intrusive free list, written once
 *   (real request, communicator, peer, receive or not, the send's number), and
 *   a handle that a stale use can be told by (slot + generation);
 * - a completion: each handle checked and its real request read, the host's
 *   call, a receive counted towards its source, each slot released;
 * - a collective: the communicator's lookup, its sequence number, the
 *   datatype's code (a one-entry cache), the log entry a dead member would join
 *   from (16 words in memory other processes read) and the fence before the
 *   news is read (a member that dies meanwhile must see the entry or be seen),
 *   the host's call, the news read again.
 *
 * Not modelled, as MPIFT has them and a floor need not: the panic boundary,
 * error handlers, bit flips, tracing, the revoke sweep's flags. The layer's
 * completions call the host's own blocking MPI_Waitall / MPI_Wait: the cost
 * of liveness (a test first, the wake request) is the host's and is left out,
 * so "own" here is bookkeeping only.
 *
 *   mpicc -O2 bench/floor.c -o floor
 *   mpiexec -n 1 valgrind --tool=callgrind --collect-atstart=no ./floor V : -n 1 ./floor V
 *   (`bench/probe.sh floor` runs both variants on both MPIs and prints a table)
 *
 * V = 0: plain; 1: through the floor layer. Rank 0 counts 2,000 iterations of
 * each row (CALLGRIND_TOGGLE_COLLECT around the row's calls, one dump per row).
 * `./floor V K` (not under valgrind) times K iterations of each row instead and
 * prints microseconds per iteration (`bench/probe.sh floor-time`).
 * As in bench/calls.c (bench/handshake.h), rank 0 under valgrind waits, not
 * counted, before a call that needs rank 1's data until rank 1 has sent it and
 * 50 us more, so a wait finds its data at its first look and the counts do not
 * depend on the machine's load. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, ftruncate, nanosleep (handshake.h) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>

#define NOINLINE __attribute__((noinline))

/* ---- the floor layer ---- */

typedef uint64_t fl_req; /* (generation << 32) | (slot + 1); 0 is null */

struct fl_comm {
    MPI_Comm real;
    uint32_t sent[64];     /* messages started towards each peer */
    uint32_t received[64]; /* messages received from each peer */
    uint64_t seq;          /* collectives entered */
};

struct fl_slot {
    MPI_Request real;
    struct fl_comm *comm;
    int32_t peer;
    uint32_t nth;
    uint32_t generation;
    uint32_t next_free; /* slot + 1 of the next free slot, 0: none */
    uint8_t recv, active;
};

static struct fl_comm world;
static struct fl_slot slots[1024];
static uint32_t free_head; /* slot + 1 */
static uint64_t calls;
static volatile uint64_t news_word, news_seen; /* "something is known" */
static uintptr_t cache_key = 1;               /* the communicator handle looked up last */
static struct fl_comm *cache_val;
static volatile uint64_t log_words[64 * 16]; /* the collective log (another process reads it) */
static MPI_Datatype type_table[] = {MPI_CHAR, MPI_BYTE, MPI_SHORT, MPI_INT, MPI_LONG, MPI_FLOAT, MPI_DOUBLE};
static unsigned type_last;

static int fl_calm(void)
{
    calls++;
    return news_word == news_seen;
}

static struct fl_comm *fl_lookup(uintptr_t key)
{
    if (key == cache_key) return cache_val;
    cache_key = key, cache_val = &world; /* the registry: one communicator here */
    return cache_val;
}

static fl_req fl_adopt(MPI_Request real, struct fl_comm *c, int peer, int recv, uint32_t nth)
{
    uint32_t i = free_head - 1;
    struct fl_slot *s = &slots[i];
    free_head = s->next_free;
    s->real = real, s->comm = c, s->peer = peer, s->nth = nth, s->recv = (uint8_t)recv, s->active = 1;
    return ((uint64_t)s->generation << 32) | (i + 1);
}

static struct fl_slot *fl_slot_of(fl_req h)
{
    uint32_t i = (uint32_t)h - 1;
    if (i >= 1024 || slots[i].generation != (uint32_t)(h >> 32) || !slots[i].active) return NULL;
    return &slots[i];
}

static void fl_release(struct fl_slot *s)
{
    s->generation++, s->active = 0;
    s->next_free = free_head;
    free_head = (uint32_t)(s - slots) + 1;
}

NOINLINE int fl_Isend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm, fl_req *r)
{
    if (!fl_calm()) abort(); /* the general path: not modelled */
    struct fl_comm *c = fl_lookup((uintptr_t)comm);
    uint32_t nth = ++c->sent[dest];
    MPI_Request real;
    int rc = MPI_Isend(buf, n, t, dest, tag, c->real, &real);
    *r = fl_adopt(real, c, dest, 0, nth);
    return rc;
}

NOINLINE int fl_Irecv(void *buf, int n, MPI_Datatype t, int src, int tag, MPI_Comm comm, fl_req *r)
{
    if (!fl_calm()) abort();
    struct fl_comm *c = fl_lookup((uintptr_t)comm);
    MPI_Request real;
    int rc = MPI_Irecv(buf, n, t, src, tag, c->real, &real);
    *r = fl_adopt(real, c, src, 1, 0);
    return rc;
}

NOINLINE int fl_Waitall(int n, fl_req *r, MPI_Status *st)
{
    if (!fl_calm() || n > 16) abort();
    MPI_Request real[16];
    struct fl_slot *s[16];
    for (int i = 0; i < n; i++) {
        s[i] = fl_slot_of(r[i]);
        if (!s[i]) abort(); /* MPI_ERR_REQUEST: not modelled */
        real[i] = s[i]->real;
    }
    int rc = MPI_Waitall(n, real, st);
    for (int i = 0; i < n; i++) {
        if (s[i]->recv) s[i]->comm->received[st[i].MPI_SOURCE]++;
        fl_release(s[i]);
        r[i] = 0;
    }
    return rc;
}

NOINLINE int fl_Wait(fl_req *r, MPI_Status *st)
{
    if (!fl_calm()) abort();
    struct fl_slot *s = fl_slot_of(*r);
    if (!s) abort();
    MPI_Request real = s->real;
    int rc = MPI_Wait(&real, st);
    if (s->recv) s->comm->received[st->MPI_SOURCE]++;
    fl_release(s);
    *r = 0;
    return rc;
}

static unsigned fl_type_code(MPI_Datatype t)
{
    if (type_table[type_last] == t) return type_last;
    for (unsigned i = 0; i < sizeof type_table / sizeof type_table[0]; i++)
        if (type_table[i] == t) return type_last = i;
    return 0xffff;
}

NOINLINE int fl_Bcast(void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm)
{
    if (!fl_calm()) abort();
    struct fl_comm *c = fl_lookup((uintptr_t)comm);
    uint64_t seq = ++c->seq;
    volatile uint64_t *e = &log_words[(seq % 64) * 16];
    e[0] = 0, e[1] = 1, e[2] = seq, e[3] = 7 /* function */, e[4] = (uint32_t)root;
    e[5] = (uint32_t)n | (uint64_t)fl_type_code(t) << 32, e[6] = e[5], e[7] = 0xffff;
    e[8] = e[9] = e[10] = e[11] = e[12] = e[13] = 0;
    e[14] = seq << 2, e[15] = seq, e[0] = seq;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (news_word != news_seen) abort();
    int rc = MPI_Bcast(buf, n, t, root, c->real);
    if (news_word != news_seen) abort();
    return rc;
}

/* ---- the rows ---- */

static int rank, peer;
#include "handshake.h"

/* Counted (no K): 2,000 iterations on rank 0 under callgrind, one dump per row.
 * Timed (K given, not under valgrind): 200 iterations to warm up, a barrier, K
 * timed ones; rank 0 prints "ROW US" (microseconds per iteration, the slower
 * rank's). */
static long timed_iters;

#define ROW(name, body)                                                         \
    if (timed_iters > 0) {                                                      \
        for (int it = 0; it < 200; it++) { body; }                              \
        MPI_Barrier(MPI_COMM_WORLD);                                            \
        double t0_ = MPI_Wtime();                                               \
        for (long it = 0; it < timed_iters; it++) { body; }                     \
        double us_ = (MPI_Wtime() - t0_) * 1e6 / (double)timed_iters, most_;   \
        MPI_Reduce(&us_, &most_, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);    \
        if (rank == 0) printf("%s %.4f\n", name, most_);                       \
    } else {                                                                    \
        for (int it = 0; it < 2050; it++) {                                     \
            collecting = rank == 0 && it >= 50;                                 \
            if (collecting) CALLGRIND_TOGGLE_COLLECT;                           \
            body;                                                               \
            if (collecting) CALLGRIND_TOGGLE_COLLECT;                           \
        }                                                                       \
        collecting = 0;                                                         \
        if (rank == 0) CALLGRIND_DUMP_STATS_AT(name);                           \
    }

static void exchange(int layer, int nb)
{
    int v[4] = {1, 2, 3, 4}, w[4];
    MPI_Status st[8];
    await();
    if (layer) {
        fl_req r[8];
        for (int k = 0; k < nb; k++) fl_Irecv(&w[k], 1, MPI_INT, peer, k, MPI_COMM_WORLD, &r[k]);
        for (int k = 0; k < nb; k++) fl_Isend(&v[k], 1, MPI_INT, peer, k, MPI_COMM_WORLD, &r[nb + k]);
        sent();
        fl_Waitall(2 * nb, r, st);
    } else {
        MPI_Request r[8];
        for (int k = 0; k < nb; k++) MPI_Irecv(&w[k], 1, MPI_INT, peer, k, MPI_COMM_WORLD, &r[k]);
        for (int k = 0; k < nb; k++) MPI_Isend(&v[k], 1, MPI_INT, peer, k, MPI_COMM_WORLD, &r[nb + k]);
        sent();
        MPI_Waitall(2 * nb, r, st);
    }
}

/* Rank 0 sends and waits, then receives and waits (bench/calls.c's isend row). */
static void pingpong(int layer)
{
    int v = 1, w;
    MPI_Status st;
    if (layer) {
        fl_req r;
        if (rank == 0) {
            fl_Isend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), fl_Wait(&r, &st);
            await();
            fl_Irecv(&w, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), fl_Wait(&r, &st);
        } else {
            fl_Irecv(&w, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), fl_Wait(&r, &st);
            fl_Isend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), fl_Wait(&r, &st);
            sent();
        }
    } else {
        MPI_Request r;
        if (rank == 0) {
            MPI_Isend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_Wait(&r, &st);
            await();
            MPI_Irecv(&w, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_Wait(&r, &st);
        } else {
            MPI_Irecv(&w, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_Wait(&r, &st);
            MPI_Isend(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &r), MPI_Wait(&r, &st);
            sent();
        }
    }
}

int main(int argc, char **argv)
{
    int layer = argc > 1 ? atoi(argv[1]) : 0, v = 0;
    timed_iters = argc > 2 ? atol(argv[2]) : 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = 1 - rank;
    world.real = MPI_COMM_WORLD;
    setup_handshake("floor");
    for (uint32_t i = 0; i < 1024; i++) slots[i].next_free = i + 2 <= 1024 ? i + 2 : 0;
    free_head = 1;
    ROW("waitall", exchange(layer, 1));
    ROW("halo", exchange(layer, 4));
    ROW("isend", pingpong(layer));
    /* Rank 0 is the root; the handshake keeps it from running ahead of rank 1
     * by more than one broadcast (bench/calls.c's bcast row). */
    ROW("bcast", sent(); await(); if (layer) fl_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
                 else MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
