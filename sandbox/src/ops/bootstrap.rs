//! The isolate's bootstrap: loads the `ctx` glue beside the ops (`90_bootstrap.js` last,
//! which leaves Rust its `setup` function), plus a middleware that turns off deno_core built-in
//! ops no handler needs.

use std::borrow::Cow;

use deno_core::{ExtensionFileSource, OpDecl};

use super::glue_js;

/// The glue, as classic scripts in load order. (Not ES modules: on the QuickJS backend,
/// deno_core's debug assertions trip over nested import edges between extension modules.)
const JS: &[ExtensionFileSource] = &[
    glue_js!("00_ctx.js"),
    glue_js!("10_kv.js"),
    glue_js!("20_files.js"),
    glue_js!("30_http.js"),
    glue_js!("40_log.js"),
    glue_js!("50_crypto.js"),
    glue_js!("50_web.js"),
    glue_js!("60_intl.js"),
    glue_js!("70_fetch.js"),
    glue_js!("90_bootstrap.js"),
];

/// Built-in ops that would let code print to the host's stdout, abort the process, or compile
/// and import code outside the module loader. They are unreachable anyway (the glue removes
/// `Deno` before any handler runs); disabling them is the second wall.
const DISABLED_BUILTIN_OPS: &[&str] = &[
    "op_panic",
    "op_print",
    "op_eval_context",
    "op_import_sync",
    "op_import_sync_with_source",
];

fn disable_builtins(op: OpDecl) -> OpDecl {
    if DISABLED_BUILTIN_OPS.contains(&op.name) {
        op.disable()
    } else {
        op
    }
}

deno_core::extension!(
    toolhost_bootstrap,
    deps = [
        toolhost_kv,
        toolhost_files,
        toolhost_http,
        toolhost_log,
        toolhost_crypto,
        toolhost_web,
        toolhost_fetch
    ],
    middleware = disable_builtins,
    customizer = |ext: &mut deno_core::Extension| ext.js_files = Cow::Borrowed(JS)
);
