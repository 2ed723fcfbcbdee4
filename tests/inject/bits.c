/* bits.c: silent faults (tests/inject/run.sh). Unmodified MPI source plus the
 * Sim_FT_Manipulate_* calls, built with -I include/compat.
 *
 *   bits api      Sim_FT_Manipulate_bytes/_bits on the program's buffers: p = 0
 *                 and p = 1 are exact; a vector datatype's gaps are not touched;
 *                 bad arguments give -1. Every rank.
 *   bits send N   rank 0 sends N zero-filled messages of 256 bytes to rank 1,
 *                 alternating MPI_Send and MPI_Isend (tag 7), then N messages of a
 *                 vector datatype (every other int) with MPI_Send (tag 8). Rank 0
 *                 checks that its own buffers stay zero (also while an Isend is in
 *                 flight); rank 1 counts the bits that arrive set and prints
 *                 "flips=F" (MPIFT_BITFLIP's flips, to compare with the report);
 *                 the gaps of the vector messages must arrive untouched.
 * Each rank prints "rank R: OK ..." or "rank R: FAIL ...". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 256
#define VN 32 /* ints in a vector message's span; data at even indices */

static int rank, failed;
static char why[512];
#define CHECK(c, ...)                                                                   \
    do {                                                                                \
        if (!(c)) {                                                                     \
            failed = 1;                                                                 \
            snprintf(why + strlen(why), sizeof why - strlen(why), " " __VA_ARGS__);     \
        }                                                                               \
    } while (0)

static int ones(const unsigned char *b, int n)
{
    int i, k = 0;
    for (i = 0; i < n; i++) k += __builtin_popcount(b[i]);
    return k;
}

static void api(void)
{
    unsigned char b[64];
    int v[8], i, ok = 1;
    long long m;
    MPI_Datatype vec;

    memset(b, 0, sizeof b);
    CHECK(Sim_FT_Manipulate_bytes(b, sizeof b, 0.0) == 0 && ones(b, 64) == 0, "p=0 flipped bits");
    m = Sim_FT_Manipulate_bytes(b, sizeof b, 1.0);
    CHECK(m == 512 && ones(b, 64) == 512, "p=1 flipped %lld bits, %d set", m, ones(b, 64));
    m = Sim_FT_Manipulate_bytes(b, sizeof b, 0.5);
    CHECK(m > 128 && m < 384 && ones(b, 64) == 512 - m, "p=0.5: m=%lld, %d set", m, ones(b, 64));
    CHECK(Sim_FT_Manipulate_bytes(b, sizeof b, 1.5) == -1, "p=1.5 accepted");
    CHECK(Sim_FT_Manipulate_bytes(NULL, 4, 0.5) == -1, "NULL accepted");

    /* A vector of 4 ints, stride 2: only v[0], v[2], v[4], v[6] may change. */
    for (i = 0; i < 8; i++) v[i] = 0;
    MPI_Type_vector(4, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    m = Sim_FT_Manipulate_bits(v, 1, vec, 1.0);
    for (i = 0; i < 8; i++) ok &= (i % 2 == 0) ? v[i] == -1 : v[i] == 0;
    CHECK(m == 128 && ok, "vector p=1: m=%lld, gaps or data wrong", m);
    m = Sim_FT_Manipulate_bits(v, 2, MPI_INT, 0.0);
    CHECK(m == 0 && v[0] == -1 && v[1] == 0, "MPI_INT p=0 changed data");
    CHECK(Sim_FT_Manipulate_bits(v, -1, MPI_INT, 0.5) == -1, "count -1 accepted");
    MPI_Type_free(&vec);
}

static void send(int n)
{
    static unsigned char buf[LEN];
    int i, v[VN], flips = 0, gaps_ok = 1;
    MPI_Datatype vec;

    MPI_Type_vector(VN / 2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (i = 0; i < n; i++) {
        if (rank == 0) {
            memset(buf, 0, LEN);
            if (i % 2 == 0) {
                MPI_Send(buf, LEN, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            } else {
                MPI_Request r;
                MPI_Isend(buf, LEN, MPI_BYTE, 1, 7, MPI_COMM_WORLD, &r);
                CHECK(ones(buf, LEN) == 0, "Isend %d: send buffer changed in flight", i);
                MPI_Wait(&r, MPI_STATUS_IGNORE);
            }
            CHECK(ones(buf, LEN) == 0, "send %d: send buffer changed", i);
        } else if (rank == 1) {
            memset(buf, 0, LEN);
            MPI_Recv(buf, LEN, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            flips += ones(buf, LEN);
        }
    }
    for (i = 0; i < n; i++) {
        int k;
        if (rank == 0) {
            for (k = 0; k < VN; k++) v[k] = 0;
            MPI_Send(v, 1, vec, 1, 8, MPI_COMM_WORLD);
            CHECK(ones((unsigned char *)v, sizeof v) == 0, "vector send %d: send buffer changed", i);
        } else if (rank == 1) {
            for (k = 0; k < VN; k++) v[k] = 0;
            MPI_Recv(v, 1, vec, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (k = 0; k < VN; k++) {
                if (k % 2) gaps_ok &= v[k] == 0;
                else flips += __builtin_popcount((unsigned)v[k]);
            }
        }
    }
    CHECK(gaps_ok, "a vector message changed the gaps");
    if (rank == 1) printf("rank 1: flips=%d\n", flips);
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc > 1 && !strcmp(argv[1], "api")) api();
    else if (argc > 2 && !strcmp(argv[1], "send")) send(atoi(argv[2]));
    else CHECK(0, "usage: bits api | bits send N");
    if (failed) printf("rank %d: FAIL%s\n", rank, why);
    else printf("rank %d: OK\n", rank);
    fflush(stdout);
    MPI_Finalize();
    return failed;
}
