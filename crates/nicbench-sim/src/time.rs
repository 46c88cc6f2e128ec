//! Simulated time: integer nanoseconds.
//!
//! [`SimTime`] is an instant since the start of the run, [`SimDuration`] a span. Both
//! are `u64` ns (584 years of range), so arithmetic is exact and runs reproduce bit for
//! bit; conversions from floating-point seconds round to the nearest ns and saturate.
//! Subtracting a later instant saturates at zero rather than panicking, because models
//! compute slack like `deadline - now` where "already late" means zero.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// An instant of simulated time [ns since the start of the run].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimTime(pub u64);

/// A span of simulated time \[ns\].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SimDuration(pub u64);

/// Rounds a non-negative finite value to u64, saturating (NaN and negatives give 0).
fn f64_to_ns(ns: f64) -> u64 {
    if ns.is_nan() || ns <= 0.0 {
        0
    } else if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        (ns + 0.5) as u64
    }
}

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_ns(ns: u64) -> SimTime {
        SimTime(ns)
    }
    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime(f64_to_ns(s * 1e9))
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    /// Time from `earlier` to `self`, zero if `earlier` is later.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub const fn from_ns(ns: u64) -> SimDuration {
        SimDuration(ns)
    }
    pub const fn from_us(us: u64) -> SimDuration {
        SimDuration(us.saturating_mul(1_000))
    }
    pub const fn from_ms(ms: u64) -> SimDuration {
        SimDuration(ms.saturating_mul(1_000_000))
    }
    /// Rounds to the nearest ns; negative or NaN gives zero.
    pub fn from_ns_f64(ns: f64) -> SimDuration {
        SimDuration(f64_to_ns(ns))
    }
    pub fn from_secs_f64(s: f64) -> SimDuration {
        SimDuration(f64_to_ns(s * 1e9))
    }
    pub const fn as_ns(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }
    pub fn as_us_f64(self) -> f64 {
        self.0 as f64 * 1e-3
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub<SimDuration> for SimTime {
    type Output = SimTime;
    fn sub(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_sub(d.0))
    }
}

/// `later - earlier`, saturating at zero (see the module doc).
impl Sub<SimTime> for SimTime {
    type Output = SimDuration;
    fn sub(self, earlier: SimTime) -> SimDuration {
        self.since(earlier)
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}

impl AddAssign for SimDuration {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Mul<u64> for SimDuration {
    type Output = SimDuration;
    fn mul(self, n: u64) -> SimDuration {
        SimDuration(self.0.saturating_mul(n))
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9} s", self.as_secs_f64())
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ns", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_arithmetic() {
        let t = SimTime::from_ns(1_000) + SimDuration::from_us(2);
        assert_eq!(t, SimTime(3_000));
        assert_eq!(t - SimTime(500), SimDuration(2_500));
        assert_eq!(SimTime(500) - t, SimDuration::ZERO, "saturates, never panics");
        assert_eq!(SimTime::MAX + SimDuration(1), SimTime::MAX);
        assert_eq!(SimDuration::from_ms(3) * 2, SimDuration(6_000_000));
        let mut d = SimDuration(1);
        d += SimDuration(2);
        assert_eq!(d, SimDuration(3));
        assert_eq!(t - SimDuration(5_000), SimTime::ZERO);
    }

    #[test]
    fn test_float_conversions_round_and_saturate() {
        assert_eq!(SimTime::from_secs_f64(1.5e-9), SimTime(2));
        assert_eq!(SimDuration::from_ns_f64(-3.0), SimDuration::ZERO);
        assert_eq!(SimDuration::from_ns_f64(f64::NAN), SimDuration::ZERO);
        assert_eq!(SimDuration::from_secs_f64(1e30), SimDuration(u64::MAX));
        assert!((SimTime(2_100_000_000).as_secs_f64() - 2.1).abs() < 1e-12);
        assert!((SimDuration(1_500).as_us_f64() - 1.5).abs() < 1e-12);
    }
}
