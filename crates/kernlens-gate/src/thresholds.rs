//! The two gate thresholds and how they are read from environment values.

use serde::Serialize;

/// Environment variable that overrides [`Thresholds::idle_pct`].
pub const IDLE_THRESHOLD_ENV: &str = "KERNLENS_IDLE_THRESHOLD_PCT";
/// Environment variable that overrides [`Thresholds::min_compute_pct`].
pub const MIN_COMPUTE_ENV: &str = "KERNLENS_MIN_COMPUTE_PCT";
/// Default high-idle threshold, in percent of trace wall time.
pub const DEFAULT_IDLE_THRESHOLD_PCT: f64 = 80.0;
/// Default low-compute threshold, in percent of trace wall time.
pub const DEFAULT_MIN_COMPUTE_PCT: f64 = 10.0;

/// The thresholds both gates apply.
///
/// The high-idle gate fires when `idle_pct > self.idle_pct` and the
/// low-compute gate when `compute_pct < self.min_compute_pct`, both strict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Thresholds {
    /// High-idle threshold in percent (0..=100). `0` means any idle triggers.
    pub idle_pct: f64,
    /// Low-compute threshold in percent (0..=100). `0` means never low.
    pub min_compute_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Self {
        Thresholds {
            idle_pct: DEFAULT_IDLE_THRESHOLD_PCT,
            min_compute_pct: DEFAULT_MIN_COMPUTE_PCT,
        }
    }
}

impl Thresholds {
    /// Thresholds from two numbers; a value outside 0..=100 or not finite falls back to
    /// its default, as an environment value would.
    pub fn new(idle_pct: f64, min_compute_pct: f64) -> Self {
        Thresholds {
            idle_pct: valid_pct(idle_pct).unwrap_or(DEFAULT_IDLE_THRESHOLD_PCT),
            min_compute_pct: valid_pct(min_compute_pct).unwrap_or(DEFAULT_MIN_COMPUTE_PCT),
        }
    }

    /// The same thresholds with a high-idle threshold; a value outside 0..=100 or not finite
    /// falls back to its default, as in [`Thresholds::new`].
    pub fn with_idle_pct(mut self, idle_pct: f64) -> Self {
        self.idle_pct = valid_pct(idle_pct).unwrap_or(DEFAULT_IDLE_THRESHOLD_PCT);
        self
    }

    /// The same thresholds with a low-compute threshold; a value outside 0..=100 or not
    /// finite falls back to its default, as in [`Thresholds::new`].
    pub fn with_min_compute_pct(mut self, min_compute_pct: f64) -> Self {
        self.min_compute_pct = valid_pct(min_compute_pct).unwrap_or(DEFAULT_MIN_COMPUTE_PCT);
        self
    }

    /// Thresholds from the raw text of [`IDLE_THRESHOLD_ENV`] and
    /// [`MIN_COMPUTE_ENV`] (`None` when unset). The caller reads the
    /// environment; this crate never does, so it behaves alike in every process.
    pub fn from_env_values(idle: Option<&str>, min_compute: Option<&str>) -> Self {
        Thresholds {
            idle_pct: parse_threshold(idle).unwrap_or(DEFAULT_IDLE_THRESHOLD_PCT),
            min_compute_pct: parse_threshold(min_compute).unwrap_or(DEFAULT_MIN_COMPUTE_PCT),
        }
    }

    /// Thresholds from a name → value lookup, called once per variable at
    /// call time; the CLI passes `|name| std::env::var(name).ok()`.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        Self::from_lookup_checked(lookup).0
    }

    /// [`Thresholds::from_lookup`], also saying which values were set but unusable (and so
    /// replaced by their default), for the caller to report. Unset and blank values fall back
    /// silently: a blank variable is the usual way of unsetting one.
    pub fn from_lookup_checked(
        lookup: impl Fn(&str) -> Option<String>,
    ) -> (Self, Vec<EnvFallback>) {
        let mut fallbacks = Vec::new();
        let mut read = |variable: &'static str, default: f64| {
            let Some(raw) = lookup(variable).filter(|raw| !raw.trim().is_empty()) else {
                return default;
            };
            parse_pct(&raw).unwrap_or_else(|problem| {
                fallbacks.push(EnvFallback {
                    variable,
                    value: raw,
                    problem,
                    default,
                });
                default
            })
        };
        let thresholds = Thresholds {
            idle_pct: read(IDLE_THRESHOLD_ENV, DEFAULT_IDLE_THRESHOLD_PCT),
            min_compute_pct: read(MIN_COMPUTE_ENV, DEFAULT_MIN_COMPUTE_PCT),
        };
        (thresholds, fallbacks)
    }
}

/// Why a threshold text is not a usable percentage.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ThresholdProblem {
    /// Not a plain decimal number (`abc`, `30%`, blank), or NaN / infinite.
    #[error("not a number")]
    NotANumber,
    /// A number outside 0..=100.
    #[error("{0} is outside 0..=100")]
    OutOfRange(f64),
}

/// An environment threshold that was set but unusable, so its default applies instead.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct EnvFallback {
    /// The variable, e.g. [`IDLE_THRESHOLD_ENV`].
    pub variable: &'static str,
    /// Its raw value.
    pub value: String,
    /// What is wrong with it.
    pub problem: ThresholdProblem,
    /// The default used instead.
    pub default: f64,
}

impl std::fmt::Display for EnvFallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}={:?} ignored ({}); using the default {}",
            self.variable, self.value, self.problem, self.default
        )
    }
}

/// A percentage threshold from text: surrounding whitespace is trimmed, and the number must
/// be finite and within 0..=100 (`0` means "any idle triggers" / "never low").
pub fn parse_pct(text: &str) -> Result<f64, ThresholdProblem> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| ThresholdProblem::NotANumber)?;
    if !value.is_finite() {
        return Err(ThresholdProblem::NotANumber);
    }
    valid_pct(value).ok_or(ThresholdProblem::OutOfRange(value))
}

/// The value of one threshold variable, or `None` when it must fall back to
/// the default: unset, blank, unparseable, outside 0..=100, NaN or infinite.
pub fn parse_threshold(raw: Option<&str>) -> Option<f64> {
    parse_pct(raw?).ok()
}

fn valid_pct(value: f64) -> Option<f64> {
    (value.is_finite() && (0.0..=100.0).contains(&value)).then_some(value)
}
