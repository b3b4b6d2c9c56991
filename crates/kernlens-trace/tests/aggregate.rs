//! trace.md "Acceptance scenarios" scenarios 21–52: windows, attribution, rows, graph coverage, timeline
//! and stream sanity, on synthetic traces built inline.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use kernlens_trace::{LaunchApi, Options, StepSource, TimeWindow, WindowMode, WindowStatus};
use serde_json::{Value, json};

fn steady(min_repeats: usize, source: StepSource) -> Options {
    let mut o = Options::default();
    o.top_k = 0;
    o.window = WindowMode::Steady {
        min_repeats,
        source,
    };
    o
}

fn explicit(start_us: f64, end_us: f64) -> Options {
    let mut o = Options::default();
    o.top_k = 0;
    o.window = WindowMode::Explicit(
        TimeWindow::new((start_us * 1000.0) as i64, (end_us * 1000.0) as i64).unwrap(),
    );
    o
}

fn steps3() -> Vec<Value> {
    (1..=3)
        .map(|i| {
            annotation(
                &format!("ProfilerStep#{i}"),
                (i as f64 - 1.0) * 100.0,
                100.0,
            )
        })
        .collect()
}

#[test]
fn annotation_window_takes_the_upper_median_after_warmup() {
    let a = analyze_bytes(&trace(&steps3()), &steady(3, StepSource::Auto));
    let w = a.window.unwrap();
    assert_eq!((w.start_us, w.end_us), (200.0, 300.0));
    assert_eq!(
        (w.step_name.as_deref(), w.step_count, w.method.as_str()),
        (Some("ProfilerStep"), Some(3), "annotation_step")
    );
}

#[test]
fn step_names_win_only_after_the_repeat_threshold() {
    let mut ev = vec![annotation("optimizer_step", 0.0, 10.0)];
    ev.extend((0..5).map(|i| annotation("graph_call", 100.0 * i as f64, 10.0)));
    let w = analyze_bytes(&trace(&ev), &steady(3, StepSource::Auto))
        .window
        .unwrap();
    assert_eq!(
        (w.step_name.as_deref(), w.step_count),
        (Some("graph_call"), Some(5))
    );
    let mut ev: Vec<Value> = (0..4)
        .map(|i| annotation(&format!("ProfilerStep#{i}"), 1000.0 * i as f64, 10.0))
        .collect();
    ev.extend((0..10).map(|i| annotation("elementwise_region", 50.0 + 100.0 * i as f64, 10.0)));
    let w = analyze_bytes(&trace(&ev), &steady(3, StepSource::Auto))
        .window
        .unwrap();
    assert_eq!(
        (w.step_name.as_deref(), w.step_count),
        (Some("ProfilerStep"), Some(4))
    );
}

/// The window's group name and size for these annotations (Auto, 3 repeats).
fn steady_group(ev: &[Value]) -> (Option<String>, Option<usize>) {
    let w = analyze_bytes(&trace(ev), &steady(3, StepSource::Auto))
        .window
        .unwrap();
    (w.step_name.clone(), w.step_count)
}

/// A 2-GPU DDP capture had `Optimizer.step#AdamW.step` and `ProfilerStep#N` groups of equal
/// count; the first seen won and the window was the 1 ms optimizer slice (issue 20).
#[test]
fn profiler_steps_outrank_other_step_like_names_of_equal_count() {
    let mut ev: Vec<Value> = (0..5)
        .map(|i| {
            annotation(
                "Optimizer.step#AdamW.step",
                15_700.0 * i as f64 + 14_000.0,
                1_000.0,
            )
        })
        .collect();
    ev.extend((0..5).map(|i| {
        annotation(
            &format!("ProfilerStep#{}", 10 + i),
            15_700.0 * i as f64,
            300.0,
        )
    }));
    assert_eq!(steady_group(&ev), (Some("ProfilerStep".into()), Some(5)));
    let iterations: Vec<Value> = (0..4)
        .map(|i| annotation("optimizer_step", 100.0 * i as f64, 5.0))
        .chain((0..4).map(|i| annotation(&format!("iteration_{i}"), 100.0 * i as f64 + 50.0, 5.0)))
        .collect();
    assert_eq!(
        steady_group(&iterations),
        (Some("iteration".into()), Some(4))
    );
}

/// A group whose spans all lie inside another group's spans, with as many spans, is work
/// inside the step: the enclosing group wins, in either file order.
#[test]
fn a_nested_group_of_equal_count_loses_to_the_enclosing_group() {
    let outer: Vec<Value> = (0..5)
        .map(|i| annotation(&format!("train_step_{i}"), 1000.0 * i as f64, 800.0))
        .collect();
    let inner: Vec<Value> = (0..5)
        .map(|i| annotation("optimizer_step", 1000.0 * i as f64 + 600.0, 100.0))
        .collect();
    for ev in [
        [inner.clone(), outer.clone()].concat(),
        [outer.clone(), inner.clone()].concat(),
    ] {
        assert_eq!(steady_group(&ev), (Some("train_step".into()), Some(5)));
        let w = analyze_bytes(&trace(&ev), &steady(3, StepSource::Auto))
            .window
            .unwrap();
        assert_eq!(w.end_us - w.start_us, 800.0);
    }
    // An outer loop with fewer spans (epochs around steps) does not take the window.
    let mut ev: Vec<Value> = (0..3)
        .map(|i| annotation("epoch", 10_000.0 * i as f64, 9_000.0))
        .collect();
    ev.extend((0..6).map(|i| annotation("train_step", 5_000.0 * i as f64 + 100.0, 800.0)));
    assert_eq!(steady_group(&ev), (Some("train_step".into()), Some(6)));
}

#[test]
fn min_repeats_decides_whether_two_spans_qualify() {
    let ev = vec![
        annotation("region_a", 0.0, 10.0),
        annotation("region_a", 100.0, 10.0),
    ];
    assert!(
        analyze_bytes(&trace(&ev), &steady(3, StepSource::Auto))
            .window
            .is_none()
    );
    assert!(
        analyze_bytes(&trace(&ev), &steady(2, StepSource::Auto))
            .window
            .is_some()
    );
}

#[test]
fn median_by_duration() {
    let ev: Vec<Value> = [50.0, 10.0, 30.0, 20.0, 40.0]
        .iter()
        .enumerate()
        .map(|(i, d)| annotation("step", 100.0 * i as f64, *d))
        .collect();
    let w = analyze_bytes(&trace(&ev), &steady(3, StepSource::Auto))
        .window
        .unwrap();
    assert_eq!(
        (w.start_us, w.end_us, w.step_count),
        (200.0, 230.0, Some(5))
    );
}

#[test]
fn steady_window_keeps_by_start_and_clips_busy_not_sums() {
    let mut ev = steps3();
    ev.push(kernel("warmup_gemm", 50.0, 40.0, None));
    ev.push(kernel("paged_attention_v1", 250.0, 30.0, None));
    let full = run(&trace(&ev));
    assert_eq!(full.attribution.kernel_count, 2);
    let a = analyze_bytes(&trace(&ev), &steady(3, StepSource::Auto));
    assert_eq!(a.attribution.kernel_count, 1);
    assert_eq!(a.kernels[0].name, "paged_attention_v1");
    let t = &a.timeline;
    assert_eq!(
        (t.total_us, t.busy_us, t.idle_us, t.busy_pct),
        (100.0, 30.0, 70.0, 30.0)
    );

    let mut ev = steps3();
    ev.push(kernel("long_kernel", 210.0, 200.0, None));
    let a = analyze_bytes(&trace(&ev), &steady(3, StepSource::Auto));
    assert_eq!(
        (a.timeline.total_us, a.timeline.busy_us, a.timeline.busy_pct),
        (100.0, 90.0, 90.0)
    );
    assert_eq!(a.kernels[0].total_us, 200.0);
}

#[test]
fn steady_without_annotations_falls_back_to_full() {
    let a = analyze_bytes(
        &trace(&[kernel("a", 0.0, 1.0, None), kernel("b", 5.0, 1.0, None)]),
        &steady(3, StepSource::Auto),
    );
    assert!(a.window.is_none());
    assert_eq!(
        a.window_status,
        WindowStatus::NoRepeatingWindowFellBackToFullTrace
    );
    assert_eq!(a.to_json()["aggregation_scope"], "full_trace");
    assert_eq!(a.attribution.kernel_count, 2);
}

/// Four CPU `ProfilerStep#i` spans on pid 1, each launching a 50 µs kernel at +500 and
/// a kernel of `big[i]` µs at +600 (scenario 28's layout).
fn cpu_steps(big: [f64; 4]) -> Vec<Value> {
    let mut ev = Vec::new();
    for (i, d) in big.iter().enumerate() {
        let base = 1000.0 * i as f64;
        ev.push(json!({"ph":"X","cat":"user_annotation","name":format!("ProfilerStep#{i}"),"pid":1,"tid":1,"ts":base,"dur":1000.0,"args":{}}));
        let (c1, c2) = (10 * i as i64 + 1, 10 * i as i64 + 2);
        ev.push(launch(
            "cuda_runtime",
            "cudaLaunchKernel",
            c1,
            None,
            base + 100.0,
        ));
        ev.push(launch(
            "cuda_runtime",
            "cudaLaunchKernel",
            c2,
            None,
            base + 200.0,
        ));
        ev.push(kernel("small", base + 500.0, 50.0, Some(c1)));
        ev.push(kernel("big", base + 600.0, *d, Some(c2)));
    }
    ev
}

fn cpu_step_trace(with_gpu_annotations: bool) -> Vec<Value> {
    let mut ev = cpu_steps([400.0, 100.0, 300.0, 200.0]);
    if with_gpu_annotations {
        // Named apart from the CPU steps: with a CPU twin, trace.md "Annotation coverage check" would compare coverage.
        for i in 0..3 {
            ev.push(annotation(
                &format!("denoise_step_{i}"),
                10_000.0 + 100.0 * i as f64,
                50.0,
            ));
        }
    }
    ev
}

#[test]
fn cpu_profiler_steps_map_to_their_gpu_work() {
    let a = analyze_bytes(&trace(&cpu_step_trace(false)), &steady(3, StepSource::Auto));
    let w = a.window.clone().unwrap();
    assert_eq!(
        (w.start_us, w.end_us, w.method.as_str(), w.step_count),
        (3500.0, 3800.0, "cpu_profiler_step", Some(4))
    );
    assert_eq!(a.attribution.kernel_count, 2);
    assert_eq!(a.timeline.busy_us, 250.0);
    let b = analyze_bytes(&trace(&cpu_step_trace(true)), &steady(3, StepSource::Auto));
    assert_eq!(b.window.unwrap().method, "annotation_step");
    let c = analyze_bytes(
        &trace(&cpu_step_trace(true)),
        &steady(3, StepSource::CpuSteps),
    );
    assert_eq!(c.window.unwrap().method, "cpu_profiler_step");
}

#[test]
fn attribution_follows_runtime_and_driver_links() {
    let a = run(&t1());
    let cijk = a
        .kernels
        .iter()
        .find(|k| k.name == "Cijk_Alik_Bljk_HHS")
        .unwrap();
    assert_eq!(cijk.op_name, "aten::mm");
    let paged = a
        .kernels
        .iter()
        .find(|k| k.name == "paged_attention_v1")
        .unwrap();
    assert_eq!(paged.op_name, "");
    let ops: Vec<(&str, f64)> = a.ops.iter().map(|o| (o.name.as_str(), o.share)).collect();
    assert_eq!(ops, vec![("(unlinked)", 0.6), ("aten::mm", 0.4)]);
    let b = run(&trace(&[
        cpu_op("aten::foo", 7),
        driver("cuLaunchKernelEx", 40, Some(7)),
        kernel("k", 0.0, 1.0, Some(40)),
    ]));
    assert_eq!(b.kernels[0].op_name, "aten::foo");
    assert_eq!(b.attribution.attributed_kernels, 1);
}

#[test]
fn geometry_comes_from_each_kernels_own_event_and_backfill_from_shapes() {
    let mut eager = kernel("add_rmsnorm_kernel", 0.0, 10.0, Some(5));
    eager["args"]["grid"] = json!([17, 1, 1]);
    let mut score = kernel("_score_kernel", 40.0, 5.0, Some(7));
    score["args"]["grid"] = json!([17, 2, 1]);
    score["args"]["block"] = json!([512, 1, 1]);
    let ev = vec![
        json!({"ph":"X","cat":"cpu_op","name":"sgl::rmsnorm","pid":1,"tid":1,"ts":0,"dur":1,"args":{"External id":50,"Input Dims":[[17,7168]]}}),
        runtime("hipLaunchKernel", 5, Some(50)),
        runtime("hipGraphLaunch", 6, None),
        runtime("hipModuleLaunchKernel", 7, None),
        eager,
        kernel("add_rmsnorm_kernel", 20.0, 10.0, Some(6)),
        score,
    ];
    let a = run(&trace(&ev));
    let rms = a
        .kernels
        .iter()
        .find(|k| k.name == "add_rmsnorm_kernel")
        .unwrap();
    assert_eq!(rms.backfill_shapes, vec![vec![17, 7168]]);
    assert_eq!(rms.grid, Some([17, 1, 1]));
    let s = a
        .kernels
        .iter()
        .find(|k| k.name == "_score_kernel")
        .unwrap();
    assert!(s.op_shapes.is_empty());
    assert_eq!((s.grid, s.block), (Some([17, 2, 1]), Some([512, 1, 1])));
}

#[test]
fn backfill_picks_the_signature_with_most_time() {
    let ev = vec![
        json!({"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0,"dur":1,"args":{"External id":1,"Input Dims":[[8,8]]}}),
        json!({"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0,"dur":1,"args":{"External id":2,"Input Dims":[[64,64]]}}),
        runtime("cudaLaunchKernel", 1, Some(1)),
        runtime("cudaLaunchKernel", 2, Some(2)),
        kernel("dyn_kernel", 0.0, 10.0, Some(1)),
        kernel("dyn_kernel", 20.0, 100.0, Some(2)),
    ];
    let k = &run(&trace(&ev)).kernels[0];
    assert_eq!(k.backfill_shapes, vec![vec![64, 64]]);
    assert!(k.backfill_ambiguous);
}

#[test]
fn op_meta_fields_fill_from_the_linked_op() {
    let ev = vec![
        json!({"ph":"X","cat":"cpu_op","name":"triton_op","pid":1,"tid":1,"ts":0,"dur":1,"args":{"External id":3,
            "Input Dims":[[1024,256],[]],"Input type":["c10::BFloat16","Scalar"],"kernel_file":"/tmp/k.py","kernel_backend":"triton"}}),
        runtime("cudaLaunchKernel", 9, Some(3)),
        kernel("triton_kernel", 0.0, 10.0, Some(9)),
        kernel("lonely", 20.0, 1.0, None),
    ];
    let a = run(&trace(&ev));
    let k = a
        .kernels
        .iter()
        .find(|k| k.name == "triton_kernel")
        .unwrap();
    assert_eq!(k.op_shapes, vec![vec![1024, 256], vec![]]);
    assert_eq!(k.op_dtypes, vec!["c10::BFloat16", "Scalar"]);
    assert_eq!(
        (k.op_kernel_file.as_str(), k.op_kernel_backend.as_str()),
        ("/tmp/k.py", "triton")
    );
    let json = a.to_json();
    let lonely = json["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["name"] == "lonely")
        .unwrap();
    assert_eq!(lonely["op_shapes"], json!([]));
    assert_eq!(lonely["op_kernel_file"], "");
}

#[test]
fn graph_replay_rows_keep_their_own_grid() {
    let mut ev = vec![runtime("cudaGraphLaunch", 5, None)];
    for (i, (n, g)) in [("a", 1), ("b", 2), ("c", 3)].iter().enumerate() {
        let mut k = kernel(n, 10.0 * i as f64, 5.0, Some(5));
        k["args"]["grid"] = json!([g, 1, 1]);
        ev.push(k);
    }
    let a = run(&trace(&ev));
    for k in &a.kernels {
        let expect = match k.name.as_str() {
            "a" => 1,
            "b" => 2,
            _ => 3,
        };
        assert_eq!(k.grid, Some([expect, 1, 1]));
    }
}

#[test]
fn under_recorded_replays_are_flagged() {
    let a = run(&trace(&under_recorded_events()));
    assert_eq!(graph_tuple(&a), (4, 1, Some(0.25), 2, true));
    assert_eq!(a.graph.launch_api, Some(LaunchApi::Runtime));
    assert_eq!(
        (
            a.attribution.graph_attributed_kernels,
            a.attribution.unlinked_kernels
        ),
        (2, 0)
    );
    let g = a.ops.iter().find(|o| o.name == "(graph)").unwrap();
    assert_eq!(g.share, 0.6666666666666666);
    assert!((a.timeline.busy_fraction - 3.0e-5).abs() < 1e-7);
    assert!((a.timeline.idle_pct - 99.997).abs() < 1e-3);
}

#[test]
fn plain_launches_have_no_coverage() {
    let a = run(&trace(&[
        runtime("hipLaunchKernel", 1, None),
        runtime("hipLaunchKernel", 2, None),
        kernel("a", 0.0, 1.0, Some(1)),
        kernel("b", 2.0, 1.0, Some(2)),
    ]));
    assert_eq!(graph_tuple(&a), (0, 0, None, 0, false));
}

#[test]
fn partial_replay_recording() {
    let ev = vec![
        runtime("cudaGraphLaunch", 5, None),
        runtime("cudaGraphLaunch", 6, None),
        runtime("cudaGraphLaunch", 7, None),
        kernel("g1", 1100.0, 100.0, Some(5)),
        kernel("g2", 1300.0, 100.0, Some(5)),
        kernel("busy_fill", 1000.0, 7000.0, Some(99)),
        kernel("tail", 9000.0, 500.0, None),
    ];
    let a = run(&trace(&ev));
    assert_eq!(a.graph.coverage, Some(1.0 / 3.0));
    assert!(a.graph.under_recorded);
    assert_eq!(a.timeline.busy_fraction, 0.8823529411764706);
}

#[test]
fn one_recorded_launch_is_not_under_recorded() {
    let a = run(&trace(&[
        runtime("cudaGraphLaunch", 5, None),
        kernel("g", 0.0, 1.0, Some(5)),
    ]));
    assert!(!a.graph.under_recorded);
}

#[test]
fn fully_recorded_idle_graph_is_not_under_recorded() {
    let mut ev = Vec::new();
    for i in 0..4 {
        ev.push(runtime("cudaGraphLaunch", 5 + i, None));
        ev.push(kernel("g", 3_000_000.0 * i as f64, 100.0, Some(5 + i)));
    }
    let a = run(&trace(&ev));
    assert_eq!(a.graph.coverage, Some(1.0));
    assert!(!a.graph.under_recorded);
    assert!(a.timeline.idle_pct > 80.0);
}

#[test]
fn coverage_ignores_the_window() {
    let mut ev = Vec::new();
    for (i, ts) in [1000.0, 3e6, 6e6, 9e6].iter().enumerate() {
        ev.push(runtime("hipGraphLaunch", 5 + i as i64, None));
        ev.push(kernel("g", *ts, 100.0, Some(5 + i as i64)));
    }
    let a = analyze_bytes(&trace(&ev), &explicit(0.0, 2e6));
    assert_eq!(graph_tuple(&a), (4, 4, Some(1.0), 4, false));
    assert_eq!(a.attribution.graph_attributed_kernels, 1);
    assert_eq!(a.to_json()["window"]["method"], "explicit");
    assert_eq!(a.to_json()["window"]["step_name"], Value::Null);
}

#[test]
fn kernels_without_launch_events_have_no_coverage() {
    let ev: Vec<Value> = under_recorded_events()
        .into_iter()
        .filter(|e| e["cat"] != "cuda_runtime")
        .collect();
    let a = run(&trace(&ev));
    assert_eq!((a.graph.launches, a.graph.under_recorded), (0, false));
}

#[test]
fn coverage_boundaries() {
    let two_one = trace(&[
        runtime("cudaGraphLaunch", 1, None),
        runtime("cudaGraphLaunch", 2, None),
        kernel("g", 0.0, 1.0, Some(1)),
    ]);
    assert!(!run(&two_one).graph.under_recorded);
    let three_two = trace(&[
        runtime("cudaGraphLaunch", 1, None),
        runtime("cudaGraphLaunch", 2, None),
        runtime("cudaGraphLaunch", 3, None),
        kernel("g", 0.0, 1.0, Some(1)),
        kernel("g", 2.0, 1.0, Some(2)),
    ]);
    assert!(!run(&three_two).graph.under_recorded);
    let dup = trace(&[
        runtime("cudaGraphLaunch", 1, None),
        runtime("cudaGraphLaunch", 1, None),
        kernel("g", 0.0, 1.0, Some(1)),
    ]);
    assert_eq!(run(&dup).graph.launches, 1);
    let v10000 = trace(&[runtime("cudaGraphLaunch_v10000", 1, None)]);
    assert_eq!(run(&v10000).graph.launches, 1);
    let lower = trace(&[runtime("hipgraphlaunch", 1, None)]);
    assert_eq!(run(&lower).graph.launches, 0);
}

#[test]
fn driver_only_graph_launches_count() {
    let mut ev = vec![
        driver("cuGraphLaunch", 21, None),
        driver("cuGraphLaunch", 22, None),
        kernel("g", 0.0, 1.0, Some(21)),
    ];
    let a = run(&trace(&ev));
    assert_eq!(graph_tuple(&a), (2, 1, Some(0.5), 1, false));
    assert_eq!(a.graph.launch_api, Some(LaunchApi::Driver));
    ev.push(driver("cuGraphLaunch", 23, None));
    let b = run(&trace(&ev));
    assert_eq!(b.graph.coverage, Some(1.0 / 3.0));
    assert!(b.graph.under_recorded);
}

#[test]
fn runtime_launches_win_over_nested_driver_ones() {
    let a = run(&trace(&[
        runtime("cudaGraphLaunch", 5, None),
        runtime("cudaGraphLaunch", 6, None),
        driver("cuGraphLaunch", 105, None),
        driver("cuGraphLaunch", 106, None),
        kernel("g", 0.0, 1.0, Some(5)),
        kernel("g", 5.0, 1.0, Some(6)),
    ]));
    assert_eq!(
        (a.graph.launches, a.graph.coverage, a.graph.launch_api),
        (2, Some(1.0), Some(LaunchApi::Runtime))
    );
}

#[test]
fn per_device_totals_use_the_pooled_span() {
    let a = run(&trace(&[
        kernel_on("a", 0.0, 100.0, None, 0, 7),
        kernel_on("b", 900.0, 100.0, None, 1, 7),
    ]));
    assert_eq!(a.timeline.busy_pct, 20.0);
    let d: Vec<(Option<i64>, f64, f64)> = a
        .timeline
        .per_device
        .iter()
        .map(|d| (d.device, d.total_us, d.busy_pct))
        .collect();
    assert_eq!(d, vec![(Some(0), 1000.0, 10.0), (Some(1), 1000.0, 10.0)]);
}

#[test]
fn categories_sum_to_total() {
    let a = run(&trace(&[
        kernel("gemm", 0.0, 100.0, None),
        kernel("ncclDevKernel_AllReduce_Sum_bf16", 50.0, 150.0, None),
        json!({"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":0,"tid":7,"ts":180.0,"dur":80.0,"args":{}}),
        kernel("elementwise", 290.0, 10.0, None),
    ]));
    assert_eq!(
        categories_tuple(&a.timeline.categories),
        (110.0, 150.0, 100.0, 60.0, 30.0)
    );
    assert_eq!((a.timeline.total_us, a.timeline.busy_us), (300.0, 270.0));
}

fn stream(events: &[(&str, f64, f64)], tid: i64) -> Vec<Value> {
    events
        .iter()
        .map(|(n, ts, d)| kernel_on(n, *ts, *d, None, 0, tid))
        .collect()
}

#[test]
fn a_corrupt_duration_is_reported() {
    let a = run(&trace(&stream(
        &[
            ("k_a", 1000.0, 100.0),
            ("corrupt_kernel", 1100.0, 20_000.0),
            ("k_b", 1200.0, 100.0),
            ("k_c", 1300.0, 100.0),
        ],
        7,
    )));
    let s = a.stream_overlap.unwrap();
    assert_eq!(
        (
            s.worst_event.as_str(),
            s.overlapping_events,
            s.worst_event_excess_us,
            s.severity.as_str()
        ),
        ("corrupt_kernel", 1, 19900.0, "warning")
    );
}

#[test]
fn clean_streams_report_nothing() {
    let mut ev = stream(&[("a", 0.0, 10.0), ("b", 20.0, 10.0)], 1);
    ev.extend(stream(&[("a", 0.0, 10.0), ("b", 20.0, 10.0)], 2));
    assert!(run(&trace(&ev)).stream_overlap.is_none());
}

#[test]
fn the_stream_with_most_excess_is_reported() {
    let ms = 1000.0;
    let a = stream(
        &[
            ("a0", 0.0, 13.0 * ms),
            ("a1", 10.0 * ms, 10.0 * ms),
            ("a2", 20.0 * ms, 10.0 * ms),
            ("a3", 30.0 * ms, 10.0 * ms),
        ],
        1,
    );
    let b = stream(
        &[
            ("b0", 0.0, 39.0 * ms),
            ("b1", 10.0 * ms, 10.0 * ms),
            ("b2", 20.0 * ms, 10.0 * ms),
            ("b3", 30.0 * ms, 10.0 * ms),
        ],
        2,
    );
    let mut both = a.clone();
    both.extend(b);
    let s = run(&trace(&both)).stream_overlap.unwrap();
    assert_eq!(
        (s.tid.clone(), s.excess_us, s.severity.as_str()),
        (kernlens_trace::StreamId::Int(2), 29.0 * ms, "warning")
    );
    assert!((s.excess_share - 29.0 / 69.0).abs() < 1e-12);
    let s = run(&trace(&a)).stream_overlap.unwrap();
    assert_eq!(s.severity, "info");
    assert!((s.excess_share - 3.0 / 43.0).abs() < 1e-12);
}

#[test]
fn small_or_uncheckable_overlaps_are_ignored() {
    let cases: Vec<Vec<(&str, f64, f64)>> = vec![
        vec![("a", 0.0, 10.5), ("b", 10.0, 10.0)],
        vec![("a", 0.0, 100_000.0), ("b", 99_990.0, 100_000.0)],
        vec![("a", 0.0, 10.0)],
        vec![("a", 5.0, 0.0), ("b", 5.0, 0.0)],
        vec![],
        vec![("a", 0.0, 10.0), ("b", 20.0, 10.0), ("corrupt", 40.0, 1e9)],
        vec![
            ("x", 0.0, 50_000.0),
            ("y", 0.0, 50_000.0),
            ("z", 0.0, 50_000.0),
        ],
    ];
    for c in cases {
        assert!(
            run(&trace(&stream(&c, 1))).stream_overlap.is_none(),
            "{c:?}"
        );
    }
    let many: Vec<Value> = (0..20_000)
        .map(|i| kernel_on("k", 100.0 * i as f64, 104.0, None, 0, 1))
        .collect();
    assert!(run(&trace(&many)).stream_overlap.is_none());
}

#[test]
fn one_huge_duration_among_many_is_a_warning() {
    let mut ev: Vec<Value> = (0..1000)
        .map(|i| kernel_on("k", 60_000.0 * i as f64, 100.0, None, 0, 1))
        .collect();
    ev[0]["dur"] = json!(2_000_000.0);
    let s = run(&trace(&ev)).stream_overlap.unwrap();
    assert_eq!(s.severity, "warning");
    assert!(s.excess_share > 0.9);
    assert!(s.excess_us / s.span_us < 0.05);
}

#[test]
fn back_to_back_events_with_one_extended() {
    let ms = 1000.0;
    let build = |extra: f64| -> Vec<Value> {
        (0..40)
            .map(|i| {
                kernel_on(
                    "k",
                    10.0 * ms * i as f64,
                    if i == 0 { 10.0 * ms + extra } else { 10.0 * ms },
                    None,
                    0,
                    1,
                )
            })
            .collect()
    };
    let s = run(&trace(&build(40.0 * ms))).stream_overlap.unwrap();
    assert_eq!(s.severity, "info");
    assert!((s.excess_share - 40.0 / 440.0).abs() < 1e-12);
    assert_eq!(
        run(&trace(&build(900.0 * ms)))
            .stream_overlap
            .unwrap()
            .severity,
        "warning"
    );
}

fn sliver_trace(annotation_dur: f64) -> Vec<Value> {
    let mut ev = cpu_steps([300.0; 4]);
    for i in 0..4 {
        ev.push(annotation(
            &format!("ProfilerStep#{i}"),
            1000.0 * i as f64 + 500.0,
            annotation_dur,
        ));
    }
    ev
}

/// trace.md "Annotation coverage check": an annotation covering a quarter of the work its CPU step launched is replaced
/// by the launched spans; one covering most of it is kept, with its coverage reported.
#[test]
fn annotation_covering_a_sliver_of_the_step_uses_launched_spans() {
    let a = analyze_bytes(&trace(&sliver_trace(100.0)), &steady(3, StepSource::Auto));
    let w = a.window.unwrap();
    assert_eq!(w.method, "annotation_step_launch_span");
    assert_eq!((w.start_us, w.end_us), (2500.0, 2900.0));
    assert_eq!(w.annotation_coverage, Some(0.25));
    let b = analyze_bytes(&trace(&sliver_trace(300.0)), &steady(3, StepSource::Auto));
    let w = b.window.unwrap();
    assert_eq!(
        (w.method.as_str(), w.start_us, w.end_us),
        ("annotation_step", 2500.0, 2800.0)
    );
    assert_eq!(w.annotation_coverage, Some(0.75));
    let c = analyze_bytes(
        &trace(&sliver_trace(100.0)),
        &steady(3, StepSource::Annotation),
    );
    let w = c.window.unwrap();
    assert_eq!(
        (w.method.as_str(), w.annotation_coverage),
        ("annotation_step", None)
    );
}
