//! The layer's public memory: one RMA window over `MPI_COMM_WORLD`, one region per
//! process, read and written with passive-target RMA (MPI-3.1 §11.5.4) inside a
//! `lock_all` epoch that lasts from `MPI_Init` to `MPI_Finalize`.
//!
//! Why a window and not messages (GUIDE, "Measured facts"): a rank blocked inside a
//! real collective cannot receive anything, but its window can still be read and
//! written. So the failure-free path costs a few local stores per collective (the
//! log entry below) and no message, and failure news reaches a rank even while it
//! is blocked.
//!
//! Region layout, in 64-bit words (`n` = world size):
//!
//! | words | written by | meaning |
//! |---|---|---|
//! | `NEWS_GEN` | others (accumulate) | bumped after every news item |
//! | `FINALIZING` | owner | 1: the owner's program is done (in `MPI_Finalize`, still filling in); 2: it logs nothing more (engine::news::news) |
//! | `REVOKE_HEAD` | others (fetch-and-op) | slots taken in the revoke ring |
//! | `LOG_HEAD` | owner | collective log entries written so far |
//! | `KILL_TICKETS` | others (fetch-and-op) | rank 0's only: injected deaths so far (`max=M`, src/inject) |
//! | `SPARES_TAKEN`, `SPAWNS` | others (fetch-and-op) | rank 0's only: spares handed out, spawns served (calls::spares) |
//! | `TURN`..+3 | owner | a dead owner's turn for blocking joins (protocol::turns) |
//! | `DEAD + w` | rank w | rank w is (simulated) dead |
//! | `RING + 3i` | others | revoke ring: (horizon + 1 or 0, comm id, check), one update |
//! | `SENT + z` | rank z | messages z sent here per communicator before it died |
//! | `LOG + k*E` | owner | the owner's last `LOG_LEN` collective descriptors |
//! | `KEEP + j*E` | owner | `KEEP_LEN` older descriptors it keeps (protocol::keep) |
//! | `FT + j*F` | owner | agreement slots (engine::agree::ft): what the owner published for an agree or shrink |
//!
//! Memory-order rule (the Dekker pair behind revoke and death, docs/ARCHITECTURE.md):
//! the owner writes its log entry, fences, then reads its news; a writer of news
//! waits until its updates are applied at every target (`rupdate` requests
//! complete, transport::script), then reads logs. One of the two always sees the
//! other. A log entry is *pending* until that read of the news, then *entered* or
//! *cancelled* (word [`ENTRY_STATE`]): a revoker counts only entered ones, and
//! waits for a pending one to be decided.

use crate::transport::{mpi, stats};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{fence, Ordering};

pub const NEWS_GEN: usize = 0;
pub const FINALIZING: usize = 1;
pub const REVOKE_HEAD: usize = 2;
pub const LOG_HEAD: usize = 3;
/// Deaths the injection policy has granted, job-wide: used in rank 0's region only.
pub const KILL_TICKETS: usize = 4;
/// The id of the communicator whose `MPIX_Comm_agree` this process is in (0: none;
/// engine::agree::ft, read by engine::dead::fillin).
pub const IN_AGREE: usize = 5;
/// Spare processes handed out so far (`MPIFT_SPARES`, calls::spares): rank 0's
/// region only.
pub const SPARES_TAKEN: usize = 6;
/// Spawns served from the spares so far, job-wide: rank 0's region only.
pub const SPAWNS: usize = 7;
/// A dead rank's turn state for blocking joins (protocol::turns, 3 words; the
/// owner writes, other dead ranks read).
pub const TURN: usize = 8;
pub const DEAD: usize = 11;
/// Revoke ring slots (triples: value, comm id, check word).
pub const RING_LEN: usize = 64;
/// Words of a revoke ring slot.
pub const RING_SLOT: usize = 3;
/// Communicators per dead rank whose message counts it can report.
pub const SENT_SLOTS: usize = 8;
/// Collective log entries kept per process.
pub const LOG_LEN: usize = 32;
/// Log entries a process keeps after its ring overwrote them (protocol::keep:
/// per-member lists nobody has closed yet).
pub const KEEP_LEN: usize = 8;
/// Fixed header words of a log entry; `2n` per-peer words follow.
pub const ENTRY_HEAD: usize = 16;
/// Word of a log entry with its state (not covered by the entry's stamps: the one
/// word the owner changes after writing the entry).
pub const ENTRY_STATE: usize = 14;
/// [`ENTRY_STATE`] values: written, the news not read yet; the collective is
/// entered (or joined as a dummy); taken back (the communicator was revoked).
pub const PENDING: u64 = 0;
pub const ENTERED: u64 = 1;
pub const CANCELLED: u64 = 2;
/// Agreement slots per process (engine::agree::ft), and how many consecutive slots an
/// instance may land in (its probe window).
pub const FT_SLOTS: usize = 64;
pub const FT_PROBE: usize = 4;

/// The check word of a revoke ring slot holding `(value, id)`: a reader takes the
/// slot only when the three words agree, so the writer can put all three in one
/// update whose words may land in any order.
pub fn ring_check(value: u64, id: u64) -> u64 {
    (id ^ value.rotate_left(17) ^ 0x5bd1_e995_9e37_79b9).wrapping_mul(0xff51_afd7_ed55_8ccd) | 1
}

extern "C" {
    static MPIFT_UINT64: mpi::MPI_Datatype;
    static MPIFT_OP_SUM: mpi::MPI_Op;
    static MPIFT_OP_REPLACE: mpi::MPI_Op;
    static MPIFT_MODE_NOCHECK: c_int;
    static MPIFT_INFO_NULL: mpi::MPI_Info;
    fn mpift_win_unified(win: mpi::MPI_Win) -> c_int;
}

/// The log entries after number `after` that a region whose log head is `head`
/// still holds, as runs of consecutive slots: (first entry, entries), one run, or
/// two when the ring wraps. A reader fetches each run with one RMA read (each read
/// is a round trip to the owner; one per entry made a revoke after 20 barriers cost
/// 21 per member).
pub fn log_runs(after: u64, head: u64) -> impl Iterator<Item = (u64, usize)> {
    let first = after.max(head.saturating_sub(LOG_LEN as u64));
    let count = head.saturating_sub(first) as usize;
    let run1 = count.min(LOG_LEN - first as usize % LOG_LEN);
    [(first, run1), (first + run1 as u64, count - run1)].into_iter().filter(|(_, len)| *len > 0)
}

pub struct Window {
    win: mpi::MPI_Win,
    base: *mut u64,
    pub n: usize,
    pub me: usize,
    /// `MPI_WIN_MODEL` is `MPI_WIN_UNIFIED`: [`Window::sync`] needs no MPI call.
    unified: bool,
}

// The window is only used from the thread that calls MPI (MPI_THREAD_SINGLE/FUNNELED).
// SAFETY: the fields are a host handle and the address of memory the host
// allocated for the whole process (valid from any thread until `free`); the one
// window lives in engine::news::news's runtime behind a `Serial` lock, so one thread
// at a time uses it.
unsafe impl Send for Window {}
// SAFETY: `&Window` methods only do volatile loads and stores of the own region
// and host RMA calls (which the host allows from any thread), and the window is
// reached through engine::news::news's `Serial` lock: one thread at a time.
unsafe impl Sync for Window {}

impl Window {
    pub fn ring(&self) -> usize {
        DEAD + self.n
    }
    pub fn entry_words(&self) -> usize {
        ENTRY_HEAD + 2 * self.n + 1
    }
    /// Per dead rank `z`: what it sent here before dying, `SENT_SLOTS` pairs
    /// (communicator id, messages) starting at `sent(z)`.
    pub fn sent(&self, z: usize) -> usize {
        self.ring() + RING_SLOT * RING_LEN + z * 2 * SENT_SLOTS
    }
    pub fn log(&self) -> usize {
        self.ring() + RING_SLOT * RING_LEN + self.n * 2 * SENT_SLOTS
    }
    /// Offset of keep slot `j` (protocol::keep): an entry the ring overwrote.
    pub fn keep_slot(&self, j: usize) -> usize {
        self.log() + (LOG_LEN + j) * self.entry_words()
    }
    /// Offset of agreement slot `j` (engine::agree::ft).
    pub fn ft_slot(&self, j: usize) -> usize {
        self.keep_slot(KEEP_LEN) + j * self.ft_slot_words()
    }
    /// Words of an agreement slot, sized for the world (no communicator is larger):
    /// comm id, instance, then contribution, partial and result of
    /// `1 + 2 ceil(n / 64)` words each (protocol::agree's layout), each followed by
    /// its check word.
    pub fn ft_slot_words(&self) -> usize {
        2 + 3 * (1 + 2 * self.n.div_ceil(64) + 1)
    }
    fn words(&self) -> usize {
        self.ft_slot(FT_SLOTS)
    }
    /// Offset of log entry number `k` (0-based count of entries written).
    pub fn entry_at(&self, k: u64) -> usize {
        self.log() + (k as usize % LOG_LEN) * self.entry_words()
    }

    /// Collective over `world`: allocates the window and opens the epoch.
    pub fn create(world: mpi::MPI_Comm) -> Result<Window, c_int> {
        let (mut n, mut me) = (0, 0);
        // SAFETY: `world` is the host's communicator; `n` and `me` are live local
        // out-ints.
        unsafe {
            mpi::MPI_Comm_size(world, &mut n);
            mpi::MPI_Comm_rank(world, &mut me);
        }
        // SAFETY: MPI_Win is a C handle (a pointer in Open MPI, an int in MPICH):
        // all-zero bytes are a valid value, overwritten by MPI_Win_allocate.
        let mut w = Window { win: unsafe { std::mem::zeroed() }, base: std::ptr::null_mut(), n: n as usize, me: me as usize, unified: false };
        // A multiple of the page size: MPICH 4.0 (ch4, shared memory) misplaces
        // odd ranks' regions when the size is not (peers then read zeros; found
        // with master_worker, reproduced with a 20-line program).
        let bytes = ((w.words() * 8).div_ceil(4096) * 4096) as mpi::MPI_Aint;
        let mut base: *mut c_void = std::ptr::null_mut();
        // SAFETY: MPI_Win_allocate's `baseptr` is really a `void **`: `&mut base`
        // is a live local pointer it fills in; `w.win` a live out-handle.
        let rc = unsafe {
            mpi::MPI_Win_allocate(bytes, 8, MPIFT_INFO_NULL, world, &mut base as *mut _ as *mut c_void, &mut w.win)
        };
        if rc != 0 {
            return Err(rc);
        }
        w.base = base as *mut u64;
        // SAFETY: `w.win` is the window just allocated; the shim only reads its
        // MPI_WIN_MODEL attribute.
        w.unified = unsafe { mpift_win_unified(w.win) } != 0;
        // SAFETY: the host allocated `bytes` >= `w.words() * 8` bytes at `w.base`
        // (8-aligned, disp unit 8), and nobody reads them before the barrier.
        unsafe { std::ptr::write_bytes(w.base, 0, w.words()) };
        // SAFETY: the live window just allocated and a predefined errhandler.
        unsafe { mpi::MPI_Win_set_errhandler(w.win, crate::transport::errors_return()) };
        // Everyone's region is zero before anyone reads or writes it.
        // SAFETY: a blocking barrier on the host's communicator; no memory passes.
        unsafe { mpi::MPI_Barrier(world) };
        stats::bump(&stats::WINDOWS);
        stats::bump(&stats::INIT_COLLECTIVES);
        // SAFETY: the live window and a mode constant; opens the one epoch.
        let rc = unsafe { mpi::MPI_Win_lock_all(MPIFT_MODE_NOCHECK, w.win) };
        if rc != 0 {
            return Err(rc);
        }
        Ok(w)
    }

    /// Collective: closes the epoch and frees the window (in `MPI_Finalize`).
    pub fn free(&mut self) {
        // SAFETY: the window `create` made, its lock_all epoch open; after this
        // `base` dangles, and the one caller (engine::news::news::stop) drops the window
        // right after, having cleared the pointers it handed out.
        unsafe {
            mpi::MPI_Win_unlock_all(self.win);
            mpi::MPI_Win_free(&mut self.win);
        }
    }

    /// Base of this process's own region.
    pub fn base_ptr(&self) -> *mut u64 {
        self.base
    }

    // --- the owner's own region: plain loads and stores ------------------------

    pub fn load(&self, at: usize) -> u64 {
        debug_assert!(at < self.words(), "word {at} outside the region");
        // SAFETY: `base` is the host's live allocation of `words()` u64s (until
        // `free`); callers pass offsets from the layout above, all below
        // `words()` (checked in debug builds only: this is on every call's
        // path). Volatile: other processes update the region through RMA behind
        // Rust's back.
        unsafe { std::ptr::read_volatile(self.base.add(at)) }
    }
    pub fn store(&self, at: usize, v: u64) {
        debug_assert!(at < self.words(), "word {at} outside the region");
        // SAFETY: `base` is the host's live allocation of `words()` u64s (until
        // `free`); callers pass offsets from the layout above, all below
        // `words()` (checked in debug builds only). Volatile, for the RMA readers.
        unsafe { std::ptr::write_volatile(self.base.add(at), v) }
    }
    /// Makes the owner's stores visible before its following loads. In the unified
    /// memory model (both MPICH 4.0 and Open MPI 4.1 report it for this window) the
    /// window is ordinary memory that RMA updates in place, and a sequentially
    /// consistent fence is the barrier the Dekker pair needs; `MPI_Win_sync` would
    /// add nothing but a trip through the progress engine, which in Open MPI yields
    /// the CPU when the node is oversubscribed (bench/README.md measured Bcast of
    /// one int 22.8x plain with it, 2.5x without). In the separate model
    /// `MPI_Win_sync` also synchronises the public and private copies.
    pub fn sync(&self) {
        fence(Ordering::SeqCst);
        if !self.unified {
            // SAFETY: the live window, inside its lock_all epoch.
            unsafe { mpi::MPI_Win_sync(self.win) };
            fence(Ordering::SeqCst);
        }
    }

    // --- other processes' regions: RMA --------------------------------------

    pub fn fetch_add(&self, target: usize, at: usize, v: u64) -> u64 {
        let mut old = 0u64;
        stats::bump(&stats::RMA_OPS);
        // SAFETY: `v` and `old` are live locals of one u64 each, and the flush
        // completes the operation before they go out of scope; `at` is a word
        // offset in units of the window's disp unit (8).
        unsafe {
            mpi::MPI_Fetch_and_op(
                &v as *const u64 as *const c_void,
                &mut old as *mut u64 as *mut c_void,
                MPIFT_UINT64,
                target as c_int,
                at as mpi::MPI_Aint,
                MPIFT_OP_SUM,
                self.win,
            );
            mpi::MPI_Win_flush(target as c_int, self.win);
        }
        old
    }
    /// Reads `out.len()` words of `target`'s region at `at`, waiting for them.
    /// A request-based read and `MPI_Wait`, not `MPI_Get` and `MPI_Win_flush`:
    /// Open MPI 4.1's flush went through its progress engine and yielded the CPU
    /// when oversubscribed (2.6 us per read at 4 ranks on 2 cores; `MPI_Rget` +
    /// `MPI_Wait` 0.03 us, shared memory).
    pub fn get(&self, target: usize, at: usize, out: &mut [u64]) {
        let mut req = self.rget(target, at, out);
        if req != crate::transport::request_null() {
            // SAFETY: the request `rget` just started, still borrowing `out`,
            // which outlives this wait; the status is ignored.
            unsafe { mpi::MPI_Wait(&mut req, crate::transport::status_ignore()) };
        }
    }
    /// Starts reading `out.len()` words of `target`'s region at `at`; the returned
    /// request completes the read (`MPI_REQUEST_NULL` when `target` is this
    /// process: read at once). `out` must stay in place until then.
    pub fn rget(&self, target: usize, at: usize, out: &mut [u64]) -> mpi::MPI_Request {
        if target == self.me {
            for (i, o) in out.iter_mut().enumerate() {
                *o = self.load(at + i);
            }
            return crate::transport::request_null();
        }
        let mut req = crate::transport::request_null();
        stats::bump(&stats::RMA_OPS);
        // SAFETY: `out` is a live slice of `out.len()` u64s; it must stay in place
        // until the request completes, which the doc above asks of the caller
        // (not enforced: the request outlives the borrow); `req` a live out-handle.
        unsafe {
            mpi::MPI_Rget(
                out.as_mut_ptr() as *mut c_void,
                out.len() as c_int,
                MPIFT_UINT64,
                target as c_int,
                at as mpi::MPI_Aint,
                out.len() as c_int,
                MPIFT_UINT64,
                self.win,
                &mut req,
            );
        }
        req
    }
    /// Starts an atomic update of `vals.len()` words of `target`'s region at `at`
    /// (replace, or add with `sum`), fetching the old values into `old`. When the
    /// returned request completes, the update has been applied at the target — a
    /// non-blocking put-and-flush (MPI-3.1 §11.3.4, §11.7.2: accumulates to the
    /// same location are ordered). `MPI_REQUEST_NULL`: `target` is this process,
    /// done at once. `vals` and `old` must stay in place until completion.
    pub fn rupdate(&self, target: usize, at: usize, vals: &[u64], sum: bool, old: &mut [u64]) -> mpi::MPI_Request {
        if target == self.me {
            for (i, v) in vals.iter().enumerate() {
                old[i] = self.load(at + i);
                self.store(at + i, if sum { old[i].wrapping_add(*v) } else { *v });
            }
            return crate::transport::request_null();
        }
        let mut req = crate::transport::request_null();
        stats::bump(&stats::RMA_OPS);
        // SAFETY: `vals` and `old` are live slices of their lengths (the counts
        // passed); both must stay in place until the request
        // completes, which the doc above asks of the caller (transport::script
        // keeps them boxed beside the request); `req` a live out-handle.
        unsafe {
            mpi::MPI_Rget_accumulate(
                vals.as_ptr() as *const c_void,
                vals.len() as c_int,
                MPIFT_UINT64,
                old.as_mut_ptr() as *mut c_void,
                old.len() as c_int,
                MPIFT_UINT64,
                target as c_int,
                at as mpi::MPI_Aint,
                vals.len() as c_int,
                MPIFT_UINT64,
                if sum { MPIFT_OP_SUM } else { MPIFT_OP_REPLACE },
                self.win,
                &mut req,
            );
        }
        req
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_runs_cover_the_kept_entries_once_in_order() {
        let l = LOG_LEN as u64;
        assert_eq!(log_runs(5, 5).count(), 0);
        assert_eq!(log_runs(3, 10).collect::<Vec<_>>(), vec![(3, 7)]);
        // Wraps: entries 30..40 sit in slots 30, 31, then 0..7.
        assert_eq!(log_runs(30, 40).collect::<Vec<_>>(), vec![(30, 2), (32, 8)]);
        // Older than the ring holds: only the last LOG_LEN.
        assert_eq!(log_runs(0, 3 * l + 4).collect::<Vec<_>>(), vec![(2 * l + 4, LOG_LEN - 4), (3 * l, 4)]);
        assert_eq!(log_runs(0, l).collect::<Vec<_>>(), vec![(0, LOG_LEN)]);
    }
}

impl Window {
    /// Address of word `at` of this process's own region, for a reader or writer
    /// that cannot take the lock the window sits behind (engine::news::news's fast
    /// path). Valid until [`Window::free`]; reads and writes through it must be
    /// volatile, like [`Window::load`] and [`Window::store`].
    /// Making the pointer is safe; whoever reads or writes through it argues
    /// that `at` is inside the region (checked in debug builds: this is on every
    /// collective's path).
    #[inline]
    pub fn word_ptr(&self, at: usize) -> *mut u64 {
        debug_assert!(at < self.words(), "word {at} outside the region");
        self.base.wrapping_add(at)
    }
}
