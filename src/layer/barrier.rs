//! `MPI_Barrier` as MPIFT's own dissemination barrier (protocol::dissem), so that a
//! member waiting in it on a communicator that gets revoked returns
//! `MPI_ERR_REVOKED` by itself, whatever the other members are doing (issue 19):
//! inside a host MPI's blocking barrier it could only wait for the others to join
//! for it, which they cannot while they are themselves inside a real blocking
//! collective or compute outside MPI.
//!
//! Messages are 16-byte stamps on MPIFT's shadow communicator (tag
//! [`TAG_BARRIER`], world ranks), sent with `MPI_Isend` and received with
//! `MPI_Irecv` from the round's partner; the program's wait is `MPI_Waitany` over
//! that receive and the wake receive, like every MPIFT wait (layer::complete), so
//! news interrupts it. Dead ranks and fill-ins run the same barrier for the
//! members they stand in for (layer::join); a catch-up on a revoked communicator
//! has nothing to do, since its members left by themselves.
//!
//! Intracommunicators only, in the default mode (`MPIFT_COLLECTIVES=blocking`),
//! and unless `MPIFT_BARRIER=host` (rank 0's, shared at `MPI_Init`).

use crate::ffi::errors::{Failure, Outcome, SIM_FT_ERR_REVOKED};
use crate::ffi::handles::{self, Sim_FT_MPI_Comm};
use crate::layer::{comm, describe, hooks, news, service};
use crate::protocol::dissem::{partners, rounds, Mailbox, Sorted, Stamp};
use crate::transport::serial::Serial;
use crate::transport::{self, mpi};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

/// The shadow communicator's tag for barrier stamps (news::TAG_WAKE is 1).
pub const TAG_BARRIER: c_int = 2;

/// `MPI_Barrier` on intracommunicators runs here (rank 0's `MPIFT_BARRIER`).
static OWN: AtomicBool = AtomicBool::new(true);

pub fn set_own(on: bool) {
    OWN.store(on, Ordering::Relaxed);
}

/// Barriers (the program's and the joins') run as MPIFT's own.
#[inline]
pub fn own() -> bool {
    OWN.load(Ordering::Relaxed)
}

/// Send buffers: a ring of slots in static memory, so a send's buffer stays put
/// until MPI is done with it, without an allocation per message. A slot is
/// reused once its send completed (16-byte sends complete at once on both MPIs:
/// they go eagerly); one still pending is skipped.
const SLOTS: usize = 64;

/// Stamps that arrived before their barrier, and the send ring.
struct State {
    mailbox: Mailbox,
    bufs: [[u64; 2]; SLOTS],
    reqs: [mpi::MPI_Request; SLOTS],
    /// Bit i: `reqs[i]` holds a request (until then it is not a valid handle:
    /// the host's `MPI_REQUEST_NULL` is not known at compile time).
    used: u64,
    next: usize,
}
// Only the thread that calls MPI touches it (transport::serial).
unsafe impl Send for State {}

static STATE: Serial<State> = Serial::new(State {
    mailbox: Mailbox::new(),
    bufs: [[0; 2]; SLOTS],
    // SAFETY: placeholders, never passed to MPI before `used` marks them.
    reqs: unsafe { std::mem::zeroed() },
    used: 0,
    next: 0,
});

/// How a barrier ended at this member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    Done,
    /// The communicator is revoked (here: abandoned, nothing more is sent).
    Revoked,
}

/// Is communicator `id` known revoked here (news or a revoke hint)?
fn revoked_id(id: u64) -> bool {
    if news::revoked_id(id).is_some() {
        return true;
    }
    let mut r = false;
    comm::for_each(|s| r |= s.id == id && s.revoked);
    r
}

/// Sends `stamp` to world rank `to` from the next free slot of the ring.
fn isend(stamp: Stamp, to: u32) {
    let mut guard = STATE.lock();
    let st = &mut *guard;
    let mut tries = 0;
    let i = loop {
        let i = st.next;
        st.next = (st.next + 1) % SLOTS;
        if st.used & (1 << i) == 0 || transport::test_done(&mut st.reqs[i]) {
            break i;
        }
        tries += 1;
        if tries == SLOTS {
            // Every slot still sending (partners out of MPI for long, 64 stamps
            // pending): wait for this one.
            // SAFETY: a live send request of ours.
            unsafe { mpi::MPI_Wait(&mut st.reqs[i], transport::status_ignore()) };
            break i;
        }
    };
    st.used |= 1 << i;
    st.bufs[i] = stamp.words();
    // SAFETY: the slot's buffer is static memory, not written again until this
    // send completed (checked above when the ring comes back to it).
    unsafe {
        mpi::MPI_Isend(st.bufs[i].as_ptr() as *const c_void, 2, transport::dt_uint64(), to as c_int, TAG_BARRIER, news::shadow(), &mut st.reqs[i])
    };
}

/// A posted receive of one stamp. Its buffer is the caller's (on its stack, not
/// moved while the receive is posted).
struct Recv {
    req: mpi::MPI_Request,
}

impl Recv {
    fn post(from: u32, buf: &mut [u64; 2]) -> Recv {
        let mut r = Recv { req: transport::request_null() };
        // SAFETY: `buf` outlives the receive: it is completed or cancelled (and
        // waited for) before the caller's frame ends.
        unsafe {
            mpi::MPI_Irecv(buf.as_mut_ptr() as *mut c_void, 2, transport::dt_uint64(), from as c_int, TAG_BARRIER, news::shadow(), &mut r.req)
        };
        r
    }

    /// Stops waiting for `want` from `from`: cancelled, or, if a stamp had already
    /// matched the receive, that stamp is sorted like any other (it may be another
    /// communicator's barrier that the sender is already in: found by
    /// revoke_release_computing on MPICH, where dropping it hung that barrier).
    fn cancel(mut self, buf: &[u64; 2], from: u32, want: Stamp) {
        let mut status: mpi::MPI_Status = unsafe { std::mem::zeroed() };
        let mut cancelled: c_int = 0;
        // SAFETY: our own pending receive; waited for once after the cancel.
        unsafe {
            mpi::MPI_Cancel(&mut self.req);
            mpi::MPI_Wait(&mut self.req, &mut status);
            mpi::MPI_Test_cancelled(&status, &mut cancelled);
        }
        if cancelled == 0 {
            let got = Stamp::from_words(*buf);
            // The abandoned barrier's own stamp sorts as Mine and is dropped.
            let _ = STATE.lock().mailbox.sort(from, got, want, revoked_id);
        }
    }
}

/// How the waiting member spends its time between looks at its receive.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Waiter {
    /// The program's own call on communicator `h`: MPIFT's service (news, revoke
    /// jobs, agreements, catch-ups) runs while it waits, and it leaves once `h` is
    /// revoked here.
    Program(Sim_FT_MPI_Comm),
    /// A dead rank's or a fill-in's join: reads news only, leaves once the
    /// communicator is known revoked.
    Join,
}

/// Receives the stamp `want` from `from`; false: the communicator was revoked
/// (the receive is cancelled).
fn wait_stamp(from: u32, want: Stamp, how: Waiter) -> bool {
    let mut buf = [0u64; 2];
    let mut r = Recv::post(from, &mut buf);
    let mut idle: Option<crate::layer::revoke::Idle> = None;
    loop {
        let revoked = match how {
            Waiter::Program(h) => {
                // Leaves as soon as the revoke is known here (a hint may have come
                // with the last wake-up), before the service would wait for the
                // revoke's horizon: the program's next MPI call waits for it at
                // its entry (service::run), so nothing this rank does through MPI
                // can lead another member into a real blocking collective before
                // the revoke reached that member; only the return is earlier,
                // also while members compute outside MPI (with MPICH the horizon
                // waits for them).
                let revoked = || !comm::calm() && comm::read(h, |s| s.revoked).unwrap_or(false);
                revoked() || {
                    let _ = service::run_in_wait_if_new();
                    revoked()
                }
            }
            Waiter::Join => {
                news::refresh();
                revoked_id(want.id)
            }
        };
        if revoked {
            r.cancel(&buf, from, want);
            return false;
        }
        let arrived = if how == Waiter::Join || service::must_poll() {
            // Nothing wakes a blocked wait for these (an agreement advances only
            // while its rank polls; a join reads news by polling).
            let done = transport::test_done(&mut r.req);
            if !done {
                idle.get_or_insert_with(crate::layer::revoke::Idle::new).pause();
            }
            done
        } else {
            let mut pair = [r.req, news::wake_request()];
            let mut idx: c_int = -1;
            // SAFETY: two valid requests; the status is ignored.
            unsafe { mpi::MPI_Waitany(2, pair.as_mut_ptr(), &mut idx, transport::status_ignore()) };
            r.req = pair[0];
            if idx == 1 {
                news::rearm_wake(pair[1]);
                false
            } else {
                true
            }
        };
        if !arrived {
            continue;
        }
        let got = Stamp::from_words(buf);
        let sorted = STATE.lock().mailbox.sort(from, got, want, revoked_id);
        if sorted == Sorted::Mine {
            return true;
        }
        r = Recv::post(from, &mut buf);
    }
}

/// Runs barrier number `seq` of communicator `id` as member `me` of `n`, where
/// `pair(to, from)` gives the world ranks of members `to` and `from`.
fn run(id: u64, seq: u64, me: usize, n: usize, pair: &dyn Fn(usize, usize) -> (u32, u32), how: Waiter) -> Ended {
    let want = Stamp { id, seq };
    if news::debug() {
        crate::say!("MPIFT barrier {}: comm {:x} #{} enters", news::world_rank(), id, seq);
    }
    for d in rounds(n) {
        let (to, from) = partners(me, n, d);
        let (to, from) = pair(to, from);
        isend(want, to);
        if STATE.lock().mailbox.take(from, want) {
            continue;
        }
        if !wait_stamp(from, want, how) {
            if news::debug() {
                crate::say!("MPIFT barrier {}: comm {:x} #{} revoked, leaves", news::world_rank(), id, seq);
            }
            STATE.lock().mailbox.purge(revoked_id);
            return Ended::Revoked;
        }
    }
    if news::debug() {
        crate::say!("MPIFT barrier {}: comm {:x} #{} done", news::world_rank(), id, seq);
    }
    Ended::Done
}

/// A dead rank's, a fill-in's or a catch-up's part in barrier `seq` of `id`.
pub fn join(id: u64, seq: u64, me: usize, members: &[u32]) {
    if revoked_id(id) {
        // Its members leave by themselves (a catch-up owes nothing here).
        return;
    }
    let _ = run(id, seq, me, members.len(), &|t, f| (members[t], members[f]), Waiter::Join);
}

/// `MPI_Barrier`.
pub fn barrier(comm: Sim_FT_MPI_Comm) -> Outcome {
    let c = handles::comm_arg(comm)?;
    if hooks::nonblocking_colls() {
        let desc = describe::unless_inter(&c, || describe::MPI_Ibarrier(&c));
        hooks::coll_enter(&c, &desc)?;
        let mut req = transport::request_null();
        // SAFETY: a real communicator and an out request of ours.
        let rc = unsafe { mpi::MPI_Ibarrier(c.real, &mut req) };
        return hooks::coll_wait(&c, rc, req, true);
    }
    let desc = describe::unless_inter(&c, || describe::MPI_Barrier(&c));
    let seq = hooks::coll_enter(&c, &desc)?;
    if c.inter || !own() {
        // SAFETY: a real communicator.
        let rc = unsafe { mpi::MPI_Barrier(c.real) };
        return hooks::coll_leave(&c, rc);
    }
    let h = c.handle;
    // The partners are read per round: no copy of the list on the failure-free path.
    let pair = |t: usize, f: usize| comm::read(h, |s| (s.members[t], s.members[f])).unwrap_or((0, 0));
    match run(c.id, seq, c.rank as usize, c.size as usize, &pair, Waiter::Program(h)) {
        Ended::Done => hooks::coll_leave(&c, 0),
        Ended::Revoked => Err(Failure::on(c.handle, SIM_FT_ERR_REVOKED)),
    }
}
