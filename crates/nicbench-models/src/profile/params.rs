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
//!
//! Parameters several models read under the same names (a PCIe link, a steering pipeline) are
//! declared once as a group with [`param_group!`] (a struct of its own, with its `validate()`
//! and the formulas over it), and composed into each model's set:
//!
//! ```ignore
//! param_group! {
//!     /// The PCIe link to the host and what a packet costs on it.
//!     PcieParams {
//!         /// PCIe lanes to the host.
//!         pcie_lanes,
//!         ...
//!     }
//! }
//! model_params! {
//!     AgilioParams, kind "agilio" => {
//!         link_gbps,
//!         ...
//!     } groups {
//!         /// The PCIe link to the host.
//!         pcie: PcieParams,
//!     }
//! }
//! ```
//!
//! gives `AgilioParams { link_gbps, ..., pcie: PcieParams }`: the profile still declares the
//! group's names flat (`pcie_lanes`, not `pcie.pcie_lanes`), [`ModelParams::NAMES`] lists the
//! model's names then each group's, and a name may be declared once only (a model's own
//! name repeated in one of its groups is a compile-time error).

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

/// A group of parameters that several models' sets contain (declared with [`param_group!`]).
pub trait ParamGroup: Sized {
    /// Every parameter name of the group, in declaration order.
    const NAMES: &'static [&'static str];
    /// Reads the group's values and checks their declared ranges (the model checked the names).
    fn read(p: &Profile) -> Result<Self, ModelError>;
    /// The group's own checks: its `validate()`.
    fn check(&self) -> Result<(), ModelError>;
    /// Every `(name, value)` of the group, in declaration order.
    fn values(&self) -> Vec<(&'static str, f64)>;
}

/// The names of a model and of its groups as one list (for [`ModelParams::NAMES`]); `N` is
/// their total. Evaluated at compile time, so a name declared twice stops the build.
pub const fn concat_names<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut part, mut k) = (0, 0);
    while part < parts.len() {
        let mut i = 0;
        while i < parts[part].len() {
            let mut seen = 0;
            while seen < k {
                assert!(
                    !same_name(out[seen], parts[part][i]),
                    "a parameter name is declared twice (by a model and one of its groups)"
                );
                seen += 1;
            }
            out[k] = parts[part][i];
            k += 1;
            i += 1;
        }
        part += 1;
    }
    assert!(k == N, "the name count does not match the names");
    out
}

const fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
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
    ($(#[$sdoc:meta])* $params:ident, kind $kind:expr => {
        $($(#[$doc:meta])* $name:ident $(in [$low:expr, $high:expr])?),* $(,)?
    } $(groups { $($(#[$gdoc:meta])* $group:ident: $gty:ty),* $(,)? })?) => {
        $(#[$sdoc])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
        pub struct $params {
            $($(#[$doc])* pub $name: f64,)*
            $($($(#[$gdoc])* #[serde(flatten)] pub $group: $gty,)*)?
        }

        impl $crate::profile::ModelParams for $params {
            const KIND: &'static str = $kind;
            const NAMES: &'static [&'static str] = &$crate::profile::params::concat_names::<{
                <[&str]>::len(&[$(stringify!($name)),*])
                    $($(+ <$gty as $crate::profile::params::ParamGroup>::NAMES.len())*)?
            }>(&[&[$(stringify!($name)),*] $($(, <$gty as $crate::profile::params::ParamGroup>::NAMES)*)?]);

            fn from_profile(p: &$crate::profile::Profile) -> Result<$params, $crate::ModelError> {
                $crate::profile::params::check_names(p, Self::NAMES)?;
                let params = $params {
                    $($name: p.value(stringify!($name))?,)*
                    $($($group: <$gty as $crate::profile::params::ParamGroup>::read(p)?,)*)?
                };
                $($($crate::profile::params::check_range(p, stringify!($name), params.$name, $low, $high)?;)?)*
                let in_profile = |e| match e {
                    $crate::ModelError::Profile(m) => p.error(m),
                    other => other,
                };
                params.validate().map_err(in_profile)?;
                $($($crate::profile::params::ParamGroup::check(&params.$group).map_err(in_profile)?;)*)?
                $crate::profile::params::require_non_negative(p, &[$((stringify!($name), params.$name)),*])?;
                $($($crate::profile::params::require_non_negative(
                    p,
                    &$crate::profile::params::ParamGroup::values(&params.$group),
                )?;)*)?
                Ok(params)
            }
        }
    };
}
pub(crate) use model_params;

/// Declares a parameter group's struct and its [`ParamGroup`] impl (see the module doc); the
/// struct's own `validate()` is written beside it.
macro_rules! param_group {
    ($(#[$sdoc:meta])* $group:ident {
        $($(#[$doc:meta])* $name:ident $(in [$low:expr, $high:expr])?),* $(,)?
    }) => {
        $(#[$sdoc])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
        pub struct $group { $($(#[$doc])* pub $name: f64,)* }

        impl $crate::profile::params::ParamGroup for $group {
            const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            fn read(p: &$crate::profile::Profile) -> Result<$group, $crate::ModelError> {
                let group = $group { $($name: p.value(stringify!($name))?,)* };
                $($($crate::profile::params::check_range(p, stringify!($name), group.$name, $low, $high)?;)?)*
                Ok(group)
            }

            fn check(&self) -> Result<(), $crate::ModelError> {
                self.validate()
            }

            fn values(&self) -> Vec<(&'static str, f64)> {
                vec![$((stringify!($name), self.$name)),*]
            }
        }
    };
}
pub(crate) use param_group;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Param;

    param_group! {
        /// A group of two: a count and a bounded share.
        TestGroup {
            /// A count.
            lanes,
            /// A share.
            share in [0.0, 1.0],
        }
    }

    impl TestGroup {
        fn validate(&self) -> Result<(), ModelError> {
            require_whole(&[("lanes", self.lanes)])
        }
    }

    model_params! {
        /// A model with one parameter of its own and the group.
        TestModel, kind "test" => {
            /// Its own.
            rate_gbps,
        } groups {
            /// The group.
            link: TestGroup,
        }
    }

    impl TestModel {
        fn validate(&self) -> Result<(), ModelError> {
            require_positive(&[("rate_gbps", self.rate_gbps)])
        }
    }

    fn profile(values: &[(&str, f64)]) -> Profile {
        let param = |v: f64| Param {
            value: v,
            unit: "x".into(),
            provenance: "test".into(),
            fitted: None,
            bounds: None,
        };
        Profile {
            name: "t".into(),
            description: String::new(),
            kind: "test".into(),
            calibration_study: None,
            fitted_on: None,
            params: values.iter().map(|(n, v)| (n.to_string(), param(*v))).collect(),
            device: Default::default(),
            path: None,
        }
    }

    fn error(values: &[(&str, f64)]) -> String {
        TestModel::from_profile(&profile(values))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn test_a_group_is_read_and_checked_as_part_of_the_model() {
        assert_eq!(TestModel::NAMES, ["rate_gbps", "lanes", "share"]);
        let all = [("rate_gbps", 10.0), ("lanes", 4.0), ("share", 0.5)];
        let m = TestModel::from_profile(&profile(&all)).expect("valid");
        assert_eq!((m.rate_gbps, m.link.lanes, m.link.share), (10.0, 4.0, 0.5));
        // Serialized flat, under the names a profile declares.
        let json = serde_json::to_value(&m).expect("serializes");
        assert_eq!(json, serde_json::json!({"rate_gbps": 10.0, "lanes": 4.0, "share": 0.5}));
        // The group's names are the model's: missing, range, validate, negative.
        assert!(error(&all[..2]).contains("missing parameter 'share'"));
        let out = [("rate_gbps", 10.0), ("lanes", 4.0), ("share", 2.0)];
        assert!(error(&out).contains("'share' = 2 is out of range [0, 1]"));
        let half = [("rate_gbps", 10.0), ("lanes", 4.5), ("share", 0.5)];
        assert!(error(&half).starts_with("profile t: parameter 'lanes' must be a whole number"));
        let negative = [("rate_gbps", 10.0), ("lanes", -4.0), ("share", 0.5)];
        assert!(error(&negative).contains("parameter 'lanes' = -4 is negative"));
        let own = [("rate_gbps", 0.0), ("lanes", 4.0), ("share", 0.5)];
        assert!(error(&own).contains("'rate_gbps' must be > 0"));
        let extra = [("rate_gbps", 10.0), ("lanes", 4.0), ("share", 0.5), ("lane", 1.0)];
        assert!(error(&extra).contains("unknown parameter 'lane'"));
    }

    #[test]
    fn test_concat_names_keeps_the_order() {
        const NAMES: [&str; 3] = concat_names::<3>(&[&["a"], &["b", "c"]]);
        assert_eq!(NAMES, ["a", "b", "c"]);
        assert!(same_name("pcie_lanes", "pcie_lanes") && !same_name("pcie_lanes", "pcie_lane"));
    }

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
