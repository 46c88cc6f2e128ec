//! Whitespace tokenizer with columns, a cursor for the hand-written parsers, and the
//! line loop shared by every line-oriented syntax (comments `#`, blank lines).

use crate::error::{LineError, ParseError, ParseReport};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    pub text: &'a str,
    /// 1-based character column.
    pub column: usize,
}

/// Splits on spaces, tabs and CR; columns count characters.
pub(crate) fn tokenize(line: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None; // (byte, column)
    let mut column = 0;
    for (byte, c) in line.char_indices() {
        column += 1;
        let sep = c == ' ' || c == '\t' || c == '\r' || c == '\n';
        match (sep, start) {
            (true, Some((b, col))) => {
                out.push(Token {
                    text: &line[b..byte],
                    column: col,
                });
                start = None;
            }
            (false, None) => start = Some((byte, column)),
            _ => {}
        }
    }
    if let Some((b, col)) = start {
        out.push(Token {
            text: &line[b..],
            column: col,
        });
    }
    out
}

pub(crate) struct Cursor<'a> {
    toks: Vec<Token<'a>>,
    pos: usize,
    eol_column: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(line: &'a str) -> Self {
        let eol_column = line.trim_end().chars().count() + 1;
        Cursor {
            toks: tokenize(line),
            pos: 0,
            eol_column,
        }
    }

    pub fn peek(&self) -> Option<Token<'a>> {
        self.toks.get(self.pos).copied()
    }

    pub fn peek_text(&self) -> Option<&'a str> {
        self.peek().map(|t| t.text)
    }

    pub fn next(&mut self) -> Option<Token<'a>> {
        let t = self.peek();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    /// Consumes the next token if it equals `word`.
    pub fn eat(&mut self, word: &str) -> bool {
        if self.peek_text() == Some(word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    /// Error at the current token: "expected {what}, found '{tok}'".
    pub fn expected(&self, what: &str) -> LineError {
        match self.peek() {
            Some(t) => LineError {
                column: t.column,
                message: format!("expected {what}, found '{}'", t.text),
            },
            None => LineError {
                column: self.eol_column,
                message: format!("expected {what}, found end of line"),
            },
        }
    }

    /// Error at the token just consumed.
    pub fn error_prev(&self, message: String) -> LineError {
        let column = match self.pos.checked_sub(1).and_then(|i| self.toks.get(i)) {
            Some(t) => t.column,
            None => self.eol_column,
        };
        LineError { column, message }
    }

    /// Consumes `word` or fails with "expected '{word}' {context}".
    pub fn expect(&mut self, word: &str, context: &str) -> Result<(), LineError> {
        if self.eat(word) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{word}'{context}")))
        }
    }

    /// Next token's text or an "expected {what}" error at end of line.
    pub fn word(&mut self, what: &str) -> Result<Token<'a>, LineError> {
        match self.next() {
            Some(t) => Ok(t),
            None => Err(self.expected(what)),
        }
    }

    pub fn expect_end(&self) -> Result<(), LineError> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.expected("end of line"))
        }
    }
}

/// Whether a line carries no command (blank or `#` comment).
pub(crate) fn is_blank_or_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// Parses every non-blank, non-comment line, keeping going after errors.
pub(crate) fn parse_lines_all<T>(
    text: &str,
    file: &str,
    mut parse: impl FnMut(&str) -> Result<T, LineError>,
) -> ParseReport<T> {
    let mut report = ParseReport {
        parsed: Vec::new(),
        errors: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        if is_blank_or_comment(line) {
            continue;
        }
        match parse(line) {
            Ok(v) => report.parsed.push((i + 1, v)),
            Err(e) => report.errors.push(e.at(file, i + 1)),
        }
    }
    report
}

/// Parses every non-blank, non-comment line, stopping at the first error.
pub(crate) fn parse_lines_first<T>(
    text: &str,
    file: &str,
    mut parse: impl FnMut(&str) -> Result<T, LineError>,
) -> Result<Vec<T>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if is_blank_or_comment(line) {
            continue;
        }
        out.push(parse(line).map_err(|e| e.at(file, i + 1))?);
    }
    Ok(out)
}

/// Unsigned integer as C `strtoumax(s, _, 0)` reads a whole token: optional `+`, `0x`
/// hex, leading-`0` octal, else decimal. `None` if malformed or above `u64::MAX`.
pub(crate) fn parse_c_uint(s: &str) -> Option<u64> {
    let s = s.strip_prefix('+').unwrap_or(s);
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_tokenize_columns() {
        let t = tokenize("  flow\tvalidate  0 ");
        let got: Vec<_> = t.iter().map(|t| (t.text, t.column)).collect();
        assert_eq!(got, vec![("flow", 3), ("validate", 8), ("0", 18)]);
        assert!(tokenize("   ").is_empty());
        // Columns count characters, not bytes.
        assert_eq!(tokenize("é x")[1].column, 3);
    }

    #[test]
    fn test_cursor_errors() {
        let mut c = Cursor::new("flow iz");
        assert!(c.eat("flow"));
        let e = c.expect("is", " after field").unwrap_err();
        assert_eq!(e.column, 6);
        assert_eq!(e.message, "expected 'is' after field, found 'iz'");
        c.next();
        let e = c.expected("a port");
        assert_eq!(
            (e.column, e.message.as_str()),
            (8, "expected a port, found end of line")
        );
    }

    #[test]
    fn test_parse_c_uint() {
        assert_eq!(parse_c_uint("42"), Some(42));
        assert_eq!(parse_c_uint("+5"), Some(5));
        assert_eq!(parse_c_uint("0x1F"), Some(31));
        assert_eq!(parse_c_uint("0XfF"), Some(255));
        assert_eq!(parse_c_uint("017"), Some(15));
        assert_eq!(parse_c_uint("0"), Some(0));
        assert_eq!(parse_c_uint("08"), None);
        assert_eq!(parse_c_uint("0x"), None);
        assert_eq!(parse_c_uint("-1"), None);
        assert_eq!(parse_c_uint("5a"), None);
        assert_eq!(parse_c_uint("18446744073709551616"), None);
    }

    #[test]
    fn test_line_loops() {
        let text = "# c\n\nok\nbad\nok\n";
        let f = |l: &str| {
            if l == "ok" {
                Ok(1)
            } else {
                Err(LineError {
                    column: 1,
                    message: "no".into(),
                })
            }
        };
        let r = parse_lines_all(text, "f", f);
        assert_eq!(r.parsed, vec![(3, 1), (5, 1)]);
        assert_eq!(r.errors[0].to_string(), "f:4:1: no");
        assert_eq!(parse_lines_first(text, "f", f).unwrap_err().line, 4);
    }
}
