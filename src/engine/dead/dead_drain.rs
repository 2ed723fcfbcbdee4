//! A dead rank drains the messages sent to it (engine::dead::zombie::serve): received
//! and dropped, which also releases senders blocked in rendezvous sends, but only
//! from peers that have its death's news, and never those an
//! `MPI_Intercomm_create` it has yet to join needs.

use crate::engine::colls::describe;
use crate::engine::registry::comm_state;
use crate::engine::colls::describe::fcode;
use crate::engine::dead::dead_comm::ZComm;
use crate::engine::{registry::comm, news::logs};
use crate::transport;
use std::os::raw::c_int;

/// Receives and drops the messages sent to this dead rank on `c` by peers that
/// have its death's news (all of them once `all_told`), except those of an
/// `MPI_Intercomm_create` it has yet to join as a leader ([`held`]). True if it
/// dropped one.
pub fn drain_comm(c: &ZComm, told: &[bool], all_told: bool, scratch: &mut Vec<u8>) -> bool {
    let peers = c.peers();
    let told_peer = |r: usize| peers.get(r).is_some_and(|w| (*w as usize) < told.len() && told[*w as usize]);
    let mut busy = false;
    if all_told {
        // One wildcard loop while nothing is held (the usual case).
        loop {
            let Some((src, tag)) = comm::probe(c.real, transport::any_source()) else { return busy };
            if held(c, src, tag) {
                break;
            }
            busy |= comm::drop_one(c.real, src, tag, scratch);
        }
    }
    // Source by source: a held message stops only its own source's queue.
    for r in (0..peers.len()).filter(|r| told_peer(*r)) {
        while let Some((src, tag)) = comm::probe(c.real, r as c_int) {
            if held(c, src, tag) {
                break;
            }
            busy |= comm::drop_one(c.real, src, tag, scratch);
        }
    }
    busy
}

/// A message from `src` with `tag` on `c` that an `MPI_Intercomm_create` this dead
/// rank has yet to join needs: Open MPI's leaders exchange their groups with
/// point-to-point messages on the peer communicator under the program's tag
/// (`ompi_comm_get_rprocs`), and the other leader may send before this rank's own
/// group has entered and it joins as the local leader (calls::comm_ctor::join);
/// dropped, the join then failed or waited forever (2 of 316 kill points of
/// examples/inter_loop.c on Open MPI 4.1). Held while the sender's log shows more
/// such creations naming this rank, this communicator and this tag than this rank
/// has joined. The sender logs its entry before it sends, so its log is read
/// again after each message was seen and before it is judged (one RMA read of
/// the log head, more only if it grew; Open MPI's on one node need no progress
/// at the sender). MPICH exchanges on a context of its own, which no probe
/// matches: nothing to hold there.
fn held(c: &ZComm, src: c_int, tag: c_int) -> bool {
    if c.inter || transport::host_is_mpich() {
        return false;
    }
    let Some(&w) = c.peers().get(src as usize) else { return false };
    if w == comm_state::FOREIGN {
        return false;
    }
    let (id, me) = (c.id, c.rank as u64);
    let named = logs::with(|cache| {
        cache.poll(&[w]);
        cache.count_of(w, |d| {
            d.fcode & !describe::DUMMY == fcode::INTERCOMM_CREATE && d.extra[2] == id && d.extra[0] == me && d.extra[1] == tag as u32 as u64
        })
    });
    named as u32 > crate::engine::join::ctor_join::joined_as_leader(id, src, tag)
}
