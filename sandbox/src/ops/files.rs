//! `ctx.files`: the endpoint's file area (`20_files.js`). Paths go through
//! [`crate::normalize_file_path`] before the host sees them.

use std::cell::RefCell;
use std::rc::Rc;

use deno_core::{op2, OpState};

use super::{answer, done, Capability, HostCall, OpError};
use crate::paths::{normalize_prefix, normalize_with_limit};
use crate::{FileEntry, HostOp};

deno_core::extension!(
    toolhost_files,
    ops = [
        op_files_read,
        op_files_write,
        op_files_list,
        op_files_delete
    ]
);

fn path_arg(call: &HostCall, path: &str) -> Result<String, OpError> {
    normalize_with_limit(path, call.storage.max_path_bytes)
        .map_err(|err| OpError::InvalidArgument(format!("invalid file path: {err}")))
}

/// Files are text: `None` when absent, an error when not UTF-8.
#[op2]
#[string]
async fn op_files_read(
    state: Rc<RefCell<OpState>>,
    #[string] path: String,
) -> Result<Option<String>, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Files)?;
    let path = path_arg(&call, &path)?;
    let read = call.run(HostOp::FilesRead { path: path.clone() }, answer!(File));
    match read.await? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| OpError::InvalidArgument(format!("file `{path}` is not UTF-8 text"))),
    }
}

#[op2]
async fn op_files_write(
    state: Rc<RefCell<OpState>>,
    #[string] path: String,
    #[string] data: String,
) -> Result<(), OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Files)?;
    let path = path_arg(&call, &path)?;
    if data.len() > call.storage.max_file_bytes {
        return Err(OpError::TooLarge(format!(
            "file is larger than {} bytes",
            call.storage.max_file_bytes
        )));
    }
    let op = HostOp::FilesWrite {
        path,
        data: data.into_bytes(),
    };
    call.run(op, done).await
}

#[op2]
#[serde]
async fn op_files_list(
    state: Rc<RefCell<OpState>>,
    #[string] prefix: String,
) -> Result<Vec<FileEntry>, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Files)?;
    let prefix = normalize_prefix(&prefix, call.storage.max_path_bytes)
        .map_err(|err| OpError::InvalidArgument(format!("invalid file prefix: {err}")))?;
    call.run(HostOp::FilesList { prefix }, answer!(Files)).await
}

#[op2]
async fn op_files_delete(
    state: Rc<RefCell<OpState>>,
    #[string] path: String,
) -> Result<bool, OpError> {
    let call = HostCall::new(&state.borrow(), Capability::Files)?;
    let path = path_arg(&call, &path)?;
    call.run(HostOp::FilesDelete { path }, answer!(Existed))
        .await
}
