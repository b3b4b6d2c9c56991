//! Task grouping scenarios G1–G13 and B1–B8 (ident.md "Acceptance scenarios: Grouping").

mod support;

use kernlens_ident::{GroupOptions, Grouping, SourceRef, TraceRow, UngroupedReason, group_rows};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn options() -> GroupOptions {
    GroupOptions::new().with_base_dir("/nonexistent-kernlens-repo")
}

fn row(id: &str, name: &str, source: &str, total_us: f64) -> TraceRow {
    TraceRow::new(id, name)
        .with_source(source)
        .with_total_us(total_us)
}

fn group_ids(grouping: &Grouping) -> Vec<Vec<&str>> {
    grouping
        .groups
        .iter()
        .map(|g| g.kernel_ids.iter().map(String::as_str).collect())
        .collect()
}

#[track_caller]
fn assert_close(actual: f64, expected: f64) {
    assert!((actual - expected).abs() < 1e-12, "{actual} != {expected}");
}

#[test]
fn same_operation_and_function_group_and_sum() {
    let rows = [
        row("k001", "aiter::rms_norm", "rmsnorm.py(2): rms_norm", 100.0)
            .with_calls(64)
            .with_share(0.05),
        row("k002", "aiter::rms_norm", "rmsnorm.py(2): rms_norm", 50.0)
            .with_calls(32)
            .with_share(0.025),
        row(
            "k003",
            "aiter::other_fn_kernel",
            "rmsnorm.py(5): other_fn",
            20.0,
        )
        .with_calls(8)
        .with_share(0.01),
    ];
    let g = group_rows(&rows, &options());
    assert_eq!(group_ids(&g), [vec!["k001", "k002"], vec!["k003"]]);
    let first = &g.groups[0];
    assert_eq!(
        (first.id.as_str(), first.primary_kernel_id.as_str()),
        ("tg001", "k001")
    );
    assert_close(first.total_us, 150.0);
    assert_eq!(first.calls, 96);
    assert_close(first.share, 0.075);
    assert_eq!(g.groups[1].id, "tg002");
    assert!(g.ungrouped.is_empty() && g.warnings.is_empty());
}

#[test]
fn definition_line_is_not_part_of_the_key() {
    let rows = [
        row("a", "op", "m.py(1): f", 1.0),
        row("b", "op", "m.py(4): f", 1.0),
    ];
    let g = group_rows(&rows, &options());
    assert_eq!(g.groups.len(), 1);
}

#[test]
fn operation_is_part_of_the_key() {
    let rows = [
        row(
            "k1",
            "vllm::rocm_unquantized_gemm",
            "fwd.py(10): forward",
            3.0,
        ),
        row(
            "k2",
            "vllm::rocm_unquantized_gemm",
            "fwd.py(10): forward",
            2.0,
        ),
        row(
            "k3",
            "vllm::rocm_aiter_triton_add_rmsnorm_pad",
            "fwd.py(10): forward",
            1.0,
        ),
    ];
    assert_eq!(
        group_ids(&group_rows(&rows, &options())),
        [vec!["k1", "k2"], vec!["k3"]]
    );
}

#[test]
fn launching_function_is_part_of_the_key() {
    let rows = [
        row("a", "op", "m.py(1): first", 2.0),
        row("b", "op", "m.py(1): second", 1.0),
    ];
    assert_eq!(group_rows(&rows, &options()).groups.len(), 2);
}

#[test]
fn native_file_without_function_groups_across_lines() {
    let rows = [
        row("a", "rmsnorm_kernel", "csrc/rmsnorm.cu(120)", 2.0),
        row("b", "rmsnorm_kernel", "csrc/rmsnorm.cu(456)", 1.0),
    ];
    assert_eq!(group_rows(&rows, &options()).groups.len(), 1);
}

#[test]
fn mangled_spellings_and_instances_form_one_native_group() {
    let rows: Vec<TraceRow> = [
        "hipGraphLaunch->_ZN5aiter24add_rmsnorm_quant_kernelIDF16bEEv.kd",
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256ELi16ELb0ELb0EEEvPKT_",
        "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi512ELi16ELb1ELb0EEEvPKT_",
    ]
    .iter()
    .enumerate()
    .map(|(i, name)| row(&format!("k{i}"), name, "csrc/rmsnorm_quant.cu", 200.0).with_calls(20))
    .collect();
    let g = group_rows(&rows, &options());
    assert_eq!(g.groups.len(), 1);
    assert_close(g.groups[0].total_us, 600.0);
    assert_eq!(g.groups[0].calls, 60);
    assert!(
        g.groups[0]
            .identity_key
            .as_deref()
            .unwrap_or_default()
            .contains(r#""operation":"aiter::add_rmsnorm_quant_kernel""#)
    );
}

#[test]
fn distinct_kernels_of_one_file_stay_apart() {
    let rows = [
        row("a", "quantize_kernel", "q.cu", 2.0),
        row("b", "dequantize_kernel", "q.cu", 1.0),
    ];
    let g = group_rows(&rows, &options());
    let ops: Vec<&str> = g
        .groups
        .iter()
        .map(|g| g.identity_key.as_deref().unwrap_or_default())
        .collect();
    assert_eq!(ops.len(), 2);
    assert!(
        ops[0].contains(r#""operation":"quantize_kernel""#)
            && ops[1].contains(r#""operation":"dequantize_kernel""#)
    );
}

#[test]
fn template_instances_from_one_wrapper_group() {
    let rows = [
        row("a", "fused_moe_kernel<bf16>", "moe.py(3): fused_moe", 2.0),
        row("b", "fused_moe_kernel<fp16>", "moe.py(3): fused_moe", 1.0),
    ];
    assert_eq!(group_rows(&rows, &options()).groups.len(), 1);
}

#[test]
fn dot_dot_paths_canonicalise_to_one_group() {
    let rows = [
        row("a", "k", "csrc/sub/../rmsnorm.cu(12)", 2.0),
        row("b", "k", "csrc/rmsnorm.cu(99)", 1.0),
    ];
    assert_eq!(group_rows(&rows, &options()).groups.len(), 1);
}

#[test]
fn rows_without_a_usable_source_are_reported_in_order() {
    let rows = [
        row("a", "k", "", 1.0),
        row("b", "k", "\u{2014}", 1.0),
        TraceRow::new("c", "k").with_total_us(1.0),
        row("d", "k", "AITER (vendor)", 1.0),
    ];
    let g = group_rows(&rows, &options());
    assert!(g.groups.is_empty());
    let reasons: Vec<(usize, &str, UngroupedReason)> = g
        .ungrouped
        .iter()
        .map(|u| (u.row, u.kernel_id.as_str(), u.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            (0, "a", UngroupedReason::NoSource),
            (1, "b", UngroupedReason::Placeholder),
            (2, "c", UngroupedReason::NoSource),
            (3, "d", UngroupedReason::NotPathShaped),
        ]
    );
}

#[test]
fn single_row_keeps_its_function() {
    let g = group_rows(
        &[row(
            "k",
            "aiter::rms",
            "aiter/rmsnorm.py(42): rms_norm",
            1.0,
        )],
        &options(),
    );
    assert_eq!(g.groups.len(), 1);
    assert!(
        g.groups[0]
            .identity_key
            .as_deref()
            .unwrap_or_default()
            .starts_with(r#"{"function":"rms_norm","#)
    );
}

#[test]
fn rows_order_by_time_and_the_largest_is_primary() {
    let rows = [
        row("k001", "gemm_kernel<1>", "g.py(1): mm", 10.0),
        row("k002", "gemm_kernel<2>", "g.py(1): mm", 40.0),
        row("k003", "gemm_kernel<3>", "g.py(1): mm", 30.0),
        row("k004", "gemm_kernel<4>", "g.py(1): mm", 20.0),
    ];
    let g = group_rows(&rows, &options());
    assert_eq!(group_ids(&g), [vec!["k002", "k003", "k004", "k001"]]);
    assert_eq!(g.groups[0].primary_kernel_id, "k002");
    assert_eq!(g.groups[0].operation, "gemm_kernel<2>");
}

#[test]
fn distinct_device_symbols_give_distinct_keys() {
    let rows = [
        row("a", "_Z3fooPf", "k.cu", 1.0),
        row("b", "_Z3barPf", "k.cu", 1.0),
    ];
    let g = group_rows(&rows, &options());
    assert_eq!(g.groups.len(), 2);
    assert_ne!(g.groups[0].identity_key, g.groups[1].identity_key);
}

#[test]
fn native_rows_group_by_operation() {
    let rows = [
        row("k001", "quantize", "/x/q.cu", 300.0).with_share(0.30),
        row("k002", "quantize", "/x/q.cu", 100.0).with_share(0.10),
    ];
    let g = group_rows(&rows, &options());
    assert_eq!(
        (
            g.groups[0].id.as_str(),
            g.groups[0].primary_kernel_id.as_str()
        ),
        ("tg001", "k001")
    );
    assert_close(g.groups[0].total_us, 400.0);
    assert_close(g.groups[0].share, 0.40);
    let two = [
        row("a", "quant_a", "/x/q.cu", 1.0),
        row("b", "quant_b", "/x/q.cu", 1.0),
    ];
    assert_eq!(group_rows(&two, &options()).groups.len(), 2);
}

#[test]
fn py_rows_group_by_operation() {
    let rows = [
        row("k001", "op_x", "/x/m.py", 3.0),
        row("k002", "op_x", "/x/m.py", 2.0),
        row("k003", "op_y", "/x/m.py", 1.0),
    ];
    assert_eq!(
        group_ids(&group_rows(&rows, &options())),
        [vec!["k001", "k002"], vec!["k003"]]
    );
}

#[test]
fn ungrouped_time_counts_in_the_share_denominator() {
    let rows = [row("a", "k", "/x/k.cu", 300.0), row("b", "k", "", 100.0)];
    let g = group_rows(&rows, &options());
    assert_eq!(g.groups[0].kernel_ids, ["a"]);
    assert_close(g.groups[0].total_us, 300.0);
    assert_close(g.groups[0].share, 0.75);
}

#[test]
fn groups_order_by_total_time() {
    let rows = [
        row("a", "k", "/x/a.cu", 100.0),
        row("b", "k", "/x/b.cu", 900.0),
    ];
    let g = group_rows(&rows, &options());
    assert_eq!(g.groups[0].id, "tg001");
    assert!(
        g.groups[0]
            .identity_key
            .as_deref()
            .unwrap_or_default()
            .contains("/x/b.cu")
    );
    assert_eq!(group_ids(&g), [vec!["b"], vec!["a"]]);
}

#[test]
fn missing_shares_divide_by_the_trace_total_or_the_row_sum() {
    let rows = [
        row("a", "k", "/x/k.cu", 300.0),
        row("b", "k", "/x/k.cu", 100.0),
    ];
    let g = group_rows(&rows, &options().with_trace_total_us(2000.0));
    assert_close(g.groups[0].share, 0.2);
    let with_ungrouped = [
        row("a", "k", "/x/k.cu", 300.0),
        row("b", "k", "/x/k.cu", 100.0),
        row("c", "k", "", 100.0),
    ];
    let g = group_rows(&with_ungrouped, &options());
    assert_close(g.groups[0].share, 0.8);
    let zero = group_rows(&[row("a", "k", "/x/k.cu", 0.0)], &options());
    assert_close(zero.groups[0].share, 0.0);
}

#[test]
fn bad_numbers_count_as_absent_with_one_warning_each() {
    let rows = [
        row("a", "k", "/x/k.cu", f64::NAN),
        row("b", "k", "/x/k.cu", 100.0).with_share(1.5),
        row("c", "k", "/x/k.cu", -5.0),
    ];
    let g = group_rows(&rows, &options());
    assert_eq!(g.warnings.len(), 3, "{:?}", g.warnings);
    assert_eq!(g.warnings[0].row, Some(0));
    assert!(
        g.warnings[0].message.contains("'a'"),
        "{}",
        g.warnings[0].message
    );
    assert_close(g.groups[0].total_us, 100.0);
    assert_close(g.groups[0].share, 1.0);
}

#[test]
fn kernel_id_falls_back_to_the_name_and_ids_are_not_repeated() {
    let rows = [row("", "k", "/x/k.cu", 2.0), row("", "k", "/x/k.cu", 1.0)];
    let g = group_rows(&rows, &options());
    assert_eq!(g.groups[0].kernel_ids, ["k"]);
    assert_eq!(g.groups[0].primary_kernel_id, "k");
}

#[test]
fn parsed_source_refs_group_like_text_ones() {
    let rows = [
        TraceRow::new("a", "op")
            .with_source_ref(SourceRef::new("m.py").with_line(3).with_function("f"))
            .with_total_us(2.0),
        row("b", "op", "m.py(9): f", 1.0),
        TraceRow::new("c", "op").with_source_ref(SourceRef::new("n/a")),
    ];
    let g = group_rows(&rows, &options());
    assert_eq!(group_ids(&g), [vec!["a", "b"]]);
    assert_eq!(g.ungrouped[0].reason, UngroupedReason::Placeholder);
}

#[test]
fn ids_keep_three_digits_then_grow() {
    let rows: Vec<TraceRow> = (0..1000)
        .map(|i| {
            row(
                &format!("k{i}"),
                &format!("op_{i}"),
                "/x/m.py",
                2000.0 - f64::from(i),
            )
        })
        .collect();
    let g = group_rows(&rows, &options());
    assert_eq!(g.groups[0].id, "tg001");
    assert_eq!(g.groups[998].id, "tg999");
    assert_eq!(g.groups[999].id, "tg1000");
}

#[test]
fn eager_fixture_groups_add_and_gelu_instances_together() -> TestResult {
    let rows: Vec<TraceRow> = support::kernel_names(&support::fixture("eager.json.gz"))?
        .into_iter()
        .enumerate()
        .map(|(i, name)| row(&format!("r{i}"), &name, "gen_traces.py(62): forward", 1.0))
        .collect();
    let g = group_rows(&rows, &options());
    assert_eq!(
        g.groups.len(),
        5,
        "{:#?}",
        g.groups.iter().map(|g| &g.identity_key).collect::<Vec<_>>()
    );
    let elementwise: Vec<_> = g
        .groups
        .iter()
        .filter(|g| {
            g.identity_key
                .as_deref()
                .unwrap_or_default()
                .contains(r#""operation":"at::native::vectorized_elementwise_kernel""#)
        })
        .collect();
    assert_eq!(elementwise.len(), 1);
    let members: Vec<&str> = elementwise[0]
        .kernel_ids
        .iter()
        .map(|id| rows[id[1..].parse::<usize>().unwrap_or(0)].name.as_str())
        .collect();
    assert!(members.iter().any(|n| n.contains("CUDAFunctor_add")));
    assert!(members.iter().any(|n| n.contains("GeluCUDAKernelImpl")));
    Ok(())
}
