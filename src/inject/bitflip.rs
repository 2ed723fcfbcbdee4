//! Silent faults (thesis 5.4): bits flipped in messages.
//!
//! The model: each of the message's n bits flips independently with probability
//! p, so the number of flipped bits m is Binomial(n, p); which m bits flip is a
//! uniform choice of m distinct positions. [`flip_binomial`] draws m with
//! `rand_distr::Binomial`, the positions with `rand::seq::index::sample` (no
//! repeats), and flips them through a `bitvec` view of the bytes (bit i is bit
//! i % 8, least significant first, of byte i / 8).
//!
//! Two users:
//! - `Sim_FT_Manipulate_bits` / `Sim_FT_Manipulate_bytes` (the program's own
//!   buffers, [`manipulate_typed`], [`manipulate_bytes`]);
//! - the `MPIFT_BITFLIP` policy ([`outgoing`]): a point-to-point send that the
//!   policy selects draws m; if m > 0 the message goes out from a corrupted copy,
//!   never from the program's buffer. The copy is laid out like the program's
//!   buffer (same datatype, same count), filled with `MPI_Pack` from the original,
//!   flipped in packed form and `MPI_Unpack`ed into the copy, so derived datatypes
//!   work and only the bits of the message's data can flip. A non-blocking send's
//!   copy lives as long as its request (engine::registry::request keeps it).

use crate::inject::policy::BitflipPolicy;
use crate::inject::rng::{self, Rng, Stream};
use crate::transport::{self, env, p2p, MPI_Comm, MPI_Datatype};
use bitvec::prelude::*;
use rand_distr::{Binomial, Distribution};
use std::os::raw::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Flips `m` distinct, uniformly chosen bits among the first `bits` bits of `bytes`.
pub fn flip_random_bits(bytes: &mut [u8], bits: usize, m: usize, rng: &mut Rng) {
    let view = bytes.view_bits_mut::<Lsb0>();
    let bits = bits.min(view.len());
    for i in rand::seq::index::sample(rng, bits, m.min(bits)).into_iter() {
        let old = view[i];
        view.set(i, !old);
    }
}

/// Draws m ~ Binomial(bits, p) and flips m distinct bits among the first `bits`
/// bits of `bytes`. Returns m.
pub fn flip_binomial(bytes: &mut [u8], bits: usize, p: f64, rng: &mut Rng) -> u64 {
    let m = draw(bits as u64, p, rng);
    if m > 0 {
        flip_random_bits(bytes, bits, m as usize, rng);
    }
    m
}

/// m ~ Binomial(bits, p); 0 for p <= 0 or no bits.
pub fn draw(bits: u64, p: f64, rng: &mut Rng) -> u64 {
    if bits == 0 || p <= 0.0 || p.is_nan() {
        return 0;
    }
    Binomial::new(bits, p.min(1.0)).map(|b| b.sample(rng)).unwrap_or(0)
}

// --- state: the flip stream, the policy, counters ------------------------------

struct FlipState {
    rng: Option<Rng>,
    policy: Option<BitflipPolicy>,
    rank: u32,
}

static STATE: Mutex<FlipState> = Mutex::new(FlipState { rng: None, policy: None, rank: 0 });
/// A bit-flip policy is active (the only check a send pays without one).
static POLICY_ON: AtomicBool = AtomicBool::new(false);
/// Sends take the general path, not the calm lane: a bit-flip policy is
/// active, or the adversarial mode's `sends` choice, which looks at each
/// non-blocking send's size there (engine::adversary::sends).
static LANE_CLOSED: AtomicBool = AtomicBool::new(false);
static MESSAGES: AtomicU64 = AtomicU64::new(0);
static MESSAGE_BITS: AtomicU64 = AtomicU64::new(0);
static API_CALLS: AtomicU64 = AtomicU64::new(0);
static API_BITS: AtomicU64 = AtomicU64::new(0);

/// Counters for the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    pub messages: u64,
    pub message_bits: u64,
    pub api_calls: u64,
    pub api_bits: u64,
}

pub fn counts() -> Counts {
    Counts {
        messages: MESSAGES.load(Ordering::Relaxed),
        message_bits: MESSAGE_BITS.load(Ordering::Relaxed),
        api_calls: API_CALLS.load(Ordering::Relaxed),
        api_bits: API_BITS.load(Ordering::Relaxed),
    }
}

/// Called by `MPI_Init` once the job's seed is agreed.
pub fn start(seed: u64, rank: u32, policy: Option<BitflipPolicy>) {
    let mut s = STATE.lock().unwrap();
    s.rng = Some(rng::for_rank(seed, rank, Stream::Flip));
    s.rank = rank;
    let on = policy.as_ref().is_some_and(|p| p.p > 0.0);
    POLICY_ON.store(on, Ordering::Release);
    let sends = crate::engine::base::settings::adversary(crate::engine::base::settings::choice::SENDS);
    LANE_CLOSED.store(on || sends, Ordering::Release);
    s.policy = policy;
}

fn with_rng<R>(f: impl FnOnce(&mut Rng) -> R) -> R {
    let mut s = STATE.lock().unwrap();
    // Before MPI_Init: a generator from MPIFT_SEED (or a fresh seed) as rank 0.
    let rng = s.rng.get_or_insert_with(|| {
        let seed = std::env::var("MPIFT_SEED").ok().and_then(|v| v.trim().parse().ok()).unwrap_or_else(rng::fresh_seed);
        rng::for_rank(seed, 0, Stream::Flip)
    });
    f(rng)
}

// --- the program's buffers -----------------------------------------------------

/// `Sim_FT_Manipulate_bytes`: flips bits of `len` raw bytes; returns m.
pub fn manipulate_bytes(buf: &mut [u8], p: f64) -> u64 {
    let bits = buf.len() * 8;
    let m = with_rng(|r| flip_binomial(buf, bits, p, r));
    API_CALLS.fetch_add(1, Ordering::Relaxed);
    API_BITS.fetch_add(m, Ordering::Relaxed);
    m
}

/// `Sim_FT_Manipulate_bits`: flips bits of the data of `count` elements of `dt`
/// at `buf` in place (gaps of a derived datatype are left alone); returns m, or
/// an MPI error code (negated) from the real MPI.
pub fn manipulate_typed(buf: *mut c_void, count: c_int, dt: MPI_Datatype, p: f64) -> Result<u64, c_int> {
    let comm = transport::comm_world();
    let mut packed = pack(buf, count, dt, comm)?;
    let bits = packed.len() * 8;
    let m = with_rng(|r| flip_binomial(&mut packed, bits, p, r));
    if m > 0 {
        unpack(&packed, buf, count, dt, comm)?;
    }
    API_CALLS.fetch_add(1, Ordering::Relaxed);
    API_BITS.fetch_add(m, Ordering::Relaxed);
    Ok(m)
}

/// The data of `count` elements of `dt` at `buf`, packed (exactly the bytes used).
fn pack(buf: *const c_void, count: c_int, dt: MPI_Datatype, comm: MPI_Comm) -> Result<Vec<u8>, c_int> {
    let mut size: c_int = 0;
    let rc = p2p::pack_size(count, dt, comm, &mut size);
    if rc != 0 {
        return Err(rc);
    }
    let mut out = vec![0u8; size.max(1) as usize];
    let mut pos: c_int = 0;
    // SAFETY: `out` has room for `size` bytes (the host's bound for `count`
    // elements of `dt`); `buf` is the program's send or `Sim_FT_Manipulate_bits`
    // buffer, which MPI's contract says holds `count` elements of `dt` (not
    // checked here: `manipulate_typed` and `outgoing` are safe fns taking it raw).
    let rc = unsafe { p2p::pack(buf, count, dt, out.as_mut_ptr() as *mut c_void, size, &mut pos, comm) };
    if rc != 0 {
        return Err(rc);
    }
    out.truncate(pos.max(0) as usize);
    Ok(out)
}

fn unpack(packed: &[u8], buf: *mut c_void, count: c_int, dt: MPI_Datatype, comm: MPI_Comm) -> Result<(), c_int> {
    let mut pos: c_int = 0;
    // SAFETY: `packed` is a live slice of `packed.len()` bytes; `buf` has room
    // for `count` elements of `dt`, as the callers promise (the program's buffer,
    // or a copy spanning the datatype's true extent, see `corrupt`).
    let rc = unsafe {
        p2p::unpack(packed.as_ptr() as *const c_void, packed.len() as c_int, &mut pos, buf, count, dt, comm)
    };
    if rc != 0 {
        Err(rc)
    } else {
        Ok(())
    }
}

// --- outgoing messages (MPIFT_BITFLIP) -------------------------------------------

/// What a send should use: the program's buffer, or a corrupted copy.
pub struct Outgoing {
    copy: Option<Vec<u8>>,
    base: *const c_void,
    packed: bool,
}

impl Outgoing {
    fn untouched() -> Outgoing {
        Outgoing { copy: None, base: std::ptr::null(), packed: false }
    }
    /// The buffer argument for the real send.
    #[inline]
    pub fn buf(&self, user: *const c_void) -> *const c_void {
        if self.copy.is_some() {
            self.base
        } else {
            user
        }
    }
    /// The count and datatype for the real send (a sparse derived datatype's copy
    /// goes out as `MPI_PACKED` bytes, which MPI matches with any receive type of
    /// the same signature, MPI-3.1 §4.2).
    #[inline]
    pub fn count_type(&self, count: c_int, dt: MPI_Datatype) -> (c_int, MPI_Datatype) {
        match &self.copy {
            Some(c) if self.packed => (c.len() as c_int, transport::dt_packed()),
            _ => (count, dt),
        }
    }
    /// The copy, which must outlive the send (None: the program's buffer is sent).
    pub fn into_copy(self) -> Option<Vec<u8>> {
        self.copy
    }
}

/// Sends may take the calm lane: no bit-flip policy is on (so [`outgoing`]
/// leaves every message untouched) and no adversary looks at them.
#[inline]
pub fn idle() -> bool {
    !LANE_CLOSED.load(Ordering::Relaxed)
}

/// Before a send: if `MPIFT_BITFLIP` selects it and at least one bit is drawn to
/// flip, a corrupted copy to send instead. Without a policy: one atomic load.
#[inline]
pub fn outgoing(op: &'static str, buf: *const c_void, count: c_int, dt: MPI_Datatype, tag: c_int, comm: MPI_Comm) -> Outgoing {
    if !POLICY_ON.load(Ordering::Relaxed) || count <= 0 {
        return Outgoing::untouched();
    }
    corrupt(op, buf, count, dt, tag, comm).unwrap_or_else(Outgoing::untouched)
}

fn corrupt(op: &'static str, buf: *const c_void, count: c_int, dt: MPI_Datatype, tag: c_int, comm: MPI_Comm) -> Option<Outgoing> {
    let mut size: c_int = 0;
    if env::type_size(dt, &mut size) != 0 || size <= 0 {
        return None;
    }
    let bits = size as u64 * count as u64 * 8;
    let m = {
        let mut s = STATE.lock().unwrap();
        let rank = s.rank;
        let p = s.policy.as_ref().filter(|pol| pol.applies(rank, op, tag))?.p;
        let m = draw(bits, p, s.rng.as_mut()?);
        if m == 0 {
            return None;
        }
        m
    };
    let mut packed = pack(buf, count, dt, comm).ok()?;
    let nbits = packed.len() * 8;
    with_rng(|r| flip_random_bits(&mut packed, nbits, m as usize, r));
    MESSAGES.fetch_add(1, Ordering::Relaxed);
    MESSAGE_BITS.fetch_add(m.min(nbits as u64), Ordering::Relaxed);
    if crate::inject::me::verbose() >= 3 {
        crate::say!("MPIFT: rank {}: {op} (tag {tag}): flipped {m} of {nbits} bits on a copy", crate::inject::me::world_rank());
    }
    // A copy laid out like the program's buffer: from the lowest to the highest
    // byte the datatype touches over `count` elements.
    let (mut lb, mut extent, mut tlb, mut textent) = (0, 0, 0, 0);
    env::type_get_extent(dt, &mut lb, &mut extent);
    env::type_get_true_extent(dt, &mut tlb, &mut textent);
    let stride = (count as isize - 1) * extent as isize;
    let lo = tlb as isize + stride.min(0);
    let hi = tlb as isize + textent as isize + stride.max(0);
    let span = (hi - lo).max(0) as usize;
    if span > 4 * packed.len() + 4096 {
        // Sparse (e.g. absolute addresses from MPI_BOTTOM): send the packed bytes.
        return Some(Outgoing { base: packed.as_ptr() as *const c_void, copy: Some(packed), packed: true });
    }
    let mut copy = vec![0u8; span.max(1)];
    let base = (copy.as_mut_ptr() as isize).wrapping_sub(lo) as *mut c_void;
    unpack(&packed, base, count, dt, comm).ok()?;
    Some(Outgoing { copy: Some(copy), base, packed: false })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rng(seed: u64) -> Rng {
        rng::for_rank(seed, 0, Stream::Flip)
    }

    /// Upper critical value of chi-square with `dof` degrees of freedom at
    /// significance 1e-4 (Wilson-Hilferty approximation; z = 3.719).
    fn chi2_critical(dof: f64) -> f64 {
        let z = 3.719;
        let a = 2.0 / (9.0 * dof);
        dof * (1.0 - a + z * a.sqrt()).powi(3)
    }

    #[test]
    fn flips_exactly_m_distinct_bits() {
        let mut r = rng(1);
        for m in [0, 1, 7, 100, 512] {
            let mut buf = [0u8; 64];
            flip_random_bits(&mut buf, 512, m, &mut r);
            let ones: u32 = buf.iter().map(|b| b.count_ones()).sum();
            assert_eq!(ones as usize, m, "m = {m} flips must hit m distinct bits");
        }
        // Only the first `bits` bits are candidates.
        let mut buf = [0u8; 4];
        flip_random_bits(&mut buf, 10, 10, &mut r);
        assert_eq!(buf, [0xff, 0x03, 0, 0]);
    }

    #[test]
    fn binomial_mean_and_uniform_positions() {
        // 10,000 trials on 64 bytes (512 bits) with p = 0.01.
        let (trials, nbits, p) = (10_000usize, 512usize, 0.01);
        let mut r = rng(2024);
        let mut total = 0u64;
        let mut per_bit = vec![0u64; nbits];
        for _ in 0..trials {
            let mut buf = [0u8; 64];
            let m = flip_binomial(&mut buf, nbits, p, &mut r);
            let bits = buf.view_bits::<Lsb0>();
            assert_eq!(bits.count_ones() as u64, m);
            for i in bits.iter_ones() {
                per_bit[i] += 1;
            }
            total += m;
        }
        // Mean within 3 sigma of n p (sigma of the mean: sqrt(n p (1 - p) / trials)).
        let mean = total as f64 / trials as f64;
        let expect = nbits as f64 * p;
        let sigma = (nbits as f64 * p * (1.0 - p) / trials as f64).sqrt();
        assert!((mean - expect).abs() < 3.0 * sigma, "mean {mean}, expected {expect} +- {}", 3.0 * sigma);
        // No position favoured: chi-square of the per-bit counts against uniform.
        let e = total as f64 / nbits as f64;
        let chi2: f64 = per_bit.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
        let crit = chi2_critical((nbits - 1) as f64);
        assert!(chi2 < crit, "chi-square {chi2} >= {crit}: some bit positions are favoured");
        // And the test can fail: a biased flipper (never bit 0) is caught.
        let mut biased = per_bit.clone();
        biased[1] += biased[0];
        biased[0] = 0;
        let chi2b: f64 = biased.iter().map(|&o| (o as f64 - e).powi(2) / e).sum();
        assert!(chi2b >= crit, "a biased flipper must fail the chi-square test ({chi2b})");
    }

    #[test]
    fn edge_probabilities() {
        let mut r = rng(3);
        let mut buf = [0u8; 16];
        assert_eq!(flip_binomial(&mut buf, 128, 0.0, &mut r), 0);
        assert_eq!(buf, [0u8; 16]);
        assert_eq!(flip_binomial(&mut buf, 128, 1.0, &mut r), 128);
        assert_eq!(buf, [0xffu8; 16]);
        assert_eq!(flip_binomial(&mut [], 0, 0.5, &mut r), 0);
        assert_eq!(draw(100, f64::NAN, &mut r), 0);
    }

    #[test]
    fn same_seed_same_flips() {
        let run = |seed| {
            let mut r = rng(seed);
            let mut buf = [0u8; 32];
            for _ in 0..20 {
                flip_binomial(&mut buf, 256, 0.05, &mut r);
            }
            buf
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }
}
