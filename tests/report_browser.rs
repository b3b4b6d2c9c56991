//! The report page in a real browser: headless Chromium renders the page of a bundled
//! real capture to a PNG, and the picture must show a timeline with both busy and idle
//! columns, and with the browser's dark preference the dark colours only. Without
//! Chromium (`apt-get install -y chromium`; `.ci/run` installs it) each test prints
//! `skipped: …` with the reason and passes; nothing else skips them.
//!
//! `KERNLENS_REPORT_SCREENSHOT=docs/report.png` also keeps the PNG there: the README's
//! screenshot is made by this same path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/trace_files.rs"]
mod trace_files;

use std::path::{Path, PathBuf};
use std::process::Command;

use trace_files::fixture;

/// The page's light-scheme colours of computation and idle (svg.rs `STYLE`).
const COMPUTE: [u8; 3] = [0x2f, 0x6f, 0xdb];
const IDLE: [u8; 3] = [0xec, 0xef, 0xf3];
/// The same two in the dark scheme.
const DARK_COMPUTE: [u8; 3] = [0x5b, 0x95, 0xf5];
const DARK_IDLE: [u8; 3] = [0x26, 0x2c, 0x35];

fn chromium() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("KERNLENS_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

fn near(px: &[u8], want: [u8; 3]) -> bool {
    px.iter().zip(want).all(|(&a, b)| a.abs_diff(b) <= 3)
}

struct Picture {
    width: usize,
    height: usize,
    rgb: Vec<[u8; 3]>,
}

fn decode(path: &Path) -> Picture {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = match info.color_type {
        png::ColorType::Rgb => 3,
        png::ColorType::Rgba => 4,
        other => panic!("unexpected PNG colour type {other:?}"),
    };
    assert_eq!(info.bit_depth, png::BitDepth::Eight);
    let rgb = buf[..info.buffer_size()]
        .chunks(channels)
        .map(|c| [c[0], c[1], c[2]])
        .collect();
    Picture {
        width: info.width as usize,
        height: info.height as usize,
        rgb,
    }
}

/// Renders `page` with headless Chromium into `png`, `width`×`height` CSS px, with
/// `extra` flags.
fn screenshot(
    browser: &Path,
    page: &Path,
    png: &Path,
    (width, height): (u32, u32),
    extra: &[&str],
) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--force-color-profile=srgb",
            "--no-first-run",
            "--disable-extensions",
        ])
        .args(extra)
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        png.is_file(),
        "chromium wrote no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn chromium_renders_a_timeline_with_busy_and_idle_columns() {
    let Some(browser) = chromium() else {
        eprintln!(
            "skipped: chromium_renders_a_timeline_with_busy_and_idle_columns: no Chromium at \
             /usr/bin/chromium (install it with `apt-get install -y chromium`, or set \
             KERNLENS_CHROMIUM)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let shot = dir.path().join("report.png");
    // The trace named from the repository root, as a reader of the README would.
    assert!(fixture("eager.json.gz").is_file());
    let o = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .current_dir(trace_files::repo_root())
        .args(["report", "fixtures/traces/eager.json.gz", "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    screenshot(&browser, &page, &shot, (1280, 720), &[]);
    let pic = decode(&shot);
    assert_eq!((pic.width, pic.height), (1280, 720));

    // Not blank: a page of text, bars and a timeline has many colours.
    let mut colours: Vec<[u8; 3]> = pic.rgb.clone();
    colours.sort_unstable();
    colours.dedup();
    assert!(colours.len() > 50, "only {} colours", colours.len());

    // The timeline region: the rows holding computation-coloured pixels (nothing else on
    // the page uses that colour). Within them there must be busy and idle columns.
    let rows: Vec<usize> = (0..pic.height)
        .filter(|&y| (0..pic.width).any(|x| near(&pic.rgb[y * pic.width + x], COMPUTE)))
        .collect();
    assert!(!rows.is_empty(), "no busy pixel in the screenshot");
    let (top, bottom) = (rows[0], rows[rows.len() - 1]);
    let region = |want: [u8; 3]| {
        (top..=bottom)
            .flat_map(|y| (0..pic.width).map(move |x| (x, y)))
            .filter(|&(x, y)| near(&pic.rgb[y * pic.width + x], want))
            .count()
    };
    let (busy, idle) = (region(COMPUTE), region(IDLE));
    assert!(busy > 500, "{busy} busy pixels");
    assert!(idle > 500, "{idle} idle pixels");
    // eager is 74% idle: the idle background outweighs the busy columns.
    assert!(idle > busy, "{idle} idle vs {busy} busy pixels");

    if let Some(keep) = std::env::var_os("KERNLENS_REPORT_SCREENSHOT") {
        let keep = trace_files::repo_root().join(keep);
        std::fs::copy(&shot, &keep).unwrap();
        eprintln!("kept the screenshot as {}", keep.display());
    }
}

#[test]
fn chromium_draws_the_dark_scheme_when_the_browser_prefers_it() {
    let Some(browser) = chromium() else {
        eprintln!(
            "skipped: chromium_draws_the_dark_scheme_when_the_browser_prefers_it: no Chromium \
             at /usr/bin/chromium (install it with `apt-get install -y chromium`, or set \
             KERNLENS_CHROMIUM)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let shot = dir.path().join("dark.png");
    let o = Command::new(env!("CARGO_BIN_EXE_kernlens"))
        .args(["report", fixture("graph.json.gz").to_str().unwrap(), "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    screenshot(&browser, &page, &shot, (1280, 600), &["--force-dark-mode"]);
    let pic = decode(&shot);
    let count = |want: [u8; 3]| pic.rgb.iter().filter(|p| near(&p[..], want)).count();
    assert!(
        count(DARK_COMPUTE) > 500,
        "{} dark compute pixels",
        count(DARK_COMPUTE)
    );
    assert!(
        count(DARK_IDLE) > 50,
        "{} dark idle pixels",
        count(DARK_IDLE)
    );
    assert_eq!(count(COMPUTE), 0, "light compute colour in the dark scheme");
    assert_eq!(count(IDLE), 0, "light idle colour in the dark scheme");
}
