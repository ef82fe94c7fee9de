//! Quoting user input in error messages: control bytes, NULs and invalid UTF-8 escaped, and
//! long text cut short, so a message never carries raw bytes from a hostile file.

/// The longest echo of user input, in characters.
pub const MAX_ECHO: usize = 80;

/// `s` with control characters escaped (`\0`, `\n`, `\u{1b}`...) and cut to [`MAX_ECHO`]
/// characters (then ending in `...`); printable text, including non-ASCII, is kept.
pub fn echo(s: &str) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == MAX_ECHO {
            out.push_str("...");
            break;
        }
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// `s` with control characters escaped, whole (for messages that quote input themselves).
pub fn escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| if c.is_control() && c != '\n' { c.escape_debug().collect::<Vec<_>>() } else { vec![c] })
        .collect()
}

/// [`echo`] of bytes that may not be UTF-8 (invalid bytes become `\xNN`).
pub fn echo_bytes(b: &[u8]) -> String {
    let b = &b[..b.len().min(MAX_ECHO * 4)];
    let mut s = String::new();
    let mut rest = b;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(v) => {
                s.push_str(v);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                s.push_str(std::str::from_utf8(good).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len());
                for x in &bad[..n] {
                    s.push_str(&format!("\\x{x:02x}"));
                }
                rest = &bad[n..];
            }
        }
    }
    echo(&s)
}

/// " (line L, column C)" of a byte offset of `text` (lines and columns from 1; columns in
/// characters).
pub fn line_col(text: &str, at: usize) -> String {
    let before = &text.as_bytes()[..at.min(text.len())];
    let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
    let start = before.iter().rposition(|&c| c == b'\n').map(|i| i + 1).unwrap_or(0);
    let col = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    format!(" (line {line}, column {col})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_truncates() {
        assert_eq!(echo("a\0b\x1b"), "a\\0b\\u{1b}");
        assert_eq!(echo("dé"), "dé");
        assert_eq!(echo_bytes(b"x\xff\x00"), "x\\xff\\0");
        let long = "y".repeat(200);
        assert_eq!(echo(&long), format!("{}...", "y".repeat(80)));
    }
}
