//! The models' error type: one-line messages that name what was wrong.

/// Why a profile or scenario could not be loaded or simulated.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("profile {0}")]
    Profile(String),
    #[error("scenario: {0}")]
    Scenario(String),
    #[error("rules: {0}")]
    Rules(String),
    #[error("traffic: {0}")]
    Traffic(#[from] nicbench_traffic::TrafficError),
    #[error("trace: {0}")]
    Trace(String),
}

impl ModelError {
    /// The error with control characters written as escapes (`\n`): serde's messages quote the
    /// offending value as it is, so an unknown variant `"upli\nk"` in a request made a two-line
    /// error (found by the `pvp_megaflows` fuzz target). Every model's run ends here (`run_json`).
    pub fn one_line(self) -> ModelError {
        let escape = |m: String| -> String {
            if !m.chars().any(char::is_control) {
                return m;
            }
            m.chars()
                .flat_map(|c| {
                    let escaped: Vec<char> = if c.is_control() {
                        c.escape_default().collect()
                    } else {
                        vec![c]
                    };
                    escaped
                })
                .collect()
        };
        match self {
            ModelError::Profile(m) => ModelError::Profile(escape(m)),
            ModelError::Scenario(m) => ModelError::Scenario(escape(m)),
            ModelError::Rules(m) => ModelError::Rules(escape(m)),
            ModelError::Trace(m) => ModelError::Trace(escape(m)),
            other @ ModelError::Traffic(_) => other,
        }
    }

    /// An error reading capture `path`, naming the file first (as `nicbench pcap info` does) unless
    /// the reader's message already names it: a command that reads a rule file and a capture must
    /// say which one is wrong.
    pub fn trace(path: &str, what: impl std::fmt::Display) -> ModelError {
        ModelError::Trace(trace_message(path, &what.to_string()))
    }
}

/// `PATH: WHAT` unless WHAT names PATH already; `packet N:` before a record error that does not say
/// its packet is added by the callers that count packets.
pub(crate) fn trace_message(path: &str, what: &str) -> String {
    if what.contains(path) {
        what.to_string()
    } else {
        format!("{path}: {what}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_one_line_escapes_control_characters() {
        let msg = ModelError::Scenario("unknown variant `upli\nk`\r\t".into())
            .one_line()
            .to_string();
        assert_eq!(msg, "scenario: unknown variant `upli\\nk`\\r\\t");
        let msg = ModelError::Rules("plain".into()).one_line().to_string();
        assert_eq!(msg, "rules: plain");
    }

    #[test]
    fn test_a_trace_error_names_its_file_once() {
        let msg = ModelError::trace("t.pcap", "not a pcap/pcapng file: magic 0x7f454c46").to_string();
        assert_eq!(msg, "trace: t.pcap: not a pcap/pcapng file: magic 0x7f454c46");
        let msg = ModelError::trace("t.pcap", "t.pcap: cannot open: No such file").to_string();
        assert_eq!(msg, "trace: t.pcap: cannot open: No such file");
    }
}
