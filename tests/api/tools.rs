use serde_json::{json, Value};

use crate::util::{assert_error, assert_payment_required, seed_fixture, As, TestServer};

#[tokio::test]
async fn free_receipt_echo_post_and_get() {
    let server = TestServer::start().await;
    let input = json!({"hello": "world", "n": 3, "nested": {"secret": "do-not-echo"}});
    let response = server
        .client
        .post(server.url("/tools/receipt-echo"))
        .json(&input)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let request_id = response.headers()["x-request-id"]
        .to_str()
        .unwrap()
        .to_string();
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["ok"], true);
    assert_eq!(body["echo"]["endpoint"], "receipt-echo");
    assert_eq!(body["echo"]["method"], "POST");
    assert_eq!(body["echo"]["requestId"], request_id);
    assert_eq!(
        body["echo"]["input"]["keys"],
        json!(["hello", "n", "nested"])
    );
    assert_eq!(body["echo"]["input"]["types"]["n"], "number");
    let bytes = serde_json::to_vec(&input).unwrap();
    use sha2::Digest;
    assert_eq!(
        body["echo"]["input"]["sha256"],
        hex::encode(sha2::Sha256::digest(&bytes))
    );
    assert!(
        !body.to_string().contains("do-not-echo"),
        "values are never echoed"
    );
    assert_eq!(body["receipt"]["charged"], false);
    assert_eq!(body["receipt"]["amount"], "0");
    assert_eq!(body["receipt"]["paymentMethod"], "free");
    assert_eq!(body["receipt"]["endpointSlug"], "receipt-echo");
    // The free receipt is a real, stored, signed receipt.
    let receipt_id = body["receipt"]["receiptId"].as_str().unwrap();
    let (status, stored) = server.get(&format!("/ai/receipts/{receipt_id}")).await;
    assert_eq!(status, 200);
    assert_eq!(stored, body["receipt"]);

    let (status, body) = server.get("/tools/receipt-echo?a=1&b=two").await;
    assert_eq!(status, 200);
    assert_eq!(body["echo"]["method"], "GET");
    assert_eq!(body["echo"]["input"]["keys"], json!(["a", "b"]));
}

#[tokio::test]
async fn input_is_validated_with_pointers() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post(
            "/tools/x402-readiness-check",
            &json!({"url": 42, "extra": true}),
        )
        .await;
    assert_error(status, &body, 422, "input_invalid");
    let violations = body["error"]["details"]["violations"].as_array().unwrap();
    let pointers: Vec<&str> = violations
        .iter()
        .map(|v| v["pointer"].as_str().unwrap())
        .collect();
    assert!(pointers.contains(&"/url"), "{violations:?}");
    assert!(
        pointers.contains(&""),
        "additionalProperties reported at the root: {violations:?}"
    );
    for v in violations {
        assert!(v["message"].is_string() && v["schemaPath"].is_string());
    }
    // `format` is enforced: a URL that is not one is the caller's mistake, reported at its
    // field before the handler runs.
    let (status, body) = server
        .post(
            "/tools/x402-readiness-check",
            &json!({"url": "not a url at all"}),
        )
        .await;
    assert_error(status, &body, 422, "input_invalid");
    assert_eq!(body["error"]["details"]["violations"][0]["pointer"], "/url");
    assert!(
        body["error"]["details"]["violations"][0]["message"]
            .as_str()
            .unwrap()
            .contains("uri"),
        "{body}"
    );
    // An empty body is `{}`: the missing required field is reported, not a parse error.
    let response = server
        .client
        .post(server.url("/tools/x402-readiness-check"))
        .send()
        .await
        .unwrap();
    let (status, body) = crate::util::read(response).await;
    assert_error(status, &body, 422, "input_invalid");
    // GET takes input from the query string, validated the same way.
    let (status, body) = server.get("/tools/x402-readiness-check?nope=1").await;
    assert_error(status, &body, 422, "input_invalid");
    // Nested pointers.
    let (status, body) = server
        .post(
            "/tools/creator-plan",
            &json!({"role": "dev", "goal": "g", "constraints": ["ok", 7]}),
        )
        .await;
    assert_error(status, &body, 422, "input_invalid");
    assert_eq!(
        body["error"]["details"]["violations"][0]["pointer"],
        "/constraints/1"
    );
}

#[tokio::test]
async fn paid_endpoint_without_payment_is_402() {
    let server = TestServer::start().await;
    let (status, body) = server
        .post("/tools/receipt-echo-paid", &json!({"a": 1}))
        .await;
    assert_payment_required(status, &body, "payment_required");
    let (status, body) = server.get("/tools/receipt-echo-paid").await;
    assert_payment_required(status, &body, "payment_required");
}

/// A paid endpoint's 402 declares its `bazaar` discovery info, unless the declaration would make
/// the `PAYMENT-REQUIRED` header too large for common clients (Node refuses beyond 16 KiB).
#[tokio::test]
async fn a_402_declares_bazaar_unless_the_schemas_are_too_large() {
    let server = TestServer::start().await;
    let properties: serde_json::Map<String, Value> = (0..400)
        .map(|i| {
            (
                format!("field_{i:04}"),
                json!({"type": "string", "maxLength": 100}),
            )
        })
        .collect();
    for (slug, schema) in [
        (
            "small-schema",
            json!({"type": "object", "properties": {"q": {"type": "string"}}}),
        ),
        (
            "large-schema",
            json!({"type": "object", "properties": properties}),
        ),
    ] {
        let mut body = crate::util::static_endpoint(slug);
        body["priceUsd"] = json!(0.01);
        body["inputSchema"] = schema;
        server.builder_with(slug, &body).await;
        let response = server
            .client
            .post(server.url(&format!("/tools/{slug}")))
            .json(&json!({}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 402);
        let header = response.headers()["payment-required"].len();
        let required = crate::util::payment_required(
            &server.client,
            &server.url(&format!("/tools/{slug}")),
            &json!({}),
        )
        .await;
        let extensions = required["extensions"].as_object().unwrap();
        assert!(extensions.contains_key("payment-identifier"));
        if slug == "small-schema" {
            let input = &required["extensions"]["bazaar"]["schema"]["properties"]["input"];
            assert_eq!(
                input["properties"]["body"]["properties"]["q"]["type"],
                "string"
            );
        } else {
            assert!(!extensions.contains_key("bazaar"), "{slug}");
            assert!(header < 16 * 1024, "PAYMENT-REQUIRED is {header} bytes");
        }
    }
}

/// A builder sets the example request of its endpoint at create and by PATCH; it must pass
/// the endpoint's `inputSchema` (a change of either is checked against the other), and it is
/// the catalog's example body and the body the 402's discovery declaration shows.
#[tokio::test]
async fn an_example_input_is_set_checked_against_the_schema_and_shown() {
    let server = TestServer::start().await;
    let (_, key) = server.builder("Example Co").await;
    let owner = As::Builder(&key);
    let mut body = crate::util::static_endpoint("with-example");
    body["priceUsd"] = json!(0.01);
    body["inputSchema"] = json!({"type": "object", "required": ["q"],
        "properties": {"q": {"type": "string"}}});
    body["exampleInput"] = json!({"q": 7});
    let (status, refused) = server
        .call("POST", "/ai/endpoints/create", owner, Some(&body))
        .await;
    assert_error(status, &refused, 422, "invalid_field");
    assert!(refused.to_string().contains("exampleInput"), "{refused}");
    assert!(server.get("/ai/endpoints/with-example").await.0 == 404);

    body["exampleInput"] = json!({"q": "weather in Lisbon"});
    server.create(owner, &body).await;
    let example = |record: &Value| record["example"]["request"]["body"].clone();
    let (_, record) = server.get("/ai/endpoints/with-example").await;
    assert_eq!(
        example(&record),
        json!({"q": "weather in Lisbon"}),
        "{record}"
    );
    let declared =
        |required: &Value| required["extensions"]["bazaar"]["info"]["input"]["body"].clone();
    let url = server.url("/tools/with-example");
    let required =
        crate::util::payment_required(&server.client, &url, &json!({"q": "weather in Lisbon"}))
            .await;
    assert_eq!(
        declared(&required),
        json!({"q": "weather in Lisbon"}),
        "{required}"
    );

    server
        .patch(
            owner,
            "with-example",
            &json!({"exampleInput": {"q": "tides"}}),
        )
        .await;
    let (_, record) = server.get("/ai/endpoints/with-example").await;
    assert_eq!(example(&record), json!({"q": "tides"}));
    let revision = |record: &Value| record["manage"]["revision"].clone();
    let (_, before) = server
        .call("GET", "/ai/endpoints/with-example", owner, None)
        .await;
    // A schema the example breaks is refused, and nothing changes.
    let (status, refused) = server
        .call(
            "PATCH",
            "/ai/endpoints/with-example",
            owner,
            Some(&json!({"inputSchema": {"type": "object", "required": ["city"]}})),
        )
        .await;
    assert_error(status, &refused, 422, "invalid_field");
    assert!(refused.to_string().contains("exampleInput"), "{refused}");
    let (_, after) = server
        .call("GET", "/ai/endpoints/with-example", owner, None)
        .await;
    assert_eq!(revision(&after), revision(&before));
    // Both at once are fine; `null` removes the example (the catalog generates one again).
    server
        .patch(
            owner,
            "with-example",
            &json!({"inputSchema": {"type": "object", "required": ["city"],
                "properties": {"city": {"type": "string"}}}, "exampleInput": {"city": "Porto"}}),
        )
        .await;
    let (_, record) = server.get("/ai/endpoints/with-example").await;
    assert_eq!(example(&record), json!({"city": "Porto"}));
    server
        .patch(owner, "with-example", &json!({"exampleInput": null}))
        .await;
    let (_, record) = server.get("/ai/endpoints/with-example").await;
    assert_ne!(example(&record), json!({"city": "Porto"}), "{record}");
}

#[tokio::test]
async fn unknown_tool_is_404() {
    let server = TestServer::start().await;
    let (status, body) = server.post("/tools/nope", &json!({})).await;
    assert_error(status, &body, 404, "endpoint_not_found");
}

#[tokio::test]
async fn static_json_returns_its_response() {
    let fixtures = tempfile::tempdir().unwrap();
    seed_fixture(
        fixtures.path(),
        &json!({
            "slug": "static-hello", "title": "Hello", "description": "Static greeting", "priceUsd": 0,
            "handlerType": "static_json", "tags": [],
            "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
            "response": {"greeting": "hello", "list": [1, 2]}, "exampleInput": {}
        }),
    );
    let path = fixtures.path().to_path_buf();
    let server = TestServer::start_with(move |c| c.seed_dir = Some(path)).await;
    let (status, body) = server.post("/tools/static-hello", &json!({})).await;
    assert_eq!(status, 200);
    assert_eq!(body, json!({"greeting": "hello", "list": [1, 2]}));
    let (status, body) = server.get("/tools/static-hello").await;
    assert_eq!(
        (status.as_u16(), body["greeting"].clone()),
        (200, json!("hello"))
    );
}

#[tokio::test]
async fn catalogued_js_endpoints_compute_real_results() {
    let server = TestServer::start().await;
    // The developer utility hashes the canonical form of the input; check it against Rust's SHA-256.
    let input = json!({"b": [1, 2, {"z": null}], "a": "héllo"});
    let (status, body) = server.post("/tools/developer-utility", &input).await;
    assert_eq!(status, 200, "{body}");
    let canonical = r#"{"a":"héllo","b":[1,2,{"z":null}]}"#;
    use sha2::Digest;
    assert_eq!(
        body["sha256"],
        hex::encode(sha2::Sha256::digest(canonical.as_bytes())),
        "{body}"
    );
    assert_eq!(body["depth"], 3);
    assert_eq!(body["bytes"], serde_json::to_vec(&input).unwrap().len());

    // The conversion demo and `POST /ai/conversion/quote` are one planner: the same input is
    // quoted the same route and cost by both, for a plain and a multi-step route.
    for (network, asset) in [
        ("eip155:84532", "USDC"),
        ("eip155:1", "ETH"),
        ("arbitrum", "USDC"),
    ] {
        let input =
            json!({"serviceId": "creator-plan", "startNetwork": network, "startAsset": asset});
        let (status, demo) = server.post("/tools/conversion-quote-demo", &input).await;
        assert_eq!(status, 200, "{demo}");
        let (status, route) = server.post("/ai/conversion/quote", &input).await;
        assert_eq!(status, 200, "{route}");
        assert_eq!(demo, route, "{network} {asset}");
    }
    let (_, body) = server
        .post("/tools/conversion-quote-demo", &json!({"serviceId": "creator-plan", "startNetwork": "eip155:84532", "startAsset": "USDC"}))
        .await;
    assert_eq!(body["route"]["steps"], json!([]), "{body}");
    assert_eq!(body["route"]["totalUsd"], json!(0.01), "{body}");
    let (_, body) = server
        .post(
            "/tools/conversion-quote-demo",
            &json!({"serviceId": "creator-plan", "startNetwork": "eip155:1", "startAsset": "ETH"}),
        )
        .await;
    let cost = body["route"]["estimatedCostUsd"].as_f64();
    assert!(
        cost.is_some_and(|c| c > 0.0),
        "a swap and a bridge cost something: {body}"
    );
    for path in ["/tools/conversion-quote-demo", "/ai/conversion/quote"] {
        let (status, body) = server
            .post(path, &json!({"serviceId": "creator-plan", "startNetwork": "eip155:999999", "startAsset": "USDC"}))
            .await;
        assert_eq!(status, 422, "{path}: {body}");
        assert_eq!(body["error"]["code"], "unknown_network", "{path}: {body}");
    }
}

/// A JavaScript handler's answer without a receipt is the JSON text its isolate wrote, as it
/// wrote it (members in the handler's order), not the result parsed and written again.
#[tokio::test]
async fn a_js_answer_without_a_receipt_is_the_handlers_json_text() {
    let server = TestServer::start().await;
    let endpoint = json!({
        "slug": "as-written", "title": "As written", "description": "Answers in its own order.",
        "priceUsd": 0, "handlerType": "js_request_response",
        "source": "export default (req) => ({ zeta: req.input.n, alpha: [1.5, \"é\"], mid: { y: 2, b: null } });",
        "inputSchema": {"type": "object"}, "outputSchema": {"type": "object", "required": ["zeta"]},
        "capabilities": {}, "safetyAttestation": {"accepted": true},
    });
    server.builder_with("Writer", &endpoint).await;
    let response = reqwest::Client::new()
        .post(server.url("/tools/as-written"))
        .json(&json!({"n": 3}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(
        response.text().await.unwrap(),
        r#"{"zeta":3,"alpha":[1.5,"é"],"mid":{"y":2,"b":null}}"#
    );
}
