//! The `kernlens.ident/1` document: the identity of each name asked about, as the CLI's
//! `kernlens ident --json` prints it (docs/design/cli.md).

use serde::Serialize;

use crate::{Category, VendorLib, classify, demangle_full, keys, vendor_of};

/// Schema tag of [`IdentDocument`].
pub const IDENT_SCHEMA: &str = "kernlens.ident/1";

/// What ident says about one kernel name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Identification {
    /// The name as given.
    pub input: String,
    /// Its native (C++/CUDA/HIP) key.
    pub native_key: String,
    /// Its Python (Triton) key.
    pub python_key: String,
    /// The whole demangled name, when the input is a mangled symbol.
    pub demangled: Option<String>,
    /// Its coarse category.
    pub category: Category,
    /// The vendor library that ships it, when one does.
    pub vendor: Option<VendorLib>,
}

impl Identification {
    /// The identity of `input`.
    pub fn of(input: impl Into<String>) -> Identification {
        let input = input.into();
        let keys = keys(&input);
        Identification {
            demangled: demangle_full(&input),
            category: classify(&input),
            vendor: vendor_of(&input),
            native_key: keys.native,
            python_key: keys.python,
            input,
        }
    }
}

/// The `kernlens.ident/1` document: `{"schema":…,"results":[Identification…]}`.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct IdentDocument<'a> {
    /// Always [`IDENT_SCHEMA`].
    pub schema: &'static str,
    /// One entry per name, in the order given.
    pub results: &'a [Identification],
}

impl<'a> IdentDocument<'a> {
    /// The document over `results`.
    pub fn new(results: &'a [Identification]) -> Self {
        IdentDocument {
            schema: IDENT_SCHEMA,
            results,
        }
    }
}
