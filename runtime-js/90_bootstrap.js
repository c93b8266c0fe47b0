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
    createRejectionReporter,
    clearCallTimers,
    errorCode,
    errorMessage,
    errorStack,
    httpGetJson,
    fromWebResponse,
    installWebGlobals,
    isResponse,
    isWebResponse,
    respond,
    toJsonText,
  } = toolhost;
  const {
    Error,
    JSONParse,
    ObjectDefineProperty,
    ObjectFreeze,
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

  function createDispatch(ctx, maxResultBytes) {
    // Outcomes are null-prototype objects so nothing a handler puts on
    // Object.prototype (a `then`, a getter) can change them. Their shape is
    // `Outcome` in sandbox/src/response.rs.
    // Timers never outlive their call: whatever is still scheduled is
    // cancelled before the call starts and once it ends.
    const threw = (err) => ({
      __proto__: null,
      kind: "threw",
      code: errorCode(err),
      message: errorMessage(err),
      stack: errorStack(err),
    });
    return async function dispatch(handler, requestJson) {
      clearCallTimers();
      let result;
      try {
        result = await handler(JSONParse(requestJson), ctx);
      } catch (err) {
        return threw(err);
      } finally {
        // Reading a Response's body runs handler code (a stream's pull) that
        // may schedule timers of its own.
        clearCallTimers();
      }
      let status = 200;
      let headers = [];
      let body;
      try {
        if (isResponse(result)) {
          status = result.status;
          headers = result.headers;
          body = toJsonText(result.body, "response body");
        } else if (isWebResponse(result)) {
          ({ status, headers, body } = await fromWebResponse(result));
        } else {
          body = toJsonText(result, "handler result");
        }
      } catch (err) {
        return threw(err);
      } finally {
        // Reading a Response's body runs handler code (a stream's pull) that
        // may schedule timers of its own.
        clearCallTimers();
      }
      // A UTF-8 encoding is at least as long as the UTF-16 length, so this
      // refuses oversized bodies before they are copied out; Rust checks bytes.
      if (body.length > maxResultBytes) {
        return { __proto__: null, kind: "tooLarge" };
      }
      return { __proto__: null, kind: "ok", status, headers, body };
    };
  }

  // config: { env: { [name]: string }, logs: boolean, maxResultBytes: number,
  //   maxLogBytes: number, webGlobals: string[] (the web globals the
  //   handler's source names, to load before its module runs) }
  function setup(configJson) {
    const config = JSONParse(configJson);
    scrubGlobals();
    installWebGlobals(config.webGlobals);
    core.setUnhandledPromiseRejectionHandler(createRejectionReporter(config.logs));
    ObjectDefineProperty(globalThis, "console", {
      __proto__: null,
      value: createConsole(config.logs, config.maxLogBytes),
      writable: true,
      enumerable: false,
      configurable: true,
    });
    const ctx = ObjectFreeze({
      respond,
      kv: createKv(),
      files: createFiles(),
      env: ObjectFreeze(config.env),
      httpGetJson,
      log: createLog(config.logs, config.maxLogBytes),
    });
    return createDispatch(ctx, config.maxResultBytes);
  }

  // Rust takes `setup` from here once the isolate is built (or restored from
  // the startup snapshot); `setup` itself deletes `__bootstrap`.
  toolhost.setup = setup;
})(globalThis);
