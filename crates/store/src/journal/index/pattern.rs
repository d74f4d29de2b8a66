//! A search by regular expression (`search` with `regex: true`): the documents that pass a
//! search's filters, each title and text tested against the pattern, those that match ranked by how
//! often (then in index order). There is no index of patterns, so each document that passes the
//! filters is read: at most `SCAN_LIMIT` of them a search, and the answer says when there were more.
//! The `regex` crate matches in time linear in the text, so no pattern can stall a search.

use tantivy::schema::{Field, TantivyDocument, Value};
use tantivy::{DocAddress, Score};

use super::{Hit, SNIPPET_CHARS, SearchIndex, SearchQuery};

/// The largest compiled pattern: far above any honest search, and below what could take a
/// noticeable share of memory.
const PATTERN_BYTES: usize = 1 << 20;

/// `text` as a case-insensitive pattern, or what is wrong with it in one line.
pub fn compile(text: &str) -> Result<regex::Regex, String> {
    regex::RegexBuilder::new(text)
        .case_insensitive(true)
        .size_limit(PATTERN_BYTES)
        .dfa_size_limit(PATTERN_BYTES)
        .build()
        .map_err(|error| match error {
            regex::Error::CompiledTooBig(_) => "the pattern is too large: make it simpler".to_string(),
            // The parser's message is several lines (the pattern, a caret, the error): its last
            // line says what is wrong.
            other => {
                let message = other.to_string();
                let last = message.lines().last().unwrap_or("").trim();
                last.strip_prefix("error: ").unwrap_or(last).to_string()
            }
        })
}

/// The most documents one search by pattern reads.
pub const SCAN_LIMIT: usize = 20_000;

/// Matches beyond this many in one document rank it no higher.
const COUNTED: usize = 100;

/// A page of documents matching a pattern.
#[derive(Debug)]
pub struct Matched {
    pub hits: Vec<Hit>,
    /// More matching documents follow this page.
    pub more: bool,
    /// More documents passed the filters than were read (`SCAN_LIMIT`).
    pub partial: bool,
}

impl SearchIndex {
    /// The page `query` asks for (its filters, offset and limit; its text is not read) of the
    /// documents whose title or text matches `pattern`.
    pub fn search_regex(&self, query: &SearchQuery, pattern: &regex::Regex) -> tantivy::Result<Matched> {
        self.search_regex_reading(query, pattern, SCAN_LIMIT)
    }

    /// `search_regex`, reading at most `scan` documents.
    fn search_regex_reading(
        &self,
        query: &SearchQuery,
        pattern: &regex::Regex,
        scan: usize,
    ) -> tantivy::Result<Matched> {
        let searcher = self.reader.searcher();
        let passing = SearchQuery {
            text: String::new(),
            offset: 0,
            limit: scan,
            ..query.clone()
        };
        let (_, docs) = self.ranked(&searcher, &passing, &super::Ranking::AllWords, None)?;
        let partial = docs.len() > scan;
        let f = self.fields;
        // Only how often each document matches is kept; the page's documents are read again.
        let mut found: Vec<(usize, DocAddress)> = Vec::new();
        for (_, address) in docs.into_iter().take(scan) {
            let document: TantivyDocument = searcher.doc(address)?;
            let count = pattern.find_iter(text(&document, f.title)).take(COUNTED).count()
                + pattern.find_iter(text(&document, f.body)).take(COUNTED).count();
            if count > 0 {
                found.push((count.min(COUNTED), address));
            }
        }
        found.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let more = found.len() > query.offset + query.limit;
        let mut hits = Vec::with_capacity(query.limit);
        for (count, address) in found.into_iter().skip(query.offset).take(query.limit) {
            let document: TantivyDocument = searcher.doc(address)?;
            let body = text(&document, f.body);
            hits.push(Hit {
                path: text(&document, f.path).to_string(),
                category: text(&document, f.category).to_string(),
                title: text(&document, f.title).to_string(),
                day: document.get_first(f.day).and_then(|v| v.as_u64()),
                snippet: around(body, pattern.find(body).map(|m| m.start())).trim().to_string(),
                score: count as Score,
                words: None,
                meaning: None,
            });
        }
        Ok(Matched { hits, more, partial })
    }
}

fn text(document: &TantivyDocument, field: Field) -> &str {
    document.get_first(field).and_then(|v| v.as_str()).unwrap_or("")
}

/// About `SNIPPET_CHARS` bytes of `body` from a little before `at` (the first match; the start when
/// the match was in the title), cut at character boundaries.
fn around(body: &str, at: Option<usize>) -> &str {
    let mut start = at.unwrap_or(0).saturating_sub(SNIPPET_CHARS / 4);
    while !body.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + SNIPPET_CHARS).min(body.len());
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    &body[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_is_case_insensitive_and_its_errors_are_one_line() {
        assert!(compile("hello\\s+WORLD").unwrap().is_match("Hello   world"));
        assert_eq!(compile("(abc").unwrap_err(), "unclosed group");
        assert_eq!(
            compile("a{99999}{99999}").unwrap_err(),
            "the pattern is too large: make it simpler"
        );
    }

    #[test]
    fn matches_rank_by_count_and_a_cut_short_read_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let (index, _) = SearchIndex::open(dir.path()).unwrap();
        let writer = index.writer().unwrap();
        for (i, body) in ["one fox", "fox fox fox", "no match", "fox and Fox"].iter().enumerate() {
            let doc = super::super::IndexDoc {
                file: format!("n{i}.md"),
                path: format!("n{i}.md"),
                category: "notes",
                title: format!("Note {i}"),
                body: body.to_string(),
                ..Default::default()
            };
            index.put(&writer, &doc).unwrap();
        }
        index.commit(writer).unwrap();
        let query = SearchQuery {
            categories: vec!["notes".into()],
            limit: 10,
            ..SearchQuery::default()
        };
        let fox = compile("f.x").unwrap();
        let all = index.search_regex(&query, &fox).unwrap();
        let order: Vec<&str> = all.hits.iter().map(|hit| hit.path.as_str()).collect();
        assert_eq!(order, ["n1.md", "n3.md", "n0.md"]);
        assert_eq!(all.hits[0].score, 3.0);
        assert!(!all.partial && !all.more);
        let cut = index.search_regex_reading(&query, &fox, 2).unwrap();
        assert!(cut.partial);
        assert!(cut.hits.len() <= 2);
        let paged = SearchQuery { limit: 1, ..query };
        assert!(index.search_regex(&paged, &fox).unwrap().more);
    }

    #[test]
    fn the_passage_holds_the_match_and_cuts_at_characters() {
        let body = format!("{}é needle {}", "a".repeat(1000), "b".repeat(1000));
        let at = body.find("needle");
        let passage = around(&body, at);
        assert!(passage.contains("needle"), "{passage}");
        assert!(passage.len() <= SNIPPET_CHARS);
        assert_eq!(around("short", None), "short");
        let accents = "é".repeat(600);
        assert!(around(&accents, Some(601)).len() <= SNIPPET_CHARS);
    }
}
