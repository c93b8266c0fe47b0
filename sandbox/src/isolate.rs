//! One handler isolate, in two steps: a [`Blank`] runtime (restored from the startup snapshot:
//! deno_core plus the toolhost glue, no endpoint yet), then [`Blank::bind`] gives it to one
//! endpoint for good (op state, `setup` with the endpoint's env, which scrubs the globals, and
//! the endpoint's module). The bound [`Isolate`] runs invocations through the glue's `dispatch`.
//! Lives on one worker thread.

use std::future::Future;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use deno_core::error::{CoreError, CoreErrorKind};
use deno_core::futures::FutureExt;
use deno_core::{serde_v8, v8, JsRuntime, ModuleSpecifier, PollEventLoopOptions, RuntimeOptions};
use serde_json::value::RawValue;

use crate::invocation::RawBody;
use crate::limits::deadline::Progress;
use crate::limits::{heap, throttle, timeout::Watchdog};
use crate::loader::{HandlerOnlyLoader, HANDLER_SPECIFIER};
use crate::ops::log::LogBuffer;
use crate::ops::web::{engine_globals_named, web_globals_named};
use crate::ops::{self, EndpointState, InvocationClock};
use crate::response::{Answer, Outcome};
use crate::snapshot;
use crate::{
    ConsoleLine, EndpointCode, HandlerResponse, Host, Limits, Overload, PoolConfig, SandboxError,
    SourceTrace,
};

/// What the isolate needs from the pool to build itself and to run invocations.
pub(crate) struct IsolateEnv<'a> {
    pub(crate) config: &'a PoolConfig,
    pub(crate) host: &'a Arc<dyn Host>,
    pub(crate) watchdog: &'a Watchdog,
    /// The worker thread's progress, for the caller's hard deadline.
    pub(crate) progress: &'a Progress,
}

pub(crate) struct Isolate {
    runtime: JsRuntime,
    /// `dispatch(handler, requestJson)` from `90_bootstrap.js`.
    dispatch: v8::Global<v8::Function>,
    /// The module's default export.
    handler: v8::Global<v8::Value>,
    heap_exceeded: Arc<AtomicBool>,
    limits: Limits,
    invocations: u64,
}

/// The end of one invocation.
pub(crate) struct Finished {
    pub(crate) result: Result<HandlerResponse<RawBody>, SandboxError>,
    pub(crate) logs: Vec<ConsoleLine>,
    /// `false` when the isolate hit a limit or is in an unknown state and must be dropped.
    pub(crate) reusable: bool,
    /// Where a thrown error arose in the handler's source.
    pub(crate) trace: Option<SourceTrace>,
}

/// Why an isolate could not be bound; `trace` says where when the module is at fault.
#[derive(Clone, Debug)]
pub(crate) struct BindError {
    pub(crate) error: SandboxError,
    pub(crate) trace: Option<SourceTrace>,
}

impl From<SandboxError> for BindError {
    fn from(error: SandboxError) -> Self {
        BindError { error, trace: None }
    }
}

/// Which web scripts a blank runtime loads while it waits for its endpoint, so that binding it
/// parses none of them (docs/handler-platform.md, "Spares").
#[derive(Clone, Debug)]
pub(crate) enum WebPreload {
    /// None: the endpoint's isolate loads what its source names when it binds.
    Nothing,
    /// Every web global's: a spare for whichever endpoint that uses them comes next.
    Every,
    /// These globals' ([`lazy_globals_named`] of a known endpoint's source: web globals and the
    /// engine's lazy ones): its next isolate.
    ///
    /// [`lazy_globals_named`]: crate::ops::web::lazy_globals_named
    Named(Vec<&'static str>),
}

/// A runtime with the glue loaded but no endpoint yet: the expensive half of an isolate, made
/// ahead of time by idle threads (spares, and workers that just recycled) so a cold start only
/// binds. It never ran any handler code, so binding it to any endpoint is safe; the web scripts
/// it may have loaded ([`WebPreload`]) are Deno's, run with no endpoint's data.
pub(crate) struct Blank {
    runtime: JsRuntime,
    setup: v8::Global<v8::Function>,
    heap_exceeded: Arc<AtomicBool>,
    heap_bytes: usize,
}

impl Blank {
    pub(crate) fn new(heap_bytes: usize, preload: WebPreload) -> Result<Blank, SandboxError> {
        let specifier = handler_specifier()?;
        let mut runtime = JsRuntime::try_new(RuntimeOptions {
            // Blobs may hold as many bytes again as the heap.
            extensions: ops::extensions(heap_bytes),
            startup_snapshot: snapshot::startup_snapshot(),
            module_loader: Some(Rc::new(HandlerOnlyLoader::new(specifier))),
            create_params: Some(heap::create_params(heap_bytes)),
            ..Default::default()
        })
        .map_err(|err| SandboxError::Internal(format!("cannot create isolate: {err}")))?;
        let heap_exceeded = heap::install(&mut runtime);
        let setup = runtime
            .execute_script(
                "ext:toolhost/setup",
                "globalThis.__bootstrap.toolhost.setup",
            )
            .map_err(|err| SandboxError::Internal(format!("runtime glue is missing: {err}")))?;
        let setup = function(&mut runtime, setup)
            .ok_or_else(|| SandboxError::Internal("runtime glue has no setup".to_owned()))?;
        preload_web_globals(&mut runtime, preload)?;
        Ok(Blank {
            runtime,
            setup,
            heap_exceeded,
            heap_bytes,
        })
    }

    /// The heap limit the runtime was created with (it cannot change afterwards).
    pub(crate) fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }

    /// Gives the runtime to `code`'s endpoint: its capabilities and env, then its module,
    /// evaluated under the endpoint's time limit.
    pub(crate) async fn bind(
        self,
        code: &Arc<EndpointCode>,
        env: &IsolateEnv<'_>,
    ) -> Result<Isolate, BindError> {
        let Blank {
            mut runtime,
            setup,
            heap_exceeded,
            heap_bytes: _,
        } = self;
        let limits = code.limits.unwrap_or(env.config.default_limits);
        // `performance.now()` counts from deno_web's start time, set when the runtime was
        // built; a blank may have waited long since, and how long would tell a handler when
        // the pool last had a cold start. The endpoint's time origin is now.
        runtime
            .op_state()
            .borrow_mut()
            .put(deno_web::StartTime::default());
        runtime.op_state().borrow_mut().put(EndpointState {
            code: code.clone(),
            host: env.host.clone(),
            storage: env.config.storage,
            max_http_timeout: env.config.max_http_timeout,
            fetch: env.config.fetch,
            call: std::cell::Cell::new(crate::NO_CALL),
        });
        let setup_config = serde_json::json!({
            "env": code.env,
            "logs": code.capabilities.logs,
            "maxResultBytes": env.config.max_result_bytes,
            "maxLogBytes": env.config.max_log_bytes_per_invocation,
            "webGlobals": web_globals_named(&code.source),
            "engineGlobals": engine_globals_named(&code.source),
        })
        .to_string();
        let arg = string_value(&mut runtime, &setup_config)?;
        let dispatch = runtime.call_with_args(&setup, &[arg]);
        let dispatch = runtime
            .with_event_loop_promise(dispatch, PollEventLoopOptions::default())
            .await
            .map_err(|err| SandboxError::Internal(format!("runtime glue setup failed: {err}")))?;
        let dispatch = function(&mut runtime, dispatch).ok_or_else(|| {
            SandboxError::Internal("runtime glue returned no dispatcher".to_owned())
        })?;

        let deadline = Instant::now() + limits.timeout;
        let alarm = env
            .watchdog
            .arm(deadline, runtime.v8_isolate().thread_safe_handle());
        env.progress.run_until(deadline, &heap_exceeded);
        let loaded = tokio::time::timeout_at(
            deadline.into(),
            load_module(&mut runtime, code.source.clone()),
        )
        .await;
        let fired = alarm.fired();
        drop(alarm);
        if heap_exceeded.load(Ordering::Acquire) {
            return Err(heap_limit().into());
        }
        let handler = match loaded {
            _ if fired => return Err(SandboxError::Timeout.into()),
            Err(_elapsed) => return Err(SandboxError::Timeout.into()),
            Ok(Err(err)) => {
                return Err(BindError {
                    error: SandboxError::CompileError(describe(&err)),
                    trace: match &*err.0 {
                        CoreErrorKind::Js(js) => SourceTrace::from_js_error(js),
                        _ => None,
                    },
                })
            }
            Ok(Ok(handler)) => handler,
        };
        Ok(Isolate {
            runtime,
            dispatch,
            handler,
            heap_exceeded,
            limits,
            invocations: 0,
        })
    }
}

impl Isolate {
    pub(crate) fn invocations(&self) -> u64 {
        self.invocations
    }

    /// Runs one invocation under the time limit; logs are collected even when it fails.
    pub(crate) async fn invoke(
        &mut self,
        request: &RawValue,
        call: u64,
        env: &IsolateEnv<'_>,
    ) -> Finished {
        self.invocations += 1;
        let started = Instant::now();
        let deadline = started + self.limits.timeout;
        {
            let state = self.runtime.op_state();
            let mut state = state.borrow_mut();
            state.borrow::<EndpointState>().call.set(call);
            state.put(InvocationClock { started, deadline });
            ops::fetch::begin_call(&mut state);
            state.put(LogBuffer::new(
                env.config.max_log_lines,
                env.config.max_log_bytes_per_invocation,
            ));
        }
        let (result, reusable, trace) = self.run(request, deadline, env).await;
        {
            let state = self.runtime.op_state();
            let mut state = state.borrow_mut();
            ops::fetch::end_call(&mut state);
            state.borrow::<EndpointState>().call.set(crate::NO_CALL);
        }
        let logs = self
            .runtime
            .op_state()
            .borrow_mut()
            .try_take::<LogBuffer>()
            .map(LogBuffer::into_lines)
            .unwrap_or_default();
        Finished {
            result,
            logs,
            reusable,
            trace,
        }
    }

    async fn run(
        &mut self,
        request: &RawValue,
        deadline: Instant,
        env: &IsolateEnv<'_>,
    ) -> (
        Result<HandlerResponse<RawBody>, SandboxError>,
        bool,
        Option<SourceTrace>,
    ) {
        let request = match string_value(&mut self.runtime, request.get()) {
            Ok(request) => request,
            Err(err) => return (Err(err), true, None),
        };
        let alarm = env
            .watchdog
            .arm(deadline, self.runtime.v8_isolate().thread_safe_handle());
        env.progress.run_until(deadline, &self.heap_exceeded);
        // A heavy builder's thread pays for what its calls before this one used, or the call
        // is refused if that would take over half its time limit (nothing of it has run).
        if let Err(owed) = throttle::before_handler(deadline) {
            let refused = SandboxError::Overloaded {
                retry_after_secs: owed.as_secs() + u64::from(owed.subsec_nanos() > 0),
                why: Overload::HeavyCpuBudget,
            };
            return (Err(refused), true, None);
        }
        let call = self
            .runtime
            .call_with_args(&self.dispatch, &[self.handler.clone(), request]);
        let settled =
            tokio::time::timeout_at(deadline.into(), settle(&mut self.runtime, call)).await;
        let fired = alarm.fired();
        drop(alarm);
        if self.heap_exceeded.load(Ordering::Acquire) {
            return (Err(heap_limit()), false, None);
        }
        match settled {
            _ if fired => (Err(SandboxError::Timeout), false, None),
            Err(_elapsed) => (Err(SandboxError::Timeout), false, None),
            // A promise that can never settle (nothing left in the event loop that could
            // settle it) ends the call at once, and leaves the isolate as idle as any ended
            // call: it serves on. Dropping it would make each such call a cold start and a
            // dropped isolate, which a builder could repeat hundreds of times a second to
            // churn its worker.
            Ok(Err(err)) => {
                let idle = matches!(&*err.0, CoreErrorKind::PendingPromiseResolution);
                (Err(classify(&err)), idle, None)
            }
            Ok(Ok(value)) => match decode_outcome(&mut self.runtime, value) {
                Ok(outcome) => {
                    let trace = outcome.trace();
                    let result = outcome.into_response(env.config.max_result_bytes);
                    (result, true, trace)
                }
                Err(err) => (Err(err), false, None),
            },
        }
    }
}

/// `JsRuntime::with_event_loop_promise`, except that the promise is looked at again after each
/// turn of the event loop. A turn whose microtasks settle it can still end `Pending` on a timer
/// the call cancelled (ops/50_web.js cancels a call's timers as it ends), and deno_core
/// would then wait for a wake-up that never comes instead of seeing the settled promise.
async fn settle<E>(
    runtime: &mut JsRuntime,
    mut promise: impl Future<Output = Result<v8::Global<v8::Value>, E>> + Unpin,
) -> Result<v8::Global<v8::Value>, CoreError>
where
    CoreError: From<E>,
{
    std::future::poll_fn(|cx| {
        if let Poll::Ready(settled) = promise.poll_unpin(cx) {
            return Poll::Ready(settled.map_err(CoreError::from));
        }
        let turn = runtime.poll_event_loop(cx, PollEventLoopOptions::default());
        if let Poll::Ready(settled) = promise.poll_unpin(cx) {
            return Poll::Ready(settled.map_err(CoreError::from));
        }
        match turn {
            Poll::Ready(Ok(())) => {
                Poll::Ready(Err(CoreErrorKind::PendingPromiseResolution.into_box()))
            }
            Poll::Ready(Err(err)) => Poll::Ready(Err(err)),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// Loads and evaluates the handler module and returns its default export.
async fn load_module(
    runtime: &mut JsRuntime,
    source: String,
) -> Result<v8::Global<v8::Value>, CoreError> {
    let specifier = ModuleSpecifier::parse(HANDLER_SPECIFIER)?;
    let id = runtime
        .load_main_es_module_from_code(&specifier, source)
        .await?;
    let evaluated = runtime.mod_evaluate(id);
    runtime
        .run_event_loop(PollEventLoopOptions::default())
        .await?;
    evaluated.await?;
    let namespace = runtime.get_module_namespace(id)?;
    deno_core::scope!(scope, runtime);
    let namespace = v8::Local::new(scope, namespace);
    let key = v8::String::new(scope, "default").expect("short string");
    match namespace.get(scope, key.into()) {
        Some(handler) if handler.is_function() || has_fetch_method(scope, handler) => {
            Ok(v8::Global::new(scope, handler))
        }
        _ => Err(CoreErrorKind::JsBox(deno_error::JsErrorBox::type_error(
            "the module must `export default` a function, or an object with a `fetch` method \
             (Workers style)",
        ))
        .into_box()),
    }
}

/// Whether `value` is a Workers-style handler, an object whose `fetch` is a function
/// (`export default { async fetch(request, env, ctx) { ... } }`). Reading `fetch` may run a
/// getter: the module load's time limit covers it, and a throwing one reads as no method.
fn has_fetch_method(scope: &mut v8::PinScope, value: v8::Local<v8::Value>) -> bool {
    let Ok(object) = v8::Local::<v8::Object>::try_from(value) else {
        return false;
    };
    let key = v8::String::new(scope, "fetch").expect("short string");
    object
        .get(scope, key.into())
        .is_some_and(|fetch| fetch.is_function())
}

fn handler_specifier() -> Result<ModuleSpecifier, SandboxError> {
    ModuleSpecifier::parse(HANDLER_SPECIFIER).map_err(|err| SandboxError::Internal(err.to_string()))
}

fn heap_limit() -> SandboxError {
    SandboxError::ResourceLimit("heap limit exceeded".to_owned())
}

/// An error that escaped `dispatch` (which catches everything a handler throws).
fn classify(err: &CoreError) -> SandboxError {
    match &*err.0 {
        CoreErrorKind::PendingPromiseResolution => SandboxError::Timeout,
        CoreErrorKind::Js(_) => SandboxError::HandlerError(describe(err)),
        _ => SandboxError::Internal(err.to_string()),
    }
}

/// A one-line message for the builder, without stack frames.
fn describe(err: &CoreError) -> String {
    match &*err.0 {
        CoreErrorKind::Js(js) => js
            .exception_message
            .strip_prefix("Uncaught ")
            .unwrap_or(&js.exception_message)
            .to_owned(),
        CoreErrorKind::JsBox(err) => err.to_string(),
        _ => err.to_string(),
    }
}

/// Runs the glue's `preloadWebGlobals` (ops/50_web.js) for `preload`.
fn preload_web_globals(runtime: &mut JsRuntime, preload: WebPreload) -> Result<(), SandboxError> {
    let names = match preload {
        WebPreload::Nothing => return Ok(()),
        WebPreload::Every => None,
        WebPreload::Named(names) => Some(names),
    };
    let failed = |err: &dyn std::fmt::Display| {
        SandboxError::Internal(format!("cannot preload the web globals: {err}"))
    };
    let preload = runtime
        .execute_script(
            "ext:toolhost/preload",
            "globalThis.__bootstrap.toolhost.preloadWebGlobals",
        )
        .map_err(|err| failed(&err))?;
    let preload = function(runtime, preload).ok_or_else(|| failed(&"not a function"))?;
    let arg = {
        deno_core::scope!(scope, runtime);
        let names = serde_v8::to_v8(scope, names).map_err(|err| failed(&err))?;
        v8::Global::new(scope, names)
    };
    // A plain function: the call has finished when `call_with_args` returns.
    match runtime.call_with_args(&preload, &[arg]).now_or_never() {
        Some(Ok(_)) => Ok(()),
        Some(Err(err)) => Err(failed(&err)),
        None => Err(failed(&"it did not return")),
    }
}

fn string_value(
    runtime: &mut JsRuntime,
    text: &str,
) -> Result<v8::Global<v8::Value>, SandboxError> {
    deno_core::scope!(scope, runtime);
    let value = v8::String::new(scope, text)
        .ok_or_else(|| SandboxError::ResourceLimit("request too large".to_owned()))?;
    let value: v8::Local<v8::Value> = value.into();
    Ok(v8::Global::new(scope, value))
}

fn function(
    runtime: &mut JsRuntime,
    value: v8::Global<v8::Value>,
) -> Option<v8::Global<v8::Function>> {
    deno_core::scope!(scope, runtime);
    let value = v8::Local::new(scope, value);
    let function = v8::Local::<v8::Function>::try_from(value).ok()?;
    Some(v8::Global::new(scope, function))
}

/// The dispatcher's outcome ([`Outcome`]): its `kind`, then the fields of that kind.
fn decode_outcome(
    runtime: &mut JsRuntime,
    value: v8::Global<v8::Value>,
) -> Result<Outcome, SandboxError> {
    deno_core::scope!(scope, runtime);
    let value = v8::Local::new(scope, value);
    if value.is_string() {
        // A 200 without headers or a charge, its body `JSON.stringify`'s: the text alone.
        return Ok(Outcome::Ok(Answer::plain(
            value.to_rust_string_lossy(scope),
        )));
    }
    let unexpected = |what: &dyn std::fmt::Display| {
        SandboxError::Internal(format!("unexpected dispatch outcome: {what}"))
    };
    let object =
        v8::Local::<v8::Object>::try_from(value).map_err(|_| unexpected(&"not an object"))?;
    let key = v8::String::new(scope, "kind").expect("short string");
    let kind = object
        .get(scope, key.into())
        .filter(|kind| kind.is_string())
        .ok_or_else(|| unexpected(&"no kind"))?
        .to_rust_string_lossy(scope);
    match kind.as_str() {
        "ok" => serde_v8::from_v8(scope, value).map(Outcome::Ok),
        "threw" => serde_v8::from_v8(scope, value).map(Outcome::Threw),
        "tooLarge" => return Ok(Outcome::TooLarge),
        other => return Err(unexpected(&format!("kind {other:?}"))),
    }
    .map_err(|err| unexpected(&err))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::web::WEB_GLOBAL_NAMES;
    use serde::de::DeserializeOwned;

    fn decode<T: DeserializeOwned>(
        runtime: &mut JsRuntime,
        value: v8::Global<v8::Value>,
    ) -> Result<T, SandboxError> {
        deno_core::scope!(scope, runtime);
        let value = v8::Local::new(scope, value);
        serde_v8::from_v8(scope, value)
            .map_err(|err| SandboxError::Internal(format!("unexpected dispatch outcome: {err}")))
    }

    /// The pool picks spares by the Rust list; the glue installs its own. A name missing from
    /// the Rust list would only cost cold starts, so nothing else would notice.
    #[test]
    fn the_web_global_names_match_the_glue() {
        let mut blank = Blank::new(32 << 20, WebPreload::Nothing).expect("blank");
        let names = blank
            .runtime
            .execute_script(
                "ext:toolhost/test",
                "JSON.stringify(globalThis.__bootstrap.toolhost.webGlobalNames)",
            )
            .expect("names");
        let names: String = decode(&mut blank.runtime, names).expect("string");
        let names: Vec<String> = serde_json::from_str(&names).expect("json");
        assert_eq!(names, WEB_GLOBAL_NAMES);
    }

    #[test]
    fn every_web_script_preloads_into_a_blank() {
        for preload in [
            WebPreload::Every,
            WebPreload::Named(vec!["URL", "Response"]),
            WebPreload::Named(vec!["setTimeout", "performance", "fetch"]),
        ] {
            if let Err(err) = Blank::new(32 << 20, preload.clone()) {
                panic!("{preload:?}: {err}");
            }
        }
    }
}
