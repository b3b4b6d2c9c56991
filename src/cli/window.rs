//! `--window` values: parsed by the library's [`kernlens::window`], shared with the Python package.

pub use kernlens::window::window_mode;
