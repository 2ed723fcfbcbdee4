//! Which kill points a campaign runs (pure): from the failure-free trace and the
//! options, a list of `MPIFT_KILL` rules. Every random choice comes from a
//! generator seeded with `--seed`, so the same options give the same points.

use crate::trace::Calls;

/// One run's deaths.
#[derive(Debug, Clone, PartialEq)]
pub enum Point {
    /// `rank=R@call=C`.
    Call { rank: u32, call: u64 },
    /// `rank=a@call=x;rank=b@call=y`, a != b.
    Pair { a: (u32, u64), b: (u32, u64) },
    /// `rank=R@time=S`.
    Time { rank: u32, secs: f64 },
}

impl Point {
    /// The `MPIFT_KILL` rule; also the point's key in runs.jsonl.
    pub fn rule(&self) -> String {
        match self {
            Point::Call { rank, call } => format!("rank={rank}@call={call}"),
            Point::Pair { a, b } => format!("rank={}@call={};rank={}@call={}", a.0, a.1, b.0, b.1),
            Point::Time { rank, secs } => format!("rank={rank}@time={secs:.6}"),
        }
    }
}

/// What to select (the options that choose points).
#[derive(Debug, Clone, Default)]
pub struct Selection {
    pub ranks: Option<Vec<u32>>,
    pub calls_of: Vec<String>,
    pub every: Option<u64>,
    pub first: Option<u64>,
    pub sample: Option<u64>,
    pub pairs: Option<u64>,
    pub time: Option<u64>,
    pub no_single: bool,
    pub seed: u64,
}

/// splitmix64: small, fixed by its definition, so a seed means the same points
/// on every machine and version.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64, stream: u64) -> Rng {
        Rng(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15))
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in 0..n (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next() as u128 * n as u128) >> 64) as u64
    }
    /// Uniform in (0, 1).
    pub fn open01(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
}

/// The candidate calls of each selected rank: 2..=count; with `--first F` only
/// 2..=F; with `--every N` the multiples of N among those; with `--calls-of`, only
/// calls of those functions (with `--first F` the first F of them), and with
/// `--every N` the N-th, 2N-th, ... of those.
pub fn candidates(sel: &Selection, traces: &[Calls]) -> Result<Vec<(u32, Vec<u64>)>, String> {
    let np = traces.len() as u32;
    let ranks: Vec<u32> = match &sel.ranks {
        Some(r) => {
            if let Some(bad) = r.iter().find(|r| **r >= np) {
                return Err(format!("--ranks: rank {bad} does not exist (the job has {np} ranks, 0-{})", np.saturating_sub(1)));
            }
            r.clone()
        }
        None => (0..np).collect(),
    };
    for f in &sel.calls_of {
        if !traces.iter().any(|t| t.runs.iter().any(|(_, _, n)| n == f)) {
            return Err(format!("--calls-of: no rank calls {f} in the failure-free run"));
        }
    }
    let every = sel.every.unwrap_or(1).max(1);
    let first = sel.first.unwrap_or(u64::MAX);
    Ok(ranks
        .into_iter()
        .map(|r| {
            let t = &traces[r as usize];
            let calls: Vec<u64> = if sel.calls_of.is_empty() {
                (2..=t.count().min(first)).filter(|c| c % every == 0 || every == 1).collect()
            } else {
                let of = |c: &u64| t.function(*c).is_some_and(|f| sel.calls_of.iter().any(|x| x == f));
                let firsts = (2..=t.count()).filter(of).take(usize::try_from(first).unwrap_or(usize::MAX));
                firsts.skip(every as usize - 1).step_by(every as usize).collect()
            };
            (r, calls)
        })
        .collect())
}

/// Every point of the campaign, in a fixed order (singles by rank and call, then
/// pairs, then times). `ff_secs`: the failure-free run's wall time, the bound of
/// sampled death times for a rank whose trace has no `end` (its time from
/// `MPI_Init` to `MPI_Finalize`, which a death time counts in).
pub fn select(sel: &Selection, traces: &[Calls], ff_secs: f64) -> Result<Vec<Point>, String> {
    let cand = candidates(sel, traces)?;
    let flat: Vec<(u32, u64)> = cand.iter().flat_map(|(r, cs)| cs.iter().map(move |c| (*r, *c))).collect();
    let mut points = Vec::new();
    if !sel.no_single {
        let chosen = match sel.sample {
            Some(k) => sample_indices(flat.len(), k, &mut Rng::new(sel.seed, 1)),
            None => (0..flat.len()).collect(),
        };
        points.extend(chosen.into_iter().map(|i| Point::Call { rank: flat[i].0, call: flat[i].1 }));
    }
    if let Some(k) = sel.pairs {
        points.extend(pairs(&cand, k, &mut Rng::new(sel.seed, 2))?);
    }
    if let Some(k) = sel.time {
        let ranks: Vec<u32> = cand.iter().map(|(r, _)| *r).collect();
        if ranks.is_empty() {
            return Err("--time: no rank selected".into());
        }
        let mut rng = Rng::new(sel.seed, 3);
        for _ in 0..k {
            let rank = ranks[rng.below(ranks.len() as u64) as usize];
            // Six decimals in the rule: never 0.
            let span = traces.get(rank as usize).and_then(|t| t.end).unwrap_or(ff_secs);
            let secs = (span * rng.open01()).max(1e-6);
            points.push(Point::Time { rank, secs });
        }
    }
    if points.is_empty() {
        return Err("no kill points: the selection (--ranks, --calls-of, --every, --first, --no-single) leaves none".into());
    }
    Ok(points)
}

/// K distinct indices of 0..n, sorted (all of them when K >= n).
pub fn sample_indices(n: usize, k: u64, rng: &mut Rng) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..n).collect();
    let k = (k as usize).min(n);
    // Partial Fisher-Yates: the first k are a uniform sample.
    for i in 0..k {
        let j = i + rng.below((n - i) as u64) as usize;
        idx.swap(i, j);
    }
    idx.truncate(k);
    idx.sort_unstable();
    idx
}

/// K two-death points: two different ranks with candidates, one candidate call each.
fn pairs(cand: &[(u32, Vec<u64>)], k: u64, rng: &mut Rng) -> Result<Vec<Point>, String> {
    let usable: Vec<&(u32, Vec<u64>)> = cand.iter().filter(|(_, cs)| !cs.is_empty()).collect();
    if usable.len() < 2 {
        return Err("--pairs: needs two ranks with candidate calls (see --ranks, --calls-of)".into());
    }
    let n = usable.len() as u64;
    let mut out = Vec::new();
    for _ in 0..k {
        let i = rng.below(n);
        let j = (i + 1 + rng.below(n - 1)) % n;
        let pick = |(r, cs): &(u32, Vec<u64>), rng: &mut Rng| (*r, cs[rng.below(cs.len() as u64) as usize]);
        let (a, b) = (pick(usable[i as usize], rng), pick(usable[j as usize], rng));
        let (a, b) = if a.0 < b.0 { (a, b) } else { (b, a) };
        let p = Point::Pair { a, b };
        if !out.contains(&p) {
            out.push(p);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse_calls;

    fn traces() -> Vec<Calls> {
        vec![
            parse_calls("1 1 MPI_Init\n2 4 MPI_Send\n6 2 MPI_Allreduce\n8 1 MPI_Finalize").unwrap(),
            parse_calls("1 1 MPI_Init\n2 4 MPI_Recv\n6 2 MPI_Allreduce\n8 1 MPI_Finalize").unwrap(),
            parse_calls("1 1 MPI_Init\n2 2 MPI_Allreduce\n4 1 MPI_Finalize").unwrap(),
        ]
    }

    #[test]
    fn every_call_from_2_by_default() {
        let p = select(&Selection::default(), &traces(), 1.0).unwrap();
        assert_eq!(p.len(), 7 + 7 + 3);
        assert_eq!(p[0], Point::Call { rank: 0, call: 2 });
        assert_eq!(p[16], Point::Call { rank: 2, call: 4 });
        assert_eq!(p[0].rule(), "rank=0@call=2");
    }

    #[test]
    fn filters() {
        let sel = Selection { ranks: Some(vec![1, 2]), calls_of: vec!["MPI_Allreduce".into()], ..Default::default() };
        let rules: Vec<String> = select(&sel, &traces(), 1.0).unwrap().iter().map(Point::rule).collect();
        assert_eq!(rules, ["rank=1@call=6", "rank=1@call=7", "rank=2@call=2", "rank=2@call=3"]);
        let sel = Selection { ranks: Some(vec![0]), every: Some(3), ..Default::default() };
        let rules: Vec<String> = select(&sel, &traces(), 1.0).unwrap().iter().map(Point::rule).collect();
        assert_eq!(rules, ["rank=0@call=3", "rank=0@call=6"]);
        let sel = Selection { ranks: Some(vec![0, 1]), every: Some(2), calls_of: vec!["MPI_Send".into(), "MPI_Recv".into()], ..Default::default() };
        let rules: Vec<String> = select(&sel, &traces(), 1.0).unwrap().iter().map(Point::rule).collect();
        assert_eq!(rules, ["rank=0@call=3", "rank=0@call=5", "rank=1@call=3", "rank=1@call=5"]);
        let bad = Selection { ranks: Some(vec![3]), ..Default::default() };
        assert!(select(&bad, &traces(), 1.0).unwrap_err().contains("rank 3 does not exist"));
        let typo = Selection { calls_of: vec!["MPI_Sendrecv".into()], ..Default::default() };
        assert!(select(&typo, &traces(), 1.0).unwrap_err().contains("MPI_Sendrecv"));
    }

    #[test]
    fn first_calls_only() {
        let rules = |sel: Selection| -> Vec<String> { select(&sel, &traces(), 1.0).unwrap().iter().map(Point::rule).collect() };
        // Calls 2..=3 of each rank; rank 2 has only calls 2-4 (first beyond a rank's count: all of them).
        assert_eq!(
            rules(Selection { first: Some(3), ..Default::default() }),
            ["rank=0@call=2", "rank=0@call=3", "rank=1@call=2", "rank=1@call=3", "rank=2@call=2", "rank=2@call=3"]
        );
        assert_eq!(rules(Selection { ranks: Some(vec![2]), first: Some(100), ..Default::default() }).len(), 3);
        // --every thins the first calls: multiples of 2 up to 6.
        assert_eq!(rules(Selection { ranks: Some(vec![0]), first: Some(6), every: Some(2), ..Default::default() }), ["rank=0@call=2", "rank=0@call=4", "rank=0@call=6"]);
        // With --calls-of: the first 2 calls of MPI_Allreduce (rank 0: calls 6, 7; rank 2: 2, 3).
        let sel = Selection { ranks: Some(vec![0, 2]), calls_of: vec!["MPI_Allreduce".into()], first: Some(2), ..Default::default() };
        assert_eq!(rules(sel), ["rank=0@call=6", "rank=0@call=7", "rank=2@call=2", "rank=2@call=3"]);
        // Pairs and samples draw from the first calls only.
        let sel = Selection { first: Some(4), pairs: Some(30), sample: Some(4), seed: 5, ..Default::default() };
        for p in select(&sel, &traces(), 1.0).unwrap() {
            match p {
                Point::Call { call, .. } => assert!((2..=4).contains(&call)),
                Point::Pair { a, b } => assert!(a.1 <= 4 && b.1 <= 4),
                Point::Time { .. } => unreachable!(),
            }
        }
    }

    #[test]
    fn sampling_is_seeded_and_distinct() {
        let sel = Selection { sample: Some(5), seed: 7, ..Default::default() };
        let a = select(&sel, &traces(), 1.0).unwrap();
        assert_eq!(a, select(&sel, &traces(), 1.0).unwrap());
        assert_eq!(a.len(), 5);
        let mut rules: Vec<String> = a.iter().map(Point::rule).collect();
        rules.dedup();
        assert_eq!(rules.len(), 5);
        let other = select(&Selection { seed: 8, ..sel.clone() }, &traces(), 1.0).unwrap();
        assert_ne!(a, other);
        let all = select(&Selection { sample: Some(1000), ..sel }, &traces(), 1.0).unwrap();
        assert_eq!(all.len(), 17);
    }

    #[test]
    fn pairs_and_times() {
        let sel = Selection { no_single: true, pairs: Some(20), time: Some(4), seed: 3, ..Default::default() };
        let p = select(&sel, &traces(), 2.0).unwrap();
        let (pairs, times): (Vec<_>, Vec<_>) = p.iter().partition(|p| matches!(p, Point::Pair { .. }));
        assert!(!pairs.is_empty());
        for p in pairs {
            let Point::Pair { a, b } = p else { unreachable!() };
            assert!(a.0 < b.0 && a.1 >= 2 && b.1 >= 2);
        }
        assert_eq!(times.len(), 4);
        for t in times {
            let Point::Time { secs, .. } = t else { unreachable!() };
            assert!(*secs > 0.0 && *secs < 2.0);
        }
        let one = Selection { ranks: Some(vec![0]), pairs: Some(1), ..Default::default() };
        assert!(select(&one, &traces(), 1.0).unwrap_err().contains("two ranks"));
        let none = Selection { no_single: true, ..Default::default() };
        assert!(select(&none, &traces(), 1.0).is_err());
    }
}
