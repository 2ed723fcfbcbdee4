/* include/compat/mpi-ext.h: ULFM programs include <mpi-ext.h> for the MPIX_
 * fault-tolerance names (Open MPI). With MPIFT they come from MPI-FT.h and
 * MPI-FT_redefine.h, so this header only makes sure those are in. */
#ifndef MPIFT_COMPAT_MPI_EXT_H
#define MPIFT_COMPAT_MPI_EXT_H
#include "mpi.h"
#endif /* MPIFT_COMPAT_MPI_EXT_H */
