//! A builder's pace of durable writes: the bytes its handlers write to `ctx.kv` and
//! `ctx.files`, per second, with a burst.
//!
//! Quotas bound what a builder keeps, not how fast it rewrites it: a handler overwriting 24 keys
//! of 60 KiB on every call stays within every quota and still writes megabytes a second. Every
//! call's answer waits for its writes to be durable, and the store makes writes durable
//! together (one flush of its log for all of them), so one builder's volume became every
//! builder's latency: a flush of a few hundred bytes of a victim's kv write took 191 ms while
//! an attacker's rewrites kept the disk busy (bench/RESULTS.md, "Where the victims' shared
//! stalls come from"). So each builder's writes draw on a bucket of bytes, refilled at
//! [`Quotas::builder_write_bytes_per_sec`] up to [`Quotas::builder_write_burst_bytes`], before
//! they reach the store, as CPU is shared among builders (`sandbox::limits::cpu`).
//!
//! A write the bucket cannot cover waits for its bytes, up to [`MAX_WAIT`]; past that it is
//! refused with `resource_limit` and writes nothing. Waiting writes take their bytes at once,
//! so writers behind them wait longer: the bucket is a queue in time, and a builder cannot
//! skip it by writing many things at once. The operator's and admin's endpoints (no builder)
//! are not paced. The pace is this node's: nodes sharing a database each hold their own.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use sandbox::HostError;

use super::host_error;
use crate::config::Quotas;

/// The longest a write waits for its builder's bytes. Short, because a call's operations
/// should not outlive the call by much (the call's own time limit is not known here), and a
/// builder this far over its pace is writing in a loop, not once.
pub(crate) const MAX_WAIT: Duration = Duration::from_millis(250);

/// Builders remembered at once; a full bucket is the same as none, so those go first.
const MAX_REMEMBERED: usize = 4096;

/// Each builder's bucket of write bytes on this node.
pub(crate) struct WritePace {
    per_sec: u64,
    burst: u64,
    buckets: Mutex<HashMap<String, Bucket>>,
}

/// Bytes a builder may write now: negative while writes wait for bytes they took ahead.
struct Bucket {
    level: f64,
    at: Instant,
}

impl Bucket {
    fn refill(&mut self, now: Instant, per_sec: u64, burst: u64) {
        let gained = now.saturating_duration_since(self.at).as_secs_f64() * per_sec as f64;
        self.level = (self.level + gained).min(burst as f64);
        self.at = now;
    }
}

impl WritePace {
    pub(crate) fn new(quotas: &Quotas) -> WritePace {
        WritePace {
            per_sec: quotas.builder_write_bytes_per_sec,
            burst: quotas.builder_write_burst_bytes,
            buckets: Mutex::default(),
        }
    }

    /// Takes `bytes` from `builder`'s bucket and says how long the write must wait before it
    /// runs (zero within the burst), or refuses it: larger than the burst, or waiting longer
    /// than [`MAX_WAIT`]. A refused write takes nothing.
    pub(crate) fn take(&self, builder: &str, bytes: u64) -> Result<Duration, HostError> {
        self.take_at(builder, bytes, Instant::now())
    }

    fn take_at(&self, builder: &str, bytes: u64, now: Instant) -> Result<Duration, HostError> {
        if self.per_sec == 0 {
            return Ok(Duration::ZERO);
        }
        if bytes > self.burst {
            return Err(host_error(
                "resource_limit",
                format!(
                    "this write of {bytes} bytes is larger than the {} bytes a builder may \
                     write at once",
                    self.burst
                ),
            ));
        }
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        if buckets.len() >= MAX_REMEMBERED && !buckets.contains_key(builder) {
            let (per_sec, burst) = (self.per_sec, self.burst);
            buckets.retain(|_, bucket| {
                bucket.refill(now, per_sec, burst);
                bucket.level < burst as f64
            });
        }
        let bucket = buckets.entry(builder.to_owned()).or_insert(Bucket {
            level: self.burst as f64,
            at: now,
        });
        bucket.refill(now, self.per_sec, self.burst);
        let short = bytes as f64 - bucket.level;
        let wait = Duration::from_secs_f64(short.max(0.0) / self.per_sec as f64);
        if wait > MAX_WAIT {
            return Err(host_error(
                "resource_limit",
                format!(
                    "this builder's writes are over {} bytes a second: this write of {bytes} \
                     bytes would wait {} ms for its turn",
                    self.per_sec,
                    wait.as_millis()
                ),
            ));
        }
        bucket.level -= bytes as f64;
        Ok(wait)
    }
}

/// The bytes a `ctx.kv` value takes as JSON text (what the store keeps), counted without
/// writing it anywhere.
pub(crate) fn json_len(value: &impl serde::Serialize) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;

    fn pace(per_sec: u64, burst: u64) -> WritePace {
        WritePace::new(&Quotas {
            builder_write_bytes_per_sec: per_sec,
            builder_write_burst_bytes: burst,
            ..Quotas::default()
        })
    }

    #[test]
    fn a_burst_is_written_at_once_then_writes_wait_their_turn() {
        let pace = pace(100 * KIB, 200 * KIB);
        let t0 = Instant::now();
        assert_eq!(pace.take_at("b", 150 * KIB, t0).unwrap(), Duration::ZERO);
        assert_eq!(pace.take_at("b", 50 * KIB, t0).unwrap(), Duration::ZERO);
        // The bucket is empty: 10 KiB wait a tenth of a second...
        let wait = pace.take_at("b", 10 * KIB, t0).unwrap();
        assert_eq!(wait.as_millis(), 100);
        // ... and the next writer waits behind them.
        let wait = pace.take_at("b", 10 * KIB, t0).unwrap();
        assert_eq!(wait.as_millis(), 200);
        // A second later the bucket has refilled 100 KiB, 20 KiB of which were taken ahead.
        let later = t0 + Duration::from_secs(1);
        assert_eq!(pace.take_at("b", 80 * KIB, later).unwrap(), Duration::ZERO);
    }

    #[test]
    fn a_write_that_would_wait_too_long_is_refused_and_takes_nothing() {
        let pace = pace(100 * KIB, 100 * KIB);
        let t0 = Instant::now();
        pace.take_at("b", 100 * KIB, t0).unwrap();
        let err = pace.take_at("b", 30 * KIB, t0).unwrap_err();
        assert_eq!(err.code, "resource_limit");
        assert!(err.message.contains("300 ms"), "{}", err.message);
        // Refused, it took nothing: a smaller write still fits within the longest wait.
        assert_eq!(
            pace.take_at("b", 20 * KIB, t0).unwrap(),
            Duration::from_millis(200)
        );
        let err = pace.take_at("b", 101 * KIB, t0).unwrap_err();
        assert!(err.message.contains("at once"), "{}", err.message);
    }

    #[test]
    fn builders_have_buckets_of_their_own() {
        let pace = pace(100 * KIB, 100 * KIB);
        let t0 = Instant::now();
        pace.take_at("attacker", 100 * KIB, t0).unwrap();
        assert!(pace.take_at("attacker", 100 * KIB, t0).is_err());
        assert_eq!(
            pace.take_at("victim", 100 * KIB, t0).unwrap(),
            Duration::ZERO
        );
    }

    #[test]
    fn a_pace_of_zero_paces_nothing() {
        let pace = pace(0, 0);
        let t0 = Instant::now();
        for _ in 0..3 {
            assert_eq!(pace.take_at("b", 1 << 30, t0).unwrap(), Duration::ZERO);
        }
    }

    #[test]
    fn json_len_is_the_length_of_the_json_text() {
        let value = serde_json::json!({"a": [1, "two", null], "b": "x".repeat(1000)});
        assert_eq!(
            json_len(&value),
            serde_json::to_vec(&value).unwrap().len() as u64
        );
    }
}
