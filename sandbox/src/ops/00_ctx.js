// toolhost runtime glue: helpers shared by the ctx areas, and ctx.respond.
// Paired with sandbox/src/ops/bootstrap.rs and sandbox/src/response.rs.
//
// The glue files are classic scripts run in this order when the isolate is
// built, before any handler code. Each takes the ops it needs from
// `__bootstrap.core.ops` and the builtins from `primordials` (copies made at
// startup), so a handler that patches Object.prototype or JSON cannot change
// how the glue behaves, and shares its functions with 90_bootstrap.js through
// `__bootstrap.toolhost`. 90_bootstrap.js deletes `__bootstrap` and `Deno`.

"use strict";

((globalThis) => {
  const { primordials } = globalThis.__bootstrap;
  const {
    ArrayIsArray,
    ArrayPrototypePush,
    Error,
    JSONStringify,
    MathRound,
    NumberIsFinite,
    NumberIsInteger,
    ObjectFreeze,
    ObjectKeys,
    RangeError,
    SafeWeakSet,
    String,
    StringPrototypeSlice,
    TypeError,
    WeakSetPrototypeAdd,
    WeakSetPrototypeHas,
  } = primordials;

  const responses = new SafeWeakSet();

  // The message of a thrown value, without a stack (stacks can carry paths).
  function errorMessage(err) {
    try {
      if (err !== null && typeof err === "object") {
        const message = err.message;
        if (typeof message === "string") {
          return message;
        }
      }
      return String(err);
    } catch {
      return "the handler threw a value that cannot be printed";
    }
  }

  // The `stack` of a thrown Error, or "". Rust keeps only the frames in the
  // handler's own module (sandbox/src/trace.rs), for the endpoint's owner.
  function errorStack(err) {
    try {
      if (err !== null && typeof err === "object") {
        const stack = err.stack;
        if (typeof stack === "string") {
          return stack;
        }
      }
    } catch {
      // A throwing getter: no stack.
    }
    return "";
  }

  // The string `code` property of a thrown value, or "".
  function errorCode(err) {
    try {
      if (err !== null && typeof err === "object") {
        const code = err.code;
        if (typeof code === "string") {
          return code;
        }
      }
    } catch {
      // A throwing getter: no code.
    }
    return "";
  }

  // The integer `status` of a thrown value when it is in 400..=499 (the
  // handler refuses the caller's request: sandbox/src/response.rs), else 0.
  // Any other status, or a getter that throws, leaves the error a 500.
  function errorStatus(err) {
    try {
      if (err !== null && typeof err === "object") {
        const status = err.status;
        if (NumberIsInteger(status) && status >= 400 && status <= 499) {
          return status;
        }
      }
    } catch {
      // A throwing getter: no status.
    }
    return 0;
  }

  // JSON text of `value`; `undefined` becomes "null". Throws a TypeError naming
  // `what` when the value cannot be serialized (cycles, BigInt).
  function toJsonText(value, what) {
    let text;
    try {
      text = JSONStringify(value);
    } catch (err) {
      throw new TypeError(`${what} is not JSON-serializable: ${errorMessage(err)}`);
    }
    return text === undefined ? "null" : text;
  }

  // ctx.respond(status, body, headers?): a response with a chosen status and
  // headers. The header allow-list is enforced in Rust (src/response.rs).
  function respond(status, body, headers) {
    if (!NumberIsInteger(status) || status < 200 || status > 599) {
      const err = new RangeError("ctx.respond: status must be an integer in 200..599");
      err.code = "invalid_handler_response";
      throw err;
    }
    const list = [];
    if (headers !== undefined && headers !== null) {
      if (typeof headers !== "object" || ArrayIsArray(headers)) {
        throw new TypeError("ctx.respond: headers must be an object of strings");
      }
      const names = ObjectKeys(headers);
      for (let i = 0; i < names.length; i++) {
        const value = headers[names[i]];
        if (typeof value !== "string") {
          throw new TypeError(`ctx.respond: header ${names[i]} must be a string`);
        }
        ArrayPrototypePush(list, ObjectFreeze([names[i], value]));
      }
    }
    const response = ObjectFreeze({ status, body, headers: ObjectFreeze(list) });
    WeakSetPrototypeAdd(responses, response);
    return response;
  }

  // Whether `value` was made by ctx.respond (a look-alike object is a plain body).
  function isResponse(value) {
    return value !== null && typeof value === "object" &&
      WeakSetPrototypeHas(responses, value);
  }

  // The most one ctx.charge may report (USD), far above any price: it keeps
  // the sum of a call's reports an exact integer of atomic units.
  const MAX_CHARGE_USD = 1e6;
  const MAX_NOTE_CHARS = 200;

  // ctx.charge(amountUsd, {units, note}?): what a metered call cost, added up
  // over the call. The server caps the sum by the payer's signed maximum and
  // the endpoint's priceUsd and settles it after success (a fixed-price
  // endpoint ignores it and tells its owner). Amounts are rounded to the
  // nearest millionth of a dollar (one USDC atomic unit); `units` (of the
  // endpoint's metered unit) are summed for the receipt; the last `note` is
  // kept. The isolate runs one call at a time: a charge counts toward the
  // call running when it is made, and throws when none is.
  function createMeter() {
    let open = false;
    let reported = false;
    let amountUnits = 0;
    let units = 0;
    let note = "";
    function charge(amountUsd, options) {
      if (!open) {
        throw new Error("ctx.charge: no call is running (charge before the handler returns)");
      }
      if (typeof amountUsd !== "number" || !NumberIsFinite(amountUsd) ||
          amountUsd < 0 || amountUsd > MAX_CHARGE_USD) {
        throw new RangeError(`ctx.charge: amountUsd must be a number from 0 to ${MAX_CHARGE_USD}`);
      }
      let given = 0;
      let text = "";
      if (options !== undefined && options !== null) {
        if (typeof options !== "object") {
          throw new TypeError("ctx.charge: options must be an object {units, note}");
        }
        const u = options.units;
        if (u !== undefined) {
          if (typeof u !== "number" || !NumberIsFinite(u) || u < 0) {
            throw new RangeError("ctx.charge: units must be a finite number of at least 0");
          }
          given = u;
        }
        const n = options.note;
        if (n !== undefined) {
          if (typeof n !== "string") {
            throw new TypeError("ctx.charge: note must be a string");
          }
          text = StringPrototypeSlice(n, 0, MAX_NOTE_CHARS);
        }
      }
      amountUnits += MathRound(amountUsd * 1e6);
      units += given;
      if (text !== "") {
        note = text;
      }
      reported = true;
    }
    // Opens the meter for a call.
    function begin() {
      open = true;
      reported = false;
      amountUnits = 0;
      units = 0;
      note = "";
    }
    // Closes it: what the call reported (`Usage` in sandbox/src/invocation.rs), or null.
    function end() {
      open = false;
      return reported ? { __proto__: null, amountUnits, units, note } : null;
    }
    return { __proto__: null, charge, begin, end };
  }

  // Shared with the later glue files through __bootstrap (removed by 90_bootstrap.js).
  globalThis.__bootstrap.toolhost = {
    createMeter,
    errorCode,
    errorMessage,
    errorStack,
    errorStatus,
    isResponse,
    respond,
    toJsonText,
  };
})(globalThis);
