/* errhandler_refs: MPI's reference semantics for the error handlers MPIFT hands
 * out (mpi4py's test_errhandler testGetFree and test_exceptions, issue 33).
 * MPI_Comm_get_errhandler returns a handle the program must free; freeing it
 * must neither fail nor release anything the communicator still uses, for
 * predefined and user handlers alike, many times over; MPI_Comm_idup's new
 * communicator takes an error handler before the idup completes (mpi4py sets
 * one at once); and every handler still works afterwards. Prints "OK" and
 * exits 0, or names the first failed check and exits 1. Any np. */
#include <mpi.h>
#include <stdio.h>

static int failed;
#define CHECK(cond, what) do { if (!(cond)) { printf("FAIL %s\n", what); failed = 1; } } while (0)

static int user_calls;
static void user(MPI_Comm *c, int *code, ...) { (void)c; (void)code; user_calls++; }

static void get_free_many(MPI_Comm c, const char *what)
{
    MPI_Errhandler got[100];
    int i, rc = MPI_SUCCESS;
    for (i = 0; i < 100; i++) rc |= MPI_Comm_get_errhandler(c, &got[i]);
    CHECK(rc == MPI_SUCCESS, what);
    for (i = 0; i < 100; i++) {
        rc |= MPI_Errhandler_free(&got[i]);
        CHECK(got[i] == MPI_ERRHANDLER_NULL, what);
    }
    CHECK(rc == MPI_SUCCESS, what);
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh, got;
    MPI_Comm dup, idup;
    MPI_Request req;
    int rc, i;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (i = 0; i < 3; i++) {
        get_free_many(MPI_COMM_WORLD, "get/free ERRORS_RETURN on MPI_COMM_WORLD");
        get_free_many(MPI_COMM_SELF, "get/free ERRORS_ARE_FATAL on MPI_COMM_SELF");
    }
    rc = MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got);
    CHECK(rc == MPI_SUCCESS && got == MPI_ERRORS_RETURN, "get returns MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&got);

    MPI_Comm_create_errhandler(user, &eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, eh);
    rc = MPI_Errhandler_free(&eh); /* the communicator keeps it */
    CHECK(rc == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL, "free of a user handler in use");
    get_free_many(dup, "get/free a user handler");
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    CHECK(user_calls == 1, "the user handler still runs after the frees");
    /* The error handler still applies to real errors. */
    rc = MPI_Send(NULL, -1, MPI_INT, 0, 0, dup);
    CHECK(rc != MPI_SUCCESS && user_calls == 2, "the user handler sees a real error");
    MPI_Comm_free(&dup);

    rc = MPI_Comm_idup(MPI_COMM_WORLD, &idup, &req);
    CHECK(rc == MPI_SUCCESS, "Comm_idup");
    rc = MPI_Comm_set_errhandler(idup, MPI_ERRORS_RETURN);
    CHECK(rc == MPI_SUCCESS, "set_errhandler on an idup's communicator before completion");
    rc = MPI_Comm_get_errhandler(idup, &got);
    CHECK(rc == MPI_SUCCESS && got == MPI_ERRORS_RETURN, "get_errhandler on an idup's communicator before completion");
    MPI_Errhandler_free(&got);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS, "Wait(idup)");
    rc = MPI_Barrier(idup);
    CHECK(rc == MPI_SUCCESS, "Barrier on the idup's communicator");
    rc = MPI_Send(NULL, -1, MPI_INT, 0, 0, idup);
    CHECK(rc != MPI_SUCCESS, "the idup's communicator returns errors (its handler was set before completion)");
    MPI_Comm_free(&idup);

    MPI_Finalize();
    if (!failed) printf("OK\n");
    return failed;
}
