//! The types of a dead rank's (or a catching-up rank's) join, shared by the
//! dispatcher (engine::join::join) and the joins it dispatches to (join_colls,
//! ctor_join, topo): where it joins ([`Who`], [`At`]), what it keeps until a
//! non-blocking join completes ([`Pending`]), and its outcome ([`Joined`]).

use crate::transport::{self, MPI_Aint, MPI_Comm, MPI_Datatype, MPI_Request};
use std::mem::take;
use std::os::raw::c_int;

/// Buffers and request of a non-blocking dummy join, kept until it completes.
pub struct Pending {
    pub req: MPI_Request,
    _bufs: Vec<Vec<u8>>,
    _ints: Vec<Vec<c_int>>,
    _types: Vec<Vec<MPI_Datatype>>,
    _aints: Vec<Vec<MPI_Aint>>,
    /// Communicators the join makes (`MPI_Comm_idup`), freed once it completed.
    comms: Vec<Box<MPI_Comm>>,
}
// SAFETY: the request and datatypes are host handles (plain values any thread may
// pass to the host, which MPIFT calls under transport::serial's rules); the
// buffers are heap blocks owned here, and moving the Vecs does not move them.
unsafe impl Send for Pending {}

impl Pending {
    /// No request yet and nothing held.
    pub(crate) fn empty() -> Pending {
        Pending { req: transport::request_null(), _bufs: vec![], _ints: vec![], _types: vec![], _aints: vec![], comms: vec![] }
    }

    /// The real request and what must live until it completes.
    pub fn into_parts(mut self) -> (MPI_Request, Box<dyn std::any::Any + Send>) {
        let req = self.req;
        let (b, i, t, a, c) = (take(&mut self._bufs), take(&mut self._ints), take(&mut self._types), take(&mut self._aints), take(&mut self.comms));
        (req, Box::new(PendingBuffers(b, i, t, a, c)))
    }

    /// Keeps a message buffer until the join completes.
    pub(crate) fn buf(&mut self, b: Vec<u8>) {
        self._bufs.push(b);
    }

    /// Keeps a count or displacement array until the join completes.
    pub(crate) fn ints(&mut self, v: Vec<c_int>) {
        self._ints.push(v);
    }

    /// Keeps a datatype array until the join completes.
    pub(crate) fn types(&mut self, v: Vec<MPI_Datatype>) {
        self._types.push(v);
    }

    /// The place the host writes a communicator the join makes (its output
    /// argument), kept until the join completes and then freed.
    pub(crate) fn comm_out(&mut self) -> &mut MPI_Comm {
        self.comms.push(Box::new(transport::comm_null()));
        self.comms.last_mut().expect("just pushed")
    }

    /// Keeps an address-sized displacement array until the join completes.
    pub(crate) fn aints(&mut self, v: Vec<MPI_Aint>) {
        self._aints.push(v);
    }
}

/// The buffers of a dummy join handed over with its request.
#[allow(dead_code)] // held, never read: MPI reads and writes them
struct PendingBuffers(Vec<Vec<u8>>, Vec<Vec<c_int>>, Vec<Vec<MPI_Datatype>>, Vec<Vec<MPI_Aint>>, Vec<Box<MPI_Comm>>);

impl Drop for Pending {
    /// A join whose request was waited for where it was made (a catch-up):
    /// what it made is freed as in [`PendingBuffers`].
    fn drop(&mut self) {
        free_comms(&mut self.comms);
    }
}

fn free_comms(comms: &mut Vec<Box<MPI_Comm>>) {
    for c in comms.drain(..) {
        free_comm(*c);
    }
}

impl Drop for PendingBuffers {
    /// Dropped once the join's request completed (engine::dead::zombie's in-flight
    /// list, engine::registry::orphans): a communicator it made is no one's.
    fn drop(&mut self) {
        free_comms(&mut self.4);
    }
}
// SAFETY: only touched (dropped) by the thread that calls MPI; the datatype
// handles in it are plain host values and the byte buffers are owned heap blocks.
unsafe impl Send for PendingBuffers {}

/// The communicator a dummy joins on, from the joiner's point of view, and the
/// collective's number there.
pub struct Who<'a> {
    pub real: MPI_Comm,
    pub rank: usize,
    pub size: usize,
    /// Job-wide id and world ranks of the members (MPIFT's own barrier).
    pub id: u64,
    pub members: &'a [u32],
    pub seq: u64,
    /// A dead rank's join: MPIFT's own collectives start as parts that run
    /// alongside everything else (engine::join::standin) instead of blocking here.
    pub standin: bool,
}

/// Outcome of a join: done (blocking), pending (non-blocking), or impossible.
pub enum Joined {
    Done,
    Pending(Pending),
    Unsupported,
}

/// Where and how a dummy joins: the real communicator, its size, the joiner's
/// rank in it, and whether the collective is the non-blocking twin.
pub(crate) struct At {
    pub c: MPI_Comm,
    pub n: usize,
    pub me: usize,
    pub nb: bool,
}

impl At {
    /// The outcome of a join that started its call (`Some`) or could not (`None`).
    pub(crate) fn outcome(&self, p: Option<Pending>) -> Joined {
        match p {
            None => Joined::Unsupported,
            Some(p) if self.nb => Joined::Pending(p),
            Some(_) => Joined::Done,
        }
    }
}

/// Frees a communicator a dummy made only to take part in its creation (none if
/// the constructor failed), counting it among the transient ones.
pub fn free_comm(mut nc: MPI_Comm) {
    transport::stats::transient_comm(nc != transport::comm_null());
    if nc != transport::comm_null() {
        transport::comm::free(&mut nc);
    }
}
