//! The process environment: read once by the facade's [`kernlens::env::Env`], shared with the
//! Python package.

pub use kernlens::env::Env;
