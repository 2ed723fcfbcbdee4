//! The spare process's side of a spawn from spares (`MPIFT_SPARES=k`; the
//! spawning side and the whole protocol are calls::spares): a spare waits inside
//! `MPI_Init` for an activation, becomes a child of the spawn that took it (its
//! world, its parent intercommunicator, its arguments), or, once every other
//! process is finalizing or dead, finalizes and exits without running the program.

use crate::engine::news::wake;
use crate::engine::base::runtime;
use super::spares::{spare_world_id, universe, CHILD_WORLD_SEED, MAGIC, TAG_ACTIVATE};
use crate::calls::comm_ctor;
use crate::engine::base::handles::{self, Sim_FT_MPI_Comm};
use crate::engine::{registry::comm, news::news};
use crate::transport::{self, stats, window, MPI_Comm, MPI_Request};
use std::ffi::CString;
use std::os::raw::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A child's parent intercommunicator (0: none).
static PARENT: AtomicUsize = AtomicUsize::new(0);

/// A child's `MPI_Comm_get_parent`: Some(the handle, or null once freed) in a
/// process that a spawn took; None otherwise.
pub fn parent() -> Option<Sim_FT_MPI_Comm> {
    let h = PARENT.load(Ordering::Relaxed) as Sim_FT_MPI_Comm;
    if h.is_null() {
        return None;
    }
    Some(if comm::lookup(h).is_some() { h } else { std::ptr::null_mut() })
}

/// A spare: waits inside `MPI_Init` until a spawn takes it (returns: the process
/// then runs the program as a child) or every other process is finalizing or
/// dead (then it finalizes and exits).
pub fn wait_as_spare(argc: *mut c_int, argv: *mut *mut *mut c_char) {
    let me = runtime::world_rank();
    let mut finals = Finals::new(runtime::world_size(), me);
    loop {
        set_waiting(true);
        let mut nap = Duration::from_micros(50);
        let msg = loop {
            news::refresh();
            wake::drain_wakes();
            if let Some(msg) = activation() {
                break msg;
            }
            if finals.all_done() {
                finalize_spare();
            }
            std::thread::sleep(nap);
            nap = (nap * 2).min(Duration::from_millis(5));
        };
        set_waiting(false);
        if activate(&msg, argc, argv) {
            return;
        }
        finals = Finals::new(runtime::world_size(), me);
    }
}

/// A waiting spare counts as finalizing: nobody waits for it to finalize.
fn set_waiting(on: bool) {
    news::set_stage(if on { news::FINAL } else { 0 });
}

/// An activation sent to this spare, if one is here.
fn activation() -> Option<Vec<u8>> {
    let shadow = runtime::shadow();
    let mut flag = 0;
    let mut st = transport::zero_status();
    transport::p2p::iprobe(transport::any_source(), TAG_ACTIVATE, shadow, &mut flag, Some(&mut st));
    if flag == 0 {
        return None;
    }
    let mut count = 0;
    // The status just filled.
    transport::p2p::get_count(&st, transport::dt_byte(), &mut count);
    let mut buf = vec![0u8; count.max(0) as usize];
    // SAFETY: `buf` holds `count` bytes (the probed size; at most that many
    // MPI_BYTEs are written), the probed source and tag.
    unsafe {
        transport::p2p::recv(buf.as_mut_ptr() as *mut c_void, count, transport::dt_byte(), st.MPI_SOURCE, TAG_ACTIVATE, shadow, None)
    };
    Some(buf)
}

/// Becomes a child of the spawn `msg` describes: its world, its parent
/// intercommunicator, its arguments. False if the spawn failed (a parent died
/// in it): the process is a spare again.
fn activate(msg: &[u8], argc: *mut c_int, argv: *mut *mut *mut c_char) -> bool {
    let word = |i: usize| msg.get(8 * i..8 * i + 8).map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()));
    let (spawn, first, count, root, tag, nargs) = (word(1), word(2), word(3), word(4), word(5) as c_int, word(6));
    if word(0) != MAGIC {
        return false;
    }
    let Some(world) = child_world(first, count, tag) else { return false };
    comm::replace_world(world, comm::child_id(CHILD_WORLD_SEED, spawn));
    let mut ic: Sim_FT_MPI_Comm = std::ptr::null_mut();
    let (outcome, _) = comm_ctor::intercomm_create_ran(handles::world_handle(), 0, universe(), root as c_int, tag, &mut ic);
    if outcome.is_err() {
        comm::replace_world(transport::comm_self(), spare_world_id());
        let mut w = world;
        // The children's world made above, no longer registered.
        transport::comm::free(&mut w);
        return false;
    }
    PARENT.store(ic as usize, Ordering::Relaxed);
    let args: Vec<CString> = msg[(8 * 7).min(msg.len())..]
        .split(|b| *b == 0)
        .take(nargs as usize)
        .map(|a| CString::new(a).unwrap_or_default())
        .collect();
    set_args(argc, argv, args);
    true
}

/// The children's `MPI_COMM_WORLD`: the `count` launched processes from `first`.
fn child_world(first: u64, count: u64, tag: c_int) -> Option<MPI_Comm> {
    let (mut wg, mut g, mut cw) = (transport::group_empty(), transport::group_empty(), transport::comm_null());
    let mut range = [[first as c_int, (first + count - 1) as c_int, 1]];
    // The host's world, groups and an out of ours; collective over the children
    // only, who all come here for this spawn.
    let rc = {
        transport::comm::group(transport::comm_world(), &mut wg);
        transport::comm::group_range_incl(wg, &mut range, &mut g);
        let rc = transport::comm::create_group(transport::comm_world(), g, tag, &mut cw);
        transport::comm::group_free(&mut g);
        transport::comm::group_free(&mut wg);
        rc
    };
    stats::bump(&stats::COMMS_CREATED);
    (rc == 0).then_some(cw)
}

/// The child's arguments: its own program name, then the spawn's.
fn set_args(argc: *mut c_int, argv: *mut *mut *mut c_char, args: Vec<CString>) {
    if argc.is_null() || argv.is_null() {
        return;
    }
    // SAFETY: MPI_Init's arguments as the program passed them (non-null here):
    // `*argv` is its argument array, with at least `*argc` entries when non-null.
    let name = unsafe { if *argc >= 1 && !(*argv).is_null() { **argv } else { std::ptr::null_mut() } };
    let name = if name.is_null() { CString::default().into_raw() } else { name };
    let mut v: Vec<*mut c_char> = std::iter::once(name).chain(args.into_iter().map(CString::into_raw)).collect();
    let n = v.len() as c_int;
    v.push(std::ptr::null_mut());
    // SAFETY: `argc` and `argv` point to the program's own (writable) argc and
    // argv, checked non-null above; the new array, leaked, lives as long as the
    // process.
    unsafe {
        *argc = n;
        *argv = Box::leak(v.into_boxed_slice()).as_mut_ptr();
    }
}

/// The end of a spare that no spawn took: the finalization every process
/// takes part in (the report's gather, the window), then exit.
fn finalize_spare() -> ! {
    crate::inject::trace::finish();
    crate::inject::finalize();
    news::stop();
    crate::engine::news::logs::clear();
    // After the layer let go of every MPI object it uses.
    transport::env::finalize();
    crate::inject::legacy::end_process(0)
}

/// The `FINALIZING` words of the other processes, read without waiting. A
/// spare taken by a spawn clears its word, so a word read before that must not
/// count: [`Finals::all_done`] holds only when a round of reads that started
/// after the one that first saw everyone done sees it again.
struct Finals {
    me: usize,
    reads: Vec<Option<(MPI_Request, Box<[u64; 1]>, u64)>>,
    /// Per process: its word when last read, and the round that read started in.
    seen: Vec<(bool, u64)>,
    round: u64,
    /// The round after the one that first saw everyone done.
    confirm: Option<u64>,
}

impl Finals {
    fn new(n: usize, me: usize) -> Finals {
        Finals { me, reads: (0..n).map(|_| None).collect(), seen: vec![(false, 0); n], round: 1, confirm: None }
    }

    /// Advances the reads; true once every other process is finalizing or dead,
    /// confirmed by a later round.
    fn all_done(&mut self) -> bool {
        let mut round_done = true;
        for p in (0..self.reads.len()).filter(|p| *p != self.me) {
            if runtime::is_dead(p as u32) {
                continue;
            }
            if let Some((mut r, b, started)) = self.reads[p].take() {
                if transport::test_done(&mut r) {
                    self.seen[p] = (b[0] != 0, started);
                } else {
                    self.reads[p] = Some((r, b, started));
                }
            }
            if self.seen[p].1 < self.round {
                round_done = false;
            }
            if self.reads[p].is_none() && self.seen[p].1 < self.round {
                let mut b = Box::new([0u64; 1]);
                let round = self.round;
                if let Some(r) = runtime::with(|rt| rt.win.rget(p, window::FINALIZING, &mut b[..])) {
                    self.reads[p] = Some((r, b, round));
                }
            }
        }
        if !round_done {
            return false;
        }
        let done = (0..self.seen.len()).filter(|p| *p != self.me && !runtime::is_dead(*p as u32)).all(|p| self.seen[p].0);
        self.round += 1;
        match (done, self.confirm) {
            (false, _) => {
                self.confirm = None;
                false
            }
            (true, None) => {
                self.confirm = Some(self.round);
                false
            }
            (true, Some(c)) => self.round > c,
        }
    }
}
