//! The programs of the exit model (protocol::models::exit): seeded worlds of
//! overlapping communicators whose members run one global order of blocking and
//! non-blocking collectives, and the world of examples/ulfm/overlap_b.c.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::Rng;

/// One collective of the global order.
#[derive(Clone, Copy, Debug)]
pub struct Op {
    /// Index into [`World::comms`].
    pub comm: usize,
    /// Non-blocking: started, then waited for by a later [`Event::Wait`].
    pub nb: bool,
    /// A rooted collective whose other members return as soon as they entered
    /// it (`MPI_Reduce` with a small message): the root (world rank).
    pub early_root: Option<usize>,
}

/// One call of a rank's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Enter op `i` (start it, if non-blocking).
    Coll(usize),
    /// Wait for non-blocking op `i`.
    Wait(usize),
}

#[derive(Clone, Debug)]
pub struct World {
    pub n: usize,
    /// World ranks of each communicator's members.
    pub comms: Vec<Vec<usize>>,
    pub ops: Vec<Op>,
    /// Each op's number on its communicator (1 = its first collective).
    pub seq: Vec<u64>,
    /// Per rank: its calls, the global order restricted to its communicators
    /// (so the program itself cannot deadlock), then `MPI_Finalize`.
    pub progs: Vec<Vec<Event>>,
    /// Per rank: the call at whose entry it dies (`progs[r].len()`: at
    /// `MPI_Finalize`'s entry), if it dies.
    pub death: Vec<Option<usize>>,
}

impl World {
    /// The world of a global order of calls.
    pub fn new(n: usize, comms: Vec<Vec<usize>>, ops: Vec<Op>, script: &[Event]) -> World {
        let mut count = vec![0u64; comms.len()];
        let seq = ops
            .iter()
            .map(|o| {
                count[o.comm] += 1;
                count[o.comm]
            })
            .collect();
        let progs = (0..n)
            .map(|r| {
                script
                    .iter()
                    .copied()
                    .filter(|e| {
                        let (Event::Coll(i) | Event::Wait(i)) = *e;
                        comms[ops[i].comm].contains(&r)
                    })
                    .collect()
            })
            .collect();
        World { n, comms, ops, seq, progs, death: vec![None; n] }
    }

    /// A seeded world of `n` ranks: 2-5 overlapping communicators (the world
    /// among them now and then), `ops` collectives in one global order, a third
    /// of them non-blocking (each waited for at a later point) and some rooted
    /// with early non-roots; `deaths` ranks die, each at a random call (none
    /// before its first, or at its `MPI_Finalize`). At least one rank lives.
    pub fn random(rng: &mut StdRng, n: usize, ops: usize, deaths: usize) -> World {
        let ncomm = rng.gen_range(2..=5);
        let mut comms: Vec<Vec<usize>> = Vec::new();
        let everyone: Vec<usize> = (0..n).collect();
        for k in 0..ncomm {
            let size = if k == 0 && rng.gen_bool(0.3) { n } else { rng.gen_range(2..=n.min(3 + n / 2)) };
            let mut m: Vec<usize> = everyone.choose_multiple(rng, size).copied().collect();
            m.sort_unstable();
            comms.push(m);
        }
        let mut list = Vec::new();
        let mut script = Vec::new();
        let mut waits: Vec<usize> = Vec::new();
        for i in 0..ops {
            let comm = rng.gen_range(0..comms.len());
            let nb = rng.gen_bool(0.35);
            let early_root = (!nb && rng.gen_bool(0.3)).then(|| *comms[comm].choose(rng).expect("members"));
            list.push(Op { comm, nb, early_root });
            script.push(Event::Coll(i));
            if nb {
                waits.push(i);
            }
            waits.retain(|w| {
                let now = *w != i && rng.gen_bool(0.4);
                if now {
                    script.push(Event::Wait(*w));
                }
                !now
            });
        }
        script.extend(waits.into_iter().map(Event::Wait));
        let mut w = World::new(n, comms, list, &script);
        let mut ranks = everyone;
        ranks.shuffle(rng);
        for &r in ranks.iter().take(deaths.min(n - 1)) {
            w.death[r] = Some(rng.gen_range(0..=w.progs[r].len()));
        }
        w
    }

    /// examples/ulfm/overlap_b.c at 4 ranks with `rounds` repetitions: ranks 1
    /// and 3 die at once, rank 2 at call `late` of its program (the hunt's
    /// `MPIFT_KILL`). P = {1, 3, 0} (root 1, dead), Q = {2, 1, 3}, R = {3, 0, 2}
    /// (root 3, dead). A live rank: Ibcast(P), Iallreduce(Q), Allreduce(R),
    /// Wait(P), Wait(Q); Reduce(P) (non-roots return early), Ibarrier(Q),
    /// Bcast(R), Wait(Q).
    pub fn overlap_b(rounds: usize, late: usize) -> World {
        let comms = vec![vec![1, 3, 0], vec![2, 1, 3], vec![3, 0, 2]];
        let (p, q, r) = (0, 1, 2);
        let mut ops = Vec::new();
        let mut script = Vec::new();
        let add = |ops: &mut Vec<Op>, op: Op| {
            ops.push(op);
            ops.len() - 1
        };
        for _ in 0..rounds {
            let ib = add(&mut ops, Op { comm: p, nb: true, early_root: None });
            let ia = add(&mut ops, Op { comm: q, nb: true, early_root: None });
            let ar = add(&mut ops, Op { comm: r, nb: false, early_root: None });
            script.extend([Event::Coll(ib), Event::Coll(ia), Event::Coll(ar), Event::Wait(ib), Event::Wait(ia)]);
            let red = add(&mut ops, Op { comm: p, nb: false, early_root: Some(1) });
            let bar = add(&mut ops, Op { comm: q, nb: true, early_root: None });
            let bc = add(&mut ops, Op { comm: r, nb: false, early_root: None });
            script.extend([Event::Coll(red), Event::Coll(bar), Event::Coll(bc), Event::Wait(bar)]);
        }
        let mut w = World::new(4, comms, ops, &script);
        w.death[1] = Some(0);
        w.death[3] = Some(0);
        w.death[2] = Some(late.min(w.progs[2].len()));
        w
    }
}
