//! The picture of an item's neighbourhood on its page: the item in the middle, the items it is
//! connected to on a circle around it, a line for each connection with its type. Drawn here as SVG
//! markup (no script, no external file), with every text escaped, so the page needs nothing more.

use std::f64::consts::PI;
use std::fmt::Write;

/// The most neighbours drawn; the page lists every connection below the picture.
pub const MAX_DRAWN: usize = 24;

/// One neighbour: its key (for the link), a short label, the connection's type, and whether the
/// connection runs from the item (true) or to it.
pub struct Neighbour {
    pub href: String,
    pub label: String,
    pub kind: Option<String>,
    pub outgoing: bool,
}

const WIDTH: f64 = 640.0;
const HEIGHT: f64 = 420.0;
const RADIUS: f64 = 160.0;

/// The SVG for `center` and its neighbours (the first `MAX_DRAWN`).
pub fn svg(center: &str, neighbours: &[Neighbour]) -> String {
    let (cx, cy) = (WIDTH / 2.0, HEIGHT / 2.0);
    let drawn = &neighbours[..neighbours.len().min(MAX_DRAWN)];
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{}" class="neighbourhood">"#,
        escape(&format!("{center} and {} connected items", drawn.len()))
    );
    out.push_str(
        r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#8a8f98"/></marker></defs>"##,
    );
    let points = positions(drawn.len(), cx, cy);
    for (neighbour, (x, y)) in drawn.iter().zip(&points) {
        // Lines stop short of the circles, so the arrowheads show.
        let (x1, y1, x2, y2) = if neighbour.outgoing {
            shorten(cx, cy, *x, *y)
        } else {
            shorten(*x, *y, cx, cy)
        };
        let _ = write!(
            out,
            r##"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="#8a8f98" stroke-width="1.5" marker-end="url(#arrow)"/>"##
        );
        if let Some(kind) = &neighbour.kind {
            let _ = write!(
                out,
                r##"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle" fill="#6b7280">{}</text>"##,
                (cx + x) / 2.0,
                (cy + y) / 2.0 - 4.0,
                escape(&short(kind, 20))
            );
        }
    }
    for (neighbour, (x, y)) in drawn.iter().zip(&points) {
        let _ = write!(
            out,
            r##"<a href="{}"><circle cx="{x:.1}" cy="{y:.1}" r="7" fill="#3b82f6"/><text x="{x:.1}" y="{:.1}" font-size="12" text-anchor="middle" fill="currentColor">{}</text></a>"##,
            escape(&neighbour.href),
            y + 22.0,
            escape(&short(&neighbour.label, 28))
        );
    }
    let _ = write!(
        out,
        r##"<circle cx="{cx}" cy="{cy}" r="11" fill="#f59e0b"/><text x="{cx}" y="{:.1}" font-size="13" font-weight="bold" text-anchor="middle" fill="currentColor">{}</text></svg>"##,
        cy + 28.0,
        escape(&short(center, 36))
    );
    out
}

/// Where `n` neighbours go: evenly on a circle, the first at the top.
fn positions(n: usize, cx: f64, cy: f64) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| {
            let angle = -PI / 2.0 + 2.0 * PI * i as f64 / n as f64;
            (cx + RADIUS * angle.cos(), cy + RADIUS * 0.85 * angle.sin())
        })
        .collect()
}

/// A line from (x1, y1) to (x2, y2) without its last and first 14 units.
fn shorten(x1: f64, y1: f64, x2: f64, y2: f64) -> (f64, f64, f64, f64) {
    let (dx, dy) = (x2 - x1, y2 - y1);
    let length = (dx * dx + dy * dy).sqrt().max(1.0);
    let (ux, uy) = (dx / length, dy / length);
    (x1 + ux * 14.0, y1 + uy * 14.0, x2 - ux * 14.0, y2 - uy * 14.0)
}

/// At most `max` characters, with an ellipsis when cut.
fn short(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

/// Text for SVG markup and attributes.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn neighbour(label: &str, kind: Option<&str>, outgoing: bool) -> Neighbour {
        Neighbour {
            href: format!("/app/x/graph?item=note%3A{label}"),
            label: label.into(),
            kind: kind.map(str::to_string),
            outgoing,
        }
    }

    #[test]
    fn the_picture_escapes_every_text_and_draws_a_line_per_neighbour() {
        let drawn = svg(
            "<script>alert(1)</script>",
            &[neighbour("a\"b", Some("supports"), true), neighbour("c&d", None, false)],
        );
        assert!(drawn.starts_with("<svg") && drawn.ends_with("</svg>"));
        assert!(!drawn.contains("<script>"), "{drawn}");
        assert!(drawn.contains("&lt;script&gt;"));
        assert!(drawn.contains("a&quot;b") && drawn.contains("c&amp;d"));
        assert_eq!(drawn.matches("<line ").count(), 2);
        assert_eq!(drawn.matches(">supports</text>").count(), 1);
    }

    #[test]
    fn at_most_the_first_neighbours_are_drawn_evenly_around_the_item() {
        let many: Vec<Neighbour> = (0..40).map(|i| neighbour(&format!("n{i}"), None, true)).collect();
        assert_eq!(svg("x", &many).matches("<circle ").count(), MAX_DRAWN + 1);
        let points = positions(4, 0.0, 0.0);
        assert!((points[0].0).abs() < 1e-9 && points[0].1 < 0.0, "the first at the top");
        assert!((points[2].0).abs() < 1e-9 && points[2].1 > 0.0);
        assert_eq!(short("abcdef", 4), "abc…");
    }
}
