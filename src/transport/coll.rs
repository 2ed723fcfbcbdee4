//! Collectives: blocking, non-blocking and neighbourhood, and `MPI_Reduce_local` / `MPI_Op_commutative`.
//! (Conventions: the module doc of `transport`.)

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;
