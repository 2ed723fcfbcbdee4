/* mpift_shim.c: MPI constants that are macros (and so invisible to Rust) as
 * link-time symbols, plus the few calls that need a macro argument. Compiled by
 * build.rs with the MPI's own compiler wrapper, like mpi-sys's rsmpi.c. Only
 * what mpi-sys does not already export lives here. */
#include <stddef.h>
#include <mpi.h>

void *const MPIFT_IN_PLACE = MPI_IN_PLACE;
void *const MPIFT_BOTTOM = MPI_BOTTOM;
const MPI_Datatype MPIFT_INT = MPI_INT;
const MPI_Datatype MPIFT_BYTE = MPI_BYTE;

const int MPIFT_MAX_ERROR_STRING = MPI_MAX_ERROR_STRING;
const int MPIFT_SUCCESS = MPI_SUCCESS;
const int MPIFT_ERR_ARG = MPI_ERR_ARG;
const int MPIFT_ERR_COMM = MPI_ERR_COMM;
const int MPIFT_ERR_REQUEST = MPI_ERR_REQUEST;
const int MPIFT_ERR_OTHER = MPI_ERR_OTHER;
const int MPIFT_ERR_INTERN = MPI_ERR_INTERN;
const int MPIFT_ERR_IN_STATUS = MPI_ERR_IN_STATUS;
const int MPIFT_ERR_ERRHANDLER = MPI_ERR_OTHER;

#ifdef MPI_ERRORS_ABORT
const MPI_Errhandler MPIFT_ERRORS_ABORT = MPI_ERRORS_ABORT;
#else
const MPI_Errhandler MPIFT_ERRORS_ABORT = MPI_ERRORS_ARE_FATAL;
#endif

/* The keyval behind the MPIX_FT attribute (Open MPI 5 sets it on MPI_COMM_WORLD to
 * say that fault tolerance is on). The null copy/delete functions are macros. */
int mpift_create_ft_keyval(int *keyval)
{
    return MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, keyval, NULL);
}

/* Calls a user's communicator error handler. The handler type is variadic in C
 * (MPI-3.1 §8.3.1); calling it from C keeps the variadic calling convention right. */
typedef void mpift_user_errhandler(void *comm, int *code, ...);
void mpift_call_user_errhandler(mpift_user_errhandler *fn, void *comm, int *code)
{
    fn(comm, code);
}

/* A real errhandler that stands for a user's handler; its function does nothing,
 * because MPIFT calls the user's function itself, with MPIFT's own handle. The real
 * communicator holds it so that MPI keeps the object alive while it is in use. */
static void mpift_errhandler_token_fn(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}
int mpift_create_errhandler_token(MPI_Errhandler *errhandler)
{
    return MPI_Comm_create_errhandler(mpift_errhandler_token_fn, errhandler);
}
