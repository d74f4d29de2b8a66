//! Splits one line of a query into tokens that remember where they stand.
//!
//! The lexer reads a line at a time because every clause is one line: a string cannot run on to the next line, and
//! an error's line is simply the line being read. Columns count characters from 1, the way an editor shows them.
//! The lexer knows the shapes of tokens, not their meaning: `where`, `status`, `true` and `now-30d` are all words,
//! and the parser decides which is a keyword, a field or a value. Dates are checked here (`2026-02-30` is refused)
//! because their shape alone already says they are dates. [`Tokens`] gives the parser one token of lookahead and
//! builds its error messages ("expected X, found Y") at the right column.

use std::ops::Range;

use super::QueryError;
use crate::journal::day::Day;

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    /// An identifier (`[A-Za-z_][A-Za-z0-9_.-]*`): a keyword, a field, `true`, `false` or `now-30d`. `now+7d` is a
    /// word too, although `+` is not otherwise allowed in one.
    Word,
    /// A field name in backquotes, without them.
    Backquoted(String),
    /// A quoted string with its escapes resolved.
    Text(String),
    Number(f64),
    /// A calendar day, as days since 1970-01-01.
    Date(i64),
    Comma,
}

/// A token and where it stands in its line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token<'a> {
    pub kind: Kind,
    /// The token as written, quotes included.
    pub text: &'a str,
    /// The byte range of `text` in the line.
    pub span: Range<usize>,
    /// The character column of the first character, from 1.
    pub column: usize,
    /// The character column just past the last character.
    pub end_column: usize,
}

impl Token<'_> {
    /// Whether the token is the word `keyword`, in any case.
    pub fn is_word(&self, keyword: &str) -> bool {
        self.kind == Kind::Word && self.text.eq_ignore_ascii_case(keyword)
    }
}

/// How a token is named in an error message: `` `status` ``, `the string "done"`, or the end of the line.
pub(super) fn describe(token: Option<&Token<'_>>) -> String {
    const LONGEST: usize = 40;
    let Some(token) = token else {
        return "the end of the line".to_string();
    };
    let mut shown: String = token.text.chars().take(LONGEST).collect();
    if token.text.chars().nth(LONGEST).is_some() {
        shown.push('…');
    }
    match token.kind {
        Kind::Text(_) => format!("the string {shown}"),
        _ => format!("`{shown}`"),
    }
}

/// Reads the tokens of one line, one at a time.
pub(super) struct Lexer<'a> {
    line: &'a str,
    line_number: usize,
    /// The byte offset of the next character.
    position: usize,
    /// The character column of the next character, from 1.
    column: usize,
}

impl<'a> Lexer<'a> {
    pub fn new(line: &'a str, line_number: usize) -> Lexer<'a> {
        Lexer {
            line,
            line_number,
            position: 0,
            column: 1,
        }
    }

    /// An error at a column of this line.
    pub fn error(&self, column: usize, message: impl Into<String>) -> QueryError {
        QueryError {
            line: self.line_number,
            column,
            message: message.into(),
        }
    }

    /// The next token, `None` at the end of the line, or an error naming what was expected instead.
    pub fn next_token(&mut self) -> Result<Option<Token<'a>>, QueryError> {
        while self.peek().is_some_and(char::is_whitespace) {
            self.advance();
        }
        let (start, column) = (self.position, self.column);
        let Some(first) = self.advance() else {
            return Ok(None);
        };
        let kind = match first {
            ',' => Kind::Comma,
            '"' | '\'' => Kind::Text(self.string(first, column)?),
            '`' => self.backquoted(column)?,
            'A'..='Z' | 'a'..='z' | '_' => {
                self.skip_while(is_word_char);
                // `now+7d` is a word: `+` is read only right after `now`, so that it means nothing elsewhere.
                if self.line[start..self.position].eq_ignore_ascii_case("now") && self.peek() == Some('+') {
                    self.advance();
                    self.skip_while(is_word_char);
                }
                Kind::Word
            }
            '0'..='9' | '-' if first != '-' || self.peek().is_some_and(|c| c.is_ascii_digit()) => {
                self.skip_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | ':'));
                self.number_or_date(&self.line[start..self.position], column)?
            }
            other => return Err(self.error(column, unexpected(other))),
        };
        Ok(Some(Token {
            kind,
            text: &self.line[start..self.position],
            span: start..self.position,
            column,
            end_column: self.column,
        }))
    }

    fn peek(&self) -> Option<char> {
        self.line.get(self.position..).and_then(|rest| rest.chars().next())
    }

    fn advance(&mut self) -> Option<char> {
        let next = self.peek()?;
        self.position += next.len_utf8();
        self.column += 1;
        Some(next)
    }

    fn skip_while(&mut self, keep: impl Fn(char) -> bool) {
        while self.peek().is_some_and(&keep) {
            self.advance();
        }
    }

    /// The rest of a string whose opening `quote` stands at `column`.
    fn string(&mut self, quote: char, column: usize) -> Result<String, QueryError> {
        let unclosed = || format!("expected a closing {quote} for the string that starts here");
        let mut text = String::new();
        loop {
            let at = self.column;
            match self.advance() {
                None => return Err(self.error(column, unclosed())),
                Some(c) if c == quote => return Ok(text),
                Some('\\') => match self.advance() {
                    Some(escaped @ ('\\' | '"' | '\'')) => text.push(escaped),
                    None => return Err(self.error(column, unclosed())),
                    Some(_) => {
                        return Err(self.error(
                            at,
                            "expected \\\\, \\\" or \\' after a backslash (the only escapes in a string)",
                        ));
                    }
                },
                Some(c) => text.push(c),
            }
        }
    }

    /// The rest of a backquoted field name whose opening backquote stands at `column`.
    fn backquoted(&mut self, column: usize) -> Result<Kind, QueryError> {
        let start = self.position;
        self.skip_while(|c| c != '`');
        let name = &self.line[start..self.position];
        if self.advance().is_none() {
            return Err(self.error(column, "expected a closing ` for the field name that starts here"));
        }
        if name.trim().is_empty() {
            return Err(self.error(column, "expected a field name between the backquotes"));
        }
        Ok(Kind::Backquoted(name.to_string()))
    }

    /// Reads a run that starts with a digit (or `-` and a digit) as a date or a number.
    fn number_or_date(&self, text: &str, column: usize) -> Result<Kind, QueryError> {
        let bytes = text.as_bytes();
        let digits = |range: Range<usize>| bytes.get(range).is_some_and(|part| part.iter().all(u8::is_ascii_digit));
        if bytes.len() == 10 && digits(0..4) && bytes[4] == b'-' && digits(5..7) && bytes[7] == b'-' && digits(8..10) {
            return match Day::parse(text) {
                Ok(day) => Ok(Kind::Date(day.epoch_days())),
                Err(_) => Err(self.error(
                    column,
                    format!("expected a real calendar day between 1000-01-01 and 9999-12-31, found `{text}`"),
                )),
            };
        }
        let unsigned = text.strip_prefix('-').unwrap_or(text);
        let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, "0"));
        let all_digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
        match text.parse::<f64>() {
            Ok(number) if all_digits(whole) && all_digits(fraction) && number.is_finite() => Ok(Kind::Number(number)),
            _ => Err(self.error(
                column,
                format!("expected a number (like 3 or -2.5) or a date (like 2026-11-03), found `{text}`"),
            )),
        }
    }
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')
}

/// The message for a character that starts no token, with the operator word meant when it is a symbol.
fn unexpected(c: char) -> String {
    match c {
        '(' | ')' => "expected a condition: there are no parentheses; `and` binds tighter than `or`, and separate \
                      `where` lines must all hold, so write each group of alternatives on its own `where` line"
            .to_string(),
        '=' => "expected an operator word: write `is` instead of `=`".to_string(),
        '!' => "expected an operator word: write `is not` instead of `!=`".to_string(),
        '>' => "expected an operator word: write `gt` instead of `>`".to_string(),
        '<' => "expected an operator word: write `lt` instead of `<`".to_string(),
        other => format!(
            "expected a field, an operator or a value, found `{other}` (write a field name with other characters \
             in backquotes, like `my key`)"
        ),
    }
}

/// The tokens of one line with one token of lookahead.
pub(super) struct Tokens<'a> {
    lexer: Lexer<'a>,
    peeked: Option<Option<Token<'a>>>,
    /// The column just past the last token taken, where "the end of the line" is reported.
    end_column: usize,
}

impl<'a> Tokens<'a> {
    pub fn new(line: &'a str, line_number: usize) -> Tokens<'a> {
        Tokens {
            lexer: Lexer::new(line, line_number),
            peeked: None,
            end_column: 1,
        }
    }

    pub fn peek(&mut self) -> Result<Option<&Token<'a>>, QueryError> {
        if self.peeked.is_none() {
            self.peeked = Some(self.lexer.next_token()?);
        }
        Ok(self.peeked.as_ref().and_then(Option::as_ref))
    }

    pub fn next(&mut self) -> Result<Option<Token<'a>>, QueryError> {
        let token = match self.peeked.take() {
            Some(token) => token,
            None => self.lexer.next_token()?,
        };
        if let Some(token) = &token {
            self.end_column = token.end_column;
        }
        Ok(token)
    }

    /// Takes the next token if it is the word `keyword`.
    pub fn take_word(&mut self, keyword: &str) -> Result<bool, QueryError> {
        let found = self.peek()?.is_some_and(|token| token.is_word(keyword));
        if found {
            self.next()?;
        }
        Ok(found)
    }

    /// The line's number, from 1.
    pub fn line_number(&self) -> usize {
        self.lexer.line_number
    }

    /// The column of the next token, or of the end of the line.
    pub fn next_column(&mut self) -> Result<usize, QueryError> {
        let end_column = self.end_column;
        Ok(self.peek()?.map_or(end_column, |token| token.column))
    }

    pub fn error_at_column(&self, column: usize, message: impl Into<String>) -> QueryError {
        self.lexer.error(column, message)
    }

    /// An error at a token, or at the end of the line when there is none: "expected X, found Y".
    pub fn expected(&self, token: Option<&Token<'_>>, what: &str) -> QueryError {
        let column = token.map_or(self.end_column, |token| token.column);
        self.lexer
            .error(column, format!("expected {what}, found {}", describe(token)))
    }

    /// Requires the end of the line after `what`.
    pub fn end(&mut self, what: &str) -> Result<(), QueryError> {
        match self.next()? {
            None => Ok(()),
            token => Err(self.expected(token.as_ref(), &format!("the end of the line after {what}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(line: &str) -> Result<Vec<Token<'_>>, QueryError> {
        let mut lexer = Lexer::new(line, 3);
        let mut all = Vec::new();
        while let Some(token) = lexer.next_token()? {
            all.push(token);
        }
        Ok(all)
    }

    fn kinds(line: &str) -> Vec<Kind> {
        tokens(line).unwrap().into_iter().map(|token| token.kind).collect()
    }

    #[test]
    fn tokens_keep_their_spans_and_columns() {
        let all = tokens("where  `my key` is \"é\", 2.5").unwrap();
        let spans: Vec<(&str, Range<usize>, usize, usize)> = all
            .iter()
            .map(|t| (t.text, t.span.clone(), t.column, t.end_column))
            .collect();
        assert_eq!(
            spans,
            [
                ("where", 0..5, 1, 6),
                ("`my key`", 7..15, 8, 16),
                ("is", 16..18, 17, 19),
                ("\"é\"", 19..23, 20, 23),
                (",", 23..24, 23, 24),
                ("2.5", 25..28, 25, 28),
            ]
        );
    }

    #[test]
    fn reads_every_kind_of_token() {
        assert_eq!(
            kinds("a_b-c.d `x y` 'it\\'s' \"a\\\\b\\\"\" -3 2.5 2026-11-03 ,"),
            [
                Kind::Word,
                Kind::Backquoted("x y".into()),
                Kind::Text("it's".into()),
                Kind::Text("a\\b\"".into()),
                Kind::Number(-3.0),
                Kind::Number(2.5),
                Kind::Date(Day::parse("2026-11-03").unwrap().epoch_days()),
                Kind::Comma,
            ]
        );
        let words = tokens("now now-30d NOW+2w now+x").unwrap();
        let texts: Vec<&str> = words.iter().map(|t| t.text).collect();
        assert_eq!(texts, ["now", "now-30d", "NOW+2w", "now+x"]);
        assert!(words.iter().all(|t| t.kind == Kind::Word));
        assert!(tokens("   ").unwrap().is_empty());
    }

    #[test]
    fn errors_point_at_the_token() {
        let error = |line: &str| {
            let error = tokens(line).unwrap_err();
            assert_eq!(error.line, 3);
            (error.column, error.message)
        };
        assert_eq!(error("a is \"open").0, 6);
        assert!(error("a is \"open").1.contains("closing \""));
        assert_eq!(error("a is 'x\\n'").0, 8);
        assert_eq!(error("é is 2026-02-30").0, 1);
        assert_eq!(error("x is 2026-02-30").0, 6);
        assert!(error("x is 2026-02-30").1.contains("real calendar day"));
        assert!(error("x is 2026-1-3").1.contains("found `2026-1-3`"));
        assert!(error("x is 1.").1.contains("expected a number"));
        assert!(error("x is 1e5").1.contains("expected a number"));
        assert_eq!(
            error("x = 1"),
            (3, "expected an operator word: write `is` instead of `=`".into())
        );
        assert!(error("(a is 1)").1.contains("no parentheses"));
        assert!(error("`open").1.contains("closing `"));
        assert!(error("``").1.contains("between the backquotes"));
        assert!(error("a is - 3").1.contains("found `-`"));
    }

    #[test]
    fn describes_tokens_for_messages() {
        let all = tokens("status \"done\"").unwrap();
        assert_eq!(describe(all.first()), "`status`");
        assert_eq!(describe(all.get(1)), "the string \"done\"");
        assert_eq!(describe(None), "the end of the line");
        let long = "x".repeat(60);
        assert_eq!(
            describe(tokens(&long).unwrap().first()),
            format!("`{}…`", "x".repeat(40))
        );
    }
}
