//! The activity page's charts, laid out on the server: calls per day as stacked bars, one stack a
//! day, one colour a connection (or an outcome). The layout is plain arithmetic into a fixed
//! viewBox that the SVG scales to the page's width; the template only draws what this computes, so
//! no page needs a chart library or a script.

use std::collections::BTreeMap;

use crate::auth::activity::DayCount;
use crate::journal::day::Day;

/// The drawing's coordinate space; the SVG scales it to the page.
const WIDTH: i64 = 560;
const HEIGHT: i64 = 220;
/// Room for the tick labels on the left and the day labels below.
const LEFT: i64 = 40;
const RIGHT: i64 = 8;
const TOP: i64 = 10;
const BOTTOM: i64 = 28;

/// Colours for connections, readable on light and dark backgrounds; the last stands for the rest.
const PALETTE: [&str; 8] = [
    "#3b82f6", "#a855f7", "#f59e0b", "#14b8a6", "#ec4899", "#84cc16", "#06b6d4", "#9ca3af",
];

/// A laid-out chart.
#[derive(Debug, Clone)]
pub struct Chart {
    pub title: &'static str,
    pub width: i64,
    pub height: i64,
    pub bars: Vec<Bar>,
    pub ticks: Vec<Tick>,
    pub labels: Vec<DayLabel>,
    pub legend: Vec<Legend>,
    pub total: i64,
    /// The whole chart in words, for screen readers.
    pub summary: String,
    /// The baseline's height in the drawing.
    pub baseline: i64,
    pub plot_left: i64,
    pub plot_right: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
    pub color: &'static str,
    /// Shown on hover: the day, the series and the count.
    pub title: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tick {
    pub y: i64,
    pub label: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DayLabel {
    pub x: i64,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Legend {
    pub color: &'static str,
    pub label: String,
    pub calls: i64,
}

/// One series: its name, colour, and a count per day.
struct Series {
    label: String,
    color: &'static str,
    counts: Vec<i64>,
}

/// Calls per day, one colour per connection (the seven busiest; the rest share one colour).
pub fn by_connection(days: &[Day], counts: &[DayCount]) -> Chart {
    let mut per: BTreeMap<&str, (String, Vec<i64>)> = BTreeMap::new();
    for count in counts {
        let Some(slot) = days.iter().position(|d| *d == count.day) else {
            continue;
        };
        let entry = per
            .entry(count.connection_id.as_str())
            .or_insert_with(|| (String::new(), vec![0; days.len()]));
        // Counts come oldest day first: the last label seen is the connection's latest name.
        entry.0.clone_from(&count.connection_label);
        entry.1[slot] += count.calls;
    }
    let mut ranked: Vec<(String, Vec<i64>)> = per.into_values().collect();
    ranked.sort_by_key(|(label, counts)| (std::cmp::Reverse(counts.iter().sum::<i64>()), label.clone()));
    let mut series: Vec<Series> = Vec::new();
    let mut rest = vec![0; days.len()];
    for (index, (label, counts)) in ranked.into_iter().enumerate() {
        if index < PALETTE.len() - 1 {
            series.push(Series {
                label,
                color: PALETTE[index],
                counts,
            });
        } else {
            rest.iter_mut().zip(counts).for_each(|(sum, n)| *sum += n);
        }
    }
    if rest.iter().any(|n| *n > 0) {
        series.push(Series {
            label: "other connections".into(),
            color: PALETTE[PALETTE.len() - 1],
            counts: rest,
        });
    }
    stacked("Calls per day by connection", days, series)
}

/// Calls per day, one colour per outcome.
pub fn by_outcome(days: &[Day], counts: &[DayCount]) -> Chart {
    let outcomes = [
        ("served", "#22a06b"),
        ("empty", "#9ca3af"),
        ("refused", "#e8a317"),
        ("error", "#e5484d"),
    ];
    let series = outcomes
        .iter()
        .map(|(outcome, color)| {
            let mut per_day = vec![0; days.len()];
            for count in counts.iter().filter(|c| c.outcome == *outcome) {
                if let Some(slot) = days.iter().position(|d| *d == count.day) {
                    per_day[slot] += count.calls;
                }
            }
            Series {
                label: (*outcome).to_string(),
                color,
                counts: per_day,
            }
        })
        .collect();
    stacked("Calls per day by outcome", days, series)
}

/// The smallest of 1, 2, 5, 10, 20, 50, ... at or above `n` (and at least 1): the top of the scale.
pub fn nice_ceiling(n: i64) -> i64 {
    let mut step = 1;
    loop {
        for factor in [1, 2, 5] {
            if step * factor >= n.max(1) {
                return step * factor;
            }
        }
        step *= 10;
    }
}

fn stacked(title: &'static str, days: &[Day], series: Vec<Series>) -> Chart {
    let totals: Vec<i64> = (0..days.len())
        .map(|slot| series.iter().map(|s| s.counts[slot]).sum())
        .collect();
    let top = nice_ceiling(totals.iter().copied().max().unwrap_or(0));
    let plot_height = HEIGHT - TOP - BOTTOM;
    let baseline = HEIGHT - BOTTOM;
    let slot_width = (WIDTH - LEFT - RIGHT) / (days.len().max(1) as i64);
    let bar_width = (slot_width * 7 / 10).max(1);
    // Heights come from rounded cumulative sums, so a stack's pieces meet without gaps.
    let scaled = |calls: i64| (calls * plot_height + top / 2) / top;
    let mut bars = Vec::new();
    for (slot, day) in days.iter().enumerate() {
        let x = LEFT + slot as i64 * slot_width + (slot_width - bar_width) / 2;
        let mut below = 0;
        for s in series.iter().filter(|s| s.counts[slot] > 0) {
            let above = below + s.counts[slot];
            let (y_low, y_high) = (scaled(below), scaled(above));
            // A piece too small to see still gets a pixel, drawn above the ones below it.
            let y_top = y_high.max(y_low + 1);
            bars.push(Bar {
                x,
                y: baseline - y_top,
                width: bar_width,
                height: y_top - y_low,
                color: s.color,
                title: format!("{day} · {}: {} call{}", s.label, s.counts[slot], plural(s.counts[slot])),
            });
            below = above;
        }
    }
    // The scale's bottom, top and (when it is a whole number) middle.
    let mut marks = vec![0, top];
    if top % 2 == 0 {
        marks.insert(1, top / 2);
    }
    let ticks = marks
        .into_iter()
        .map(|label| Tick {
            y: baseline - scaled(label),
            label,
        })
        .collect();
    // Every day is labelled when there is room, else every other one (the last always).
    let every = if days.len() > 8 { 2 } else { 1 };
    let labels = days
        .iter()
        .enumerate()
        .filter(|(slot, _)| (days.len() - 1 - slot).is_multiple_of(every))
        .map(|(slot, day)| DayLabel {
            x: LEFT + slot as i64 * slot_width + slot_width / 2,
            text: day.to_string()[5..].to_string(),
        })
        .collect();
    let legend: Vec<Legend> = series
        .iter()
        .map(|s| Legend {
            color: s.color,
            label: s.label.clone(),
            calls: s.counts.iter().sum(),
        })
        .filter(|l| l.calls > 0)
        .collect();
    let total: i64 = totals.iter().sum();
    let summary = match (days.first(), days.last()) {
        (Some(first), Some(last)) => format!(
            "{title}, {first} to {last}: {total} call{} in all{}",
            plural(total),
            legend
                .iter()
                .map(|l| format!("; {} {}", l.label, l.calls))
                .collect::<String>()
        ),
        _ => title.to_string(),
    };
    Chart {
        title,
        width: WIDTH,
        height: HEIGHT,
        bars,
        ticks,
        labels,
        legend,
        total,
        summary,
        baseline,
        plot_left: LEFT,
        plot_right: WIDTH - RIGHT,
    }
}

fn plural(n: i64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(day: Day, id: &str, outcome: &str, calls: i64) -> DayCount {
        DayCount {
            day,
            connection_id: id.into(),
            connection_label: format!("label {id}"),
            outcome: outcome.into(),
            calls,
        }
    }

    fn week() -> Vec<Day> {
        let last = Day::parse("2026-12-03").unwrap();
        (0..7).rev().map(|n| last.minus_days(n)).collect()
    }

    #[test]
    fn scale_tops_are_round() {
        let tops: Vec<i64> = [0, 1, 2, 3, 6, 10, 11, 49, 51, 999]
            .into_iter()
            .map(nice_ceiling)
            .collect();
        assert_eq!(tops, [1, 1, 2, 5, 10, 10, 20, 50, 100, 1000]);
    }

    #[test]
    fn ticks_mark_the_bottom_the_top_and_a_whole_middle() {
        let days = week();
        let ticks = |calls: i64| -> Vec<i64> {
            let counts = [count(days[0], "a", "served", calls)];
            by_outcome(&days, &counts).ticks.iter().map(|t| t.label).collect()
        };
        assert_eq!(ticks(1), [0, 1]);
        assert_eq!(ticks(4), [0, 5]);
        assert_eq!(ticks(7), [0, 5, 10]);
        let chart = by_outcome(&days, &[count(days[0], "a", "served", 7)]);
        assert_eq!(chart.ticks[0].y, chart.baseline);
        assert_eq!(chart.ticks[2].y, TOP);
    }

    #[test]
    fn stacks_fit_the_plot_and_meet_without_gaps() {
        let days = week();
        let counts = [
            count(days[6], "a", "served", 6),
            count(days[6], "b", "refused", 4),
            count(days[0], "a", "served", 1),
            count(Day::parse("2020-01-01").unwrap(), "a", "served", 99),
        ];
        let chart = by_connection(&days, &counts);
        assert_eq!(chart.total, 11, "calls outside the days are left out");
        let last_day: Vec<&Bar> = chart
            .bars
            .iter()
            .filter(|b| b.title.starts_with("2026-12-03"))
            .collect();
        assert_eq!(last_day.len(), 2);
        // The full stack reaches the top of the scale (10) exactly.
        let top = last_day.iter().map(|b| b.y).min().unwrap();
        assert_eq!(top, TOP);
        let (lower, upper) = (last_day[0], last_day[1]);
        assert_eq!(upper.y + upper.height, lower.y, "the pieces meet");
        assert_eq!(lower.y + lower.height, chart.baseline);
        assert!(lower.title.contains("label a: 6 calls"), "{}", lower.title);
        assert_eq!(chart.legend.len(), 2);
        assert_eq!(chart.legend[0].label, "label a", "busiest first");
        assert!(chart.bars.iter().all(|b| b.x >= LEFT && b.x + b.width <= WIDTH - RIGHT));
        assert!(chart.summary.contains("11 calls in all"));
    }

    #[test]
    fn outcomes_and_the_busiest_connections_get_their_own_colours() {
        let days = week();
        let mut counts: Vec<DayCount> = (0..10)
            .map(|i| count(days[3], &format!("c{i}"), "served", 10 - i))
            .collect();
        counts.push(count(days[3], "c0", "error", 2));
        let chart = by_connection(&days, &counts);
        assert_eq!(chart.legend.len(), PALETTE.len());
        assert_eq!(chart.legend.last().unwrap().label, "other connections");
        assert_eq!(chart.legend.last().unwrap().calls, 3 + 2 + 1);
        let outcomes = by_outcome(&days, &counts);
        let labels: Vec<&str> = outcomes.legend.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(
            labels,
            ["served", "error"],
            "outcomes without calls stay out of the legend"
        );
        let tiny = by_outcome(
            &days,
            &[count(days[0], "a", "served", 999), count(days[0], "a", "error", 1)],
        );
        assert!(
            tiny.bars
                .iter()
                .all(|b| b.height >= 1 && b.y + b.height <= tiny.baseline),
            "every piece is visible and above the axis: {:?}",
            tiny.bars
        );
        let renamed = by_connection(
            &days,
            &[
                DayCount {
                    connection_label: "old name".into(),
                    ..count(days[0], "a", "served", 1)
                },
                DayCount {
                    connection_label: "new name".into(),
                    ..count(days[5], "a", "served", 1)
                },
            ],
        );
        assert_eq!(renamed.legend[0].label, "new name");
        let empty = by_outcome(&days, &[]);
        assert!(empty.bars.is_empty());
        assert_eq!(empty.total, 0);
        assert_eq!(empty.labels.len(), 7, "a week has room for every day");
    }
}
