//! A cache of the other processes' collective logs (read with RMA), indexed by
//! (communicator id, collective number). Used by a dead rank to find the
//! collectives it must join, and by a live rank catching up on a revoked
//! communicator.

use crate::layer::describe::{fcode, Desc};
use crate::layer::news;
use std::collections::HashMap;
use std::sync::Mutex;

/// Marks a log entry written by a rank that joins as a dummy (catch-up): it says
/// "I am in this collective" but carries no counts of its own.
pub const DUMMY: u32 = 0x200;

#[derive(Default)]
pub struct LogCache {
    /// Per world rank: entries read so far (stamp).
    after: Vec<u64>,
    /// (comm id, seq) -> world rank -> descriptor.
    entries: HashMap<(u64, u64), HashMap<u32, Desc>>,
}

static CACHE: Mutex<Option<LogCache>> = Mutex::new(None);

pub fn with<R>(f: impl FnOnce(&mut LogCache) -> R) -> R {
    let mut g = CACHE.lock().unwrap();
    f(g.get_or_insert_with(LogCache::default))
}

pub fn clear() {
    *CACHE.lock().unwrap() = None;
}

impl LogCache {
    /// Reads new entries of the given world ranks.
    pub fn poll(&mut self, ranks: &[u32]) {
        let n = news::world_size();
        if self.after.len() < n {
            self.after.resize(n, 0);
        }
        for &p in ranks {
            let p = p as usize;
            let (head, got) = news::read_log(p, self.after[p]);
            if news::debug() && head != self.after[p] {
                eprintln!("MPIFT logs: rank {} head {} -> {} ({} parsed)", p, self.after[p], head, got.len());
            }
            self.after[p] = head;
            for e in got {
                if news::debug() {
                    eprintln!("MPIFT logs: from {} comm {:x} #{} f{}", p, e.comm, e.seq, e.desc.fcode);
                }
                self.entries.entry((e.comm, e.seq)).or_default().insert(p as u32, e.desc);
            }
        }
    }

    pub fn get(&self, comm: u64, seq: u64) -> Option<&HashMap<u32, Desc>> {
        self.entries.get(&(comm, seq))
    }

    /// Forgets entries of `comm` up to `seq` (already joined).
    pub fn prune(&mut self, comm: u64, upto: u64) {
        self.entries.retain(|(c, s), _| *c != comm || *s > upto);
    }

    /// Highest collective number any of `ranks` logged for `comm`.
    pub fn max_seq(&self, comm: u64) -> Option<u64> {
        self.entries.keys().filter(|(c, _)| *c == comm).map(|(_, s)| *s).max()
    }
}

/// The descriptor to act on and the per-member real entries (None for members
/// without a real entry: dead, or catching up), from entries keyed by world rank.
pub fn by_member(found: &HashMap<u32, Desc>, members: &[u32]) -> Option<(Desc, Vec<Option<Desc>>)> {
    let mut any = None;
    let per: Vec<Option<Desc>> = members
        .iter()
        .map(|w| {
            found.get(w).filter(|d| d.fcode & DUMMY == 0).map(|d| {
                if any.is_none() {
                    any = Some(d.clone());
                }
                d.clone()
            })
        })
        .collect();
    let any = any.or_else(|| {
        found.values().next().map(|d| Desc { fcode: d.fcode & !DUMMY, ..d.clone() })
    })?;
    Some((any, per))
}

/// True for descriptors MPIFT itself issues (agree/shrink), which dummies join
/// with their own contribution rather than zeros.
pub fn is_ft(d: &Desc) -> bool {
    matches!(d.fcode & !(fcode::NB | DUMMY), fcode::FT_AGREE | fcode::FT_SHRINK)
}
