//! Exact parsing of byte sizes and fractions as storage people write them.
//!
//! Sizes: an integer number of bytes, or a decimal number with a unit: `B`, decimal
//! `kB KB MB GB TB PB` (10^3n, as drive makers label capacity) or binary
//! `KiB MiB GiB TiB PiB` (2^10n).  Arithmetic is exact (no floating point): `1.5TB` is
//! 1,500,000,000,000 bytes.  A bare `G` is refused, because it is ambiguous.
//! Fractions: a number (`0.07`) or a percentage string (`"7%"`).

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ByteSize(pub u64);

const UNITS: &[(&str, u128)] = &[
    ("b", 1),
    ("kb", 1_000),
    ("mb", 1_000_000),
    ("gb", 1_000_000_000),
    ("tb", 1_000_000_000_000),
    ("pb", 1_000_000_000_000_000),
    ("kib", 1 << 10),
    ("mib", 1 << 20),
    ("gib", 1 << 30),
    ("tib", 1 << 40),
    ("pib", 1 << 50),
];

/// `text` quoted for a message: control characters escaped, long text cut short.
fn q(text: &str) -> String {
    format!("\"{}\"", crate::quote::echo(text))
}

pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty size".into());
    }
    if t.starts_with('-') {
        return Err(format!("{}: negative sizes are not allowed", q(text)));
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: String = num.chars().filter(|&c| c != '_').collect();
    let unit = unit.trim().to_ascii_lowercase();
    if is_exponent(&num, &unit) {
        return Err(format!(
            "{}: exponent notation is not accepted; write the number in digits with a unit, such as 480GB or 4TiB",
            q(text)
        ));
    }
    let mult = if unit.is_empty() {
        1u128
    } else {
        match UNITS.iter().find(|(u, _)| *u == unit) {
            Some(&(_, m)) => m,
            None => {
                return Err(format!(
                    "unknown unit {} in {}; use B, KB/MB/GB/TB (powers of 10) or KiB/MiB/GiB/TiB (powers of 2)",
                    q(&unit),
                    q(text)
                ))
            }
        }
    };
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(format!("{} is not a size", q(text)));
    }
    if !int_part.chars().all(|c| c.is_ascii_digit()) || !frac_part.chars().all(|c| c.is_ascii_digit()) {
        return Err(format!("{} is not a size", q(text)));
    }
    if frac_part.len() > 18 {
        return Err(format!("{} has too many decimals", q(text)));
    }
    let int_v: u128 =
        if int_part.is_empty() { 0 } else { int_part.parse().map_err(|_| format!("{} is too large", q(text)))? };
    let frac_v: u128 = if frac_part.is_empty() { 0 } else { frac_part.parse().unwrap() };
    let scale = 10u128.pow(frac_part.len() as u32);
    let total_num = int_v
        .checked_mul(mult)
        .and_then(|a| a.checked_mul(scale))
        .and_then(|a| a.checked_add(frac_v * mult))
        .ok_or_else(|| format!("{} is too large", q(text)))?;
    if total_num % scale != 0 {
        return Err(format!("{} is not a whole number of bytes", q(text)));
    }
    let bytes = total_num / scale;
    u64::try_from(bytes).map_err(|_| format!("{} is too large", q(text)))
}

/// `1e30TB`, `2E+3`: a number in exponent notation (the "unit" is `e` and then digits).
fn is_exponent(num: &str, unit: &str) -> bool {
    let rest = unit.strip_prefix('e').map(|r| r.trim_start_matches(['+', '-']));
    !num.is_empty() && rest.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
}

/// A human form of a byte count: exact binary units when exact, else decimal GB with decimals.
pub fn format_size(bytes: u64) -> String {
    for (u, m) in [("PiB", 1u64 << 50), ("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20)] {
        if bytes >= m && bytes % m == 0 {
            return format!("{}{}", bytes / m, u);
        }
    }
    for (u, m) in
        [("PB", 1_000_000_000_000_000u64), ("TB", 1_000_000_000_000), ("GB", 1_000_000_000), ("MB", 1_000_000)]
    {
        if bytes >= m {
            return if bytes % m == 0 {
                format!("{}{}", bytes / m, u)
            } else {
                format!("{:.3}{}", bytes as f64 / m as f64, u)
            };
        }
    }
    format!("{}B", bytes)
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size: bytes as an integer, or a string such as \"4GiB\" or \"480GB\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<ByteSize, E> {
                Ok(ByteSize(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<ByteSize, E> {
                if v < 0 {
                    Err(E::custom(format!("a size cannot be negative ({v})")))
                } else {
                    Ok(ByteSize(v as u64))
                }
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<ByteSize, E> {
                if v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 {
                    Ok(ByteSize(v as u64))
                } else if v.fract() == 0.0 && v >= 1.8e19 {
                    Err(E::custom(format!("{v:e} bytes is too large (a size is at most 2^64 - 1 bytes)")))
                } else {
                    Err(E::custom(format!("{v} is not a whole, non-negative number of bytes")))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<ByteSize, E> {
                parse_size(v).map(ByteSize).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A fraction given as a number (0.07) or a percentage string ("7%").
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Fraction(pub f64);

pub fn parse_fraction(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim();
    let (num, pct) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (t, false),
    };
    const EXPECTED: &str = "expected a fraction such as 0.07 or a percentage such as \"7%\"";
    let v: f64 = num.parse().map_err(|_| format!("{} is not a number or a percentage; {EXPECTED}", q(text)))?;
    if !v.is_finite() {
        return Err(format!("{} is not a finite number; {EXPECTED}", q(text)));
    }
    Ok(if pct { v / 100.0 } else { v })
}

/// A plain number (`0.99`; a numeric string such as `"0.99"` too), for parameters that are
/// not fractions of anything (an exponent): a percentage is refused.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Number(pub f64);

pub fn parse_number(text: &str) -> std::result::Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("{} is not a finite number; expected a number such as 0.99", q(text))),
        Err(_) => Err(format!("{} is not a number; expected a number such as 0.99", q(text))),
    }
}

impl Serialize for Number {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Number;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number such as 0.99")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Number, E> {
                if v.is_finite() {
                    Ok(Number(v))
                } else {
                    Err(E::custom("not a finite number"))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Number, E> {
                Ok(Number(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Number, E> {
                parse_number(v).map(Number).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Fraction {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_f64(self.0)
    }
}

impl<'de> Deserialize<'de> for Fraction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Fraction;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a fraction such as 0.07 or a percentage string such as \"7%\"")
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> std::result::Result<Fraction, E> {
                if v.is_finite() {
                    Ok(Fraction(v))
                } else {
                    Err(E::custom("not a finite number"))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> std::result::Result<Fraction, E> {
                Ok(Fraction(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> std::result::Result<Fraction, E> {
                Ok(Fraction(v as f64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<Fraction, E> {
                parse_fraction(v).map(Fraction).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("4GiB").unwrap(), 4 << 30);
        assert_eq!(parse_size("480GB").unwrap(), 480_000_000_000);
        assert_eq!(parse_size("1.5TB").unwrap(), 1_500_000_000_000);
        assert_eq!(parse_size("4 KiB").unwrap(), 4096);
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("512B").unwrap(), 512);
        assert_eq!(parse_size("1_000 MB").unwrap(), 1_000_000_000);
        assert!(parse_size("4G").is_err());
        assert!(parse_size("1.5B").is_err());
        assert!(parse_size("-1GB").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("99999999PiB").is_err());
        assert_eq!(parse_size("-8MiB").unwrap_err(), "\"-8MiB\": negative sizes are not allowed");
        assert!(parse_size("4\0KiB").unwrap_err().contains("\\0"), "NUL echoed raw");
        assert!(parse_size(&format!("1{}", "x".repeat(500))).unwrap_err().len() < 300, "long echo not cut");
        for e in ["1e30TB", "1E3", "2.5e+3GB", "1e-3"] {
            assert!(parse_size(e).unwrap_err().contains("exponent notation is not accepted"), "{e}");
        }
        assert!(parse_size("1eb").unwrap_err().contains("unknown unit"));
    }

    #[test]
    fn fractions() {
        assert_eq!(parse_fraction("7%").unwrap(), 0.07);
        assert_eq!(parse_fraction("0.28").unwrap(), 0.28);
        for bad in ["nan%", "inf", "-inf%", "1e999%"] {
            let e = parse_fraction(bad).unwrap_err();
            assert!(e.contains("not a finite number") && e.contains("7%"), "{bad}: {e}");
        }
        let e = parse_fraction("x%").unwrap_err();
        assert!(e.contains("is not a number or a percentage") && e.contains("0.07"), "{e}");
        assert!(!parse_fraction("\u{1}%").unwrap_err().contains('\u{1}'));
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number(" 0.99 ").unwrap(), 0.99);
        assert!(parse_number("abc").unwrap_err().contains("is not a number; expected a number"));
        assert!(parse_number("7%").unwrap_err().contains("is not a number"));
        assert!(parse_number("nan").unwrap_err().contains("not a finite number"));
    }

    #[test]
    fn format() {
        assert_eq!(format_size(4 << 30), "4GiB");
        assert_eq!(format_size(480_000_000_000), "480GB");
        assert_eq!(format_size(1_500_301_910_016), "1.500TB");
    }
}
