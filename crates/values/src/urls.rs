//! Absolute URLs of the service, built from the base URL in one place.

#[derive(Clone, Debug)]
pub struct Urls {
    base: String,
}

impl Urls {
    pub fn new(base: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_string(),
        }
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    /// `{base}{path}`; `path` starts with `/`.
    pub fn at(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn tool(&self, slug: &str) -> String {
        self.at(&format!("/tools/{slug}"))
    }

    pub fn endpoint(&self, slug: &str) -> String {
        self.at(&format!("/ai/endpoints/{slug}"))
    }

    pub fn receipt(&self, receipt_id: &str) -> String {
        self.at(&format!("/ai/receipts/{receipt_id}"))
    }
}
