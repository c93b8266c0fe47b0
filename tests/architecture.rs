//! The shape of the workspace, checked: crates and the service's top-level modules import each
//! other in one direction only.
//!
//! The bottom layers are crates of their own ([`CRATES`]: values and errors, the store, the
//! test kit, the x402 wing), so Cargo keeps them from reaching up; the service re-exports them under their
//! old names (`crate::store`, `crate::error`), and here they are one layer, the lowest.
//! Each top-level module of the service sits in a layer ([`LAYERS`], bottom first). A module
//! may use modules of its own layer or below, never above, and no set of modules may import
//! each other in a circle (not even within a layer). The graph is read from the sources: every
//! `crate::<module>` path outside comments, including `use crate::{a, b}` groups. A new
//! top-level module must be placed in a layer here, and `docs/architecture.md` says why each
//! layer is where it is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's crates, bottom first, each with the workspace crates it may depend on
/// (`[dependencies]`; any crate's tests may also use the test kit).
const CRATES: &[(&str, &str, &[&str])] = &[
    ("toolhost-values", "crates/values", &[]),
    ("toolhost-tlog", "crates/tlog", &[]),
    ("toolhost-store", "crates/store", &["toolhost-values"]),
    (
        "toolhost-testkit",
        "crates/testkit",
        &["toolhost-store", "toolhost-values"],
    ),
    (
        "toolhost-x402",
        "crates/x402",
        &["toolhost-values", "toolhost-store"],
    ),
    ("sandbox", "sandbox", &[]),
    (
        "toolhost",
        ".",
        &[
            "toolhost-values",
            "toolhost-tlog",
            "toolhost-store",
            "toolhost-x402",
            "sandbox",
        ],
    ),
];

/// The modules the service names as its own that are crates below it (`src/lib.rs` re-exports
/// them).
const FROM_CRATES_BELOW: &[&str] = &[
    "error",
    "money",
    "timestamp",
    "urls",
    "keyfile",
    "metrics",
    "store",
    "paging",
    "keyring",
    "x402",
    // Test-only proptest strategies (docs/fuzzing.md), from the test kit.
    "arbitrary",
];

/// Bottom first. Read as: what a module may depend on is to its left (or beside it).
const LAYERS: &[(&str, &[&str])] = &[
    ("crates below the service", FROM_CRATES_BELOW),
    ("values of the service", &["config"]),
    (
        "domains",
        &[
            "net",
            "rate_limit",
            "safety",
            "readiness",
            "handler_data",
            "catalog",
            "builders",
            "events",
            "logs",
            "tallies",
            "secrets",
            "receipts",
            "revenue",
            "js_handlers",
            "activity",
            "endpoints",
            "payments",
            "builtins",
            "quotes",
            "backup",
        ],
    ),
    ("composition", &["app"]),
    ("the call pipeline", &["pipeline", "maintenance"]),
    ("transports", &["http", "mcp", "web", "well_known"]),
    ("the router", &["router"]),
    // The builder's command line is a client of the HTTP API; `dev` runs a server of its own.
    ("the server and its client", &["server", "cli"]),
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to (`src/catalog/view.rs` and `src/catalog.rs` are
/// both `catalog`), or `None` for the crate roots.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib" && name != "main").then(|| name.to_string())
}

/// Source text without comments (line comments, doc comments), so a doc link is not a use.
fn code_of(text: &str) -> String {
    text.lines()
        .map(|line| match line.find("//") {
            // A `//` inside a string literal (a URL) is rare in paths that matter; cut at the
            // first `//` only when it starts the line's code.
            Some(at) if line[..at].trim().is_empty() => "",
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Module -> the modules it uses (outside unit tests).
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| module_of(&src, f)).collect();
    let path = regex::Regex::new(r"crate::([a-z_][a-z0-9_]*)").unwrap();
    let group = regex::Regex::new(r"crate::\{([^;]*)\}").unwrap();
    let name = regex::Regex::new(r"(?:^|[{,\s])([a-z_][a-z0-9_]*)").unwrap();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(from) = module_of(&src, file) else {
            continue;
        };
        let mut text = std::fs::read_to_string(file).unwrap();
        // A file's unit tests (its `mod tests` at the end) may compose the whole service, as
        // the integration tests do; the layers are about what the service itself uses.
        if let Some(tests) = text.find("#[cfg(test)]\nmod tests") {
            text.truncate(tests);
        }
        let code = code_of(&text);
        let mut used: Vec<String> = path
            .captures_iter(&code)
            .map(|c| c[1].to_string())
            .collect();
        for g in group.captures_iter(&code) {
            used.extend(name.captures_iter(&g[1]).map(|c| c[1].to_string()));
        }
        let targets = edges.entry(from.clone()).or_default();
        targets.extend(
            used.into_iter()
                .filter(|m| *m != from && modules.contains(m)),
        );
    }
    for module in modules {
        edges.entry(module).or_default();
    }
    edges
}

/// Strongly connected components with more than one member: the import cycles.
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Two modules are in one cycle when each reaches the other.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.to_string()];
        while let Some(m) = todo.pop() {
            for next in &edges[&m] {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        edges.keys().map(|m| (m, reach(m))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in edges.keys() {
        if done.contains(m) {
            continue;
        }
        let component: Vec<String> = reaches[m]
            .iter()
            .filter(|other| *other != m && reaches[*other].contains(m))
            .cloned()
            .chain(std::iter::once(m.clone()))
            .collect();
        done.extend(component.iter().cloned());
        if component.len() > 1 {
            let mut component = component;
            component.sort();
            out.push(component);
        }
    }
    out
}

#[test]
fn every_top_level_module_has_a_layer_and_every_layer_lists_modules_that_exist() {
    let modules = graph();
    let unplaced: Vec<_> = modules.keys().filter(|m| layer_of(m).is_none()).collect();
    assert!(
        unplaced.is_empty(),
        "place these modules in a layer of tests/architecture.rs: {unplaced:?}"
    );
    let gone: Vec<_> = LAYERS
        .iter()
        .flat_map(|(_, listed)| listed.iter())
        .filter(|m| !modules.contains_key(**m) && !FROM_CRATES_BELOW.contains(m))
        .collect();
    assert!(
        gone.is_empty(),
        "listed in LAYERS but not in src/: {gone:?}"
    );
}

#[test]
fn modules_use_only_their_own_layer_and_below() {
    let edges = graph();
    let upward: Vec<String> = edges
        .iter()
        .flat_map(|(from, targets)| targets.iter().map(move |to| (from, to)))
        .filter_map(|(from, to)| {
            let (a, b) = (layer_of(from)?, layer_of(to)?);
            (b > a).then(|| format!("{from} ({}) -> {to} ({})", LAYERS[a].0, LAYERS[b].0))
        })
        .collect();
    assert!(
        upward.is_empty(),
        "imports against the layers:\n{}",
        upward.join("\n")
    );
}

/// The command line is a client of the HTTP API: besides settings it uses only the server
/// (which `toolhost dev` runs) and the handler types `toolhost init` writes, never the store or
/// a domain directly, so it can do nothing the API would not let any other client do.
#[test]
fn the_cli_reaches_the_service_only_through_its_api() {
    let edges = graph();
    let allowed = ["config", "server", "web"];
    let other: Vec<&String> = edges["cli"]
        .iter()
        .filter(|m| !allowed.contains(&m.as_str()))
        .collect();
    assert!(
        other.is_empty(),
        "cli uses {other:?}; it may use only {allowed:?}"
    );
}

#[test]
fn no_import_cycles_between_top_level_modules() {
    let found = cycles(&graph());
    assert!(found.is_empty(), "import cycles: {found:?}");
}

/// Within each top-level module with a directory: its first-level submodules (files) -> the
/// siblings they use (`super::x`, `crate::<module>::x`), outside unit tests.
fn submodule_graphs() -> BTreeMap<String, BTreeMap<String, BTreeSet<String>>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let name = regex::Regex::new(r"(?:^|[{,\s])([a-z_][a-z0-9_]*)").unwrap();
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let dir = entry.path();
        if !dir.is_dir() {
            continue;
        }
        let top = dir.file_name().unwrap().to_str().unwrap().to_string();
        let mut files = Vec::new();
        rust_files(&dir, &mut files);
        let sub_of = |file: &Path| {
            let first = file
                .strip_prefix(&dir)
                .unwrap()
                .components()
                .next()
                .unwrap();
            let name = first.as_os_str().to_str().unwrap();
            name.strip_suffix(".rs").unwrap_or(name).to_string()
        };
        let siblings: BTreeSet<String> = files.iter().map(|f| sub_of(f)).collect();
        let uses = regex::Regex::new(&format!(
            r"(?:\bsuper|crate::{top})::(?:\{{([^;]*)\}}|([a-z_][a-z0-9_]*))"
        ))
        .unwrap();
        let mut edges: BTreeMap<String, BTreeSet<String>> = siblings
            .iter()
            .map(|s| (s.clone(), BTreeSet::new()))
            .collect();
        for file in &files {
            // Only a submodule's own file speaks for it: `super` in a nested file is its parent.
            if file.parent() != Some(dir.as_path()) {
                continue;
            }
            let from = sub_of(file);
            let mut text = std::fs::read_to_string(file).unwrap();
            if let Some(tests) = text.find("#[cfg(test)]\nmod tests") {
                text.truncate(tests);
            }
            for c in uses.captures_iter(&code_of(&text)) {
                let mut used: Vec<String> = c
                    .get(2)
                    .map(|m| m.as_str().to_string())
                    .into_iter()
                    .collect();
                if let Some(group) = c.get(1) {
                    used.extend(name.captures_iter(group.as_str()).map(|n| n[1].to_string()));
                }
                let targets = edges.get_mut(&from).unwrap();
                targets.extend(
                    used.into_iter()
                        .filter(|u| *u != from && siblings.contains(u)),
                );
            }
        }
        out.insert(top, edges);
    }
    out
}

#[test]
fn no_import_cycles_between_the_submodules_of_a_module() {
    let found: Vec<String> = submodule_graphs()
        .into_iter()
        .flat_map(|(top, edges)| {
            cycles(&edges)
                .into_iter()
                .map(move |c| format!("{top}: {c:?}"))
        })
        .collect();
    assert!(found.is_empty(), "import cycles inside modules: {found:?}");
}

#[test]
fn the_checker_sees_a_cycle_and_a_group_import() {
    let edges: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, t)| (m.to_string(), t.into_iter().map(String::from).collect()))
    .collect();
    assert_eq!(cycles(&edges), vec![vec!["a", "b", "c"]]);
    let code = code_of("use crate::{money::Usd, store};\n// crate::app in a comment\n");
    let group = regex::Regex::new(r"crate::\{([^;]*)\}").unwrap();
    assert!(group.is_match(&code));
    assert!(!code.contains("crate::app"));
}

/// The workspace crates a manifest's `section` (`dependencies`, `dev-dependencies`) names.
fn workspace_dependencies(manifest: &str, section: &str) -> BTreeSet<String> {
    let names: BTreeSet<&str> = CRATES.iter().map(|(name, _, _)| *name).collect();
    let header = format!("[{section}]");
    manifest
        .lines()
        .skip_while(|line| line.trim() != header)
        .skip(1)
        .take_while(|line| !line.starts_with('['))
        .filter_map(|line| line.split('=').next())
        .map(str::trim)
        .filter(|name| names.contains(name))
        .map(str::to_string)
        .collect()
}

#[test]
fn workspace_crates_depend_only_on_crates_below_and_the_test_kit_only_in_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (index, (name, dir, allowed)) in CRATES.iter().enumerate() {
        let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
        assert!(
            manifest.contains(&format!("name = \"{name}\"")),
            "{dir} is {name}"
        );
        let below: BTreeSet<&str> = CRATES[..index].iter().map(|(n, _, _)| *n).collect();
        for dependency in workspace_dependencies(&manifest, "dependencies") {
            assert!(
                allowed.contains(&dependency.as_str()) && below.contains(dependency.as_str()),
                "{name} depends on {dependency}, which is not below it in CRATES"
            );
        }
        for dependency in workspace_dependencies(&manifest, "dev-dependencies") {
            // The store's own tests use the test kit, which is built on the store: Cargo links
            // the store's library into them, so the kit is the one crate a lower one may use.
            assert!(
                below.contains(dependency.as_str()) || dependency == "toolhost-testkit",
                "{name}'s tests use {dependency}, which is not below it"
            );
        }
    }
    let service = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(
        !workspace_dependencies(&service, "dependencies").contains("toolhost-testkit"),
        "the test kit must stay out of the shipped binary"
    );
}
