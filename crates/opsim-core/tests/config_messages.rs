//! Config errors a user can act on: TOML positions in their own file, key paths (never a
//! position inside the JSON the Python binding makes from a dict), sizes and fractions
//! explained, no raw control bytes, and bounds on integers that would hang a run.

use opsim_core::{Config, ErrorKind};

const DRIVE: &str = "[drive]\nuser_capacity = \"64MiB\"\nop = 0.28\n";

fn toml_err(text: &str) -> opsim_core::Error {
    Config::from_toml_str(text).expect_err(text)
}

fn json_err(text: &str) -> opsim_core::Error {
    Config::from_json_str(text).expect_err(text)
}

#[test]
fn toml_errors_carry_line_and_column_of_the_users_file() {
    let e = toml_err(&format!("{DRIVE}[ftl\ngc = \"greedy\"\n"));
    assert!(e.message.contains("(line 4, column 5)"), "{e}");
    let e = toml_err(&format!("{DRIVE}[ftl]\nd = \"x\"\n"));
    assert_eq!(e.key.as_deref(), Some("ftl.d"), "{e}");
    assert!(e.message.contains("(line 5, column 5)"), "{e}");
    // with a preset the merged table has no positions: the key path says where
    let e = toml_err("preset = \"intel-320-160gb\"\n[ftl]\nwindow = \"x\"\n");
    assert_eq!(e.key.as_deref(), Some("ftl.window"), "{e}");
}

#[test]
fn json_errors_name_the_key_path_not_a_position_in_the_json() {
    let cases = [
        (r#"{"drive": {"user_capacity": "64MiB", "op": NaN}}"#, "drive.op"),
        (r#"{"drive": {"user_capacity": "64MiB", "op": 0.28}, "run": {"seed": Infinity}}"#, "run.seed"),
        (r#"{"drive": {"user_capacity": "64MiB", "op": 0.28}, "ftl": {"d": "x"}}"#, "ftl.d"),
        (r#"{"drive": {"user_capacity": "64MiB", "op": 0.28}, "ftl": {"dd": 1}}"#, "ftl.dd"),
        (
            r#"{"drive": {"user_capacity": "64MiB", "op": 0.28}, "phase": [{"workload": {"type": "zz"}}]}"#,
            "phase[0].workload.type",
        ),
        (r#"{"preset": "intel-320-160gb", "ftl": {"window": "x"}}"#, "ftl.window"),
    ];
    for (text, key) in cases {
        let e = json_err(text);
        assert_eq!(e.kind, ErrorKind::Config, "{e}");
        assert_eq!(e.key.as_deref(), Some(key), "{text}: {e}");
        assert!(!e.message.contains("column") && !e.message.contains("line 1"), "{text}: {e}");
    }
    assert!(json_err(r#"{"drive": {"user_capacity": "64MiB", "op": NaN}}"#).message.contains("not a finite number"));
}

#[test]
fn sizes_and_fractions_say_what_is_wrong() {
    let e = toml_err("[drive]\nuser_capacity = \"-8MiB\"\nop = 0.28\n");
    assert_eq!(e.key.as_deref(), Some("drive.user_capacity"));
    assert!(e.message.contains("negative sizes are not allowed"), "{e}");
    assert!(!e.message.contains("unknown unit"), "{e}");
    for bad in ["nan%", "inf", "abc%"] {
        let e = toml_err(&format!("[drive]\nuser_capacity = \"64MiB\"\nop = \"{bad}\"\n"));
        assert_eq!(e.key.as_deref(), Some("drive.op"), "{e}");
        assert!(e.message.contains("expected a fraction such as 0.07 or a percentage such as \"7%\""), "{e}");
    }
}

#[test]
fn messages_escape_control_bytes_and_cut_long_echoes() {
    let e = json_err(&format!(
        r#"{{"drive": {{"user_capacity": "64Mi\u0000\u001b[31mB{}", "op": 0.28}}}}"#,
        "x".repeat(5000)
    ));
    let m = e.to_string();
    assert!(!m.contains('\0') && !m.contains('\x1b'), "{m:?}");
    assert!(m.contains("\\0"), "{m:?}");
    assert!(m.len() < 400, "{} chars: {m}", m.len());
    let e = json_err(r#"{"drive": {"user_capacity": "64MiB", "op": 0.28}, "ftl": {"a\u0000b": 1}}"#);
    assert!(!e.to_string().contains('\0'), "{e:?}");
}

#[test]
fn unbounded_integers_are_refused_when_read() {
    let e = toml_err(&format!("{DRIVE}[ftl]\ngc = \"d-choices\"\nd = 4294967295\n"));
    assert_eq!(e.key.as_deref(), Some("ftl.d"), "{e}");
    assert!(e.message.contains("1024"), "{e}");
    assert!(Config::from_toml_str(&format!("{DRIVE}[ftl]\ngc = \"d-choices\"\nd = 1024\n")).is_ok());
    let sizes = vec!["\"4KiB\""; 65].join(", ");
    let e = toml_err(&format!(
        "{DRIVE}[workload]\ntype = \"snia-pts\"\n[workload.pts]\ntest = \"iops\"\nblock_sizes = [{sizes}]\n"
    ));
    assert_eq!(e.key.as_deref(), Some("workload.pts.block_sizes"), "{e}");
}

#[test]
fn a_preset_config_parses_again_from_its_own_json() {
    // found by the fuzzer: nulls (absent options) could not become TOML with a preset
    let cfg = Config::from_toml_str("preset = \"micron-1100-1tb\"\n").unwrap();
    let json = serde_json::to_string(&cfg).unwrap();
    assert!(json.contains("null"), "{json}");
    let again = Config::from_json_str(&json).unwrap();
    assert_eq!(serde_json::to_string(&again).unwrap(), json);
    // and a dict with None values and a preset
    Config::from_json_str(r#"{"preset": "intel-320-160gb", "drive": {"op": null}, "ftl": {"d": null}}"#).unwrap();
}
