//! `ctx` operations ([`HostOp`]) as they cross from a worker process to the server.
//!
//! A worker is not trusted: its engine may be compromised. So the server checks every
//! operation again as if the worker's own checks had never run: the capability against the
//! endpoint code the server sent (never what the worker claims), keys, values, paths, URLs,
//! headers and timeouts with the same functions the ops use. A refusal reaches the handler with
//! the code its own op would have given (`capability_denied`, `invalid_argument`, `too_large`).

use crate::ops::{fetch, http, kv, Capability, OpError};
use crate::paths::{normalize_prefix, normalize_with_limit};
use crate::{EndpointCode, HostOp, PoolConfig};

impl HostOp {
    fn capability(&self) -> Capability {
        match self {
            HostOp::KvGet { .. }
            | HostOp::KvGetEntry { .. }
            | HostOp::KvCommit { .. }
            | HostOp::KvSet { .. }
            | HostOp::KvDelete { .. }
            | HostOp::KvList { .. } => Capability::Kv,
            HostOp::FilesRead { .. }
            | HostOp::FilesWrite { .. }
            | HostOp::FilesList { .. }
            | HostOp::FilesDelete { .. } => Capability::Files,
            HostOp::HttpGetJson { .. } => Capability::HttpGetJson,
            HostOp::FetchStart { .. } | HostOp::FetchRead { .. } | HostOp::FetchCancel { .. } => {
                Capability::Fetch
            }
        }
    }

    /// The server's check: the operation as the endpoint `code` may make it (paths
    /// normalized, list limits and timeouts clamped), or the refusal.
    pub(crate) fn checked(self, code: &EndpointCode, config: &PoolConfig) -> Result<Self, OpError> {
        let capability = self.capability();
        if !capability.granted(&code.capabilities) {
            return Err(OpError::CapabilityDenied(capability.name()));
        }
        let storage = &config.storage;
        let path = |path: &str| {
            normalize_with_limit(path, storage.max_path_bytes)
                .map_err(|err| OpError::InvalidArgument(format!("invalid file path: {err}")))
        };
        Ok(match self {
            HostOp::KvGet { key } => {
                kv::check_key(&key, storage)?;
                HostOp::KvGet { key }
            }
            HostOp::KvSet {
                key,
                value,
                ttl_seconds,
            } => {
                kv::check_key(&key, storage)?;
                kv::check_value_size(&value, storage)?;
                kv::check_ttl(ttl_seconds)?;
                HostOp::KvSet {
                    key,
                    value,
                    ttl_seconds,
                }
            }
            HostOp::KvGetEntry { key } => {
                kv::check_key(&key, storage)?;
                HostOp::KvGetEntry { key }
            }
            HostOp::KvCommit { atomic } => {
                kv::check_atomic(&atomic, storage)?;
                HostOp::KvCommit { atomic }
            }
            HostOp::KvDelete { key } => {
                kv::check_key(&key, storage)?;
                HostOp::KvDelete { key }
            }
            HostOp::KvList {
                prefix,
                limit,
                cursor,
            } => {
                if prefix.len() > storage.max_key_bytes {
                    return Err(OpError::TooLarge(format!(
                        "kv prefix is longer than {} bytes",
                        storage.max_key_bytes
                    )));
                }
                HostOp::KvList {
                    prefix,
                    limit: limit.clamp(1, storage.max_list_limit),
                    cursor,
                }
            }
            HostOp::FilesRead { path: p } => HostOp::FilesRead { path: path(&p)? },
            HostOp::FilesWrite { path: p, data } => {
                if data.len() > storage.max_file_bytes {
                    return Err(OpError::TooLarge(format!(
                        "file is larger than {} bytes",
                        storage.max_file_bytes
                    )));
                }
                HostOp::FilesWrite {
                    path: path(&p)?,
                    data,
                }
            }
            HostOp::FilesList { prefix } => HostOp::FilesList {
                prefix: normalize_prefix(&prefix, storage.max_path_bytes).map_err(|err| {
                    OpError::InvalidArgument(format!("invalid file prefix: {err}"))
                })?,
            },
            HostOp::FilesDelete { path: p } => HostOp::FilesDelete { path: path(&p)? },
            HostOp::HttpGetJson {
                url,
                headers,
                timeout,
            } => {
                http::check_url(&url)?;
                http::check_headers(&headers)?;
                let limit = code.limits.unwrap_or(config.default_limits).timeout;
                HostOp::HttpGetJson {
                    url,
                    headers,
                    timeout: timeout.min(config.max_http_timeout).min(limit),
                }
            }
            HostOp::FetchStart { mut request } => {
                fetch::check_request(&request, &config.fetch)?;
                let limit = code.limits.unwrap_or(config.default_limits).timeout;
                request.timeout = request.timeout.min(limit);
                request.max_response_bytes = request
                    .max_response_bytes
                    .min(config.fetch.max_response_body_bytes);
                HostOp::FetchStart { request }
            }
            // The host answers only for bodies this endpoint started.
            op @ (HostOp::FetchRead { .. } | HostOp::FetchCancel { .. }) => op,
        })
    }
}

pub(crate) mod base64_bytes {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        decode::<D>(&String::deserialize(d)?)
    }

    pub(crate) fn decode<'de, D: Deserializer<'de>>(text: &str) -> Result<Vec<u8>, D::Error> {
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

pub(crate) mod base64_opt_bytes {
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        bytes: &Option<Vec<u8>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(bytes) => super::base64_bytes::serialize(bytes, s),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Vec<u8>>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| super::base64_bytes::decode::<D>(&text))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{Capabilities, FetchRequest, HostAnswer};

    fn code(capabilities: Capabilities) -> EndpointCode {
        EndpointCode {
            id: "ep_a".into(),
            slug: "a".into(),
            version: "1".into(),
            source: String::new(),
            capabilities,
            env: Default::default(),
            limits: None,
            owner: None,
        }
    }

    #[test]
    fn the_server_checks_what_the_worker_asks() {
        let config = PoolConfig::default();
        let none = code(Capabilities::default());
        let kv = code(Capabilities {
            kv: true,
            files: true,
            ..Capabilities::default()
        });
        let get = || HostOp::KvGet { key: "k".into() };
        let err = get().checked(&none, &config).unwrap_err();
        assert!(matches!(err, OpError::CapabilityDenied("kv")));
        assert!(get().checked(&kv, &config).is_ok());
        let long = HostOp::KvGet {
            key: "k".repeat(10_000),
        };
        assert!(matches!(
            long.checked(&kv, &config),
            Err(OpError::TooLarge(_))
        ));
        let escape = HostOp::FilesRead {
            path: "../other/secret".into(),
        };
        assert!(matches!(
            escape.checked(&kv, &config),
            Err(OpError::InvalidArgument(_))
        ));
        let list = HostOp::KvList {
            prefix: String::new(),
            limit: 1_000_000,
            cursor: None,
        };
        let HostOp::KvList { limit, .. } = list.checked(&kv, &config).unwrap() else {
            unreachable!()
        };
        assert_eq!(limit, config.storage.max_list_limit);
        let http = HostOp::HttpGetJson {
            url: "https://example.com".into(),
            headers: vec![],
            timeout: Duration::from_secs(1),
        };
        assert!(matches!(
            http.checked(&kv, &config),
            Err(OpError::CapabilityDenied("httpGetJson"))
        ));
        let start = |url: &str, headers: Vec<(String, String)>| HostOp::FetchStart {
            request: FetchRequest {
                method: "POST".into(),
                url: url.into(),
                headers,
                body: Some(vec![1, 2, 3]),
                follow_redirects: true,
                timeout: Duration::from_secs(3600),
                max_response_bytes: usize::MAX,
            },
        };
        assert!(matches!(
            start("https://example.com/", vec![]).checked(&kv, &config),
            Err(OpError::CapabilityDenied("fetch"))
        ));
        let fetch = code(Capabilities {
            fetch: true,
            ..Capabilities::default()
        });
        let HostOp::FetchStart { request } = start("https://example.com/", vec![])
            .checked(&fetch, &config)
            .unwrap()
        else {
            unreachable!()
        };
        assert_eq!(request.timeout, config.default_limits.timeout);
        assert_eq!(
            request.max_response_bytes,
            config.fetch.max_response_body_bytes
        );
        for refused in [
            start("https://u:p@example.com/", vec![]),
            start("https://example.com/", vec![("Host".into(), "x".into())]),
        ] {
            assert!(matches!(
                refused.checked(&fetch, &config),
                Err(OpError::InvalidArgument(_))
            ));
        }
        assert!(matches!(
            HostOp::FetchRead { id: 1 }.checked(&kv, &config),
            Err(OpError::CapabilityDenied("fetch"))
        ));
    }

    /// A forged commit is checked like the op checks it: its size, keys, versionstamps and
    /// amounts, and the capability.
    #[test]
    fn the_server_checks_a_workers_atomic() {
        use crate::{KvAtomic, KvCheck, KvMutation};
        let config = PoolConfig::default();
        let kv = code(Capabilities {
            kv: true,
            ..Capabilities::default()
        });
        let commit = |checks: Vec<KvCheck>, mutations: Vec<KvMutation>| HostOp::KvCommit {
            atomic: KvAtomic { checks, mutations },
        };
        let sum = |n| KvMutation::Sum { key: "n".into(), n };
        assert!(commit(vec![], vec![sum(1)]).checked(&kv, &config).is_ok());
        let denied = commit(vec![], vec![sum(1)]).checked(&code(Capabilities::default()), &config);
        assert!(matches!(denied, Err(OpError::CapabilityDenied("kv"))));
        let many = (0..=config.storage.max_atomic_ops as i64)
            .map(sum)
            .collect();
        assert!(matches!(
            commit(vec![], many).checked(&kv, &config),
            Err(OpError::TooLarge(_))
        ));
        let unsafe_sum = commit(vec![], vec![sum(crate::MAX_SAFE_INTEGER + 1)]);
        assert!(matches!(
            unsafe_sum.checked(&kv, &config),
            Err(OpError::InvalidArgument(_))
        ));
        let forged = KvCheck {
            key: "n".into(),
            versionstamp: Some("' OR 1=1 --".into()),
        };
        assert!(matches!(
            commit(vec![forged], vec![]).checked(&kv, &config),
            Err(OpError::InvalidArgument(_))
        ));
        let big = KvMutation::Set {
            key: "v".into(),
            value: serde_json::Value::from("x".repeat(config.storage.max_value_bytes)),
            ttl_seconds: None,
        };
        assert!(matches!(
            commit(vec![], vec![big]).checked(&kv, &config),
            Err(OpError::TooLarge(_))
        ));
    }

    #[test]
    fn file_bytes_travel_as_base64() {
        let op = HostOp::FilesWrite {
            path: "a.txt".into(),
            data: vec![0, 159, 146, 150],
        };
        let json = serde_json::to_string(&op).unwrap();
        assert!(json.contains("AJ+Slg=="), "{json}");
        let back: HostOp = serde_json::from_str(&json).unwrap();
        assert!(matches!(back, HostOp::FilesWrite { data, .. } if data == [0, 159, 146, 150]));
        let answer: HostAnswer =
            serde_json::from_str(&serde_json::to_string(&HostAnswer::File(None)).unwrap()).unwrap();
        assert!(matches!(answer, HostAnswer::File(None)));
    }
}
