//! The progress fingerprint: a digest that changes exactly when the lane's
//! observable progress does.

use std::collections::BTreeMap;

use serde::Serialize;
use sha2::{Digest, Sha256};

/// What counts as the lane's progress: records (one string tuple per unit of
/// work, e.g. a ledger attempt) and named fields. Measurements that wobble
/// without progress (a last speedup) belong outside it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct ProgressSnapshot {
    /// One tuple per unit of work; order does not matter.
    pub records: Vec<Vec<String>>,
    /// Named values; digested by key.
    pub fields: BTreeMap<String, String>,
}

impl ProgressSnapshot {
    /// A snapshot from its parts.
    pub fn new(records: Vec<Vec<String>>, fields: BTreeMap<String, String>) -> Self {
        ProgressSnapshot { records, fields }
    }
}

#[derive(Serialize)]
struct Canonical<'a> {
    fields: &'a BTreeMap<String, String>,
    in_flight: Vec<&'a str>,
    records: Vec<&'a Vec<String>>,
}

/// The first 32 lowercase hex characters of the SHA-256 of the canonical
/// compact JSON `{"fields":{..},"in_flight":[..],"records":[[..],..]}`, with
/// records and ids sorted so order never matters.
pub fn fingerprint<S: AsRef<str>>(snapshot: &ProgressSnapshot, in_flight_ids: &[S]) -> String {
    let mut in_flight: Vec<&str> = in_flight_ids.iter().map(AsRef::as_ref).collect();
    in_flight.sort_unstable();
    let mut records: Vec<&Vec<String>> = snapshot.records.iter().collect();
    records.sort_unstable();
    let canonical = Canonical {
        fields: &snapshot.fields,
        in_flight,
        records,
    };
    // Serialising strings, string maps and lists into a Vec cannot fail; the
    // empty fallback still yields a stable digest rather than a panic.
    let bytes = serde_json::to_vec(&canonical).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    digest
        .iter()
        .take(16)
        .map(|byte| format!("{byte:02x}"))
        .collect()
}
