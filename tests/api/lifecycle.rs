//! Endpoint create, update, pause/resume, delete, capabilities and limits.

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::util::{assert_error, js_endpoint, static_endpoint, As, TestServer};

fn with(mut body: Value, key: &str, value: Value) -> Value {
    body[key] = value;
    body
}

#[tokio::test]
async fn builder_create_requires_attestation() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Maker").await;
    for attestation in [Value::Null, json!({"accepted": false})] {
        let mut body = static_endpoint("unattested");
        if attestation.is_null() {
            body.as_object_mut().unwrap().remove("safetyAttestation");
        } else {
            body["safetyAttestation"] = attestation;
        }
        let (status, response) = server
            .call(
                "POST",
                "/ai/endpoints/create",
                As::Builder(&key),
                Some(&body),
            )
            .await;
        assert_error(status, &response, 422, "attestation_required");
    }
    // The admin needs none.
    let mut body = static_endpoint("admin-unattested");
    body.as_object_mut().unwrap().remove("safetyAttestation");
    let created = server.create(As::Admin, &body).await;
    assert_eq!(created["endpoint"]["contentSafety"], Value::Null);
}

#[tokio::test]
async fn create_validates_every_field() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Maker").await;
    let b = As::Builder(&key);
    let cases = [
        (
            with(static_endpoint("x"), "slug", json!("ab")),
            422,
            "invalid_field",
        ),
        (
            with(static_endpoint("Upper-Case"), "slug", json!("Upper-Case")),
            422,
            "invalid_field",
        ),
        (
            with(static_endpoint("cheap-one"), "priceUsd", json!(0.0005)),
            422,
            "invalid_field",
        ),
        (
            with(
                static_endpoint("mode-one"),
                "pricingMode",
                json!("fixed_price_success_receipt"),
            ),
            422,
            "invalid_field",
        ),
        (
            with(
                static_endpoint("schema-one"),
                "inputSchema",
                json!({"type": "no-such-type"}),
            ),
            422,
            "invalid_schema",
        ),
        (
            with(static_endpoint("title-one"), "title", json!("")),
            422,
            "invalid_field",
        ),
        (
            with(static_endpoint("env-one"), "env", json!({"1BAD": "x"})),
            422,
            "invalid_field",
        ),
        (
            with(
                static_endpoint("files-one"),
                "files",
                json!({"../etc/passwd": "x"}),
            ),
            422,
            "invalid_field",
        ),
        (
            with(static_endpoint("files-two"), "files", json!({"/abs": "x"})),
            422,
            "invalid_field",
        ),
        (
            with(
                static_endpoint("files-three"),
                "files",
                json!({"a\\b": "x"}),
            ),
            422,
            "invalid_field",
        ),
        (
            with(
                static_endpoint("echo-one"),
                "handlerType",
                json!("receipt_echo"),
            ),
            422,
            "handler_not_allowed",
        ),
        (
            with(
                static_endpoint("limits-one"),
                "limits",
                json!({"memoryMb": 64, "timeoutMs": 1000}),
            ),
            403,
            "admin_only_field",
        ),
        (
            with(static_endpoint("unknown-one"), "surprise", json!(true)),
            422,
            "invalid_body",
        ),
    ];
    for (body, status, code) in cases {
        let (s, response) = server
            .call("POST", "/ai/endpoints/create", b, Some(&body))
            .await;
        assert_error(s, &response, status, code);
    }
    let mut no_source = js_endpoint("js-missing");
    no_source.as_object_mut().unwrap().remove("source");
    let (s, response) = server
        .call("POST", "/ai/endpoints/create", b, Some(&no_source))
        .await;
    assert_error(s, &response, 422, "invalid_field");
    assert_eq!(response["error"]["details"]["field"], "source");
    // A path the sandbox would read under another name is refused with the name to use.
    let odd_path = with(
        static_endpoint("files-four"),
        "files",
        json!({"./data//x.txt": "x"}),
    );
    let (s, response) = server
        .call("POST", "/ai/endpoints/create", b, Some(&odd_path))
        .await;
    assert_error(s, &response, 422, "invalid_field");
    assert_eq!(response["error"]["details"]["field"], "files/./data//x.txt");
    assert!(
        response["error"]["message"]
            .as_str()
            .unwrap()
            .contains(r#""data/x.txt""#),
        "{response}"
    );

    server.create(b, &static_endpoint("taken-slug")).await;
    let (_, other) = server.builder("Other").await;
    let (s, response) = server
        .call(
            "POST",
            "/ai/endpoints/create",
            As::Builder(&other),
            Some(&static_endpoint("taken-slug")),
        )
        .await;
    assert_error(s, &response, 409, "slug_taken");
    let (s, response) = server
        .call(
            "POST",
            "/ai/endpoints/create",
            b,
            Some(&static_endpoint("receipt-echo")),
        )
        .await;
    assert_error(s, &response, 409, "slug_taken");
}

#[tokio::test]
async fn capabilities_start_requested_and_only_the_admin_grants() {
    let server = TestServer::start().await;
    let (key, created) = server
        .builder_with("Maker", &js_endpoint("word-count"))
        .await;
    let record = &created["endpoint"];
    assert_eq!(record["runtime"], "admin_gated_js_request_response_v1");
    assert_eq!(record["pricingMode"], "fixed_price_success_receipt");
    assert_eq!(
        record["capabilities"],
        json!({"kv": false, "files": false, "httpGetJson": false, "fetch": false, "logs": false})
    );
    assert_eq!(created["manage"]["requestedCapabilities"]["kv"], true);
    assert_eq!(
        created["manage"]["files"],
        json!([{"path": "data/stopwords.txt", "bytes": 8}])
    );
    assert_eq!(created["manage"]["revision"], 1);

    let path = "/ai/endpoints/word-count";
    let (status, body) = server
        .call(
            "PATCH",
            path,
            As::Builder(&key),
            Some(&json!({"grantedCapabilities": {"kv": true}})),
        )
        .await;
    assert_error(status, &body, 403, "admin_only_field");
    let (status, body) = server
        .call(
            "PATCH",
            path,
            As::Builder(&key),
            Some(&json!({"limits": {"memoryMb": 64, "timeoutMs": 500}})),
        )
        .await;
    assert_error(status, &body, 403, "admin_only_field");
    let (status, body) = server
        .call(
            "PATCH",
            path,
            As::Admin,
            Some(&json!({"grantedCapabilities": {"logs": true}})),
        )
        .await;
    assert_error(status, &body, 422, "invalid_field");

    let grant = json!({"grantedCapabilities": {"kv": true, "httpGetJson": true}, "limits": {"memoryMb": 64, "timeoutMs": 500}});
    let body = server.patch(As::Admin, "word-count", &grant).await;
    assert_eq!(
        body["endpoint"]["capabilities"],
        json!({"kv": true, "files": false, "httpGetJson": true, "fetch": false, "logs": false})
    );
    assert_eq!(
        body["manage"]["limits"],
        json!({"memoryMb": 64, "timeoutMs": 500})
    );
    // A grant and limits are not deploys: the same revision serves.
    assert_eq!(body["manage"]["revision"], 1);
    let (status, body) = server
        .call(
            "PATCH",
            path,
            As::Admin,
            Some(&json!({"limits": {"memoryMb": 0, "timeoutMs": 500}})),
        )
        .await;
    assert_error(status, &body, 422, "invalid_field");

    // The owner withdrawing a request takes the capability from the handler; the grant is
    // kept, so a rollback to a revision that asked for it serves at once.
    let withdraw = json!({"capabilities": {"kv": true}});
    let body = server
        .patch(As::Builder(&key), "word-count", &withdraw)
        .await;
    assert_eq!(
        body["endpoint"]["capabilities"],
        json!({"kv": true, "files": false, "httpGetJson": false, "fetch": false, "logs": false})
    );
    assert_eq!(body["manage"]["grantedCapabilities"]["httpGetJson"], true);
}

/// A heap limit is accepted only as large as the sandbox can give one isolate of the
/// endpoint: past a builder's heap cap (or, in worker processes, the quarantine worker's
/// budget) a builder's endpoint found no room anywhere and every call answered 429
/// `overloaded` ("retry after 1 s") for ever; past a worker's share of the memory budget an
/// operator's endpoint could not even be created, refused as overloaded too. Both are now
/// refused where they are set, saying the largest, and the largest serves.
#[tokio::test]
async fn heap_limits_the_sandbox_cannot_give_are_refused_where_they_are_set() {
    let mut largest = (0, 0);
    let server = TestServer::start_with(|c| {
        c.runtime.pool.memory_budget_bytes = 512 << 20;
        let (isolation, pool) = (&c.runtime.isolation, &c.runtime.pool);
        largest = (
            isolation.largest_heap(pool, true) >> 20,
            isolation.largest_heap(pool, false) >> 20,
        );
    })
    .await;
    let (builders, operators_largest) = (largest.0 as u32, largest.1 as u32);
    // In worker processes a builder's is the quarantine's budget (half a builder's floor), in
    // process its heap cap; the operator's is the budget (one worker in tests).
    assert!([64, 256].contains(&builders), "{builders}");
    assert_eq!(operators_largest, 512);
    // A free handler asking for nothing, so it serves without a payment or a grant.
    let free = |slug: &str, memory_mb: Option<u32>| {
        let mut body = js_endpoint(slug);
        body["priceUsd"] = json!(0);
        body.as_object_mut().unwrap().remove("pricingMode");
        body["capabilities"] = json!({});
        if let Some(mb) = memory_mb {
            body["limits"] = json!({"memoryMb": mb, "timeoutMs": 1000});
        }
        body
    };
    let refused_saying = |(status, body): (StatusCode, Value), largest: u32| {
        assert_error(status, &body, 422, "invalid_field");
        assert_eq!(body["error"]["details"]["field"], "limits", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("at most {largest} ")),
            "{message}"
        );
    };
    let serves = |(status, body): (StatusCode, Value)| {
        assert_eq!((status.as_u16(), &body), (200, &json!({"words": 1})));
    };

    server.builder_with("Maker", &free("roomy", None)).await;
    let limits = |mb: u32| json!({"limits": {"memoryMb": mb, "timeoutMs": 1000}});
    let path = "/ai/endpoints/roomy";
    let over = limits(builders + 1);
    refused_saying(
        server.call("PATCH", path, As::Admin, Some(&over)).await,
        builders,
    );
    serves(server.post("/tools/roomy", &json!({})).await);
    let body = server.patch(As::Admin, "roomy", &limits(builders)).await;
    assert_eq!(body["manage"]["limits"]["memoryMb"], builders, "{body}");
    serves(server.post("/tools/roomy", &json!({})).await);

    // The operator's endpoints are held to a worker's share of the budget alone.
    let path = "/ai/endpoints/create";
    let over = free("operators", Some(operators_largest + 1));
    refused_saying(
        server.call("POST", path, As::Admin, Some(&over)).await,
        operators_largest,
    );
    let created = server
        .create(As::Admin, &free("operators", Some(operators_largest)))
        .await;
    assert_eq!(created["ok"], true, "{created}");
    serves(server.post("/tools/operators", &json!({})).await);
}

/// `handlerType` may be left out when the body says it: `source` alone is JS, `response` alone
/// a static answer; with both or neither the body must name it.
#[tokio::test]
async fn handler_type_is_implied_by_source_or_response() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Implied").await;
    let without = |mut body: Value| {
        body.as_object_mut().unwrap().remove("handlerType");
        body
    };
    let created = server
        .create(As::Builder(&key), &without(js_endpoint("implied-js")))
        .await;
    assert_eq!(created["endpoint"]["handlerType"], "js_request_response");
    let created = server
        .create(
            As::Builder(&key),
            &without(static_endpoint("implied-static")),
        )
        .await;
    assert_eq!(created["endpoint"]["handlerType"], "static_json");
    let mut neither = without(static_endpoint("implied-none"));
    neither.as_object_mut().unwrap().remove("response");
    let mut both = without(static_endpoint("implied-both"));
    both["source"] = json!("export default () => 1;");
    for body in [neither, both] {
        let (status, refused) = server
            .call(
                "POST",
                "/ai/endpoints/create",
                As::Builder(&key),
                Some(&body),
            )
            .await;
        assert_error(status, &refused, 422, "invalid_field");
        assert_eq!(
            refused["error"]["details"]["field"], "handlerType",
            "{refused}"
        );
    }
}

#[tokio::test]
async fn patch_updates_fields_and_bumps_revision() {
    let server = TestServer::start().await;
    let (key, created) = server
        .builder_with("Maker", &static_endpoint("greeter"))
        .await;
    let before = created["endpoint"]["updatedAt"]
        .as_str()
        .unwrap()
        .to_string();
    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    let patch = json!({
        "title": "Greeter v2", "description": "Now with more hello.", "priceUsd": 0.001,
        "response": {"greeting": "hi"}, "tags": ["hello"], "env": {"LANG": "en"},
        "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        "outputSchema": {"type": "object"}, "files": {"a.txt": "A", "b.txt": "B"},
    });
    let body = server.patch(As::Builder(&key), "greeter", &patch).await;
    let record = &body["endpoint"];
    assert_eq!(record["title"], "Greeter v2");
    assert_eq!(record["priceUsd"].to_string(), "0.001");
    assert_eq!(record["pricingMode"], "fixed_price_success_receipt");
    assert_eq!(record["tags"], json!(["hello"]));
    assert_ne!(record["updatedAt"].as_str().unwrap(), before);
    assert_eq!(body["manage"]["revision"], 2);
    assert_eq!(body["manage"]["env"], json!({"LANG": "en"}));
    let body = server
        .patch(
            As::Builder(&key),
            "greeter",
            &json!({"files": {"a.txt": null}}),
        )
        .await;
    assert_eq!(
        body["manage"]["files"],
        json!([{"path": "b.txt", "bytes": 1}])
    );
    // `env` merges like `files`: a value sets its name, `null` removes it, the rest stays.
    let body = server
        .patch(
            As::Builder(&key),
            "greeter",
            &json!({"env": {"MODE": "fast"}}),
        )
        .await;
    assert_eq!(body["manage"]["env"], json!({"LANG": "en", "MODE": "fast"}));
    let body = server
        .patch(
            As::Builder(&key),
            "greeter",
            &json!({"env": {"LANG": null, "GONE": null}}),
        )
        .await;
    assert_eq!(body["manage"]["env"], json!({"MODE": "fast"}));
    // The outbound allow-list is shown back to its managers once set, and gone once removed.
    assert_eq!(body["manage"]["allowedHosts"], Value::Null);
    let body = server
        .patch(
            As::Builder(&key),
            "greeter",
            &json!({"allowedHosts": ["api.example.com", "*.example.org"]}),
        )
        .await;
    assert_eq!(
        body["manage"]["allowedHosts"],
        json!(["api.example.com", "*.example.org"])
    );
    let body = server
        .patch(As::Builder(&key), "greeter", &json!({"allowedHosts": []}))
        .await;
    assert_eq!(body["manage"]["allowedHosts"], Value::Null);

    for (patch, status, code) in [
        (
            json!({"inputSchema": {"required": "name"}}),
            422,
            "invalid_schema",
        ),
        (json!({"priceUsd": 0.0001}), 422, "invalid_field"),
        (json!({"status": "retired"}), 422, "invalid_body"),
        (json!({"source": "x"}), 422, "invalid_field"),
        (
            json!({"handlerType": "js_request_response"}),
            422,
            "invalid_body",
        ),
    ] {
        let (s, response) = server
            .call(
                "PATCH",
                "/ai/endpoints/greeter",
                As::Builder(&key),
                Some(&patch),
            )
            .await;
        assert_error(s, &response, status, code);
    }
}

#[tokio::test]
async fn paused_endpoints_answer_503_and_resume() {
    let server = TestServer::start().await;
    let (key, _) = server
        .builder_with("Maker", &static_endpoint("pausable"))
        .await;
    let (status, body) = server.post("/tools/pausable", &json!({})).await;
    assert_eq!(
        (status.as_u16(), &body),
        (200, &json!({"greeting": "hello"}))
    );

    let body = server
        .patch(As::Builder(&key), "pausable", &json!({"status": "paused"}))
        .await;
    assert_eq!(body["endpoint"]["status"], "paused");
    let (status, body) = server.post("/tools/pausable", &json!({})).await;
    assert_error(status, &body, 503, "endpoint_paused");
    // Paused endpoints stay listed: the pause is temporary and the record says so.
    let (_, catalog) = server.get("/ai/endpoints").await;
    assert!(catalog["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["slug"] == "pausable" && e["status"] == "paused"));

    server
        .patch(As::Admin, "pausable", &json!({"status": "active"}))
        .await;
    let (status, _) = server.post("/tools/pausable", &json!({})).await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn delete_frees_the_slug_and_drops_secrets_files_and_logs() {
    let server = TestServer::start().await;
    let (_, first) = server.builder("First").await;
    let (_, second) = server.builder("Second").await;
    server
        .create(As::Builder(&first), &js_endpoint("reusable"))
        .await;
    server
        .call(
            "POST",
            "/ai/endpoints/reusable/secrets",
            As::Builder(&first),
            Some(&json!({"set": {"TOKEN": "first-owner-secret"}})),
        )
        .await;

    let (status, body) = server
        .call(
            "DELETE",
            "/ai/endpoints/reusable",
            As::Builder(&first),
            None,
        )
        .await;
    assert_eq!(
        (status.as_u16(), &body),
        (200, &json!({"ok": true, "deleted": "reusable"}))
    );
    let (status, body) = server.get("/ai/endpoints/reusable").await;
    assert_error(status, &body, 404, "endpoint_not_found");
    let (status, _) = server.post("/tools/reusable", &json!({})).await;
    assert_eq!(status, 404);
    let (_, catalog) = server.get("/ai/endpoints").await;
    assert!(!catalog["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["slug"] == "reusable"));

    let mut body = js_endpoint("reusable");
    body.as_object_mut().unwrap().remove("files");
    // The slug stays its former owner's for 30 days: an agent holding its URL must not start
    // paying someone else.
    let (status, refused) = server
        .call(
            "POST",
            "/ai/endpoints/create",
            As::Builder(&second),
            Some(&body),
        )
        .await;
    assert_error(status, &refused, 409, "slug_reserved");
    let until = time::OffsetDateTime::parse(
        refused["error"]["details"]["until"].as_str().unwrap(),
        &time::format_description::well_known::Rfc3339,
    )
    .unwrap();
    let days = (until - time::OffsetDateTime::now_utc()).whole_days();
    assert!((29..=30).contains(&days), "{refused}");
    // Its former owner may take it again, and starts empty.
    let created = server.create(As::Builder(&first), &body).await;
    assert_eq!(
        created["manage"]["secrets"],
        json!([]),
        "a new endpoint inherits no secrets"
    );
    assert_eq!(created["manage"]["files"], json!([]), "nor files");
    let (_, logs) = server
        .call(
            "GET",
            "/ai/endpoints/reusable/logs",
            As::Builder(&first),
            None,
        )
        .await;
    assert_eq!(logs["entries"], json!([]));
    // The other builder can neither delete nor see it.
    let (status, _) = server
        .call(
            "DELETE",
            "/ai/endpoints/reusable",
            As::Builder(&second),
            None,
        )
        .await;
    assert_eq!(status, 403);
}

#[tokio::test]
async fn logs_page_newest_first() {
    let server = TestServer::start().await;
    let (key, _) = server
        .builder_with("Maker", &static_endpoint("logged"))
        .await;
    let (status, body) = server
        .call(
            "GET",
            "/ai/endpoints/logged/logs?limit=10",
            As::Builder(&key),
            None,
        )
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["entries"], json!([]));
    assert_eq!(body["nextCursor"], Value::Null);
    let (status, body) = server
        .call(
            "GET",
            "/ai/endpoints/logged/logs?cursor=../../x",
            As::Builder(&key),
            None,
        )
        .await;
    assert_error(status, &body, 400, "invalid_cursor");
    let (status, body) = server
        .call(
            "GET",
            "/ai/endpoints/logged/logs?limit=1000",
            As::Admin,
            None,
        )
        .await;
    assert_error(status, &body, 400, "invalid_query");
}

#[tokio::test]
async fn uploaded_files_count_toward_the_files_quota() {
    // Room for the seeded endpoints' own files (under 20 kB each), not for two 12 kB uploads.
    let server = TestServer::start_with(|c| c.runtime.quotas.file_bytes = 20_000).await;
    let (_, key) = server.builder("Maker").await;
    let b = As::Builder(&key);
    let big = "x".repeat(12_000);
    let over = with(
        static_endpoint("too-big"),
        "files",
        json!({"a.txt": big, "b.txt": big}),
    );
    let (status, body) = server
        .call("POST", "/ai/endpoints/create", b, Some(&over))
        .await;
    assert_error(status, &body, 422, "invalid_field");
    assert_eq!(body["error"]["details"]["field"], "files");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("quota exceeded"),
        "{body}"
    );
    let (status, _) = server.call("GET", "/ai/endpoints/too-big", b, None).await;
    assert_eq!(status, 404, "nothing was stored");

    let fits = with(static_endpoint("fits"), "files", json!({"a.txt": big}));
    server.create(b, &fits).await;
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/fits",
            b,
            Some(&json!({"title": "Renamed", "files": {"b.txt": big}})),
        )
        .await;
    assert_error(status, &body, 422, "invalid_field");
    let (_, record) = server.call("GET", "/ai/endpoints/fits", b, None).await;
    assert_eq!(
        record["endpoint"]["title"], "Greeting",
        "the PATCH changed nothing"
    );
    assert_eq!(
        record["manage"]["files"],
        json!([{"path": "a.txt", "bytes": 12_000}])
    );
    // Replacing a file frees its old bytes.
    let bigger = "y".repeat(19_000);
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/fits",
            b,
            Some(&json!({"files": {"a.txt": bigger}})),
        )
        .await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn file_bytes_of_all_a_builders_endpoints_have_a_total_that_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // 20 kB per endpoint (room for the seeded endpoints' own files), 30 kB per builder.
    let start = || {
        let data = data.clone();
        TestServer::start_with(move |c| {
            c.data_dir = data;
            c.runtime.quotas.file_bytes = 20_000;
            c.runtime.quotas.builder_file_bytes = 30_000;
        })
    };
    let server = start().await;
    let (_, key) = server.builder("Maker").await;
    let b = As::Builder(&key);
    let twelve = "x".repeat(12_000);
    let endpoint = |slug: &str| with(static_endpoint(slug), "files", json!({"a.txt": twelve}));
    server.create(b, &endpoint("f-a")).await;
    server.create(b, &endpoint("f-b")).await;
    // f-c would be within its own 20 kB, but the builder's 36 kB would pass 30 kB.
    let refused = |status, body: &Value| {
        assert_error(status, body, 422, "invalid_field");
        assert_eq!(body["error"]["details"]["field"], "files");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("builder's total files quota"),
            "{body}"
        );
    };
    let (status, body) = server
        .call("POST", "/ai/endpoints/create", b, Some(&endpoint("f-c")))
        .await;
    refused(status, &body);
    let (status, _) = server.call("GET", "/ai/endpoints/f-c", b, None).await;
    assert_eq!(status, 404, "nothing was stored");
    // The admin's endpoints count toward no builder.
    server.create(As::Admin, &endpoint("admin-files")).await;

    // The total survives a restart.
    server.stop().await;
    let server = start().await;
    let (status, body) = server
        .call("POST", "/ai/endpoints/create", b, Some(&endpoint("f-c")))
        .await;
    refused(status, &body);
    let five = "y".repeat(5_000);
    server
        .patch(b, "f-b", &json!({"files": {"b.txt": five}}))
        .await;
    let (status, body) = server
        .call(
            "PATCH",
            "/ai/endpoints/f-b",
            b,
            Some(&json!({"files": {"c.txt": "z".repeat(2_000)}})),
        )
        .await;
    refused(status, &body);

    // Deleting an endpoint, or a file, frees its bytes (f-b 5 kB and f-c 18 kB in the end).
    let (status, body) = server.call("DELETE", "/ai/endpoints/f-a", b, None).await;
    assert_eq!(status, 200, "{body}");
    server.create(b, &endpoint("f-c")).await;
    server
        .patch(b, "f-b", &json!({"files": {"a.txt": null}}))
        .await;
    server
        .patch(b, "f-c", &json!({"files": {"b.txt": "w".repeat(6_000)}}))
        .await;
}
