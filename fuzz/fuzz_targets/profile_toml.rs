//! A device profile (`profiles/*.toml`, `--nic FILE`) as every command reads it: the bytes as
//! text through `Profile::from_toml` (BOM, serde with line:column, the profile's own checks) and
//! the registry's check against its kind's typed parameters (`registry::check_profile`, what
//! `profile_json` — the Python loader `nicbench.profiles.load` — runs), then to JSON as Python
//! gets it.
//!
//! Checks: no panic; every error is one line; a profile that loads writes back as TOML
//! (`toml::to_string`) that loads to the same profile.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nicbench_models::registry;
use nicbench_models::Profile;

fn one_line(e: &impl std::fmt::Display) {
    let text = e.to_string();
    assert!(!text.contains('\n'), "an error is one line: {text}");
}

fuzz_target!(|data: &[u8]| {
    // The loader reads the file as UTF-8 (anything else is refused before parsing).
    let Ok(text) = std::str::from_utf8(data) else { return };
    let profile = match Profile::from_toml(text, "fuzz.toml") {
        Ok(profile) => profile,
        Err(e) => return one_line(&e),
    };
    if let Err(e) = registry::check_profile(&profile) {
        return one_line(&e);
    }
    let _ = serde_json::to_string(&profile).expect("a checked profile serializes to JSON");
    // `path` is where it was read from, not part of the file (serialized for the JSON only).
    let bare = Profile { path: None, ..profile.clone() };
    let written = toml::to_string(&bare).expect("a checked profile serializes to TOML");
    let again = Profile::from_toml(&written, "fuzz.toml").expect("a written profile loads");
    // Compared as Debug text: a `[device]` table may hold a NaN, which is not equal to itself.
    assert_eq!(format!("{again:?}"), format!("{profile:?}"), "TOML round trip via {written:?}");
});
