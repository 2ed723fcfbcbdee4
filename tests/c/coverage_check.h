/* coverage_check.h: what the two halves of the coverage check share
 * (tests/c/coverage_check.c, tests/c/coverage_more.c; see the first for what the
 * program does). */
#ifndef MPIFT_COVERAGE_CHECK_H
#define MPIFT_COVERAGE_CHECK_H
#ifdef MPIFT_EXPLICIT_HEADERS
#include "MPI-FT.h"
#include "MPI-FT_redefine.h"
#else
#include <mpi.h>
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The deprecated MPI-1 attribute calls are part of MPI-3.1 and must keep working. */
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

extern int rank, size, checks, failures;
#define CHECK(cond, what)                                                          \
    do {                                                                           \
        checks++;                                                                  \
        if (!(cond)) {                                                             \
            failures++;                                                            \
            fprintf(stderr, "rank %d: FAIL %s (line %d)\n", rank, what, __LINE__); \
        }                                                                          \
    } while (0)

/* Statuses nobody reads (MPI_STATUSES_IGNORE makes GCC warn about MPICH's header). */
extern MPI_Status scratch_statuses[32];
/* MPI_UNWEIGHTED through a variable (Open MPI's constant makes GCC warn). */
extern int *unweighted;
/* Set by the delete callback of an attribute on MPI_COMM_SELF (1: right). */
extern int self_deleted;

static inline int left_of(int r) { return (r - 1 + size) % size; }
static inline int right_of(int r) { return (r + 1) % size; }
static inline int *ints(int n) { return (int *)calloc((size_t)(n > 0 ? n : 1), sizeof(int)); }

/* coverage_check.c */
int run_all(char *self_path, void (*more)(MPI_Comm));
void p2p(MPI_Comm comm);
void requests(MPI_Comm comm);
void collectives(MPI_Comm comm);
void topologies(MPI_Comm comm);
/* coverage_more.c */
void communicators(MPI_Comm comm);
void attributes(MPI_Comm comm);
void errors(MPI_Comm comm);
void one_sided(MPI_Comm comm);
void io(MPI_Comm comm);
void dynamic_processes(MPI_Comm comm, char *self_path, int run);
int spawned_child(void);
#ifdef MPIFT_VERSION
void ulfm_names(MPI_Comm comm);
#endif

#endif /* MPIFT_COVERAGE_CHECK_H */
