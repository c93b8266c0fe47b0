//! `ctx.log`: per-invocation log lines (`40_log.js`), capped by lines and bytes;
//! the excess is dropped behind a single `[log truncated]` line.

use deno_core::{op2, OpState};

use super::{check_capability, Capability, InvocationClock, OpError};
use crate::{ConsoleLevel, ConsoleLine};

deno_core::extension!(toolhost_log, ops = [op_log_write]);

pub(crate) const TRUNCATED_MARKER: &str = "[log truncated]";

/// The lines of the invocation in progress; the worker swaps in a fresh buffer per invocation.
#[derive(Debug)]
pub(crate) struct LogBuffer {
    lines: Vec<ConsoleLine>,
    bytes: usize,
    truncated: bool,
    max_lines: usize,
    max_bytes: usize,
}

impl LogBuffer {
    pub(crate) fn new(max_lines: usize, max_bytes: usize) -> Self {
        LogBuffer {
            lines: Vec::new(),
            bytes: 0,
            truncated: false,
            max_lines,
            max_bytes,
        }
    }

    fn push(&mut self, level: ConsoleLevel, message: String, at_ms: u64) {
        if self.truncated {
            return;
        }
        if self.lines.len() >= self.max_lines || self.bytes + message.len() > self.max_bytes {
            self.truncated = true;
            self.lines.push(ConsoleLine {
                level: ConsoleLevel::Warn,
                message: TRUNCATED_MARKER.to_owned(),
                at_ms,
            });
            return;
        }
        self.bytes += message.len();
        self.lines.push(ConsoleLine {
            level,
            message,
            at_ms,
        });
    }

    pub(crate) fn into_lines(self) -> Vec<ConsoleLine> {
        self.lines
    }
}

#[op2(fast)]
fn op_log_write(
    state: &mut OpState,
    #[smi] level: u32,
    #[string] message: String,
) -> Result<(), OpError> {
    check_capability(state, Capability::Logs)?;
    let level = match level {
        0 => ConsoleLevel::Info,
        1 => ConsoleLevel::Warn,
        2 => ConsoleLevel::Error,
        _ => return Err(OpError::InvalidArgument("unknown log level".to_owned())),
    };
    let at_ms = state
        .try_borrow::<InvocationClock>()
        .map_or(0, |clock| clock.started.elapsed().as_millis() as u64);
    if let Some(buffer) = state.try_borrow_mut::<LogBuffer>() {
        buffer.push(level, message, at_ms);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_lines_and_bytes_with_one_marker() {
        let mut buffer = LogBuffer::new(2, 1000);
        for i in 0..5 {
            buffer.push(ConsoleLevel::Info, format!("line {i}"), 0);
        }
        let lines = buffer.into_lines();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2].message, TRUNCATED_MARKER);

        let mut buffer = LogBuffer::new(100, 10);
        buffer.push(ConsoleLevel::Info, "12345".into(), 0);
        buffer.push(ConsoleLevel::Info, "123456".into(), 0);
        buffer.push(ConsoleLevel::Info, "1".into(), 0);
        let lines = buffer.into_lines();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1].message, TRUNCATED_MARKER);
    }
}
