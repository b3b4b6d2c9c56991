//! The third-party traces' kernel names (TraceLens's and HTA's test data, not
//! redistributed here) against the reviewed key table. They run when
//! `KERNLENS_PUBLIC_TRACES` names the directory holding them (`.ci/run` sets it);
//! otherwise each test prints why it skipped.

mod support;

use support::{PublicTraces, assert_table_lists_kernel_names_of, public_traces};

type TestResult = Result<(), Box<dyn std::error::Error>>;

#[test]
fn the_table_lists_every_kernel_name_of_the_public_traces() -> TestResult {
    let Some(public) = PublicTraces::get("the_table_lists_every_kernel_name_of_the_public_traces")
    else {
        return Ok(());
    };
    let files = public_traces(public)?;
    assert!(
        !files.is_empty(),
        "no *.json.gz in {}",
        public.dir().display()
    );
    assert_table_lists_kernel_names_of(&files)
}
