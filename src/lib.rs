//! kernlens facade (under construction).
pub use kernlens_trace as trace;
/// Kernel identity: keys, operator identities, task groups, categories.
pub use kernlens_ident as ident;
