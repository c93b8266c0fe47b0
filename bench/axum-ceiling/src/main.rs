//! `axum-ceiling`: the benchmark's handler (`bench/peers/deno-server.js`: count the words of
//! `text`, upper-case it, echo the input) answered natively by a minimal axum server, as a peer of
//! `bench/run.sh`.
//!
//! It exists to measure the ceiling for any Rust HTTP service on the machine under test: the same
//! axum, hyper, tokio and serde_json as toolhost (one Cargo.lock, the workspace's release profile),
//! tokio's default multi-thread runtime, and nothing else: no sandbox, no receipt, no store, no
//! middleware. `toolhost-native / axum-ceiling` is the share of that ceiling toolhost keeps once
//! it adds what a call must do (issue 15).
//!
//! Usage: `axum-ceiling PORT` (listens on 127.0.0.1:PORT; `POST /`).

use axum::body::Bytes;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use serde::Serialize;
use serde_json::Value;

/// The answer, fields in the order deno-server.js writes them.
#[derive(Serialize)]
struct Words<'a> {
    words: usize,
    upper: String,
    input: &'a Value,
}

/// `words(input)` of deno-server.js: a missing or non-string `text` counts as "".
fn words(input: &Value) -> Words<'_> {
    let text = input.get("text").and_then(Value::as_str).unwrap_or("");
    Words {
        words: text.split_whitespace().count(),
        upper: text.to_uppercase(),
        input,
    }
}

/// The body is parsed whatever its Content-Type, as `request.json()` does in Deno; a body that is
/// not JSON is answered 400 `{"error":"malformed_json"}` like the other peers.
async fn handle(body: Bytes) -> Response {
    match serde_json::from_slice::<Value>(&body) {
        Ok(input) => Json(words(&input)).into_response(),
        Err(_) => (
            StatusCode::BAD_REQUEST,
            [(header::CONTENT_TYPE, "application/json")],
            r#"{"error":"malformed_json"}"#,
        )
            .into_response(),
    }
}

fn build_router() -> Router {
    Router::new().route("/", post(handle))
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let port: u16 = match std::env::args().nth(1).map(|p| p.parse()) {
        Some(Ok(port)) => port,
        _ => {
            eprintln!("usage: axum-ceiling PORT");
            std::process::exit(2);
        }
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    axum::serve(listener, build_router()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn answer(body: &'static str) -> (StatusCode, Value) {
        let response = handle(Bytes::from_static(body.as_bytes())).await;
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        (status, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn counts_upper_cases_and_echoes_in_the_peers_order() {
        let body = r#"{"text":"  the quick\tbrown\nfox  ","n":1}"#;
        let response = handle(Bytes::from_static(body.as_bytes())).await;
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX)
            .await
            .unwrap();
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(
            text.starts_with(r#"{"words":4,"upper":"  THE QUICK\tBROWN\nFOX  ","input":{"#),
            "{text}"
        );
        assert_eq!(answer(body).await.1["input"]["n"], 1);
    }

    #[tokio::test]
    async fn a_missing_or_non_string_text_is_empty() {
        for body in [
            r#"{}"#,
            r#"{"text":7}"#,
            r#"[1,2]"#,
            r#""text""#,
            r#"{"text":"   "}"#,
        ] {
            let (status, got) = answer(body).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            assert_eq!(got["words"], 0, "{body}");
        }
    }

    #[tokio::test]
    async fn malformed_json_is_400_with_the_peers_error() {
        for body in ["", "{", r#"{"text":"a"} x"#] {
            let (status, got) = answer(body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}");
            assert_eq!(got, serde_json::json!({"error": "malformed_json"}));
        }
    }
}
