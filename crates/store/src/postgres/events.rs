//! Builder events in a table of their own (`toolhost_events`, migration 3): the endpoint a
//! feed is filtered on is a column with an index of its own, a page is one index range read,
//! and a sweep one bounded delete by id.

use async_trait::async_trait;

use super::{column, limit_param, PgStore};
use crate::events::{BuilderEvents, EventPage, EventQuery, EventRow};
use crate::StoreResult;

/// Events deleted per sweep at most.
const SWEEP_LIMIT: i64 = 10_240;
/// Above every id (ids are lowercase hex): `before` when a page starts at the newest.
const ABOVE_EVERY_ID: &str = "g";

const SQL_RECORD: &str = "INSERT INTO toolhost_events (builder, id, endpoint, entry) \
     SELECT * FROM unnest($1::TEXT[], $2::TEXT[], $3::TEXT[], $4::BYTEA[]) \
     ON CONFLICT (builder, id) DO NOTHING";
const SQL_PAGE: &str = "SELECT id, endpoint, entry FROM toolhost_events \
     WHERE builder = $1 AND id < $2 AND id >= $3 ORDER BY id DESC LIMIT $4";
const SQL_PAGE_OF_ENDPOINT: &str = "SELECT id, endpoint, entry FROM toolhost_events \
     WHERE builder = $1 AND endpoint = $5 AND id < $2 AND id >= $3 ORDER BY id DESC LIMIT $4";
const SQL_SWEEP: &str = "DELETE FROM toolhost_events WHERE (builder, id) IN ( \
     SELECT builder, id FROM toolhost_events WHERE id < $1 LIMIT $2)";

#[async_trait]
impl BuilderEvents for PgStore {
    async fn record_events(&self, events: &[(&str, EventRow)]) -> StoreResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        let builders: Vec<&str> = events.iter().map(|(builder, _)| *builder).collect();
        let ids: Vec<&str> = events.iter().map(|(_, row)| row.id.as_str()).collect();
        let endpoints: Vec<Option<&str>> = (events.iter())
            .map(|(_, row)| row.endpoint.as_deref())
            .collect();
        let entries: Vec<&[u8]> = events.iter().map(|(_, row)| row.entry.as_slice()).collect();
        self.write_one(SQL_RECORD, &[&builders, &ids, &endpoints, &entries])
            .await
            .map(drop)
    }

    async fn events_page(&self, builder: &str, page: &EventQuery<'_>) -> StoreResult<EventPage> {
        let before = page.before.unwrap_or(ABOVE_EVERY_ID);
        let limit = limit_param(page.limit);
        let client = self.client().await?;
        let rows = match page.endpoint {
            Some(endpoint) => {
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 5] =
                    [&builder, &before, &page.from, &limit, &endpoint];
                super::query(&client, SQL_PAGE_OF_ENDPOINT, &params).await
            }
            None => {
                let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
                    [&builder, &before, &page.from, &limit];
                super::query(&client, SQL_PAGE, &params).await
            }
        }?;
        let rows = rows
            .iter()
            .map(|row| {
                Ok(EventRow {
                    id: column(row, 0)?,
                    endpoint: column(row, 1)?,
                    entry: column(row, 2)?,
                })
            })
            .collect::<StoreResult<Vec<_>>>()?;
        let next = match rows.last() {
            Some(last) if rows.len() == page.limit => Some(last.id.clone()),
            _ => None,
        };
        Ok(EventPage { rows, next })
    }

    async fn sweep_events(&self, before: &str) -> StoreResult<usize> {
        let deleted = self.write_one(SQL_SWEEP, &[&before, &SWEEP_LIMIT]).await?;
        Ok(deleted as usize)
    }
}
