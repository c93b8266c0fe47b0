//! Build steps for the JavaScript this crate embeds with deno_core's `ascii_str_include!`:
//!
//! - The glue scripts beside the ops (`src/ops/*.js`, `src/ops/web/deno_fetch/`): that macro
//!   reads a file without telling cargo, so an edited script would leave a stale copy in the
//!   binary until some Rust source changed too. Cargo is told to watch them here.
//! - The scripts of the `deno_web` and `deno_webidl` crates, copied from those crates' own
//!   sources into `OUT_DIR` (`ops/web.rs` embeds them from there). The crates declare their
//!   scripts by path, to be read when a snapshot is made, and toolhost makes its snapshot at
//!   run time in worker processes that may not read the disk, so the scripts must be in the
//!   binary; taking them from the crates keeps them the crates' version with no copy
//!   committed. Where cargo keeps those sources (its registry, a vendor directory, a path
//!   dependency) is asked of `cargo metadata`, offline first.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The crates whose scripts are copied (every top-level `.js` file of each).
const CRATES: &[&str] = &["deno_web", "deno_webidl"];

fn main() {
    println!("cargo:rerun-if-changed=src/ops");
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let metadata = metadata();
    // A new version of a crate changes the lock file, not the old sources.
    let workspace = metadata["workspace_root"].as_str().expect("workspace_root");
    println!("cargo:rerun-if-changed={workspace}/Cargo.lock");
    for name in CRATES {
        let source = dependency_dir(&metadata, name);
        let into = out.join(name);
        std::fs::create_dir_all(&into).expect("OUT_DIR is writable");
        let mut copied = 0;
        for entry in std::fs::read_dir(&source).expect("the crate's sources are readable") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_some_and(|e| e == "js") {
                let file = path.file_name().expect("a file name");
                std::fs::copy(&path, into.join(file)).expect("a script is copied");
                copied += 1;
            }
        }
        assert!(copied > 0, "no scripts in {}", source.display());
    }
}

/// `cargo metadata` of this package, offline (its dependencies are downloaded for this build);
/// online if that fails (an offline answer needs every dependency of the workspace on disk,
/// test-only ones included).
fn metadata() -> serde_json::Value {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .join("Cargo.toml");
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let run = |offline: bool| {
        let mut command = Command::new(&cargo);
        command
            .args(["metadata", "--format-version", "1", "--locked"])
            .args(["--filter-platform", &target])
            .arg("--manifest-path")
            .arg(&manifest);
        if offline {
            command.arg("--offline");
        }
        command.output().expect("cargo metadata runs")
    };
    let mut output = run(true);
    if !output.status.success() {
        output = run(false);
    }
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

/// The source directory of this package's dependency `name`, as resolved for this build.
fn dependency_dir(metadata: &serde_json::Value, name: &str) -> PathBuf {
    let package = std::env::var("CARGO_PKG_NAME").expect("cargo sets it");
    let manifest = Path::new(&std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"))
        .join("Cargo.toml");
    let packages = metadata["packages"].as_array().expect("packages");
    let ours = packages
        .iter()
        .find(|p| p["manifest_path"].as_str().map(Path::new) == Some(manifest.as_path()))
        .and_then(|p| p["id"].as_str())
        .expect("this package is in cargo metadata");
    let nodes = metadata["resolve"]["nodes"].as_array().expect("resolve");
    let node = nodes.iter().find(|n| n["id"] == ours).expect("our node");
    let dependency = node["deps"]
        .as_array()
        .expect("deps")
        .iter()
        .find(|d| d["name"] == name)
        .and_then(|d| d["pkg"].as_str())
        .unwrap_or_else(|| panic!("{package} does not depend on {name}"));
    let manifest = packages
        .iter()
        .find(|p| p["id"] == dependency)
        .and_then(|p| p["manifest_path"].as_str())
        .expect("the dependency's manifest");
    Path::new(manifest)
        .parent()
        .expect("a directory")
        .to_path_buf()
}
