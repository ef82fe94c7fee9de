//! One place resolves a config (issue 24): `resolve::ModelSpec::resolve` checks a config
//! against its drive; `Simulator::new` and `describe` both build on it, so they accept and
//! refuse the same configs with the same key and message; and `config/` depends on nothing
//! above it (no arrow into the simulator, the timed model or the trace reader).

use opsim_core::describe::describe;
use opsim_core::resolve::ModelSpec;
use opsim_core::{Config, Simulator};
use std::path::Path;

const DRIVE: &str = "[drive]\nuser_capacity = \"32MiB\"\nop = 0.3\npages_per_block = 64\n";

/// Configs refused by each kind of check that moved into `config/`, with the key named.
const REFUSED: &[(&str, &str)] = &[
    ("[ftl]\nstreams = 0\n", "ftl.streams"),
    ("[ftl]\nwindow = 3\n", "ftl.window"),
    ("[ftl]\ngc = \"d-choices\"\n", "ftl.d"),
    ("[run]\nmax_rounds = 2\n", "run.max_rounds"),
    ("[run]\nmeasure_drive_writes = 0\n", "run.measure_drive_writes"),
    ("[run]\nmemory_limit = \"64KiB\"\n", "drive.user_capacity"),
    ("[timing]\n[timing.map_cache]\nsize = \"1KiB\"\n", "timing.map_cache.size"),
    ("[ftl.slc_cache]\nmin_fraction = 0.5\nmax_fraction = 0.6\n", "ftl.slc_cache.min_fraction"),
    ("[ftl.slc_cache]\nbits_per_cell = 3\n[timing]\ncell = \"qlc\"\n", "ftl.slc_cache.bits_per_cell"),
    ("[workload.pts]\ntest = \"iops\"\n", "workload.pts"),
    ("[run]\nprecondition = \"none\"\nprecondition_fill = 0.5\n", "run.precondition_fill"),
    ("[ftl]\ngc_reserve = \"1 blocks per drive\"\n", "ftl.gc_reserve"),
    ("[ftl.placement]\nmode = \"fdp\"\nhandles = 0\n", "ftl.placement.handles"),
    ("[[namespace]]\ncapacity = \"70%\"\n[[namespace]]\ncapacity = \"40%\"\n", "namespace[1].capacity"),
];

fn cfg(extra: &str) -> Config {
    Config::from_toml_str(&format!("{DRIVE}{extra}")).unwrap()
}

#[test]
fn new_and_describe_refuse_alike() {
    for (extra, key) in REFUSED {
        let c = cfg(extra);
        let spec = ModelSpec::resolve(&c, true).unwrap_err();
        let sim = Simulator::new(c.clone()).err().unwrap();
        let desc = describe(c, true).unwrap_err();
        assert_eq!(spec.key.as_deref(), Some(*key), "{extra}: {spec}");
        for e in [&sim, &desc] {
            assert_eq!((e.kind, &e.key, &e.message), (spec.kind, &spec.key, &spec.message), "{extra}");
        }
    }
}

#[test]
fn new_and_describe_build_the_same_drive() {
    for extra in
        ["", "[ftl.slc_cache]\nmax_fraction = 0.1\n[timing]\n", "[timing]\n[timing.map_cache]\nfraction = 0.5\n"]
    {
        let c = cfg(extra);
        let spec = ModelSpec::resolve(&c, true).unwrap();
        let sim = Simulator::new(c.clone()).unwrap();
        let d = describe(c, true).unwrap();
        assert_eq!(&spec.geo, sim.geometry());
        assert_eq!(d.drive, sim.drive_report());
        assert_eq!(d.drive.model_memory_bytes, spec.memory, "{extra}");
    }
}

/// `config/` uses nothing above it: no path into `sim`, `timed`, `trace`, `geometry` or
/// `resolve` in its code.
#[test]
fn config_points_nowhere_up() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/config");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            for up in
                ["crate::sim", "crate::timed", "crate::trace", "crate::geometry", "crate::resolve", "super::super"]
            {
                assert!(!code.contains(up), "{}:{}: {up} points up out of config/: {line}", path.display(), i + 1);
            }
        }
        seen += 1;
    }
    assert!(seen >= 9, "{seen} files read in {}", dir.display());
}
