//! Parse errors that point at a file, a line and a column.

use std::fmt;

/// A syntax error: `file:line:column: message`. Lines and columns count from 1; the
/// column is in characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ParseError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    /// The message's long words (a 1 MB bad token) are cut: see [`cut_long_words`].
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file,
            self.line,
            self.column,
            cut_long_words(&self.message)
        )
    }
}

/// Words longer than this many characters are cut in messages.
pub const LONG_WORD_CHARS: usize = 48;
/// What is kept of a cut word \[characters\], before "...".
pub const CUT_WORD_KEEP_CHARS: usize = 40;

/// `message` with every word longer than [`LONG_WORD_CHARS`] cut to its first
/// [`CUT_WORD_KEEP_CHARS`] characters and "..." (a closing quote is kept): a bad token of a
/// megabyte is quoted as a line a terminal can show, not echoed whole.
pub fn cut_long_words(message: &str) -> std::borrow::Cow<'_, str> {
    if !message.split(' ').any(|w| w.chars().count() > LONG_WORD_CHARS) {
        return std::borrow::Cow::Borrowed(message);
    }
    let words: Vec<String> = message
        .split(' ')
        .map(|w| {
            if w.chars().count() <= LONG_WORD_CHARS {
                return w.to_string();
            }
            let head: String = w.chars().take(CUT_WORD_KEEP_CHARS).collect();
            let quote = if w.ends_with('\'') { "'" } else { "" };
            format!("{head}...{quote}")
        })
        .collect();
    std::borrow::Cow::Owned(words.join(" "))
}

/// Error of one line, before the file and line number are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineError {
    pub column: usize,
    pub message: String,
}

impl LineError {
    pub fn at(self, file: &str, line: usize) -> ParseError {
        ParseError {
            file: file.to_string(),
            line,
            column: self.column,
            message: self.message,
        }
    }
}

/// Result of parsing a whole file in keep-going mode: what parsed, with its line number,
/// and every error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseReport<T> {
    pub parsed: Vec<(usize, T)>,
    pub errors: Vec<ParseError>,
}

/// Error writing a model in a syntax that cannot express it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WriteError(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_long_token_cut_in_display() {
        let token = "x".repeat(1 << 20);
        let e = ParseError {
            file: "r.flow".into(),
            line: 3,
            column: 7,
            message: format!("expected 'flow', found '{token}'"),
        };
        let shown = e.to_string();
        assert_eq!(
            shown,
            format!(
                "r.flow:3:7: expected 'flow', found '{}...'",
                "x".repeat(CUT_WORD_KEEP_CHARS - 1)
            )
        );
        assert!(shown.len() < 100);
        let short = ParseError {
            file: "r".into(),
            line: 1,
            column: 1,
            message: "expected 'flow', found 'x'".into(),
        };
        assert_eq!(short.to_string(), "r:1:1: expected 'flow', found 'x'");
    }
}
