use serde_json::{json, Value};

use crate::util::{assert_error, seed_fixture, TestServer};

const SEEDED: [&str; 8] = [
    "x402-readiness-check",
    "receipt-echo",
    "receipt-echo-paid",
    "creator-plan",
    "text-summary",
    "business-lookup",
    "developer-utility",
    "conversion-quote-demo",
];

fn slugs(envelope: &Value) -> Vec<String> {
    envelope["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["slug"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn catalog_envelope_matches_spec_current_form() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/ai/endpoints").await;
    assert_eq!(status, 200);
    assert_eq!(body["ok"], true);
    assert_eq!(body["schema"], "toolhost.x402.hosted-endpoint-catalog.v1");
    assert_eq!(body["dashboard"], server.url("/dashboard"));
    assert_eq!(body["createEndpoint"], server.url("/ai/endpoints/create"));
    let lifecycle = body["lifecycle"].as_object().unwrap();
    for key in [
        "builderRegister",
        "create",
        "inspect",
        "update",
        "pause",
        "resume",
        "delete",
        "logs",
        "secrets",
        "revenue",
        "events",
        "payoutSettings",
        "payoutPackets",
        "contentSafetyPolicy",
    ] {
        assert!(
            lifecycle[key]
                .as_str()
                .is_some_and(|v| v.contains(&server.base)),
            "lifecycle.{key}"
        );
    }
    for key in [
        "register",
        "revenue",
        "events",
        "payoutSettings",
        "payouts",
        "docs",
    ] {
        let url = body["builderControls"][key].as_str().unwrap();
        assert!(
            url.starts_with(&server.base),
            "builderControls.{key} = {url}"
        );
    }
    for handler in [
        "receipt_echo",
        "static_json",
        "x402_readiness_check",
        "js_request_response",
    ] {
        assert!(
            body["supportedHandlerTypes"][handler].is_string(),
            "{handler}"
        );
    }
    assert_eq!(
        body["contentSafety"]["policy"],
        server.url("/ai/content-safety/policy")
    );
    assert!(body["contentSafety"]["selfServeRule"].is_string());
    assert!(body["note"].is_string());
    assert_eq!(slugs(&body), SEEDED);

    for record in body["endpoints"].as_array().unwrap() {
        let slug = record["slug"].as_str().unwrap();
        for field in [
            "slug",
            "id",
            "title",
            "description",
            "status",
            "priceUsd",
            "handlerType",
            "runtime",
            "pricingMode",
            "url",
            "method",
            "tags",
            "inputSchema",
            "outputSchema",
            "capabilities",
            "contentSafety",
            "createdAt",
            "updatedAt",
        ] {
            assert!(record.get(field).is_some(), "{slug} lacks {field}");
        }
        assert_eq!(record["contentSafety"], Value::Null, "{slug}");
        assert_eq!(record["method"], "POST");
        assert_eq!(record["status"], "active");
        assert_eq!(record["url"], server.url(&format!("/tools/{slug}")));
        let js = record["handlerType"] == "js_request_response";
        let expected_runtime = if js {
            "admin_gated_js_request_response_v1"
        } else {
            "managed_builtin_handler"
        };
        assert_eq!(record["runtime"], expected_runtime, "{slug}");
        if !js {
            assert_eq!(record["capabilities"], json!({}), "{slug}");
        } else {
            for cap in ["kv", "files", "httpGetJson", "logs"] {
                assert!(record["capabilities"][cap].is_boolean(), "{slug}.{cap}");
            }
        }
        let price = record["priceUsd"].as_f64().unwrap();
        let mode = record["pricingMode"].as_str().unwrap();
        assert_eq!(
            mode == "free_public_utility",
            price == 0.0,
            "{slug}: {mode} at {price}"
        );
        assert!(price == 0.0 || price >= 0.001, "{slug}: {price}");
        for ts in ["createdAt", "updatedAt"] {
            let text = record[ts].as_str().unwrap();
            assert!(
                time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
                    .is_ok()
                    && text.ends_with('Z'),
                "{slug}.{ts} = {text}"
            );
        }
    }
    let paid = body["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["slug"] == "receipt-echo-paid")
        .unwrap();
    assert_eq!(paid["priceUsd"].to_string(), "0.001");
    server.stop().await;
}

#[tokio::test]
async fn legacy_form_omits_content_safety() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/ai/endpoints?form=legacy").await;
    assert_eq!(status, 200);
    assert!(body.get("contentSafety").is_none());
    assert!(body["lifecycle"].get("contentSafetyPolicy").is_none());
    assert!(body["lifecycle"].get("payoutPackets").is_some());
    for record in body["endpoints"].as_array().unwrap() {
        assert!(record.get("contentSafety").is_none(), "{}", record["slug"]);
        assert!(record.get("owner").is_none(), "{}", record["slug"]);
    }
    let (status, body) = server.get("/ai/endpoints?form=ancient").await;
    assert_error(status, &body, 400, "invalid_query");
}

#[tokio::test]
async fn catalog_filters() {
    let server = TestServer::start().await;
    let (_, body) = server.get("/ai/endpoints?tag=RECEIPTS").await;
    assert_eq!(slugs(&body), ["receipt-echo", "receipt-echo-paid"]);
    let (_, body) = server
        .get("/ai/endpoints?pricingMode=fixed_price_success_receipt")
        .await;
    let paid = slugs(&body);
    assert!(
        paid.contains(&"receipt-echo-paid".to_string())
            && !paid.contains(&"receipt-echo".to_string())
    );
    let (_, body) = server
        .get("/ai/endpoints?pricingMode=free_public_utility&tag=x402")
        .await;
    assert_eq!(
        slugs(&body),
        ["x402-readiness-check", "conversion-quote-demo"]
    );
    let (_, body) = server.get("/ai/endpoints?q=EXTRACTIVE").await;
    assert_eq!(slugs(&body), ["text-summary"]);
    let (_, body) = server.get("/ai/endpoints?q=no-such-thing-anywhere").await;
    assert_eq!(slugs(&body), Vec::<String>::new());
    let (status, body) = server.get("/ai/endpoints?pricingMode=cheap").await;
    assert_error(status, &body, 400, "invalid_query");
}

#[tokio::test]
async fn endpoint_record_with_example() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/ai/endpoints/receipt-echo-paid").await;
    assert_eq!(status, 200);
    assert_eq!(body["endpoint"]["slug"], "receipt-echo-paid");
    assert_eq!(
        body["example"]["request"]["url"],
        server.url("/tools/receipt-echo-paid")
    );
    assert_eq!(body["example"]["request"]["method"], "POST");
    assert_eq!(body["example"]["priceUsd"].to_string(), "0.001");
    assert_eq!(body["example"]["paymentRequired"], true);
    assert!(body["example"]["curl"]
        .as_str()
        .unwrap()
        .starts_with("curl "));

    // Every seeded example passes its own schema when sent as is (free ones answer 200).
    let (_, catalog) = server.get("/ai/endpoints").await;
    for record in catalog["endpoints"].as_array().unwrap() {
        let slug = record["slug"].as_str().unwrap();
        let (_, detail) = server.get(&format!("/ai/endpoints/{slug}")).await;
        assert!(detail["example"]["request"]["body"].is_object(), "{slug}");
    }

    let (status, body) = server.get("/ai/endpoints/nope").await;
    assert_error(status, &body, 404, "endpoint_not_found");
}

#[tokio::test]
async fn seeding_is_idempotent_and_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    for _ in 0..2 {
        let server = TestServer::start_in(&data).await;
        let (_, body) = server.get("/ai/endpoints").await;
        assert_eq!(slugs(&body), SEEDED);
        server.stop().await;
    }
}

#[tokio::test]
async fn seed_dir_and_namespace_are_configurable() {
    let fixtures = tempfile::tempdir().unwrap();
    seed_fixture(
        fixtures.path(),
        &json!({
            "slug": "static-hello", "title": "Hello", "description": "Static greeting", "priceUsd": 0,
            "handlerType": "static_json", "tags": ["static"],
            "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
            "response": {"greeting": "hello"}, "exampleInput": {}
        }),
    );
    let path = fixtures.path().to_path_buf();
    let server = TestServer::start_with(move |c| {
        c.seed_dir = Some(path);
        c.catalog_namespace = "acme".into();
    })
    .await;
    let (_, body) = server.get("/ai/endpoints").await;
    assert_eq!(body["schema"], "acme.x402.hosted-endpoint-catalog.v1");
    assert_eq!(slugs(&body), ["static-hello"]);
}

#[tokio::test]
async fn manifest_lists_everything_an_agent_needs() {
    let server = TestServer::start_with(|c| {
        c.payment.pay_to = Some("0x209693Bc6afc0C5328bA36FaF03C514EF312287C".into())
    })
    .await;
    let (status, m) = server.get("/ai/manifest").await;
    assert_eq!(status, 200);
    assert_eq!(m["service"]["name"], "toolhost");
    assert!(m["service"]["version"].is_string());
    assert_eq!(m["baseUrl"], server.base);
    assert_eq!(m["payment"]["x402Versions"], json!([2, 1]));
    // Recording only: metered endpoints are offered `upto`, settled by no one on-chain.
    assert_eq!(m["payment"]["schemes"], json!(["exact", "upto"]));
    assert_eq!(m["payment"]["assets"][0]["assetTransferMethod"], "eip3009");
    assert_eq!(
        m["payment"]["assets"][0]["uptoFacilitator"],
        "0x0000000000000000000000000000000000000000"
    );
    assert_eq!(m["payment"]["networks"], json!(["eip155:84532"]));
    assert_eq!(
        m["payment"]["assets"][0]["asset"],
        "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
    );
    assert_eq!(
        m["payment"]["payTo"],
        "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
    );
    assert_eq!(m["mcp"]["url"], server.url("/ai/mcp"));
    assert_eq!(m["catalog"]["url"], server.url("/ai/endpoints"));
    assert_eq!(m["receipts"]["url"], server.url("/ai/receipts/{receiptId}"));
    assert_eq!(m["quotes"]["hosted"], server.url("/ai/quote"));
    assert_eq!(
        m["quotes"]["conversion"],
        server.url("/ai/conversion/quote")
    );
    assert_eq!(m["quotes"]["externalX402"], server.url("/x402/quote"));
    assert_eq!(m["dashboard"], server.url("/dashboard"));
    assert_eq!(
        m["guide"],
        server.url("/guides/x402-agent-payment-infrastructure")
    );
    assert_eq!(m["handlerTypes"], server.url("/toolhost.d.ts"));
}

#[tokio::test]
async fn base_url_is_used_for_every_absolute_url() {
    let server =
        TestServer::start_with(|c| c.base_url = Some("https://tools.example.org/".into())).await;
    let (_, body) = server.get("/ai/endpoints").await;
    assert_eq!(body["dashboard"], "https://tools.example.org/dashboard");
    assert_eq!(
        body["endpoints"][0]["url"],
        "https://tools.example.org/tools/x402-readiness-check"
    );
    let (_, m) = server.get("/ai/manifest").await;
    assert_eq!(m["baseUrl"], "https://tools.example.org");
}

#[tokio::test]
async fn content_safety_policy() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/ai/content-safety/policy").await;
    assert_eq!(status, 200);
    let rules = body["rules"].as_array().unwrap();
    assert!(rules.len() >= 10);
    let mut ids = std::collections::HashSet::new();
    for rule in rules {
        assert!(
            ids.insert(rule["id"].as_str().unwrap().to_string()),
            "duplicate {}",
            rule["id"]
        );
        assert!(["block", "review"].contains(&rule["outcome"].as_str().unwrap()));
        assert!(rule["category"].is_string() && rule["description"].is_string());
    }
    for category in [
        "secrets",
        "private_data",
        "illegal_material",
        "unauthorized_content",
    ] {
        assert!(
            rules.iter().any(|r| r["category"] == category),
            "{category}"
        );
    }
}

#[tokio::test]
async fn unknown_receipt_is_404() {
    let server = TestServer::start().await;
    let (status, body) = server.get("/ai/receipts/rcpt_does_not_exist").await;
    assert_error(status, &body, 404, "receipt_not_found");
}

fn static_endpoint(slug: &str, tags: &[&str]) -> Value {
    json!({
        "slug": slug, "title": format!("Static {slug}"), "description": "A fixed answer.",
        "priceUsd": 0, "handlerType": "static_json", "tags": tags,
        "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
        "response": {"slug": slug},
    })
}

/// Follows `nextCursor` from `first` (a path with `limit=`) to the end; returns the slugs and
/// how many pages it took.
async fn all_pages(server: &TestServer, first: &str) -> (Vec<String>, usize) {
    let mut path = first.to_owned();
    let (mut seen, mut pages) = (Vec::new(), 0);
    loop {
        let (status, body) = server.get(&path).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["ok"], true, "a page is the catalog envelope");
        seen.extend(slugs(&body));
        pages += 1;
        match body["nextCursor"].as_str() {
            Some(cursor) => path = format!("{first}&cursor={cursor}"),
            None => {
                assert_eq!(body["nextCursor"], Value::Null, "present, null at the end");
                return (seen, pages);
            }
        }
    }
}

/// `limit` and `cursor` page through exactly what the whole listing holds, with and without a
/// filter; a cursor stays good while endpoints are added and removed; bad ones are 400.
#[tokio::test]
async fn the_catalog_pages_with_limit_and_cursor() {
    let server = TestServer::start().await;
    for i in 0..12 {
        let tags: &[&str] = if i % 3 == 0 { &["Third"] } else { &[] };
        server
            .create(
                crate::util::As::Admin,
                &static_endpoint(&format!("page-{i:02}"), tags),
            )
            .await;
    }
    let whole = slugs(&server.get("/ai/endpoints").await.1);
    assert_eq!(whole.len(), SEEDED.len() + 12);
    let (paged, pages) = all_pages(&server, "/ai/endpoints?limit=5").await;
    assert_eq!(paged, whole);
    assert_eq!(pages, whole.len().div_ceil(5));
    // Exactly full last page: no empty page after it.
    let (paged, pages) = all_pages(&server, "/ai/endpoints?limit=4").await;
    assert_eq!((paged.len(), pages), (20, 5));

    let third = slugs(&server.get("/ai/endpoints?tag=third").await.1);
    assert_eq!(third, ["page-00", "page-03", "page-06", "page-09"]);
    let (paged, _) = all_pages(&server, "/ai/endpoints?tag=THIRD&limit=3").await;
    assert_eq!(paged, third);
    let (paged, _) = all_pages(&server, "/ai/endpoints?q=static%20page-1&limit=1").await;
    assert_eq!(paged, ["page-10", "page-11"]);

    // Created and deleted between two pages: the cursor still continues where it was.
    let (_, first) = server.get("/ai/endpoints?limit=10").await;
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let gone = slugs(&first).last().unwrap().clone();
    let (status, body) = server
        .call(
            "DELETE",
            &format!("/ai/endpoints/{gone}"),
            crate::util::As::Admin,
            None,
        )
        .await;
    assert_eq!(status, 200, "{body}");
    server
        .create(crate::util::As::Admin, &static_endpoint("page-late", &[]))
        .await;
    let (_, rest) = server
        .get(&format!("/ai/endpoints?limit=50&cursor={cursor}"))
        .await;
    let mut expected: Vec<String> = whole[10..].to_vec();
    expected.push("page-late".into());
    assert_eq!(slugs(&rest), expected);

    for (query, code) in [
        ("limit=0", "invalid_query"),
        ("limit=201", "invalid_query"),
        ("limit=many", "invalid_query"),
        ("cursor=garbage", "invalid_cursor"),
        ("cursor=", "invalid_cursor"),
    ] {
        let (status, body) = server.get(&format!("/ai/endpoints?{query}")).await;
        assert_error(status, &body, 400, code);
    }
}

/// The whole listing carries an entity tag: `If-None-Match` with it is 304 with no body, and
/// the tag changes with the catalog.
#[tokio::test]
async fn the_whole_listing_is_revalidated_with_its_etag() {
    let server = TestServer::start().await;
    let get = |etag: Option<String>| {
        let mut request = server.client.get(server.url("/ai/endpoints"));
        if let Some(etag) = etag {
            request = request.header("if-none-match", etag);
        }
        request.send()
    };
    let first = get(None).await.unwrap();
    assert_eq!(first.status(), 200);
    assert_eq!(first.headers()["cache-control"], "no-cache");
    let etag = first.headers()["etag"].to_str().unwrap().to_owned();
    assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");
    let body: Value = first.json().await.unwrap();
    assert_eq!(slugs(&body), SEEDED);

    let again = get(Some(etag.clone())).await.unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["etag"], etag.as_str());
    assert!(again.bytes().await.unwrap().is_empty());
    let listed = get(Some(format!("\"other\", W/{etag}"))).await.unwrap();
    assert_eq!(listed.status(), 304, "any tag of a list, weak or not");

    server
        .create(crate::util::As::Admin, &static_endpoint("etag-new", &[]))
        .await;
    let changed = get(Some(etag.clone())).await.unwrap();
    assert_eq!(changed.status(), 200);
    assert_ne!(changed.headers()["etag"], etag.as_str());
    let body: Value = changed.json().await.unwrap();
    assert_eq!(slugs(&body).last().unwrap(), "etag-new");
    // The legacy form is its own document.
    let legacy = server
        .client
        .get(server.url("/ai/endpoints?form=legacy"))
        .send()
        .await
        .unwrap();
    assert_ne!(legacy.headers()["etag"], etag.as_str());
}

/// Every endpoint names whom its calls pay: a builder by id and display name, the service's own
/// as such; in the catalog, the 402 (an extension beside `payTo`, which is the service's for
/// every seller) and MCP tool metadata, so an agent can pin the owner, not just a slug.
#[tokio::test]
async fn endpoints_name_their_owner_in_the_catalog_the_402_and_mcp() {
    let server = TestServer::start().await;
    let mut body = crate::util::static_endpoint("owned-paid");
    body["priceUsd"] = json!(0.01);
    let (key, created) = server.builder_with("Pinned Owner Co", &body).await;
    let owner = &created["endpoint"]["owner"];
    assert_eq!(owner["kind"], "builder", "{created}");
    assert_eq!(owner["name"], "Pinned Owner Co");
    let builder_id = created["manage"]["owner"]["id"].clone();
    assert_eq!(owner["id"], builder_id);
    assert!(key.starts_with("thb_"));

    let (_, catalog) = server.get("/ai/endpoints").await;
    let record = |slug: &str| {
        catalog["endpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["slug"] == slug)
            .cloned()
            .unwrap()
    };
    assert_eq!(record("owned-paid")["owner"], *owner);
    assert_eq!(
        record("receipt-echo")["owner"],
        json!({"kind": "system", "id": null, "name": null})
    );

    let required =
        crate::util::payment_required(&server.client, &server.url("/tools/owned-paid"), &json!({}))
            .await;
    assert_eq!(
        required["extensions"]["toolhost/owner"]["info"], *owner,
        "{required}"
    );

    let tool = server
        .mcp_tools_list()
        .await
        .into_iter()
        .find(|t| t["name"] == "owned-paid")
        .unwrap();
    assert_eq!(tool["_meta"]["toolhost/owner"], *owner, "{tool}");
}
