//! One rank's state machine of the collective-matching model
//! (`protocol::models::colljoin`, which re-exports it): a [`Machine`] runs a live
//! rank's calls (collectives, revoke, agree, shrink), its background catch-up
//! and, once dead, its zombie service, making at most one shared-memory access
//! per step through [`Io`]. [`Design`] switches the rules it follows.

use super::colljoin::{
    child_id, AppCall, AppResult, Contribution, Design, Entry, EntryState, Fail, Io, Join, Kind, News, Op, Progress, Seq,
    Wait,
};
use crate::protocol::agree;
use crate::protocol::outcome::{self, Flow};
use crate::protocol::{CommId, Rank};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug)]
struct CommState {
    /// World ranks in communicator order. Invariant: ascending (every comm here is
    /// a world-ordered subset), so world -> comm rank is a binary search.
    members: Vec<Rank>,
    me: Rank,
    seq: Seq,
    acked: BTreeSet<Rank>,
}

/// What a sequence-of-collectives call is.
#[derive(Clone, Copy, Debug)]
enum What {
    App(Op),
    Agree(u64),
    Shrink,
}

impl What {
    fn len(self) -> usize {
        1 + matches!(self, What::Shrink) as usize
    }
    fn op(self, cursor: usize) -> Op {
        match self {
            What::App(op) => op,
            What::Agree(_) => Op::internal(Kind::Agree),
            What::Shrink => Op::internal([Kind::ShrinkReduce, Kind::Split][cursor]),
        }
    }
}

/// Phases of a collective call. Normal path: `Log` (store), `News` (load),
/// `Mark` (two-phase store), `Enter`, `Wait`, `Leave` (load). Revoked path of
/// agree/shrink: `Horizon` (wait for it), then `CatchUp` -> `Log` -> `Enter` for
/// each collective up to it, then the remaining ones (all with `post`).
/// `Log`/`Enter` carry the operation and whether the join is real (not dummy).
#[derive(Clone, Copy, Debug)]
enum Ph {
    Start,
    Log(Op, bool),
    News,
    Mark(EntryState, Option<Fail>),
    Enter(Op, bool),
    Wait,
    Leave,
    Horizon,
    CatchUp,
}

#[derive(Clone, Copy, Debug)]
enum RPh {
    Start,
    Put,
    Read,
    PutHorizon,
}

#[derive(Clone, Debug)]
enum Call {
    Colls {
        comm: CommId,
        what: What,
        cursor: usize,
        post: bool,
        reduced: Option<Vec<u64>>,
        split: Option<Vec<Rank>>,
        ph: Ph,
    },
    Revoke {
        comm: CommId,
        ph: RPh,
        i: usize,
        h: Seq,
    },
}

/// One transition of a call.
enum Adv {
    /// Local bookkeeping only; go on in the same step.
    Free,
    /// Made this step's one access.
    Io,
    Return(AppResult),
    Block(Wait),
    /// Made this step's access and is now blocked (no background work this step).
    IoBlock(Wait),
}

#[derive(Default)]
pub struct Machine {
    me: Rank,
    n_world: Rank,
    d: Design,
    comms: BTreeMap<CommId, CommState>,
    dead: BTreeSet<Rank>,
    revoked: BTreeSet<CommId>,
    /// First horizon read per comm (with the fixes every horizon is equal).
    horizon: BTreeMap<CommId, Seq>,
    news_read: usize,
    call: Option<Call>,
    /// A background catch-up whose log entry is written and join is next.
    bg: Option<(CommId, Seq, Op)>,
    finalized: bool,
    zombie: bool,
    /// Zombie: next world rank to put "dead" into (done at `n_world`).
    z_puts: Rank,
    /// Zombie with blocking joins: the join it waits for.
    z_out: Option<(CommId, Seq)>,
    /// Zombie: round-robin start over its comms, so none starves.
    z_rr: usize,
}

impl Machine {
    /// `comms`: `(id, world ranks in order)` for every communicator `me` is in.
    pub fn new(me: Rank, n_world: Rank, d: Design, comms: &[(CommId, Vec<Rank>)]) -> Machine {
        let mut m = Machine { me, n_world, d, ..Machine::default() };
        for (id, members) in comms {
            m.add_comm(*id, members.clone());
        }
        m
    }

    fn add_comm(&mut self, id: CommId, members: Vec<Rank>) {
        assert!(members.windows(2).all(|w| w[0] < w[1]), "members must be in world order");
        let me = members.binary_search(&self.me).expect("a communicator I am in") as Rank;
        self.comms.insert(id, CommState { members, me, seq: 0, acked: BTreeSet::new() });
    }

    pub fn knows_revoked(&self, c: CommId) -> bool {
        self.revoked.contains(&c)
    }
    /// For deadlock reports.
    pub fn describe(&self) -> String {
        let seqs: Vec<String> = self.comms.iter().map(|(c, cs)| format!("{c:x}:{}", cs.seq)).collect();
        let Machine { me, zombie, call, bg, horizon, .. } = self;
        format!("rank {me} zombie={zombie} call={call:?} bg={bg:?} horizons={horizon:?} seqs=[{}]", seqs.join(" "))
    }

    /// The application makes a call (only when the last one returned).
    pub fn start(&mut self, call: AppCall) {
        assert!(self.call.is_none() && self.bg.is_none() && !self.zombie && !self.finalized);
        let colls =
            |comm, what| Call::Colls { comm, what, cursor: 0, post: false, reduced: None, split: None, ph: Ph::Start };
        self.call = Some(match call {
            AppCall::Coll(comm, op) => {
                assert!(!op.kind.is_internal(), "internal collectives come from agree/shrink");
                colls(comm, What::App(op))
            }
            AppCall::Revoke(comm) => Call::Revoke { comm, ph: RPh::Start, i: 0, h: 0 },
            AppCall::Agree { comm, flag, ack } => {
                if ack {
                    let dead = self.dead_in(comm);
                    self.cs(comm).acked.extend(dead);
                }
                colls(comm, What::Agree(flag))
            }
            AppCall::Shrink(comm) => colls(comm, What::Shrink),
            AppCall::Kill => {
                self.zombie = true;
                return;
            }
        });
    }

    /// The program is done (`MPI_Finalize`): the rank only serves catch-ups.
    pub fn finalize(&mut self) {
        assert!(self.call.is_none());
        self.finalized = true;
    }

    pub fn step(&mut self, io: &mut impl Io) -> Progress {
        if self.zombie {
            return self.zombie_step(io);
        }
        if let Some((c, s, op)) = self.bg.take() {
            let contribution = self.dummy(c, op.kind);
            io.enter(self.me, Join { comm: c, seq: s, op, contribution, dummy: true, post_revoke: true });
            self.cs(c).seq = s;
            return Progress::Stepped;
        }
        let mut wait = Wait::default();
        if let Some(mut call) = self.call.take() {
            let adv = loop {
                match self.advance(&mut call, io) {
                    Adv::Free => {}
                    Adv::Return(res) => return Progress::Returned(res),
                    other => break other,
                }
            };
            self.call = Some(call);
            match adv {
                Adv::Block(w) => wait = w,
                Adv::IoBlock(w) => return Progress::Blocked(w),
                _ => return Progress::Stepped,
            }
        } else if !self.finalized {
            return Progress::Idle;
        }
        if self.d.background_catchup {
            let busy = self.call.as_ref().map(|(Call::Colls { comm, .. } | Call::Revoke { comm, .. })| *comm);
            if self.background(io, busy, &mut wait) {
                return Progress::Stepped;
            }
        }
        Progress::Blocked(wait)
    }

    fn cs(&mut self, c: CommId) -> &mut CommState {
        self.comms.get_mut(&c).expect("a communicator this rank is in")
    }

    fn size(&self, c: CommId) -> Rank {
        self.comms[&c].members.len() as Rank
    }

    /// Comm ranks of the members of `c` this rank knows dead.
    fn dead_in(&self, c: CommId) -> Vec<Rank> {
        let m = &self.comms[&c].members;
        self.dead.iter().filter_map(|w| m.binary_search(w).ok().map(|i| i as Rank)).collect()
    }

    fn read_news(&mut self, io: &mut impl Io) {
        for item in io.read_news(self.me, self.news_read) {
            self.news_read += 1;
            match item {
                News::Dead(r) => _ = self.dead.insert(r),
                News::Revoked(c) => _ = self.revoked.insert(c),
                News::Horizon(c, h) => _ = self.horizon.entry(c).or_insert(h),
            }
        }
    }

    fn advance(&mut self, call: &mut Call, io: &mut impl Io) -> Adv {
        match call {
            Call::Colls { .. } => self.colls(call, io),
            Call::Revoke { comm, ph, i, h } => self.revoke(*comm, ph, i, h, io),
        }
    }

    /// An application collective, agree or shrink. Each collective: log, check
    /// news, enter, wait (application ones then check news again). Agree and
    /// shrink on a communicator known revoked wait for the horizon, catch up to it
    /// and run their remaining collectives after it, without news checks.
    fn colls(&mut self, call: &mut Call, io: &mut impl Io) -> Adv {
        let d = self.d;
        let Call::Colls { comm, what, cursor, post, reduced, split, ph } = call else { unreachable!() };
        let (c, what) = (*comm, *what);
        let app = matches!(what, What::App(_));
        let op = what.op(*cursor);
        let next = self.comms[&c].seq + 1;
        let logged_first = d.log_before_news && !*post;
        let first = if d.log_before_news { Ph::Log(op, true) } else { Ph::News };
        match *ph {
            Ph::Start => {
                *ph = if !app && self.revoked.contains(&c) { Ph::Horizon } else { first };
                Adv::Free
            }
            Ph::Log(found, real) => {
                let state = if d.two_phase_log && logged_first { EntryState::Pending } else { EntryState::Entered };
                io.write_log(self.me, Entry { comm: c, seq: next, op: found, state, post_revoke: *post });
                *ph = if logged_first { Ph::News } else { Ph::Enter(found, real) };
                Adv::Io
            }
            Ph::News => self.colls_news(c, app, op, ph, io),
            Ph::Mark(state, fail) => {
                io.mark_log(self.me, c, next, state);
                if let Some(f) = fail {
                    return Adv::Return(AppResult::Failed(f));
                }
                *ph = if state == EntryState::Entered { Ph::Enter(op, true) } else { Ph::Horizon };
                Adv::Io
            }
            Ph::Enter(found, real) => {
                let contribution =
                    if real { self.mine(c, what, op.kind, reduced.as_deref()) } else { self.dummy(c, found.kind) };
                let j = Join { comm: c, seq: next, op: found, contribution, dummy: !real, post_revoke: *post };
                io.enter(self.me, j);
                self.cs(c).seq = next;
                *ph = if real { Ph::Wait } else { Ph::CatchUp };
                Adv::Io
            }
            Ph::Wait => {
                let s = next - 1;
                let Some(o) = io.outcome(c, s) else {
                    return Adv::Block(Wait { completion: Some((c, s)), ..Wait::default() });
                };
                if app && d.leave_check {
                    *ph = Ph::Leave;
                    return Adv::Free;
                } else if app {
                    return Adv::Return(AppResult::Ok);
                }
                match op.kind {
                    Kind::Split => *split = o.members,
                    _ => *reduced = o.bits,
                }
                *cursor += 1;
                if *cursor == what.len() {
                    return Adv::Return(self.finish(c, what, reduced.as_deref(), split.take(), s));
                }
                *ph = if *post { Ph::CatchUp } else { Ph::Start };
                Adv::Free
            }
            Ph::Leave => {
                self.read_news(io);
                match self.failure(c, true) {
                    Some(Fail::ProcFailed) if self.adversary_tells_success(c, op) => Adv::Return(AppResult::Ok),
                    f => Adv::Return(f.map_or(AppResult::Ok, AppResult::Failed)),
                }
            }
            Ph::Horizon | Ph::CatchUp => self.colls_revoked(c, next, op, post, ph, io),
        }
    }

    /// [`Machine::colls`] after its news check (`Ph::News`): the call fails, takes
    /// the revoked path, or goes on to mark, log or enter.
    fn colls_news(&mut self, c: CommId, app: bool, op: Op, ph: &mut Ph, io: &mut impl Io) -> Adv {
        let d = self.d;
        self.read_news(io);
        // Application calls fail; agree/shrink switch to the revoked path.
        let fail = self.failure(c, app && d.cancel_on_known_failure).map(|f| app.then_some(f));
        *ph = match fail {
            Some(f) if d.two_phase_log && d.log_before_news => Ph::Mark(EntryState::Cancelled, f),
            Some(Some(f)) => return Adv::Return(AppResult::Failed(f)),
            Some(None) => Ph::Horizon,
            None if !d.log_before_news => Ph::Log(op, true),
            None if d.two_phase_log => Ph::Mark(EntryState::Entered, None),
            None => Ph::Enter(op, true),
        };
        Adv::Io
    }

    /// The revoked path of [`Machine::colls`] (agree/shrink on a revoked
    /// communicator): wait for the horizon (`Ph::Horizon`), then find each
    /// collective up to it to join (`Ph::CatchUp`); `next` is the sequence
    /// number to join next, `op` the call's own current collective.
    fn colls_revoked(&mut self, c: CommId, next: Seq, op: Op, post: &mut bool, ph: &mut Ph, io: &mut impl Io) -> Adv {
        let d = self.d;
        match *ph {
            Ph::Horizon if self.horizon.contains_key(&c) => {
                *post = true;
                *ph = Ph::CatchUp;
                Adv::Free
            }
            Ph::Horizon if io.has_news(self.me, self.news_read) => {
                self.read_news(io);
                Adv::Io
            }
            Ph::Horizon => Adv::Block(Wait { news: true, ..Wait::default() }),
            Ph::CatchUp if next > self.horizon[&c] => {
                *ph = Ph::Log(op, true);
                Adv::Free
            }
            Ph::CatchUp => {
                let Some(found) = io.find_op(c, next, d.two_phase_log) else {
                    return Adv::Block(Wait { logs: vec![c], ..Wait::default() });
                };
                // The pending collective of this very call (others entered it
                // before the revoke) is joined for real, anything else as dummy.
                *ph = Ph::Log(found, d.join_pending_internal && found == op);
                Adv::Free
            }
            _ => unreachable!("only the revoked path's phases come here"),
        }
    }

    /// Revoked, or (if `dead`) a member known dead.
    fn failure(&self, c: CommId, dead: bool) -> Option<Fail> {
        if self.revoked.contains(&c) {
            Some(Fail::Revoked)
        } else if dead && !self.dead_in(c).is_empty() {
            Some(Fail::ProcFailed)
        } else {
            None
        }
    }

    /// The adversarial mode's `collectives` choice at the leave check of `op`,
    /// the collective just completed on `c` while a member is known dead: the
    /// rule of protocol::outcome over the known-dead members, then the draw.
    fn adversary_tells_success(&self, c: CommId, op: Op) -> bool {
        let Some(seed) = self.d.adversary else { return false };
        let flow = match op.kind {
            Kind::Bcast => Flow::FromRoot,
            Kind::Reduce => Flow::ToRoot,
            _ => Flow::All,
        };
        let me = self.comms[&c].members.binary_search(&self.me).expect("a member") as Rank;
        let real = outcome::result_is_real(flow, op.root, me, &self.dead_in(c));
        (real || !self.d.adversary_keeps_rule) && outcome::draw(seed, &[c, self.comms[&c].seq, self.me as u64])
    }

    /// Revoke: "revoked" into every member's news, read every member's log, the
    /// horizon into every member's news (the first two swapped by a mutation).
    fn revoke(&mut self, c: CommId, ph: &mut RPh, i: &mut usize, h: &mut Seq, io: &mut impl Io) -> Adv {
        let d = self.d;
        let m = self.comms[&c].members.len();
        let puts_first = d.revoker_puts_before_reading;
        match *ph {
            RPh::Start if self.revoked.contains(&c) => Adv::Return(AppResult::Ok),
            RPh::Start => {
                *ph = if puts_first { RPh::Put } else { RPh::Read };
                Adv::Free
            }
            RPh::Put | RPh::Read | RPh::PutHorizon if *i == m => {
                if let (RPh::Read, true) = (*ph, d.horizon_includes_own_seq) {
                    *h = (*h).max(self.comms[&c].seq);
                }
                *i = 0;
                *ph = match (*ph, puts_first) {
                    (RPh::PutHorizon, _) => return Adv::Return(AppResult::Ok),
                    (RPh::Put, true) => RPh::Read,
                    (RPh::Read, false) => RPh::Put,
                    _ => RPh::PutHorizon,
                };
                Adv::Free
            }
            RPh::Put | RPh::PutHorizon => {
                let item = if let RPh::Put = *ph { News::Revoked(c) } else { News::Horizon(c, *h) };
                io.put_news(self.me, self.comms[&c].members[*i], item);
                *i += 1;
                Adv::Io
            }
            RPh::Read => {
                let of = self.comms[&c].members[*i];
                let entries = io.read_log(of, c);
                if d.two_phase_log && entries.iter().any(|e| e.state == EntryState::Pending) {
                    // `of` is between its log store and its news check: it will
                    // resolve the entry in its next step. Read it again then.
                    return Adv::IoBlock(Wait { pending: Some(of), ..Wait::default() });
                }
                for e in entries {
                    if !d.two_phase_log || (e.state == EntryState::Entered && !e.post_revoke) {
                        *h = (*h).max(e.seq);
                    }
                }
                *i += 1;
                Adv::Io
            }
        }
    }

    fn finish(
        &mut self,
        c: CommId,
        what: What,
        reduced: Option<&[u64]>,
        split: Option<Vec<Rank>>,
        s: Seq,
    ) -> AppResult {
        if let What::Agree(_) = what {
            return AppResult::Agreed(agree::decide(self.size(c), reduced.expect("agree reduced")));
        }
        let members = split.expect("split members");
        let id = child_id(c, s);
        if members.contains(&self.me) {
            self.add_comm(id, members.clone());
        }
        AppResult::Shrunk { comm: id, members }
    }

    /// A live rank's own contribution to collective `kind` of its call.
    fn mine(&self, c: CommId, what: What, kind: Kind, reduced: Option<&[u64]>) -> Contribution {
        let n = self.size(c);
        let dead = self.dead_in(c);
        match (kind, what) {
            (Kind::Agree, What::Agree(flag)) => {
                let acked: Vec<Rank> = self.comms[&c].acked.iter().copied().collect();
                Contribution::Bits(agree::contribution_live(n, flag, &dead, &acked))
            }
            (Kind::ShrinkReduce, _) => Contribution::Bits(agree::contribution_live(n, !0, &dead, &[])),
            (Kind::Split, _) => {
                let me = self.comms[&c].me;
                let stays = match reduced {
                    None => true,
                    Some(r) => agree::survivors(n, r).binary_search(&me).is_ok(),
                };
                Contribution::Color(stays.then_some(0))
            }
            _ => Contribution::Data,
        }
    }

    /// Dummy contribution: a live rank's (catch-up) is neutral but says it is
    /// alive, a zombie's says it is dead.
    fn dummy(&self, c: CommId, kind: Kind) -> Contribution {
        let n = self.size(c);
        match kind {
            Kind::Agree | Kind::ShrinkReduce if self.zombie => {
                Contribution::Bits(agree::contribution_zombie(n, self.comms[&c].me))
            }
            Kind::Agree | Kind::ShrinkReduce => {
                let all: Vec<Rank> = (0..n).collect();
                Contribution::Bits(agree::contribution_live(n, !0, &self.dead_in(c), &all))
            }
            Kind::Split => Contribution::Color((!self.zombie).then_some(0)),
            _ => Contribution::Data,
        }
    }

    /// Background work of a live rank that is blocked or finalizing: read news,
    /// then join the next application collective below a known horizon.
    /// True if it made a step.
    fn background(&mut self, io: &mut impl Io, busy: Option<CommId>, wait: &mut Wait) -> bool {
        if io.has_news(self.me, self.news_read) {
            self.read_news(io);
            return true;
        }
        wait.news = true;
        let behind: Vec<CommId> = self
            .horizon
            .iter()
            .filter(|(c, h)| Some(**c) != busy && self.comms.get(c).is_some_and(|cs| cs.seq < **h))
            .map(|(c, _)| *c)
            .collect();
        for c in behind {
            let s = self.comms[&c].seq + 1;
            match io.find_op(c, s, self.d.two_phase_log) {
                // Internal: the program's own agree/shrink call joins it for real.
                Some(op) if op.kind.is_internal() => {}
                Some(op) => {
                    io.write_log(self.me, Entry { comm: c, seq: s, op, state: EntryState::Entered, post_revoke: true });
                    self.bg = Some((c, s, op));
                    return true;
                }
                None => wait.logs.push(c),
            }
        }
        false
    }

    /// A zombie: death news to every peer first, then join every collective some
    /// log shows, in order per communicator.
    fn zombie_step(&mut self, io: &mut impl Io) -> Progress {
        self.z_out = self.z_out.filter(|&(c, s)| !io.complete(c, s));
        let puts_done = self.z_puts >= self.n_world;
        let serve = self.z_out.is_none() && (puts_done || !self.d.zombie_puts_before_serving);
        let ids: Vec<CommId> = self.comms.keys().copied().collect();
        for k in (0..ids.len()).filter(|_| serve) {
            let c = ids[(self.z_rr + k) % ids.len()];
            let s = self.comms[&c].seq + 1;
            if let Some(op) = io.find_op(c, s, self.d.two_phase_log) {
                let contribution = self.dummy(c, op.kind);
                io.enter(self.me, Join { comm: c, seq: s, op, contribution, dummy: true, post_revoke: false });
                self.cs(c).seq = s;
                if !self.d.zombie_nonblocking {
                    self.z_out = Some((c, s));
                }
                self.z_rr = (self.z_rr + k + 1) % ids.len();
                return Progress::Stepped;
            }
        }
        if !puts_done {
            if self.z_puts != self.me {
                io.put_news(self.me, self.z_puts, News::Dead(self.me));
            }
            self.z_puts += 1;
            return Progress::Stepped;
        }
        Progress::Blocked(Wait { completion: self.z_out, logs: ids, ..Wait::default() })
    }
}
