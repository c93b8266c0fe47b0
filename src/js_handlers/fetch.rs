//! Handlers' `fetch` on the server: each request goes through the SSRF-guarded client to the
//! endpoint's allowed hosts only, and its response body is held here, unread, until the handler
//! pulls it a chunk at a time (the sandbox's `op_fetch_read`, over a worker's pipe as frames).
//!
//! A body belongs to the endpoint that started it (another endpoint's read is refused), ends
//! with the request's deadline (the call's time limit: a body the handler never finishes is
//! dropped then, even if a worker never says so), and fails once it passes the request's size
//! cap. An endpoint holds at most [`MAX_OPEN_PER_ENDPOINT`] bodies at once, whatever its
//! worker claims about its calls.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue};
use sandbox::{FetchHead, FetchRequest, HostError, HostFuture, MAX_FETCH_CHUNK_BYTES};
use tokio::time::Instant;

use crate::net::{NetError, OutboundClient, StreamRequest};

/// Bodies one endpoint may hold open on the server at once, across its calls and instances.
pub(crate) const MAX_OPEN_PER_ENDPOINT: usize = 256;

/// The open response bodies of every endpoint.
#[derive(Default)]
pub(crate) struct Bodies {
    open: Mutex<HashMap<u64, Arc<OpenBody>>>,
    next: AtomicU64,
}

struct OpenBody {
    endpoint: String,
    deadline: Instant,
    limit: usize,
    reader: tokio::sync::Mutex<Reader>,
}

struct Reader {
    response: reqwest::Response,
    /// Bytes read from the upstream so far.
    read: usize,
    /// What is left of a chunk larger than [`MAX_FETCH_CHUNK_BYTES`].
    rest: Bytes,
}

fn host_error(err: NetError) -> HostError {
    HostError::new(err.code().as_str(), err.to_string())
}

impl Bodies {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Arc<OpenBody>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends `request` for the endpoint with id `endpoint`, whose allow-list is `allow` (`None`: no host is
    /// allowed), and keeps the body for [`Bodies::read`].
    pub(crate) async fn start(
        &self,
        outbound: &OutboundClient,
        allow: Option<Vec<String>>,
        endpoint: &str,
        request: FetchRequest,
    ) -> Result<FetchHead, HostError> {
        let Some(allow) = allow else {
            return Err(HostError::new(
                "host_not_allowed",
                "fetch reaches the endpoint's allowedHosts only, and it has none",
            ));
        };
        let method = reqwest::Method::from_bytes(request.method.as_bytes())
            .map_err(|_| HostError::new("invalid_argument", "not a valid HTTP method"))?;
        let mut headers = HeaderMap::new();
        for (name, value) in &request.headers {
            match (
                HeaderName::try_from(name.as_str()),
                HeaderValue::try_from(value.as_str()),
            ) {
                (Ok(name), Ok(value)) => {
                    headers.append(name, value);
                }
                _ => {
                    return Err(HostError::new(
                        "invalid_argument",
                        format!("invalid header {name:?}"),
                    ))
                }
            }
        }
        let now = Instant::now();
        {
            let mut open = self.lock();
            open.retain(|_, body| body.deadline > now);
            if open
                .values()
                .filter(|body| body.endpoint == endpoint)
                .count()
                >= MAX_OPEN_PER_ENDPOINT
            {
                return Err(HostError::new(
                    "overloaded",
                    "too many responses of this endpoint are open",
                ));
            }
        }
        let deadline = now + request.timeout;
        let opened = outbound
            .open(StreamRequest {
                method,
                url: request.url,
                headers,
                body: request.body.map(Bytes::from),
                follow_redirects: request.follow_redirects,
                allow_hosts: &allow,
                deadline,
            })
            .await
            .map_err(host_error)?;
        let headers = opened
            .body
            .headers()
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect();
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        self.lock().insert(
            id,
            Arc::new(OpenBody {
                endpoint: endpoint.to_owned(),
                deadline,
                limit: request.max_response_bytes,
                reader: tokio::sync::Mutex::new(Reader {
                    response: opened.body,
                    read: 0,
                    rest: Bytes::new(),
                }),
            }),
        );
        Ok(FetchHead {
            id,
            status: opened.status,
            status_text: opened.status_text,
            headers,
            url: opened.url,
            redirected: opened.redirected,
        })
    }

    /// The next chunk of body `id` of the endpoint with id `endpoint`; `None` at its end. A failure, the end
    /// and the cap all forget the body.
    pub(crate) async fn read(&self, endpoint: &str, id: u64) -> Result<Option<Vec<u8>>, HostError> {
        let body = self
            .lock()
            .get(&id)
            .filter(|body| body.endpoint == endpoint)
            .cloned()
            .ok_or_else(|| HostError::new("invalid_argument", "no such response"))?;
        let chunk = tokio::time::timeout_at(body.deadline, body.next_chunk())
            .await
            .unwrap_or_else(|_| {
                Err(HostError::new(
                    "timeout",
                    "the response body did not arrive within the call's time",
                ))
            });
        if !matches!(chunk, Ok(Some(_))) {
            self.lock().remove(&id);
        }
        chunk
    }

    /// Drops body `id` of the endpoint with id `endpoint`, closing its connection.
    pub(crate) fn cancel(&self, endpoint: &str, id: u64) {
        let mut open = self.lock();
        if open.get(&id).is_some_and(|body| body.endpoint == endpoint) {
            open.remove(&id);
        }
    }
}

impl OpenBody {
    async fn next_chunk(&self) -> Result<Option<Vec<u8>>, HostError> {
        let mut reader = self.reader.lock().await;
        if reader.read == 0
            && reader
                .response
                .content_length()
                .is_some_and(|len| len > self.limit as u64)
        {
            return Err(host_error(NetError::ResponseTooLarge(self.limit)));
        }
        if reader.rest.is_empty() {
            let Some(chunk) = reader
                .response
                .chunk()
                .await
                .map_err(|_| HostError::new("upstream_error", "the response body broke off"))?
            else {
                return Ok(None);
            };
            reader.read += chunk.len();
            if reader.read > self.limit {
                return Err(host_error(NetError::ResponseTooLarge(self.limit)));
            }
            reader.rest = chunk;
        }
        let take = reader.rest.len().min(MAX_FETCH_CHUNK_BYTES);
        Ok(Some(reader.rest.split_to(take).to_vec()))
    }
}

/// Runs `work` on `server` (where the upstream connection then lives, whichever thread reads
/// it), aborted when the returned future is dropped: a cancelled fetch stops its request. As
/// `StoreHost::on_server`: spawned (and charged to the op's builder) from an isolate's thread,
/// in place on the server's own.
pub(crate) fn on_server<T: Send + 'static>(
    server: &tokio::runtime::Handle,
    work: impl std::future::Future<Output = Result<T, HostError>> + Send + 'static,
) -> HostFuture<T> {
    if !sandbox::on_isolate_thread() {
        return Box::pin(work);
    }
    struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);
    impl<T> Drop for AbortOnDrop<T> {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let mut task = AbortOnDrop(server.spawn(sandbox::inherit_charge(work)));
    Box::pin(async move {
        (&mut task.0)
            .await
            .unwrap_or_else(|_| Err(HostError::new("internal", "host task failed")))
    })
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::time::Duration;

    use super::*;
    use crate::net::test_server::{client, serve};

    fn request(url: &str, timeout: Duration) -> FetchRequest {
        FetchRequest {
            method: "GET".into(),
            url: url.into(),
            headers: Vec::new(),
            body: None,
            follow_redirects: true,
            timeout,
            max_response_bytes: 1024,
        }
    }

    /// Names and spellings an allow-list may carry that still lead inside: the guard refuses
    /// them by address. `localhost` resolves through the system's resolver (`/etc/hosts`).
    #[tokio::test]
    async fn listed_hosts_that_lead_inside_are_refused() {
        let bodies = Bodies::default();
        let outbound = client(false);
        for (url, host) in [
            ("http://localhost:9/", "localhost"),
            ("http://[::1]:9/", "[::1]"),
            ("http://[::ffff:127.0.0.1]/", "[::ffff:7f00:1]"),
            ("http://[fc00::1]/", "[fc00::1]"),
        ] {
            let err = bodies
                .start(
                    &outbound,
                    Some(vec![host.into()]),
                    "a",
                    request(url, Duration::from_secs(2)),
                )
                .await
                .unwrap_err();
            assert_eq!(err.code, "ssrf_refused", "{url}: {err:?}");
        }
        let err = bodies
            .start(
                &outbound,
                None,
                "a",
                request("https://example.com/", Duration::from_secs(1)),
            )
            .await
            .unwrap_err();
        assert_eq!(err.code, "host_not_allowed");
    }

    /// A body is its endpoint's alone, ends at its cap and at its deadline, and is gone once
    /// cancelled.
    #[tokio::test]
    async fn bodies_belong_to_their_endpoint_and_end_at_their_caps() {
        let drip = futures::stream::unfold((), |()| async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            Some((Ok::<_, Infallible>(Bytes::from_static(b"x")), ()))
        });
        let drip = Arc::new(Mutex::new(Some(axum::body::Body::from_stream(drip))));
        let router = axum::Router::new()
            .route("/big", axum::routing::get(|| async { vec![b'a'; 4000] }))
            .route(
                "/drip",
                axum::routing::get(move || {
                    let body = drip.lock().unwrap().take().unwrap_or_default();
                    async move { body }
                }),
            );
        let base = serve(router).await;
        let allow = Some(vec!["127.0.0.1".to_owned()]);
        let bodies = Bodies::default();
        let outbound = client(true);
        let big = bodies
            .start(
                &outbound,
                allow.clone(),
                "a",
                request(&format!("{base}/big"), Duration::from_secs(5)),
            )
            .await
            .unwrap();
        assert_eq!(big.status, 200);
        let err = bodies.read("b", big.id).await.unwrap_err();
        assert_eq!(err.code, "invalid_argument", "another endpoint's body");
        let err = bodies.read("a", big.id).await.unwrap_err();
        assert_eq!(err.code, "response_too_large");
        let err = bodies.read("a", big.id).await.unwrap_err();
        assert_eq!(err.code, "invalid_argument", "forgotten after it failed");

        let drip = bodies
            .start(
                &outbound,
                allow,
                "a",
                request(&format!("{base}/drip"), Duration::from_millis(300)),
            )
            .await
            .unwrap();
        let mut read = 0;
        let err = loop {
            match bodies.read("a", drip.id).await {
                Ok(Some(chunk)) => read += chunk.len(),
                Ok(None) => panic!("the drip never ends"),
                Err(err) => break err,
            }
        };
        assert_eq!(err.code, "timeout");
        assert!(read > 0 && read < 20, "{read}");
        assert!(bodies.lock().is_empty());
    }
}
