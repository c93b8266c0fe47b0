//! Newest-first cursor pages of time-ordered records (uuid v7 ids): endpoint logs and builder
//! events. The cursor is the id of the last item of the previous page: stable while new items
//! arrive (they sort before it), unlike an offset. The store's domain interfaces read the pages
//! (`logs`, `events`); this holds the request, the page and the ids.

use serde::Deserialize;

use crate::{Store, StoreResult, Tree};
use toolhost_values::error::{ApiError, ErrorCode};

pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 200;

/// The `cursor` and `limit` query parameters.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// `nextCursor` of the previous page.
    #[param(pattern = "^[0-9a-fA-F]{32}$")]
    pub cursor: Option<String>,
    /// Items per page, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<usize>,
}

/// A page's `limit`: 1 to [`MAX_LIMIT`], [`DEFAULT_LIMIT`] when absent.
pub fn parse_limit(limit: Option<usize>) -> Result<usize, ApiError> {
    let limit = limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidQuery,
            format!("limit must be 1 to {MAX_LIMIT}"),
        ));
    }
    Ok(limit)
}

/// A validated page request.
#[derive(Debug, Clone)]
pub struct PageRequest {
    cursor: Option<String>,
    limit: usize,
}

impl PageRequest {
    pub fn parse(cursor: Option<&str>, limit: Option<usize>) -> Result<Self, ApiError> {
        let limit = parse_limit(limit)?;
        if let Some(c) = cursor {
            if c.len() != 32 || !c.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ApiError::bad_request(
                    ErrorCode::InvalidCursor,
                    "cursor must be a nextCursor from a previous page",
                ));
            }
        }
        Ok(Self {
            cursor: cursor.map(str::to_string),
            limit,
        })
    }

    /// The id to continue before (the previous page's last), if any.
    pub fn cursor(&self) -> Option<&str> {
        self.cursor.as_deref()
    }

    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// A fresh id that sorts after every earlier one of this process (uuid v7, 32 hex digits).
pub fn new_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

pub struct Page<T> {
    pub items: Vec<T>,
    /// Present when older items may remain.
    pub next_cursor: Option<String>,
}

/// Deletes every entry under `prefix`; returns how many there were.
pub async fn delete_prefix<S: Store + ?Sized>(
    store: &S,
    tree: Tree,
    prefix: &[u8],
) -> StoreResult<usize> {
    let mut deleted = 0;
    loop {
        let chunk = store.scan_prefix(tree, prefix, None, 256).await?;
        if chunk.is_empty() {
            return Ok(deleted);
        }
        deleted += chunk.len();
        let batch = chunk
            .into_iter()
            .fold(crate::Batch::new(), |b, (k, _)| b.delete(tree, k));
        store.apply(batch).await?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SledStore;

    #[tokio::test]
    async fn requests_are_checked_and_prefixes_deleted_with_a_count() {
        assert!(PageRequest::parse(Some("zz"), None).is_err());
        assert!(PageRequest::parse(None, Some(0)).is_err());
        let id = new_id();
        let request = PageRequest::parse(Some(&id), Some(3)).unwrap();
        assert_eq!((request.cursor(), request.limit()), (Some(id.as_str()), 3));
        assert!(new_id() > id, "ids sort in the order they are made");

        let store = SledStore::temporary().unwrap();
        for i in 0..300 {
            let key = format!("b1/{i:03}");
            store.put(Tree::Events, key.as_bytes(), b"1").await.unwrap();
        }
        store.put(Tree::Events, b"b2/0", b"1").await.unwrap();
        assert_eq!(
            delete_prefix(&store, Tree::Events, b"b1/").await.unwrap(),
            300
        );
        assert!(store
            .scan_prefix(Tree::Events, b"b1/", None, 10)
            .await
            .unwrap()
            .is_empty());
        let left = store.scan_prefix(Tree::Events, b"b2/", None, 10).await;
        assert_eq!(left.unwrap().len(), 1);
    }
}
