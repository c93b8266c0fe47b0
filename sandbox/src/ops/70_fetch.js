// toolhost runtime glue: the `fetch` global. Paired with
// sandbox/src/ops/fetch.rs, which checks the `fetch` capability, the request
// (method, URL, headers, body size) and the call's caps; the server's client
// reaches only the endpoint's allowed hosts at public addresses.
//
// The Request and Response are deno_fetch's own classes (loaded through
// 50_web.js); what Deno's 26_fetch.js does with its HTTP client is done here
// with three ops: the request goes out whole (its body buffered, up to the
// request size cap), the response body stays with the host and a
// ReadableStream pulls it a chunk at a time as the handler reads.
// Errors are TypeErrors, as fetch's are, carrying the op's `code`
// (`capability_denied`, `host_not_allowed`, `ssrf_refused`, `too_large`, ...);
// an abort rejects with the signal's reason.

"use strict";

((globalThis) => {
  const { core, primordials, toolhost } = globalThis.__bootstrap;
  const { op_fetch_start, op_fetch_read, op_fetch_cancel } = core.ops;
  const {
    ArrayPrototypePush,
    StringPrototypeToLowerCase,
    TypeError,
    Uint8Array,
  } = primordials;

  let deno = null;

  // deno_fetch's and deno_web's exports, loaded on the first fetch (through
  // 50_web.js, so blob URLs are gone and AbortSignal.timeout is tracked).
  function scripts() {
    if (deno === null) {
      toolhost.webGlobal("Response");
      toolhost.webGlobal("AbortSignal");
      const request = core.loadExtScript("ext:deno_fetch/23_request.js");
      const response = core.loadExtScript("ext:deno_fetch/23_response.js");
      const body = core.loadExtScript("ext:deno_fetch/22_body.js");
      const streams = core.loadExtScript("ext:deno_web/06_streams.js");
      const abort = core.loadExtScript("ext:deno_web/03_abort_signal.js");
      deno = { request, response, body, streams, abort };
    }
    return deno;
  }

  // Keys name a request between the glue and the ops; never reused in an
  // isolate's life.
  let nextKey = 1;

  function fetchError(err) {
    const error = new TypeError(err?.message ?? "fetch failed");
    error.code = typeof err?.code === "string" ? err.code : "fetch_failed";
    return error;
  }

  async function requestBody(inner) {
    if (inner.body === null) {
      return null;
    }
    const bytes = await inner.body.consume();
    return typeof bytes === "string" ? core.encode(bytes) : bytes;
  }

  async function fetch(input, init = undefined) {
    const { request, response, body, streams, abort } = scripts();
    const requestObject = new request.Request(input, init);
    const inner = request.toInnerRequest(requestObject);
    const signal = requestObject.signal;
    if (signal.aborted) {
      throw signal.reason;
    }
    const key = nextKey++;
    let controller = null;
    let open = true;
    const onAbort = () => {
      if (open) {
        open = false;
        op_fetch_cancel(key);
      }
      if (controller !== null) {
        controller.error(signal.reason);
        controller = null;
      }
    };
    const done = () => {
      open = false;
      controller = null;
      signal[abort.remove](onAbort);
    };
    signal[abort.add](onAbort);

    const headers = [];
    let accept = false;
    for (let i = 0; i < inner.headerList.length; i++) {
      const name = inner.headerList[i][0];
      const value = inner.headerList[i][1];
      if (StringPrototypeToLowerCase(name) === "accept") {
        accept = true;
      }
      ArrayPrototypePush(headers, [name, value]);
    }
    if (!accept) {
      ArrayPrototypePush(headers, ["accept", "*/*"]);
    }
    const url = inner.url();
    let head;
    try {
      const bytes = await requestBody(inner);
      if (signal.aborted) {
        throw signal.reason;
      }
      head = await op_fetch_start(
        key,
        { method: inner.method, url, headers, redirect: inner.redirectMode },
        bytes ?? new Uint8Array(0),
        bytes !== null,
      );
    } catch (err) {
      done();
      if (signal.aborted) {
        throw signal.reason;
      }
      throw fetchError(err);
    }

    const result = response.newInnerResponse(head.status, head.statusText);
    result.type = "basic";
    result.headerList = head.headers;
    result.urlList = head.redirected ? [url, head.url] : [head.url];
    if (response.nullBodyStatus(head.status) || inner.method === "HEAD") {
      op_fetch_cancel(key);
      done();
    } else {
      // highWaterMark 0: nothing is pulled until the handler reads.
      const stream = new streams.ReadableStream({
        start(c) {
          controller = c;
        },
        async pull(c) {
          let chunk;
          try {
            chunk = await op_fetch_read(key);
          } catch (err) {
            if (!signal.aborted) {
              c.error(fetchError(err));
            }
            done();
            return;
          }
          if (chunk.byteLength === 0) {
            done();
            c.close();
          } else {
            c.enqueue(chunk);
          }
        },
        cancel() {
          if (open) {
            op_fetch_cancel(key);
          }
          done();
        },
      }, { highWaterMark: 0 });
      result.body = new body.InnerBody(stream);
    }
    return response.fromInnerResponse(result, "immutable");
  }

  toolhost.fetch = fetch;
})(globalThis);
