//! Which survivors of a collective that a failure touched may be told success
//! (issue 56, the adversarial semantics mode's `collectives` choice).
//!
//! ULFM reports errors locally: a collective that a failure touches may return
//! success at some survivors and `MPI_ERR_PROC_FAILED` at others (ULFM-SEMANTICS.md,
//! "Collectives"; the ULFM specification: "the operation may complete successfully
//! at some processes and raise an error at others"). What it may not do is hand
//! back a wrong result with success. MPIFT's dead ranks join a collective they did
//! not enter for real with dummy data, so a survivor may be told success exactly
//! when its result depends on no dummy part. That depends on how data flows in
//! the collective ([`Flow`]), which the engine derives from the function code.
//!
//! The rule per kind, with "depends on" meaning "some algorithm a conforming
//! implementation may use routes that member's part into my result":
//! - a barrier's result is "every member entered": it depends on every member;
//! - bcast and scatter(v): a non-root's result is the root's data; the root
//!   receives nothing;
//! - reduce and gather(v): the root's result depends on every member; a
//!   non-root receives nothing;
//! - allreduce, allgather(v), alltoall(v, w), reduce_scatter(_block), and every
//!   collective whose data the engine does not model (the neighbourhood ones,
//!   the constructors but dup): every member;
//! - `MPI_Comm_dup`: no member's data (the new communicator has the parent's
//!   group at every member, a dead member in it known failed; the adversarial
//!   mode's `constructors` choice);
//! - scan: member r's result depends on members 0..=r; exscan: on 0..r.
//!
//! Whether a member that may be told success is told success is the adversary's
//! draw ([`draw`]): a pure function of the seed and the event's key, so a seed
//! replays the same choices. The mode's late news (a death's, a revoke's) takes
//! its delays from the same kind of draw ([`delay_us`]).

use crate::protocol::Rank;

/// How data flows in a collective, as far as the rule above needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Every member's result depends on every member's part.
    All,
    /// The root's data goes to every other member (bcast, scatter).
    FromRoot,
    /// Every member's data goes to the root (reduce, gather).
    ToRoot,
    /// Member r's result depends on members 0..=r (scan).
    Prefix,
    /// Member r's result depends on members 0..r (exscan).
    ExclusivePrefix,
    /// No member's result depends on another's data (`MPI_Comm_dup`).
    Nothing,
}

/// Member `me`'s result depends on member `other`'s part (ranks in the
/// communicator; `root` is read by the rooted flows only).
pub fn depends_on(flow: Flow, root: Rank, me: Rank, other: Rank) -> bool {
    match flow {
        Flow::All => true,
        Flow::FromRoot => me != root && other == root,
        Flow::ToRoot => me == root,
        Flow::Prefix => other <= me,
        Flow::ExclusivePrefix => other < me,
        Flow::Nothing => false,
    }
}

/// Member `me`'s result is real although the members in `dummy` joined with
/// dummy data: it depends on none of them. `me` itself is never in `dummy`.
pub fn result_is_real(flow: Flow, root: Rank, me: Rank, dummy: &[Rank]) -> bool {
    dummy.iter().all(|d| !depends_on(flow, root, me, *d))
}

/// The adversary's draw for one event: true with probability one half, from
/// the seed and the event's key alone (splitmix64 over the words), so the same
/// seed and the same program give the same draws at every run.
pub fn draw(seed: u64, key: &[u64]) -> bool {
    hash(seed, key) & 1 == 1
}

/// The adversary's delay for one event (a death's news reaching one observer, a
/// revoke's reaching one member), in microseconds within `min..=max`: drawn
/// log-uniformly (as many delays between 1 and 10 ms as between 100 ms and 1 s,
/// so one range gives both close and far-apart observers), from the seed and
/// the event's key alone.
pub fn delay_us(seed: u64, key: &[u64], min: u64, max: u64) -> u64 {
    if max <= min {
        return min;
    }
    let u = (hash(seed, key) >> 11) as f64 / (1u64 << 53) as f64;
    let (lo, hi) = ((min.max(1)) as f64, max as f64);
    let d = (lo.ln() + u * (hi.ln() - lo.ln())).exp();
    (d as u64).clamp(min, max)
}

fn hash(seed: u64, key: &[u64]) -> u64 {
    let mut h = seed ^ 0x6164_7665_7273_6172; // "adversar"
    for k in key {
        h = mix(h ^ *k);
    }
    h
}

fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_non_root_of_a_bcast_is_real_unless_the_root_is_dummy() {
        assert!(result_is_real(Flow::FromRoot, 0, 2, &[1, 3]));
        assert!(!result_is_real(Flow::FromRoot, 1, 2, &[1]));
        // The root receives nothing.
        assert!(result_is_real(Flow::FromRoot, 1, 1, &[0, 2]));
    }

    #[test]
    fn only_the_root_of_a_reduce_depends_on_the_others() {
        assert!(!result_is_real(Flow::ToRoot, 0, 0, &[3]));
        assert!(result_is_real(Flow::ToRoot, 0, 1, &[3]));
    }

    #[test]
    fn all_and_the_prefixes() {
        assert!(!result_is_real(Flow::All, 0, 1, &[3]));
        assert!(result_is_real(Flow::All, 0, 1, &[]));
        assert!(result_is_real(Flow::Prefix, 0, 1, &[2, 3]));
        assert!(!result_is_real(Flow::Prefix, 0, 2, &[0]));
        assert!(!result_is_real(Flow::Prefix, 0, 3, &[2]));
        assert!(result_is_real(Flow::ExclusivePrefix, 0, 2, &[2, 3]));
        assert!(!result_is_real(Flow::ExclusivePrefix, 0, 3, &[2]));
        assert!(result_is_real(Flow::Nothing, 0, 0, &[1, 2, 3]));
    }

    #[test]
    fn draws_replay_and_vary() {
        let a: Vec<bool> = (0..64).map(|s| draw(7, &[1, s, 2])).collect();
        let b: Vec<bool> = (0..64).map(|s| draw(7, &[1, s, 2])).collect();
        assert_eq!(a, b);
        let ones = a.iter().filter(|x| **x).count();
        assert!((16..=48).contains(&ones), "{ones} of 64");
        let c: Vec<bool> = (0..64).map(|s| draw(8, &[1, s, 2])).collect();
        assert_ne!(a, c);
    }

    #[test]
    fn delays_stay_in_range_replay_and_spread_over_the_decades() {
        let d: Vec<u64> = (0..1000).map(|o| delay_us(3, &[2, 5, o], 1_000, 1_000_000)).collect();
        assert!(d.iter().all(|x| (1_000..=1_000_000).contains(x)));
        assert_eq!(d, (0..1000).map(|o| delay_us(3, &[2, 5, o], 1_000, 1_000_000)).collect::<Vec<_>>());
        // Log-uniform: about a third in each decade of 1 ms..1 s.
        for (lo, hi) in [(1_000, 10_000), (10_000, 100_000), (100_000, 1_000_001)] {
            let k = d.iter().filter(|x| (lo..hi).contains(*x)).count();
            assert!((250..=420).contains(&k), "{k} of 1000 in {lo}..{hi}");
        }
        assert_eq!(delay_us(3, &[1], 500, 500), 500);
        assert_eq!(delay_us(3, &[1], 0, 0), 0);
        assert!(delay_us(9, &[4], 0, 10) <= 10);
    }
}
