//! A facilitator reached over the standard HTTP API.
//!
//! `POST {url}/verify` and `POST {url}/settle` take `{x402Version, paymentPayload,
//! paymentRequirements}` (requirements in the payload's version) and answer
//! `{isValid, invalidReason?, payer?}` and `{success, errorReason?, transaction, network, payer}`.
//! The URL is operator configuration, not caller input, so it is reached directly rather than
//! through the SSRF-guarded client; every request carries the configured credentials
//! ([`super::credentials`]), and a redirect is never followed, so they reach that address only.
//!
//! `GET {url}/supported` (`{kinds: [{x402Version, scheme, network}], extensions, signers}`) is
//! read at start-up and every [`RemoteConfig::supported_refresh`] after: start-up offers only
//! the networks it names, and toolhost's own `/x402/supported` answers from what was read.

use std::sync::RwLock;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::FutureExt;
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::{json, Value};

use super::credentials::Credentials;
use super::{Facilitator, SettleJournal, Settlement, SettlementStatus, SetupError};
use crate::config::NetworkConfig;
use crate::config::RemoteConfig;
use crate::header::{PaymentPayload, X402Version};
use crate::requirements::{Offer, Pricing};
use crate::verify::{self, unix_now, Verified};
use crate::{PaymentError, Reason};
use toolhost_values::money::Usd;

pub struct RemoteFacilitator {
    base: String,
    client: reqwest::Client,
    credentials: Credentials,
    /// Its last `/supported` answer (`None` until it first gave one): served to callers who
    /// ask, so they cannot make toolhost call the facilitator (and spend its credentials) once
    /// per request.
    supported: RwLock<Option<Value>>,
    /// Bumped each time `/supported` answers other kinds than before (the first answer too).
    epoch: std::sync::atomic::AtomicU64,
    refresh: Duration,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct VerifyAnswer {
    is_valid: bool,
    #[serde(default)]
    invalid_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SettleAnswer {
    success: bool,
    #[serde(default)]
    error_reason: Option<String>,
    #[serde(default)]
    transaction: Option<String>,
}

/// Why a request to the facilitator got no answer to read.
enum Failure {
    Unreachable,
    /// 401 or 403: our credentials (or their absence).
    CredentialsRefused(StatusCode),
    /// A redirect, not followed: credentials are never sent to another address.
    Redirected(StatusCode),
    NotJson,
}

impl Failure {
    fn describe(&self, path: &str) -> String {
        match self {
            Failure::Unreachable => format!("{path} could not be reached"),
            Failure::CredentialsRefused(status) => {
                format!("{path}: the facilitator refused toolhost's credentials ({status})")
            }
            Failure::Redirected(status) => format!(
                "{path}: the facilitator answered with a redirect ({status}), which is not \
                 followed (its credentials go to the configured address only)"
            ),
            Failure::NotJson => format!("{path} answered something that is not its JSON"),
        }
    }
}

impl RemoteFacilitator {
    /// Loads the configured credentials; nothing is sent yet (see [`Facilitator::check`]).
    pub fn new(config: &RemoteConfig) -> Result<Self, SetupError> {
        let credentials = Credentials::load(&config.auth).map_err(SetupError::Credentials)?;
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| SetupError::Facilitator(format!("HTTP client: {e}")))?;
        Ok(Self {
            base: config.url.trim_end_matches('/').to_string(),
            client,
            credentials,
            supported: RwLock::new(None),
            epoch: std::sync::atomic::AtomicU64::new(0),
            refresh: config.supported_refresh,
        })
    }

    /// The request body of `/verify` and `/settle`; `amount`, when given, replaces the
    /// requirement's (an `upto` settlement: what the call cost, x402's settlement override).
    fn body(
        payment: &PaymentPayload,
        offer: &Offer,
        amount: Option<Usd>,
    ) -> Result<Value, PaymentError> {
        let refused = || {
            PaymentError::refused(
                Reason::InvalidNetwork,
                format!("network {:?} is not accepted here", payment.network),
            )
        };
        let requirements = match payment.version {
            X402Version::V2 => {
                serde_json::to_value(&offer.find(&payment.network).ok_or_else(refused)?.1)
            }
            X402Version::V1 => serde_json::to_value(
                offer
                    .v1_accepts()
                    .into_iter()
                    .find(|r| r.network == payment.network)
                    .ok_or_else(refused)?,
            ),
        }
        .map_err(|e| PaymentError::Facilitator(e.to_string()))?;
        let mut requirements = requirements;
        if let Some(amount) = amount {
            requirements["amount"] = json!(amount.units().to_string());
        }
        Ok(json!({
            "x402Version": payment.version.number(),
            "paymentPayload": payment.raw,
            "paymentRequirements": requirements,
        }))
    }

    /// One request with the credentials, its answer's JSON read whatever its status (a
    /// facilitator may refuse a payment with a 400 and its reason).
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Value, Failure> {
        let url = reqwest::Url::parse(&format!("{}{path}", self.base))
            .map_err(|_| Failure::Unreachable)?;
        let headers = self.credentials.headers(&method, &url);
        let mut request = self.client.request(method, url).headers(headers);
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(|_| Failure::Unreachable)?;
        let status = response.status();
        if matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
            tracing::error!(
                path,
                %status,
                credentials = !self.credentials.is_empty(),
                "the x402 facilitator refused toolhost's credentials"
            );
            return Err(Failure::CredentialsRefused(status));
        }
        if status.is_redirection() {
            return Err(Failure::Redirected(status));
        }
        response.json::<Value>().await.map_err(|_| Failure::NotJson)
    }

    async fn post<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        body: &Value,
    ) -> Result<T, PaymentError> {
        let answer = self
            .send(Method::POST, path, Some(body))
            .await
            .map_err(|failure| PaymentError::Facilitator(failure.describe(path)))?;
        serde_json::from_value(answer)
            .map_err(|_| PaymentError::Facilitator(Failure::NotJson.describe(path)))
    }

    /// Reads `/supported` and keeps it.
    async fn read_supported(&self) -> Result<Value, Failure> {
        let answer = self.send(Method::GET, "/supported", None).await?;
        if !answer["kinds"].is_array() {
            return Err(Failure::NotJson);
        }
        let mut kept = self.supported.write().unwrap_or_else(|e| e.into_inner());
        if kept
            .as_ref()
            .is_some_and(|before| before["kinds"] != answer["kinds"])
        {
            tracing::info!(kinds = %answer["kinds"], "the x402 facilitator's supported kinds changed");
        }
        if kept
            .as_ref()
            .is_none_or(|before| before["kinds"] != answer["kinds"])
        {
            self.epoch.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
        *kept = Some(answer.clone());
        Ok(answer)
    }

    fn kept_supported(&self) -> Option<Value> {
        self.supported
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Facilitator for RemoteFacilitator {
    fn verify<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
    ) -> BoxFuture<'a, Result<Verified, PaymentError>> {
        async move {
            let (network, requirement) = verify::terms(payment, offer)?;
            // The facilitator checks the signature; what we need of the payment, and our
            // settle margin, are read here.
            let proof = payment.payload.read(requirement, offer, unix_now())?;
            let answer: VerifyAnswer = self
                .post("/verify", &Self::body(payment, offer, None)?)
                .await?;
            if !answer.is_valid {
                let reason = answer.invalid_reason.unwrap_or_default();
                return Err(PaymentError::refused(
                    Reason::parse(&reason).unwrap_or(Reason::Rejected),
                    format!("the facilitator refused the payment: {reason}"),
                ));
            }
            Ok(Verified::new(network.clone(), requirement.clone(), proof))
        }
        .boxed()
    }

    fn settle<'a>(
        &'a self,
        payment: &'a PaymentPayload,
        offer: &'a Offer,
        _: &'a Verified,
        amount: Usd,
        journal: &'a dyn SettleJournal,
    ) -> BoxFuture<'a, Result<Settlement, PaymentError>> {
        async move {
            let metered = offer.pricing == Pricing::Metered;
            let body = Self::body(payment, offer, metered.then_some(amount))?;
            // The remote facilitator may move the money from here on; the standard API cannot
            // be asked afterwards whether it did, so recovery keeps such a claim.
            journal.before_submit(None).await?;
            let answer: SettleAnswer = self.post("/settle", &body).await?;
            if !answer.success {
                let reason = answer.error_reason.unwrap_or_default();
                return Err(PaymentError::refused(
                    Reason::parse(&reason).unwrap_or(Reason::SettlementFailed),
                    format!("the facilitator could not settle the payment: {reason}"),
                ));
            }
            let transaction = answer.transaction.filter(|t| !t.is_empty());
            Ok(Settlement {
                // The standard `/settle` answers success once the transfer is mined.
                status: if transaction.is_some() {
                    SettlementStatus::Settled
                } else {
                    SettlementStatus::Recorded
                },
                transaction,
                facilitator: "remote",
            })
        }
        .boxed()
    }

    fn supported(&self) -> BoxFuture<'_, Result<Value, PaymentError>> {
        async move {
            match self.kept_supported() {
                Some(kept) => Ok(kept),
                None => self
                    .read_supported()
                    .await
                    .map_err(|failure| PaymentError::Facilitator(failure.describe("/supported"))),
            }
        }
        .boxed()
    }

    /// Reads `/supported` once: credentials refused or a redirect are configuration errors
    /// (nothing would ever settle), so start-up stops; an unreachable facilitator does not stop
    /// it (it may come up later; payments answer 502 until it does).
    fn check(&self) -> BoxFuture<'_, Result<(), SetupError>> {
        async move {
            match self.read_supported().await {
                Ok(_) => Ok(()),
                Err(failure @ (Failure::CredentialsRefused(_) | Failure::Redirected(_))) => {
                    Err(SetupError::Facilitator(failure.describe("/supported")))
                }
                Err(failure) => {
                    tracing::warn!(
                        "the x402 facilitator is not answering yet ({}); trying again every {:?}",
                        failure.describe("/supported"),
                        self.refresh
                    );
                    Ok(())
                }
            }
        }
        .boxed()
    }

    fn refresh_every(&self) -> Option<Duration> {
        Some(self.refresh)
    }

    fn refresh(&self) -> BoxFuture<'_, ()> {
        async move {
            if let Err(failure) = self.read_supported().await {
                tracing::warn!(
                    "the x402 facilitator's supported kinds could not be read again: {}",
                    failure.describe("/supported")
                );
            }
        }
        .boxed()
    }

    /// The `upto` kind's `extra.facilitatorAddress` it reported for `network`.
    fn upto_facilitator(&self, network: &NetworkConfig) -> Option<String> {
        let kept = self.kept_supported()?;
        kept["kinds"].as_array()?.iter().find(|kind| {
            kind["x402Version"] == 2
                && kind["scheme"] == crate::schemes::upto_evm::SCHEME
                && kind["network"] == network.caip2.as_str()
        })?["extra"]["facilitatorAddress"]
            .as_str()
            .map(str::to_string)
    }

    fn epoch(&self) -> u64 {
        self.epoch.load(std::sync::atomic::Ordering::Acquire)
    }

    fn settles(&self, scheme: &str, network: &str) -> Option<bool> {
        let kept = self.kept_supported()?;
        let kinds = kept["kinds"].as_array()?;
        Some(kinds.iter().any(|kind| {
            kind["x402Version"] == 2 && kind["scheme"] == scheme && kind["network"] == network
        }))
    }
}
