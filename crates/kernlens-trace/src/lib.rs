//! kernlens-trace (under construction).
