// toolhost runtime glue: the web platform globals (WinterTC Minimum Common
// API) from Deno's own scripts (deno_webidl, deno_web, and deno_fetch's
// Headers/Request/Response; see sandbox/src/ops/web/README.md). Paired with
// sandbox/src/ops/web.rs.
//
// Loaded when used, not in the startup snapshot: on the QuickJS backend a
// snapshot is replayed into every new isolate, so the ~680 KB of Deno's
// scripts would cost every isolate (cold start and idle memory) whether its
// handler uses them or not. Instead each global is an accessor that loads its
// scripts the first time it is read, and `setup` reads, before any handler
// code runs, every global the handler's source names (a handler is one module
// and may import nothing, so its source is all the code it has). A load
// later, in the middle of handler code, hands Deno's scripts their bootstrap
// as an argument (never on the global); docs/handler-platform.md says what
// handler code can and cannot see then.
//
// What a handler gets is chosen here, not by deno_web: BroadcastChannel,
// MessageChannel, Worker globals, `location`, blob URLs
// (URL.createObjectURL) and the compression streams are never installed.
// Timers are tied to the call that made them: `clearCallTimers` cancels every
// timer and AbortSignal.timeout a call started, so none fires in a later call
// on the same isolate.

"use strict";

((globalThis) => {
  const { core, primordials, toolhost } = globalThis.__bootstrap;
  const {
    ArrayIsArray,
    ArrayPrototypePush,
    ObjectDefineProperty,
    ObjectFreeze,
    ObjectKeys,
    ObjectPrototypeIsPrototypeOf,
    ReflectDeleteProperty,
    RegExpPrototypeTest,
    StringPrototypeCharCodeAt,
    StringPrototypeToLowerCase,
  } = primordials;

  const load = (specifier) => core.loadExtScript(specifier);

  // A DOMException, its script loaded on first use. Also what WebCrypto
  // (50_crypto.js) throws.
  function domException(message, name) {
    const { DOMException } = load("ext:deno_web/01_dom_exception.js");
    return new DOMException(message, name);
  }

  // deno_web's ops (and WebCrypto's, sandbox/src/ops/crypto.rs) fail with error
  // classes named "DOMException<name>"; the scripts expect them built as
  // DOMExceptions (as Deno's runtime registers).
  for (const name of [
    "AbortError", "DataError", "InvalidAccessError", "InvalidCharacterError",
    "InvalidStateError", "NetworkError", "NotSupportedError", "OperationError",
    "QuotaExceededError", "SyntaxError",
  ]) {
    core.registerErrorBuilder(`DOMException${name}`, (message) => domException(message, name));
  }

  // Every timer of the running call: web timers by id, AbortSignal.timeout
  // signals by their system timer.
  let timerIds = [];
  let timeoutSignals = [];
  let timers = null;
  let abortSignal = null;

  function webTimers() {
    if (timers === null) {
      timers = load("ext:deno_web/02_timers.js");
    }
    return timers;
  }

  // deno_web's timer functions refuse a `this` other than globalThis, so they
  // are called unbound.
  function setTimeout(callback, timeout = 0, ...args) {
    const { setTimeout } = webTimers();
    const id = setTimeout(callback, timeout, ...args);
    ArrayPrototypePush(timerIds, id);
    return id;
  }

  function setInterval(callback, timeout = 0, ...args) {
    const { setInterval } = webTimers();
    const id = setInterval(callback, timeout, ...args);
    ArrayPrototypePush(timerIds, id);
    return id;
  }

  function clearTimeout(id = 0) {
    const { clearTimeout } = webTimers();
    clearTimeout(id);
  }

  function clearInterval(id = 0) {
    const { clearInterval } = webTimers();
    clearInterval(id);
  }

  // AbortSignal, with `timeout` recording its signals for clearCallTimers.
  function webAbortSignal() {
    if (abortSignal === null) {
      abortSignal = load("ext:deno_web/03_abort_signal.js");
      const { AbortSignal } = abortSignal;
      const timeout = AbortSignal.timeout;
      ObjectDefineProperty(AbortSignal, "timeout", {
        __proto__: null,
        value: {
          timeout(millis) {
            const signal = timeout(millis);
            ArrayPrototypePush(timeoutSignals, signal);
            return signal;
          },
        }.timeout,
        writable: true,
        enumerable: false,
        configurable: true,
      });
    }
    return abortSignal;
  }

  // Cancels what the call (or anything between calls) left scheduled. Called
  // by dispatch before and after each call, in the same task, so a timer due
  // meanwhile never gets its turn.
  function clearCallTimers() {
    const ids = timerIds;
    const signals = timeoutSignals;
    timerIds = [];
    timeoutSignals = [];
    for (let i = 0; i < ids.length; i++) {
      clearTimeout(ids[i]);
    }
    for (let i = 0; i < signals.length; i++) {
      const timer = signals[i][abortSignal.timerId];
      if (timer !== null) {
        core.cancelTimer(timer);
        signals[i][abortSignal.timerId] = null;
      }
    }
  }

  function url() {
    const exports = load("ext:deno_web/00_url.js");
    // 09_file.js puts blob URLs on URL; a blob URL names memory shared by
    // everything holding the store, so handlers do not get them.
    load("ext:deno_web/09_file.js");
    ReflectDeleteProperty(exports.URL, "createObjectURL");
    ReflectDeleteProperty(exports.URL, "revokeObjectURL");
    return exports;
  }

  function file() {
    url();
    return load("ext:deno_web/09_file.js");
  }

  function performance() {
    const exports = load("ext:deno_web/15_performance.js");
    exports.setTimeOrigin();
    return exports.performance;
  }

  const fromScript = (specifier, name) => () => load(specifier)[name];
  const streams = (name) => fromScript("ext:deno_web/06_streams.js", name);
  const encoding = (name) => fromScript("ext:deno_web/08_text_encoding.js", name);
  const event = (name) => fromScript("ext:deno_web/02_event.js", name);
  const fetchTypes = (script, name) => () => {
    file();
    return load(`ext:deno_fetch/${script}`)[name];
  };
  const value = (v) => () => v;

  // Response.prototype once deno_fetch's Response script is loaded; until then
  // no value can be a Response.
  let responsePrototype = null;

  // Whether a handler's result is a web Response (made by the class, not a
  // look-alike).
  function isWebResponse(value) {
    return responsePrototype !== null && value !== null && typeof value === "object" &&
      ObjectPrototypeIsPrototypeOf(responsePrototype, value);
  }

  // The Request a Workers-style handler gets (90_bootstrap.js): a POST of
  // `bodyText` to `target` with `headers` ([name, value] pairs, each checked as
  // the constructor checks them), built from its parts as Deno's own server
  // builds the requests it receives. The constructor's init conversions cost
  // most of a Workers-style call (bench/RESULTS.md). The URL is parsed, and so
  // normalized, once per distinct string: a tool's calls come to one URL.
  // What it takes from deno_fetch's scripts, looked up on the first call.
  let requestParts = null;
  let requestUrl = { __proto__: null, given: null, href: null };
  function newWebRequest(target, headers, bodyText) {
    if (requestParts === null) {
      file();
      const { fromInnerRequest, newInnerRequest } = load("ext:deno_fetch/23_request.js");
      requestParts = {
        __proto__: null,
        URL: url().URL,
        fromInnerRequest,
        newInnerRequest,
        extractBody: load("ext:deno_fetch/22_body.js").extractBody,
        fillHeaderList: load("ext:deno_fetch/20_headers.js").fillHeaderList,
      };
    }
    const { URL, fromInnerRequest, newInnerRequest, extractBody, fillHeaderList } = requestParts;
    if (requestUrl.given !== target) {
      requestUrl = { __proto__: null, given: target, href: new URL(target).href };
    }
    let headerList = plainHeaderList(headers);
    if (headerList === null) {
      headerList = [];
      fillHeaderList(headerList, headers, "Failed to construct 'Request'", "Argument 2");
    }
    const inner = newInnerRequest(
      "POST",
      requestUrl.href,
      () => headerList,
      extractBody(bodyText).body,
      false,
    );
    return fromInnerRequest(inner, "request");
  }

  // A lower-case HTTP token: a header name the constructor keeps as it is.
  const LOWER_CASE_TOKEN = /^[a-z0-9!#$%&'*+.^_`|~-]+$/;
  // Header names found to be lower-case tokens or not; a tool's callers send
  // the same few. Emptied when it grows past its bound.
  let headerNames = { __proto__: null };
  let headerNamesCount = 0;

  // Whether `value` is a header value the constructor keeps as it is: visible
  // ASCII, spaces and tabs, none of them leading or trailing.
  function isPlainHeaderValue(value) {
    const last = value.length - 1;
    for (let i = 0; i <= last; i++) {
      const c = StringPrototypeCharCodeAt(value, i);
      if (c === 0x20 || c === 0x09 ? i === 0 || i === last : c < 0x21 || c > 0x7e) {
        return false;
      }
    }
    return true;
  }

  // `pairs` as a Request's header list, when every pair is two strings the
  // constructor would take unchanged (a lower-case token, a plain value): the
  // caller's headers the server passes on nearly always are. The checks are
  // the constructor's, without its generic sequence conversion, which cost
  // more than the rest of the Request (bench/RESULTS.md). Otherwise null:
  // then the constructor's own conversion runs and throws its own errors.
  function plainHeaderList(pairs) {
    const list = [];
    for (let i = 0; i < pairs.length; i++) {
      const pair = pairs[i];
      if (!ArrayIsArray(pair) || pair.length !== 2) {
        return null;
      }
      const { 0: name, 1: value } = pair;
      if (typeof name !== "string" || typeof value !== "string") {
        return null;
      }
      let token = headerNames[name];
      if (token === undefined) {
        if (headerNamesCount >= 256) {
          headerNames = { __proto__: null };
          headerNamesCount = 0;
        }
        token = RegExpPrototypeTest(LOWER_CASE_TOKEN, name);
        headerNames[name] = token;
        headerNamesCount++;
      }
      if (!token || !isPlainHeaderValue(value)) {
        return null;
      }
      ArrayPrototypePush(list, [name, value]);
    }
    return list;
  }

  // deno_fetch's, looked up on the first answer that is a Response.
  let responseParts = null;

  // Whether a header list names content-type and content-length only, in any
  // case.
  function onlyContentHeaders(list) {
    for (let i = 0; i < list.length; i++) {
      const name = StringPrototypeToLowerCase(list[i][0]);
      if (name !== "content-type" && name !== "content-length") {
        return false;
      }
    }
    return true;
  }

  // The body text of a Response deno_fetch marked as static (`Response.json`,
  // `new Response(text)`, a status 200 and at most a content type: what
  // Deno's own server sends without reading the Response), marked read; else
  // null. Its header list is then not even built.
  function staticBodyText(response) {
    const { keys, getInnerResponse } = responseParts;
    const text = response[keys.body];
    // Its body as deno_fetch holds it once something read the Response
    // (undefined until then): a stream, or the same text marked read or not.
    const held = getInnerResponse(response).body?.streamOrStatic;
    if (
      response[keys.status] !== 200 || typeof text !== "string" || response[keys.consumed] ||
      (held !== undefined && held.consumed !== false)
    ) {
      return null;
    }
    response[keys.consumed] = true;
    if (held !== undefined) {
      held.consumed = true;
    }
    return text;
  }

  // A web Response as dispatch's answer: its status, its headers but
  // content-type and content-length (the answer is JSON, and its length is the
  // server's to set; every other name goes through the same allow-list as
  // ctx.respond's), and its body, which must be JSON text (an empty one is
  // null).
  async function fromWebResponse(response) {
    if (responseParts === null) {
      // Loaded already: `response` was made by its class (`isWebResponse`).
      const exports = load("ext:deno_fetch/23_response.js");
      responseParts = {
        __proto__: null,
        toInnerResponse: exports.toInnerResponse,
        getInnerResponse: exports.getInnerResponse,
        keys: {
          __proto__: null,
          status: exports.serveFastStatusKey,
          body: exports.serveFastBodyKey,
          consumed: exports.serveFastConsumedKey,
        },
      };
    }
    const status = response.status;
    const headers = [];
    let text = staticBodyText(response);
    if (text === null) {
      const inner = responseParts.toInnerResponse(response);
      // Most Responses carry no header but their content type: then the
      // Headers object (sorted and combined entries) is never built.
      if (!onlyContentHeaders(inner.headerList)) {
        for (const { 0: name, 1: value } of response.headers) {
          if (name !== "content-type" && name !== "content-length") {
            ArrayPrototypePush(headers, ObjectFreeze([name, value]));
          }
        }
      }
      // A body given as a string is taken as it is, and marked read as
      // `text()` would; anything else is read.
      const body = inner.body?.streamOrStatic;
      if (body === undefined) {
        text = "";
      } else if (typeof body.body === "string" && body.consumed === false) {
        body.consumed = true;
        text = body.body;
      } else {
        text = await response.text();
      }
    }
    // Checked to be JSON where it leaves the isolate (sandbox/src/response.rs),
    // not parsed here: QuickJS parses about 36 MB/s, so a 300 KB answer would
    // take 8.5 ms more (bench/RESULTS.md).
    return { __proto__: null, status, headers, body: text === "" ? "null" : text };
  }

  // The globals a handler sees, by name, each with how to get it.
  // 90_bootstrap.js scrubs globalThis, then `installWebGlobals` puts these
  // there.
  const WEB_GLOBALS = {
    __proto__: null,
    URL: () => url().URL,
    URLSearchParams: () => url().URLSearchParams,
    DOMException: fromScript("ext:deno_web/01_dom_exception.js", "DOMException"),
    Event: event("Event"),
    EventTarget: event("EventTarget"),
    CustomEvent: event("CustomEvent"),
    ErrorEvent: event("ErrorEvent"),
    structuredClone: fromScript("ext:deno_web/02_structured_clone.js", "structuredClone"),
    setTimeout: value(setTimeout),
    setInterval: value(setInterval),
    clearTimeout: value(clearTimeout),
    clearInterval: value(clearInterval),
    AbortController: () => webAbortSignal().AbortController,
    AbortSignal: () => webAbortSignal().AbortSignal,
    atob: fromScript("ext:deno_web/05_base64.js", "atob"),
    btoa: fromScript("ext:deno_web/05_base64.js", "btoa"),
    ReadableStream: streams("ReadableStream"),
    ReadableStreamDefaultReader: streams("ReadableStreamDefaultReader"),
    ReadableStreamBYOBReader: streams("ReadableStreamBYOBReader"),
    ReadableStreamBYOBRequest: streams("ReadableStreamBYOBRequest"),
    ReadableByteStreamController: streams("ReadableByteStreamController"),
    ReadableStreamDefaultController: streams("ReadableStreamDefaultController"),
    WritableStream: streams("WritableStream"),
    WritableStreamDefaultWriter: streams("WritableStreamDefaultWriter"),
    WritableStreamDefaultController: streams("WritableStreamDefaultController"),
    TransformStream: streams("TransformStream"),
    TransformStreamDefaultController: streams("TransformStreamDefaultController"),
    ByteLengthQueuingStrategy: streams("ByteLengthQueuingStrategy"),
    CountQueuingStrategy: streams("CountQueuingStrategy"),
    TextEncoder: encoding("TextEncoder"),
    TextDecoder: encoding("TextDecoder"),
    TextEncoderStream: encoding("TextEncoderStream"),
    TextDecoderStream: encoding("TextDecoderStream"),
    Blob: () => file().Blob,
    File: () => file().File,
    Performance: () => {
      performance();
      return load("ext:deno_web/15_performance.js").Performance;
    },
    performance,
    Headers: fetchTypes("20_headers.js", "Headers"),
    FormData: fetchTypes("21_formdata.js", "FormData"),
    Request: fetchTypes("23_request.js", "Request"),
    Response: () => {
      const Response = fetchTypes("23_response.js", "Response")();
      responsePrototype = Response.prototype;
      return Response;
    },
    // 70_fetch.js; present with or without the capability (its ops refuse).
    fetch: () => toolhost.fetch,
  };
  const NAMES = ObjectKeys(WEB_GLOBALS);

  function define(name, value) {
    ObjectDefineProperty(globalThis, name, {
      __proto__: null,
      value,
      writable: true,
      enumerable: false,
      configurable: true,
    });
  }

  // Each global as the web platform has it (writable, configurable, not
  // enumerable), first as an accessor that loads it when read; then `named`
  // (the ones the handler's source names, found by Rust:
  // `web_globals_named` in sandbox/src/ops/web.rs) are read at once, before
  // the handler's module runs.
  function installWebGlobals(named) {
    for (let i = 0; i < NAMES.length; i++) {
      const name = NAMES[i];
      const resolve = WEB_GLOBALS[name];
      ObjectDefineProperty(globalThis, name, {
        __proto__: null,
        get() {
          const value = resolve();
          define(name, value);
          return value;
        },
        set(value) {
          define(name, value);
        },
        enumerable: false,
        configurable: true,
      });
    }
    for (let i = 0; i < named.length; i++) {
      define(named[i], WEB_GLOBALS[named[i]]());
    }
  }

  // What loading a global's scripts ahead of time takes, where that is not
  // resolving it: `performance` would fix its time origin now, the timers
  // and `fetch` load their scripts only when called.
  const PRELOAD = {
    __proto__: null,
    // The engine's, not a web global: its accessor loads the polyfill when
    // read (sandbox/src/ops/web.rs, ENGINE_LAZY_GLOBALS).
    Temporal: () => globalThis.Temporal,
    performance: () => load("ext:deno_web/15_performance.js"),
    Performance: () => load("ext:deno_web/15_performance.js"),
    setTimeout: webTimers,
    setInterval: webTimers,
    clearTimeout: webTimers,
    clearInterval: webTimers,
    // Request too: a Workers-style `{ fetch }` handler gets one per call.
    fetch: () => {
      WEB_GLOBALS.Response();
      WEB_GLOBALS.Request();
      WEB_GLOBALS.AbortSignal();
    },
  };

  // Loads the scripts behind the `named` globals (every global's when null)
  // into a runtime no endpoint has yet, so binding it costs no
  // parsing (sandbox/src/isolate.rs, `WebPreload`). Defines no global:
  // `installWebGlobals` still does, after the scrub, and its loads then find
  // the scripts' exports ready.
  function preloadWebGlobals(names) {
    const named = names ?? NAMES;
    for (let i = 0; i < named.length; i++) {
      const preload = PRELOAD[named[i]] ?? WEB_GLOBALS[named[i]];
      preload();
    }
  }

  toolhost.installWebGlobals = installWebGlobals;
  toolhost.isWebResponse = isWebResponse;
  toolhost.fromWebResponse = fromWebResponse;
  toolhost.newWebRequest = newWebRequest;
  toolhost.preloadWebGlobals = preloadWebGlobals;
  toolhost.webGlobalNames = NAMES;
  toolhost.domException = domException;
  toolhost.webGlobal = (name) => WEB_GLOBALS[name]();
  toolhost.clearCallTimers = clearCallTimers;
})(globalThis);
