//! This process's death: [`die`] (the decision made, at a call's entry),
//! [`die_now`] (a death the program asks for, from any thread), and its record
//! ([`Death`], [`recorded`]) for the report at `MPI_Finalize`. `inject`'s
//! orchestration decides when to die; `legacy` and the C API ask for it.

use crate::engine::base::edges;
use crate::inject::me::{calls, t0, verbose, world_rank};
use crate::inject::plan::Cause;
use crate::inject::trace;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// A death, as the report lists it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Death {
    pub rank: u32,
    pub call: u64,
    pub time_s: f64,
    pub cause: Cause,
}

/// This process has died (simulated).
static DEAD: AtomicBool = AtomicBool::new(false);
/// This process's death, once it died.
static RECORD: Mutex<Option<Death>> = Mutex::new(None);
/// A death another thread asked for (its cause's code; 0: none): the thread that
/// called `MPI_Init` dies at the entry of its next MPI call ([`die_now`]).
static REQUESTED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// This thread called `MPI_Init`: the one that becomes the dead rank.
    static INIT_THREAD: Cell<bool> = const { Cell::new(false) };
}

pub fn is_dead() -> bool {
    DEAD.load(Ordering::Acquire)
}

/// This process's death, if it died.
pub fn recorded() -> Option<Death> {
    *RECORD.lock().unwrap()
}

/// From `MPI_Init`: the calling thread is the one that becomes the dead rank.
pub fn init_thread() {
    INIT_THREAD.with(|t| t.set(true));
}

/// A death another thread asked for is pending (the slow path must stay armed).
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Acquire) != 0
}

/// The cause of a death another thread asked for, when the calling thread is
/// the one to die of it (the thread that called `MPI_Init`).
pub fn requested_here() -> Option<Cause> {
    let cause = Cause::from_code(REQUESTED.load(Ordering::Acquire))?;
    INIT_THREAD.with(Cell::get).then_some(cause)
}

/// Dies now (never returns): records the death, tells the user, becomes a zombie.
pub fn die(name: &str, call: u64, cause: Cause) -> ! {
    let t = t0().elapsed().as_secs_f64();
    DEAD.store(true, Ordering::Release);
    edges::set(edges::ARMED, false);
    let rank = world_rank() as u32;
    *RECORD.lock().unwrap() = Some(Death { rank, call, time_s: t, cause });
    if verbose() >= 1 {
        let at = if name.is_empty() { format!("after call {call}") } else { format!("at call {call} ({name})") };
        crate::say!("MPIFT: rank {rank} dies {at}, cause {}, {t:.3} s after MPI_Init", cause.name());
    }
    trace::died(call, name);
    crate::engine::dead::zombie::kill_me()
}

/// A death the program asked for (`Sim_FT_kill_me`, a mapped signal, `exit`).
///
/// From the thread that called `MPI_Init`, now. From any other thread (a signal
/// sent by a helper thread while the main thread is inside MPI, say), that thread
/// cannot become the dead rank: it may not call MPI below `MPI_THREAD_MULTIPLE`,
/// and the main thread may hold the layer's state. So it records the request and
/// stops for good, as a killed process's threads do; the main thread dies at the
/// entry of its next MPI call, which the survivors then see as the death.
pub fn die_now(cause: Cause) -> ! {
    if INIT_THREAD.with(Cell::get) {
        die("", calls(), cause)
    }
    REQUESTED.store(cause.code(), Ordering::Release);
    edges::set(edges::ARMED, true);
    loop {
        std::thread::park();
    }
}
