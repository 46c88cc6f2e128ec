//! A first-in first-out buffer whose pending items are one contiguous slice.
//!
//! Models keep packets waiting for a server (an RX ring, a NIC buffer) in FIFO order and
//! consume them in runs (a poll takes a burst). [`Fifo`] stores them in a `Vec` with a
//! head index: pushing appends, consuming moves the head, and the pending items are always
//! [`Fifo::as_slice`] — a stage can scan and take a burst without the wrap-around of a ring
//! buffer (`VecDeque::as_slices`) or a pop per item.
//!
//! Invariant: `head <= items.len()`; the consumed prefix is dropped when the buffer empties
//! or when it is at least half the storage (and ≥ [`COMPACT_MIN`]), so memory stays
//! within twice the peak backlog and each item is moved O(1) times amortized.

/// Consumed items tolerated before compaction is considered.
const COMPACT_MIN: usize = 256;

/// FIFO of `T`, oldest first.
#[derive(Clone, Debug)]
pub struct Fifo<T> {
    items: Vec<T>,
    head: usize,
}

impl<T> Default for Fifo<T> {
    fn default() -> Self {
        Fifo {
            items: Vec::new(),
            head: 0,
        }
    }
}

impl<T: Copy> Fifo<T> {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_capacity(capacity: usize) -> Self {
        Fifo {
            items: Vec::with_capacity(capacity),
            head: 0,
        }
    }

    /// Appends `item` at the back.
    #[inline]
    pub fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// Pending items.
    #[inline]
    pub fn len(&self) -> usize {
        self.items.len() - self.head
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == self.items.len()
    }

    /// The oldest pending item.
    #[inline]
    pub fn front(&self) -> Option<&T> {
        self.items.get(self.head)
    }

    /// The `i`-th pending item (0: the oldest).
    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        self.items.get(self.head + i)
    }

    /// The pending items, oldest first.
    #[inline]
    pub fn as_slice(&self) -> &[T] {
        self.items.get(self.head..).unwrap_or(&[])
    }

    /// Removes and returns the oldest item.
    #[inline]
    pub fn pop_front(&mut self) -> Option<T> {
        let item = *self.items.get(self.head)?;
        self.consume(1);
        Some(item)
    }

    /// Drops the `n` oldest items (all of them if fewer are pending).
    #[inline]
    pub fn consume(&mut self, n: usize) {
        self.head = (self.head + n).min(self.items.len());
        if self.head == self.items.len() {
            self.items.clear();
            self.head = 0;
        } else if self.head >= COMPACT_MIN && 2 * self.head >= self.items.len() {
            self.compact();
        }
    }

    #[cold]
    fn compact(&mut self) {
        self.items.drain(..self.head);
        self.head = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn test_fifo_order_and_consume() {
        let mut f = Fifo::new();
        assert!(f.is_empty() && f.front().is_none() && f.pop_front().is_none());
        for i in 0..5u32 {
            f.push(i);
        }
        assert_eq!(f.as_slice(), &[0, 1, 2, 3, 4]);
        assert_eq!(f.pop_front(), Some(0));
        f.consume(2);
        assert_eq!((f.len(), f.front(), f.get(1), f.get(2)), (2, Some(&3), Some(&4), None));
        f.consume(10); // more than pending: empties
        assert!(f.is_empty());
        f.push(9);
        assert_eq!(f.as_slice(), &[9]);
    }

    #[test]
    fn test_fifo_matches_vecdeque_with_compaction() {
        // A pseudo-random push/consume pattern with a standing backlog (forces compaction).
        let (mut f, mut d) = (Fifo::new(), VecDeque::new());
        let mut x = 12345u64;
        let mut next = 0u64;
        for _ in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            for _ in 0..(x >> 60) {
                f.push(next);
                d.push_back(next);
                next += 1;
            }
            let take = ((x >> 40) % 17) as usize;
            f.consume(take.min(f.len().saturating_sub(300)));
            while d.len() > f.len() {
                d.pop_front();
            }
            assert_eq!(f.front(), d.front());
            assert_eq!(f.len(), d.len());
        }
        assert!(
            f.items.len() <= 2 * f.len().max(COMPACT_MIN) + 64,
            "storage bounded: {}",
            f.items.len()
        );
        assert!(f.as_slice().iter().eq(d.iter()));
    }
}
