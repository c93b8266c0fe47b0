//! Deploys as revisions: a change that asks for nothing new serves at once and keeps the tool
//! listed; one that asks for more waits for the admin while the serving revision serves on;
//! kept revisions can be listed, read with their diff, and rolled back to; a deploy made on a
//! revision the endpoint has moved on from is refused unless forced.

use serde_json::{json, Value};

use crate::util::{assert_error, As, TestServer};

/// A counter whose answer names its version, so a call shows which revision served it.
fn counter_source(version: &str) -> String {
    format!(
        "export default async (req, ctx) => {{ const n = ((await ctx.kv.get('n')) ?? 0) + 1; \
         await ctx.kv.set('n', n); return {{ n, version: '{version}' }}; }};"
    )
}

async fn call(server: &TestServer, slug: &str) -> Value {
    let (status, body) = server.post(&format!("/tools/{slug}"), &json!({})).await;
    assert_eq!(status, 200, "{body}");
    body
}

/// The count and version a live call of the counter answers.
async fn served(server: &TestServer, slug: &str) -> (u64, String) {
    let answer = call(server, slug).await;
    (
        answer["n"].as_u64().unwrap(),
        answer["version"].as_str().unwrap().to_string(),
    )
}

async fn listed(server: &TestServer, slug: &str) -> bool {
    let (status, catalog) = server.get("/ai/endpoints").await;
    assert_eq!(status, 200, "{catalog}");
    catalog["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["slug"] == slug)
}

async fn revisions(server: &TestServer, who: As<'_>, slug: &str) -> Value {
    let path = format!("/ai/endpoints/{slug}/revisions");
    let (status, body) = server.call("GET", &path, who, None).await;
    assert_eq!(status, 200, "{body}");
    body
}

fn states(list: &Value) -> Vec<(u64, String)> {
    list["revisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["revision"].as_u64().unwrap(),
                r["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

async fn rollback(
    server: &TestServer,
    who: As<'_>,
    slug: &str,
    revision: u64,
) -> (reqwest::StatusCode, Value) {
    let path = format!("/ai/endpoints/{slug}/rollback");
    let body = json!({ "revision": revision });
    server.call("POST", &path, who, Some(&body)).await
}

#[tokio::test]
async fn a_deploy_never_takes_the_serving_revision_offline() {
    let server = TestServer::start().await;
    let create = json!({
        "slug": "live-counter", "title": "Counter", "description": "Counts its calls.",
        "priceUsd": 0, "source": counter_source("v1"), "capabilities": {"kv": true},
        "safetyAttestation": {"accepted": true},
    });
    let (key, created) = server.builder_with("Live Co", &create).await;
    let owner = As::Builder(&key);
    assert_eq!(created["manage"]["revision"], 1, "{created}");
    server.grant("live-counter", json!({"kv": true})).await;
    assert_eq!(call(&server, "live-counter").await["n"], 1);

    // A new source that asks for nothing new serves at once: no grant, still listed.
    let deployed = server
        .patch(
            owner,
            "live-counter",
            &json!({"source": counter_source("v2"), "baseRevision": 1}),
        )
        .await;
    assert_eq!(deployed["endpoint"]["status"], "active", "{deployed}");
    assert_eq!(deployed["manage"]["revision"], 2);
    assert_eq!(deployed["manage"]["pendingRevision"], Value::Null);
    assert_eq!(deployed["manage"]["capabilityGrant"]["state"], "granted");
    assert!(listed(&server, "live-counter").await);
    assert_eq!(served(&server, "live-counter").await, (2, "v2".into()));

    // One that asks for more waits for the admin; revision 2 serves on, listed.
    let waiting = server
        .patch(
            owner,
            "live-counter",
            &json!({
                "source": counter_source("v3"),
                "capabilities": {"kv": true, "fetch": true},
                "allowedHosts": ["api.example.com"],
                "baseRevision": 2,
            }),
        )
        .await;
    assert_eq!(waiting["endpoint"]["status"], "active", "{waiting}");
    assert_eq!(waiting["manage"]["revision"], 2);
    assert_eq!(waiting["manage"]["pendingRevision"], 3);
    assert_eq!(waiting["manage"]["latestRevision"], 3);
    let pending = &waiting["manage"]["capabilityGrant"]["pendingRevision"];
    assert_eq!(pending["state"], "pending", "{waiting}");
    assert_eq!(pending["missing"], json!(["fetch"]));
    // The serving revision's content is still what the record shows.
    assert_eq!(waiting["manage"]["allowedHosts"], Value::Null);
    assert!(listed(&server, "live-counter").await);
    assert_eq!(served(&server, "live-counter").await, (3, "v2".into()));
    let requested = server
        .call("GET", "/ai/builders/events?since=1h", owner, None)
        .await
        .1["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "capabilities_requested")
        .cloned()
        .unwrap();
    assert_eq!(requested["data"]["revision"], 3, "{requested}");
    assert_eq!(requested["data"]["missing"], json!(["fetch"]));

    // Its owner can try it first: a test call of revision 3 (on the endpoint's data, with
    // only what the endpoint was granted); live calls still get revision 2.
    let (status, marked, tried) = crate::test_calls::post(
        &server,
        "/tools/live-counter",
        &[("x-builder-key", &key), ("x-toolhost-revision", "3")],
        json!({}),
    )
    .await;
    assert_eq!(status, 200, "{tried}");
    assert_eq!((&tried["n"], &tried["version"]), (&json!(4), &json!("v3")));
    assert!(marked, "a test call's answer says so");
    assert_eq!(call(&server, "live-counter").await["version"], "v2");
    let (_, stranger) = server.builder("Stranger").await;
    for (headers, status, code) in [
        (
            vec![
                ("x-builder-key", stranger.as_str()),
                ("x-toolhost-revision", "3"),
            ],
            403,
            "test_call_not_allowed",
        ),
        (
            vec![
                ("x-builder-key", key.as_str()),
                ("x-toolhost-revision", "three"),
            ],
            400,
            "invalid_revision_header",
        ),
        (
            vec![
                ("x-builder-key", key.as_str()),
                ("x-toolhost-revision", "99"),
            ],
            404,
            "revision_not_found",
        ),
    ] {
        let (got, _, body) =
            crate::test_calls::post(&server, "/tools/live-counter", &headers, json!({})).await;
        assert_error(got, &body, status, code);
    }

    // The admin sees what it would grant: the diff against the serving source and the hosts.
    let (status, queue) = server
        .call("GET", "/ai/admin/grants", As::Admin, None)
        .await;
    assert_eq!(status, 200, "{queue}");
    let item = &queue["endpoints"][0];
    assert_eq!(item["endpoint"]["slug"], "live-counter", "{queue}");
    let detail = &item["pendingRevision"];
    assert_eq!(detail["revision"], 3, "{item}");
    assert_eq!(detail["asks"], json!(["fetch"]));
    assert_eq!(detail["allowedHosts"], json!(["api.example.com"]));
    let diff = detail["sourceDiff"].as_str().unwrap();
    assert!(
        diff.contains("-export default") && diff.contains("version: 'v2'"),
        "{diff}"
    );
    assert!(
        diff.contains("+export default") && diff.contains("version: 'v3'"),
        "{diff}"
    );
    assert!(diff.contains("revision 2 (serving)"), "{diff}");

    // The owner lists the kept revisions; others may not.
    let list = revisions(&server, owner, "live-counter").await;
    assert_eq!(
        states(&list),
        [
            (3, "pending".to_string()),
            (2, "serving".to_string()),
            (1, "kept".to_string())
        ]
    );
    assert_eq!(list["revisions"][0]["basedOn"], 2);
    assert_eq!(list["revisions"][0]["author"], "owner");
    let (status, body) = server
        .call(
            "GET",
            "/ai/endpoints/live-counter/revisions",
            As::Builder(&stranger),
            None,
        )
        .await;
    assert_error(status, &body, 403, "not_owner");
    let (status, body) = server
        .call(
            "GET",
            "/ai/endpoints/live-counter/revisions/1",
            As::Nobody,
            None,
        )
        .await;
    assert_eq!(status, 401, "{body}");

    // The grant makes revision 3 serve.
    let (status, granted) = server
        .call(
            "POST",
            "/ai/admin/endpoints/live-counter/grant",
            As::Admin,
            Some(&json!({"decision": "grant"})),
        )
        .await;
    assert_eq!(status, 200, "{granted}");
    assert_eq!(granted["manage"]["revision"], 3);
    assert_eq!(granted["manage"]["pendingRevision"], Value::Null);
    assert_eq!(
        granted["manage"]["allowedHosts"],
        json!(["api.example.com"])
    );
    assert_eq!(call(&server, "live-counter").await["version"], "v3");

    // Rolling back to revision 1 is at once: it asks for nothing the endpoint does not hold.
    let (status, rolled) = rollback(&server, owner, "live-counter", 1).await;
    assert_eq!(status, 200, "{rolled}");
    assert_eq!(rolled["manage"]["revision"], 1);
    assert_eq!(rolled["manage"]["latestRevision"], 3);
    assert_eq!(rolled["endpoint"]["status"], "active");
    assert_eq!(served(&server, "live-counter").await, (7, "v1".into()));
    // Back to 3 (it needs `fetch`, which the endpoint still holds): at once too.
    let (status, rolled) = rollback(&server, owner, "live-counter", 3).await;
    assert_eq!(
        (status.as_u16(), &rolled["manage"]["revision"]),
        (200, &json!(3))
    );
    let (status, rolled) = rollback(&server, owner, "live-counter", 1).await;
    assert_eq!(
        (status.as_u16(), &rolled["manage"]["revision"]),
        (200, &json!(1))
    );
    let kinds = server.event_kinds(owner, "since=1h").await;
    assert!(
        kinds.iter().any(|k| k == "endpoint_rolled_back"),
        "{kinds:?}"
    );

    // Bad input changes nothing: a revision that is not kept, a stale deploy.
    let (status, body) = rollback(&server, owner, "live-counter", 99).await;
    assert_error(status, &body, 404, "revision_not_found");
    assert_eq!(body["error"]["details"]["kept"], json!([3, 2, 1]));
    let (status, body) = server
        .call("GET", "/ai/endpoints/live-counter/revisions/0", owner, None)
        .await;
    assert_error(status, &body, 404, "revision_not_found");
    let (status, body) = server
        .call(
            "GET",
            "/ai/endpoints/live-counter/revisions/-1",
            owner,
            None,
        )
        .await;
    assert_error(status, &body, 404, "revision_not_found");
    let (status, body) = server
        .call(
            "POST",
            "/ai/endpoints/live-counter/rollback",
            owner,
            Some(&json!({"revision": "two"})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/live-counter",
            owner,
            Some(&json!({"priceUsd": 0.01, "baseRevision": 3})),
        )
        .await;
    assert_error(status, &body, 409, "revision_conflict");
    assert_eq!(body["error"]["details"]["servingRevision"], 1, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("toolhost pull"),
        "{body}"
    );
    let list = revisions(&server, owner, "live-counter").await;
    assert_eq!(
        (list["latest"].clone(), list["serving"].clone()),
        (json!(3), json!(1))
    );
    let (status, body) = server.get("/ai/endpoints/live-counter").await;
    assert_eq!(status, 200);
    assert_eq!(body["endpoint"]["priceUsd"], 0, "{body}");
    // Forced, it deploys on what serves (revision 1).
    let forced = server
        .patch(
            owner,
            "live-counter",
            &json!({"priceUsd": 0.01, "baseRevision": 3, "force": true}),
        )
        .await;
    assert_eq!(forced["manage"]["revision"], 4, "{forced}");
    let (status, four) = server
        .call("GET", "/ai/endpoints/live-counter/revisions/4", owner, None)
        .await;
    assert_eq!(status, 200, "{four}");
    assert_eq!(four["basedOn"], 1);
    assert_eq!(four["fields"], json!(["priceUsd"]));
    assert_eq!(four["content"]["source"], json!(counter_source("v1")));
    assert_eq!(four["sourceDiff"], "");
}

/// A grant, limits and a pause are not deploys; the newest 20 revisions are kept.
#[tokio::test]
async fn only_deploys_make_revisions_and_twenty_are_kept() {
    let server = TestServer::start().await;
    let create = json!({
        "slug": "many", "title": "Many 0", "description": "d", "priceUsd": 0,
        "response": {"ok": true}, "safetyAttestation": {"accepted": true},
    });
    let (key, _) = server.builder_with("Many Co", &create).await;
    let owner = As::Builder(&key);
    let paused = server
        .patch(owner, "many", &json!({"status": "paused"}))
        .await;
    assert_eq!(paused["manage"]["revision"], 1, "{paused}");
    let limited = server
        .patch(
            As::Admin,
            "many",
            &json!({"limits": {"memoryMb": 64, "timeoutMs": 500}}),
        )
        .await;
    assert_eq!(limited["manage"]["latestRevision"], 1, "{limited}");
    // Saved again as it is, nothing is written: no new updatedAt, no event.
    let events = server.event_kinds(owner, "since=1h").await.len();
    let again = server
        .patch(
            As::Admin,
            "many",
            &json!({"limits": {"memoryMb": 64, "timeoutMs": 500}}),
        )
        .await;
    assert_eq!(
        again["endpoint"]["updatedAt"],
        limited["endpoint"]["updatedAt"]
    );
    assert_eq!(server.event_kinds(owner, "since=1h").await.len(), events);
    // Only what a revision covers is listed as what it changed (files are the endpoint's).
    let with_file = server
        .patch(
            owner,
            "many",
            &json!({"description": "d2", "files": {"a.txt": "A"}}),
        )
        .await;
    assert_eq!(with_file["manage"]["revision"], 2, "{with_file}");
    let (_, two) = server
        .call("GET", "/ai/endpoints/many/revisions/2", owner, None)
        .await;
    assert_eq!(two["fields"], json!(["description"]), "{two}");
    for n in 2..=23 {
        let body = server
            .patch(owner, "many", &json!({"title": format!("Many {n}")}))
            .await;
        assert_eq!(body["manage"]["revision"], n + 1);
    }
    let list = revisions(&server, owner, "many").await;
    let numbers: Vec<u64> = states(&list).into_iter().map(|(n, _)| n).collect();
    assert_eq!(numbers, (5..=24).rev().collect::<Vec<_>>());
    let (status, body) = server
        .call("GET", "/ai/endpoints/many/revisions/4", owner, None)
        .await;
    assert_error(status, &body, 404, "revision_not_found");
    let (status, rolled) = rollback(&server, owner, "many", 5).await;
    assert_eq!(status, 200, "{rolled}");
    assert_eq!(rolled["endpoint"]["title"], "Many 4");
    // Deleted, its revisions go with it; the slug's next owner starts at revision 1.
    let (status, _) = server
        .call("DELETE", "/ai/endpoints/many", owner, None)
        .await;
    assert_eq!(status, 200);
    let recreated = server.create(owner, &create).await;
    assert_eq!(recreated["manage"]["revision"], 1);
    let list = revisions(&server, owner, "many").await;
    assert_eq!(states(&list), [(1, "serving".to_string())]);
}

/// Deploys under paid load, some rolled out to half the payers and promoted or ended: every
/// paid call is answered by one revision or the next, each charged once with its own receipt,
/// and the sales the owner sees are exactly the calls answered; a payment sent again is
/// refused, not charged twice.
#[tokio::test]
async fn a_deploy_under_paid_load_loses_no_call_and_charges_none_twice() {
    let server = TestServer::start().await;
    let source = |version: u32| {
        format!("export default async (req) => ({{ version: {version}, n: req.input.n }});")
    };
    let create = json!({
        "slug": "paid-live", "title": "Paid live", "description": "Says its version.",
        "priceUsd": 0.01, "source": source(1),
        "inputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "safetyAttestation": {"accepted": true},
    });
    let (key, _) = server.builder_with("Paid Live Co", &create).await;
    let required = crate::payments::ask(&server, "/tools/paid-live").await;
    const CALLS: usize = 48;
    const DEPLOYS: u32 = 6;
    let headers: Vec<_> = (0..CALLS)
        .map(|_| {
            let signer = alloy_signer_local::PrivateKeySigner::random();
            crate::payments::pay(&signer, &required, 2, |_| {})
        })
        .collect();
    // How many deploys have finished: the calls go in groups, one after each deploy (the first
    // before any), each group's calls 15 ms apart, so they span the deploys however slowly a
    // loaded machine deploys, and never all at once.
    let (deployed_tx, deployed_rx) = tokio::sync::watch::channel(0u32);
    let per_deploy = CALLS / DEPLOYS as usize;
    let calls = futures::future::join_all(headers.iter().enumerate().map(|(n, header)| {
        let server = &server;
        let mut deployed = deployed_rx.clone();
        async move {
            let share = (n / per_deploy) as u32;
            deployed.wait_for(|done| *done >= share).await.unwrap();
            let stagger = 15 * (n % per_deploy) as u64;
            tokio::time::sleep(std::time::Duration::from_millis(stagger)).await;
            crate::util::post_paid(server, "/tools/paid-live", header, json!({ "n": n })).await
        }
    }));
    // A deploy the builder's busy isolates refuse (429, retry after 1 s) is sent again, as a
    // client honouring the answer would.
    let deploy = |body: Value| {
        let server = &server;
        let key = &key;
        async move {
            for _ in 0..10 {
                let (status, answer) = server
                    .call(
                        "PATCH",
                        "/ai/endpoints/paid-live",
                        As::Builder(key),
                        Some(&body),
                    )
                    .await;
                if status != 429 {
                    assert_eq!(status, 200, "{answer}");
                    return answer;
                }
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
            panic!("the deploy was refused as overloaded ten times");
        }
    };
    let deploys = async {
        for version in 2..=DEPLOYS + 1 {
            tokio::time::sleep(std::time::Duration::from_millis(90)).await;
            // Two go out to half the payers first; one of them is promoted, the other ended
            // by the whole deploy after it.
            let rolled_out = version == 3 || version == 5;
            let mut body = json!({ "source": source(version) });
            if rolled_out {
                body["rolloutShare"] = json!(50);
            }
            let deployed = deploy(body).await;
            assert_eq!(
                deployed["manage"]["latestRevision"],
                u64::from(version),
                "{deployed}"
            );
            assert_eq!(deployed["manage"]["rollout"].is_null(), !rolled_out);
            if version == 5 {
                tokio::time::sleep(std::time::Duration::from_millis(45)).await;
                let path = "/ai/endpoints/paid-live/rollout/promote";
                let (status, promoted) = server.call("POST", path, As::Builder(&key), None).await;
                assert_eq!(status, 200, "{promoted}");
                assert_eq!(promoted["manage"]["revision"], 5, "{promoted}");
            }
            deployed_tx.send_replace(version - 1);
        }
    };
    let (answers, ()) = tokio::join!(calls, deploys);
    let mut receipts = std::collections::BTreeSet::new();
    let mut versions = std::collections::BTreeSet::new();
    for (n, (status, _, body)) in answers.iter().enumerate() {
        assert_eq!(status.as_u16(), 200, "call {n}: {body}");
        assert_eq!(body["n"], n, "{body}");
        versions.insert(body["version"].as_u64().unwrap());
        let receipt = body["receipt"]["receiptId"].as_str().unwrap().to_string();
        assert!(receipts.insert(receipt), "a receipt per call: {body}");
    }
    assert!(
        versions.len() > 1,
        "the calls spanned deploys: {versions:?}"
    );
    let (status, revenue) = server
        .call(
            "GET",
            "/ai/builders/revenue?since=1h",
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(status, 200, "{revenue}");
    assert_eq!(
        revenue["revenue"]["count"], CALLS,
        "one sale per answered call: {revenue}"
    );
    // The same payment again is refused, and charges nothing.
    let (status, _, body) =
        crate::util::post_paid(&server, "/tools/paid-live", &headers[0], json!({"n": 0})).await;
    assert_eq!(status, 402, "{body}");
    let (_, revenue) = server
        .call(
            "GET",
            "/ai/builders/revenue?since=1h",
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(revenue["revenue"]["count"], CALLS);
    // After the last deploy, the last revision answers.
    let required = crate::payments::ask(&server, "/tools/paid-live").await;
    let header = crate::payments::pay(
        &alloy_signer_local::PrivateKeySigner::random(),
        &required,
        2,
        |_| {},
    );
    let (_, _, body) =
        crate::util::post_paid(&server, "/tools/paid-live", &header, json!({"n": 1})).await;
    assert_eq!(body["version"], DEPLOYS + 1, "{body}");
}

/// A test call of another revision runs in isolates of its own: the serving revision's warm
/// isolate (here, its module state) is still there for the next live call.
#[tokio::test]
async fn trying_a_revision_leaves_the_serving_one_warm() {
    let server = TestServer::start_with(|c| c.runtime.pool.instances_per_endpoint = 1).await;
    let source = |version: &str| {
        format!("let calls = 0; export default async () => ({{ version: '{version}', calls: ++calls }});")
    };
    let create = json!({
        "slug": "warm", "title": "Warm", "description": "Counts calls in its isolate.",
        "priceUsd": 0, "source": source("v1"), "safetyAttestation": {"accepted": true},
    });
    let (key, _) = server.builder_with("Warm Co", &create).await;
    server
        .patch(As::Builder(&key), "warm", &json!({"source": source("v2")}))
        .await;
    assert_eq!(
        call(&server, "warm").await,
        json!({"version": "v2", "calls": 1})
    );
    for calls in 1..=2 {
        let (status, _, tried) = crate::test_calls::post(
            &server,
            "/tools/warm",
            &[("x-builder-key", &key), ("x-toolhost-revision", "1")],
            json!({}),
        )
        .await;
        assert_eq!(status, 200, "{tried}");
        assert_eq!(tried, json!({"version": "v1", "calls": calls}));
    }
    assert_eq!(
        call(&server, "warm").await,
        json!({"version": "v2", "calls": 2})
    );
}
