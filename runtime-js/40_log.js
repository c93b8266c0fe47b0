// toolhost runtime glue: ctx.log and console. Paired with
// sandbox/src/ops/log.rs, which checks the `logs` capability and caps lines and
// bytes per invocation.

"use strict";

((globalThis) => {
  const { core, primordials, toolhost } = globalThis.__bootstrap;
  const { op_log_write } = core.ops;
  const {
    ArrayPrototypeJoin,
    ArrayPrototypePush,
    JSONStringify,
    ObjectFreeze,
    String,
    StringPrototypeSlice,
  } = primordials;

  const INFO = 0;
  const WARN = 1;
  const ERROR = 2;

  function formatArg(arg) {
    if (typeof arg === "string") {
      return arg;
    }
    try {
      if (arg !== null && typeof arg === "object" && typeof arg.message === "string" &&
        typeof arg.name === "string") {
        return `${arg.name}: ${arg.message}`;
      }
      const json = JSONStringify(arg);
      return json === undefined ? String(arg) : json;
    } catch {
      try {
        return String(arg);
      } catch {
        return "[unprintable]";
      }
    }
  }

  function format(args) {
    const parts = [];
    for (let i = 0; i < args.length; i++) {
      ArrayPrototypePush(parts, formatArg(args[i]));
    }
    return ArrayPrototypeJoin(parts, " ");
  }

  // `maxChars` is the per-invocation byte budget: a longer message cannot be
  // kept, so it is cut (still over budget, so Rust drops it behind the marker)
  // before being copied out of the isolate.
  function writer(level, maxChars) {
    return function (...args) {
      let message = format(args);
      if (message.length > maxChars) {
        message = StringPrototypeSlice(message, 0, maxChars + 1);
      }
      op_log_write(level, message);
    };
  }

  // ctx.log(...) logs at info; ctx.log.info / .warn / .error pick the level.
  // Without the `logs` capability each call throws `capability_denied`.
  function createLog(maxChars) {
    const log = writer(INFO, maxChars);
    log.info = writer(INFO, maxChars);
    log.warn = writer(WARN, maxChars);
    log.error = writer(ERROR, maxChars);
    return ObjectFreeze(log);
  }

  // A console that writes to the invocation's logs when `logs` is granted and
  // does nothing otherwise (so library code calling console.log keeps working).
  function createConsole(enabled, maxChars) {
    const sink = (level) =>
      enabled ? writer(level, maxChars) : function () {};
    return ObjectFreeze({
      log: sink(INFO),
      info: sink(INFO),
      debug: sink(INFO),
      warn: sink(WARN),
      error: sink(ERROR),
    });
  }

  // deno_core's unhandled-rejection hook: a promise nobody awaited must not fail
  // this invocation or the next one. It is logged (when `logs` is granted) and
  // reported as handled.
  function createRejectionReporter(enabled) {
    return function (_promise, reason) {
      if (enabled) {
        try {
          op_log_write(ERROR, `Uncaught (in promise) ${formatArg(reason)}`);
        } catch {
          // Nothing more to do for a rejection nobody awaited.
        }
      }
      return true;
    };
  }

  toolhost.createConsole = createConsole;
  toolhost.createRejectionReporter = createRejectionReporter;
  toolhost.createLog = createLog;
})(globalThis);
