//! Per-client token buckets for anonymous writes: quotes, free tool calls and builder
//! registration attempts. Each of these stores something (a quote, a receipt, a log entry)
//! for a caller who pays nothing and proves nothing, so one client must not be able to do it
//! without bound.
//!
//! The [`limit`] middleware puts the client's bucket in a task-local for the request; the
//! routes that write on an anonymous caller's behalf call [`anonymous_write`], which is why
//! a paid call (limited by its payment) or a read never spends a token.
//!
//! The same [`Buckets`] count the bytes of bodies a client sends that are refused
//! (`crate::http::admission`).

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
    /// Anonymous writes (free calls, unpaid calls, quotes, registrations).
    writes: Buckets,
    /// Refused payments, a bucket of their own: verifying a payment costs the server a
    /// signature recovery, and a client whose payments keep being refused pays for none of
    /// them, while one whose payments succeed never spends from it.
    refusals: Buckets,
}

impl RateLimiter {
    pub fn new(limit: RateLimit) -> Self {
        let per_second = f64::from(limit.per_minute) / 60.0;
        let burst = f64::from(limit.burst.max(1));
        Self {
            writes: Buckets::new(per_second, burst),
            refusals: Buckets::new(per_second, burst),
        }
    }
}

/// A token bucket per client (refilled at `per_second` up to `burst`), for anything counted
/// per client over time: requests, or bytes. The map holds at most [`MAX_CLIENTS`].
pub(crate) struct Buckets {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Buckets {
    pub(crate) fn new(per_second: f64, burst: f64) -> Self {
        Self {
            per_second,
            burst,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// If `client`'s bucket holds `need` tokens (at most the burst), spends `spend` of them;
    /// else says how long until it holds them. `spend` 0 looks without spending.
    pub(crate) fn take(
        &self,
        client: IpAddr,
        now: Instant,
        need: f64,
        spend: f64,
    ) -> Result<(), Duration> {
        let need = need.min(self.burst);
        self.with(client, now, |bucket| {
            if bucket.tokens >= need {
                bucket.tokens -= spend;
                Ok(())
            } else if self.per_second > 0.0 {
                Err(Duration::from_secs_f64(
                    (need - bucket.tokens) / self.per_second,
                ))
            } else {
                Err(Duration::from_secs(60))
            }
        })
    }

    /// Spends `amount` whatever the bucket holds: what was already used is charged after
    /// the fact, and a bucket may owe up to one burst, repaid at the rate before it allows
    /// anything again. Says how long until the bucket is out of debt: when spending paced by
    /// the bucket may go ahead.
    pub(crate) fn charge(&self, client: IpAddr, now: Instant, amount: f64) -> Duration {
        self.with(client, now, |bucket| {
            bucket.tokens = (bucket.tokens - amount).max(-self.burst);
            if bucket.tokens >= 0.0 || self.per_second <= 0.0 {
                Duration::ZERO
            } else {
                Duration::from_secs_f64(-bucket.tokens / self.per_second)
            }
        })
    }

    /// Runs `f` on `client`'s bucket, refilled to `now` (a new client's starts full).
    fn with<T>(&self, client: IpAddr, now: Instant, f: impl FnOnce(&mut Bucket) -> T) -> T {
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_CLIENTS && !buckets.contains_key(&client) {
            buckets.retain(|_, b| b.refilled(now, self.per_second) < self.burst);
            if buckets.len() >= MAX_CLIENTS {
                if let Some(oldest) = buckets.iter().min_by_key(|(_, b)| b.at).map(|(k, _)| *k) {
                    buckets.remove(&oldest);
                }
            }
        }
        let bucket = buckets.entry(client).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        bucket.tokens = bucket.refilled(now, self.per_second).min(self.burst);
        bucket.at = now;
        f(bucket)
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
    let verdict = CLIENT
        .try_with(|client| (client.limiter.writes).take(client.key, Instant::now(), 1.0, 1.0));
    limited(
        verdict.ok(),
        "free calls, unpaid calls, quotes and registrations",
    )
}

/// Whether the client may have a payment verified: 429 `rate_limited` when its refused
/// payments have emptied their bucket (spends nothing: only a refusal does, see
/// [`payment_refused`]).
pub fn payment_standing() -> Result<(), ApiError> {
    let verdict = CLIENT
        .try_with(|client| (client.limiter.refusals).take(client.key, Instant::now(), 1.0, 0.0));
    limited(verdict.ok(), "payments that are refused")
}

/// A payment of the client's was refused: it spends a token of the refusals' bucket.
pub fn payment_refused() {
    let _ =
        CLIENT.try_with(|client| (client.limiter.refusals).charge(client.key, Instant::now(), 1.0));
}

/// The 429 for an empty bucket (`None`: no limit in force); `what` says what it limits.
fn limited(verdict: Option<Result<(), Duration>>, what: &str) -> Result<(), ApiError> {
    match verdict {
        Some(Err(wait)) => Err(too_many(wait, "anonymous requests", what)),
        Some(Ok(())) | None => Ok(()),
    }
}

/// 429 `rate_limited` with `Retry-After` for a client with too many `subject` (`what` says
/// what its bucket counts), whose bucket allows it again after `wait`.
pub(crate) fn too_many(wait: Duration, subject: &str, what: &str) -> ApiError {
    let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        ErrorCode::RateLimited,
        format!(
            "too many {subject} from this client; retry in {seconds} s ({what} are limited per client)"
        ),
    )
    .with_retry_after(seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bucket of `burst` refilled at one token a second.
    fn buckets(burst: u32) -> Buckets {
        Buckets::new(1.0, f64::from(burst))
    }

    #[test]
    fn buckets_empty_then_refill() {
        let buckets = buckets(3);
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let now = Instant::now();
        let take = |at| buckets.take(client, at, 1.0, 1.0);
        for _ in 0..3 {
            assert!(take(now).is_ok());
        }
        let wait = take(now).unwrap_err();
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
        // Another client has its own bucket.
        assert!(buckets
            .take("192.0.2.2".parse().unwrap(), now, 1.0, 1.0)
            .is_ok());
        assert!(take(now + Duration::from_secs(1)).is_ok());
        assert!(take(now + Duration::from_secs(1)).is_err());
    }

    /// Looking does not spend; a charge does, even past empty (a debt repaid at the rate,
    /// at most one burst), and what is needed is capped at the burst.
    #[test]
    fn a_charge_after_the_fact_may_leave_a_debt() {
        let buckets = buckets(10);
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let now = Instant::now();
        for _ in 0..5 {
            assert!(buckets.take(client, now, 10.0, 0.0).is_ok());
        }
        assert!(
            buckets.take(client, now, 1_000.0, 0.0).is_ok(),
            "a full bucket allows anything"
        );
        buckets.charge(client, now, 15.0);
        assert_eq!(
            buckets.take(client, now, 1.0, 0.0),
            Err(Duration::from_secs(6))
        );
        buckets.charge(client, now, 1_000.0);
        assert_eq!(
            buckets.take(client, now, 1.0, 0.0),
            Err(Duration::from_secs(11)),
            "a debt is at most one burst"
        );
        assert!(buckets
            .take(client, now + Duration::from_secs(11), 1.0, 0.0)
            .is_ok());
    }

    /// Refused payments have a bucket of their own: emptying it leaves the anonymous-write
    /// bucket alone.
    #[test]
    fn refused_payments_spend_a_bucket_of_their_own() {
        let limiter = RateLimiter::new(RateLimit {
            per_minute: 60,
            burst: 2,
        });
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let now = Instant::now();
        for _ in 0..2 {
            limiter.refusals.charge(client, now, 1.0);
        }
        assert!(limiter.refusals.take(client, now, 1.0, 0.0).is_err());
        assert!(
            limiter.writes.take(client, now, 1.0, 1.0).is_ok(),
            "writes have their own tokens"
        );
    }

    /// Pacing spends as it goes and says when each spending's turn comes: none while the
    /// bucket lasts, then one rate-interval more each, up to one burst of debt.
    #[test]
    fn pacing_delays_past_the_burst() {
        let buckets = buckets(2);
        let client: IpAddr = "192.0.2.1".parse().unwrap();
        let now = Instant::now();
        let waits: Vec<u64> = (0..6)
            .map(|_| buckets.charge(client, now, 1.0).as_secs())
            .collect();
        assert_eq!(waits, [0, 0, 1, 2, 2, 2]);
        assert_eq!(
            buckets.charge(client, now + Duration::from_secs(10), 1.0),
            Duration::ZERO
        );
    }

    #[test]
    fn the_map_stays_bounded() {
        let buckets = buckets(1);
        let now = Instant::now();
        for i in 0..(MAX_CLIENTS as u32 + 100) {
            let _ = buckets.take(IpAddr::from(i.to_be_bytes()), now, 1.0, 1.0);
        }
        assert!(buckets.buckets.lock().unwrap().len() <= MAX_CLIENTS);
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
