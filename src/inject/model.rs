//! The thesis's process-failure model (section 5.4, "Impact of bit flips on the
//! application stability itself"): bit flips do not only corrupt messages, they
//! also make a process more likely to crash, because MPI's and the system's own
//! memory is hit as well.
//!
//! p_p(p_c, p_f, k) is the probability that a process fails in one time unit, given
//! its failure probability without memory faults p_c, the probability that a single
//! bit flips p_f, and k >= 1, the memory the application uses (bigger programs are
//! hit more often). The thesis asks for:
//! 1. p_f = 1 or p_c = 1 gives p_p = 1;
//! 2. p_f = 0 gives p_p = p_c, and p_c = 0 gives p_p = 1 - (1 - p_f)^k;
//! 3. p_p >= p_c and p_p >= p_f, and p_p grows with p_c and with p_f;
//!
//! and proposes
//!
//! p_p = p_c p_f + (1 - p_c p_f) (p_c + p_f + (1 - p_f) p_c + (1 - p_c)(2 - 2(1 - p_f)^k - p_f)) / 2.
//!
//! The tests below check those properties (and that p_p grows with k).
//! MPIFT uses it for the `memory=K` kill rule: each MPI call is one time unit.

/// p_p(p_c, p_f, k) of thesis section 5.4 (see the module docs). Inputs outside
/// [0, 1] (probabilities) or below 1 (k) are clamped.
pub fn process_failure_probability(p_c: f64, p_f: f64, k: f64) -> f64 {
    let pc = p_c.clamp(0.0, 1.0);
    let pf = p_f.clamp(0.0, 1.0);
    let k = if k.is_nan() { 1.0 } else { k.max(1.0) };
    let hit = 1.0 - (1.0 - pf).powf(k); // some of the k units of memory is hit
    let inner = (pc + pf + (1.0 - pf) * pc + (1.0 - pc) * (2.0 * hit - pf)) / 2.0;
    let p = pc * pf + (1.0 - pc * pf) * inner;
    p.clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::process_failure_probability as pp;

    const EPS: f64 = 1e-12;
    fn grid() -> impl Iterator<Item = f64> {
        (0..=50).map(|i| i as f64 / 50.0)
    }

    #[test]
    fn boundary_values() {
        for k in [1.0, 3.0, 17.5, 1e6] {
            for x in grid() {
                assert!((pp(x, 1.0, k) - 1.0).abs() < EPS, "p_f = 1, p_c = {x}, k = {k}");
                assert!((pp(1.0, x, k) - 1.0).abs() < EPS, "p_c = 1, p_f = {x}, k = {k}");
                assert!((pp(x, 0.0, k) - x).abs() < EPS, "p_f = 0 gives p_c = {x}");
                let want = 1.0 - (1.0 - x).powf(k);
                assert!((pp(0.0, x, k) - want).abs() < EPS, "p_c = 0, p_f = {x}, k = {k}");
            }
        }
        assert_eq!(pp(0.0, 0.0, 3.0), 0.0);
    }

    #[test]
    fn at_least_each_cause_alone() {
        for k in [1.0, 2.0, 3.0, 10.0] {
            for pc in grid() {
                for pf in grid() {
                    let p = pp(pc, pf, k);
                    assert!((0.0..=1.0).contains(&p));
                    assert!(p >= pc - EPS && p >= pf - EPS, "p_p({pc}, {pf}, {k}) = {p}");
                }
            }
        }
    }

    #[test]
    fn monotone_in_each_argument() {
        for k in [1.0, 3.0, 10.0] {
            for a in grid() {
                let mut last_c = -1.0;
                let mut last_f = -1.0;
                for b in grid() {
                    let by_c = pp(b, a, k);
                    let by_f = pp(a, b, k);
                    assert!(by_c >= last_c - EPS, "not increasing in p_c at p_c = {b}, p_f = {a}, k = {k}");
                    assert!(by_f >= last_f - EPS, "not increasing in p_f at p_f = {b}, p_c = {a}, k = {k}");
                    last_c = by_c;
                    last_f = by_f;
                }
                // Bigger programs are hit more often.
                for b in grid() {
                    assert!(pp(a, b, k + 1.0) >= pp(a, b, k) - EPS);
                }
            }
        }
    }

    #[test]
    fn clamps_bad_inputs() {
        assert_eq!(pp(-1.0, -1.0, 0.0), 0.0);
        assert_eq!(pp(2.0, 0.0, 3.0), 1.0);
        assert!((pp(0.0, 0.5, f64::NAN) - 0.5).abs() < EPS, "k below 1 or NaN counts as 1");
    }
}
