//! The agreement slots of engine::agree::ft in this process's window region
//! (transport::window, `FT + j*F`): their layout, and which instance each holds.
//!
//! Layout of a slot, in words: id, inst, then contribution, partial and result,
//! each followed by its check word.
//!
//! An instance (communicator id, n-th agree or shrink on it) lands in one
//! of [`window::FT_PROBE`] consecutive slots chosen by a hash, so a reader fetches
//! that window with one read. A slot is reused only once every live member has
//! the result of the instance it held ([`retired`]).

use crate::engine::base::runtime;
use crate::engine::base::progress;
use crate::protocol::agree;
use crate::protocol::ftagree::Published;
use crate::transport::serial::Serial;
use crate::transport::window;

/// What a slot of this process holds.
#[derive(Clone)]
enum SlotUse {
    Free,
    Busy,
    /// A finished instance that members may still be reading.
    Done { id: u64, inst: u64, members: Vec<u32>, n: usize },
}

static SLOTS: Serial<Vec<SlotUse>> = Serial::new(Vec::new());

fn field_at(l: usize, f: usize) -> usize {
    2 + f * (l + 1)
}

/// Check word of field `f` of instance (id, inst): a reader takes a field only
/// when it matches, so neither a torn write nor an older instance's leftovers
/// are ever read as data.
fn check(id: u64, inst: u64, f: usize, words: &[u64]) -> u64 {
    let mut h = id.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ inst.rotate_left(29) ^ (f as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    for w in words {
        h = (h ^ w).wrapping_mul(0x94d0_49bb_1331_11eb);
        h ^= h >> 31;
    }
    h | 1
}

/// First slot of the probe window of instance (id, inst).
pub(super) fn probe_start(id: u64, inst: u64) -> usize {
    let h = (id ^ inst.wrapping_mul(0x9e37_79b9_7f4a_7c15)).wrapping_mul(0xff51_afd7_ed55_8ccd);
    (h >> 32) as usize % (window::FT_SLOTS - window::FT_PROBE + 1)
}

/// Parses instance (id, inst) out of a probe window read from a member.
pub(super) fn parse(buf: &[u64], slot_words: usize, id: u64, inst: u64, l: usize) -> Published {
    let mut p = Published::default();
    for s in buf.chunks_exact(slot_words) {
        if s[0] != id || s[1] != inst {
            continue;
        }
        let field = |f: usize| {
            let at = field_at(l, f);
            let w = &s[at..at + l];
            (s[at + l] == check(id, inst, f, w)).then(|| w.to_vec())
        };
        p.contrib = field(0);
        p.partial = field(1);
        p.result = field(2);
    }
    p
}

/// Publishes field `f` (0 contribution, 1 partial, 2 result) of instance
/// (id, inst) in this process's slot `slot`: the words, then their check word.
pub(super) fn store_field(slot: usize, id: u64, inst: u64, f: usize, words: &[u64]) {
    runtime::with(|rt| {
        let base = rt.win.ft_slot(slot);
        let at = base + field_at(words.len(), f);
        for (i, w) in words.iter().enumerate() {
            rt.win.store(at + i, *w);
        }
        // Data before its check word, both before anyone is told (a wake, or the
        // reader's next read).
        rt.win.sync();
        rt.win.store(at + words.len(), check(id, inst, f, words));
        rt.win.sync();
    });
}

/// Takes a slot of the instance's probe window for (id, inst): a free one, else
/// one whose instance every live member has finished with. Waits (advancing
/// everything) in the rare case that none is.
pub(super) fn claim(id: u64, inst: u64, l: usize) -> usize {
    let start = probe_start(id, inst);
    let mut idle = crate::engine::base::backoff::Backoff::wait();
    loop {
        let found = {
            let mut slots = SLOTS.lock();
            if slots.is_empty() {
                *slots = vec![SlotUse::Free; window::FT_SLOTS];
            }
            (start..start + window::FT_PROBE).find(|j| matches!(slots[*j], SlotUse::Free))
        };
        let found = found.or_else(|| {
            (start..start + window::FT_PROBE).find(|j| {
                let held = SLOTS.lock()[*j].clone();
                match held {
                    SlotUse::Done { id, inst, members, n } => retired(id, inst, &members, n),
                    _ => false,
                }
            })
        });
        if let Some(j) = found {
            SLOTS.lock()[j] = SlotUse::Busy;
            runtime::with(|rt| {
                let base = rt.win.ft_slot(j);
                for f in 0..3 {
                    rt.win.store(base + field_at(l, f) + l, 0);
                }
                rt.win.sync();
                rt.win.store(base, id);
                rt.win.store(base + 1, inst);
                rt.win.sync();
            });
            return j;
        }
        progress::poll();
        idle.pause();
    }
}

/// Every live member of instance (id, inst) has its result (or has reused its
/// slot, which it does only after checking the same): nobody reads this
/// process's slot for it any more. Blocking reads; only on a slot collision.
fn retired(id: u64, inst: u64, members: &[u32], n: usize) -> bool {
    let me = runtime::world_rank() as u32;
    let l = agree::contribution_len(n as u32);
    let start = probe_start(id, inst);
    for &w in members.iter().filter(|w| **w != me && !runtime::is_dead(**w)) {
        let got = runtime::with(|rt| {
            let sw = rt.win.ft_slot_words();
            let mut buf = vec![0u64; sw * window::FT_PROBE];
            // Blocking: never blocks for ever: a passive-target read of a live
            // member, done once it is inside MPI (blocked there too), where every
            // live process comes back at the latest in MPI_Finalize.
            rt.win.get(w as usize, rt.win.ft_slot(start), &mut buf);
            (buf, sw)
        });
        let Some((buf, sw)) = got else { return true };
        let held = buf.chunks_exact(sw).any(|s| s[0] == id && s[1] == inst);
        if held && parse(&buf, sw, id, inst, l).result.is_none() {
            return false;
        }
    }
    true
}

/// Instance (id, inst) of `members` (`n` of them) is done with this process's
/// slot `slot`: it may be reused once they all have the result ([`retired`]).
pub(super) fn done(slot: usize, id: u64, inst: u64, members: Vec<u32>, n: usize) {
    SLOTS.lock()[slot] = SlotUse::Done { id, inst, members, n };
}

/// Forgets every slot's use (`MPI_Finalize`).
pub(super) fn clear() {
    SLOTS.lock().clear();
}
