//! Fuzzes the inline filters of `search`'s query: reading any query never panics, a query that is read
//! keeps within the filter limit, and the text it leaves is all text (read again, it is unchanged and
//! holds no filter).
#![no_main]

use journal::journal::notes::filters::{self, Filters, MAX_FILTERS};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(query) = std::str::from_utf8(data) else { return };
    let Ok(read) = filters::parse(query) else { return };
    let count = read.paths.len()
        + read.not_paths.len()
        + read.tags.len()
        + read.not_tags.len()
        + read.has.len()
        + read.not_has.len()
        + read.conditions.len()
        + read.facets.len()
        + usize::from(read.after.is_some())
        + usize::from(read.before.is_some());
    assert!(count <= MAX_FILTERS, "{query:?} gave {count} filters");
    assert_eq!(read.text.trim(), read.text, "{query:?}");
    let values = [
        &read.paths,
        &read.not_paths,
        &read.tags,
        &read.not_tags,
        &read.has,
        &read.not_has,
        &read.facets,
    ];
    for value in values.into_iter().flatten() {
        // Quotes only group a value; they never reach it, and neither does surrounding space.
        assert!(
            !value.is_empty() && !value.contains('"') && value.trim() == value,
            "{query:?}: {value:?}"
        );
    }
    for path in read.paths.iter().chain(&read.not_paths) {
        assert!(!path.ends_with('/'), "{query:?}: {path:?}");
    }
    for tag in read.tags.iter().chain(&read.not_tags) {
        assert!(!tag.starts_with('#'), "{query:?}: {tag:?}");
    }
    for (condition, column) in &read.conditions {
        assert!(
            *column >= 1 && *column <= query.chars().count(),
            "{query:?}: {condition:?} at {column}"
        );
    }
    let again = filters::parse(&read.text);
    assert_eq!(
        again,
        Ok(Filters {
            text: read.text.clone(),
            ..Filters::default()
        }),
        "{query:?}"
    );
});
