//! Lookups over the registry ([`crate::MODELS`], [`crate::PROFILE_KINDS`]): a model by name, a
//! request run by model name, a contract's schema by name, a profile loaded and checked against
//! its kind. Everything the binding and the tools need, written once for every model.

use std::path::Path;

use crate::model::{Contract, ModelEntry, ProfileKind};
use crate::profile::{profiles_dir, Profile};
use crate::{ModelError, MODELS, PROFILE_KINDS};

/// The model registered as `name`.
pub fn model(name: &str) -> Result<&'static ModelEntry, ModelError> {
    MODELS.iter().find(|m| m.name == name).ok_or_else(|| {
        let known: Vec<&str> = MODELS.iter().map(|m| m.name).collect();
        ModelError::Scenario(format!("no model '{name}' (models: {})", known.join(", ")))
    })
}

/// Runs a request (JSON) on the model registered as `name`; the result as JSON.
pub fn run_json(name: &str, request_json: &str, progress: &mut dyn FnMut(u64)) -> Result<String, ModelError> {
    model(name)?.run_json(request_json, progress)
}

/// Every contract by name, `<model>.request` and `<model>.result`, in registry order.
pub fn contracts() -> Vec<String> {
    MODELS
        .iter()
        .flat_map(|m| Contract::ALL.map(|c| format!("{}.{}", m.name, c.as_str())))
        .collect()
}

/// The JSON Schema of a contract named `<model>.request` or `<model>.result`.
pub fn schema(name: &str) -> Option<schemars::Schema> {
    let (model_name, which) = name.rsplit_once('.')?;
    let which = Contract::ALL.into_iter().find(|c| c.as_str() == which)?;
    Some(model(model_name).ok()?.schema(which))
}

/// [`schema`] as pretty JSON with a trailing newline (the form of the files in `docs/contracts/`).
pub fn schema_json(name: &str) -> Option<String> {
    schema(name).map(|s| serde_json::to_string_pretty(&s).expect("a schema serializes") + "\n")
}

/// The profile kind named `name`.
pub fn profile_kind(name: &str) -> Option<&'static ProfileKind> {
    PROFILE_KINDS.iter().find(|k| k.name == name)
}

/// Checks a profile against the parameters of its kind (an unknown kind is an error naming the kinds).
pub fn check_profile(profile: &Profile) -> Result<(), ModelError> {
    match profile_kind(&profile.kind) {
        Some(kind) => (kind.check)(profile),
        None => {
            let kinds: Vec<&str> = PROFILE_KINDS.iter().map(|k| k.name).collect();
            Err(profile.error(format_args!(
                "kind '{}' names no model (kinds: {})",
                profile.kind,
                kinds.join(", ")
            )))
        }
    }
}

/// Loads a profile (name or path, as [`crate::profile::resolve`] finds it) and checks it against
/// its kind: what tools that read any profile use (a model reads its own kind's typed parameters).
pub fn load_profile(name_or_path: &str, dir: &Path) -> Result<Profile, ModelError> {
    let profile = Profile::load(name_or_path, dir)?;
    check_profile(&profile)?;
    Ok(profile)
}

/// A profile as JSON (name or path; the profiles folder as [`profiles_dir`] finds it): kind and
/// every parameter with value, unit, provenance.
pub fn profile_json(name_or_path: &str, profiles_dir_explicit: Option<&str>) -> Result<String, ModelError> {
    let profile = load_profile(name_or_path, &profiles_dir(profiles_dir_explicit))?;
    serde_json::to_string(&profile).map_err(|e| ModelError::Profile(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::{names, names_of_kind};
    use std::path::PathBuf;

    fn dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")
    }

    #[test]
    fn test_every_builtin_profile_loads_checked_with_unit_and_provenance() {
        let all = names(&dir());
        assert!(all.len() >= 8, "{all:?}");
        for name in &all {
            let p = load_profile(name, &dir()).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(&p.name, name, "the name inside the file is its file name");
            for (pname, param) in &p.params {
                assert!(
                    !param.provenance.trim().is_empty() && !param.unit.is_empty(),
                    "{name}.{pname}"
                );
            }
        }
        for kind in PROFILE_KINDS {
            assert!(!names_of_kind(&dir(), kind.name).is_empty(), "no {} profile", kind.name);
        }
        assert!(names_of_kind(&dir(), "connectx").contains(&"connectx5".to_string()));
    }

    #[test]
    fn test_a_profile_is_checked_against_its_kind() {
        let text = "name = \"x\"\nkind = \"warp\"\n[param]\n";
        let p = Profile::from_toml(text, "x.toml").expect("the loader alone knows no kinds");
        let msg = check_profile(&p).expect_err("unknown kind").to_string();
        assert!(
            msg.contains("kind 'warp'") && msg.contains("connectx, offpath, flowhost"),
            "{msg}"
        );
        // A connectx profile with a parameter missing: the kind's check refuses it.
        let mut p = Profile::load("connectx5", &dir()).expect("loads");
        p.params.remove("nf_packet_ns");
        assert!(check_profile(&p).is_err());
        let offpath = Profile::load("bluefield2", &dir()).expect("loads");
        let msg = offpath
            .params::<crate::connectx::ConnectxParams>()
            .expect_err("another kind")
            .to_string();
        assert!(
            msg.contains("is for the offpath model, not the connectx model"),
            "{msg}"
        );
    }

    #[test]
    fn test_every_model_is_found_by_name_and_names_known_profile_kinds() {
        let mut seen = std::collections::BTreeSet::new();
        for m in MODELS {
            assert!(seen.insert(m.name), "{} registered twice", m.name);
            assert!(std::ptr::eq(model(m.name).expect("found"), m));
            assert!(!m.summary.is_empty() && m.summary.len() <= 120, "{}: one line", m.name);
            for kind in m.profile_kinds {
                assert!(profile_kind(kind).is_some(), "{} reads unknown kind {kind}", m.name);
            }
        }
        let msg = run_json("warp", "{}", &mut |_| {}).expect_err("unknown").to_string();
        assert!(
            msg.contains("no model 'warp'") && msg.contains("connectx, offpath"),
            "{msg}"
        );
        // Every kind is read by some model.
        for kind in PROFILE_KINDS {
            assert!(
                MODELS.iter().any(|m| m.profile_kinds.contains(&kind.name)),
                "nobody reads {}",
                kind.name
            );
        }
    }

    #[test]
    fn test_every_contract_has_a_schema_with_its_fields() {
        let names = contracts();
        assert_eq!(names.len(), 2 * MODELS.len());
        for name in &names {
            let v: serde_json::Value = serde_json::from_str(&schema_json(name).expect("known")).expect("json");
            assert_eq!(v["type"], "object", "{name}");
            assert!(v["properties"].as_object().is_some_and(|p| p.len() >= 3), "{name}: {v}");
        }
        let request: serde_json::Value =
            serde_json::from_str(&schema_json("connectx.request").expect("known")).expect("json");
        let required: Vec<&str> = request["required"]
            .as_array()
            .expect("required")
            .iter()
            .filter_map(|r| r.as_str())
            .collect();
        assert_eq!(required, ["nic", "duration_ns"], "only what has no default is required");
        assert_eq!(
            request["additionalProperties"], false,
            "unknown fields are refused (deny_unknown_fields)"
        );
        assert!(schema("nope.request").is_none());
        assert!(schema("connectx.scenario").is_none());
    }
}
