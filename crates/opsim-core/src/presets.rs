//! Drive presets: the seeds' drives as configs, every parameter with its source; and drive
//! files, the same schema in a file of the user's.
//!
//! Each preset is a TOML file in `crates/opsim-core/presets/` with a `[preset]` table (name,
//! title, the source of every parameter) and the `[drive]`, `[ftl]` and `[timing]` tables it
//! sets.  A config selects one with `preset = "name"` at the top and overrides any key.
//! Sources say `datasheet`, `seed NNN` (a document in the project's seeds), `estimate`
//! (typical for the NAND generation; not published for this drive) or `fitted` (calibrated
//! to a published figure; at most two per preset family, listed in docs/validation.md).
//!
//! A **drive file** is a TOML file in exactly that schema (other meta tables under
//! `[preset]`, such as `[preset.calibration]`, are carried and otherwise ignored).  A
//! `preset` value that contains a `/` or ends in `.toml` ([`is_path`]) names one; a relative
//! path is relative to a base directory (the config file's, else the current one).  This
//! module reads it; the config (`config::preset`) checks its settings against the schema and
//! merges a config over a preset's settings.

use crate::error::{Error, Result, Schema};
use std::path::{Path, PathBuf};

pub const PRESETS: &[(&str, &str)] = &[
    ("micron-1100-1tb", include_str!("../presets/micron-1100-1tb.toml")),
    ("micron-1100-1tb-dwa", include_str!("../presets/micron-1100-1tb-dwa.toml")),
    ("sandisk-x400-128gb", include_str!("../presets/sandisk-x400-128gb.toml")),
    ("sandisk-x400-256gb", include_str!("../presets/sandisk-x400-256gb.toml")),
    ("sandisk-x400-512gb", include_str!("../presets/sandisk-x400-512gb.toml")),
    ("sandisk-x400-1024gb", include_str!("../presets/sandisk-x400-1024gb.toml")),
    ("intel-320-160gb", include_str!("../presets/intel-320-160gb.toml")),
    ("intel-dc-s3700-200gb", include_str!("../presets/intel-dc-s3700-200gb.toml")),
    ("samsung-840-pro-256gb", include_str!("../presets/samsung-840-pro-256gb.toml")),
    ("ocz-vector-256gb", include_str!("../presets/ocz-vector-256gb.toml")),
    ("corsair-neutron-240gb", include_str!("../presets/corsair-neutron-240gb.toml")),
    ("sk-hynix-mobile-64gb", include_str!("../presets/sk-hynix-mobile-64gb.toml")),
    // today's data-center NVMe drives, each `opsim calibrate` of its datasheet input (presets/inputs/)
    ("micron-7450-pro-960gb", include_str!("../presets/micron-7450-pro-960gb.toml")),
    ("micron-7450-max-800gb", include_str!("../presets/micron-7450-max-800gb.toml")),
    ("samsung-pm9a3-960gb", include_str!("../presets/samsung-pm9a3-960gb.toml")),
    ("solidigm-d7-p5520-1920gb", include_str!("../presets/solidigm-d7-p5520-1920gb.toml")),
    ("kioxia-cm7-r-3840gb", include_str!("../presets/kioxia-cm7-r-3840gb.toml")),
    ("solidigm-d5-p5336-61440gb", include_str!("../presets/solidigm-d5-p5336-61440gb.toml")),
];

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The preset's whole TOML table (including `[preset]`).
pub fn table(name: &str) -> Result<toml::Table> {
    let text = PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
        Error::schema(
            "preset",
            Schema::Value,
            format!(
                "unknown preset {name:?}; known: {} (or a drive file: a path that contains a / or ends in .toml)",
                names().join(", ")
            ),
        )
    })?;
    text.parse::<toml::Table>().map_err(|e| Error::internal(format!("preset {name} does not parse: {e}")))
}

/// Deep-merge `over` into `base` (tables merge, everything else replaces).
pub fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

// ------------------------------------------------------------------------------ drive files

/// The largest drive file read, in bytes; a larger one is refused unread.
pub const MAX_DRIVE_FILE: u64 = 1 << 20;

/// The top-level tables of a drive file.
const DRIVE_FILE_TABLES: [&str; 4] = ["preset", "drive", "ftl", "timing"];

/// True when a `preset` value names a drive file rather than a built-in preset: it contains
/// a `/` or ends in `.toml`.
pub fn is_path(value: &str) -> bool {
    value.contains('/') || value.ends_with(".toml")
}

/// Where the drive file `value` is: `value` itself when absolute or when there is no `base`
/// (then relative to the current directory), else `value` under `base`.
pub fn drive_file_path(value: &str, base: Option<&Path>) -> PathBuf {
    let p = Path::new(value);
    match base {
        Some(b) if p.is_relative() => b.join(p),
        _ => p.to_path_buf(),
    }
}

/// A drive file read: what `opsim presets FILE` shows, in the shape of one built-in preset
/// (`name`, `meta`, `settings`) plus its absolute `path` and its text.
#[derive(Clone, Debug)]
pub struct DriveFile {
    /// `[preset] name`, else the file's name without `.toml`.
    pub name: String,
    /// The file as it was opened (`value` under the base directory); messages name it.
    pub opened: PathBuf,
    /// The file, as an absolute path (a config's `preset = PATH` that resolves anywhere).
    pub path: PathBuf,
    /// The `[preset]` table: title, family, sources and any other meta tables.
    pub meta: toml::Table,
    /// `[drive]`, `[ftl]`, `[timing]`: what the file sets.
    pub settings: toml::Table,
    /// The file's text (for messages that give a line).
    pub text: String,
}

/// A refusal of the drive file at `path`: a schema error of the key `preset` (the value names
/// no usable drive) whose message starts "drive file PATH" and goes on with `what` (" does
/// not exist", ": drive.page_size: ...").
pub fn drive_file_error(path: &Path, what: &str) -> Error {
    let shown = crate::quote::escape(&path.to_string_lossy());
    Error::schema("preset", Schema::Value, format!("drive file {shown}{what}"))
}

/// Read the drive file `value` (relative to `base` when given, else the current directory):
/// a regular file of at most [`MAX_DRIVE_FILE`] bytes of UTF-8 TOML with a `[preset]` table
/// and no tables but `[preset]`, `[drive]`, `[ftl]` and `[timing]`.  Errors
/// ([`drive_file_error`]) name the path and, for TOML errors, the line.  Whether the
/// settings fit the config schema is the config's business (`config::drive_file`).
pub fn drive_file(value: &str, base: Option<&Path>) -> Result<DriveFile> {
    let opened = drive_file_path(value, base);
    let text = read_text(&opened)?;
    let mut settings = parse_drive_file(&text).map_err(|what| drive_file_error(&opened, &what))?;
    let meta = match settings.remove("preset") {
        Some(toml::Value::Table(t)) => t,
        _ => return Err(Error::internal("a checked drive file has a [preset] table")),
    };
    let name = meta.get("name").and_then(toml::Value::as_str).map(str::to_owned).unwrap_or_else(|| {
        let file = opened.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        file.strip_suffix(".toml").unwrap_or(&file).to_owned()
    });
    let path = std::path::absolute(&opened).unwrap_or_else(|_| opened.clone());
    Ok(DriveFile { name, opened, path, meta, settings, text })
}

/// The text of the drive file at `path`, read whole if it is a regular file of at most
/// [`MAX_DRIVE_FILE`] bytes of UTF-8.
fn read_text(path: &Path) -> Result<String> {
    use crate::userfile::{read_regular, Refused};
    let bad = |what: String| drive_file_error(path, &what);
    let bytes = read_regular(path, MAX_DRIVE_FILE).map_err(|r| match r {
        Refused::Io(e) if e.kind() == std::io::ErrorKind::NotFound => bad(" does not exist".into()),
        Refused::Io(e) => bad(format!(" cannot be read: {e}")),
        Refused::NotRegular(what) => bad(format!(" is not a regular file ({what})")),
        Refused::TooLarge(n) => bad(format!(" is {n} bytes; a drive file is at most {MAX_DRIVE_FILE} bytes (1 MiB)")),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let raw = e.as_bytes();
        let line = raw[..at].iter().filter(|&&c| c == b'\n').count() + 1;
        bad(format!(" is not UTF-8 text (TOML must be): byte 0x{:02x} on line {line}", raw[at]))
    })
}

/// A drive file's text parsed and its shape checked; an error is the rest of the message
/// after the file's name (" is not valid TOML: ...", " has no [preset] table...").
fn parse_drive_file(text: &str) -> std::result::Result<toml::Table, String> {
    let table = text.parse::<toml::Table>().map_err(|e| {
        let loc = e.span().map(|s| crate::quote::line_col(text, s.start)).unwrap_or_default();
        format!(" is not valid TOML: {}{loc}", crate::quote::escape(e.message().trim()))
    })?;
    match table.get("preset") {
        Some(toml::Value::Table(meta)) => {
            for k in ["name", "title", "family"] {
                if meta.get(k).is_some_and(|v| !v.is_str()) {
                    return Err(format!(": preset.{k} must be a string"));
                }
            }
            if meta.get("sources").is_some_and(|v| !v.is_table()) {
                return Err(": preset.sources must be a table (\"section.key\" = \"source\")".into());
            }
        }
        _ => {
            return Err(" has no [preset] table: a drive file is in the presets' schema ([preset] with name, \
                        title and sources; then [drive], [ftl] and [timing]; see `opsim presets NAME`)"
                .into())
        }
    }
    if let Some(k) = table.keys().find(|k| !DRIVE_FILE_TABLES.contains(&k.as_str())) {
        return Err(format!(
            ": {} is not a drive file's; a drive file holds [preset], [drive], [ftl] and [timing] only",
            crate::quote::echo(k)
        ));
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::error::ErrorKind;

    #[test]
    fn every_preset_parses_builds_and_names_its_sources() {
        for name in names() {
            let t = table(name).unwrap();
            let meta = t.get("preset").and_then(|v| v.as_table()).expect("[preset] table");
            assert_eq!(meta.get("name").and_then(|v| v.as_str()), Some(name));
            let sources = meta.get("sources").and_then(|v| v.as_table()).expect("sources");
            // every parameter the preset sets has a source
            for section in ["drive", "ftl", "timing"] {
                if let Some(tab) = t.get(section).and_then(|v| v.as_table()) {
                    for k in tab.keys() {
                        let key = format!("{section}.{k}");
                        assert!(sources.contains_key(&key), "{name}: no source for {key}");
                    }
                }
            }
            let cfg = Config::from_toml_str(&format!("preset = \"{name}\"\n")).unwrap();
            assert!(cfg.timing.is_some(), "{name} has timing");
            // a drive past the model's 32-bit mapping tables (61 TB of 16 KiB units) is still
            // described; it is simulated through a scale model
            let d = crate::describe::describe(cfg.clone(), false).unwrap();
            assert!(d.drive.user_bytes > 0, "{name}");
            let page = cfg.drive.page_size.0;
            cfg.timing.as_ref().unwrap().resolve(page).unwrap();
        }
    }

    #[test]
    fn user_keys_override_the_preset() {
        let cfg = Config::from_toml_str("preset = \"micron-1100-1tb\"\n[drive]\nuser_capacity = \"800GB\"\n").unwrap();
        assert_eq!(cfg.drive.user_capacity.unwrap().0, 800_000_000_000);
        assert!(Config::from_toml_str("preset = \"nope\"\n").is_err());
    }

    /// A fresh directory under the system's temporary directory, removed when dropped.
    struct TempDir(tempfile::TempDir);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            TempDir(tempfile::Builder::new().prefix(&format!("opsim-presets-{tag}-")).tempdir().unwrap())
        }
        fn path(&self) -> &Path {
            self.0.path()
        }
        fn write(&self, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
            let p = self.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
            p
        }
    }

    fn builtin(name: &str) -> &'static str {
        PRESETS.iter().find(|(n, _)| *n == name).unwrap().1
    }

    /// A config as JSON without its `preset` value (which names the preset either way).
    fn settings_of(cfg: &Config) -> serde_json::Value {
        let mut v = serde_json::to_value(cfg).unwrap();
        v.as_object_mut().unwrap().remove("preset");
        v
    }

    #[test]
    fn a_path_is_a_value_with_a_slash_or_ending_in_toml() {
        for p in ["./drive.toml", "drive.toml", "/abs/drive", "dir/drive", "../x"] {
            assert!(is_path(p), "{p}");
        }
        for n in names() {
            assert!(!is_path(n), "{n}");
        }
        assert!(!is_path("drive.tom") && !is_path("drive"));
    }

    #[test]
    fn a_copy_of_every_builtin_preset_reads_as_the_preset() {
        let dir = TempDir::new("copy");
        for name in names() {
            let path = dir.write(&format!("{name}.toml"), builtin(name));
            let over = "\n[drive]\nuser_capacity = \"200GB\"\n[run]\nseed = 7\n";
            let by_name = Config::from_toml_str(&format!("preset = \"{name}\"{over}")).unwrap();
            let by_file = Config::from_toml_str(&format!("preset = {:?}{over}", path.to_str().unwrap())).unwrap();
            assert_eq!(settings_of(&by_name), settings_of(&by_file), "{name}");
            assert_eq!(by_file.preset.as_deref(), path.to_str());
            // the same through JSON (the Python binding's form of a dict)
            let json = format!(
                "{{\"preset\": {:?}, \"drive\": {{\"user_capacity\": \"200GB\"}}, \"run\": {{\"seed\": 7}}}}",
                path.to_str().unwrap()
            );
            assert_eq!(settings_of(&Config::from_json_str(&json).unwrap()), settings_of(&by_name), "{name}");
            // the file as one entry of the preset list
            let f = drive_file(path.to_str().unwrap(), None).unwrap();
            let mut t = table(name).unwrap();
            let meta = t.remove("preset").unwrap();
            assert_eq!((f.name.as_str(), toml::Value::Table(f.meta), f.settings, f.path), (name, meta, t, path));
        }
    }

    #[test]
    fn a_relative_path_is_relative_to_the_base_directory() {
        let dir = TempDir::new("rel");
        dir.write("drives/mine.toml", builtin("intel-320-160gb"));
        dir.write("configs/c.toml", "");
        let text = "preset = \"../drives/mine.toml\"\n";
        let cfg = Config::from_toml_str_in(text, Some(&dir.path().join("configs"))).unwrap();
        let named = Config::from_toml_str("preset = \"intel-320-160gb\"\n").unwrap();
        assert_eq!(settings_of(&cfg), settings_of(&named));
        assert_eq!(cfg.preset.as_deref(), Some("../drives/mine.toml"), "the value as written");
        let json = "{\"preset\": \"drives/mine.toml\"}";
        assert_eq!(settings_of(&Config::from_json_str_in(json, Some(dir.path())).unwrap()), settings_of(&named));
        // without a base: the current directory, where there is no such file
        let e = Config::from_toml_str(text).unwrap_err();
        assert!(e.message.contains("../drives/mine.toml does not exist"), "{e}");
        // an absolute path ignores the base
        let abs = dir.path().join("drives/mine.toml");
        let cfg = Config::from_toml_str_in(
            &format!("preset = {:?}\n", abs.to_str().unwrap()),
            Some(Path::new("/nonexistent")),
        )
        .unwrap();
        assert_eq!(settings_of(&cfg), settings_of(&named));
        let f = drive_file("drives/mine.toml", Some(dir.path())).unwrap();
        assert_eq!((f.name.as_str(), f.path), ("intel-320-160gb", abs));
    }

    #[test]
    fn meta_tables_are_carried_and_ignored() {
        let dir = TempDir::new("meta");
        let text = format!(
            "{}\n[preset.calibration]\npe_cycles = 3000\nfitted = [\"timing.fw_overhead_us\"]\n",
            builtin("micron-1100-1tb")
        );
        let path = dir.write("cal.toml", text);
        let cfg = Config::from_toml_str_in("preset = \"cal.toml\"\n", Some(dir.path())).unwrap();
        let named = Config::from_toml_str("preset = \"micron-1100-1tb\"\n").unwrap();
        assert_eq!(settings_of(&cfg), settings_of(&named));
        let f = drive_file(path.to_str().unwrap(), None).unwrap();
        let cal = f.meta.get("calibration").and_then(|v| v.as_table()).unwrap();
        assert_eq!(cal.get("pe_cycles").and_then(|v| v.as_integer()), Some(3000));
        // no name: the file's
        let path = dir.write("nameless.toml", "[preset]\n[drive]\nuser_capacity = \"1GiB\"\nop = 0.1\n");
        assert_eq!(drive_file(path.to_str().unwrap(), None).unwrap().name, "nameless");
    }

    /// The error a config naming the drive file `name` in `dir` gives.
    fn refusal(dir: &TempDir, name: &str) -> Error {
        Config::from_toml_str_in(&format!("preset = {name:?}\n"), Some(dir.path())).unwrap_err()
    }

    #[test]
    fn bad_drive_files_are_refused_naming_the_path_and_line() {
        let dir = TempDir::new("bad");
        let ok = builtin("micron-1100-1tb");
        dir.write("big.toml", format!("{ok}\n{}", "# padding\n".repeat(110_000)));
        let mut latin1 = ok.as_bytes().to_vec();
        latin1.extend_from_slice(b"\n# caf\xe9\n");
        dir.write("latin1.toml", latin1);
        dir.write("syntax.toml", format!("{ok}\n[timing\n"));
        dir.write("nopreset.toml", "[drive]\nuser_capacity = \"1GiB\"\nop = 0.1\n");
        dir.write("presetstring.toml", "preset = \"micron-1100-1tb\"\n");
        dir.write("workload.toml", format!("{ok}\n[workload]\ntype = \"zipf\"\n"));
        dir.write("badvalue.toml", ok.replace("pages_per_block = 1024", "pages_per_block = \"many\""));
        dir.write("unknownkey.toml", ok.replace("[timing]\n", "[timing]\nchanels = 4\n"));
        dir.write("badname.toml", ok.replace("name = \"micron-1100-1tb\"", "name = 3"));
        std::fs::create_dir_all(dir.path().join("adir.toml")).unwrap();
        let line_of = |file: &str, needle: &str| {
            let text = String::from_utf8_lossy(&std::fs::read(dir.path().join(file)).unwrap()).into_owned();
            text.lines().enumerate().filter(|(_, l)| l.contains(needle)).last().unwrap().0 + 1
        };
        let cases = [
            ("missing.toml", "does not exist".to_owned()),
            ("adir.toml", "is not a regular file".to_owned()),
            ("big.toml", "a drive file is at most 1048576 bytes (1 MiB)".to_owned()),
            (
                "latin1.toml",
                format!("is not UTF-8 text (TOML must be): byte 0xe9 on line {}", line_of("latin1.toml", "# caf")),
            ),
            ("syntax.toml", format!("(line {}, column ", line_of("syntax.toml", "[timing"))),
            ("nopreset.toml", "has no [preset] table".to_owned()),
            ("presetstring.toml", "has no [preset] table".to_owned()),
            ("workload.toml", ": workload is not a drive file's".to_owned()),
            (
                "badvalue.toml",
                format!(
                    ": drive.pages_per_block: invalid type: string \"many\", expected u32 (line {}",
                    line_of("badvalue.toml", "pages_per_block")
                ),
            ),
            ("unknownkey.toml", ": timing.chanels: unknown field `chanels`".to_owned()),
            ("badname.toml", ": preset.name must be a string".to_owned()),
        ];
        for (name, want) in cases {
            let e = refusal(&dir, name);
            let path = dir.path().join(name);
            assert_eq!(
                (e.kind, e.schema, e.key.as_deref()),
                (ErrorKind::Config, Some(Schema::Value), Some("preset")),
                "{name}: {e}"
            );
            let head = format!("drive file {}", path.display());
            assert!(e.message.starts_with(&head), "{name}: {e}");
            assert!(e.message.contains(&want), "{name}: {e}\nwanted: {want}");
            assert!(e.is_input());
            if name == "syntax.toml" {
                assert!(e.message.contains(" is not valid TOML: "), "{e}");
            }
        }
    }

    #[test]
    fn a_preset_that_is_not_a_string_is_refused() {
        let e = Config::from_toml_str("preset = 3\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("preset"));
        let e = Config::from_toml_str("preset = \"nope\"\n").unwrap_err();
        assert!(e.message.contains("or a drive file"), "{e}");
    }
}
