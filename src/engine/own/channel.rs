//! The messages of MPIFT's own collectives (engine::own::barrier, engine::own::allreduce):
//! what lets a member waiting in one stop the moment its communicator is known
//! revoked, whatever the other members are doing (issue 19).
//!
//! A [`Channel`] is one tag on MPIFT's shadow communicator, addressed by world
//! rank. Every message starts with a [`Stamp`] (the communicator's job-wide id
//! and the collective's number there), then the collective's data, if any. The
//! collectives of every communicator share the channel, so a member waiting for
//! stamp w from peer p may instead receive a stale message (a collective on a
//! revoked communicator: dropped) or one for a collective it has not reached yet
//! (kept in the mailbox until that collective looks for it; protocol::dissem).
//!
//! Sends go with `MPI_Isend` from a ring of slots that stay put until MPI is done
//! with them; a receive is `MPI_Irecv` into the caller's buffer, waited for with
//! `MPI_Waitany` over it and the wake receive, like every MPIFT wait
//! (engine::complete::complete), so news interrupts it.

use crate::engine::news::wake;
use crate::engine::base::runtime;
use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::base::progress;
use crate::engine::{registry::comm, news::news};
use crate::protocol::dissem::{Mailbox, Sorted, Stamp};
use crate::transport::serial::Serial;
use crate::transport::{self, p2p, request, MPI_Comm, MPI_Request, MPI_Status};
use std::os::raw::{c_int, c_void};

/// Bytes of the stamp in front of every message.
pub const HEAD: usize = 16;

/// Send slots per channel. A slot is reused once its send completed (small sends
/// complete at once on both MPIs: they go eagerly); one still pending is skipped.
const SLOTS: usize = 64;

struct Slot {
    buf: Vec<u8>,
    req: MPI_Request,
    /// `req` holds a request (until then it is not a valid handle: the host's
    /// `MPI_REQUEST_NULL` is not known at compile time).
    busy: bool,
}

struct State {
    mailbox: Mailbox<Vec<u8>>,
    slots: Vec<Slot>,
    next: usize,
}
// SAFETY: only the thread that calls MPI touches it, under the `Serial` lock
// (transport::serial); what keeps it from being `Send` is the host's request
// handles (pointers on Open MPI), opaque tokens no Rust code reads through.
unsafe impl Send for State {}

/// One tag's messages: the mailbox of early ones and the send ring.
pub struct Channel {
    tag: c_int,
    state: Serial<State>,
}

/// How the waiting member spends its time between looks at its receive.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Waiter {
    /// The program's own call on communicator `h`: MPIFT's service (news, revoke
    /// jobs, agreements, catch-ups) runs while it waits, and it leaves once `h` is
    /// revoked here.
    Program(Sim_FT_MPI_Comm),
    /// A dead rank's or a fill-in's join: reads news only, leaves once the
    /// communicator is known revoked.
    Join,
}

/// Is communicator `id` known revoked here (news or a revoke hint)?
pub fn revoked_id(id: u64) -> bool {
    if runtime::revoked_id(id).is_some() {
        return true;
    }
    let mut r = false;
    comm::for_each(|s| r |= s.id == id && s.revoked);
    r
}

fn read_stamp(buf: &[u8]) -> Stamp {
    let word = |i: usize| u64::from_ne_bytes(buf[i..i + 8].try_into().unwrap_or([0; 8]));
    Stamp::from_words([word(0), word(8)])
}

impl Channel {
    pub const fn new(tag: c_int) -> Channel {
        Channel { tag, state: Serial::new(State { mailbox: Mailbox::new(), slots: Vec::new(), next: 0 }) }
    }

    /// Sends `stamp` and `body` to world rank `to` on `shadow`.
    fn send(&self, stamp: Stamp, body: &[u8], to: u32, shadow: MPI_Comm) {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        if st.slots.len() < SLOTS {
            st.slots.push(Slot { buf: Vec::new(), req: transport::request_null(), busy: false });
            st.next = st.slots.len() - 1;
        }
        let mut tries = 0;
        let i = loop {
            let i = st.next;
            st.next = if i + 1 == st.slots.len() { 0 } else { i + 1 };
            let s = &mut st.slots[i];
            if !s.busy || transport::test_done(&mut s.req) {
                break i;
            }
            tries += 1;
            if tries == SLOTS {
                // Every slot still sending (partners out of MPI for long, 64
                // messages pending): wait for this one.
                // Blocking: never blocks for ever: a message of at most 16 +
                // allreduce::MAX_BYTES bytes, below both hosts' eager limits, so
                // it completes without its receiver.
                request::wait(&mut s.req, None);
                break i;
            }
        };
        let s = &mut st.slots[i];
        s.busy = true;
        s.buf.clear();
        let w = stamp.words();
        s.buf.extend_from_slice(&w[0].to_ne_bytes());
        s.buf.extend_from_slice(&w[1].to_ne_bytes());
        s.buf.extend_from_slice(body);
        // SAFETY: the slot's buffer holds `len` bytes and is not touched (nor
        // reallocated) again until this send completed (checked above when the
        // ring comes back to it); its heap storage stays put when `slots` grows.
        unsafe {
            p2p::isend(s.buf.as_ptr() as *const c_void, s.buf.len() as c_int, transport::dt_byte(), to as c_int, self.tag, shadow, &mut s.req)
        };
    }

    /// Sends `stamp` and `body` to world rank `to` now (a stand-in's part,
    /// engine::join::standin).
    pub fn post(&self, stamp: Stamp, body: &[u8], to: u32) {
        self.send(stamp, body, to, runtime::shadow());
    }

    /// Receives every message of this channel that has arrived and keeps it in
    /// the mailbox for the part that will take it (those of revoked
    /// communicators are dropped). Never waits; true if one arrived. For a
    /// process that no longer runs blocking steps (a dead rank): a blocking step
    /// posts its receive and would race this one for the same message.
    pub fn pull(&self) -> bool {
        let shadow = runtime::shadow();
        let mut got = false;
        loop {
            let (mut flag, mut st) = (0, transport::zero_status());
            p2p::iprobe(transport::any_source(), self.tag, shadow, &mut flag, Some(&mut st));
            if flag == 0 {
                return got;
            }
            got = true;
            let mut n: c_int = 0;
            p2p::get_count(&st, transport::dt_byte(), &mut n);
            let mut buf = vec![0u8; (n.max(0) as usize).max(HEAD)];
            // Blocking: never blocks for ever: receives the message iprobe just
            // found (this process's only receive on the tag), which is here.
            // SAFETY: `buf` holds the probed message's `n` bytes (at least HEAD);
            // this is the only receive on this tag in this process, and messages
            // from one source on one tag arrive in order, so it takes the probed one.
            unsafe {
                p2p::recv(buf.as_mut_ptr() as *mut c_void, n, transport::dt_byte(), st.MPI_SOURCE, self.tag, shadow, None)
            };
            let stamp = read_stamp(&buf);
            if !revoked_id(stamp.id) {
                self.state.lock().mailbox.keep(st.MPI_SOURCE as u32, stamp, buf[HEAD..].to_vec());
            }
        }
    }

    /// Takes the kept message `stamp` from world rank `from`, if it is in.
    pub fn take(&self, from: u32, stamp: Stamp) -> bool {
        self.state.lock().mailbox.take(from, stamp).is_some()
    }

    /// Drops kept messages of communicators revoked since they arrived.
    pub fn purge(&self) {
        self.state.lock().mailbox.purge(revoked_id);
    }

    /// One step of a collective: sends `want` with `body` to world rank `to`,
    /// receives message `want` from world rank `from` into `buf` (stamp, then
    /// body: `buf` must hold the longest message this channel carries; `expect`:
    /// the body's length in a correct program). The receive is posted before the
    /// send, so the partner's message meets a posted receive (no
    /// unexpected-message copy). The body's length (0 without a receive); None:
    /// the communicator was revoked (the receive is cancelled).
    #[allow(clippy::too_many_arguments)]
    pub fn step(&self, want: Stamp, body: &[u8], to: Option<u32>, from: Option<u32>, buf: &mut [u8], expect: usize, how: Waiter) -> Option<usize> {
        let shadow = runtime::shadow();
        let Some(from) = from else {
            if let Some(to) = to {
                self.send(want, body, to, shadow);
            }
            return Some(0);
        };
        // (The guard is dropped before the send below locks the state again.)
        let early = self.state.lock().mailbox.take(from, want);
        if let Some(early) = early {
            if let Some(to) = to {
                self.send(want, body, to, shadow);
            }
            buf[HEAD..HEAD + early.len()].copy_from_slice(&early);
            return Some(early.len());
        }
        let mut r = Recv::post(self.tag, from, buf, shadow);
        if let Some(to) = to {
            self.send(want, body, to, shadow);
        }
        loop {
            let res = r.wait(how, want.id);
            drop(r);
            let len = match res {
                Ok(len) => len,
                Err(matched) => {
                    if let Some(len) = matched.map(|l| l.get()) {
                        // The abandoned collective's own message sorts as Mine
                        // and is dropped.
                        let got = read_stamp(buf);
                        let _ = self.state.lock().mailbox.sort(from, got, want, revoked_id, || buf[HEAD..len].to_vec());
                    }
                    return None;
                }
            };
            let got = read_stamp(buf);
            if got == want {
                // Ours: its length is known (no MPI_Get_count on the fast path).
                return Some(expect);
            }
            let len = len.get();
            let sorted = self.state.lock().mailbox.sort(from, got, want, revoked_id, || buf[HEAD..len].to_vec());
            if sorted == Sorted::Mine {
                return Some(len - HEAD);
            }
            r = Recv::post(self.tag, from, buf, shadow);
        }
    }
}

/// A posted receive into the caller's buffer (not moved while it is posted).
struct Recv<'a> {
    req: MPI_Request,
    _buf: std::marker::PhantomData<&'a mut [u8]>,
}

impl<'a> Recv<'a> {
    fn post(tag: c_int, from: u32, buf: &'a mut [u8], shadow: MPI_Comm) -> Recv<'a> {
        let mut req = transport::request_null();
        // SAFETY: `buf` has room for `buf.len()` bytes and is borrowed for the
        // receive's life: it is completed or cancelled (and waited for) before
        // the borrow ends.
        unsafe {
            p2p::irecv(buf.as_mut_ptr() as *mut c_void, buf.len() as c_int, transport::dt_byte(), from as c_int, tag, shadow, &mut req)
        };
        Recv { req, _buf: std::marker::PhantomData }
    }

    /// Waits for the message: its length. Err once communicator `id` is known
    /// revoked: the receive is cancelled, or, if a message had already matched
    /// it, Err(Some(its length)).
    fn wait(&mut self, how: Waiter, id: u64) -> Result<Len, Option<Len>> {
        let mut idle: Option<crate::engine::base::backoff::Backoff> = None;
        let mut status = transport::zero_status();
        loop {
            let revoked = match how {
                Waiter::Program(h) => {
                    // Leaves as soon as the revoke is known here (a hint may have
                    // come with the last wake-up), before the service would wait
                    // for the revoke's horizon: the program's next MPI call waits
                    // for it at its entry (service::run), so nothing this rank
                    // does through MPI can lead another member into a real
                    // blocking collective before the revoke reached that member;
                    // only the return is earlier, also while members compute
                    // outside MPI (with MPICH the horizon waits for them).
                    let revoked = || !comm::calm() && comm::read(h, |s| s.revoked).unwrap_or(false);
                    revoked() || {
                        // The service's own test, inline: the hook is called
                        // only when something may have changed.
                        if news::new_since_run() || progress::must_poll() {
                            let _ = progress::run_in_wait_if_new();
                        }
                        revoked()
                    }
                }
                Waiter::Join => {
                    news::refresh();
                    revoked_id(id)
                }
            };
            if revoked {
                return Err(self.cancel(&mut status));
            }
            let arrived = if how == Waiter::Join || progress::must_poll() {
                // Nothing wakes a blocked wait for these (an agreement advances
                // only while its rank polls; a join reads news by polling).
                let mut flag: c_int = 0;
                // Our own pending receive.
                request::test(&mut self.req, &mut flag, Some(&mut status));
                if flag == 0 {
                    idle.get_or_insert_with(crate::engine::base::backoff::Backoff::wait).pause();
                }
                flag != 0
            } else {
                let mut pair = [self.req, wake::wake_request()];
                let mut idx: c_int = -1;
                // Two valid requests of ours (the receive, the wake).
                request::waitany(&mut pair, &mut idx, Some(&mut status));
                self.req = pair[0];
                if idx == 1 {
                    wake::rearm_wake(pair[1]);
                    false
                } else {
                    true
                }
            };
            if arrived {
                return Ok(Len(status));
            }
        }
    }

    /// Stops waiting: cancelled (None), or a message had already matched the
    /// receive: its length. The caller sorts it like any other (it may be
    /// another communicator's collective that the sender is already in: found by
    /// revoke_release_computing on MPICH, where dropping it hung that barrier).
    fn cancel(&mut self, status: &mut MPI_Status) -> Option<Len> {
        let mut cancelled: c_int = 0;
        // Our own pending receive; waited for once after the cancel.
        // Blocking: never blocks for ever: a cancelled receive completes locally,
        // cancelled or matched by an eager message of this channel already here.
        p2p::cancel(&mut self.req);
        request::wait(&mut self.req, Some(&mut *status));
        p2p::test_cancelled(status, &mut cancelled);
        (cancelled == 0).then(|| Len(*status))
    }
}

/// The status of a completed receive: its length, asked for only when needed.
struct Len(MPI_Status);

impl Len {
    /// Bytes the receive got.
    fn get(&self) -> usize {
        let mut n: c_int = 0;
        // A status MPI filled in.
        p2p::get_count(&self.0, transport::dt_byte(), &mut n);
        (n.max(HEAD as c_int)) as usize
    }
}
