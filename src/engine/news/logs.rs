//! A cache of the other processes' collective logs (read with RMA), indexed by
//! (communicator id, collective number). Used by a dead rank to find the
//! collectives it must join, and by a live rank catching up on a revoked
//! communicator.

use crate::engine::base::settings;
use crate::engine::base::runtime;
use crate::engine::base::handles::Sim_FT_MPI_Comm;
use crate::engine::registry::comm;
use crate::engine::colls::describe::{fcode_only, Desc, DUMMY};
use crate::engine::news::news;
use crate::transport::{self, window, MPI_Request};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
pub struct LogCache {
    /// Per world rank: entries read so far (stamp).
    after: Vec<u64>,
    /// (comm id, seq) -> world rank -> descriptor.
    entries: HashMap<(u64, u64), HashMap<u32, Desc>>,
    /// Per world rank: the read in flight of [`LogCache::poll_async`].
    fetch: Vec<Fetch>,
    /// Per world rank: its `FINALIZING` word (engine::news::news: 0 running, then
    /// `PROGRAM_DONE`, then `FINAL`) when last read.
    stage: Vec<u64>,
    /// Per world rank: that word as the last finished read cycle saw it in its
    /// head, if the cycle also read every entry up to that head (else 0).
    read_stage: Vec<u64>,
    /// Per world rank: read cycles (head, then new entries) started, and the
    /// number of the last one finished (engine::dead::fillin waits for a cycle that
    /// started after a wake-up).
    cycles: Vec<(u64, u64)>,
    /// Per world rank: entries its log lost before this process read them (the
    /// ring holds the last `window::LOG_LEN`; a read torn by the writer counts
    /// too). See [`LogCache::hole`].
    lost: Vec<u64>,
    /// Holes already reported ([`LogCache::report_hole`]), once each.
    told: Vec<(u64, u64)>,
}

/// A non-blocking read of one process's log (see [`LogCache::poll_async`]).
#[derive(Default)]
enum Fetch {
    #[default]
    Idle,
    /// The words `FINALIZING..=LOG_HEAD`.
    Head(MPI_Request, Box<[u64; 3]>),
    /// Entries up to the given head.
    Entries(news::LogReads, u64),
}

// SAFETY: the host requests inside (pointers with Open MPI) name host objects
// not tied to any thread, and are only touched under CACHE's lock, by the
// thread that calls MPI; the boxed buffers are plain memory owned by the variant.
unsafe impl Send for Fetch {}


static CACHE: Mutex<Option<LogCache>> = Mutex::new(None);

pub fn with<R>(f: impl FnOnce(&mut LogCache) -> R) -> R {
    let mut g = CACHE.lock().unwrap();
    f(g.get_or_insert_with(LogCache::default))
}

pub fn clear() {
    *CACHE.lock().unwrap() = None;
    *DEAD_LOGS.lock().unwrap() = None;
}

impl LogCache {
    /// Reads new entries of the given world ranks.
    pub fn poll(&mut self, ranks: &[u32]) {
        let n = runtime::world_size();
        if self.after.len() < n {
            self.after.resize(n, 0);
        }
        for &p in ranks {
            let p = p as usize;
            let (head, got) = news::read_log(p, self.after[p]);
            if settings::debug() && head != self.after[p] {
                crate::say!("MPIFT logs: rank {} head {} -> {} ({} parsed)", p, self.after[p], head, got.len());
            }
            self.after[p] = self.take(p, head, got);
        }
    }

    /// Per rank: the number the next read cycle of [`LogCache::poll_async`] will
    /// have (a cycle in flight now may have read the log before the caller's
    /// reason to look).
    pub fn next_cycles(&self, ranks: &[u32]) -> Vec<(u32, u64)> {
        ranks.iter().map(|p| (*p, self.cycles.get(*p as usize).map_or(0, |c| c.0) + 1)).collect()
    }

    /// Every rank in `need` finished a read cycle numbered at least as given.
    pub fn cycles_done(&self, need: &[(u32, u64)]) -> bool {
        self.unfinished(need).next().is_none()
    }

    /// The ranks of `need` that have not finished a read cycle numbered at
    /// least as given.
    pub fn unfinished<'a>(&'a self, need: &'a [(u32, u64)]) -> impl Iterator<Item = u32> + 'a {
        need.iter().filter(|(p, c)| !self.cycles.get(*p as usize).is_some_and(|x| x.1 >= *c)).map(|x| x.0)
    }

    /// Like [`LogCache::poll`], but never waits: each call advances, per rank, a
    /// read started by an earlier call (`MPI_Rget` + `MPI_Test`). For a dead rank,
    /// which sleeps between polls: with MPICH, RMA to a process computing outside
    /// MPI completes only when it next enters MPI, and a blocking flush would spin
    /// on a core until then. Also tracks each rank's `FINALIZING` word.
    pub fn poll_async(&mut self, ranks: &[u32]) -> bool {
        let mut news = false;
        let n = runtime::world_size();
        // (`poll` may have sized `after` already.)
        self.after.resize(n.max(self.after.len()), 0);
        self.fetch.resize_with(n, Fetch::default);
        self.stage.resize(n, 0);
        self.read_stage.resize(n, 0);
        self.cycles.resize(n, (0, 0));
        for &p in ranks {
            let p = p as usize;
            loop {
                match std::mem::take(&mut self.fetch[p]) {
                    Fetch::Idle => {
                        let mut b = Box::new([0u64; 3]);
                        let Some(r) = runtime::with(|rt| rt.win.rget(p, window::FINALIZING, &mut b[..])) else { return news };
                        self.fetch[p] = Fetch::Head(r, b);
                        self.cycles[p].0 += 1;
                    }
                    Fetch::Head(mut r, b) => {
                        if !transport::test_done(&mut r) {
                            self.fetch[p] = Fetch::Head(r, b);
                            break;
                        }
                        self.stage[p] = b[0];
                        let head = b[2];
                        if head <= self.after[p] {
                            self.cycles[p].1 = self.cycles[p].0;
                            self.read_stage[p] = self.stage[p];
                            break; // Idle: a new read starts next time
                        }
                        let Some(reads) = news::start_log_reads(p, self.after[p], head) else { return news };
                        self.fetch[p] = Fetch::Entries(reads, head);
                        news = true;
                    }
                    Fetch::Entries(mut reads, head) => {
                        if !reads.iter_mut().all(|(r, _)| transport::test_done(r)) {
                            self.fetch[p] = Fetch::Entries(reads, head);
                            break;
                        }
                        news = true;
                        let Some(got) = news::parse_log_reads(&reads) else { return news };
                        self.after[p] = self.take(p, head, got);
                        self.cycles[p].1 = self.cycles[p].0;
                        self.read_stage[p] = if self.after[p] >= head { self.stage[p] } else { 0 };
                        break;
                    }
                }
            }
        }
        news
    }

    /// Keeps the entered entries of world rank `p` read up to log head `head`;
    /// returns how far its log is read for good: up to the first entry still
    /// pending (the one its owner is deciding on), so that one is read again.
    pub fn take(&mut self, p: usize, head: u64, got: Vec<news::Entry>) -> u64 {
        let mut upto = self.torn(p, head, &got);
        self.count_lost(p, upto, &got);
        // Collectives this process entered itself are never joined again (not by a
        // catch-up, nor by a dead rank, whose counts only grow from these): the
        // cache keeps only the others, so it does not grow with the program's
        // history.
        let mine = if got.is_empty() { Default::default() } else { crate::engine::registry::comm::entered_counts() };
        for e in got {
            if settings::debug() {
                crate::say!("MPIFT logs: from {} comm {:x} #{} f{} state {}", p, e.comm, e.seq, e.desc.fcode, e.state);
            }
            match e.state {
                window::ENTERED if mine.get(&e.comm).is_some_and(|s| e.seq <= *s) => {}
                window::ENTERED => self.keep(p, e),
                window::PENDING => upto = upto.min(e.stamp - 1),
                _ => {}
            }
        }
        upto
    }

    /// The read of `p`'s entries up to `head` is good up to the returned stamp:
    /// `head`, or just before the first entry its ring held when the head was
    /// read that did not come (the writer overwrote it during the read, after
    /// copying it to a keep slot if it was open: engine::news::kept). The next
    /// read starts there and finds it in the keep slots, or counts it lost.
    fn torn(&self, p: usize, head: u64, got: &[news::Entry]) -> u64 {
        let after = self.after.get(p).copied().unwrap_or(0);
        let from = after.max(head.saturating_sub(window::LOG_LEN as u64)) + 1;
        let came = got.iter().filter(|e| e.stamp >= from && e.stamp <= head).count() as u64;
        if came == head.saturating_sub(from - 1) {
            return head;
        }
        (from..=head).find(|s| !got.iter().any(|e| e.stamp == *s)).map_or(head, |s| s - 1)
    }

    /// Counts the entries of `p` numbered after the last read and up to `head`
    /// that the read did not bring: overwritten in its ring before they were read
    /// and not kept.
    fn count_lost(&mut self, p: usize, head: u64, got: &[news::Entry]) {
        let after = self.after.get(p).copied().unwrap_or(0);
        let want = head.saturating_sub(after);
        let came = got.iter().filter(|e| e.stamp > after && e.stamp <= head).count() as u64;
        if want > came {
            if self.lost.len() <= p {
                self.lost.resize(p + 1, 0);
            }
            self.lost[p] += want - came;
        }
    }

    /// Some log lost entries before this process read them.
    pub fn any_lost(&self) -> bool {
        self.lost.iter().any(|l| *l > 0)
    }

    /// Entries world rank `p`'s log lost before this process read them.
    pub fn lost(&self, p: u32) -> u64 {
        self.lost.get(p as usize).copied().unwrap_or(0)
    }

    /// Collective `seq` of communicator `comm` has lost an entry for good: every
    /// member of `members` (this rank and members known dead aside) logged it or
    /// went on past it ([`LogCache::went_on`]), and one of them (returned) went
    /// on without its entry here. A dead rank or a catch-up waits for every such
    /// entry unless `describe::any_entry_describes` the collective: MPIFT's limit,
    /// reported by [`LogCache::report_hole`]. Cheap when nothing was lost.
    pub fn hole(&self, comm: u64, seq: u64, members: &[u32]) -> Option<u32> {
        if !self.any_lost() {
            return None;
        }
        let me = runtime::world_rank() as u32;
        let has = |w: u32| self.entries.get(&(comm, seq)).is_some_and(|m| m.contains_key(&w));
        let others = || members.iter().copied().filter(|w| *w != me && !runtime::is_dead(*w));
        if !others().all(|w| has(w) || self.went_on(comm, seq, w)) {
            return None; // someone has yet to enter it, or its log to be read
        }
        others().find(|w| !has(*w))
    }

    /// World rank `w` entered collective `seq` of communicator `comm` although
    /// no entry of it from `w` is here: its log lost entries before this process
    /// read them, and it shows a later collective of that communicator (a member
    /// enters a communicator's collectives in order). How a dead rank recovers a
    /// lost entry (`describe::any_entry_describes`).
    pub fn went_on(&self, comm: u64, seq: u64, w: u32) -> bool {
        self.lost(w) > 0 && self.entries.iter().any(|((c, s), m)| *c == comm && *s > seq && m.contains_key(&w))
    }

    /// Says once per hole (on stderr: MPIFT, not the program, then hangs the
    /// members that wait in that collective) which collective is missing and
    /// whose log lost its entry.
    pub fn report_hole(&mut self, comm: u64, seq: u64, member: u32, who: &str) {
        if self.told.contains(&(comm, seq)) {
            return;
        }
        self.told.push((comm, seq));
        crate::say!(
            "MPIFT: rank {} ({who}): collective #{seq} of communicator {comm:x} cannot be joined: world rank \
             {member}'s entry of it left its log (the last {} collectives) before this rank read it ({} entries \
             lost); members inside it may wait for ever (MPIFT's limit, docs/ULFM-DIFFERENCES.md)",
            runtime::world_rank(),
            window::LOG_LEN,
            self.lost(member)
        );
    }

    /// Keeps the entered entries of world rank `p` that someone else read (a
    /// revoke job), without moving how far its log was polled.
    pub fn keep_entered(&mut self, p: usize, got: Vec<news::Entry>) {
        for e in got.into_iter().filter(|e| e.state == window::ENTERED) {
            self.keep(p, e);
        }
    }

    /// Keeps world rank `p`'s entered entry `e`: its descriptor.
    fn keep(&mut self, p: usize, e: news::Entry) {
        self.entries.entry((e.comm, e.seq)).or_default().insert(p as u32, e.desc);
    }

    /// Whether world rank `p` had entered `MPI_Finalize` when
    /// [`LogCache::poll_async`] last read its region.
    pub fn finalizing(&self, p: usize) -> bool {
        self.stage.get(p).is_some_and(|w| *w >= news::FINAL)
    }

    /// World rank `p` is finalizing and its log is read to its end: the last
    /// read cycle, whose head read saw `FINALIZING`, has also read every entry up
    /// to that head. A finalizing process logs nothing more, so every collective
    /// it entered is then in the cache.
    pub fn read_to_end(&self, p: usize) -> bool {
        self.read_stage.get(p).is_some_and(|w| *w >= news::FINAL)
    }

    /// World rank `p`'s program is done (stage 1 of `MPI_Finalize`) and its log
    /// is read to the end of that read: every real entry it will ever make is in
    /// the cache (it may still log fill-ins, which are dummies).
    pub fn program_read_to_end(&self, p: usize) -> bool {
        self.read_stage.get(p).is_some_and(|w| *w >= news::PROGRAM_DONE)
    }

    /// Waits for every read [`LogCache::poll_async`] has in flight (before the
    /// window is freed).
    ///
    /// Blocking: never blocks for ever: a passive-target read completes once its
    /// target is inside MPI (a blocked host call progresses it too), and here, at
    /// a process's exit, every live one is in MPI_Finalize or on its way there.
    pub fn settle(&mut self) {
        for f in self.fetch.iter_mut() {
            match std::mem::take(f) {
                Fetch::Idle => {}
                Fetch::Head(mut r, _b) => {
                    transport::request::wait(&mut r, None);
                }
                Fetch::Entries(mut reads, _) => {
                    for (r, _b) in reads.iter_mut() {
                        transport::request::wait(r, None);
                    }
                }
            }
        }
    }

    pub fn get(&self, comm: u64, seq: u64) -> Option<&HashMap<u32, Desc>> {
        self.entries.get(&(comm, seq))
    }

    /// How many entries of world rank `p` read so far match `f`.
    pub fn count_of(&self, p: u32, f: impl Fn(&Desc) -> bool) -> usize {
        self.entries.values().filter_map(|m| m.get(&p)).filter(|d| f(d)).count()
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
///
/// The descriptor comes from a real entry: a [`DUMMY`] entry only says "I am in
/// this collective" (its counts, root, type and op are zero), so one built from
/// dummies alone would join with other arguments than the members that entered
/// for real (an `MPI_Ibcast` with count 0 from the root sends nothing, and the
/// other members wait in it for ever). With dummies only, None: the caller reads
/// the logs again until a real entry arrives (every dummy entry was written by a
/// rank that had read one). Only collectives whose join reads nothing but the
/// function ([`fcode_only`]) go on from a dummy entry.
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
    let any = any
        .or_else(|| found.values().map(|d| Desc { fcode: d.fcode & !DUMMY, ..d.clone() }).find(|d| fcode_only(d.fcode)))
        .or_else(|| other_group(found, members))?;
    Some((any, per))
}

/// An intercommunicator collective that only the other group entered for real
/// (`found` holds both groups' entries, `members` this group): its descriptor,
/// with this group's `high` for a merge (one value per group, the other's
/// negation). A collective joined from it that no dead rank can join (opaque)
/// is skipped by engine::join::join.
fn other_group(found: &HashMap<u32, Desc>, members: &[u32]) -> Option<Desc> {
    use crate::engine::colls::describe::fcode;
    let (_, d) = found.iter().filter(|(w, d)| d.fcode & DUMMY == 0 && !members.contains(w)).min_by_key(|(w, _)| **w)?;
    let mut d = d.clone();
    if d.fcode & !fcode::NB == fcode::INTERCOMM_MERGE {
        d.extra[0] = (d.extra[0] == 0) as u64;
    }
    Some(d)
}

/// Per dead world rank: the collectives (communicator id, number) its log shows it
/// entered for real before it died. A dead rank logs nothing after its death (its
/// joins are not logged) and wrote its log before its death news, so one read
/// after the news is final.
static DEAD_LOGS: Mutex<Option<HashMap<u32, Vec<(u64, u64)>>>> = Mutex::new(None);

/// Every member of `h` known dead entered collective number `seq` of `h` for real
/// before it died (engine::news::logs): its part was real, and the collective had ended
/// there.
pub fn all_dead_entered_seq(h: Sim_FT_MPI_Comm, seq: u64) -> bool {
    let Some((id, dead)) = comm::read(h, |s| (s.id, s.failed_world_ranks())) else {
        return false;
    };
    seq > 0 && !dead.is_empty() && dead.iter().all(|w| entered_before_death(*w, id, seq))
}

/// Dead world rank `w` entered collective `seq` of communicator `comm` for real
/// before it died: its part was real data, and it died at the entry of a later
/// call, after the collective had ended there. False when its log no longer holds
/// the entry (the ring moved on), so the caller stays on the safe side.
pub fn entered_before_death(w: u32, comm: u64, seq: u64) -> bool {
    let mut g = DEAD_LOGS.lock().unwrap();
    let logs = g.get_or_insert_with(HashMap::new);
    let real = logs.entry(w).or_insert_with(|| {
        let (_, got) = news::read_log(w as usize, 0);
        got.into_iter()
            .filter(|e| e.state == window::ENTERED && e.desc.fcode & DUMMY == 0)
            .map(|e| (e.comm, e.seq))
            .collect()
    });
    real.contains(&(comm, seq))
}

/// Live rank `w` entered collective `seq` of communicator `comm` with its own
/// entry, not a dummy one (a fill-in's or a catch-up's): read from its log now
/// (no cache: a live rank's log grows). False when its log no longer holds the
/// entry (the safe side: the default verdict).
#[cold]
#[inline(never)]
pub fn entered_for_real(w: u32, comm: u64, seq: u64) -> bool {
    let (_, got) = news::read_log(w as usize, 0);
    got.iter().any(|e| e.comm == comm && e.seq == seq && e.state == window::ENTERED && e.desc.fcode & DUMMY == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::colls::describe::any_entry_describes;
    use crate::engine::colls::describe::{fcode, Spec};

    fn real_bcast() -> Desc {
        Desc { fcode: fcode::BCAST | fcode::NB, root: 2, send: Spec { count: 1, ty: 14 }, recv: Spec { count: 1, ty: 14 }, ..Desc::default() }
    }

    fn dummy(f: u32) -> Desc {
        // What a catching-up or filling-in rank logs (engine::revoke::revoke, engine::dead::fillin).
        Desc { fcode: f | DUMMY, ..Desc::default() }
    }

    #[test]
    fn a_gap_is_counted_and_a_member_that_went_on_entered() {
        let mut c = LogCache { after: vec![0, 3], ..LogCache::default() };
        // Rank 1's head is 40; the read brought its ring's last 32 (stamps 9..=40),
        // so 4..=8 were overwritten before this process read them.
        let entry = |st: u64| news::Entry { comm: 7, seq: st, desc: real_bcast(), state: window::ENTERED, stamp: st };
        c.count_lost(1, 40, &(9..=40).map(entry).collect::<Vec<_>>());
        assert_eq!((c.lost(0), c.lost(1), c.any_lost()), (0, 5, true));
        // A read that brought everything up to the head loses nothing more.
        c.after[1] = 40;
        c.count_lost(1, 42, &(41..=42).map(entry).collect::<Vec<_>>());
        assert_eq!(c.lost(1), 5);
        c.entries.insert((7, 10), [(1u32, real_bcast())].into());
        assert!(c.went_on(7, 9, 1), "a later collective of the same communicator");
        assert!(!c.went_on(7, 10, 1) && !c.went_on(8, 9, 1), "nothing later there");
        c.entries.insert((7, 10), [(0u32, real_bcast())].into());
        assert!(!c.went_on(7, 9, 0), "rank 0's log lost nothing: its entry is still to come");
    }

    #[test]
    fn an_entry_torn_in_the_ring_is_read_again_not_counted_lost() {
        let mut c = LogCache { after: vec![0, 3], ..LogCache::default() };
        let entry = |st: u64| news::Entry { comm: 7, seq: st, desc: real_bcast(), state: window::ENTERED, stamp: st };
        // Head 40: the ring held 9..=40 then; 9 came torn (the writer was
        // rewriting its slot), 4..=8 had left it and 6 came from a keep slot.
        let got: Vec<_> = [6].into_iter().chain(10..=40).map(entry).collect();
        assert_eq!(c.torn(1, 40, &got), 8, "read again from 9, in the keep slots by then");
        c.count_lost(1, 8, &got);
        assert_eq!(c.lost(1), 4, "4, 5, 7 and 8: neither in the ring nor kept");
        assert_eq!(c.torn(1, 40, &(9..=40).map(entry).collect::<Vec<_>>()), 40);
    }

    #[test]
    fn only_collectives_alike_at_every_member_are_recovered() {
        for f in [fcode::BCAST, fcode::BCAST | fcode::NB, fcode::BARRIER, fcode::ALLREDUCE, fcode::SCATTER, fcode::COMM_SPLIT, fcode::ALLGATHERV, fcode::REDUCE_SCATTER | fcode::NB, fcode::CART_CREATE, fcode::DIST_GRAPH_CREATE] {
            assert!(any_entry_describes(f), "f{f}");
        }
        for f in [fcode::SCATTERV, fcode::GATHERV | fcode::NB, fcode::ALLTOALLW, fcode::NEIGHBOR_ALLTOALL, fcode::COMM_CREATE, fcode::INTERCOMM_CREATE, fcode::COMM_IDUP] {
            assert!(!any_entry_describes(f), "f{f}");
        }
    }

    #[test]
    fn dummy_entries_alone_give_no_descriptor() {
        let members = [0, 1, 2, 3];
        // Only another catching-up rank's entry is here: its zero counts and root
        // must not be joined with (the hang of ft_loop with deaths at calls 52/54).
        let found: HashMap<u32, Desc> = [(2, dummy(fcode::BCAST | fcode::NB))].into();
        assert!(by_member(&found, &members).is_none());
        // Once the real entry of the member that entered it is read, that one counts.
        let found: HashMap<u32, Desc> = [(2, dummy(fcode::BCAST | fcode::NB)), (1, real_bcast())].into();
        let (d, per) = by_member(&found, &members).expect("a real entry");
        assert_eq!((d.fcode, d.root, d.send), (fcode::BCAST | fcode::NB, 2, Spec { count: 1, ty: 14 }));
        assert!(per[1].is_some() && per[0].is_none() && per[2].is_none() && per[3].is_none());
    }

    #[test]
    fn function_only_collectives_go_on_from_a_dummy() {
        let members = [0, 1, 2];
        for f in [fcode::BARRIER, fcode::BARRIER | fcode::NB, fcode::COMM_DUP, fcode::COMM_SPLIT, fcode::COMM_SPLIT_TYPE] {
            let found: HashMap<u32, Desc> = [(1, dummy(f))].into();
            let (d, per) = by_member(&found, &members).expect("needs no counts");
            assert_eq!(d.fcode, f);
            assert!(per.iter().all(|e| e.is_none()));
        }
        for f in [fcode::ALLREDUCE, fcode::REDUCE | fcode::NB, fcode::ALLGATHERV, fcode::COMM_CREATE, fcode::CART_CREATE] {
            let found: HashMap<u32, Desc> = [(1, dummy(f))].into();
            assert!(by_member(&found, &members).is_none(), "f{f} needs a real entry");
        }
    }

    #[test]
    fn a_merge_only_the_other_group_entered_is_joined_with_this_groups_high() {
        let merge = |high: u64| Desc { fcode: fcode::INTERCOMM_MERGE, extra: [high, 0, 0, 0], ..Desc::default() };
        // This group: world ranks 0 and 1 (a dummy of 1's catch-up); the other: 4, 5 with high 1.
        let found: HashMap<u32, Desc> = [(1, dummy(fcode::INTERCOMM_MERGE)), (4, merge(1)), (5, merge(1))].into();
        let (d, per) = by_member(&found, &[0, 1]).expect("from the other group");
        assert_eq!((d.fcode, d.extra[0]), (fcode::INTERCOMM_MERGE, 0));
        assert!(per.iter().all(|e| e.is_none()));
        // An entry of this group wins, with its own high.
        let found: HashMap<u32, Desc> = [(0, merge(1)), (4, merge(0))].into();
        assert_eq!(by_member(&found, &[0, 1]).expect("own group").0.extra[0], 1);
        // Only dummies anywhere: nothing to join from yet.
        let found: HashMap<u32, Desc> = [(1, dummy(fcode::INTERCOMM_MERGE)), (4, dummy(fcode::INTERCOMM_MERGE))].into();
        assert!(by_member(&found, &[0, 1]).is_none());
    }
}
