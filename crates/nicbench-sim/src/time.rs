//! Simulated time: integer picoseconds.
//!
//! [`SimTime`] is an instant since the start of the run, [`SimDuration`] a span. Both are `u64`
//! picoseconds: a 64 B frame at 100 Gb/s is 6,720 ps on the wire and 1500 B at 400 Gb/s is
//! 30,400 ps, so per-packet service times are exact or within 0.5 ps, sums of them are exact
//! (integer arithmetic is associative), and a run reproduces bit for bit. The range is 213 days.
//! Conversions from floating-point nanoseconds or seconds round to the nearest ps and saturate.
//! Subtracting a later instant saturates at zero rather than panicking, because models compute
//! slack like `deadline - now` where "already late" means zero. Adding and multiplying do not
//! saturate (a simulation of 213 days is a bug; debug builds panic on the overflow): they are
//! the per-packet arithmetic of the models and stay one instruction each.
//!
//! The field is private: code says which unit it means (`from_ns`, `as_ps`, ...).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

const PS_PER_NS: u64 = 1_000;

/// An instant of simulated time [ps since the start of the run].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimTime(u64);

/// A span of simulated time \[ps\].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimDuration(u64);

/// Rounds a value in ps to u64, saturating (NaN and negatives give 0).
#[inline]
fn f64_to_ps(ps: f64) -> u64 {
    if ps.is_nan() || ps <= 0.0 {
        0
    } else if ps >= u64::MAX as f64 {
        u64::MAX
    } else {
        (ps + 0.5) as u64
    }
}

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ps(ps: u64) -> SimTime {
        SimTime(ps)
    }
    pub const fn from_ns(ns: u64) -> SimTime {
        SimTime(ns * PS_PER_NS)
    }
    /// Rounds to the nearest ps; negative or NaN gives zero.
    #[inline]
    pub fn from_ns_f64(ns: f64) -> SimTime {
        SimTime(f64_to_ps(ns * 1e3))
    }
    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime(f64_to_ps(s * 1e12))
    }
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds (rounded down).
    pub const fn as_ns(self) -> u64 {
        self.0 / PS_PER_NS
    }
    #[inline]
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 * 1e-3
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    /// Time from `earlier` to `self`, zero if `earlier` is later.
    #[inline]
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    pub const fn from_ps(ps: u64) -> SimDuration {
        SimDuration(ps)
    }
    pub const fn from_ns(ns: u64) -> SimDuration {
        SimDuration(ns * PS_PER_NS)
    }
    pub const fn from_us(us: u64) -> SimDuration {
        SimDuration(us * 1_000 * PS_PER_NS)
    }
    pub const fn from_ms(ms: u64) -> SimDuration {
        SimDuration(ms * 1_000_000 * PS_PER_NS)
    }
    /// Rounds to the nearest ps; negative or NaN gives zero.
    #[inline]
    pub fn from_ns_f64(ns: f64) -> SimDuration {
        SimDuration(f64_to_ps(ns * 1e3))
    }
    /// Rounds to the nearest ps; negative or NaN gives zero.
    #[inline]
    pub fn from_ps_f64(ps: f64) -> SimDuration {
        SimDuration(f64_to_ps(ps))
    }
    pub fn from_secs_f64(s: f64) -> SimDuration {
        SimDuration(f64_to_ps(s * 1e12))
    }
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Whole nanoseconds (rounded down).
    pub const fn as_ns(self) -> u64 {
        self.0 / PS_PER_NS
    }
    #[inline]
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 * 1e-3
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 * 1e-6
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    #[inline]
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0 + d.0)
    }
}

impl AddAssign<SimDuration> for SimTime {
    #[inline]
    fn add_assign(&mut self, d: SimDuration) {
        self.0 += d.0;
    }
}

impl Sub<SimDuration> for SimTime {
    type Output = SimTime;
    #[inline]
    fn sub(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_sub(d.0))
    }
}

/// `later - earlier`, saturating at zero (see the module doc).
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    #[inline]
    fn sub(self, earlier: SimTime) -> SimDuration {
        self.since(earlier)
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    #[inline]
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0 + d.0)
    }
}

impl AddAssign for SimDuration {
    #[inline]
    fn add_assign(&mut self, d: SimDuration) {
        self.0 += d.0;
    }
}

impl Sub for SimDuration {
    type Output = SimDuration;
    /// Saturates at zero.
    #[inline]
    fn sub(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(d.0))
    }
}

impl Mul<u64> for SimDuration {
    type Output = SimDuration;
    #[inline]
    fn mul(self, n: u64) -> SimDuration {
        SimDuration(self.0 * n)
    }
}

impl std::iter::Sum for SimDuration {
    fn sum<I: Iterator<Item = SimDuration>>(iter: I) -> SimDuration {
        iter.fold(SimDuration::ZERO, |a, b| a + b)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.12} s", self.as_secs_f64())
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ps", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_arithmetic() {
        let t = SimTime::from_ns(1_000) + SimDuration::from_us(2);
        assert_eq!(t, SimTime::from_ns(3_000));
        assert_eq!(t - SimTime::from_ns(500), SimDuration::from_ns(2_500));
        assert_eq!(SimTime::from_ns(500) - t, SimDuration::ZERO, "saturates, never panics");
        assert_eq!(SimDuration::from_ms(3) * 2, SimDuration::from_ns(6_000_000));
        let mut d = SimDuration::from_ps(1);
        d += SimDuration::from_ps(2);
        assert_eq!(d, SimDuration::from_ps(3));
        assert_eq!(t - SimDuration::from_ns(5_000), SimTime::ZERO);
        assert_eq!(SimDuration::from_ps(3) - SimDuration::from_ps(5), SimDuration::ZERO);
        assert_eq!(
            [SimDuration::from_ps(4), SimDuration::from_ps(5)]
                .into_iter()
                .sum::<SimDuration>(),
            SimDuration::from_ps(9)
        );
    }

    #[test]
    fn test_units_and_rounding() {
        // 64 B + 20 B of preamble/gap at 100 Gb/s: 6.72 ns, exact in ps.
        assert_eq!(SimDuration::from_ns_f64(84.0 * 8.0 / 100.0).as_ps(), 6_720);
        assert_eq!(SimTime::from_ps(1_999).as_ns(), 1, "whole ns round down");
        assert_eq!(SimTime::from_ns_f64(1.0004), SimTime::from_ps(1_000));
        assert_eq!(
            SimTime::from_ns_f64(1.0005),
            SimTime::from_ps(1_001),
            "to the nearest ps"
        );
        assert_eq!(SimTime::from_secs_f64(1.5e-12), SimTime::from_ps(2));
        assert_eq!(SimDuration::from_ns_f64(-3.0), SimDuration::ZERO);
        assert_eq!(SimDuration::from_ns_f64(f64::NAN), SimDuration::ZERO);
        assert_eq!(SimDuration::from_secs_f64(1e30), SimDuration::MAX);
        assert!((SimTime::from_ns(2_100_000_000).as_secs_f64() - 2.1).abs() < 1e-12);
        assert!((SimDuration::from_ns(1_500).as_us_f64() - 1.5).abs() < 1e-12);
        assert_eq!(SimTime::from_ps(1_500).as_ns_f64(), 1.5);
        // 213 days fit; a run of a day is far inside the range.
        assert!(SimTime::MAX.as_secs_f64() > 213.0 * 86_400.0);
    }
}
