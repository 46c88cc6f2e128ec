//! Device profiles: `profiles/<name>.toml`, one file per device, one loader for every model.
//!
//! ```toml
//! name = "connectx5"
//! kind = "connectx"                 # its parameter set: a profile kind of the registry
//! description = "NVIDIA Mellanox ConnectX-5 100 GbE"
//! calibration_study = "pam21"       # optional: where `nicbench calibrate` fits it
//! [fitted_on]                       # optional: a few-shot fit (`nicbench calibrate --base`)
//! base = "connectx5"                # the profile the other values are inherited from
//! study = "pam21"                   # whose experiment specs the measurements map to
//! measurements = ["../shared/data/pam21-fewshot/....csv"]
//! parameters = ["root_lookup_base_ns"]   # the values fitted on the measurements
//! [param.root_table_capacity]
//! value = 65536
//! unit = "entries"
//! provenance = "seed 000, §2.1: 'space for 65 536 rule entries'"
//! [param.steering_cache_entries]
//! value = 20000
//! unit = "STEs"
//! provenance = "fitted: pam21 calibration set"
//! fitted = true                     # optional: written by `nicbench calibrate`
//! bounds = [1000, 200000]           # optional: the physically plausible range
//! [device.SECTION]                  # optional: device data that is not a number (lists, names),
//! driver = "nfp"                    # read by the model that owns SECTION (`Profile::device`)
//! ```
//!
//! A model declares its typed parameters once with [`model_params!`] (see [`params`]); a
//! profile must carry exactly those, each finite and within the model's and its own bounds.
//!
//! Invariants: a missing or unknown parameter is an error, never a silent default; an
//! override may only name a parameter the profile declares, and the result is checked like a
//! loaded file; models read parameters only through their typed struct, so what a run used
//! is exactly the profile plus its overrides. Profiles are found in one place:
//! [`profiles_dir`].

pub mod params;

use crate::error::ModelError;
pub use params::ModelParams;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

/// Largest profile file read \[B\] (the repo's are under 40 KiB).
pub const MAX_PROFILE_BYTES: u64 = 4 << 20;

/// One parameter with its unit and where its value comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub value: f64,
    pub unit: String,
    pub provenance: String,
    /// Set by `nicbench calibrate` when it wrote the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted: Option<bool>,
    /// The physically plausible range `[low, high]`; the value must lie in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<[f64; 2]>,
}

/// What a few-shot fit (`nicbench calibrate --base B --measurements F...`) fitted the profile on:
/// the record that makes the fit repeatable and its "fitted on" provenance checkable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FitRecord {
    pub base: String,
    pub study: String,
    pub measurements: Vec<String>,
    pub parameters: Vec<String>,
}

/// A device profile as loaded from TOML (plus overrides, if any were applied).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The parameter set the profile holds: one of the registry's profile kinds (`crate::PROFILE_KINDS`).
    pub kind: String,
    /// The study whose calibration set `nicbench calibrate` fits this profile on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_study: Option<String>,
    /// Set when the profile was fitted few-shot on a user's measurements (see [`FitRecord`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted_on: Option<FitRecord>,
    #[serde(rename = "param")]
    pub params: BTreeMap<String, Param>,
    /// Device data that is not a number (`[device.SECTION]` tables: capability lists, driver
    /// names, each with its provenance), kept as TOML: the model that owns a section reads it
    /// with [`Profile::device`], so the loader knows no section and no model.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub device: BTreeMap<String, toml::Table>,
    /// File the profile was read from (not part of the TOML).
    #[serde(default, skip_deserializing)]
    pub path: Option<PathBuf>,
}

/// The installed profiles folder, set by the embedding program ([`set_installed_profiles_dir`]).
static INSTALLED_DIR: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Where this installation's profiles are, when not in the checkout this crate was built in: the
/// Python package sets it on import (a wheel carries the profiles as package data, and the build
/// machine's checkout is not on the machine that runs it). `NICBENCH_PROFILES` still wins.
pub fn set_installed_profiles_dir(dir: PathBuf) {
    // A poisoned lock holds a whole PathBuf still (the write is one assignment).
    *INSTALLED_DIR.write().unwrap_or_else(|e| e.into_inner()) = Some(dir);
}

/// The profiles folder: `explicit`, else env `NICBENCH_PROFILES`, else the installed folder
/// ([`set_installed_profiles_dir`]), else `<checkout>/profiles`.
pub fn profiles_dir(explicit: Option<&str>) -> PathBuf {
    if let Some(dir) = explicit {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("NICBENCH_PROFILES") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = INSTALLED_DIR.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return dir.clone();
    }
    // The repository's profiles/, two folders above this crate, without `..` in the path that
    // error messages show.
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.ancestors().nth(2).unwrap_or(crate_dir).join("profiles")
}

/// The file `name_or_path` names: a path (ends in `.toml` or has a folder), else
/// `<dir>/<name>.toml`, which must exist.
pub fn resolve(name_or_path: &str, dir: &Path) -> Result<PathBuf, ModelError> {
    let as_path = Path::new(name_or_path);
    if name_or_path.ends_with(".toml") || as_path.components().count() > 1 {
        return Ok(as_path.to_path_buf());
    }
    let path = dir.join(format!("{name_or_path}.toml"));
    if !path.is_file() {
        let known = names(dir).join(", ");
        return Err(ModelError::Profile(format!(
            "'{name_or_path}' not found in {} (known: {known})",
            dir.display()
        )));
    }
    Ok(path)
}

/// Names of the profiles in `dir` (`*.toml`), sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    names.sort();
    names
}

/// Names of the profiles in `dir` whose `kind` is `kind`, sorted (unreadable files are left out).
pub fn names_of_kind(dir: &Path, kind: &str) -> Vec<String> {
    #[derive(Deserialize)]
    struct KindOnly {
        kind: Option<String>,
    }
    names(dir)
        .into_iter()
        .filter(|name| {
            let text = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap_or_default();
            toml::from_str::<KindOnly>(&text).is_ok_and(|k| k.kind.as_deref() == Some(kind))
        })
        .collect()
}

/// `:LINE:COLUMN` (both from 1) of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> String {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!(":{line}:{column}")
}

impl Profile {
    /// Parses a profile and checks it against its model's parameters (`origin` names it in errors).
    pub fn from_toml(text: &str, origin: &str) -> Result<Profile, ModelError> {
        let text = text.trim_start_matches('\u{feff}');
        let mut profile: Profile = toml::from_str(text).map_err(|e| {
            // Where in the file (line:column), as the rule and spec errors say: serde's message alone
            // ("invalid type: string, expected f64") does not name the field.
            let at = e.span().map(|s| line_col(text, s.start)).unwrap_or_default();
            ModelError::Profile(format!("{origin}{at}: {}", e.message().replace('\n', " ")))
        })?;
        profile.path = Some(PathBuf::from(origin));
        profile.check()?;
        Ok(profile)
    }

    /// Loads `name_or_path` (see [`resolve`]) from `dir`: a regular file of at most
    /// [`MAX_PROFILE_BYTES`].
    pub fn load(name_or_path: &str, dir: &Path) -> Result<Profile, ModelError> {
        let path = resolve(name_or_path, dir)?;
        // A device or a pipe (`--nic /dev/zero`) would be read without end: regular files only.
        if let Ok(meta) = std::fs::metadata(&path) {
            if !meta.is_file() && !meta.is_dir() {
                return Err(ModelError::Profile(format!(
                    "{}: not a regular file (a profile is a TOML file)",
                    path.display()
                )));
            }
            if meta.len() > MAX_PROFILE_BYTES {
                return Err(ModelError::Profile(format!(
                    "{}: {} bytes, more than a profile's {MAX_PROFILE_BYTES} (a profile is a TOML file)",
                    path.display(),
                    meta.len()
                )));
            }
        }
        let text = std::fs::read_to_string(&path).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => ModelError::Profile(format!(
                "{}: not a text file (a profile is a TOML file)",
                path.display()
            )),
            _ => ModelError::Profile(format!("{}: {e}", path.display())),
        })?;
        Profile::from_toml(&text, &path.display().to_string())
    }

    /// Where the profile came from, for messages: its file, else its name.
    pub fn origin(&self) -> String {
        self.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| self.name.clone())
    }

    /// An error about this profile, naming its origin.
    pub fn error(&self, what: impl std::fmt::Display) -> ModelError {
        ModelError::Profile(format!("{}: {what}", self.origin()))
    }

    /// Whether the profile declares parameter `name`.
    pub fn declares(&self, name: &str) -> bool {
        self.params.contains_key(name)
    }

    /// A declared parameter's value; it must be finite.
    pub fn value(&self, name: &str) -> Result<f64, ModelError> {
        let v = self
            .params
            .get(name)
            .ok_or_else(|| self.error(format_args!("missing parameter '{name}'")))?
            .value;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(self.error(format_args!("parameter '{name}' = {v} is not finite")))
        }
    }

    /// Replaces one declared parameter's value (the provenance says it was overridden).
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), ModelError> {
        if !value.is_finite() {
            return Err(ModelError::Profile(format!(
                "override {name} = {value} is not a finite number"
            )));
        }
        let param = self
            .params
            .get_mut(name)
            .ok_or_else(|| ModelError::Profile(format!("override of unknown parameter '{name}'")))?;
        param.value = value;
        param.provenance = format!("override (was: {})", param.provenance);
        Ok(())
    }

    /// Replaces values (each name must be declared), then checks the profile as a loaded one.
    pub fn apply_overrides(&mut self, overrides: &BTreeMap<String, f64>) -> Result<(), ModelError> {
        for (name, &value) in overrides {
            self.set(name, value)?;
        }
        self.check()
    }

    /// Device section `[device.SECTION]` as the type its model reads (`None` when the profile has
    /// none); a section that does not fit the type is an error naming the profile and the section.
    pub fn device<T: serde::de::DeserializeOwned>(&self, section: &str) -> Result<Option<T>, ModelError> {
        let Some(table) = self.device.get(section) else {
            return Ok(None);
        };
        T::deserialize(toml::Value::Table(table.clone()))
            .map(Some)
            .map_err(|e| self.error(format_args!("[device.{section}]: {}", e.message().replace('\n', " "))))
    }

    /// The typed parameters of model `P`; the profile must be of `P`'s kind.
    pub fn params<P: ModelParams>(&self) -> Result<P, ModelError> {
        if self.kind != P::KIND {
            // The command that runs the other kind is the CLI's to say (it knows its commands).
            return Err(ModelError::Profile(format!(
                "'{}' is for the {} model, not the {} model (this one needs a profile of the {} model)",
                self.name,
                self.kind,
                P::KIND,
                P::KIND
            )));
        }
        P::from_profile(self)
    }

    /// Every parameter within its own bounds. The parameter set is its kind's to check: a model
    /// when it reads its typed parameters ([`Profile::params`]), a tool that reads any profile
    /// through `crate::registry::load_profile`.
    fn check(&self) -> Result<(), ModelError> {
        for (name, p) in &self.params {
            if let Some([low, high]) = p.bounds {
                if low.is_nan() || high.is_nan() || low > high {
                    return Err(self.error(format_args!(
                        "parameter '{name}' has bounds [{low}, {high}]: need low <= high"
                    )));
                }
                if !(low..=high).contains(&p.value) {
                    return Err(self.error(format_args!(
                        "parameter '{name}' = {} is outside its bounds [{low}, {high}]",
                        p.value
                    )));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")
    }

    #[test]
    fn test_errors_name_the_file_and_what_is_allowed() {
        let err = |r: Result<Profile, ModelError>| r.err().map(|e| e.to_string()).unwrap_or_default();
        let msg = err(Profile::load("nope", &dir()));
        assert!(msg.contains("'nope' not found") && msg.contains("connectx5"), "{msg}");
        let msg = err(Profile::from_toml("name = [", "bad.toml"));
        assert!(msg.starts_with("profile bad.toml:"), "{msg}");
        let msg = err(Profile::from_toml("name = \"x\"\n[param]\n", "x.toml"));
        assert!(msg.contains("missing field `kind`"), "{msg}");
        // A value of the wrong type: the line and column of the value, as an editor shows them.
        let text = "name = \"x\"\nkind = \"connectx\"\n[param.link_gbps]\nvalue = \"lots\"\n";
        let msg = err(Profile::from_toml(text, "x.toml"));
        assert!(
            msg.starts_with("profile x.toml:4:9: invalid type: string \"lots\""),
            "{msg}"
        );
        // A BOM (as some editors write) is not part of the TOML.
        let text = std::fs::read_to_string(dir().join("argus-host.toml")).expect("read");
        Profile::from_toml(&format!("\u{feff}{text}"), "bom.toml").expect("BOM accepted");
    }

    #[test]
    fn test_device_sections_are_read_by_their_model_and_errors_name_them() {
        #[derive(Debug, serde::Deserialize, PartialEq)]
        #[serde(deny_unknown_fields)]
        struct Caps {
            driver: String,
            keys: Vec<String>,
        }
        let text = std::fs::read_to_string(dir().join("argus-host.toml")).expect("read");
        let with = format!("{text}\n[device.caps]\ndriver = \"nfp\"\nkeys = [\"in_port\"]\n");
        let p = Profile::from_toml(&with, "x.toml").expect("a device section is no parameter");
        let caps: Option<Caps> = p.device("caps").expect("fits");
        assert_eq!(
            caps.map(|c| (c.driver, c.keys)),
            Some(("nfp".into(), vec!["in_port".into()]))
        );
        assert_eq!(p.device::<Caps>("other").expect("absent"), None);
        let json: serde_json::Value = serde_json::to_value(&p).expect("json");
        assert_eq!(json["device"]["caps"]["driver"], "nfp");
        let bad = format!("{text}\n[device.caps]\ndriver = 3\nkeys = []\n");
        let p = Profile::from_toml(&bad, "x.toml").expect("the loader does not read sections");
        let msg = p
            .device::<Caps>("caps")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            msg.starts_with("profile x.toml: [device.caps]: invalid type: integer"),
            "{msg}"
        );
        let plain = Profile::from_toml(&text, "x.toml").expect("loads");
        assert!(serde_json::to_value(&plain).expect("json").get("device").is_none());
    }

    #[test]
    fn test_overrides_and_bounds() {
        let mut p = Profile::load("connectx5", &dir()).expect("loads");
        let o: BTreeMap<String, f64> = [("nf_packet_ns".to_string(), 50.0)].into();
        p.apply_overrides(&o).expect("known parameter");
        assert_eq!(p.value("nf_packet_ns").expect("set"), 50.0);
        assert!(p.params["nf_packet_ns"].provenance.starts_with("override (was: "));
        let bad: BTreeMap<String, f64> = [("no_such_param".to_string(), 1.0)].into();
        let msg = p.apply_overrides(&bad).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("unknown parameter 'no_such_param'"), "{msg}");
        assert!(p.set("nf_packet_ns", f64::NAN).is_err());
        p.params.get_mut("nf_packet_ns").expect("declared").bounds = Some([10.0, 100.0]);
        let too_big: BTreeMap<String, f64> = [("nf_packet_ns".to_string(), 500.0)].into();
        let msg = p
            .apply_overrides(&too_big)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            msg.contains("'nf_packet_ns' = 500 is outside its bounds [10, 100]"),
            "{msg}"
        );
    }
}
