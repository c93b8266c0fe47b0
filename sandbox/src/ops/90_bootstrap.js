// toolhost runtime glue: the last script. Leaves Rust a `setup(config)`
// function at `__bootstrap.toolhost.setup`; Rust calls it once, right after
// the isolate is built and before the handler module is loaded. `setup`
// removes every non-standard global (Deno, Deno.core and its ops, deno_core's
// bootstrap objects, backend extras), installs a console and an
// unhandled-rejection reporter, builds the frozen
// ctx, and returns `dispatch(handler, requestJson)`, the only function Rust
// calls afterwards. Paired with sandbox/src/ops/bootstrap.rs and
// sandbox/src/isolate.rs.

"use strict";

((globalThis) => {
  const { core, primordials, toolhost } = globalThis.__bootstrap;
  const {
    createConsole,
    createFiles,
    createKv,
    createLog,
    createMeter,
    createRejectionReporter,
    clearCallTimers,
    errorCode,
    errorMessage,
    errorStack,
    errorStatus,
    httpGetJson,
    fromWebResponse,
    installWebGlobals,
    isResponse,
    isWebResponse,
    newWebRequest,
    preloadWebGlobals,
    respond,
    toJsonText,
  } = toolhost;
  const {
    ArrayPrototypeIncludes,
    ArrayPrototypePush,
    Error,
    JSONParse,
    JSONStringify,
    ObjectDefineProperty,
    ObjectFreeze,
    ObjectKeys,
    PromisePrototypeThen,
    PromiseResolve,
    ReflectDeleteProperty,
    ReflectOwnKeys,
    SafeSet,
    SetPrototypeHas,
    String,
  } = primordials;

  // ECMAScript globals (plus queueMicrotask, console and WebCrypto's, from
  // 50_crypto.js) a handler may see. Everything else on globalThis is deleted,
  // then the web platform's globals (50_web.js) are installed. SharedArrayBuffer and Atomics are
  // not listed (Atomics.wait would block the isolate's thread beyond the
  // watchdog's reach), nor is WebAssembly (no handler needs it, and compiled code
  // is a second engine to keep inside the time limit).
  const STANDARD_GLOBALS = new SafeSet([
    "globalThis", "Infinity", "NaN", "undefined",
    "eval", "isFinite", "isNaN", "parseFloat", "parseInt",
    "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent",
    "escape", "unescape",
    "Object", "Function", "Array", "Number", "Boolean", "String", "Symbol",
    "BigInt", "Date", "RegExp", "Math", "JSON", "Reflect", "Proxy", "Promise",
    "Error", "AggregateError", "EvalError", "RangeError", "ReferenceError",
    "SyntaxError", "TypeError", "URIError", "InternalError", "SuppressedError",
    "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry",
    "ArrayBuffer", "DataView", "Int8Array", "Uint8Array", "Uint8ClampedArray",
    "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float16Array",
    "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
    "Iterator", "DisposableStack", "AsyncDisposableStack", "Intl", "Temporal",
    "queueMicrotask", "console",
    "crypto", "Crypto", "CryptoKey", "SubtleCrypto",
  ]);

  function scrubGlobals() {
    const keys = ReflectOwnKeys(globalThis);
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      if (typeof key === "string" && SetPrototypeHas(STANDARD_GLOBALS, key)) {
        continue;
      }
      if (!ReflectDeleteProperty(globalThis, key)) {
        throw new Error(`cannot remove global ${String(key)}`);
      }
    }
  }

  // The URL of the `Request` a Workers-style handler gets when the server gave
  // none (`req.url` is the tool's public URL on the server).
  const FALLBACK_URL = "http://localhost/";

  function createDispatch(ctx, meter, maxResultBytes, reportRejection) {
    // Outcomes are null-prototype objects so nothing a handler puts on
    // Object.prototype (a `then`, a getter) can change them. Their shape is
    // `Outcome` in sandbox/src/response.rs.
    const failed = (code, message, stack, status) => ({
      __proto__: null,
      kind: "threw",
      code,
      message,
      stack,
      status,
    });
    // A thrown value. Its `status`, when in 400..=499, refuses the caller's
    // request with that status (sandbox/src/response.rs); a thrown web
    // Response does the same with its body text (or statusText) as message.
    // Every read is guarded: a Proxy or getter that throws makes it a plain
    // 500 with a fixed message, one that never returns meets the time limit.
    const threw = async (err) => {
      try {
        if (isWebResponse(err)) {
          return failed("", await responseMessage(err), "", errorStatus(err));
        }
        return failed(errorCode(err), errorMessage(err), errorStack(err), errorStatus(err));
      } catch {
        return failed("", "the handler threw a value that cannot be printed", "", 0);
      }
    };

    // The standard Request a Workers-style `fetch(request, env, ctx)` gets:
    // POST to the tool's URL with the caller's visible headers (the same
    // allow-list as `req.headers`) and the input as its JSON body, so
    // `await request.json()` is the input, whichever transport brought the
    // call.
    function webRequest(req) {
      const headers = [["content-type", "application/json"]];
      const seen = req.headers;
      const names = ObjectKeys(seen);
      for (let i = 0; i < names.length; i++) {
        if (names[i] !== "content-type") {
          ArrayPrototypePush(headers, [names[i], seen[names[i]]]);
        }
      }
      return newWebRequest(
        typeof req.url === "string" ? req.url : FALLBACK_URL,
        headers,
        JSONStringify(req.input),
      );
    }

    // A Workers-style handler's `ctx`: Workers' `waitUntil` beside toolhost's
    // own members. A promise given to `waitUntil` is awaited before the answer
    // leaves (within the call's time limit: an isolate runs nothing between
    // calls, and its timers are cancelled when a call ends); a rejection is
    // logged and changes nothing. After the answer it is ignored.
    function workersContext(pending) {
      return ObjectFreeze({
        waitUntil(promise) {
          if (pending.open) {
            ArrayPrototypePush(
              pending.list,
              PromisePrototypeThen(PromiseResolve(promise), undefined, reportRejection),
            );
          }
        },
        respond: ctx.respond,
        kv: ctx.kv,
        files: ctx.files,
        env: ctx.env,
        httpGetJson: ctx.httpGetJson,
        log: ctx.log,
        charge: ctx.charge,
      });
    }

    // Waits for the call's `waitUntil` promises, those added meanwhile too.
    async function drain(pending) {
      const list = pending.list;
      for (let i = 0; i < list.length; i++) {
        await list[i];
      }
      pending.open = false;
    }

    async function run(handler, requestJson) {
      const req = JSONParse(requestJson);
      const pending = { __proto__: null, open: true, list: [] };
      let status = 200;
      let headers = [];
      let body;
      // The body is a web Response's text, not yet checked to be JSON.
      let responseText = false;
      meter.begin();
      try {
        // A function is the handler; anything else passed the load check as
        // an object with a `fetch` method (sandbox/src/isolate.rs), called
        // as Workers call it, on its object.
        const result = typeof handler === "function"
          ? await handler(req, ctx)
          : await handler.fetch(webRequest(req), ctx.env, workersContext(pending));
        if (isResponse(result)) {
          status = result.status;
          headers = result.headers;
          body = toJsonText(result.body, "response body");
        } else if (isWebResponse(result)) {
          ({ status, headers, body } = await fromWebResponse(result));
          responseText = true;
        } else {
          body = toJsonText(result, "handler result");
        }
      } catch (err) {
        await drain(pending);
        meter.end();
        return await threw(err);
      }
      await drain(pending);
      const usage = meter.end();
      // A UTF-8 encoding is at least as long as the UTF-16 length, so this
      // refuses oversized bodies before they are copied out; Rust checks bytes.
      if (body.length > maxResultBytes) {
        return { __proto__: null, kind: "tooLarge" };
      }
      // The common answer is its text alone: Rust reads one string, not an
      // object of six members (decode_outcome in sandbox/src/isolate.rs).
      if (status === 200 && headers.length === 0 && usage === null && !responseText) {
        return body;
      }
      return { __proto__: null, kind: "ok", status, headers, body, usage, responseText };
    }

    // Timers never outlive their call: whatever is still scheduled is
    // cancelled before the call starts and once it ends (reading a Response's
    // body and `waitUntil` may still need them until then).
    return async function dispatch(handler, requestJson) {
      clearCallTimers();
      try {
        return await run(handler, requestJson);
      } finally {
        clearCallTimers();
      }
    };
  }

  // The message of a thrown web Response: its body text, else its statusText.
  async function responseMessage(response) {
    try {
      const text = await response.text();
      if (text !== "") {
        return text;
      }
    } catch {
      // A used or broken body: the status text.
    }
    const statusText = response.statusText;
    return typeof statusText === "string" ? statusText : "";
  }

  // config: { env: { [name]: string }, logs: boolean, maxResultBytes: number,
  //   maxLogBytes: number, webGlobals: string[] (the web globals the
  //   handler's source names, to load before its module runs),
  //   engineGlobals: string[] (the engine's globals that load on first read,
  //   `Temporal`, that the source names: read now, for the same reason) }
  function setup(configJson) {
    const config = JSONParse(configJson);
    scrubGlobals();
    installWebGlobals(config.webGlobals);
    for (let i = 0; i < config.engineGlobals.length; i++) {
      void globalThis[config.engineGlobals[i]];
    }
    if (ArrayPrototypeIncludes(config.webGlobals, "fetch")) {
      // A source naming `fetch` may be a Workers-style `{ fetch }` handler,
      // whose calls need Request: its scripts load now, before any handler
      // code runs, not in the middle of its first call.
      preloadWebGlobals(["fetch"]);
    }
    core.setUnhandledPromiseRejectionHandler(createRejectionReporter(config.logs));
    const console = createConsole(config.logs, config.maxLogBytes);
    ObjectDefineProperty(globalThis, "console", {
      __proto__: null,
      value: console,
      writable: true,
      enumerable: false,
      configurable: true,
    });
    const meter = createMeter();
    const ctx = ObjectFreeze({
      respond,
      kv: createKv(),
      files: createFiles(),
      env: ObjectFreeze(config.env),
      httpGetJson,
      log: createLog(config.logs, config.maxLogBytes),
      charge: meter.charge,
    });
    const reportRejection = (reason) => {
      console.error("ctx.waitUntil: a promise rejected:", reason);
    };
    return createDispatch(ctx, meter, config.maxResultBytes, reportRejection);
  }

  // Rust takes `setup` from here once the isolate is built (or restored from
  // the startup snapshot); `setup` itself deletes `__bootstrap`.
  toolhost.setup = setup;
})(globalThis);
