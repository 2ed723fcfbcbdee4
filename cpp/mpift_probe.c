/* Preprocessed (never compiled) by build.rs to learn which MPI `mpicc` uses. */
#include <mpi.h>
#if defined(OMPI_MAJOR_VERSION)
MPIFT_PROBE openmpi OMPI_MAJOR_VERSION OMPI_MINOR_VERSION OMPI_RELEASE_VERSION
#elif defined(MPICH_VERSION)
MPIFT_PROBE mpich MPICH_VERSION
#else
MPIFT_PROBE other MPI_VERSION MPI_SUBVERSION
#endif
/* The host's last predefined error code: MPIFT's ULFM classes go above it (src/engine/base/errors.rs). */
MPIFT_LASTCODE MPI_ERR_LASTCODE
