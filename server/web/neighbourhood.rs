//! The picture of an item's neighbourhood on its page: the item in the middle, as a box holding
//! its name; what it points to in a column on the right, what points to it in a column on the
//! left (an item connected both ways sits on the right with an arrowhead at each end); one node
//! per item however many connections it shares with the item, and a line with an arrowhead for
//! each direction. Every text sits outside the lines' paths: a neighbour's name and its
//! connections' types go on the far side of its node, so no line ever crosses a label. Drawn here
//! as SVG markup (no script, no external file), with every text escaped.

use std::fmt::Write;

/// The most neighbours drawn; the page lists every connection below the picture.
pub const MAX_DRAWN: usize = 24;

/// One connection of the item: the other end's key (one node per key), its link, a short label,
/// the connection's type, and whether it runs from the item (true) or to it.
pub struct Neighbour {
    pub key: String,
    pub href: String,
    pub label: String,
    pub kind: Option<String>,
    pub outgoing: bool,
}

/// One node: an item the centre is connected to, with every connection they share.
struct Node<'a> {
    href: &'a str,
    label: &'a str,
    kinds: Vec<&'a str>,
    outgoing: bool,
    incoming: bool,
}

impl Node<'_> {
    /// The right column holds what the item points to (and what is connected both ways).
    fn on_right(&self) -> bool {
        self.outgoing
    }
}

const WIDTH: f64 = 720.0;
const CX: f64 = WIDTH / 2.0;
/// The columns' nodes, this far from the middle.
const COLUMN: f64 = 180.0;
/// One row of a column: a node's name and, below it, its connections' types.
const ROW: f64 = 36.0;
const MARGIN: f64 = 24.0;
/// Font sizes, and how wide a character is taken to be at each (for the centre box).
const NAME_SIZE: f64 = 12.0;
const CENTRE_SIZE: f64 = 13.0;
const CENTRE_CHAR: f64 = 7.8;
const CENTRE_MAX: usize = 26;
const NAME_MAX: usize = 24;
const KINDS_MAX: usize = 28;

/// The neighbours as nodes, one per item, in the order of their first connection; at most `MAX_DRAWN`.
fn nodes(neighbours: &[Neighbour]) -> Vec<Node<'_>> {
    let mut out: Vec<Node> = Vec::new();
    let mut keys: Vec<&str> = Vec::new();
    for neighbour in neighbours {
        let at = match keys.iter().position(|key| *key == neighbour.key) {
            Some(at) => at,
            None if out.len() < MAX_DRAWN => {
                keys.push(&neighbour.key);
                out.push(Node {
                    href: &neighbour.href,
                    label: &neighbour.label,
                    kinds: Vec::new(),
                    outgoing: false,
                    incoming: false,
                });
                out.len() - 1
            }
            None => continue,
        };
        let node = &mut out[at];
        if neighbour.outgoing {
            node.outgoing = true;
        } else {
            node.incoming = true;
        }
        if let Some(kind) = neighbour.kind.as_deref()
            && !node.kinds.contains(&kind)
        {
            node.kinds.push(kind);
        }
    }
    out
}

/// The SVG for `center` and its neighbours (the first `MAX_DRAWN` items).
pub fn svg(center: &str, neighbours: &[Neighbour]) -> String {
    let nodes = nodes(neighbours);
    let right: Vec<&Node> = nodes.iter().filter(|n| n.on_right()).collect();
    let left: Vec<&Node> = nodes.iter().filter(|n| !n.on_right()).collect();
    let rows = right.len().max(left.len()).max(1);
    let height = rows as f64 * ROW + 2.0 * MARGIN;
    let cy = height / 2.0;
    let name = short(center, CENTRE_MAX);
    let half = (name.chars().count() as f64 * CENTRE_CHAR) / 2.0 + 12.0;
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{}" class="neighbourhood">"#,
        escape(&format!("{center} and {} connected items", nodes.len()))
    );
    out.push_str(
        r##"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#8a8f98"/></marker></defs>"##,
    );
    for (column, side) in [(&right, 1.0), (&left, -1.0)] {
        for (i, node) in column.iter().enumerate() {
            let (x, y) = place(i, column.len(), side, cy);
            // From the centre box's side to just short of the node, so both arrowheads show; the
            // lines leave the box a little apart, so that arrowheads pointing at it do not merge.
            let spread = ((y - cy) * 0.08).clamp(-10.0, 10.0);
            let (x1, y1, x2, y2) = (CX + side * (half + 4.0), cy + spread, x - side * 10.0, y);
            // The line is drawn from the item to the node: an arrowhead at its end points at the
            // node (the item points to it), one at its start at the item (it points to the item).
            let end = if node.outgoing {
                r#" marker-end="url(#arrow)""#
            } else {
                ""
            };
            let start = if node.incoming {
                r#" marker-start="url(#arrow)""#
            } else {
                ""
            };
            let _ = write!(
                out,
                r##"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="#8a8f98" stroke-width="1.5"{start}{end}/>"##
            );
            // The texts go outward from the node: on the right, after it; on the left, before it.
            let (text_x, anchor) = if side > 0.0 {
                (x + 12.0, "start")
            } else {
                (x - 12.0, "end")
            };
            let _ = write!(
                out,
                r##"<a href="{}"><circle cx="{x:.1}" cy="{y:.1}" r="6" fill="#3b82f6"/><text x="{text_x:.1}" y="{:.1}" font-size="{NAME_SIZE}" text-anchor="{anchor}" fill="currentColor">{}</text></a>"##,
                escape(node.href),
                y + 4.0,
                escape(&short(node.label, NAME_MAX))
            );
            if !node.kinds.is_empty() {
                let _ = write!(
                    out,
                    r##"<text x="{text_x:.1}" y="{:.1}" font-size="10.5" text-anchor="{anchor}" fill="#6b7280">{}</text>"##,
                    y + 17.0,
                    escape(&short(&node.kinds.join(", "), KINDS_MAX))
                );
            }
        }
    }
    let _ = write!(
        out,
        r##"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="26" rx="13" fill="#f59e0b" fill-opacity="0.18" stroke="#f59e0b" stroke-width="1.5"/><text x="{CX}" y="{:.1}" font-size="{CENTRE_SIZE}" font-weight="bold" text-anchor="middle" fill="currentColor">{}</text></svg>"##,
        CX - half,
        cy - 13.0,
        2.0 * half,
        cy + 4.5,
        escape(&name)
    );
    out
}

/// Where the `i`th of a column's `n` nodes goes: the column on `side` (1 right, -1 left) of the
/// middle, the nodes evenly one row apart, centred on the picture's middle `cy`.
fn place(i: usize, n: usize, side: f64, cy: f64) -> (f64, f64) {
    let top = cy - (n as f64 - 1.0) * ROW / 2.0;
    (CX + side * COLUMN, top + i as f64 * ROW)
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

    fn neighbour(key: &str, kind: Option<&str>, outgoing: bool) -> Neighbour {
        Neighbour {
            key: format!("note:{key}"),
            href: format!("/app/x/graph?item=note%3A{key}"),
            label: key.into(),
            kind: kind.map(str::to_string),
            outgoing,
        }
    }

    /// The numbers of an element's attribute, in the order the elements come.
    fn numbers(svg: &str, element: &str, attribute: &str) -> Vec<f64> {
        svg.split(&format!("<{element} "))
            .skip(1)
            .map(|rest| {
                let rest = format!(" {rest}");
                let from = rest.find(&format!(" {attribute}=\"")).unwrap() + attribute.len() + 3;
                rest[from..from + rest[from..].find('"').unwrap()].parse().unwrap()
            })
            .collect()
    }

    #[test]
    fn the_picture_escapes_every_text() {
        let drawn = svg(
            "<script>alert(1)</script>",
            &[neighbour("a\"b", Some("supports"), true), neighbour("c&d", None, false)],
        );
        assert!(drawn.starts_with("<svg") && drawn.ends_with("</svg>"));
        assert!(!drawn.contains("<script>"), "{drawn}");
        assert!(drawn.contains("&lt;script&gt;"));
        assert!(drawn.contains("a&quot;b") && drawn.contains("c&amp;d"));
        assert_eq!(drawn.matches(">supports</text>").count(), 1);
    }

    #[test]
    fn one_node_per_item_and_an_arrowhead_for_every_direction() {
        let drawn = svg(
            "Plan.md",
            &[
                neighbour("Goals.md", Some("supports"), true),
                neighbour("Goals.md", Some("cites"), true),
                neighbour("Goals.md", None, false),
                neighbour("Inbox.md", None, true),
                neighbour("Ideas.md", None, false),
            ],
        );
        assert_eq!(drawn.matches("<circle ").count(), 3, "one node per item: {drawn}");
        assert_eq!(drawn.matches("<line ").count(), 3, "one line per item");
        assert_eq!(
            drawn.matches(">supports, cites</text>").count(),
            1,
            "both types beside it"
        );
        // Goals.md both ways, Inbox.md out (untyped), Ideas.md in (untyped).
        assert_eq!(drawn.matches("marker-end=").count(), 2, "{drawn}");
        assert_eq!(drawn.matches("marker-start=").count(), 2, "{drawn}");
        for line in drawn.split("<line ").skip(1) {
            let line = &line[..line.find("/>").unwrap()];
            assert!(line.contains("marker-"), "every line has an arrowhead: {line}");
        }
    }

    #[test]
    fn no_line_crosses_a_label() {
        let mut many: Vec<Neighbour> = (0..30)
            .map(|i| neighbour(&format!("note number {i}"), Some("kind"), i % 3 != 0))
            .collect();
        many.push(neighbour("note number 1", Some("other"), false));
        let drawn = svg("A rather long name of the item in the middle of it all", &many);
        assert_eq!(drawn.matches("<circle ").count(), MAX_DRAWN);
        let xs: Vec<f64> = [numbers(&drawn, "line", "x1"), numbers(&drawn, "line", "x2")].concat();
        let (leftmost, rightmost) = xs.iter().fold((f64::MAX, f64::MIN), |(l, r), x| (l.min(*x), r.max(*x)));
        let (box_left, box_width) = (numbers(&drawn, "rect", "x")[0], numbers(&drawn, "rect", "width")[0]);
        let box_right = box_left + box_width;
        // Every line lies wholly on one side of the centre box, which holds the centre's name.
        for (x1, x2) in numbers(&drawn, "line", "x1").iter().zip(numbers(&drawn, "line", "x2")) {
            assert!(
                (*x1 >= box_right && x2 >= box_right) || (*x1 <= box_left && x2 <= box_left),
                "a line from {x1} to {x2} enters the box {box_left}..{box_right}"
            );
        }
        // Every other text runs outward from beyond the lines' ends.
        let texts = numbers(&drawn, "text", "x");
        let parts: Vec<&str> = drawn.split("<text ").skip(1).collect();
        assert_eq!(texts.len(), parts.len());
        for (x, part) in texts.iter().zip(parts) {
            if part.contains(r#"text-anchor="start""#) {
                assert!(
                    *x > rightmost,
                    "a text from {x} reaches back over a line ending at {rightmost}"
                );
            } else if part.contains(r#"text-anchor="end""#) {
                assert!(
                    *x < leftmost,
                    "a text up to {x} reaches over a line starting at {leftmost}"
                );
            } else {
                assert!((x - CX).abs() < 1e-9, "only the centre's name is centred, in its box");
            }
        }
    }

    #[test]
    fn columns_are_evenly_spaced_about_the_middle() {
        let (x, y) = place(0, 1, 1.0, 100.0);
        assert_eq!((x, y), (CX + COLUMN, 100.0));
        let (x, top) = place(0, 3, -1.0, 100.0);
        assert_eq!(x, CX - COLUMN);
        assert_eq!(place(2, 3, -1.0, 100.0).1 - top, 2.0 * ROW);
        assert_eq!(short("abcdef", 4), "abc…");
    }
}
