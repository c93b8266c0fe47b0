//! `POST /ai/admin/backup`: the embedded store and its key files as of one moment, as a file
//! the admin downloads (`toolhost backup`) and restores with `toolhost restore`.

use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::app::AppState;
use crate::backup::{self, BackupError};
use crate::config::StoreLocation;
use crate::error::{ApiError, ApiResult, ErrorBody};
use crate::http::auth::Admin;

/// How much of the backup file is read per chunk of the answer.
const CHUNK: usize = 64 * 1024;

/// A backup of the embedded store, taken while the server serves: every entry as of one
/// moment (writes wait while the store is read, reads go on) and the data dir's key files. It
/// holds the keys: keep it as you keep the data dir. A PostgreSQL store is backed up with
/// `pg_dump` (409 `backup_unsupported`).
#[utoipa::path(post, path = "/ai/admin/backup", tag = "admin",
    responses(
        (status = 200, description = "The backup file (`toolhost-backup 1`; its last 32 bytes are the SHA-256 of the rest). `x-backup-entries` and `x-backup-key-files` count what it holds.", content_type = "application/octet-stream"),
        (status = 401, description = "X-Admin-Token missing or wrong", body = ErrorBody),
        (status = 409, description = "`backup_unsupported`: the state is in PostgreSQL", body = ErrorBody),
    ))]
pub async fn backup(State(app): State<AppState>, _admin: Admin) -> ApiResult<Response> {
    if !matches!(app.config.store, StoreLocation::Embedded) {
        return Err(BackupError::Unsupported.into());
    }
    let (store, data_dir) = (app.store.clone(), app.config.data_dir.clone());
    let (file, contents) =
        tokio::task::spawn_blocking(move || backup::write_unnamed(store.as_ref(), &data_dir))
            .await
            .map_err(ApiError::internal)??;
    let length = file.metadata().map_err(ApiError::internal)?.len();
    let chunks = futures::stream::unfold(tokio::fs::File::from_std(file), |mut file| async {
        use tokio::io::AsyncReadExt;
        let mut chunk = vec![0u8; CHUNK];
        match file.read(&mut chunk).await {
            Ok(0) => None,
            Ok(read) => {
                chunk.truncate(read);
                Some((Ok::<_, std::io::Error>(chunk), file))
            }
            Err(e) => Some((Err(e), file)),
        }
    });
    let stamp = time::OffsetDateTime::now_utc().unix_timestamp();
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (header::CONTENT_LENGTH, length.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"toolhost-{stamp}.backup\""),
            ),
            (
                header::HeaderName::from_static("x-backup-entries"),
                contents.entries.to_string(),
            ),
            (
                header::HeaderName::from_static("x-backup-key-files"),
                contents.key_files.to_string(),
            ),
        ],
        Body::from_stream(chunks),
    )
        .into_response())
}
