/* include/compat/mpi.h: the zero-edit swap. Put -I<prefix>/include/compat before
 * the MPI's own include path and an unmodified `#include <mpi.h>` gets the real
 * MPI header followed by MPIFT's API and redirects. Hand-written, not generated. */
#ifndef MPIFT_COMPAT_MPI_H
#define MPIFT_COMPAT_MPI_H

#ifndef MPIFT_REAL_MPI_INCLUDED
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
/* The next mpi.h on the include path: the real one (GCC, Clang, Intel, NVHPC). */
#include_next <mpi.h>
#define MPIFT_REAL_MPI_INCLUDED 1
#endif

#include "../MPI-FT.h"
#include "../MPI-FT_redefine.h"

#endif /* MPIFT_COMPAT_MPI_H */
