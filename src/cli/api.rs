//! The HTTP client every command talks through: which server, which credential, and how an
//! answer becomes a value or a [`Failure`] (the server's error code and message, or a network
//! failure).

use std::time::Duration;

use reqwest::Method;
use serde_json::Value;

use super::{profile, Failure, Global, DEFAULT_SERVER};

/// The header a builder key travels in.
const BUILDER_KEY: &str = "x-builder-key";
/// The header of the admin token (only `dev` has one: its own server's).
const ADMIN_TOKEN: &str = "x-admin-token";

/// A credential sent with each request.
#[derive(Clone)]
pub(super) enum Credential {
    None,
    Builder(String),
    Admin(String),
}

/// One server and the credential to use there.
pub(super) struct Api {
    base: String,
    credential: Credential,
    http: reqwest::Client,
}

/// An answer as it came: its status, headers and body (JSON, or the text as a string).
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) headers: reqwest::header::HeaderMap,
    pub(super) body: Value,
}

impl Api {
    pub(super) fn new(base: &str, credential: Credential) -> Api {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(120))
            .user_agent(concat!("toolhost-cli/", env!("CARGO_PKG_VERSION")))
            .redirect(same_origin_redirects())
            .build()
            .unwrap_or_default();
        Api {
            base: base.trim_end_matches('/').to_string(),
            credential,
            http,
        }
    }

    /// The server and builder key of a command: `--server`/`TOOLHOST_URL` and
    /// `--builder-key`/`TOOLHOST_BUILDER_KEY` first, else what `toolhost login` stored; the
    /// stored key only for the server it was stored with.
    pub(super) fn from_global(global: &Global) -> Result<Api, Failure> {
        Api::from_parts(global, profile::load()?)
    }

    /// Like [`Api::from_global`] with the stored profile given (`login` reads it leniently:
    /// a broken one is what it replaces).
    pub(super) fn from_parts(
        global: &Global,
        stored: Option<profile::Profile>,
    ) -> Result<Api, Failure> {
        let base = global
            .server
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| stored.as_ref().map(|p| p.server.clone()))
            .unwrap_or_else(|| DEFAULT_SERVER.to_string());
        let base = normalize(&base)?;
        let key = global
            .builder_key
            .clone()
            .filter(|k| !k.is_empty())
            .or_else(|| {
                stored
                    .filter(|p| normalize(&p.server).ok().as_deref() == Some(base.as_str()))
                    .map(|p| p.builder_key)
            });
        let credential = key.map_or(Credential::None, Credential::Builder);
        Ok(Api::new(&base, credential))
    }

    pub(super) fn base(&self) -> &str {
        &self.base
    }

    /// Fails with a usage error when no builder key is known: before anything is sent.
    pub(super) fn require_key(&self) -> Result<(), Failure> {
        match self.credential {
            Credential::None => Err(Failure::Usage(
                "no builder key: run `toolhost login`, or give --builder-key or TOOLHOST_BUILDER_KEY"
                    .into(),
            )),
            _ => Ok(()),
        }
    }

    /// Sends a request with the credential and answers the JSON body of a 2xx; anything else
    /// is a [`Failure`].
    pub(super) async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        let answer = self.exchange(method, path, body, &[]).await?;
        if (200..300).contains(&answer.status) {
            Ok(answer.body)
        } else {
            Err(refusal(answer))
        }
    }

    pub(super) async fn get(&self, path: &str) -> Result<Value, Failure> {
        self.send(Method::GET, path, None).await
    }

    /// Sends a request and answers whatever came back (any status), failing only when no
    /// answer came.
    pub(super) async fn exchange(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<Answer, Failure> {
        let url = format!("{}{path}", self.base);
        let response = self.request(method, &url, body, headers).await?;
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response
            .text()
            .await
            .map_err(|e| Failure::Network(format!("{url}: the answer broke off: {}", chain(&e))))?;
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Ok(Answer {
            status,
            headers,
            body,
        })
    }
}

impl Api {
    /// A GET whose 2xx body is bytes, not JSON (a handler file); anything else is a
    /// [`Failure`].
    pub(super) async fn get_bytes(&self, path: &str) -> Result<Vec<u8>, Failure> {
        let url = format!("{}{path}", self.base);
        let response = self.request(Method::GET, &url, None, &[]).await?;
        let status = response.status().as_u16();
        let broke = |e: reqwest::Error| {
            Failure::Network(format!("{url}: the answer broke off: {}", chain(&e)))
        };
        if (200..300).contains(&status) {
            return Ok(response.bytes().await.map_err(broke)?.to_vec());
        }
        let headers = response.headers().clone();
        let text = response.text().await.map_err(broke)?;
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        Err(refusal(Answer {
            status,
            headers,
            body,
        }))
    }

    /// A POST whose 2xx body is written to `sink` as it comes (a backup): its headers and
    /// how many bytes; anything else is a [`Failure`].
    pub(super) async fn download(
        &self,
        path: &str,
        sink: &mut impl std::io::Write,
    ) -> Result<(reqwest::header::HeaderMap, u64), Failure> {
        let url = format!("{}{path}", self.base);
        let mut response = self.request(Method::POST, &url, None, &[]).await?;
        let status = response.status().as_u16();
        let broke = |e: reqwest::Error| {
            Failure::Network(format!("{url}: the answer broke off: {}", chain(&e)))
        };
        let headers = response.headers().clone();
        if !(200..300).contains(&status) {
            let text = response.text().await.map_err(broke)?;
            let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
            return Err(refusal(Answer {
                status,
                headers,
                body,
            }));
        }
        let mut written = 0u64;
        while let Some(chunk) = response.chunk().await.map_err(broke)? {
            sink.write_all(&chunk)
                .map_err(|e| Failure::Local(format!("writing the download: {e}")))?;
            written += chunk.len() as u64;
        }
        Ok((headers, written))
    }

    /// Sends one request with the credential and `headers`.
    async fn request(
        &self,
        method: Method,
        url: &str,
        body: Option<&Value>,
        headers: &[(&str, &str)],
    ) -> Result<reqwest::Response, Failure> {
        let mut request = self.http.request(method, url);
        request = match &self.credential {
            Credential::None => request,
            Credential::Builder(key) => request.header(BUILDER_KEY, key),
            Credential::Admin(token) => request.header(ADMIN_TOKEN, token),
        };
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        request
            .send()
            .await
            .map_err(|e| Failure::Network(format!("cannot reach {}: {}", self.base, chain(&e))))
    }
}

/// Redirects followed only within the origin of the request's first URL. The credential
/// header goes with every request, and reqwest's own policy strips only the headers it knows
/// to be sensitive (`Authorization`, cookies), not `X-Builder-Key` or `X-Admin-Token`, when a
/// redirect leaves the origin: following one would hand the key to whoever the server (or
/// anyone in between) names.
fn same_origin_redirects() -> reqwest::redirect::Policy {
    /// As many hops as a misconfigured proxy could need, and no loop.
    const MAX_HOPS: usize = 5;
    reqwest::redirect::Policy::custom(|attempt| {
        let origin = |url: &reqwest::Url| {
            (
                url.scheme().to_owned(),
                url.host_str().map(str::to_owned),
                url.port_or_known_default(),
            )
        };
        let Some(first) = attempt.previous().first() else {
            return attempt.follow();
        };
        if origin(first) != origin(attempt.url()) {
            let message = format!(
                "the server redirected to another origin ({}); the CLI sends its credential only \
                 to the server it was given: if that is the right server, pass it as --server",
                attempt.url().origin().ascii_serialization()
            );
            attempt.error(message)
        } else if attempt.previous().len() > MAX_HOPS {
            attempt.error(format!("more than {MAX_HOPS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// A server URL as the commands use it: `http(s)://host[:port][/prefix]` without a trailing
/// slash.
fn normalize(server: &str) -> Result<String, Failure> {
    let parsed = url::Url::parse(server)
        .map_err(|e| Failure::Usage(format!("server URL {server:?}: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host().is_none() {
        return Err(Failure::Usage(format!(
            "server URL {server:?} must be http:// or https:// with a host"
        )));
    }
    Ok(server.trim_end_matches('/').to_string())
}

/// An error answer as a refusal with the server's code and message. A body that is not the
/// one error shape (a 402's x402 body, a proxy's page) keeps what it has.
pub(super) fn refusal(answer: Answer) -> Failure {
    let fallback = || match answer.status {
        402 => "payment_required",
        _ => "unexpected_answer",
    };
    let excerpt = |value: &Value| -> String {
        match value {
            Value::String(text) => text.chars().take(300).collect(),
            other => other.to_string().chars().take(300).collect(),
        }
    };
    let (code, message) = match &answer.body["error"] {
        Value::Object(error) => (
            error
                .get("code")
                .and_then(Value::as_str)
                .unwrap_or_else(fallback)
                .to_string(),
            error.get("message").map(excerpt).unwrap_or_default(),
        ),
        // x402's 402 body: `error` is a sentence.
        Value::String(text) => (fallback().to_string(), text.clone()),
        _ => (fallback().to_string(), excerpt(&answer.body)),
    };
    Failure::Refused {
        status: answer.status,
        code,
        message,
        body: answer.body,
    }
}

/// An error with its causes (reqwest's own message alone says only "error sending request").
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A path segment, percent-encoded (slugs are plain, but a typo should not become another path).
pub(super) fn segment(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            other => format!("%{other:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use axum::http::header::LOCATION;
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::get;
    use axum::Router;

    use super::*;

    async fn serve(router: Router) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router).await });
        format!("http://{addr}")
    }

    fn key(headers: &HeaderMap) -> Option<String> {
        headers
            .get(BUILDER_KEY)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    }

    /// The builder key follows a redirect within the server's origin, never to another one
    /// (another port of the same host is another origin).
    #[tokio::test]
    async fn a_credential_never_follows_a_redirect_to_another_origin() {
        let reached = Arc::new(Mutex::new(Vec::new()));
        let record = reached.clone();
        let elsewhere = serve(Router::new().route(
            "/landing",
            get(move |headers: HeaderMap| async move {
                record.lock().unwrap().push(key(&headers));
                "{}"
            }),
        ))
        .await;
        let away = format!("{elsewhere}/landing");
        let home = serve(
            Router::new()
                .route(
                    "/away",
                    get(
                        move || async move { (StatusCode::TEMPORARY_REDIRECT, [(LOCATION, away)]) },
                    ),
                )
                .route(
                    "/here",
                    get(|| async { (StatusCode::TEMPORARY_REDIRECT, [(LOCATION, "/ok")]) }),
                )
                .route(
                    "/ok",
                    get(|headers: HeaderMap| async move {
                        axum::Json(serde_json::json!({ "key": key(&headers) }))
                    }),
                ),
        )
        .await;
        let api = Api::new(&home, Credential::Builder("thb_secret".into()));
        let Ok(same) = api.get("/here").await else {
            panic!("a same-origin redirect is followed")
        };
        assert_eq!(same["key"], "thb_secret");
        let Err(Failure::Network(message)) = api.get("/away").await else {
            panic!("a cross-origin redirect is an error")
        };
        assert!(message.contains("another origin"), "{message}");
        assert!(
            reached.lock().unwrap().is_empty(),
            "the other origin was asked"
        );
    }
}
