//! Vendor-library hints (ident.md "Vendor libraries"): which kernels ship inside a vendor binary.

use serde::Serialize;

use crate::clean::{clean, is_mangled_shape};
use crate::key::native_key;

/// A vendor library a kernel name points to.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VendorLib {
    /// cuBLAS / cuBLASLt.
    Cublas,
    /// cuDNN.
    Cudnn,
    /// CUTLASS (header-only: a project's own CUTLASS kernel can be located).
    Cutlass,
    /// hipBLASLt.
    Hipblaslt,
    /// rocBLAS.
    Rocblas,
    /// hipBLAS.
    Hipblas,
    /// Composable Kernel (header-only).
    Ck,
    /// NCCL / RCCL.
    Nccl,
}

impl VendorLib {
    /// The label (`cublas`, `ck`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            VendorLib::Cublas => "cublas",
            VendorLib::Cudnn => "cudnn",
            VendorLib::Cutlass => "cutlass",
            VendorLib::Hipblaslt => "hipblaslt",
            VendorLib::Rocblas => "rocblas",
            VendorLib::Hipblas => "hipblas",
            VendorLib::Ck => "ck",
            VendorLib::Nccl => "nccl",
        }
    }
}

impl std::fmt::Display for VendorLib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One way a name can point to a vendor.
enum Pattern {
    Prefix(&'static str),
    Contains(&'static str),
    ContainsIgnoreCase(&'static str),
    /// `sm<digits>_xmma_` anywhere (cuBLAS's SASS kernels).
    SmXmma,
    /// An architecture prefix such as `ampere_` with `gemm` anywhere.
    ArchGemm,
}

const ARCH_PREFIXES: &[&str] = &["volta_", "turing_", "ampere_", "hopper_", "blackwell_"];

/// First matching row wins.
const RULES: &[(VendorLib, &[Pattern])] = &[
    (
        VendorLib::Cublas,
        &[
            Pattern::Prefix("nvjet_"),
            Pattern::SmXmma,
            Pattern::ArchGemm,
            Pattern::ContainsIgnoreCase("cublas"),
        ],
    ),
    (
        VendorLib::Cudnn,
        &[
            Pattern::Prefix("cudnn_"),
            Pattern::ContainsIgnoreCase("cudnn"),
        ],
    ),
    (
        VendorLib::Cutlass,
        &[Pattern::ContainsIgnoreCase("cutlass")],
    ),
    (
        VendorLib::Hipblaslt,
        &[
            Pattern::Prefix("Cijk_"),
            Pattern::ContainsIgnoreCase("hipblaslt"),
        ],
    ),
    (
        VendorLib::Rocblas,
        &[Pattern::ContainsIgnoreCase("rocblas")],
    ),
    (
        VendorLib::Hipblas,
        &[Pattern::ContainsIgnoreCase("hipblas")],
    ),
    (
        VendorLib::Ck,
        &[
            Pattern::Contains("ck_tile::"),
            Pattern::Prefix("ck_tile"),
            Pattern::Prefix("ck::"),
            Pattern::Contains("::ck::"),
        ],
    ),
    (
        VendorLib::Nccl,
        &[
            Pattern::Prefix("ncclDevKernel_"),
            Pattern::Prefix("ncclKernel_"),
            Pattern::ContainsIgnoreCase("rccl"),
        ],
    ),
];

impl Pattern {
    fn matches(&self, name: &str, lower: &str) -> bool {
        match self {
            Pattern::Prefix(prefix) => name.starts_with(prefix),
            Pattern::Contains(part) => name.contains(part),
            Pattern::ContainsIgnoreCase(part) => lower.contains(part),
            Pattern::SmXmma => name.match_indices("sm").any(|(at, _)| {
                let rest = &name[at + 2..];
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                digits > 0 && rest[digits..].starts_with("_xmma_")
            }),
            Pattern::ArchGemm => {
                ARCH_PREFIXES.iter().any(|arch| name.starts_with(arch)) && name.contains("gemm")
            }
        }
    }
}

/// The vendor library whose binary ships the kernel, judged on the cleaned
/// name (and, for a mangled name, on its demangled key too). A hint: locate
/// reports a vendor binary only when no source is found.
///
/// ```
/// use kernlens_ident::{VendorLib, vendor_of};
/// assert_eq!(vendor_of("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"), Some(VendorLib::Cublas));
/// assert_eq!(vendor_of("triton_poi_fused_gelu_view_2"), None);
/// ```
pub fn vendor_of(name: &str) -> Option<VendorLib> {
    let cleaned = clean(name).text;
    match_rules(cleaned).or_else(|| {
        // A mangled symbol hides its namespaces (`_ZN7ck_tile6kentry…`), so
        // its demangled key is checked as well.
        is_mangled_shape(cleaned)
            .then(|| native_key(cleaned))
            .and_then(|key| match_rules(&key))
    })
}

fn match_rules(text: &str) -> Option<VendorLib> {
    let lower = text.to_ascii_lowercase();
    RULES
        .iter()
        .find(|(_, patterns)| patterns.iter().any(|p| p.matches(text, &lower)))
        .map(|(vendor, _)| *vendor)
}
