//! Communicators and groups: constructors, free, rank and size, intercommunicators, attributes and keyvals, error handlers, process topologies, dynamic processes.
//! (Conventions: the module doc of `transport`.)

#![allow(clippy::too_many_arguments)]

use mpi_sys as mpi;
use std::os::raw::c_int;
