//! Dependency-free SVG charts for the report (bench/results/*.svg).
//!
//! The files are looked at on GitHub and in browsers, so each one stands
//! alone: no scripts, no external fonts (a system sans-serif stack), an
//! opaque white background (on GitHub's dark theme a transparent chart would
//! put dark text on a dark page), `width`/`height`/`viewBox` set, and all
//! text XML-escaped. There are no font metrics here: text widths are
//! estimated from character counts, generously, which is enough for layout.
//!
//! Two kinds of chart: [`bar_chart`] (one horizontal bar per server, e.g.
//! req/s) and [`line_chart`] (e.g. p99 latency against concurrency). Values
//! that are NaN or infinite are left out rather than drawn; when nothing is
//! left the chart says "no data".

use std::fmt::Write;

/// One bar of a [`bar_chart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Bar {
    pub label: String,
    pub value: f64,
    /// Lower end of the range whisker (e.g. the slowest round), if any.
    pub min: Option<f64>,
    /// Upper end of the range whisker, if any.
    pub max: Option<f64>,
    /// Drawn in Cove's colour with a bold label.
    pub highlight: bool,
}

/// One line of a [`line_chart`]: `(x, y)` points, drawn in x order.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    /// Drawn in Cove's colour, thicker, on top, with value labels.
    pub highlight: bool,
}

const FONT: &str = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, sans-serif";
const WIDTH: f64 = 760.0;
const MARGIN: f64 = 16.0;
const TEXT: &str = "#1f2328";
const GRID: &str = "#e6e8eb";
const AXIS: &str = "#8c959f";
const BAR: &str = "#7b93b3";
/// Cove's colours: the first highlighted series gets the first, and so on.
const COVE: [&str; 3] = ["#e8590c", "#c2255c", "#f59f00"];
/// The other series' colours (no orange, so Cove stands out).
const PALETTE: [&str; 8] = [
    "#4e79a7", "#59a14f", "#b07aa1", "#76b7b2", "#9c755f", "#edc948", "#e15759", "#bab0ac",
];
/// Labels longer than this many characters are cut (the full text stays in
/// a `<title>` tooltip).
const LABEL_CHARS: usize = 40;

/// Text with `& < > " '` escaped and the characters XML 1.0 forbids dropped.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(' '),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// Estimated width in px of `s` at font size `size` (sans-serif glyphs
/// average a little over half the font size; this errs wide).
fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * size * 0.6
}

/// `s` cut to `max` characters with an ellipsis.
fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

/// A coordinate: one decimal, no trailing `.0`, never NaN.
fn c(v: f64) -> String {
    if !v.is_finite() {
        return "0".to_string();
    }
    let s = format!("{v:.1}");
    let s = s.strip_suffix(".0").unwrap_or(&s);
    if s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// `1234567` → `1,234,567`.
fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let lead = match digits.len() % 3 {
        0 => 3,
        r => r,
    };
    let mut out = digits[..lead].to_string();
    let mut i = lead;
    while i < digits.len() {
        out.push(',');
        out.push_str(&digits[i..i + 3]);
        i += 3;
    }
    out
}

/// A value label: `117,389`, `842`, `12.3`, `1.25`, `0.0123`.
pub fn human(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".to_string();
    }
    let sign = if v < 0.0 { "-" } else { "" };
    let a = v.abs();
    let body = if a >= 999.5 {
        group_thousands(a.round() as u64)
    } else if a >= 99.95 {
        format!("{a:.0}")
    } else if a >= 9.995 {
        let t = format!("{a:.1}");
        t.strip_suffix(".0").unwrap_or(&t).to_string()
    } else if a >= 1.0 || a == 0.0 {
        format!("{a:.2}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    } else {
        // Three significant digits.
        let decimals = (2 - a.log10().floor() as i32).clamp(0, 12) as usize;
        format!("{a:.decimals$}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    };
    if body == "0" {
        body
    } else {
        format!("{sign}{body}")
    }
}

/// Round tick values from 0 up to at least `max`, about `target` steps of
/// 1, 2, 2.5 or 5 × 10^k (117,389 → 0, 25k, …, 125k). A `max` that is not
/// a positive finite number is taken as 1.
pub fn ticks(max: f64, target: usize) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 {
        max
    } else {
        1.0
    };
    let raw = max / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    if !(step.is_finite() && step > 0.0) {
        return vec![0.0, max];
    }
    let n = ((max / step) - 1e-9).ceil().clamp(1.0, 100.0) as usize;
    let out: Vec<f64> = (0..=n).map(|i| i as f64 * step).collect();
    if out.iter().all(|t| t.is_finite()) {
        out
    } else {
        vec![0.0, max]
    }
}

/// Labels for `ticks` (as from [`ticks`]): `0 25k 50k …`, `0 0.5M 1M 1.5M`,
/// `0 2,000 4,000`, `0 0.25 0.5`. The largest tick picks the unit (k from
/// 10,000, M from 10^6, G from 10^9), so an axis uses one unit throughout;
/// the step picks the decimals, trailing zeros are dropped.
pub fn tick_labels(ticks: &[f64]) -> Vec<String> {
    let top = ticks.iter().fold(0.0, |m: f64, t| m.max(t.abs()));
    let step = ticks
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .filter(|s| *s > 0.0)
        .fold(f64::INFINITY, f64::min);
    let (scale, suffix) = if top >= 1e9 {
        (1e9, "G")
    } else if top >= 1e6 {
        (1e6, "M")
    } else if top >= 1e4 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let s = if step.is_finite() { step / scale } else { 1.0 };
    let decimals = (0..=9)
        .find(|&d| {
            let m = s * 10f64.powi(d);
            (m - m.round()).abs() < 1e-6 * m.max(1.0)
        })
        .unwrap_or(9) as usize;
    ticks
        .iter()
        .map(|&t| {
            let x = t / scale;
            let mut text = if decimals == 0 && x.abs() >= 1000.0 && x.abs() < 1e15 {
                let grouped = group_thousands(x.abs().round() as u64);
                if x < 0.0 {
                    format!("-{grouped}")
                } else {
                    grouped
                }
            } else {
                format!("{x:.decimals$}")
            };
            if text.contains('.') {
                text = text.trim_end_matches('0').trim_end_matches('.').to_string();
            }
            if text == "-0" || text == "0" {
                return "0".to_string();
            }
            format!("{text}{suffix}")
        })
        .collect()
}

// Text styles (attributes of `<text>`).
const TITLE: &str = r#"font-size="16" font-weight="600""#;
const NOTE: &str = r##"font-size="14" text-anchor="middle" fill="#59636e""##;
const TICK: &str = r##"font-size="11" text-anchor="middle" fill="#59636e""##;
const TICK_Y: &str = r##"font-size="11" text-anchor="end" fill="#59636e""##;
const CAPTION: &str = r##"font-size="12" text-anchor="middle" fill="#59636e""##;
/// Bar labels, right-aligned against the axis.
const LABEL: [&str; 2] = [
    r#"font-size="13" text-anchor="end""#,
    r#"font-size="13" text-anchor="end" font-weight="600""#,
];
/// Value labels and legend entries, left-aligned.
const VALUE: [&str; 2] = [r#"font-size="12""#, r#"font-size="12" font-weight="600""#];

/// `<text>` at `(x, y)` (baseline) with `style` attributes.
fn text(out: &mut String, (x, y): (f64, f64), style: &str, content: &str) {
    let _ = writeln!(
        out,
        r#"<text x="{}" y="{}" {style}>{}</text>"#,
        c(x),
        c(y),
        escape(content)
    );
}

fn line(out: &mut String, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, width: f64) {
    let _ = writeln!(
        out,
        r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{stroke}" stroke-width="{width}"/>"#,
        c(x1),
        c(y1),
        c(x2),
        c(y2)
    );
}

/// The `<svg>` element with background, accessible title and chart title.
fn open(out: &mut String, title: &str, height: f64) {
    let h = c(height);
    let w = c(WIDTH);
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}" fill="{TEXT}" role="img">"#
    );
    let _ = writeln!(out, "<title>{}</title>", escape(title));
    let _ = writeln!(
        out,
        r##"<rect width="100%" height="100%" fill="#ffffff"/>"##
    );
    let shown = truncate(title, 90);
    text(out, (MARGIN, 28.0), TITLE, &shown);
}

fn no_data(title: &str) -> String {
    let mut out = String::new();
    open(&mut out, title, 120.0);
    text(&mut out, (WIDTH / 2.0, 80.0), NOTE, "no data");
    out.push_str("</svg>\n");
    out
}

/// Horizontal bars in the given order, scaled from 0, with value labels,
/// optional min–max whiskers and a round-numbered axis captioned `unit`.
/// Bars whose value is NaN or infinite are left out (a non-finite whisker
/// end is ignored); negative values get a label but no bar.
pub fn bar_chart(title: &str, unit: &str, bars: &[Bar]) -> String {
    let bars: Vec<&Bar> = bars.iter().filter(|b| b.value.is_finite()).collect();
    if bars.is_empty() {
        return no_data(title);
    }
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    let top_value = bars
        .iter()
        .flat_map(|b| [Some(b.value), finite(b.min), finite(b.max)])
        .flatten()
        .fold(0.0, f64::max);
    let ticks = ticks(top_value, 5);
    let top = *ticks.last().unwrap_or(&1.0);
    let tick_text = tick_labels(&ticks);

    let labels: Vec<String> = bars
        .iter()
        .map(|b| truncate(&b.label, LABEL_CHARS))
        .collect();
    let values: Vec<String> = bars.iter().map(|b| human(b.value)).collect();
    let label_w = labels
        .iter()
        .map(|l| text_width(l, 13.0))
        .fold(40.0, f64::max);
    let value_w = values
        .iter()
        .map(|v| text_width(v, 12.0))
        .fold(0.0, f64::max);
    let x0 = MARGIN + label_w + 10.0;
    let x1 = (WIDTH - MARGIN - value_w - 8.0).max(x0 + 100.0);
    let scale = |v: f64| x0 + (v.clamp(0.0, top) / top) * (x1 - x0);

    let (row_h, bar_h, plot_top) = (30.0, 18.0, 48.0);
    let plot_bottom = plot_top + bars.len() as f64 * row_h;
    let height = plot_bottom + if unit.is_empty() { 34.0 } else { 52.0 };

    let mut out = String::new();
    open(&mut out, title, height);
    for (&t, label) in ticks.iter().zip(&tick_text) {
        let x = scale(t);
        let stroke = if t == 0.0 { AXIS } else { GRID };
        line(&mut out, (x, plot_top - 4.0), (x, plot_bottom), stroke, 1.0);
        text(&mut out, (x, plot_bottom + 16.0), TICK, label);
    }
    if !unit.is_empty() {
        text(
            &mut out,
            ((x0 + x1) / 2.0, plot_bottom + 38.0),
            CAPTION,
            unit,
        );
    }
    for (i, bar) in bars.iter().enumerate() {
        let y = plot_top + i as f64 * row_h + (row_h - bar_h) / 2.0;
        let mid = y + bar_h / 2.0;
        let bold = usize::from(bar.highlight);
        let _ = writeln!(out, "<g>");
        let _ = writeln!(
            out,
            "<title>{}: {}</title>",
            escape(&bar.label),
            escape(&values[i])
        );
        text(&mut out, (x0 - 8.0, mid + 4.5), LABEL[bold], &labels[i]);
        let fill = if bar.highlight { COVE[0] } else { BAR };
        let w = scale(bar.value) - x0;
        if w > 0.0 {
            let _ = writeln!(
                out,
                r#"<rect x="{}" y="{}" width="{}" height="{bar_h}" rx="2" fill="{fill}"/>"#,
                c(x0),
                c(y),
                c(w.max(1.0))
            );
        }
        let mut end = scale(bar.value);
        let (lo, hi) = (finite(bar.min), finite(bar.max));
        if lo.is_some() || hi.is_some() {
            let a = scale(lo.unwrap_or(bar.value));
            let b = scale(hi.unwrap_or(bar.value));
            line(&mut out, (a, mid), (b, mid), TEXT, 1.25);
            for x in [a, b] {
                line(&mut out, (x, mid - 4.0), (x, mid + 4.0), TEXT, 1.25);
            }
            end = end.max(a).max(b);
        }
        text(&mut out, (end + 6.0, mid + 4.0), VALUE[bold], &values[i]);
        let _ = writeln!(out, "</g>");
    }
    out.push_str("</svg>\n");
    out
}

/// The ticks of a log-scaled axis over `[lo, hi]`: the data's own x values
/// when there are few (concurrency 1, 10, 50, 200), else 1-2-5 × 10^k.
fn log_ticks(xs: &[f64], lo: f64, hi: f64) -> Vec<f64> {
    if xs.len() <= 12 {
        return xs.to_vec();
    }
    let mut out = Vec::new();
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi && out.len() < 60 {
        for m in [1.0, 2.0, 5.0] {
            let t = decade * m;
            if t >= lo * (1.0 - 1e-9) && t <= hi * (1.0 + 1e-9) {
                out.push(t);
            }
        }
        decade *= 10.0;
    }
    out
}

/// One coloured line with point markers per series, a legend on the right,
/// round y ticks from 0, and x on a log scale when `log_x` (then points
/// with x ≤ 0 are left out, like NaN and infinite ones). Highlighted series
/// are drawn last, thicker, with their values labelled.
pub fn line_chart(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_x: bool,
) -> String {
    let ok = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && (!log_x || x > 0.0);
    let lines: Vec<(&Series, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| {
            let mut pts: Vec<(f64, f64)> = s.points.iter().copied().filter(ok).collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (s, pts)
        })
        .filter(|(_, pts)| !pts.is_empty())
        .collect();
    if lines.is_empty() {
        return no_data(title);
    }
    // Colours follow the input order; drawing order puts Cove on top.
    let mut colours = Vec::new();
    let (mut cove, mut other) = (0, 0);
    for (s, _) in &lines {
        if s.highlight {
            colours.push(COVE[cove % COVE.len()]);
            cove += 1;
        } else {
            colours.push(PALETTE[other % PALETTE.len()]);
            other += 1;
        }
    }

    let all = || lines.iter().flat_map(|(_, p)| p.iter().copied());
    let (mut xlo, mut xhi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (x, _)| {
        (lo.min(x), hi.max(x))
    });
    let ymax = all().map(|(_, y)| y).fold(0.0, f64::max);
    let yticks = ticks(ymax, 5);
    let ytop = *yticks.last().unwrap_or(&1.0);
    let ylabels = tick_labels(&yticks);
    let mut xs: Vec<f64> = all().map(|(x, _)| x).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a - *b).abs() <= 1e-9 * b.abs().max(1e-300));
    let xticks = if log_x {
        if xlo == xhi {
            (xlo, xhi) = (xlo / 2.0, xhi * 2.0);
        }
        log_ticks(&xs, xlo, xhi)
    } else {
        let t = ticks(xhi.max(0.0), 6);
        xlo = xlo.min(0.0);
        xhi = *t.last().unwrap_or(&1.0);
        t
    };
    let xlabels = if log_x {
        xticks.iter().map(|&t| human(t)).collect()
    } else {
        tick_labels(&xticks)
    };

    let names: Vec<String> = lines.iter().map(|(s, _)| truncate(&s.name, 28)).collect();
    let legend_w = names
        .iter()
        .map(|n| text_width(n, 12.0))
        .fold(40.0, f64::max)
        + 30.0;
    let tick_w = ylabels
        .iter()
        .map(|t| text_width(t, 11.0))
        .fold(0.0, f64::max);
    let x0 = MARGIN + 20.0 + tick_w + 8.0;
    let x1 = WIDTH - MARGIN - legend_w - 12.0;
    let plot_top = 56.0;
    let plot_h = (lines.len() as f64 * 20.0).max(260.0);
    let plot_bottom = plot_top + plot_h;
    let height = plot_bottom + 52.0;
    // A 4% pad keeps the outermost markers off the plot's edges.
    let sx = |x: f64| {
        let f = if log_x {
            (x.ln() - xlo.ln()) / (xhi.ln() - xlo.ln())
        } else {
            (x - xlo) / (xhi - xlo)
        };
        let f = if f.is_finite() { f } else { 0.5 };
        x0 + (0.04 + 0.92 * f) * (x1 - x0)
    };
    let sy = |y: f64| plot_bottom - (y.clamp(0.0, ytop) / ytop) * plot_h;

    let mut out = String::new();
    open(&mut out, title, height);
    for (&t, label) in yticks.iter().zip(&ylabels) {
        let y = sy(t);
        let stroke = if t == 0.0 { AXIS } else { GRID };
        line(&mut out, (x0, y), (x1, y), stroke, 1.0);
        text(&mut out, (x0 - 6.0, y + 4.0), TICK_Y, label);
    }
    for (&t, label) in xticks.iter().zip(&xlabels) {
        let x = sx(t);
        line(&mut out, (x, plot_top), (x, plot_bottom), GRID, 1.0);
        text(&mut out, (x, plot_bottom + 16.0), TICK, label);
    }
    line(&mut out, (x0, plot_top), (x0, plot_bottom), AXIS, 1.0);
    let caption = if log_x {
        format!("{x_label} (log scale)")
    } else {
        x_label.to_string()
    };
    text(
        &mut out,
        ((x0 + x1) / 2.0, plot_bottom + 38.0),
        CAPTION,
        &caption,
    );
    let (ly, lx) = (MARGIN + 4.0, (plot_top + plot_bottom) / 2.0);
    let rotate = format!(r#"{CAPTION} transform="rotate(-90 {} {})""#, c(ly), c(lx));
    text(&mut out, (ly, lx), &rotate, y_label);

    // Legend, in input order.
    let lx0 = WIDTH - MARGIN - legend_w;
    for (i, (s, _)) in lines.iter().enumerate() {
        let y = plot_top + 6.0 + i as f64 * 20.0;
        line(&mut out, (lx0, y), (lx0 + 20.0, y), colours[i], 2.5);
        let _ = writeln!(
            out,
            r#"<circle cx="{}" cy="{}" r="3" fill="{}"/>"#,
            c(lx0 + 10.0),
            c(y),
            colours[i]
        );
        let bold = usize::from(s.highlight);
        text(&mut out, (lx0 + 28.0, y + 4.0), VALUE[bold], &names[i]);
    }

    // Lines: others first, Cove on top.
    let mut labels = Vec::new();
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| lines[i].0.highlight);
    for i in order {
        let (s, pts) = &lines[i];
        let colour = colours[i];
        let (width, r) = if s.highlight {
            (2.75, 4.0)
        } else {
            (1.75, 3.25)
        };
        let _ = writeln!(out, "<g>");
        let _ = writeln!(out, "<title>{}</title>", escape(&s.name));
        let coords: Vec<String> = pts
            .iter()
            .map(|&(x, y)| format!("{},{}", c(sx(x)), c(sy(y))))
            .collect();
        let _ = writeln!(
            out,
            r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-width="{width}" stroke-linejoin="round" stroke-linecap="round"/>"#,
            coords.join(" ")
        );
        for &(x, y) in pts {
            let _ = writeln!(
                out,
                r##"<circle cx="{}" cy="{}" r="{r}" fill="{colour}" stroke="#ffffff" stroke-width="1.5"><title>{}: {} → {}</title></circle>"##,
                c(sx(x)),
                c(sy(y)),
                escape(&s.name),
                escape(&human(x)),
                escape(&human(y))
            );
            if s.highlight {
                labels.push((sx(x), sy(y), colour, human(y)));
            }
        }
        let _ = writeln!(out, "</g>");
    }
    value_labels(&mut out, &labels, (plot_top, plot_bottom));
    out.push_str("</svg>\n");
    out
}

/// The highlighted series' value labels `(x, y, colour, text)`, above their
/// point or else below it, inside the plot's `(top, bottom)`; one that
/// would overlap a label already placed (two Cove series close together) is
/// left out, its value is still in the marker's tooltip.
fn value_labels(out: &mut String, labels: &[(f64, f64, &str, String)], (top, bottom): (f64, f64)) {
    let mut placed: Vec<(f64, f64, f64)> = Vec::new(); // (centre x, baseline, half width)
    for (x, y, colour, label) in labels {
        let half = text_width(label, 11.0) / 2.0 + 2.0;
        let free = |base: f64| {
            base - 10.0 >= top
                && base + 2.0 <= bottom
                && placed
                    .iter()
                    .all(|&(px, pb, ph)| (px - x).abs() >= ph + half || (pb - base).abs() >= 12.0)
        };
        let Some(base) = [y - 9.0, y + 17.0].into_iter().find(|&b| free(b)) else {
            continue;
        };
        placed.push((*x, base, half));
        let halo = format!(
            r##"font-size="11" text-anchor="middle" font-weight="600" fill="{colour}" stroke="#ffffff" stroke-width="3" paint-order="stroke""##
        );
        text(out, (*x, base), &halo, label);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tiny well-formedness check: every tag is closed in order, the root
    /// is a sized `<svg>`, and every `&` in text starts a known entity.
    fn check_xml(s: &str) {
        let body = s
            .strip_prefix(r#"<?xml version="1.0" encoding="UTF-8"?>"#)
            .expect("XML declaration")
            .trim_start();
        assert!(body.starts_with("<svg "), "root is not <svg>");
        let root_end = body.find('>').unwrap();
        for attr in ["width=\"", "height=\"", "viewBox=\"", "xmlns=\""] {
            assert!(body[..root_end].contains(attr), "root has no {attr}");
        }
        let mut stack: Vec<String> = Vec::new();
        let mut rest = body;
        let mut closed_root = false;
        while let Some(start) = rest.find('<') {
            check_text(&rest[..start]);
            assert!(
                !closed_root || rest[..start].trim().is_empty(),
                "content after </svg>"
            );
            let end = rest[start..].find('>').expect("unclosed tag") + start;
            let tag = &rest[start + 1..end];
            assert!(!tag.contains('<'), "'<' inside tag {tag:?}");
            if let Some(name) = tag.strip_prefix('/') {
                assert_eq!(
                    stack.pop().as_deref(),
                    Some(name.trim()),
                    "mismatched </{name}>"
                );
                closed_root = stack.is_empty();
            } else {
                let name: String = tag
                    .chars()
                    .take_while(|c| !c.is_whitespace() && *c != '/')
                    .collect();
                assert!(!name.is_empty(), "empty tag name");
                assert_eq!(
                    tag.matches('"').count() % 2,
                    0,
                    "unbalanced quotes in {tag:?}"
                );
                check_text(tag);
                if !tag.ends_with('/') {
                    stack.push(name);
                }
            }
            rest = &rest[end + 1..];
        }
        assert!(stack.is_empty(), "unclosed: {stack:?}");
        assert!(closed_root);
        assert!(rest.trim().is_empty());
        assert!(
            !s.contains("NaN") && !s.contains("inf"),
            "non-finite number in output"
        );
    }

    fn check_text(t: &str) {
        let mut rest = t;
        while let Some(i) = rest.find('&') {
            let after = &rest[i + 1..];
            let ok = ["amp;", "lt;", "gt;", "quot;", "apos;"]
                .iter()
                .any(|e| after.starts_with(e));
            assert!(ok, "bare & in {t:?}");
            rest = after;
        }
    }

    fn bar(label: &str, value: f64) -> Bar {
        Bar {
            label: label.to_string(),
            value,
            min: None,
            max: None,
            highlight: false,
        }
    }

    fn sample_bars() -> Vec<Bar> {
        vec![
            Bar {
                label: "Cove Lua (1 worker)".to_string(),
                value: 117_389.0,
                min: Some(110_748.0),
                max: Some(119_113.0),
                highlight: true,
            },
            Bar {
                label: "nginx <static> & friends".to_string(),
                value: 98_765.4,
                min: Some(97_000.0),
                max: None,
                highlight: false,
            },
            bar("express", 12_345.6),
        ]
    }

    #[test]
    fn ticks_are_round() {
        let t = ticks(117_389.0, 5);
        assert_eq!(t, [0.0, 25e3, 50e3, 75e3, 100e3, 125e3]);
        assert_eq!(ticks(100.0, 5), [0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(ticks(12.3, 5).last(), Some(&12.5));
        assert_eq!(ticks(0.8, 4), [0.0, 0.2, 0.4, 0.6000000000000001, 0.8]);
        assert_eq!(ticks(0.0, 5).last(), Some(&1.0));
        assert_eq!(ticks(f64::NAN, 5).last(), Some(&1.0));
        assert_eq!(ticks(-3.0, 5).last(), Some(&1.0));
        assert!(ticks(f64::MAX, 5).iter().all(|t| t.is_finite()));
        assert!(ticks(1e-320, 5).iter().all(|t| t.is_finite()));
    }

    #[test]
    fn tick_labels_are_short() {
        let labels = |max: f64| tick_labels(&ticks(max, 5)).join(" ");
        assert_eq!(labels(117_389.0), "0 25k 50k 75k 100k 125k");
        assert_eq!(labels(11_000.0), "0 2.5k 5k 7.5k 10k 12.5k");
        assert_eq!(labels(1_400_000.0), "0 0.5M 1M 1.5M");
        assert_eq!(labels(8_000.0), "0 2,000 4,000 6,000 8,000");
        assert_eq!(labels(0.8), "0 0.2 0.4 0.6 0.8");
        assert_eq!(labels(0.9), "0 0.2 0.4 0.6 0.8 1");
        assert_eq!(labels(3.0), "0 1 2 3");
        assert_eq!(labels(1.0), "0 0.2 0.4 0.6 0.8 1");
        assert!(tick_labels(&[]).is_empty());
    }

    #[test]
    fn human_values() {
        assert_eq!(human(117_389.4), "117,389");
        assert_eq!(human(1_000.0), "1,000");
        assert_eq!(human(842.3), "842");
        assert_eq!(human(12.34), "12.3");
        assert_eq!(human(10.0), "10");
        assert_eq!(human(1.25), "1.25");
        assert_eq!(human(2.0), "2");
        assert_eq!(human(0.012345), "0.0123");
        assert_eq!(human(0.0), "0");
        assert_eq!(human(-1_234.0), "-1,234");
        assert_eq!(human(f64::NAN), "n/a");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            escape(r#"a<b & "c" 'd'>"#),
            "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;"
        );
        assert_eq!(escape("x\u{1}y\nz"), "xy z");
    }

    #[test]
    fn bar_chart_is_well_formed_and_escaped() {
        let svg = bar_chart("req/s <hello> & co", "requests per second", &sample_bars());
        check_xml(&svg);
        assert!(svg.contains("req/s &lt;hello&gt; &amp; co"));
        assert!(svg.contains("nginx &lt;static&gt; &amp; friends"));
        assert!(svg.contains("Cove Lua (1 worker)"));
        assert!(svg.contains(">117,389<"));
        assert!(svg.contains(">12,346<"));
        assert!(svg.contains(">125k<"));
        assert!(svg.contains(COVE[0]));
    }

    #[test]
    fn bar_chart_edge_cases() {
        let empty = bar_chart("Empty", "req/s", &[]);
        check_xml(&empty);
        assert!(empty.contains(">no data<"));

        let one = bar_chart("One", "", &[bar("only", 5.0)]);
        check_xml(&one);
        assert!(one.contains(">only<"));

        let zeros = bar_chart("Zeros", "ms", &[bar("a", 0.0), bar("b", 0.0)]);
        check_xml(&zeros);
        assert!(zeros.contains(">1<"));

        let mut odd = vec![
            bar("skipped-nan", f64::NAN),
            bar("skipped-inf", f64::INFINITY),
        ];
        odd.push(Bar {
            min: Some(f64::NEG_INFINITY),
            max: Some(f64::NAN),
            ..bar("kept", 3.0)
        });
        odd.push(bar("negative", -2.0));
        let svg = bar_chart("Odd", "x", &odd);
        check_xml(&svg);
        assert!(!svg.contains("skipped"));
        assert!(svg.contains(">kept<") && svg.contains(">-2<"));

        let all_nan = bar_chart("All NaN", "x", &[bar("n", f64::NAN)]);
        assert!(all_nan.contains(">no data<"));

        let long = "Cove Lua with a very long label that goes on & on (1 worker, group commit)";
        let svg = bar_chart("Long", "x", &[bar(long, 1.0)]);
        check_xml(&svg);
        assert!(svg.contains('…'));
        assert!(
            svg.contains(&escape(long)),
            "full label kept in the tooltip"
        );
    }

    fn sample_series() -> Vec<Series> {
        vec![
            Series {
                name: "Cove Lua".to_string(),
                points: vec![(1.0, 0.08), (10.0, 0.15), (50.0, 0.61), (200.0, 2.4)],
                highlight: true,
            },
            Series {
                name: "node <express> & co".to_string(),
                points: vec![(1.0, 0.2), (10.0, 0.9), (50.0, 3.7), (200.0, 15.2)],
                highlight: false,
            },
        ]
    }

    #[test]
    fn line_chart_is_well_formed_and_escaped() {
        for log_x in [true, false] {
            let svg = line_chart(
                "p99 <latency>",
                "connections",
                "ms",
                &sample_series(),
                log_x,
            );
            check_xml(&svg);
            assert!(svg.contains("p99 &lt;latency&gt;"));
            assert!(svg.contains("node &lt;express&gt; &amp; co"));
            assert_eq!(svg.matches("<polyline").count(), 2);
            assert!(svg.contains(">200<"));
            assert!(svg.contains(">20<"), "y ticks reach past 15.2");
        }
    }

    #[test]
    fn line_chart_edge_cases() {
        let empty = line_chart("Empty", "x", "y", &[], true);
        check_xml(&empty);
        assert!(empty.contains(">no data<"));

        let odd = vec![
            Series {
                name: "gone".to_string(),
                points: vec![
                    (f64::NAN, 1.0),
                    (0.0, 2.0),
                    (-1.0, 3.0),
                    (5.0, f64::INFINITY),
                ],
                highlight: false,
            },
            Series {
                name: "single".to_string(),
                points: vec![(10.0, 0.0), (f64::NAN, 1.0)],
                highlight: true,
            },
        ];
        let svg = line_chart("Odd", "x", "y", &odd, true);
        check_xml(&svg);
        assert!(!svg.contains(">gone<"));
        assert_eq!(
            svg.matches("<circle").count(),
            2,
            "legend dot and one marker"
        );

        let linear = line_chart("Linear", "x", "y", &odd, false);
        check_xml(&linear);
        assert!(linear.contains(">gone<"), "x ≤ 0 is fine on a linear axis");
    }
}
