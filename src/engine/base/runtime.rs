//! The process's runtime context: the window, the shadow communicator, what
//! this process knows of dead ranks and revoked communicators, and the settings
//! read once (`MPIFT_DEBUG`, `SIM_FT_TIMEOUT`). One lock (`Serial`) guards it;
//! [`with`] is the one way in. `engine::news` fills it from the window's news and
//! creates and ends it at `MPI_Init` and `MPI_Finalize` ([`install`], [`take`]);
//! every part of the engine reads it.

use crate::transport::serial::Serial;
use crate::transport::window::Window;
use crate::transport::{self, MPI_Comm, MPI_Request};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

pub struct Runtime {
    pub win: Window,
    pub shadow: MPI_Comm,
    /// The persistent receive of wake messages, and its buffer (engine::wake).
    pub(crate) wake_req: MPI_Request,
    pub(crate) wake_buf: Box<[u64; 4]>,
    /// Revoke hints sent and not known complete yet, with their buffers.
    pub(crate) hints: Vec<(MPI_Request, Box<[u64; 2]>)>,
    /// World ranks known dead, and in which order they became known.
    pub dead: Vec<bool>,
    pub dead_order: Vec<u32>,
    /// Revoked communicator ids, with the horizon once published.
    pub revoked: HashMap<u64, Option<u64>>,
    /// The next revoke-ring slot to read (engine::news).
    pub(crate) ring_next: u64,
    /// Collective log entries written by this process.
    pub(crate) log_count: u64,
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

/// Makes `rt` the process's runtime (`MPI_Init`, engine::news::start).
pub fn install(rt: Runtime) {
    *RT.lock() = Some(rt);
}

/// Ends the process's runtime and hands it back (`MPI_Finalize`, engine::news::stop).
pub fn take() -> Option<Runtime> {
    RT.lock().take()
}

/// `MPIFT_DEBUG` as read once: None unset, Some(true) `stuck`, Some(false) any
/// other value.
fn debug_setting() -> Option<bool> {
    static ON: std::sync::OnceLock<Option<bool>> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("MPIFT_DEBUG").map(|v| v == "stuck"))
}

/// `MPIFT_DEBUG` is set, to anything but `stuck`: dead ranks report what they
/// read and wait for, at every turn of their loop.
pub fn debug() -> bool {
    debug_setting() == Some(false)
}

/// `MPIFT_DEBUG` is set, `stuck` included: a dead rank that cannot leave says why
/// (engine::zombie), and nothing else is printed with `stuck`, so a hunt for a
/// rare hang keeps the timing of a quiet run.
pub fn debug_stuck() -> bool {
    debug_setting().is_some()
}

/// Simulated detection delay in microseconds (`SIM_FT_TIMEOUT`).
static TIMEOUT_US: AtomicU64 = AtomicU64::new(0);

pub fn timeout() -> Duration {
    Duration::from_micros(TIMEOUT_US.load(Ordering::Relaxed))
}
pub fn set_timeout(seconds: f64) {
    let us = if seconds.is_finite() && seconds > 0.0 { (seconds * 1e6) as u64 } else { 0 };
    TIMEOUT_US.store(us, Ordering::Relaxed);
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
