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
const int MPIFT_ERR_SPAWN = MPI_ERR_SPAWN;
const int MPIFT_ERR_ROOT = MPI_ERR_ROOT;
const int MPIFT_ERR_ERRHANDLER = MPI_ERR_OTHER;

const MPI_Errhandler MPIFT_ERRHANDLER_NULL = MPI_ERRHANDLER_NULL;

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

/* Predefined datatypes and reduction operations, in a fixed order that is the same
 * in every process of a job: a collective's descriptor names them by index, so a
 * simulated-dead rank can join the collective with the same type and operation
 * (src/engine/describe.rs). Types a given MPI lacks are skipped by the #ifdefs, which
 * keeps the order identical within one job (one MPI). */
const MPI_Datatype MPIFT_PREDEF_TYPES[] = {
    MPI_CHAR, MPI_SIGNED_CHAR, MPI_UNSIGNED_CHAR, MPI_BYTE, MPI_WCHAR,
    MPI_SHORT, MPI_UNSIGNED_SHORT, MPI_INT, MPI_UNSIGNED, MPI_LONG, MPI_UNSIGNED_LONG,
    MPI_LONG_LONG_INT, MPI_UNSIGNED_LONG_LONG, MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE,
    MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T,
    MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_UINT64_T,
    MPI_C_BOOL, MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX,
    MPI_AINT, MPI_OFFSET, MPI_COUNT, MPI_PACKED,
    MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT,
};
const int MPIFT_PREDEF_TYPES_N = (int)(sizeof MPIFT_PREDEF_TYPES / sizeof MPIFT_PREDEF_TYPES[0]);

const MPI_Op MPIFT_PREDEF_OPS[] = {
    MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR,
    MPI_LXOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP,
};
const int MPIFT_PREDEF_OPS_N = (int)(sizeof MPIFT_PREDEF_OPS / sizeof MPIFT_PREDEF_OPS[0]);

/* The host MPI's family: MPIFT's own small MPI_Allreduce is on by default where
 * it measured no slower than the host's (MPICH; src/engine/allreduce.rs). */
#if defined(MPICH_VERSION) && !defined(OMPI_MAJOR_VERSION)
const int MPIFT_HOST_MPICH = 1;
#else
const int MPIFT_HOST_MPICH = 0;
#endif
const MPI_Datatype MPIFT_UINT64 = MPI_UINT64_T;
const MPI_Datatype MPIFT_PACKED = MPI_PACKED;
const MPI_Op MPIFT_OP_SUM = MPI_SUM;
const MPI_Op MPIFT_OP_BAND = MPI_BAND;
const MPI_Op MPIFT_OP_REPLACE = MPI_REPLACE;
const int MPIFT_ANY_SOURCE = MPI_ANY_SOURCE;
const int MPIFT_ANY_TAG = MPI_ANY_TAG;
const int MPIFT_UNDEFINED = MPI_UNDEFINED;
const int MPIFT_ERR_PENDING = MPI_ERR_PENDING;
const int MPIFT_ERR_TRUNCATE = MPI_ERR_TRUNCATE;
const int MPIFT_MODE_NOCHECK = MPI_MODE_NOCHECK;
const int MPIFT_COMM_TYPE_SHARED = MPI_COMM_TYPE_SHARED;
const int MPIFT_THREAD_MULTIPLE = MPI_THREAD_MULTIPLE;
const MPI_Info MPIFT_INFO_NULL = MPI_INFO_NULL;
const MPI_Win MPIFT_WIN_NULL = MPI_WIN_NULL;

/* A reduction a simulated-dead rank uses for a user-defined operation it cannot
 * name: it leaves the result alone (the survivors report MPI_ERR_PROC_FAILED for a
 * collective a dead rank joined, so the value does not matter). Commutativity
 * must match the survivors' operation, because MPI picks algorithms by it. */
static void mpift_noop_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in; (void)inout; (void)len; (void)dt;
}
int mpift_create_noop_op(int commute, MPI_Op *op)
{
    return MPI_Op_create(mpift_noop_fn, commute, op);
}

/* 1 if the window's memory model is MPI_WIN_UNIFIED (MPI-3.1 §11.4): public and
 * private copies are one, so a processor fence orders the owner's stores and
 * loads against RMA without MPI_Win_sync. */
int mpift_win_unified(MPI_Win win)
{
    int *model = NULL, flag = 0;
    if (MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag) != MPI_SUCCESS || !flag || !model)
        return 0;
    return *model == MPI_WIN_UNIFIED;
}

/* Handle conversions (MPI-3.1 §17.2.4): macros in MPICH, functions in Open MPI. */
MPI_Fint mpift_comm_c2f(MPI_Comm comm) { return MPI_Comm_c2f(comm); }
MPI_Comm mpift_comm_f2c(MPI_Fint comm) { return MPI_Comm_f2c(comm); }
MPI_Fint mpift_request_c2f(MPI_Request request) { return MPI_Request_c2f(request); }
MPI_Request mpift_request_f2c(MPI_Fint request) { return MPI_Request_f2c(request); }

/* Weight arguments of the distributed graph constructors (MPI-3.1 §7.5.4). */
int *mpift_unweighted(void) { return MPI_UNWEIGHTED; }
int *mpift_weights_empty(void) { return MPI_WEIGHTS_EMPTY; }

/* Topology kinds (MPI_Topo_test): an enum in MPICH, macros in Open MPI. */
const int MPIFT_CART = MPI_CART;
const int MPIFT_GRAPH = MPI_GRAPH;
const int MPIFT_DIST_GRAPH = MPI_DIST_GRAPH;
