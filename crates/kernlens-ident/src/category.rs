//! The coarse category of a kernel (ident.md "Category classifier"), from one ordered table of patterns.

use serde::Serialize;

use crate::clean::clean;
use crate::key::native_key;

/// What a kernel does, coarsely.
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// Memory copies and sets.
    Memcpy,
    /// Collective and point-to-point communication.
    Communication,
    /// Attention (flash, SDPA, MHA/MLA/GQA).
    Attention,
    /// Mixture-of-experts routing and expert GEMMs.
    Moe,
    /// Matrix multiplications.
    Gemm,
    /// Layer, RMS, group and batch norms.
    Norm,
    /// Softmax.
    Softmax,
    /// Quantisation and dequantisation.
    Quantization,
    /// Reductions and scans.
    Reduction,
    /// Element-wise and pointwise kernels.
    Elementwise,
    /// Anything else.
    Other,
}

impl Category {
    /// The lower-case label (`gemm`, `norm`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Category::Memcpy => "memcpy",
            Category::Communication => "communication",
            Category::Attention => "attention",
            Category::Moe => "moe",
            Category::Gemm => "gemm",
            Category::Norm => "norm",
            Category::Softmax => "softmax",
            Category::Quantization => "quantization",
            Category::Reduction => "reduction",
            Category::Elementwise => "elementwise",
            Category::Other => "other",
        }
    }
}

impl std::fmt::Display for Category {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the table: a substring, prefix or whole-segment match of any
/// listed pattern selects the category.
struct Rule {
    category: Category,
    contains: &'static [&'static str],
    prefix: &'static [&'static str],
    segment: &'static [&'static str],
}

/// Table order matters: attention precedes gemm (cuDNN flash kernels contain
/// `wgmma`); gemm and norm precede quantization (`_mxfp8_grouped_gemm_kernel`,
/// `add_rmsnorm_quant_kernel`); norm precedes reduction and elementwise
/// (inductor's `triton_per_fused_add_native_layer_norm_view_1`).
const RULES: &[Rule] = &[
    Rule {
        category: Category::Memcpy,
        contains: &["memcpy", "memset"],
        prefix: &[],
        segment: &[],
    },
    Rule {
        category: Category::Communication,
        contains: &[
            "nccl",
            "rccl",
            "all_reduce",
            "allreduce",
            "all_gather",
            "allgather",
            "reduce_scatter",
            "reducescatter",
            "alltoall",
            "all_to_all",
            "cross_device_reduce",
            "custom_ar",
            "mscclpp",
            "nvshmem",
        ],
        prefix: &[],
        segment: &[],
    },
    Rule {
        category: Category::Attention,
        contains: &["attention", "attn", "sdpa", "fmha", "flash"],
        prefix: &[],
        segment: &["mha", "mla", "gqa", "mqa"],
    },
    Rule {
        category: Category::Moe,
        contains: &["moe", "expert"],
        prefix: &[],
        segment: &[],
    },
    Rule {
        category: Category::Gemm,
        contains: &["gemm", "gemv", "matmul"],
        prefix: &["nvjet_", "cijk_"],
        segment: &["mm", "bmm", "addmm", "linear"],
    },
    Rule {
        category: Category::Norm,
        contains: &[
            "layer_norm",
            "layernorm",
            "rms_norm",
            "rmsnorm",
            "group_norm",
            "groupnorm",
            "batch_norm",
            "batchnorm",
            "instance_norm",
            "l2norm",
        ],
        prefix: &[],
        segment: &["norm"],
    },
    Rule {
        category: Category::Softmax,
        contains: &["softmax"],
        prefix: &[],
        segment: &[],
    },
    Rule {
        category: Category::Quantization,
        contains: &["quant", "fp8", "fp4", "mxfp", "int8", "int4"],
        prefix: &[],
        segment: &[],
    },
    Rule {
        category: Category::Reduction,
        contains: &["reduce", "reduction", "triton_red_"],
        prefix: &[],
        segment: &[
            "sum", "mean", "argmax", "argmin", "amax", "amin", "cumsum", "scan",
        ],
    },
    Rule {
        category: Category::Elementwise,
        contains: &[
            "elementwise",
            "pointwise",
            "triton_poi_",
            "multi_tensor_apply",
            "foreach",
        ],
        prefix: &[],
        segment: &[
            "add",
            "mul",
            "sub",
            "div",
            "scale",
            "bias",
            "gelu",
            "silu",
            "relu",
            "swiglu",
            "act",
            "activation",
            "copy",
            "fill",
            "cast",
            "rotary",
            "rope",
            "where",
            "clamp",
        ],
    },
];

fn match_table(lower: &str) -> Option<Category> {
    RULES.iter().find_map(|rule| {
        let hit = rule.contains.iter().any(|p| lower.contains(p))
            || rule.prefix.iter().any(|p| lower.starts_with(p))
            || (!rule.segment.is_empty()
                && lower
                    .split(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit()))
                    .any(|segment| rule.segment.contains(&segment)));
        hit.then_some(rule.category)
    })
}

/// The category of a kernel name: the table is matched against the
/// lower-cased native key, then against the lower-cased cleaned name
/// (template arguments included, which catches `cutlass::Kernel2<…gemm…>`).
///
/// ```
/// use kernlens_ident::{Category, classify};
/// assert_eq!(classify("triton_per_fused_add_native_layer_norm_view_1"), Category::Norm);
/// assert_eq!(classify("random_normal_kernel"), Category::Other);
/// ```
pub fn classify(name: &str) -> Category {
    match_table(&native_key(name).to_lowercase())
        .or_else(|| match_table(&clean(name).text.to_lowercase()))
        .unwrap_or(Category::Other)
}
