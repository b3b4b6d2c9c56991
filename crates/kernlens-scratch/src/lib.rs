//! kernlens-scratch (under construction).
#![allow(missing_docs)]

pub mod baseline;
pub mod branch;
pub mod copy;
mod error;
pub mod layout;
pub mod location;
pub mod mounts;
pub mod owner;
mod pattern;
pub mod policy;
mod remove;
pub mod sweep;
mod tracked;

pub use error::{PrepareError, ScratchError};
