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
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
    }
}

/// Error of one line, before the file and line number are known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineError {
    pub column: usize,
    pub message: String,
}

impl LineError {
    pub fn at(self, file: &str, line: usize) -> ParseError {
        ParseError { file: file.to_string(), line, column: self.column, message: self.message }
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
