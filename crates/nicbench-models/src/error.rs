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
