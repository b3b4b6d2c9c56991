//! The CLI's locate documents: `kernlens.locate/1` (roots and one result per name) and
//! `kernlens.locate.keywords/1` (the keyword plans of `--dump-keywords`), built here so the
//! command line never assembles a schema itself (docs/design/cli.md).

use serde::Serialize;

use crate::{KeywordPlan, LocateResult, SearchRoot};

/// Schema tag of [`LocateDocument`].
pub const LOCATE_SCHEMA: &str = "kernlens.locate/1";
/// Schema tag of [`KeywordsDocument`].
pub const KEYWORDS_SCHEMA: &str = "kernlens.locate.keywords/1";

/// `{"schema":"kernlens.locate/1","roots":[…],"results":[…]}`.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct LocateDocument<'a> {
    /// Always [`LOCATE_SCHEMA`].
    pub schema: &'static str,
    /// The search roots, in order.
    pub roots: &'a [SearchRoot],
    /// One result per name, in the order asked.
    pub results: &'a [LocateResult],
}

impl<'a> LocateDocument<'a> {
    /// The document over one batch's roots and results.
    pub fn new(roots: &'a [SearchRoot], results: &'a [LocateResult]) -> Self {
        LocateDocument {
            schema: LOCATE_SCHEMA,
            roots,
            results,
        }
    }
}

/// `{"schema":"kernlens.locate.keywords/1","plans":[…]}`.
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct KeywordsDocument<'a> {
    /// Always [`KEYWORDS_SCHEMA`].
    pub schema: &'static str,
    /// One plan per name.
    pub plans: &'a [KeywordPlan],
}

impl<'a> KeywordsDocument<'a> {
    /// The document over `plans`.
    pub fn new(plans: &'a [KeywordPlan]) -> Self {
        KeywordsDocument {
            schema: KEYWORDS_SCHEMA,
            plans,
        }
    }
}
