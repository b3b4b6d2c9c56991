//! kernlens-scratch (under construction).
#![allow(missing_docs)]

pub mod baseline;
pub mod branch;
pub mod changes;
pub mod copy;
mod error;
pub mod export;
pub mod layout;
pub mod location;
pub mod mounts;
pub mod owner;
pub mod patch;
mod pattern;
pub mod policy;
pub mod prepare;
mod remove;
pub mod sweep;
mod tracked;
pub mod workspace;

pub use error::{PrepareError, ScratchError};
