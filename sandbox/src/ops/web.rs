//! The web platform a handler expects (the WinterTC Minimum Common API: URL, encoding, base64,
//! structuredClone, timers, events, AbortController, DOMException, performance, Blob, streams,
//! Headers, Request, Response), from Deno's own maintained extensions rather than our own
//! copies: `deno_webidl` and `deno_web` as crates, and the Headers/Request/Response scripts of
//! `deno_fetch` as files (`web/README.md` says why not the crate). The glue
//! `50_web.js` (loaded with the rest of the glue by `bootstrap`) picks which of their classes become globals.
//!
//! deno_web also registers ops for things a handler must not have (BroadcastChannel,
//! MessagePort, blob URLs, compression, locks): their scripts are never loaded, the glue removes
//! `Deno` before any handler runs, and [`replace_ops`] disables them as a second wall. Each
//! isolate gets its own blob store and broadcast channel, so nothing is shared between
//! isolates even through those ops, and blob bytes (kept outside the JS heap) count against a
//! budget of the isolate's own (`blob`).
//!
//! # Layout
//! - `atob`: `atob` by the forgiving-base64 rules (the engine's decoder is looser).
//! - `blob`: the budgeted blob store and the op that fills it.

mod atob;
mod blob;

use std::borrow::Cow;
use std::sync::Arc;

use deno_core::{Extension, ExtensionFileSource, OpDecl};
use deno_web::{BlobStoreTrait, InMemoryBroadcastChannel};

use atob::op_web_base64_atob;
use blob::{op_web_blob_create_part, BudgetedBlobStore};

/// Embeds a script of a Deno crate this one depends on under the specifier its siblings load
/// it by, `ext:<crate>/<file>`. The crates declare their scripts by path, read from disk when a
/// snapshot is made (Deno makes its snapshot at build time); toolhost makes its own at run
/// time, in worker processes that may not read the disk, so `build.rs` copies the scripts from
/// the crates' sources into `OUT_DIR` and they are embedded from there.
macro_rules! crate_js {
    ($krate:literal, $file:literal) => {
        ExtensionFileSource::new(
            concat!("ext:", $krate, "/", $file),
            deno_core::ascii_str_include!(concat!(env!("OUT_DIR"), "/", $krate, "/", $file)),
        )
    };
}

/// Embeds a deno_fetch script copied into `web/deno_fetch/` (toolhost does not depend on that
/// crate: `web/README.md`) as `ext:deno_fetch/<file>`.
macro_rules! deno_fetch_js {
    ($file:literal) => {
        ExtensionFileSource::new(
            concat!("ext:deno_fetch/", $file),
            deno_core::ascii_str_include!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/src/ops/web/deno_fetch/",
                $file
            )),
        )
    };
}

/// deno_webidl's script.
const DENO_WEBIDL_JS: &[ExtensionFileSource] = &[crate_js!("deno_webidl", "00_webidl.js")];

/// The deno_web scripts the globals need, and only those: a script not listed here (broadcast
/// channel, compression, locks, …) cannot be loaded at all.
const DENO_WEB_JS: &[ExtensionFileSource] = &[
    crate_js!("deno_web", "00_infra.js"),
    crate_js!("deno_web", "00_url.js"),
    crate_js!("deno_web", "01_console.js"),
    crate_js!("deno_web", "01_dom_exception.js"),
    crate_js!("deno_web", "01_mimesniff.js"),
    crate_js!("deno_web", "02_event.js"),
    crate_js!("deno_web", "02_structured_clone.js"),
    crate_js!("deno_web", "02_timers.js"),
    crate_js!("deno_web", "03_abort_signal.js"),
    crate_js!("deno_web", "05_base64.js"),
    crate_js!("deno_web", "06_streams.js"),
    crate_js!("deno_web", "08_text_encoding.js"),
    crate_js!("deno_web", "09_file.js"),
    crate_js!("deno_web", "12_location.js"),
    crate_js!("deno_web", "13_message_port.js"),
    crate_js!("deno_web", "15_performance.js"),
];

/// deno_fetch's Headers/Request/Response scripts (`web/README.md` says why not the crate).
const DENO_FETCH_JS: &[ExtensionFileSource] = &[
    deno_fetch_js!("20_headers.js"),
    deno_fetch_js!("21_formdata.js"),
    deno_fetch_js!("22_body.js"),
    deno_fetch_js!("22_http_client.js"),
    deno_fetch_js!("23_request.js"),
    deno_fetch_js!("23_response.js"),
];

/// deno_web ops no handler may reach (their scripts are not loaded either): cross-context
/// messaging, blob URLs, compression and the lock manager.
const DISABLED_OPS: &[&str] = &[
    "op_blob_create_object_url",
    "op_blob_revoke_object_url",
    "op_broadcast_subscribe",
    "op_broadcast_unsubscribe",
    "op_broadcast_serialize",
    "op_broadcast_deserialize",
    "op_broadcast_free",
    "op_broadcast_send",
    "op_broadcast_recv",
    "op_message_port_create_entangled",
    "op_message_port_post_message",
    "op_message_port_post_message_raw",
    "op_message_port_recv_message",
    "op_message_port_recv_message_sync",
    "op_compression_new",
    "op_compression_write",
    "op_compression_finish",
    "op_lock_manager_request",
    "op_lock_manager_await_lock",
    "op_lock_manager_await_steal",
    "op_lock_manager_is_stolen",
    "op_lock_manager_cancel",
    "op_lock_manager_release",
    "op_lock_manager_query",
];

/// The web globals `50_web.js` installs (its `WEB_GLOBALS`, in order; a test keeps
/// the two lists equal).
pub(crate) const WEB_GLOBAL_NAMES: &[&str] = &[
    "URL",
    "URLSearchParams",
    "DOMException",
    "Event",
    "EventTarget",
    "CustomEvent",
    "ErrorEvent",
    "structuredClone",
    "setTimeout",
    "setInterval",
    "clearTimeout",
    "clearInterval",
    "AbortController",
    "AbortSignal",
    "atob",
    "btoa",
    "ReadableStream",
    "ReadableStreamDefaultReader",
    "ReadableStreamBYOBReader",
    "ReadableStreamBYOBRequest",
    "ReadableByteStreamController",
    "ReadableStreamDefaultController",
    "WritableStream",
    "WritableStreamDefaultWriter",
    "WritableStreamDefaultController",
    "TransformStream",
    "TransformStreamDefaultController",
    "ByteLengthQueuingStrategy",
    "CountQueuingStrategy",
    "TextEncoder",
    "TextDecoder",
    "TextEncoderStream",
    "TextDecoderStream",
    "Blob",
    "File",
    "Performance",
    "performance",
    "Headers",
    "FormData",
    "Request",
    "Response",
    "fetch",
];

/// Globals of the engine, not the web platform, that are accessors loading their code when
/// first read, as the web globals are: `Temporal`, the engine binding's polyfill (about a
/// megabyte of each isolate's heap; third_party/README.md). An endpoint whose source names one
/// reads it before its module runs, and its next isolates' runtimes read it ahead of time.
pub(crate) const ENGINE_LAZY_GLOBALS: &[&str] = &["Temporal"];

/// The web globals `source` names as whole words: the ones the glue loads before the
/// handler's module runs (`setup`'s `webGlobals`), and what decides which spare an endpoint
/// takes. A handler is one module that may import nothing, so its source is all the code it
/// has. A name in a comment or a string counts too; that costs memory, never behaviour.
pub(crate) fn web_globals_named(source: &str) -> Vec<&'static str> {
    named_in(source, WEB_GLOBAL_NAMES)
}

/// The [`ENGINE_LAZY_GLOBALS`] `source` names, as [`web_globals_named`] finds them.
pub(crate) fn engine_globals_named(source: &str) -> Vec<&'static str> {
    named_in(source, ENGINE_LAZY_GLOBALS)
}

/// What a runtime made ahead of time for `source`'s endpoint loads: the web globals and the
/// engine's lazy globals it names.
pub(crate) fn lazy_globals_named(source: &str) -> Vec<&'static str> {
    let mut names = web_globals_named(source);
    names.extend(engine_globals_named(source));
    names
}

/// The `names` that `source` names as whole words, in the order of `names`.
fn named_in(source: &str, names: &[&'static str]) -> Vec<&'static str> {
    let word = |byte: u8| byte.is_ascii_alphanumeric() || byte == b'_';
    let bytes = source.as_bytes();
    names
        .iter()
        .copied()
        .filter(|name| {
            source.match_indices(name).any(|(at, _)| {
                let end = at + name.len();
                (at == 0 || !word(bytes[at - 1])) && bytes.get(end).is_none_or(|&b| !word(b))
            })
        })
        .collect()
}

/// `source` names at least one web global ([`web_globals_named`]).
pub(crate) fn names_web_globals(source: &str) -> bool {
    !web_globals_named(source).is_empty()
}

/// Disables [`DISABLED_OPS`], puts blob parts under the isolate's budget and decodes `atob`'s
/// input by the standard.
fn replace_ops(op: OpDecl) -> OpDecl {
    if op.name == "op_blob_create_part" {
        op.with_implementation_from(&op_web_blob_create_part())
    } else if op.name == "op_base64_atob" {
        op.with_implementation_from(&op_web_base64_atob())
    } else if DISABLED_OPS.contains(&op.name) {
        op.disable()
    } else {
        op
    }
}

deno_core::extension!(
    toolhost_web,
    deps = [deno_webidl, deno_web],
    options = { blob_store: Arc<BudgetedBlobStore> },
    middleware = replace_ops,
    state = |state, options| {
        state.put(options.blob_store);
    },
    customizer = |ext: &mut Extension| {
        ext.lazy_loaded_js_files = Cow::Borrowed(DENO_FETCH_JS);
    }
);

/// deno_webidl and deno_web with their scripts swapped for the embedded copies (deno_web with a
/// blob store of `blob_bytes` and a broadcast channel of this isolate's own), then ours, in
/// dependency order.
pub(crate) fn extensions(blob_bytes: usize) -> [Extension; 3] {
    let blob_store = Arc::new(BudgetedBlobStore::new(blob_bytes));
    let shared: Arc<dyn BlobStoreTrait> = blob_store.clone();
    let mut webidl = deno_webidl::deno_webidl::init();
    webidl.lazy_loaded_js_files = Cow::Borrowed(DENO_WEBIDL_JS);
    let mut web =
        deno_web::deno_web::init(shared, None, false, InMemoryBroadcastChannel::default());
    web.lazy_loaded_js_files = Cow::Borrowed(DENO_WEB_JS);
    web.lazy_loaded_esm_files = Cow::Borrowed(&[]);
    [webidl, web, toolhost_web::init(blob_store)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_named_globals_are_listed_in_the_glue_s_order() {
        assert_eq!(
            web_globals_named("fetch(new Request(new URL(u))); // a Response"),
            ["URL", "Request", "Response", "fetch"]
        );
    }

    #[test]
    fn a_web_global_counts_only_as_a_whole_word() {
        assert!(names_web_globals(
            "export default () => new URL('https://a.example')"
        ));
        assert!(names_web_globals("Response"));
        assert!(names_web_globals("x.fetch(1)"));
        assert!(
            names_web_globals("$URL"),
            "`$` is no word character for `\\b`"
        );
        assert!(!names_web_globals(
            "export default (req) => ({ urls: req.input.URLs })"
        ));
        assert!(!names_web_globals(
            "const fetcher = 1; const myBlob = 2; const Files = 3;"
        ));
        assert!(!names_web_globals(""));
    }

    #[test]
    fn the_engine_s_lazy_globals_are_named_apart_from_the_web_ones() {
        let source = "const d = Temporal.Now.instant(); new URL(u); // Temporals";
        assert_eq!(web_globals_named(source), ["URL"]);
        assert_eq!(engine_globals_named(source), ["Temporal"]);
        assert_eq!(lazy_globals_named(source), ["URL", "Temporal"]);
        assert!(engine_globals_named("globalThis['Tempo' + 'ral']").is_empty());
    }

    /// Every deno_web and deno_webidl script embedded is one its crate declares, as the
    /// crate's own file (copied by `build.rs`): a version of the crates that renamed or dropped
    /// one fails here.
    #[test]
    fn embedded_scripts_are_the_crates_own() {
        let crates = [
            (deno_webidl::deno_webidl::init(), DENO_WEBIDL_JS),
            (
                deno_web::deno_web::init(
                    Arc::new(deno_web::BlobStore::default()),
                    None,
                    false,
                    InMemoryBroadcastChannel::default(),
                ),
                DENO_WEB_JS,
            ),
        ];
        for (ext, ours) in crates {
            for copy in ours {
                let original = ext
                    .lazy_loaded_js_files
                    .iter()
                    .find(|file| file.specifier == copy.specifier)
                    .unwrap_or_else(|| panic!("{} is not in its crate", copy.specifier));
                let Ok(original) = original.load() else {
                    continue;
                };
                let embedded = copy.load().expect("embedded");
                assert!(
                    original.as_str() == embedded.as_str(),
                    "{} differs from its crate's copy",
                    copy.specifier
                );
            }
        }
    }
}
