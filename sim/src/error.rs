//! The simulator's error type, shared by the run, the engines and the reports (a module of
//! its own, so the engines do not depend on [`crate::run`], which depends on them).

use std::path::PathBuf;

use crate::scenario::ScenarioError;

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The scenario or eps file is unusable.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// Reading or writing a file failed.
    #[error("cannot write {path}: {source}; check the output directory is writable")]
    Io {
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The exact engine failed to drive the oracle core.
    #[error("exact engine: {0}")]
    Exact(String),
    /// A plot could not be drawn.
    #[error("cannot draw {path}: {message}")]
    Plot {
        /// The plot file.
        path: PathBuf,
        /// The backend's message.
        message: String,
    },
}
