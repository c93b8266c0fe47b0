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
  // ctx.log and console behave alike: they write to the invocation's logs when
  // `logs` is granted and do nothing otherwise, so library code written for
  // other runtimes (which logs freely) keeps working. The op still checks the
  // capability itself.
  function sink(enabled, level, maxChars) {
    return enabled ? writer(level, maxChars) : function () {};
  }

  function createLog(enabled, maxChars) {
    const log = sink(enabled, INFO, maxChars);
    log.info = sink(enabled, INFO, maxChars);
    log.warn = sink(enabled, WARN, maxChars);
    log.error = sink(enabled, ERROR, maxChars);
    return ObjectFreeze(log);
  }

  function createConsole(enabled, maxChars) {
    return ObjectFreeze({
      log: sink(enabled, INFO, maxChars),
      info: sink(enabled, INFO, maxChars),
      debug: sink(enabled, INFO, maxChars),
      warn: sink(enabled, WARN, maxChars),
      error: sink(enabled, ERROR, maxChars),
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
