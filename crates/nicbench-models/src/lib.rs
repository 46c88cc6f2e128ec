//! nicbench-models: virtual NICs (work in progress).
pub mod error;
pub mod profile;
pub mod scenario;
pub mod steering;
pub use error::ModelError;
