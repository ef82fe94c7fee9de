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

// ---- issue 23, item 8: unclear messages and silent acceptance

#[test]
fn exponent_notation_in_a_size_is_named_not_an_unknown_unit() {
    let e = toml_err("[drive]\nuser_capacity = \"1e30TB\"\nop = 0.28\n");
    assert_eq!(e.key.as_deref(), Some("drive.user_capacity"), "{e}");
    assert!(e.message.contains("exponent notation is not accepted"), "{e}");
    assert!(!e.message.contains("unknown unit"), "{e}");
}

#[test]
fn a_toml_date_is_called_a_date_not_a_map() {
    // in the user's own text (with line and column), and through a preset (no positions)
    for text in [
        "[drive]\nuser_capacity = 1979-05-27\nop = 0.28\n".to_owned(),
        "preset = \"intel-320-160gb\"\n[ftl]\nwindow = 1979-05-27T07:32:00Z\n".to_owned(),
    ] {
        let e = toml_err(&text);
        assert!(e.message.contains("a date (1979-05-27") && e.message.contains("is not a valid value"), "{e}");
        assert!(!e.message.contains("map"), "{e}");
    }
    // a real table where a value is expected is still a table
    let e = toml_err("[drive]\nuser_capacity = { a = 1 }\nop = 0.28\n");
    assert!(!e.message.contains("date"), "{e}");
}

#[test]
fn zipf_exponent_expects_a_number_not_a_fraction() {
    let e = toml_err(&format!("{DRIVE}[workload]\ntype = \"zipf\"\nzipf_exponent = \"abc\"\n"));
    assert_eq!(e.key.as_deref(), Some("workload.zipf_exponent"), "{e}");
    assert!(e.message.contains("expected a number"), "{e}");
    assert!(!e.message.contains("fraction") && !e.message.contains("percentage"), "{e}");
    // a number (or a numeric string) still works
    for v in ["0.99", "\"1.2\""] {
        Config::from_toml_str(&format!("{DRIVE}[workload]\ntype = \"zipf\"\nzipf_exponent = {v}\n")).unwrap();
    }
}

#[test]
fn json_documents_the_binding_builds_name_the_option_not_a_position() {
    use opsim_core::config::from_json_doc;
    use opsim_core::trace::TraceConfig;
    let e = from_json_doc::<TraceConfig>(r#"{"path": "t.csv", "format": "auto", "skip_lines": -5}"#, "trace")
        .expect_err("negative skip_lines");
    assert_eq!(e.key.as_deref(), Some("trace.skip_lines"), "{e}");
    assert!(!e.to_string().contains("line 1 column"), "{e}");
    assert!(e.message.contains("expected a non-negative integer"), "{e}");
    let e = from_json_doc::<TraceConfig>(r#"{"path": "t.csv", "skip_bad": "yes"}"#, "trace").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("trace.skip_bad"), "{e}");
    let e = from_json_doc::<TraceConfig>(r#"{"path": "t.csv", "speed": NaN}"#, "trace").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("trace.speed"), "{e}");
    assert!(!e.to_string().contains("column"), "{e}");
    let e = from_json_doc::<TraceConfig>(r#"{"path": "t.csv", "bogus": 1}"#, "trace").unwrap_err();
    assert_eq!(e.key.as_deref(), Some("trace.bogus"), "{e}");
}

#[test]
fn duplicate_names_in_a_column_map_are_refused() {
    use opsim_core::trace::{Reader, TraceConfig, TraceFormat};
    let mut cfg = TraceConfig::new("c.csv");
    cfg.format = TraceFormat::Columns;
    cfg.columns = Some("op=1,offset=2,size=3,offset=4".into());
    let e = Reader::from_bytes(&cfg, &b"0,w,0,4096,8192\n"[..]).err().expect("duplicate offset");
    assert_eq!(e.key.as_deref(), Some("workload.trace.columns.offset"), "{e}");
    assert!(e.message.contains("given twice"), "{e}");
}

#[test]
fn a_blkparse_line_garbled_by_binary_bytes_is_a_bad_line() {
    use opsim_core::trace::{Reader, TraceConfig, TraceFormat};
    let good = b"  8,0    0        1     0.000000000  4242  D   W 2048 + 8 [fio]\n";
    let garbled: &[&[u8]] = &[
        b"  8,0    0        2     0.000001000  4242  \x00\xff  W 4096 + 8 [fio]\n",
        b"\xff\xfe8,0    0        3     0.000002000  4242  D   W 4096 + 8 [fio]\n",
    ];
    for g in garbled {
        let text = [&good[..], g, &good[..]].concat();
        let mut cfg = TraceConfig::new("b.txt");
        cfg.format = TraceFormat::Blkparse;
        let mut r = Reader::from_bytes(&cfg, text.clone()).unwrap();
        let e = loop {
            match r.next_record() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the garbled line was passed over"),
                Err(e) => break e,
            }
        };
        assert_eq!(e.kind, ErrorKind::Trace, "{e}");
        assert!(e.to_string().contains(":2") && e.message.contains("binary byte"), "{e}");
        // with skip_bad it is counted like any other bad line
        cfg.skip_bad = true;
        let mut r = Reader::from_bytes(&cfg, text).unwrap();
        while r.next_record().unwrap().is_some() {}
        assert_eq!((r.records, r.skipped_bad), (2, 1));
    }
}

#[test]
fn integers_past_64_bits_are_too_large_not_floating_point() {
    // a Python int past 64 bits reaches the core's JSON as a float
    let big = "1180591620717411303424";
    let e = json_err(&format!(r#"{{"drive": {{"user_capacity": "64MiB", "op": 0.28}}, "run": {{"seed": {big}}}}}"#));
    assert_eq!(e.key.as_deref(), Some("run.seed"), "{e}");
    assert!(e.message.contains("too large") && !e.message.contains("floating point"), "{e}");
    let e = json_err(&format!(r#"{{"drive": {{"user_capacity": {big}, "op": 0.28}}}}"#));
    assert!(e.message.contains("too large") && !e.message.contains("not a whole"), "{e}");
}
