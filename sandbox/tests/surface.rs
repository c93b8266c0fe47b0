//! What a handler really gets (every global, each class's and object's members, `req` and
//! `ctx`), read from inside a real isolate in both modes and compared with the checked-in
//! `tests/types/surface.json`, which `tests/types` compares with `web/toolhost.d.ts`: the
//! types cannot promise what the runtime lacks without one of the two tests failing.
//! `TOOLHOST_WRITE_SURFACE=1` rewrites the file from the runtime (then review the diff).

mod util;

use serde_json::{json, Value};
use util::*;

fn surface_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/types/surface.json")
}

#[tokio::test]
async fn the_runtime_surface_is_the_checked_in_one() {
    let source = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/types/surface.js"),
    )
    .unwrap();
    let code = granted("surface", &source);
    for (mode, sandbox, _) in both_modes(test_config()) {
        let report = sandbox.invoke(&code, request(json!({}))).await;
        let surface = ok(report).body;
        if std::env::var_os("TOOLHOST_WRITE_SURFACE").is_some() {
            let text = serde_json::to_string_pretty(&surface).unwrap() + "\n";
            std::fs::write(surface_path(), text).unwrap();
        }
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(surface_path()).unwrap()).unwrap();
        assert_eq!(surface, expected, "{mode}: the runtime's surface changed");
    }
}
