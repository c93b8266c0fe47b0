//! The dashboard and the guide: embedded pages with a strict CSP, revalidation by ETag, and the
//! guide's `{base_url}` filled in.

use crate::util::TestServer;

#[tokio::test]
async fn dashboard_and_assets_are_served_with_a_strict_policy() {
    let server = TestServer::start().await;
    for (path, content_type) in [
        ("/dashboard", "text/html"),
        ("/dashboard/", "text/html"),
        ("/dashboard/app.js", "text/javascript"),
        ("/dashboard/api.js", "text/javascript"),
        ("/dashboard/dom.js", "text/javascript"),
        ("/dashboard/catalog.js", "text/javascript"),
        ("/dashboard/builder.js", "text/javascript"),
        ("/dashboard/payouts.js", "text/javascript"),
        ("/dashboard/admin.js", "text/javascript"),
        ("/dashboard/chart.js", "text/javascript"),
        ("/dashboard/style.css", "text/css"),
        ("/guides/x402-agent-payment-infrastructure", "text/html"),
        ("/guides/assets/guide.css", "text/css"),
        ("/guides/assets/guide.js", "text/javascript"),
    ] {
        let response = server.client.get(server.url(path)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
        let headers = response.headers();
        assert!(
            headers["content-type"]
                .to_str()
                .unwrap()
                .starts_with(content_type),
            "{path}"
        );
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("default-src 'self'") && !csp.contains("unsafe"),
            "{path}: {csp}"
        );
        assert_eq!(headers["x-content-type-options"], "nosniff");
        assert_eq!(headers["cache-control"], "no-cache");
        let etag = headers["etag"].to_str().unwrap().to_string();
        let again = server
            .client
            .get(server.url(path))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304, "{path}");
    }
}

#[tokio::test]
async fn the_guide_names_this_server() {
    let server = TestServer::start().await;
    let html = server
        .text("/guides/x402-agent-payment-infrastructure")
        .await;
    assert!(!html.contains("{base_url}"));
    assert!(
        html.contains(&format!("curl -sS {}/ai/manifest", server.url(""))),
        "the guide's examples use the base URL"
    );
    assert!(html.contains("data-example=\"curl\""));
}

#[tokio::test]
async fn unknown_assets_are_the_json_404() {
    let server = TestServer::start().await;
    for path in [
        "/dashboard/nope.js",
        "/dashboard/../Cargo.toml",
        "/guides/assets/%2e%2e/index.html",
        "/guides/other",
    ] {
        let (status, body) = server.get(path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(body["error"]["code"], "route_not_found", "{path}");
    }
}

/// `GET /ai/builders/endpoints`, which the dashboard's builder view lists: the caller's own
/// endpoints only, those held for review included, each with the owner's view.
#[tokio::test]
async fn a_builder_lists_its_own_endpoints() {
    use crate::util::{static_endpoint, As};
    let server = TestServer::start().await;
    let (id, key) = server.builder("Lister").await;
    server
        .builder_with("Other", &static_endpoint("theirs"))
        .await;
    server
        .create(As::Builder(&key), &static_endpoint("mine-b"))
        .await;
    server
        .create(As::Builder(&key), &static_endpoint("mine-a"))
        .await;
    let mut held = static_endpoint("mine-held");
    held["description"] = serde_json::json!("Questions? Mail jane.doe@gmail.com");
    server.create(As::Builder(&key), &held).await;

    let (status, body) = server
        .call("GET", "/ai/builders/endpoints", As::Builder(&key), None)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["builderId"], id.as_str());
    let slugs: Vec<&str> = body["endpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["endpoint"]["slug"].as_str().unwrap())
        .collect();
    assert_eq!(slugs, ["mine-a", "mine-b", "mine-held"]);
    assert_eq!(
        body["endpoints"][2]["endpoint"]["contentSafety"]["status"],
        "review"
    );
    assert!(body["endpoints"][0]["manage"]["revision"].is_number());

    let (status, _) = server
        .call("GET", "/ai/builders/endpoints", As::Nobody, None)
        .await;
    assert_eq!(status, 401);
    let (status, _) = server
        .call("GET", "/ai/builders/endpoints", As::Admin, None)
        .await;
    assert_eq!(status, 401);
}

/// `GET /toolhost.d.ts`: the handler types builders' editors load, byte for byte the repo's
/// `web/toolhost.d.ts` (the file `tests/types` checks the project's handlers against), public
/// and cacheable, revalidated by ETag, listed in the manifest and the OpenAPI document.
#[tokio::test]
async fn the_handler_types_are_served_as_checked_in() {
    let server = TestServer::start().await;
    let on_disk =
        std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("web/toolhost.d.ts"))
            .unwrap();
    let response = server
        .client
        .get(server.url("/toolhost.d.ts"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let headers = response.headers().clone();
    assert_eq!(
        headers["content-type"],
        "application/typescript; charset=utf-8"
    );
    assert_eq!(headers["cache-control"], "public, max-age=3600");
    assert_eq!(headers["access-control-allow-origin"], "*");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    let body = response.bytes().await.unwrap();
    assert!(
        body.as_ref() == on_disk.as_slice(),
        "served bytes differ from web/toolhost.d.ts (embedded at build time: after editing \
         it, rebuild, e.g. touch src/web.rs)"
    );
    let text = String::from_utf8(on_disk).unwrap();
    assert!(text.contains("declare namespace toolhost"));
    assert!(text.contains("declare function fetch("));

    let etag = headers["etag"].to_str().unwrap();
    let again = server
        .client
        .get(server.url("/toolhost.d.ts"))
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(again.headers()["cache-control"], "public, max-age=3600");
    assert!(again.bytes().await.unwrap().is_empty());

    let (_, manifest) = server.get("/ai/manifest").await;
    assert_eq!(manifest["handlerTypes"], server.url("/toolhost.d.ts"));
    let (_, doc) = server.get("/openapi.json").await;
    let types = &doc["paths"]["/toolhost.d.ts"]["get"];
    assert!(
        types["responses"]["200"]["content"]["application/typescript"].is_object(),
        "{types}"
    );
    // Not a file server: other paths at the root stay 404.
    let (status, _) = server.get("/toolhost.ts").await;
    assert_eq!(status, 404);
}
