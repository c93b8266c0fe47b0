//! The dashboard and the guide: static pages embedded in the binary (no CDN, works offline).
//!
//! - `GET /dashboard`, `/dashboard/` and `/dashboard/{*path}`: `web/dashboard/` (the page is
//!   `index.html`; its scripts are ES modules under the same prefix).
//! - `GET /guides/x402-agent-payment-infrastructure`: `web/guide/index.html` with every
//!   `{base_url}` replaced by the configured base URL, so its examples are copy-paste;
//!   `/guides/assets/{*path}`: the guide's stylesheet and script.
//! - `GET /toolhost.d.ts`: `web/toolhost.d.ts`, the types of a JS handler's `req`, `ctx` and
//!   globals, for builders' editors. In the OpenAPI document (it is part of the builder's
//!   interface, not a page), so it is mounted by the router with the API routes; cacheable by
//!   anyone for an hour (public, the same for every caller, no secret in it), then revalidated
//!   by ETag, and readable cross-origin so a web editor elsewhere can load it.
//!
//! Every answer carries a strict Content-Security-Policy (`default-src 'self'`, no inline
//! script or style), `nosniff`, `no-referrer` and no framing. Assets are revalidated on each
//! load (`no-cache`) against a strong ETag, so a new binary never serves stale scripts and an
//! unchanged asset costs a 304.
//!
//! Setting `TOOLHOST_DEV_WEB_DIR` to a directory laid out like `web/` serves files from disk
//! instead, read on each request: for editing the pages without rebuilding. Not for production.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Component, Path as FsPath, PathBuf};
use std::sync::OnceLock;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use include_dir::{include_dir, Dir};
use sha2::{Digest, Sha256};

use crate::app::AppState;
use crate::error::{ApiError, ErrorCode};

static WEB: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/web");

pub const GUIDE_PATH: &str = "/guides/x402-agent-payment-infrastructure";

/// Where `web/toolhost.d.ts` is served.
pub const HANDLER_TYPES_PATH: &str = "/toolhost.d.ts";

/// The policy of every page: scripts, styles, images and fetches from this origin only.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/dashboard", get(dashboard_index))
        .route("/dashboard/", get(dashboard_index))
        .route("/dashboard/{*path}", get(dashboard_asset))
        .route(GUIDE_PATH, get(guide))
        .route("/guides/assets/{*path}", get(guide_asset))
}

async fn dashboard_index(headers: HeaderMap) -> Response {
    serve("dashboard/index.html", &headers, None)
}

async fn dashboard_asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    serve(&format!("dashboard/{path}"), &headers, None)
}

async fn guide(State(app): State<AppState>, headers: HeaderMap) -> Response {
    serve("guide/index.html", &headers, Some(app.urls.base()))
}

async fn guide_asset(Path(path): Path<String>, headers: HeaderMap) -> Response {
    serve(&format!("guide/{path}"), &headers, None)
}

/// `GET /toolhost.d.ts`: the TypeScript declarations of a JS handler's `req`, `ctx` and globals.
#[utoipa::path(get, path = "/toolhost.d.ts", tag = "builders",
    responses(
        (status = 200, description = "TypeScript declarations for JS handlers (web/toolhost.d.ts)", content_type = "application/typescript"),
        (status = 304, description = "Unchanged (If-None-Match matched the ETag)"),
    ))]
pub async fn handler_types(headers: HeaderMap) -> Response {
    let mut response = serve("toolhost.d.ts", &headers, None);
    let headers = response.headers_mut();
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    response
}

/// `web/toolhost.d.ts` as embedded in the binary: what `toolhost init` writes beside a new
/// handler for editors.
pub fn handler_types_source() -> &'static str {
    WEB.get_file("toolhost.d.ts")
        .and_then(|f| f.contents_utf8())
        .unwrap_or_default()
}

/// Serves one file of `web/`, or the JSON 404 of every unknown route. `base_url`, when given,
/// replaces `{base_url}` in the (HTML) file, escaped for HTML.
fn serve(path: &str, request: &HeaderMap, base_url: Option<&str>) -> Response {
    let Some(bytes) = load(path) else {
        return ApiError::not_found(ErrorCode::RouteNotFound, format!("no route for /{path}"))
            .into_response();
    };
    let body: Cow<'static, [u8]> = match base_url {
        Some(base) => {
            let text = String::from_utf8_lossy(&bytes).replace("{base_url}", &escape_html(base));
            Cow::Owned(text.into_bytes())
        }
        None => bytes,
    };
    let etag = etag_of(path, &body);
    let mut response = if etag_matches(request, &etag) {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut response = body.into_owned().into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static(content_type(path)),
        );
        response
    };
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&etag) {
        headers.insert(header::ETAG, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    security_headers(headers);
    response
}

/// Whether the request's `If-None-Match` names `etag` (or is `*`): then the answer is 304.
/// Weak tags compare by their opaque part, as RFC 9110 asks for `If-None-Match`.
pub fn etag_matches(request: &HeaderMap, etag: &str) -> bool {
    request
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.trim_start_matches("W/") == etag)
}

/// The headers every page and asset carries.
pub fn security_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

fn load(path: &str) -> Option<Cow<'static, [u8]>> {
    if let Some(dir) = std::env::var_os("TOOLHOST_DEV_WEB_DIR") {
        let relative = safe_relative(path)?;
        return std::fs::read(PathBuf::from(dir).join(relative))
            .ok()
            .map(Cow::Owned);
    }
    WEB.get_file(path).map(|f| Cow::Borrowed(f.contents()))
}

/// `path` as a relative path of plain segments only (no `..`, root or prefix), else `None`.
fn safe_relative(path: &str) -> Option<PathBuf> {
    let candidate = FsPath::new(path);
    candidate
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| candidate.to_path_buf())
}

/// Strong ETag from the SHA-256 of the served bytes; embedded files are hashed once.
fn etag_of(path: &str, body: &[u8]) -> String {
    static CACHE: OnceLock<std::sync::Mutex<HashMap<(String, usize), String>>> = OnceLock::new();
    let compute = || {
        let digest = Sha256::digest(body);
        format!("\"{}\"", hex::encode(&digest[..12]))
    };
    if std::env::var_os("TOOLHOST_DEV_WEB_DIR").is_some() {
        return compute();
    }
    let cache = CACHE.get_or_init(Default::default);
    let key = (path.to_string(), body.len());
    let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(key).or_insert_with(compute).clone()
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("js" | "mjs") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("ico") => "image/x-icon",
        Some("txt") => "text/plain; charset=utf-8",
        Some("ts") => "application/typescript; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_page_and_module_is_embedded() {
        // Every file of `web/` on disk, so a new view module cannot be left out.
        fn files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    files(&path, out);
                } else {
                    out.push(path);
                }
            }
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("web");
        let mut all = Vec::new();
        files(&root, &mut all);
        assert!(all.len() >= 10, "{all:?}");
        for path in all {
            let relative = path.strip_prefix(&root).unwrap().to_str().unwrap();
            assert!(
                WEB.get_file(relative).is_some(),
                "{relative} is not embedded"
            );
        }
    }

    #[test]
    fn no_inline_script_or_remote_asset() {
        for file in ["dashboard/index.html", "guide/index.html"] {
            let html = WEB.get_file(file).unwrap().contents_utf8().unwrap();
            for tag in html.split("<script").skip(1) {
                let open = &tag[..tag.find('>').unwrap()];
                assert!(
                    open.contains("src=\"/"),
                    "{file}: inline or remote script: <script{open}>"
                );
            }
            assert!(!html.contains("style=\""), "{file}: inline style attribute");
            for handler in [
                "onclick=",
                "onload=",
                "onerror=",
                "oninput=",
                "onchange=",
                "onsubmit=",
            ] {
                assert!(
                    !html.contains(handler),
                    "{file}: inline event handler {handler}"
                );
            }
            assert!(!html.contains("src=\"http"), "{file}: remote asset");
            assert!(
                !html.contains("rel=\"stylesheet\" href=\"http"),
                "{file}: remote stylesheet"
            );
        }
    }

    #[test]
    fn relative_paths_only() {
        assert!(safe_relative("dashboard/app.js").is_some());
        assert!(safe_relative("dashboard/../../etc/passwd").is_none());
        assert!(safe_relative("/etc/passwd").is_none());
    }

    #[test]
    fn types() {
        assert_eq!(content_type("a/b.js"), "text/javascript; charset=utf-8");
        assert_eq!(content_type("x.css"), "text/css; charset=utf-8");
        assert_eq!(content_type("index.html"), "text/html; charset=utf-8");
        assert_eq!(
            content_type("toolhost.d.ts"),
            "application/typescript; charset=utf-8"
        );
    }
}
