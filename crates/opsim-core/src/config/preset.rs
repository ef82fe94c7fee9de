//! A config's `preset`: the built-in preset or drive file it starts from (`crate::presets`
//! finds and reads them), a drive file's settings checked against the schema where the file
//! gives them, and the config merged over the preset's settings.

use super::{timing::TimingConfig, DriveConfig, FtlConfig};
use crate::error::{Error, Result};
use crate::presets::{self, DriveFile};
use std::path::Path;

/// A drive file's settings as the config schema reads them: deserialised from the file's own
/// text, so an error names the key and the line where the file gives it.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // only deserialised, to check the file
struct DriveFileSchema {
    preset: serde::de::IgnoredAny,
    drive: Option<DriveConfig>,
    ftl: Option<FtlConfig>,
    timing: Option<TimingConfig>,
}

/// Read the drive file `value` (relative to `base` when given, else the current directory)
/// and check its settings: every refusal is a schema error of the key `preset` that names
/// the file and, for TOML and schema errors, the line.
pub fn drive_file(value: &str, base: Option<&Path>) -> Result<DriveFile> {
    let f = presets::drive_file(value, base)?;
    let text = f.text.as_str();
    serde_path_to_error::deserialize::<_, DriveFileSchema>(toml::Deserializer::new(text)).map_err(|e| {
        let loc = e.inner().span().map(|s| crate::quote::line_col(text, s.start)).unwrap_or_default();
        let mut msg = crate::quote::escape(e.inner().message().trim());
        if msg.chars().count() > 600 {
            msg = msg.chars().take(600).collect::<String>() + "...";
        }
        presets::drive_file_error(&f.opened, &format!(": {}: {msg}{loc}", crate::quote::echo(&e.path().to_string())))
    })?;
    Ok(f)
}

/// If `cfg` names a preset (a built-in name, or a drive file relative to `base` or else the
/// current directory), the preset's settings with `cfg` merged over them; else `cfg`.
pub(super) fn apply(cfg: toml::Table, base: Option<&Path>) -> Result<toml::Table> {
    let value = match cfg.get("preset") {
        None => return Ok(cfg),
        Some(toml::Value::String(s)) => s.clone(),
        Some(_) => {
            return Err(Error::config(
                "preset",
                "must be a preset name (see `opsim presets`) or the path of a drive file",
            ))
        }
    };
    let mut table = if presets::is_path(&value) {
        drive_file(&value, base)?.settings
    } else {
        let mut t = presets::table(&value)?;
        t.remove("preset");
        t
    };
    presets::merge(&mut table, cfg);
    Ok(table)
}
