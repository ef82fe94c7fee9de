//! Reading a config document (TOML or JSON): the nesting limit, and errors that name the
//! key, the line and the expected type in the user's terms.

use crate::error::{Error, Result, Schema};

/// The deepest a config nests (tables, arrays, inline tables): real configs nest 3 or 4
/// levels; the parsers recurse, so a file nested thousands deep is refused with this (the
/// Python front refuses such a file before parsing it, naming the line).
pub const MAX_NESTING: usize = 64;

/// What a parser's own recursion limit says, in the user's terms.
fn nesting_message() -> String {
    format!("nested too deeply: a config nests at most {MAX_NESTING} levels")
}

/// A key path cut to its first characters (a path as deep as the nesting limit is long).
fn short_key(key: &str) -> String {
    if key.chars().count() <= 120 {
        return key.to_owned();
    }
    key.chars().take(120).collect::<String>() + "..."
}

/// The children of a TOML or JSON value with the key path step to each (`.name` or `[i]`).
pub(super) trait Nested: Sized {
    fn children(&self) -> Vec<(String, &Self)>;
}

impl Nested for toml::Value {
    fn children(&self) -> Vec<(String, &Self)> {
        match self {
            toml::Value::Table(t) => t.iter().map(|(k, v)| (format!(".{k}"), v)).collect(),
            toml::Value::Array(a) => a.iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)).collect(),
            _ => Vec::new(),
        }
    }
}

impl Nested for serde_json::Value {
    fn children(&self) -> Vec<(String, &Self)> {
        match self {
            serde_json::Value::Object(m) => m.iter().map(|(k, v)| (format!(".{k}"), v)).collect(),
            serde_json::Value::Array(a) => a.iter().enumerate().map(|(i, v)| (format!("[{i}]"), v)).collect(),
            _ => Vec::new(),
        }
    }
}

/// An error naming the first value nested deeper than [`MAX_NESTING`] under the top-level
/// entries `top` (key path step, value), walked without recursion.
pub(super) fn check_nesting<V: Nested>(top: Vec<(String, &V)>) -> Result<()> {
    let mut stack: Vec<(String, &V, usize)> = top.into_iter().map(|(k, v)| (k, v, 1)).collect();
    while let Some((path, v, depth)) = stack.pop() {
        if depth > MAX_NESTING {
            let key = short_key(path.trim_start_matches('.'));
            return Err(Error::config(&crate::quote::echo(&key), nesting_message()));
        }
        stack.extend(v.children().into_iter().map(|(step, c)| (format!("{path}{step}"), c, depth + 1)));
    }
    Ok(())
}

/// A config error at `path` (the key path serde reached, `.` for the top) with `msg`, the
/// message cleaned for the user: no position inside a document they never saw, control
/// characters escaped, at most a few lines.
pub(super) fn config_error(path: Option<&serde_path_to_error::Path>, msg: &str, loc: &str) -> Error {
    let key = path.map(ToString::to_string).unwrap_or_default();
    let key = if key == "." || key.is_empty() { "config".to_owned() } else { crate::quote::echo(&short_key(&key)) };
    if msg.contains("recursion limit exceeded") {
        return Error::config(&key, format!("{}{loc}", nesting_message()));
    }
    let mut msg = plain_types(&crate::quote::escape(msg.trim()));
    if msg.chars().count() > 600 {
        msg = msg.chars().take(600).collect::<String>() + "...";
    }
    // serde reports an unknown key through `de::Error::unknown_field`, whose message this is
    let how = if msg.starts_with("unknown field") { Schema::UnknownKey } else { Schema::Value };
    Error::schema(&key, how, format!("{msg}{loc}"))
}

/// serde's Rust type names in "expected u64" said in words.
fn plain_types(msg: &str) -> String {
    let Some(i) = msg.rfind("expected ") else { return msg.to_owned() };
    let words = match &msg[i + 9..] {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a boolean" => "true or false",
        _ => return msg.to_owned(),
    };
    // an integer past 64 bits (a Python int) reaches serde_json as a float: say it is too large
    let big = msg.strip_prefix("invalid type: floating point `").and_then(|r| r.split('`').next());
    if let Some(v) = big.and_then(|t| t.parse::<f64>().ok()).filter(|v| v.fract() == 0.0 && v.abs() >= 9.2e18) {
        if words.contains("integer") {
            return format!("{v:e} is too large; expected {words} of at most 64 bits");
        }
    }
    format!("{}expected {words}", &msg[..i])
}

/// `T` from JSON text the Python binding built from keyword arguments (trace options, a cost
/// model): errors name `prefix.key` (`trace.skip_lines`), never a position in that text.
pub fn from_json_doc<T: serde::de::DeserializeOwned>(text: &str, prefix: &str) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let r = serde_path_to_error::deserialize(&mut de).map_err(|e| json_error(Some(e.path()), e.inner(), text));
    r.and_then(|v| de.end().map(|()| v).map_err(|e| json_error(None, &e, text))).map_err(|mut e| {
        e.key = Some(match e.key.as_deref() {
            None | Some("config") => prefix.to_owned(),
            Some(k) => format!("{prefix}.{k}"),
        });
        e
    })
}

/// A toml error on `text` (the user's own file): its message and where.
pub(super) fn toml_error(path: Option<&serde_path_to_error::Path>, e: &toml::de::Error, text: &str) -> Error {
    let loc = e.span().map(|s| crate::quote::line_col(text, s.start)).unwrap_or_default();
    let value = e.span().and_then(|s| text.get(s)).unwrap_or("");
    match date_message(e.message(), value.trim().parse::<toml::value::Datetime>().ok()) {
        Some(msg) => config_error(path, &msg, &loc),
        None => config_error(path, e.message(), &loc),
    }
}

/// A TOML date or time given where something else is expected: toml hands it to serde as a
/// map (or, from a merged table, a string), so serde's message says "invalid type: map";
/// say it is a date instead.
pub(super) fn date_message(msg: &str, date: Option<toml::value::Datetime>) -> Option<String> {
    let date = date?;
    let rest = msg.strip_prefix("invalid type: ")?;
    let expected = rest.split_once("expected ").map(|(_, x)| x).unwrap_or("another type of value");
    Some(format!("a date ({date}) is not a valid value here; expected {expected}"))
}

/// The value at `path` in `table`, if it is a TOML date (for [`date_message`]).
pub(super) fn date_at(table: &toml::Table, path: &serde_path_to_error::Path) -> Option<toml::value::Datetime> {
    use serde_path_to_error::Segment;
    let mut v: Option<&toml::Value> = None;
    for seg in path.iter() {
        v = match (seg, v) {
            (Segment::Map { key }, None) => table.get(key),
            (Segment::Map { key }, Some(toml::Value::Table(t))) => t.get(key),
            (Segment::Seq { index }, Some(toml::Value::Array(a))) => a.get(*index),
            _ => None,
        };
        v?;
    }
    match v {
        Some(toml::Value::Datetime(d)) => Some(*d),
        _ => None,
    }
}

/// A serde_json error, without serde_json's " at line L column C" (a position in the JSON
/// the Python binding made from a dict, not in anything the user wrote).
pub(super) fn json_error(path: Option<&serde_path_to_error::Path>, e: &serde_json::Error, text: &str) -> Error {
    let full = e.to_string();
    let msg = match full.rfind(" at line ") {
        Some(i) if e.line() > 0 => &full[..i],
        _ => full.as_str(),
    };
    let mut msg = msg.to_owned();
    if e.is_syntax() && e.line() > 0 {
        // find what the JSON held there: NaN and infinities are the only way a dict gets here
        let off: usize =
            text.split_inclusive('\n').take(e.line() - 1).map(str::len).sum::<usize>() + e.column().saturating_sub(1);
        let rest = text.get(off..).unwrap_or("");
        if ["NaN", "Infinity", "-Infinity"].iter().any(|t| rest.starts_with(t)) {
            msg = "not a finite number (NaN and infinity are not allowed)".into();
        }
    }
    config_error(path, &msg, "")
}

/// `v` as TOML can hold it: object members that are null dropped (a key not given), and
/// integers past TOML's (past 2^63 - 1) given as strings, which sizes read exactly.
pub(super) fn toml_ready(v: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Object(m) => m.into_iter().filter(|(_, x)| !x.is_null()).map(|(k, x)| (k, toml_ready(x))).collect(),
        Value::Array(a) => a.into_iter().map(toml_ready).collect(),
        Value::Number(n) if n.as_u64().is_some_and(|u| u > i64::MAX as u64) => Value::String(n.to_string()),
        x => x,
    }
}
