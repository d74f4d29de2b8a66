//! The operators' meanings, one table of cases per operator and kind of value.

use serde_json::json;

use super::*;

fn day(text: &str) -> i64 {
    Day::parse(text).map(Day::epoch_days).unwrap_or(i64::MIN)
}

#[test]
fn is_compares_each_kind_with_its_own() {
    assert!(is(Val::Number(2.0), Val::Number(2.0)));
    assert!(!is(Val::Number(2.0), Val::Number(2.5)));
    assert!(is(Val::Text("Done"), Val::Text("done")));
    assert!(is(Val::Text("ÉTÉ"), Val::Text("été")));
    assert!(!is(Val::Text("done"), Val::Text("don")));
    assert!(is(Val::Bool(true), Val::Bool(true)));
    assert!(!is(Val::Bool(true), Val::Bool(false)));
    // Kinds do not mix: the text "2" is not the number 2, and "true" is not true.
    assert!(!is(Val::Text("2"), Val::Number(2.0)));
    assert!(!is(Val::Text("true"), Val::Bool(true)));
    assert!(!is(Val::Other, Val::Other));
}

#[test]
fn text_that_starts_with_a_day_is_that_day_when_it_meets_a_date() {
    let november_3 = Val::Day(day("2026-11-03"));
    assert!(is(Val::Text("2026-11-03"), november_3));
    assert!(is(Val::Text("2026-11-03T23:59:59Z"), november_3));
    assert!(is(november_3, Val::Text("2026-11-03 meeting")));
    assert!(!is(Val::Text("2026-11-04"), november_3));
    assert!(!is(Val::Text("2026-11-031"), november_3));
    assert!(!is(Val::Text("2026-02-30"), Val::Day(day("2026-03-02"))));
    // Two texts are compared as text, not as days.
    assert!(!is(Val::Text("2026-11-03"), Val::Text("2026-11-03T10:00:00Z")));
}

#[test]
fn lists_match_when_any_element_does() {
    let values = json!(["Alpha", 3, null, true, ["nested"]]);
    let list = from_json(&values).unwrap_or(Val::Other);
    assert!(is(list, Val::Text("alpha")));
    assert!(is(list, Val::Number(3.0)));
    assert!(is(list, Val::Bool(true)));
    assert!(!is(list, Val::Text("nested")));
    assert!(!is(list, Val::Text("beta")));
    assert!(contains(list, Val::Text("ALPHA")));
    assert!(
        !contains(list, Val::Text("alp")),
        "a list holds whole elements, not substrings"
    );
    let tags = ["work".to_string(), "home".to_string()];
    let other_tags = ["home".to_string()];
    assert!(is(Val::List(List::Tags(&tags)), Val::List(List::Tags(&other_tags))));
    assert!(is(Val::Text("Home"), Val::List(List::Tags(&tags))));
    assert_eq!(order(Val::List(List::Tags(&tags)), Val::Text("a")), None);
}

#[test]
fn contains_finds_text_ignoring_case() {
    assert!(contains(Val::Text("Quarterly Review"), Val::Text("review")));
    assert!(contains(Val::Text("Straße am Fluß"), Val::Text("fluß")));
    assert!(contains(Val::Text("ÄBC"), Val::Text("äb")));
    assert!(contains(Val::Text("anything"), Val::Text("")));
    assert!(!contains(Val::Text("Review"), Val::Text("views")));
    assert!(!contains(Val::Text("é"), Val::Text("éé")));
    assert!(!contains(Val::Number(123.0), Val::Number(2.0)));
    assert!(!contains(Val::Text("123"), Val::Number(2.0)));
    // Long texts take the linear path, with the same answers.
    let long = format!("{}Ab", "a".repeat(1 << 16));
    assert!(fold_contains(&long, &format!("{}B", "A".repeat(40))));
    assert!(!fold_contains(&long, &format!("{}C", "a".repeat(40))));
    assert!(fold_contains(&format!("{}Été", "é".repeat(1 << 16)), "ÉÉTÉ"));
}

#[test]
fn gt_and_lt_order_numbers_days_instants_and_text() {
    let greater = |a, b| order(a, b) == Some(Ordering::Greater);
    assert!(greater(Val::Number(10.0), Val::Number(9.5)));
    assert!(greater(Val::Text("beta"), Val::Text("Alpha")));
    assert!(greater(Val::Day(day("2026-11-04")), Val::Day(day("2026-11-03"))));
    assert!(greater(Val::Text("2026-11-04"), Val::Day(day("2026-11-03"))));
    assert_eq!(order(Val::Text("soon"), Val::Day(day("2026-11-03"))), None);
    assert_eq!(order(Val::Number(1.0), Val::Text("1")), None);
    assert_eq!(order(Val::Bool(true), Val::Bool(false)), None);

    // `__modified` meets a date by its UTC day, and a text with a time of day by the instant.
    let modified = Val::Instant(parse_instant("2026-11-03T14:00:00Z").unwrap_or_default());
    assert_eq!(order(modified, Val::Day(day("2026-11-03"))), Some(Ordering::Equal));
    assert!(greater(modified, Val::Day(day("2026-11-02"))));
    assert!(greater(modified, Val::Text("2026-11-03T13:59:59Z")));
    assert!(greater(Val::Text("2026-11-03T14:00:01Z"), modified));
    assert_eq!(order(modified, Val::Text("2026-11-03")), Some(Ordering::Equal));
    assert!(is(modified, Val::Text("2026-11-03T15:00:00+01:00")));
}

#[test]
fn reads_instants_and_day_prefixes() {
    let base = day("2026-11-03") * MS_PER_DAY;
    assert_eq!(parse_instant("2026-11-03T10:00:00Z"), Some(base + 36_000_000));
    assert_eq!(parse_instant("2026-11-03 10:00"), Some(base + 36_000_000));
    assert_eq!(parse_instant("2026-11-03T10:00:00.25Z"), Some(base + 36_000_250));
    assert_eq!(
        parse_instant("2026-11-03T10:00:00.123456-02:30"),
        Some(base + 45_000_123)
    );
    for bad in [
        "2026-11-03",
        "2026-11-03T",
        "2026-11-03T24:00",
        "2026-11-03T10:00:00.Z",
        "2026-11-03T10:00+1",
    ] {
        assert_eq!(parse_instant(bad), None, "{bad}");
    }
    assert_eq!(day_prefix("2026-11-03"), Some(day("2026-11-03")));
    for bad in ["", "2026-1-03", "2026-11-3", "2026-13-01", "é026-11-03", "2026-11-030"] {
        assert_eq!(day_prefix(bad), None, "{bad}");
    }
}

#[test]
fn under_follows_folder_segments() {
    assert!(path_under("Projects", "Projects"));
    assert!(path_under("Projects/a.md", "Projects"));
    assert!(path_under("Projects/a/b.md", "Projects/"));
    assert!(!path_under("Projectsx/a.md", "Projects"));
    assert!(!path_under("projects/a.md", "Projects"));
    assert!(path_under("anything.md", ""));
    assert!(under(Val::Text("Projects/a.md"), Val::Text("Projects")));
    assert!(!under(Val::Number(1.0), Val::Text("")));
    let folders = json!(["Areas/x", "Projects/y"]);
    assert!(under(from_json(&folders).unwrap_or(Val::Other), Val::Text("Projects")));
}

#[test]
fn sort_order_is_total_and_ranks_kinds() {
    let values = [
        Val::Number(-1.0),
        Val::Number(2.0),
        Val::Day(day("2026-01-01")),
        Val::Instant(day("2026-01-01") * MS_PER_DAY + 5),
        Val::Day(day("2026-01-02")),
        Val::Text("apple"),
        Val::Text("Banana"),
        Val::Text("banana"),
        Val::Bool(false),
        Val::Bool(true),
        Val::List(List::Tags(&[])),
        Val::Other,
    ];
    for (i, a) in values.iter().enumerate() {
        for (j, b) in values.iter().enumerate() {
            let expected = if i == j { Ordering::Equal } else { i.cmp(&j) };
            assert_eq!(sort_order(*a, *b), expected, "{a:?} against {b:?}");
        }
    }
    assert_eq!(missing_last(None, Some(Val::Other)), Ordering::Greater);
    assert_eq!(missing_last(None, None), Ordering::Equal);
    let short = json!([1, 2]);
    let long = json!([1, 2, 0]);
    let holed = json!([1, null]);
    let (short, long, holed) = (from_json(&short), from_json(&long), from_json(&holed));
    assert_eq!(missing_last(short, long), Ordering::Less);
    assert_eq!(missing_last(holed, short), Ordering::Greater);
}
