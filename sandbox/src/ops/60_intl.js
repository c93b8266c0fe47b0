// toolhost runtime glue: Intl. The QuickJS backend has no ECMA-402 engine:
// its Intl is a stand-in whose answers are wrong (PluralRules.select is
// always "other", NumberFormat.format is String(n), DateTimeFormat fails with
// "not a function"). A wrong plural or a number without grouping is worse
// than an error a builder can see, so each Intl service here throws a
// TypeError naming itself. Intl stays an object, so `typeof Intl` checks and
// `Intl.X === undefined` feature tests behave as on a runtime without it.
// Date.prototype.toLocale*String, Number.prototype.toLocaleString and
// String.prototype.localeCompare are the engine's own, locale-independent
// ones (fixed en-US style, code point order). Paired with
// sandbox/src/ops/web.rs.

"use strict";

((globalThis) => {
  const { primordials } = globalThis.__bootstrap;
  const { ObjectDefineProperty, ObjectFreeze, SymbolToStringTag, TypeError } = primordials;

  // The members the engine's stand-in defines (feature tests for others, such
  // as Intl.supportedValuesOf in the Temporal polyfill, keep finding nothing).
  const SERVICES = [
    "Collator", "DateTimeFormat", "DurationFormat", "ListFormat", "Locale",
    "NumberFormat", "PluralRules", "RelativeTimeFormat", "Segmenter",
  ];

  function unsupported(name) {
    return new TypeError(
      `Intl.${name} is not supported in toolhost handlers (no ECMA-402 locale data); ` +
        "format in your own code or in the caller",
    );
  }

  const intl = {};
  for (let i = 0; i < SERVICES.length; i++) {
    const name = SERVICES[i];
    // A named class, so a stack trace and `Intl.X.name` say which one.
    const service = {
      [name]: class {
        constructor() {
          throw unsupported(name);
        }

        static supportedLocalesOf() {
          throw unsupported(name);
        }
      },
    }[name];
    intl[name] = service;
  }
  const FUNCTIONS = ["getCanonicalLocales"];
  for (let i = 0; i < FUNCTIONS.length; i++) {
    const name = FUNCTIONS[i];
    intl[name] = {
      [name]() {
        throw unsupported(name);
      },
    }[name];
  }
  ObjectDefineProperty(intl, SymbolToStringTag, {
    __proto__: null,
    value: "Intl",
    configurable: true,
  });

  ObjectDefineProperty(globalThis, "Intl", {
    __proto__: null,
    value: ObjectFreeze(intl),
    writable: true,
    enumerable: false,
    configurable: true,
  });
})(globalThis);
