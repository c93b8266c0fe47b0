//! Newest-first cursor paging over time-ordered keys (`<prefix><uuid v7>`), shared by endpoint
//! logs and builder events.
//!
//! The cursor is the id of the last item of the previous page: stable while new items arrive
//! (they sort before it), unlike an offset. One page scans a bounded number of entries even when
//! a filter skips most of them; it then returns a cursor to continue from.

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::{Store, StoreError, StoreResult, Tree};
use toolhost_values::error::{ApiError, ErrorCode};

pub const DEFAULT_LIMIT: usize = 50;
pub const MAX_LIMIT: usize = 200;
/// Most entries one page request reads, whatever its filter.
const MAX_SCANNED: usize = 5_000;

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

/// What to do with one scanned item.
pub enum Visit {
    Keep,
    Skip,
    /// This item and every older one are out of range (e.g. before `since`).
    Stop,
}

pub struct Page<T> {
    pub items: Vec<T>,
    /// Present when older items may remain.
    pub next_cursor: Option<String>,
}

/// Items under `prefix`, newest first, after the request's cursor.
pub async fn newest_first<T: DeserializeOwned>(
    store: &dyn Store,
    tree: Tree,
    prefix: &[u8],
    request: &PageRequest,
    mut visit: impl FnMut(&T) -> Visit,
) -> StoreResult<Page<T>> {
    let mut before: Option<Vec<u8>> = request
        .cursor
        .as_ref()
        .map(|c| [prefix, c.as_bytes()].concat());
    let mut items = Vec::new();
    let mut scanned = 0;
    loop {
        let chunk = store
            .scan_prefix_rev(tree, prefix, before.as_deref(), 256)
            .await?;
        let Some((last, _)) = chunk.last() else {
            return Ok(Page {
                items,
                next_cursor: None,
            });
        };
        let chunk_last = last.clone();
        for (key, bytes) in chunk {
            scanned += 1;
            let item: T = serde_json::from_slice(&bytes).map_err(|e| {
                StoreError::Corrupt(format!(
                    "{}/{}: {e}",
                    tree.name(),
                    String::from_utf8_lossy(&key)
                ))
            })?;
            match visit(&item) {
                Visit::Keep => items.push(item),
                Visit::Skip => {}
                Visit::Stop => {
                    return Ok(Page {
                        items,
                        next_cursor: None,
                    })
                }
            }
            if items.len() == request.limit || scanned == MAX_SCANNED {
                let id = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
                return Ok(Page {
                    items,
                    next_cursor: Some(id),
                });
            }
        }
        before = Some(chunk_last);
    }
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
    async fn pages_newest_first_with_filters() {
        let store = SledStore::temporary().unwrap();
        let ids: Vec<String> = (0..7).map(|_| new_id()).collect();
        for (i, id) in ids.iter().enumerate() {
            store
                .put(
                    Tree::Events,
                    format!("b1/{id}").as_bytes(),
                    i.to_string().as_bytes(),
                )
                .await
                .unwrap();
        }
        store
            .put(Tree::Events, format!("b2/{}", new_id()).as_bytes(), b"99")
            .await
            .unwrap();
        let request = PageRequest::parse(None, Some(3)).unwrap();
        let first = newest_first::<u32>(&store, Tree::Events, b"b1/", &request, |_| Visit::Keep)
            .await
            .unwrap();
        assert_eq!(first.items, [6, 5, 4]);
        let request = PageRequest::parse(first.next_cursor.as_deref(), Some(3)).unwrap();
        let second = newest_first::<u32>(&store, Tree::Events, b"b1/", &request, |n| {
            if n % 2 == 0 {
                Visit::Keep
            } else {
                Visit::Skip
            }
        })
        .await
        .unwrap();
        assert_eq!(second.items, [2, 0]);
        assert!(second.next_cursor.is_none());
        let stopped = newest_first::<u32>(
            &store,
            Tree::Events,
            b"b1/",
            &PageRequest::parse(None, None).unwrap(),
            |n| if *n < 5 { Visit::Stop } else { Visit::Keep },
        )
        .await
        .unwrap();
        assert_eq!(stopped.items, [6, 5]);
        assert!(PageRequest::parse(Some("zz"), None).is_err());
        assert!(PageRequest::parse(None, Some(0)).is_err());
        delete_prefix(&store, Tree::Events, b"b1/").await.unwrap();
        assert!(store
            .scan_prefix(Tree::Events, b"b1/", None, 10)
            .await
            .unwrap()
            .is_empty());
        assert_eq!(
            store
                .scan_prefix(Tree::Events, b"b2/", None, 10)
                .await
                .unwrap()
                .len(),
            1
        );
    }
}
