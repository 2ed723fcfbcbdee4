//! State that only MPI calls touch, guarded as cheaply as the MPI thread level
//! allows.
//!
//! Below `MPI_THREAD_MULTIPLE` the program guarantees that no two threads are
//! inside MPI at the same time (MPI-3.1 §12.4.3: `SINGLE`, `FUNNELED` and
//! `SERIALIZED` all promise it), and MPIFT has no thread of its own, so the
//! layer's tables need no lock: a [`Serial`] is then a plain cell. A `std` mutex
//! costs two atomic read-modify-write instructions per use, and the failure-free
//! path of an MPI call used the registries three to five times (about 60 ns of
//! 100 per collective, bench/README.md). When the real MPI grants
//! `MPI_THREAD_MULTIPLE`, [`set_multithreaded`] switches every `Serial` to its
//! mutex before the program can call MPI from a second thread.
//!
//! A re-entered `Serial` (a callback into MPI while the layer holds the state,
//! which would be a deadlock with a mutex) panics instead, which the boundary
//! turns into `MPI_ERR_INTERN`.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

static MULTI: AtomicBool = AtomicBool::new(false);

/// The real MPI runs at `MPI_THREAD_MULTIPLE`: lock for real from now on.
/// Called right after `MPI_Init_thread`, before the program can use threads.
pub fn set_multithreaded(on: bool) {
    MULTI.store(on, Ordering::SeqCst);
}

/// Whether [`set_multithreaded`] turned real locking on.
pub fn multithreaded() -> bool {
    MULTI.load(Ordering::Relaxed)
}

pub struct Serial<T> {
    value: UnsafeCell<T>,
    held: AtomicBool,
    mutex: Mutex<()>,
}

// SAFETY: access goes through `lock`, which either holds the mutex or relies on
// MPI's guarantee that one thread at a time is inside MPI (module comment); `T:
// Send` because the value may be reached from whichever thread holds the lock.
unsafe impl<T: Send> Sync for Serial<T> {}

impl<T> Serial<T> {
    pub const fn new(value: T) -> Serial<T> {
        Serial {
            value: UnsafeCell::new(value),
            held: AtomicBool::new(false),
            mutex: Mutex::new(()),
        }
    }

    /// Exclusive access until the guard is dropped.
    #[inline]
    pub fn lock(&self) -> SerialGuard<'_, T> {
        self.lock_as(MULTI.load(Ordering::Relaxed))
    }

    #[inline]
    fn lock_as(&self, multi: bool) -> SerialGuard<'_, T> {
        let mutex = if multi {
            Some(self.mutex.lock().unwrap_or_else(|e| e.into_inner()))
        } else {
            None
        };
        // A plain load and store, not a read-modify-write: only re-entrance
        // from this thread can find it set.
        if self.held.load(Ordering::Relaxed) {
            drop(mutex);
            panic!("MPIFT state re-entered (an MPI call from inside a callback that holds it)");
        }
        self.held.store(true, Ordering::Relaxed);
        SerialGuard {
            cell: self,
            _mutex: mutex,
        }
    }
}

pub struct SerialGuard<'a, T> {
    cell: &'a Serial<T>,
    _mutex: Option<MutexGuard<'a, ()>>,
}

impl<T> Drop for SerialGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.cell.held.store(false, Ordering::Relaxed);
    }
}

impl<T> Deref for SerialGuard<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard set `held` in `lock_as` (under the mutex when
        // multithreaded, else under MPI's one-thread-at-a-time promise), so no
        // other guard of this cell exists while it lives: nothing else aliases it.
        unsafe { &*self.cell.value.get() }
    }
}

impl<T> DerefMut for SerialGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, this guard is the only one of its cell while it
        // lives, and `&mut self` makes this the guard's only borrow of the value.
        unsafe { &mut *self.cell.value.get() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_give_exclusive_access_in_turn() {
        static S: Serial<Vec<u32>> = Serial::new(Vec::new());
        S.lock().push(1);
        S.lock().push(2);
        assert_eq!(*S.lock(), vec![1, 2]);
    }

    #[test]
    fn reentrance_panics_instead_of_aliasing() {
        static S: Serial<u32> = Serial::new(0);
        let g = S.lock();
        let r = std::panic::catch_unwind(|| *S.lock() + 1);
        assert!(r.is_err());
        drop(g);
        *S.lock() += 1;
        assert_eq!(*S.lock(), 1);
    }

    #[test]
    fn multithreaded_mode_serialises_threads() {
        // (`lock_as(true)` is what `lock` does after `set_multithreaded(true)`;
        // the flag itself is global, so this test does not flip it.)
        static S: Serial<u64> = Serial::new(0);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..10_000 {
                        let mut g = S.lock_as(true);
                        let v = *g;
                        std::hint::black_box(&v);
                        *g = v + 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*S.lock_as(true), 40_000);
    }
}
