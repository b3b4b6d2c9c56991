//! Helpers shared by the gate tests.

pub mod traces;
