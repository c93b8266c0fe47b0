//! Per-client token buckets for anonymous writes: quotes, free tool calls and builder
//! registration attempts. Each of these stores something (a quote, a receipt, a log entry)
//! for a caller who pays nothing and proves nothing, so one client must not be able to do it
//! without bound.
//!
//! The [`limit`] middleware puts the client's bucket in a task-local for the request; the
//! routes that write on an anonymous caller's behalf call [`anonymous_write`], which is why
//! a paid call (limited by its payment) or a read never spends a token.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::Response;

use crate::config::RateLimit;
use crate::error::{ApiError, ErrorCode};

/// Clients tracked at once. When the map is full, clients whose buckets have refilled are
/// forgotten (they would start full anyway); if none has, the least recently seen one is.
const MAX_CLIENTS: usize = 16_384;

pub struct RateLimiter {
    limit: RateLimit,
    /// Anonymous writes (free calls, unpaid calls, quotes, registrations).
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
    /// Refused payments, a bucket of their own: verifying a payment costs the server a
    /// signature recovery, and a client whose payments keep being refused pays for none of
    /// them, while one whose payments succeed never spends from it.
    refusals: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl RateLimiter {
    pub fn new(limit: RateLimit) -> Self {
        Self {
            limit,
            buckets: Mutex::new(HashMap::new()),
            refusals: Mutex::new(HashMap::new()),
        }
    }

    fn per_second(&self) -> f64 {
        f64::from(self.limit.per_minute) / 60.0
    }

    /// Takes one token from `client`'s bucket, or says how long until one is back.
    fn take(&self, client: IpAddr, now: Instant) -> Result<(), Duration> {
        self.take_from(&self.buckets, client, now, 1.0)
    }

    /// Takes `tokens` (1, or 0 to look without taking) from `client`'s bucket in `buckets`,
    /// or says how long until one is back.
    fn take_from(
        &self,
        buckets: &Mutex<HashMap<IpAddr, Bucket>>,
        client: IpAddr,
        now: Instant,
        tokens: f64,
    ) -> Result<(), Duration> {
        let burst = f64::from(self.limit.burst.max(1));
        let rate = self.per_second();
        let mut buckets = buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_CLIENTS && !buckets.contains_key(&client) {
            buckets.retain(|_, b| b.refilled(now, rate) < burst);
            if buckets.len() >= MAX_CLIENTS {
                if let Some(oldest) = buckets.iter().min_by_key(|(_, b)| b.at).map(|(k, _)| *k) {
                    buckets.remove(&oldest);
                }
            }
        }
        let bucket = buckets.entry(client).or_insert(Bucket {
            tokens: burst,
            at: now,
        });
        bucket.tokens = bucket.refilled(now, rate).min(burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= tokens;
            Ok(())
        } else if rate > 0.0 {
            Err(Duration::from_secs_f64((1.0 - bucket.tokens) / rate))
        } else {
            Err(Duration::from_secs(60))
        }
    }
}

impl Bucket {
    fn refilled(&self, now: Instant, rate: f64) -> f64 {
        self.tokens + now.saturating_duration_since(self.at).as_secs_f64() * rate
    }
}

/// Who the bucket belongs to: the peer address, with IPv6 clients grouped by /64 (one host
/// usually holds a whole /64, and could otherwise take a fresh bucket per address).
pub(crate) fn client_key(peer: IpAddr) -> IpAddr {
    match peer {
        IpAddr::V4(_) => peer,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let mut segments = v6.segments();
                segments[4..].fill(0);
                IpAddr::from(segments)
            }
        },
    }
}

#[derive(Clone)]
struct Client {
    key: IpAddr,
    limiter: Arc<RateLimiter>,
}

tokio::task_local! {
    static CLIENT: Client;
}

/// Middleware: makes the request's client and limiter known to [`anonymous_write`].
pub(crate) async fn limit(
    State(limiter): State<Option<Arc<RateLimiter>>>,
    request: Request,
    next: Next,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip());
    match (limiter, peer) {
        (Some(limiter), Some(peer)) => {
            let client = Client {
                key: client_key(peer),
                limiter,
            };
            CLIENT.scope(client, next.run(request)).await
        }
        _ => next.run(request).await,
    }
}

/// `future` with the current request's client, for work a handler spawns into its own task
/// (streamed answers), which would otherwise escape the limit.
pub fn carry<F: std::future::Future>(future: F) -> impl std::future::Future<Output = F::Output> {
    let client = CLIENT.try_with(Client::clone).ok();
    async move {
        match client {
            Some(client) => CLIENT.scope(client, future).await,
            None => future.await,
        }
    }
}

/// Spends one of the client's tokens for a write made for an anonymous caller; 429
/// `rate_limited` with `Retry-After` when the bucket is empty. Outside a limited request
/// (limit disabled) it always allows.
pub fn anonymous_write() -> Result<(), ApiError> {
    let verdict = CLIENT.try_with(|client| client.limiter.take(client.key, Instant::now()));
    limited(
        verdict.ok(),
        "free calls, unpaid calls, quotes and registrations",
    )
}

/// Whether the client may have a payment verified: 429 `rate_limited` when its refused
/// payments have emptied their bucket (spends nothing: only a refusal does, see
/// [`payment_refused`]).
pub fn payment_standing() -> Result<(), ApiError> {
    let verdict = CLIENT.try_with(|client| {
        let limiter = &client.limiter;
        limiter.take_from(&limiter.refusals, client.key, Instant::now(), 0.0)
    });
    limited(verdict.ok(), "payments that are refused")
}

/// A payment of the client's was refused: it spends a token of the refusals' bucket.
pub fn payment_refused() {
    let _ = CLIENT.try_with(|client| {
        let limiter = &client.limiter;
        limiter.take_from(&limiter.refusals, client.key, Instant::now(), 1.0)
    });
}

/// The 429 for an empty bucket (`None`: no limit in force); `what` says what it limits.
fn limited(verdict: Option<Result<(), Duration>>, what: &str) -> Result<(), ApiError> {
    match verdict {
        Some(Err(wait)) => {
            let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
            Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                ErrorCode::RateLimited,
                format!(
                    "too many anonymous requests from this client; retry in {seconds} s ({what} are limited per client)"
                ),
            )
            .with_retry_after(seconds))
        }
        Some(Ok(())) | None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limiter(per_minute: u32, burst: u32) -> RateLimiter {
        RateLimiter::new(RateLimit { per_minute, burst })
    }

    #[test]
    fn buckets_empty_then_refill() {
        let limiter = limiter(60, 3);
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let now = Instant::now();
        for _ in 0..3 {
            assert!(limiter.take(client, now).is_ok());
        }
        let wait = limiter.take(client, now).unwrap_err();
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
        // Another client has its own bucket.
        assert!(limiter.take("192.0.2.2".parse().unwrap(), now).is_ok());
        assert!(limiter.take(client, now + Duration::from_secs(1)).is_ok());
        assert!(limiter.take(client, now + Duration::from_secs(1)).is_err());
    }

    /// Refused payments have a bucket of their own: looking does not spend, a refusal does,
    /// and emptying it leaves the anonymous-write bucket alone.
    #[test]
    fn refused_payments_spend_a_bucket_of_their_own() {
        let limiter = limiter(60, 2);
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let now = Instant::now();
        let look = |limiter: &RateLimiter| limiter.take_from(&limiter.refusals, client, now, 0.0);
        for _ in 0..5 {
            assert!(look(&limiter).is_ok());
        }
        for _ in 0..2 {
            assert!(limiter
                .take_from(&limiter.refusals, client, now, 1.0)
                .is_ok());
        }
        assert!(look(&limiter).is_err());
        assert!(
            limiter.take(client, now).is_ok(),
            "writes have their own tokens"
        );
    }

    #[test]
    fn the_map_stays_bounded() {
        let limiter = limiter(60, 1);
        let now = Instant::now();
        for i in 0..(MAX_CLIENTS as u32 + 100) {
            let _ = limiter.take(IpAddr::from(i.to_be_bytes()), now);
        }
        assert!(limiter.buckets.lock().unwrap().len() <= MAX_CLIENTS);
    }

    #[test]
    fn ipv6_clients_share_a_bucket_per_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_key(a), client_key(b));
        assert_ne!(client_key(a), client_key(c));
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().unwrap();
        assert_eq!(client_key(mapped), "192.0.2.1".parse::<IpAddr>().unwrap());
    }
}
