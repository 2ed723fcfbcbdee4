//! The environment: init and finalize, thread level, abort, version, error classes and strings, datatype sizes and extents.
//! (Conventions: the module doc of `transport`.)

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;
