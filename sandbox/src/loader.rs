//! The module loader of a handler isolate: the handler's own module is the only one there is.
//! Every other specifier, in a static `import` or a dynamic `import()`, is refused, and so are
//! `ext:` modules (deno_core itself refuses those outside extension code).

use deno_core::error::ModuleLoaderError;
use deno_core::{
    ModuleLoadOptions, ModuleLoadReferrer, ModuleLoadResponse, ModuleLoader, ModuleResolveResponse,
    ModuleSpecifier, ResolutionKind,
};
use deno_error::JsErrorBox;

/// Specifier of the handler module inside its isolate.
pub(crate) const HANDLER_SPECIFIER: &str = "file:///handler.js";

pub(crate) struct HandlerOnlyLoader {
    handler: ModuleSpecifier,
}

impl HandlerOnlyLoader {
    pub(crate) fn new(handler: ModuleSpecifier) -> Self {
        HandlerOnlyLoader { handler }
    }
}

fn refused(specifier: &str) -> ModuleLoaderError {
    JsErrorBox::type_error(format!(
        "import of \"{specifier}\" is not allowed: a handler is a single module"
    ))
}

impl ModuleLoader for HandlerOnlyLoader {
    fn resolve(
        &self,
        specifier: &str,
        _referrer: &str,
        kind: ResolutionKind,
    ) -> ModuleResolveResponse {
        if matches!(kind, ResolutionKind::MainModule) && specifier == self.handler.as_str() {
            Ok(self.handler.clone())
        } else {
            Err(refused(specifier))
        }
    }

    fn load(
        &self,
        specifier: &ModuleSpecifier,
        _referrer: Option<&ModuleLoadReferrer>,
        _options: ModuleLoadOptions,
    ) -> ModuleLoadResponse {
        ModuleLoadResponse::Sync(Err(refused(specifier.as_str())))
    }
}
