//! Typed model parameters read from a [`Profile`]: one declaration per model.
//!
//! ```ignore
//! model_params! {
//!     /// Every parameter the off-path model reads.
//!     OffpathParams, kind "offpath" {
//!         /// Data rate of one port, per direction [Gb/s].
//!         network_port_gbps,
//!         /// Processes per core (SMT): only 1..=8 make sense.
//!         smt_threads_per_core in [1.0, 8.0],
//!     }
//! }
//! ```
//!
//! declares `struct OffpathParams { pub network_port_gbps: f64, ... }` and its
//! [`ModelParams`] impl: the profile must declare exactly these names, each finite,
//! within its range and not negative, and the struct's own `validate()` (written beside it) has the last word.

use super::Profile;
use crate::error::ModelError;

/// A model's parameter set, read from a profile of its kind.
pub trait ModelParams: Sized {
    /// The profile `kind` of the model.
    const KIND: &'static str;
    /// Every parameter name, in declaration order.
    const NAMES: &'static [&'static str];
    /// Reads and checks the parameters (exact names, finite, in range, `validate`).
    fn from_profile(p: &Profile) -> Result<Self, ModelError>;
}

/// Checks that `p` declares exactly `names` (used by [`model_params!`]).
pub fn check_names(p: &Profile, names: &[&str]) -> Result<(), ModelError> {
    if let Some(unknown) = p.params.keys().find(|n| !names.contains(&n.as_str())) {
        return Err(p.error(format_args!("unknown parameter '{unknown}' for the {} model", p.kind)));
    }
    if let Some(missing) = names.iter().find(|n| !p.params.contains_key(**n)) {
        return Err(p.error(format_args!("missing parameter '{missing}'")));
    }
    Ok(())
}

/// Checks a value against a model-declared range (used by [`model_params!`]).
pub fn check_range(p: &Profile, name: &str, value: f64, low: f64, high: f64) -> Result<(), ModelError> {
    if value < low || value > high {
        return Err(p.error(format_args!(
            "parameter '{name}' = {value} is out of range [{low}, {high}]"
        )));
    }
    Ok(())
}

/// Checks that no parameter is negative (used by [`model_params!`], after the declared ranges
/// and the model's `validate`, whose messages say more). Every model parameter is a time, size, count, rate or share: a
/// negative one (a cost that gives time back) would run and report a NIC faster than none.
pub fn require_non_negative(p: &Profile, values: &[(&str, f64)]) -> Result<(), ModelError> {
    match values.iter().find(|(_, v)| *v < 0.0) {
        Some((name, v)) => Err(p.error(format_args!(
            "parameter '{name}' = {v} is negative (parameters are times, sizes, counts, rates and shares: at least 0)"
        ))),
        None => Ok(()),
    }
}

/// Checks that each `(name, value)` is > 0 (for a model's `validate`).
pub fn require_positive(values: &[(&str, f64)]) -> Result<(), ModelError> {
    match values.iter().find(|(_, v)| v.is_nan() || *v <= 0.0) {
        Some((name, v)) => Err(ModelError::Profile(format!("parameter '{name}' must be > 0, got {v}"))),
        None => Ok(()),
    }
}

/// Parameters that count things a device has whole (ports, lanes, cores, channels): a fraction
/// would be a typing error, which the models would otherwise carry into every division.
pub fn require_whole(values: &[(&str, f64)]) -> Result<(), ModelError> {
    match values.iter().find(|(_, v)| v.fract() != 0.0) {
        Some((name, v)) => Err(ModelError::Profile(format!(
            "parameter '{name}' must be a whole number, got {v}"
        ))),
        None => Ok(()),
    }
}

/// Declares a model's typed parameter struct and its [`ModelParams`] impl (see the module doc).
macro_rules! model_params {
    ($(#[$sdoc:meta])* $params:ident, kind $kind:expr => { $($(#[$doc:meta])* $name:ident $(in [$low:expr, $high:expr])?),* $(,)? }) => {
        $(#[$sdoc])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
        pub struct $params { $($(#[$doc])* pub $name: f64,)* }

        impl $crate::profile::ModelParams for $params {
            const KIND: &'static str = $kind;
            const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            fn from_profile(p: &$crate::profile::Profile) -> Result<$params, $crate::ModelError> {
                $crate::profile::params::check_names(p, Self::NAMES)?;
                let params = $params { $($name: p.value(stringify!($name))?,)* };
                $($($crate::profile::params::check_range(p, stringify!($name), params.$name, $low, $high)?;)?)*
                params.validate().map_err(|e| match e {
                    $crate::ModelError::Profile(m) => p.error(m),
                    other => other,
                })?;
                $crate::profile::params::require_non_negative(p, &[$((stringify!($name), params.$name)),*])?;
                Ok(params)
            }
        }
    };
}
pub(crate) use model_params;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_require_whole_names_the_first_fraction() {
        assert!(require_whole(&[("soc_cores", 8.0), ("pcie_lanes", 16.0)]).is_ok());
        let err = require_whole(&[("soc_cores", 8.0), ("pcie_lanes", 15.5), ("ports", 0.5)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "profile parameter 'pcie_lanes' must be a whole number, got 15.5"
        );
    }
}
