//! A log's tree head as text (C2SP `tlog-checkpoint`): the log's origin (its name, by
//! convention a URL without a scheme), the tree's size in decimal, and its root hash in base64,
//! one per line, then any extension lines (opaque to readers that do not know them; toolhost
//! writes one, `timestamp <unix milliseconds>`, when the head was signed). Signed as a note ([`crate::note`]), it is what a
//! reader holds a receipt's inclusion proof and a monitor its consistency proofs against.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use crate::hash::Hash;
use crate::note::NoteError;

/// A tree head: `size` entries of the log `origin`, whose tree hashes to `root`, and its
/// extension lines (each without its newline).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkpoint {
    pub origin: String,
    pub size: u64,
    pub root: Hash,
    pub extensions: Vec<String>,
}

impl Checkpoint {
    /// The checkpoint's text, the body of its signed note.
    pub fn text(&self) -> String {
        let mut text = format!(
            "{}\n{}\n{}\n",
            self.origin,
            self.size,
            BASE64.encode(self.root)
        );
        for line in &self.extensions {
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    /// Reads a checkpoint's text, extension lines included.
    pub fn parse(text: &str) -> Result<Checkpoint, NoteError> {
        let mut lines = text.split('\n');
        let (Some(origin), Some(size), Some(root)) = (lines.next(), lines.next(), lines.next())
        else {
            return Err(NoteError::Malformed(
                "a checkpoint is origin, size and root",
            ));
        };
        if origin.is_empty() {
            return Err(NoteError::Malformed("a checkpoint names its origin"));
        }
        let canonical = size == "0" || (!size.starts_with('0') && !size.is_empty());
        let size = size
            .parse::<u64>()
            .ok()
            .filter(|_| canonical && size.bytes().all(|b| b.is_ascii_digit()))
            .ok_or(NoteError::Malformed(
                "a checkpoint's size is a decimal number",
            ))?;
        let root = BASE64
            .decode(root)
            .ok()
            .and_then(|root| Hash::try_from(root).ok())
            .ok_or(NoteError::Malformed(
                "a checkpoint's root is 32 bytes of base64",
            ))?;
        // The text ends in a newline, so the last piece is empty.
        let extensions = lines
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect();
        Ok(Checkpoint {
            origin: origin.to_owned(),
            size,
            root,
            extensions,
        })
    }
}
