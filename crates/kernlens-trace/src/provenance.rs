//! The `kernlens` member of a split chunk (trace.md "Split"), honoured only when well-formed.
//!
//! A chunk's provenance changes what readers believe: the gate's graph guard refuses a
//! chunk (its own coverage is about 1.0 by construction) and a chunk of a chunk carries the
//! original trace's name and coverage. So a member that merely *looks* like provenance, such
//! as `"kernlens": {}` or one missing its `source_*` fields, must not make a trace a chunk:
//! it is ignored, and the reader says why in `stream_errors`.

use serde_json::{Map, Value};

use crate::report::{ChunkProvenance, ChunkWindow, GraphCoverage};

/// The schema a chunk's member carries.
pub(crate) const CHUNK_SCHEMA: &str = "kernlens.chunk/1";

/// The provenance in the raw JSON value of a top-level `kernlens` member, or why it is not
/// one: it must be an object with `schema` `kernlens.chunk/1`, a non-empty `source_file`,
/// a `window` of two finite µs values in order, and a `source_graph` holding every count
/// of trace.md "Graph launches and coverage" with consistent values.
pub(crate) fn parse(raw: &[u8]) -> Result<ChunkProvenance, String> {
    let value: Value = serde_json::from_slice(raw).map_err(|e| format!("not valid JSON ({e})"))?;
    let Value::Object(member) = value else {
        return Err("not a JSON object".into());
    };
    match member.get("schema") {
        Some(Value::String(s)) if s == CHUNK_SCHEMA => {}
        Some(other) => return Err(format!("schema is {other}, not \"{CHUNK_SCHEMA}\"")),
        None => return Err("no schema".into()),
    }
    let source_file = match member.get("source_file") {
        Some(Value::String(s)) if !s.is_empty() => s.clone(),
        Some(_) => return Err("source_file is not a non-empty string".into()),
        None => return Err("no source_file".into()),
    };
    let window = window(member.get("window"))?;
    let source_graph = source_graph(member.get("source_graph"))?;
    Ok(ChunkProvenance {
        schema: CHUNK_SCHEMA.to_string(),
        source_file,
        window: Some(window),
        source_graph: Some(source_graph),
    })
}

/// The object member `name`, or why it is missing or not an object.
fn object<'v>(value: Option<&'v Value>, name: &str) -> Result<&'v Map<String, Value>, String> {
    match value {
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(format!("{name} is not an object")),
        None => Err(format!("no {name}")),
    }
}

fn window(value: Option<&Value>) -> Result<ChunkWindow, String> {
    let w = object(value, "window")?;
    let bound = |key: &str| {
        w.get(key)
            .and_then(Value::as_f64)
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("window.{key} is not a finite number"))
    };
    let (start_us, end_us) = (bound("start_us")?, bound("end_us")?);
    if end_us < start_us {
        return Err(format!(
            "window ends ({end_us}) before it starts ({start_us})"
        ));
    }
    Ok(ChunkWindow { start_us, end_us })
}

fn source_graph(value: Option<&Value>) -> Result<GraphCoverage, String> {
    let g = object(value, "source_graph")?;
    let count = |key: &str| {
        g.get(key)
            .and_then(Value::as_u64)
            .ok_or_else(|| format!("source_graph.{key} is not a count"))
    };
    let launches = count("launches")?;
    let with_kernels = count("launches_with_kernels")?;
    count("graph_kernels")?;
    if !matches!(g.get("under_recorded"), Some(Value::Bool(_))) {
        return Err("source_graph.under_recorded is not a boolean".into());
    }
    match g.get("coverage") {
        Some(Value::Null) if launches == 0 => {}
        Some(Value::Number(n))
            if launches > 0 && n.as_f64().is_some_and(|c| (0.0..=1.0).contains(&c)) => {}
        _ => {
            return Err(
                "source_graph.coverage is not null (no launches) or a share in 0..=1".into(),
            );
        }
    }
    if with_kernels > launches {
        return Err(format!(
            "source_graph has {with_kernels} launches with kernels out of {launches}"
        ));
    }
    serde_json::from_value(Value::Object(Map::clone(g)))
        .map_err(|e| format!("source_graph is malformed ({e})"))
}

/// Reads the `kernlens` member of the top-level object, if it precedes `traceEvents`.
pub(crate) fn prefix_member<'a>(prefix: &'a [u8], member: &str) -> Option<&'a [u8]> {
    let m = crate::json::find_prefix_member(prefix, member)?;
    prefix.get(m.value.0..m.value.1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const GOOD: &str = r#"{"schema":"kernlens.chunk/1","source_file":"t.json",
        "window":{"start_us":1.0,"end_us":2.5},
        "source_graph":{"launches":8,"launches_with_kernels":1,"coverage":0.125,
                        "graph_kernels":12,"under_recorded":true,"launch_api":"runtime"}}"#;

    fn with(key: &str, value: &str) -> String {
        let mut v: Value = serde_json::from_str(GOOD).unwrap();
        match serde_json::from_str::<Value>(value) {
            Ok(x) => v[key] = x,
            Err(_) => {
                v.as_object_mut().unwrap().remove(key);
            }
        }
        v.to_string()
    }

    #[test]
    fn a_chunk_member_written_by_split_is_honoured() {
        let p = parse(GOOD.as_bytes()).unwrap();
        assert_eq!(p.source_file, "t.json");
        assert_eq!(p.window.unwrap().end_us, 2.5);
        let g = p.source_graph.unwrap();
        assert_eq!(
            (g.launches, g.launches_with_kernels, g.graph_kernels),
            (8, 1, 12)
        );
        assert!(g.under_recorded);
    }

    #[test]
    fn an_empty_or_foreign_member_is_not_provenance() {
        for (raw, why) in [
            ("{}", "no schema"),
            ("[]", "not a JSON object"),
            (
                "{\"schema\":\"kernlens.chunk/2\"}",
                "not \"kernlens.chunk/1\"",
            ),
            ("{\"schema\":\"kernlens.chunk/1\"}", "no source_file"),
            ("{", "not valid JSON"),
        ] {
            let err = parse(raw.as_bytes()).unwrap_err();
            assert!(err.contains(why), "{raw}: {err}");
        }
    }

    #[test]
    fn every_source_field_and_the_window_must_be_present_and_typed() {
        for (key, value, why) in [
            ("source_file", "-", "no source_file"),
            (
                "source_file",
                "\"\"",
                "source_file is not a non-empty string",
            ),
            ("source_graph", "-", "no source_graph"),
            ("source_graph", "{}", "source_graph.launches is not a count"),
            ("source_graph", "7", "source_graph is not an object"),
            ("window", "-", "no window"),
            (
                "window",
                "{\"start_us\":3,\"end_us\":1}",
                "ends (1) before it starts (3)",
            ),
            (
                "window",
                "{\"start_us\":\"a\",\"end_us\":1}",
                "window.start_us",
            ),
        ] {
            let err = parse(with(key, value).as_bytes()).unwrap_err();
            assert!(err.contains(why), "{key}={value}: {err}");
        }
    }

    #[test]
    fn inconsistent_source_graph_counts_are_refused() {
        for graph in [
            r#"{"launches":1,"launches_with_kernels":2,"coverage":1.0,"graph_kernels":0,"under_recorded":false}"#,
            r#"{"launches":0,"launches_with_kernels":0,"coverage":0.5,"graph_kernels":0,"under_recorded":false}"#,
            r#"{"launches":2,"launches_with_kernels":1,"coverage":null,"graph_kernels":0,"under_recorded":false}"#,
            r#"{"launches":2,"launches_with_kernels":1,"coverage":0.5,"graph_kernels":-1,"under_recorded":false}"#,
            r#"{"launches":2,"launches_with_kernels":1,"coverage":0.5,"graph_kernels":1,"under_recorded":"no"}"#,
            r#"{"launches":2,"launches_with_kernels":1,"coverage":0.5,"graph_kernels":1,"under_recorded":false,"launch_api":"warp"}"#,
        ] {
            assert!(
                parse(with("source_graph", graph).as_bytes()).is_err(),
                "{graph}"
            );
        }
    }
}
