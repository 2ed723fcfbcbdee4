//! The one way MPIFT waits for something another process does: yield the CPU
//! for a short window (a peer inside MPI answers within microseconds), then
//! sleep, each nap twice the last up to a longest one (a peer computing outside
//! MPI). A loop that sees progress resets it, so the next pause yields again.

use std::time::{Duration, Instant};

/// A waiting loop's back-off: its constants and where it stands.
pub struct Backoff {
    /// How long after its start (or last reset) a pause only yields.
    spin: Duration,
    /// The first nap after the spin window.
    first: Duration,
    /// The longest nap, unless a pause names its own ([`Backoff::pause_capped`]).
    longest: Duration,
    since: Instant,
    nap: Duration,
}

impl Backoff {
    /// A back-off starting now: yields for `spin`, then naps from `first`
    /// doubling up to `longest`.
    pub fn new(spin: Duration, first: Duration, longest: Duration) -> Backoff {
        Backoff { spin, first, longest, since: Instant::now(), nap: first }
    }

    /// The back-off of a blocking wait for a peer: yields for 500 µs, then naps
    /// of 20 µs doubling up to 2 ms.
    pub fn wait() -> Backoff {
        Backoff::new(Duration::from_micros(500), Duration::from_micros(20), Duration::from_millis(2))
    }

    /// One pause: a yield inside the spin window, else a nap, the next one
    /// twice as long up to the longest.
    pub fn pause(&mut self) {
        let longest = self.longest;
        self.pause_capped(|| longest);
    }

    /// [`Backoff::pause`], with the longest nap asked for (by `longest`) after
    /// this nap, for a loop whose patience depends on what it waits for.
    pub fn pause_capped(&mut self, longest: impl FnOnce() -> Duration) {
        if self.since.elapsed() < self.spin {
            std::thread::yield_now();
        } else {
            std::thread::sleep(self.nap);
            self.nap = (self.nap * 2).min(longest());
        }
    }

    /// Progress was made: the spin window starts again and the next nap is
    /// the first one.
    pub fn reset(&mut self) {
        self.since = Instant::now();
        self.nap = self.first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn naps_double_up_to_the_longest_and_reset_starts_over() {
        let mut b = Backoff::new(Duration::ZERO, Duration::from_micros(1), Duration::from_micros(5));
        let naps: Vec<Duration> = (0..4)
            .map(|_| {
                b.pause();
                b.nap
            })
            .collect();
        let us = Duration::from_micros;
        assert_eq!(naps, [us(2), us(4), us(5), us(5)]);
        b.pause_capped(|| us(3));
        assert_eq!(b.nap, us(3));
        b.reset();
        assert_eq!(b.nap, us(1));
    }
}
