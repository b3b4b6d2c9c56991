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
    /// Thresholds from two numbers; a negative or non-finite value falls back
    /// to its default, as an environment value would.
    pub fn new(idle_pct: f64, min_compute_pct: f64) -> Self {
        Thresholds {
            idle_pct: valid_pct(idle_pct).unwrap_or(DEFAULT_IDLE_THRESHOLD_PCT),
            min_compute_pct: valid_pct(min_compute_pct).unwrap_or(DEFAULT_MIN_COMPUTE_PCT),
        }
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
        let idle = lookup(IDLE_THRESHOLD_ENV);
        let min_compute = lookup(MIN_COMPUTE_ENV);
        Self::from_env_values(idle.as_deref(), min_compute.as_deref())
    }
}

/// The value of one threshold variable, or `None` when it must fall back to
/// the default: unset, blank, unparseable, negative, NaN or infinite.
pub fn parse_threshold(raw: Option<&str>) -> Option<f64> {
    raw.and_then(|text| text.trim().parse::<f64>().ok())
        .and_then(valid_pct)
}

fn valid_pct(value: f64) -> Option<f64> {
    (value.is_finite() && value >= 0.0).then_some(value)
}
