//! Handle conversions between C and Fortran (MPI-3.1 §17.2.4): `MPI_Comm_c2f`,
//! `MPI_Comm_f2c`, `MPI_Request_c2f`, `MPI_Request_f2c`.
//!
//! Fortran code is not redirected, so a Fortran handle is the real MPI's: `c2f`
//! converts the real handle behind MPIFT's, `f2c` finds MPIFT's handle for the
//! real one (a round trip gives back the same handle, predefined ones included).
//! A real handle MPIFT has never seen (created by Fortran code) is wrapped then.
//! Null converts to null both ways. Neither direction has an error code: an
//! invalid MPIFT handle converts like the null handle.

use crate::engine::base::handles::{Sim_FT_MPI_Comm, Sim_FT_MPI_Request};
use crate::engine::{registry::comm, registry::request};
use crate::transport::{self, MPI_Fint};

/// `MPI_Comm_c2f`.
pub fn comm_c2f(c: Sim_FT_MPI_Comm) -> MPI_Fint {
    let real = comm::lookup(c).map_or_else(transport::comm_null, |cr| cr.real);
    transport::comm_c2f(real)
}

/// `MPI_Comm_f2c`.
pub fn comm_f2c(f: MPI_Fint) -> Sim_FT_MPI_Comm {
    let real = transport::comm_f2c(f);
    if real == transport::comm_null() {
        return std::ptr::null_mut();
    }
    if let Some(h) = comm::find_by_real(real) {
        return h;
    }
    crate::calls::dynamic::adopt_foreign(real, crate::calls::dynamic::F2C_SEED).unwrap_or(std::ptr::null_mut())
}

/// `MPI_Request_c2f`.
pub fn request_c2f(r: Sim_FT_MPI_Request) -> MPI_Fint {
    let real = if r.is_null() {
        transport::request_null()
    } else {
        request::lookup(r).map_or_else(|_| transport::request_null(), |st| st.real.0)
    };
    transport::request_c2f(real)
}

/// `MPI_Request_f2c`.
pub fn request_f2c(f: MPI_Fint) -> Sim_FT_MPI_Request {
    let real = transport::request_f2c(f);
    if real == transport::request_null() {
        return std::ptr::null_mut();
    }
    request::find_by_real(real).unwrap_or_else(|| request::adopt_plain(real))
}
