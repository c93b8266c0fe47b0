// toolhost runtime glue: ctx.httpGetJson. Paired with sandbox/src/ops/http.rs,
// which checks the `httpGetJson` capability, the URL and the headers; the
// server's client refuses private addresses.

"use strict";

((globalThis) => {
  const { core, primordials, toolhost } = globalThis.__bootstrap;
  const { op_http_get_json } = core.ops;
  const {
    ArrayIsArray,
    ArrayPrototypePush,
    NumberIsFinite,
    ObjectKeys,
    TypeError,
  } = primordials;

  function headersArg(headers) {
    const list = [];
    if (headers === undefined || headers === null) {
      return list;
    }
    if (typeof headers !== "object" || ArrayIsArray(headers)) {
      throw new TypeError("ctx.httpGetJson: headers must be an object of strings");
    }
    const names = ObjectKeys(headers);
    for (let i = 0; i < names.length; i++) {
      const value = headers[names[i]];
      if (typeof value !== "string") {
        throw new TypeError(`ctx.httpGetJson: header ${names[i]} must be a string`);
      }
      ArrayPrototypePush(list, [names[i], value]);
    }
    return list;
  }

  // GETs `url` and resolves with the parsed JSON body.
  async function httpGetJson(url, options) {
    if (typeof url !== "string") {
      throw new TypeError("ctx.httpGetJson: url must be a string");
    }
    const timeoutMs = options?.timeoutMs;
    if (timeoutMs !== undefined && (!NumberIsFinite(timeoutMs) || timeoutMs < 0)) {
      throw new TypeError("ctx.httpGetJson: timeoutMs must be a non-negative number");
    }
    const headers = headersArg(options?.headers);
    return await op_http_get_json(
      url,
      headers,
      timeoutMs === undefined ? null : timeoutMs | 0,
    );
  }

  toolhost.httpGetJson = httpGetJson;
})(globalThis);
