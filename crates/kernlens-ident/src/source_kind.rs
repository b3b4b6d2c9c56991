//! What sort of source a kernel comes from. One enum for every stage: locate
//! decides it, gate's rewrite route and triage read it.

use serde::Serialize;

/// The language or kind of a kernel's source. Serialises as its
/// [`as_str`](SourceKind::as_str) label (`flydsl`, `vendor_binary`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SourceKind {
    /// A Triton kernel (`@triton.jit`).
    Triton,
    /// A FlyDSL kernel.
    #[serde(rename = "flydsl")]
    FlyDsl,
    /// Plain Python that is not a kernel DSL.
    Python,
    /// CUDA C++.
    Cuda,
    /// HIP C++.
    Hip,
    /// Host C or C++.
    Cpp,
    /// A kernel shipped in a vendor library binary (cuBLAS, cuDNN, rocBLAS, assembly).
    VendorBinary,
    /// Generated at run time (Inductor, Triton caches, JIT): edits there do not last.
    RuntimeGenerated,
    /// Not known.
    Unknown,
}

/// Every label [`SourceKind::resolve`] knows, with what it means. One list, used both ways.
const LABELS: &[(&str, SourceKind)] = &[
    ("triton", SourceKind::Triton),
    ("cuda", SourceKind::Cuda),
    ("cu", SourceKind::Cuda),
    ("hip", SourceKind::Hip),
    ("cpp", SourceKind::Cpp),
    ("c++", SourceKind::Cpp),
    ("cxx", SourceKind::Cpp),
    ("flydsl", SourceKind::FlyDsl),
    ("python", SourceKind::Python),
    ("py", SourceKind::Python),
    ("vendor_binary", SourceKind::VendorBinary),
    ("asm", SourceKind::VendorBinary),
    ("prebuilt", SourceKind::VendorBinary),
    ("runtime_generated", SourceKind::RuntimeGenerated),
    ("jit", SourceKind::RuntimeGenerated),
    ("unknown", SourceKind::Unknown),
];

impl SourceKind {
    /// The stable label (`flydsl`, not `fly_dsl`); also the JSON form.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Triton => "triton",
            SourceKind::FlyDsl => "flydsl",
            SourceKind::Python => "python",
            SourceKind::Cuda => "cuda",
            SourceKind::Hip => "hip",
            SourceKind::Cpp => "cpp",
            SourceKind::VendorBinary => "vendor_binary",
            SourceKind::RuntimeGenerated => "runtime_generated",
            SourceKind::Unknown => "unknown",
        }
    }

    /// The kind of a kernel from its file's `language` label and its
    /// `kernel_kind` label, as other tools write them. Labels are compared
    /// lower-cased with `-` read as `_`. `flydsl` anywhere in either wins;
    /// then a known kernel kind (so a Triton kernel in a `.py` file is
    /// Triton); then a known language; else [`SourceKind::Unknown`].
    pub fn resolve(language: &str, kernel_kind: &str) -> SourceKind {
        let language = normalise(language);
        let kernel_kind = normalise(kernel_kind);
        if language.contains("flydsl") || kernel_kind.contains("flydsl") {
            return SourceKind::FlyDsl;
        }
        known_label(&kernel_kind)
            .or_else(|| known_label(&language))
            .unwrap_or(SourceKind::Unknown)
    }
}

impl std::fmt::Display for SourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

fn normalise(label: &str) -> String {
    label.trim().to_lowercase().replace('-', "_")
}

fn known_label(label: &str) -> Option<SourceKind> {
    LABELS
        .iter()
        .find(|(name, _)| *name == label)
        .map(|(_, kind)| *kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_label_of_a_kind_round_trips_through_resolve() {
        for (_, kind) in LABELS {
            assert_eq!(SourceKind::resolve("", kind.as_str()), *kind);
        }
    }
}
