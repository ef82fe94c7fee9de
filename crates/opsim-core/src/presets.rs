//! Drive presets: the seeds' drives as configs, every parameter with its source.
//!
//! Each preset is a TOML file in `crates/opsim-core/presets/` with a `[preset]` table (name,
//! title, the source of every parameter) and the `[drive]`, `[ftl]` and `[timing]` tables it
//! sets.  A config selects one with `preset = "name"` at the top and overrides any key.
//! Sources say `datasheet`, `seed NNN` (a document in the project's seeds), `estimate`
//! (typical for the NAND generation; not published for this drive) or `fitted` (calibrated
//! to a published figure; at most two per preset family, listed in docs/validation.md).

use crate::error::{Error, Result};

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
];

pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The preset's whole TOML table (including `[preset]`).
pub fn table(name: &str) -> Result<toml::Table> {
    let text = PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t).ok_or_else(|| {
        Error::schema(
            "preset",
            crate::error::Schema::Value,
            format!("unknown preset {name:?}; known: {}", names().join(", ")),
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

/// If `cfg` names a preset, return the preset's settings with `cfg` merged over them.
pub fn apply(cfg: toml::Table) -> Result<toml::Table> {
    let name = match cfg.get("preset") {
        None => return Ok(cfg),
        Some(toml::Value::String(s)) => s.clone(),
        Some(_) => return Err(Error::config("preset", "must be a preset name (see `opsim presets`)")),
    };
    let mut base = table(&name)?;
    base.remove("preset");
    merge(&mut base, cfg);
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

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
            crate::geometry::Geometry::from_config(&cfg.drive, &cfg.ftl).unwrap();
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
}
