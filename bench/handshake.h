/* handshake.h: rank 0 (under valgrind) waits, not counted, before a call that
 * needs rank 1's data, until rank 1 has sent it (a counter in a shared file in
 * /dev/shm) and GAP more: bench/calls.c's handshake (its header comment says
 * why), shared with bench/floor.c. The includer declares `static int rank;`
 * and includes <mpi.h>, <valgrind/callgrind.h> and <valgrind/valgrind.h>
 * first, and calls setup_handshake(PROGRAM) after MPI_Init (PROGRAM names it in
 * error messages and in the shared file's name). */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int collecting;             /* callgrind counts now (between the two toggles) */
static int handshake;              /* rank 0 is under valgrind: sent()/await() active */
static long gap_ns = 50000;        /* after await(): for sends inside rank 1's call */
static volatile long *sent_count;  /* shared: how many sent() rank 1 has done */
static long awaited;               /* rank 0: how many await() it has done */

static void pause_ns(long ns)
{
    struct timespec t = {ns / 1000000000L, ns % 1000000000L};
    nanosleep(&t, NULL);
}

/* Rank 1: the data rank 0 waits for next has been sent (or, before a collective
 * or MPI_Waitall, is being sent). */
static void sent(void)
{
    if (handshake && rank == 1) __atomic_add_fetch(sent_count, 1, __ATOMIC_RELEASE);
}

/* Rank 0: wait, not counted, for rank 1's matching sent() and then GAP_US. */
static void await(void)
{
    if (!handshake || rank != 0) return;
    if (collecting) CALLGRIND_TOGGLE_COLLECT;
    awaited++;
    while (__atomic_load_n(sent_count, __ATOMIC_ACQUIRE) < awaited) pause_ns(5000);
    pause_ns(gap_ns);
    if (collecting) CALLGRIND_TOGGLE_COLLECT;
}

/* Sets up the shared counter (rank 0 decides whether it is needed). */
static void setup_handshake(const char *program)
{
    char path[64] = "";
    handshake = rank == 0 && RUNNING_ON_VALGRIND;
    MPI_Bcast(&handshake, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!handshake) return;
    int fd = -1;
    if (rank == 0) {
        snprintf(path, sizeof path, "/dev/shm/mpift-%s-XXXXXX", program);
        if ((fd = mkstemp(path)) < 0) {
            snprintf(path, sizeof path, "/tmp/mpift-%s-XXXXXX", program);
            fd = mkstemp(path);
        }
        if (fd < 0 || ftruncate(fd, 4096) != 0) {
            fprintf(stderr, "%s: ", program);
            perror("handshake file");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 1 && (fd = open(path, O_RDWR)) < 0) {
        perror(path);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "%s: ", program);
        perror("mmap");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    close(fd);
    sent_count = p;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) unlink(path);
}

