//! The process's runtime context: the window, the shadow communicator, what
//! this process knows of dead ranks and revoked communicators. One lock
//! (`Serial`) guards it;
//! [`with`] is the one way in. `engine::news::news` fills it from the window's news and
//! creates and ends it at `MPI_Init` and `MPI_Finalize` ([`install`], [`take`]);
//! every part of the engine reads it.

use crate::transport::serial::Serial;
use crate::transport::window::Window;
use crate::transport::{self, MPI_Comm, MPI_Request};
use std::collections::HashMap;

pub struct Runtime {
    pub win: Window,
    pub shadow: MPI_Comm,
    /// The persistent receive of wake messages, and its buffer (engine::news::wake).
    pub(crate) wake_req: MPI_Request,
    pub(crate) wake_buf: Box<[u64; 4]>,
    /// Revoke hints sent and not known complete yet, with their buffers.
    pub(crate) hints: Vec<(MPI_Request, Box<[u64; 2]>)>,
    /// World ranks known dead, and in which order they became known.
    pub dead: Vec<bool>,
    pub dead_order: Vec<u32>,
    /// Revoked communicator ids, with the horizon once published.
    pub revoked: HashMap<u64, Option<u64>>,
    /// The next revoke-ring slot to read (engine::news::news).
    pub(crate) ring_next: u64,
    /// Collective log entries written by this process.
    pub(crate) log_count: u64,
    /// Which of those entries are kept after the ring overwrote them
    /// (engine::news::kept).
    pub(crate) keep: crate::protocol::keep::Keep,
    pub zombie: bool,
}

// SAFETY: the host handles inside (pointers with Open MPI) and the window's
// base pointer name host objects not tied to any thread; they are only used
// under RT's lock, by the thread that calls MPI. The buffers are plain memory
// owned by the runtime.
unsafe impl Send for Runtime {}

static RT: Serial<Option<Runtime>> = Serial::new(None);

pub fn with<R>(f: impl FnOnce(&mut Runtime) -> R) -> Option<R> {
    RT.lock().as_mut().map(f)
}

/// Makes `rt` the process's runtime (`MPI_Init`, engine::news::news::start).
pub fn install(rt: Runtime) {
    *RT.lock() = Some(rt);
}

/// Ends the process's runtime and hands it back (`MPI_Finalize`, engine::news::news::stop).
pub fn take() -> Option<Runtime> {
    RT.lock().take()
}

/// A revoke of communicator `id` is known here: Some(its horizon, if published).
pub fn revoked_id(id: u64) -> Option<Option<u64>> {
    with(|rt| rt.revoked.get(&id).copied()).flatten()
}

/// Is world rank `w` known dead here?
pub fn is_dead(w: u32) -> bool {
    with(|rt| rt.dead.get(w as usize).copied().unwrap_or(false)).unwrap_or(false)
}

pub fn world_size() -> usize {
    with(|rt| rt.win.n).unwrap_or(1)
}
pub fn world_rank() -> usize {
    with(|rt| rt.win.me).unwrap_or(0)
}
pub fn is_zombie() -> bool {
    with(|rt| rt.zombie).unwrap_or(false)
}
pub fn shadow() -> MPI_Comm {
    with(|rt| rt.shadow).unwrap_or_else(transport::comm_null)
}
