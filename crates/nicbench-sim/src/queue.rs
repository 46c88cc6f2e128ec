//! A time-ordered event queue.
//!
//! Invariant: events pop in non-decreasing time; events at the same time pop in the order
//! they were pushed (a sequence number breaks ties), so a simulation never depends on
//! heap internals and reproduces exactly.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.at == other.at && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed: `BinaryHeap` is a max-heap and we want the earliest (then first pushed).
    fn cmp(&self, other: &Self) -> Ordering {
        other.at.cmp(&self.at).then_with(|| other.seq.cmp(&self.seq))
    }
}

/// Pending events of type `E`, earliest first.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `at`.
    pub fn push(&mut self, at: SimTime, event: E) {
        self.heap.push(Entry {
            at,
            seq: self.next_seq,
            event,
        });
        self.next_seq += 1;
    }

    /// Time of the earliest pending event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.at)
    }

    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|e| (e.at, e.event))
    }

    /// Removes and returns the earliest event if it is due at or before `now`.
    pub fn pop_due(&mut self, now: SimTime) -> Option<(SimTime, E)> {
        if self.peek_time()? <= now {
            self.pop()
        } else {
            None
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_pops_in_time_order_fifo_on_ties() {
        let mut q = EventQueue::new();
        q.push(SimTime::from_ns(30), "c");
        q.push(SimTime::from_ns(10), "a1");
        q.push(SimTime::from_ns(20), "b");
        q.push(SimTime::from_ns(10), "a2");
        q.push(SimTime::from_ns(10), "a3");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(
            order,
            vec![
                (SimTime::from_ns(10), "a1"),
                (SimTime::from_ns(10), "a2"),
                (SimTime::from_ns(10), "a3"),
                (SimTime::from_ns(20), "b"),
                (SimTime::from_ns(30), "c")
            ]
        );
        assert!(q.is_empty());
    }

    #[test]
    fn test_pop_due() {
        let mut q = EventQueue::new();
        q.push(SimTime::from_ns(5), 1);
        q.push(SimTime::from_ns(15), 2);
        assert_eq!(q.pop_due(SimTime::from_ns(4)), None);
        assert_eq!(q.pop_due(SimTime::from_ns(5)), Some((SimTime::from_ns(5), 1)));
        assert_eq!(q.pop_due(SimTime::from_ns(10)), None);
        assert_eq!(q.peek_time(), Some(SimTime::from_ns(15)));
        assert_eq!(q.len(), 1);
    }
}
