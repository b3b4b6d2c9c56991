//! kernlens facade (under construction).
pub use kernlens_trace as trace;
/// Kernel identity: keys, operator identities, task groups, categories.
pub use kernlens_ident as ident;
/// Gates between a trace summary and kernel work: idle/compute gates, lane guard, rewrite route.
pub use kernlens_gate as gate;
/// Scratch workspaces: a git-tracked copy of a package for kernel rewrites, and the patch back.
pub use kernlens_scratch as scratch;
/// Locating kernel sources: the file that defines each kernel, its kind and the evidence.
pub use kernlens_locate as locate;
