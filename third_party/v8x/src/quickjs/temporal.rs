use super::quickjs_sys::*;
use std::ffi::CString;
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;
use temporal_rs::{Instant, TimeZone};
use timezone_provider::zoneinfo64::ZoneInfo64TzdbProvider;

fn provider() -> &'static ZoneInfo64TzdbProvider<'static> {
  static PROVIDER: OnceLock<ZoneInfo64TzdbProvider<'static>> = OnceLock::new();
  PROVIDER.get_or_init(|| {
    ZoneInfo64TzdbProvider::zoneinfo64_provider_for_testing()
      .expect("bundled zoneinfo64 data is invalid")
  })
}

unsafe fn value_to_string(
  ctx: *mut JSContext,
  value: JSValue,
) -> Option<String> {
  let mut len = 0usize;
  let ptr = unsafe { JS_ToCStringLen(ctx, &mut len, value) };
  if ptr.is_null() {
    return None;
  }
  let text = unsafe {
    String::from_utf8_lossy(std::slice::from_raw_parts(ptr as *const u8, len))
      .into_owned()
  };
  unsafe { JS_FreeCString(ctx, ptr) };
  Some(text)
}

unsafe fn set_i32(
  ctx: *mut JSContext,
  object: JSValue,
  name: &std::ffi::CStr,
  value: i32,
) {
  unsafe {
    JS_SetPropertyStr(ctx, object, name.as_ptr(), JS_NewInt32(ctx, value));
  }
}

unsafe fn set_string(
  ctx: *mut JSContext,
  object: JSValue,
  name: &std::ffi::CStr,
  value: &str,
) {
  unsafe {
    JS_SetPropertyStr(
      ctx,
      object,
      name.as_ptr(),
      JS_NewStringLen(ctx, value.as_ptr() as *const c_char, value.len()),
    );
  }
}

unsafe fn throw_range_error(ctx: *mut JSContext, message: &str) -> JSValue {
  let message = CString::new(message).unwrap_or_default();
  unsafe { JS_ThrowRangeError(ctx, c"%s".as_ptr(), message.as_ptr()) }
}

unsafe extern "C" fn format_time_zone(
  ctx: *mut JSContext,
  _this: JSValue,
  argc: c_int,
  argv: *mut JSValue,
) -> JSValue {
  if argc < 2 || argv.is_null() {
    return unsafe {
      JS_ThrowTypeError(
        ctx,
        c"epoch milliseconds and time zone are required".as_ptr(),
      )
    };
  }

  let mut milliseconds = 0.0;
  if unsafe { JS_ToFloat64(ctx, &mut milliseconds, *argv) } < 0 {
    return jsv_exception();
  }
  if !milliseconds.is_finite()
    || milliseconds < i64::MIN as f64
    || milliseconds > i64::MAX as f64
  {
    return unsafe { throw_range_error(ctx, "invalid epoch milliseconds") };
  }
  let Some(identifier) = (unsafe { value_to_string(ctx, *argv.add(1)) }) else {
    return jsv_exception();
  };

  let provider = provider();
  let Ok(time_zone) =
    TimeZone::try_from_identifier_str_with_provider(&identifier, provider)
  else {
    return unsafe {
      throw_range_error(ctx, &format!("invalid time zone: {identifier}"))
    };
  };
  let Ok(primary_time_zone) =
    time_zone.primary_identifier_with_provider(provider)
  else {
    return unsafe {
      throw_range_error(ctx, &format!("invalid time zone: {identifier}"))
    };
  };
  let Ok(canonical_identifier) =
    primary_time_zone.identifier_with_provider(provider)
  else {
    return unsafe {
      throw_range_error(ctx, &format!("invalid time zone: {identifier}"))
    };
  };
  let Ok(instant) =
    Instant::from_epoch_milliseconds(milliseconds.trunc() as i64)
  else {
    return unsafe {
      throw_range_error(ctx, "epoch milliseconds out of range")
    };
  };
  let Ok(zoned) =
    instant.to_zoned_date_time_iso_with_provider(time_zone, provider)
  else {
    return unsafe {
      throw_range_error(ctx, &format!("invalid time zone: {identifier}"))
    };
  };

  let object = unsafe { JS_NewObject(ctx) };
  unsafe {
    set_string(ctx, object, c"timeZone", &canonical_identifier);
    set_string(
      ctx,
      object,
      c"era",
      if zoned.year() <= 0 { "BC" } else { "AD" },
    );
    set_i32(ctx, object, c"year", zoned.year());
    set_i32(ctx, object, c"month", i32::from(zoned.month()));
    set_i32(ctx, object, c"day", i32::from(zoned.day()));
    set_i32(ctx, object, c"hour", i32::from(zoned.hour()));
    set_i32(ctx, object, c"minute", i32::from(zoned.minute()));
    set_i32(ctx, object, c"second", i32::from(zoned.second()));
    JS_SetPropertyStr(
      ctx,
      object,
      c"offsetNanoseconds".as_ptr(),
      JS_NewInt64(ctx, zoned.offset_nanoseconds()),
    );
  }
  object
}

pub(crate) unsafe fn install_host_functions(
  ctx: *mut JSContext,
  global: JSValue,
) {
  let function = unsafe {
    JS_NewCFunction(ctx, format_time_zone, c"__v8xTemporalTimeZone".as_ptr(), 2)
  };
  unsafe {
    super::core::define_internal_global(
      ctx,
      global,
      c"__v8xTemporalTimeZone",
      function,
    );
  }
}

const JS_WRITE_OBJ_BYTECODE: c_int = 1 << 0;
const JS_WRITE_OBJ_STRIP_SOURCE: c_int = 1 << 4;
const JS_READ_OBJ_BYTECODE: c_int = 1 << 0;

/// toolhost: the script is compiled once per process and cached as bytecode without its
/// functions' source text (the polyfill's is 422 KB, which every context evaluating it kept a
/// copy of, for `toString` only; those functions now read as "[native code]", as a built-in
/// `Temporal`'s do in V8); line tables stay, for stack traces. Every context, the first one
/// too, evaluates the cached bytecode, so all read alike.
unsafe fn eval_cached_script(
  ctx: *mut JSContext,
  source: &[u8],
  filename: &std::ffi::CStr,
  cache: &OnceLock<Vec<u8>>,
) -> JSValue {
  if cache.get().is_none() {
    let source = CString::new(source).expect("bootstrap script contains NUL");
    let function = unsafe {
      JS_Eval(
        ctx,
        source.as_ptr(),
        source.as_bytes().len(),
        filename.as_ptr(),
        JS_EVAL_TYPE_GLOBAL | JS_EVAL_FLAG_COMPILE_ONLY,
      )
    };
    if function.tag == JS_TAG_EXCEPTION {
      return function;
    }
    let mut size = 0;
    let bytes = unsafe {
      JS_WriteObject(
        ctx,
        &mut size,
        function,
        JS_WRITE_OBJ_BYTECODE | JS_WRITE_OBJ_STRIP_SOURCE,
      )
    };
    if bytes.is_null() || size == 0 {
      // Not cached: this context runs the script with its source, the next compiles again.
      if !bytes.is_null() {
        unsafe { js_free(ctx, bytes.cast()) };
      }
      return unsafe { JS_EvalFunction(ctx, function) };
    }
    let bytecode = unsafe { std::slice::from_raw_parts(bytes, size) };
    let _ = cache.set(bytecode.to_vec());
    unsafe {
      js_free(ctx, bytes.cast());
      JS_FreeValue(ctx, function);
    }
  }
  let bytes = cache.get().expect("cached above");
  let function = unsafe {
    JS_ReadObject(ctx, bytes.as_ptr(), bytes.len(), JS_READ_OBJ_BYTECODE)
  };
  if function.tag == JS_TAG_EXCEPTION {
    return function;
  }
  unsafe { JS_EvalFunction(ctx, function) }
}

#[repr(C)]
struct JSPropertyDescriptor {
  flags: c_int,
  value: JSValue,
  getter: JSValue,
  setter: JSValue,
}

const JS_PROP_GETSET: c_int = 1 << 4;

unsafe extern "C" {
  fn JS_GetOwnProperty(
    ctx: *mut JSContext,
    desc: *mut JSPropertyDescriptor,
    obj: JSValue,
    prop: JSAtom,
  ) -> c_int;
  fn JS_DefinePropertyValueStr(
    ctx: *mut JSContext,
    this_obj: JSValue,
    prop: *const c_char,
    val: JSValue,
    flags: c_int,
  ) -> c_int;
}

/// toolhost: `Temporal` is an accessor until first read, which evaluates the polyfill (about
/// 880 functions, a megabyte of the context's heap) and leaves the global a data property: a
/// context that never touches `Temporal` never pays for it. Assigning it first replaces it,
/// as assigning a writable global does.
pub(crate) unsafe fn install(ctx: *mut JSContext, global: JSValue) {
  let name = unsafe { JS_NewAtom(ctx, c"Temporal".as_ptr()) };
  let present = unsafe { JS_HasProperty(ctx, global, name) } != 0;
  if !present {
    let getter = unsafe {
      JS_NewCFunction(ctx, load_temporal, c"get Temporal".as_ptr(), 0)
    };
    let setter = unsafe {
      JS_NewCFunction(ctx, replace_temporal, c"set Temporal".as_ptr(), 1)
    };
    unsafe {
      JS_DefinePropertyGetSet(
        ctx,
        global,
        name,
        getter,
        setter,
        JS_PROP_CONFIGURABLE,
      )
    };
  }
  unsafe { JS_FreeAtom(ctx, name) };
}

/// toolhost: takes the `Temporal` accessor [`install`] left off `global` while it has not been
/// read, before a snapshot captures the global (its native functions are not in the
/// snapshot's references); a context restored from the snapshot gets its own from [`install`].
pub(crate) unsafe fn detach_unloaded(ctx: *mut JSContext, global: JSValue) {
  let name = unsafe { JS_NewAtom(ctx, c"Temporal".as_ptr()) };
  let mut desc = JSPropertyDescriptor {
    flags: 0,
    value: jsv_undefined(),
    getter: jsv_undefined(),
    setter: jsv_undefined(),
  };
  if unsafe { JS_GetOwnProperty(ctx, &mut desc, global, name) } == 1 {
    if desc.flags & JS_PROP_GETSET != 0 {
      unsafe { JS_DeleteProperty(ctx, global, name, 0) };
    }
    unsafe {
      JS_FreeValue(ctx, desc.value);
      JS_FreeValue(ctx, desc.getter);
      JS_FreeValue(ctx, desc.setter);
    }
  }
  unsafe { JS_FreeAtom(ctx, name) };
}

/// The `Temporal` accessor's getter: the global becomes a data property (`undefined` should
/// the polyfill fail, so no read comes back here), the polyfill is evaluated, and its value is
/// the answer; a failure to evaluate it is thrown to the reader.
unsafe extern "C" fn load_temporal(
  ctx: *mut JSContext,
  _this: JSValue,
  _argc: c_int,
  _argv: *mut JSValue,
) -> JSValue {
  let global = unsafe { JS_GetGlobalObject(ctx) };
  let flags = JS_PROP_CONFIGURABLE | JS_PROP_WRITABLE;
  let replaced = unsafe {
    JS_DefinePropertyValueStr(
      ctx,
      global,
      c"Temporal".as_ptr(),
      jsv_undefined(),
      flags,
    )
  };
  if replaced < 0 {
    unsafe { JS_FreeValue(ctx, global) };
    return jsv_exception();
  }
  let loaded = unsafe { evaluate(ctx) };
  let value = if loaded.tag == JS_TAG_EXCEPTION {
    loaded
  } else {
    unsafe { JS_FreeValue(ctx, loaded) };
    unsafe { JS_GetPropertyStr(ctx, global, c"Temporal".as_ptr()) }
  };
  unsafe { JS_FreeValue(ctx, global) };
  value
}

/// The `Temporal` accessor's setter: the receiver gets a data property of the value.
unsafe extern "C" fn replace_temporal(
  ctx: *mut JSContext,
  this: JSValue,
  argc: c_int,
  argv: *mut JSValue,
) -> JSValue {
  let value = if argc > 0 {
    unsafe { JS_DupValue(ctx, *argv) }
  } else {
    jsv_undefined()
  };
  let flags = JS_PROP_CONFIGURABLE | JS_PROP_WRITABLE;
  if unsafe {
    JS_DefinePropertyValueStr(ctx, this, c"Temporal".as_ptr(), value, flags)
  } < 0
  {
    return jsv_exception();
  }
  jsv_undefined()
}

/// toolhost: the `Intl` the polyfill sees. It finds a time zone's offsets by formatting
/// instants with `Intl.DateTimeFormat("en-us", { timeZone, hour12: false, era: "short",
/// year, month, day, hour, minute, second: "numeric" })` and reading the numbers back, and
/// canonicalizes a zone's name from `resolvedOptions().timeZone`; an engine without
/// ECMA-402 data answers those from the binding's own zone data (`format_time_zone`, held
/// here, not as a global a host may remove). Anything else (a locale's formatting) is the
/// global `Intl.DateTimeFormat`'s, whatever that is when it is asked.
const PRIVATE_INTL: &[u8] = br#"
  (function (timeZoneParts) {
    "use strict";
    const ZONE_OPTIONS = ["timeZone", "hour12", "era", "year", "month", "day", "hour", "minute", "second"];
    function forZoneLookup(locales, options) {
      if (String(locales).toLowerCase() !== "en-us" || options === null || typeof options !== "object") return false;
      const keys = Object.keys(options);
      if (keys.length !== ZONE_OPTIONS.length) return false;
      for (const key of ZONE_OPTIONS) if (!(key in options)) return false;
      return options.hour12 === false && options.era === "short" &&
        ["year", "month", "day", "hour", "minute", "second"].every((k) => options[k] === "numeric");
    }
    function pad2(n) { return String(n).padStart(2, "0"); }
    class DateTimeFormat {
      #locales; #options; #zone; #lookup;
      constructor(locales, options) {
        this.#locales = locales;
        this.#options = options;
        this.#lookup = forZoneLookup(locales, options);
        const zone = options !== undefined && options !== null && options.timeZone !== undefined
          ? String(options.timeZone) : "UTC";
        this.#zone = timeZoneParts(0, zone).timeZone;
      }
      resolvedOptions() {
        return { locale: "en-US", calendar: "iso8601", numberingSystem: "latn", timeZone: this.#zone };
      }
      format(date) {
        if (!this.#lookup) return new globalThis.Intl.DateTimeFormat(this.#locales, this.#options).format(date);
        const p = timeZoneParts(date === undefined ? Date.now() : Number(date), this.#zone);
        // The era's year, as en-US writes it: ISO year 0 is 1 BC.
        const year = p.year <= 0 ? 1 - p.year : p.year;
        return p.month + "/" + p.day + "/" + year + " " + p.era + ", " +
          pad2(p.hour) + ":" + pad2(p.minute) + ":" + pad2(p.second);
      }
      formatToParts(date) {
        return new globalThis.Intl.DateTimeFormat(this.#locales, this.#options).formatToParts(date);
      }
    }
    return Object.freeze({ __proto__: null, DateTimeFormat });
  })
"#;

/// The private `Intl` of [`PRIVATE_INTL`], made for this context.
unsafe fn private_intl(ctx: *mut JSContext) -> JSValue {
  static BYTECODE: OnceLock<Vec<u8>> = OnceLock::new();
  let factory = unsafe {
    eval_cached_script(ctx, PRIVATE_INTL, c"<temporal-intl>", &BYTECODE)
  };
  if factory.tag == JS_TAG_EXCEPTION {
    return factory;
  }
  let zones = unsafe {
    JS_NewCFunction(ctx, format_time_zone, c"timeZoneParts".as_ptr(), 2)
  };
  let mut args = [zones];
  let intl =
    unsafe { JS_Call(ctx, factory, jsv_undefined(), 1, args.as_mut_ptr()) };
  unsafe {
    JS_FreeValue(ctx, zones);
    JS_FreeValue(ctx, factory);
  }
  intl
}

/// Evaluates the polyfill and installs its `Temporal` on the global object; the exception if
/// either throws.
unsafe fn evaluate(ctx: *mut JSContext) -> JSValue {
  let intl = unsafe { private_intl(ctx) };
  if intl.tag == JS_TAG_EXCEPTION {
    return intl;
  }
  // toolhost: the polyfill is evaluated as the body of a function whose parameter `Intl` is
  // the private one, so its time zone lookups (which capture `Intl.DateTimeFormat` when the
  // polyfill is evaluated) find a working one whatever the global `Intl` is by then.
  const POLYFILL: &[u8] =
    include_bytes!("../../vendor/temporal-polyfill/index.umd.js");
  static WRAPPED: OnceLock<Vec<u8>> = OnceLock::new();
  static POLYFILL_BYTECODE: OnceLock<Vec<u8>> = OnceLock::new();
  let source = WRAPPED
    .get_or_init(|| [&b"(function (Intl) {\n"[..], POLYFILL, b"\n})"].concat());
  let wrapper = unsafe {
    eval_cached_script(ctx, source, c"<temporal-polyfill>", &POLYFILL_BYTECODE)
  };
  if wrapper.tag == JS_TAG_EXCEPTION {
    unsafe { JS_FreeValue(ctx, intl) };
    return wrapper;
  }
  let global = unsafe { JS_GetGlobalObject(ctx) };
  let mut args = [intl];
  let result = unsafe { JS_Call(ctx, wrapper, global, 1, args.as_mut_ptr()) };
  unsafe {
    JS_FreeValue(ctx, global);
    JS_FreeValue(ctx, wrapper);
    JS_FreeValue(ctx, intl);
  }
  if result.tag == JS_TAG_EXCEPTION {
    return result;
  }
  unsafe { JS_FreeValue(ctx, result) };

  const INSTALL: &[u8] = br#"
    (function(g) {
      const implementation = g.temporal;
      if (!implementation || !implementation.Temporal) return;
      const temporal = {};
      for (const name of Object.getOwnPropertyNames(implementation.Temporal)) {
        Object.defineProperty(temporal, name, {
          value: implementation.Temporal[name],
          writable: true,
          configurable: true
        });
      }
      Object.defineProperty(temporal, Symbol.toStringTag, {
        value: "Temporal",
        configurable: true
      });
      Object.defineProperty(g, "Temporal", {
        value: temporal,
        writable: true,
        configurable: true
      });
      // toolhost: `Intl.DateTimeFormat` and `Date.prototype.toTemporalInstant` are left
      // as they are: contexts restored from a snapshot never had the polyfill's (the
      // intrinsics are restored fresh), and they should not change when `Temporal` is read.
      delete g.temporal;
    })(globalThis);
  "#;
  static INSTALL_BYTECODE: OnceLock<Vec<u8>> = OnceLock::new();
  unsafe {
    eval_cached_script(ctx, INSTALL, c"<temporal-install>", &INSTALL_BYTECODE)
  }
}
