//! The embedded store's backup file: every entry of every tree as of one moment, and the data
//! dir's key files, with a SHA-256 of the whole at its end so that a file cut short or changed
//! is refused before anything is restored from it. The server writes it (`POST
//! /ai/admin/backup`), `toolhost backup` saves and checks it, `toolhost restore` reads it.
//!
//! Layout: the line `toolhost-backup 1`, then records, each a kind byte and its fields; a
//! name is a byte of length and its UTF-8, a key or value four bytes of length (big-endian)
//! and its bytes:
//! - `1` an entry: tree name, key, value;
//! - `2` a key file: file name, contents;
//! - `0` the end: the SHA-256 of every byte before this record.

use std::io::{self, Read, Write};

use sha2::{Digest, Sha256};

const MAGIC: &[u8] = b"toolhost-backup 1\n";
const END: u8 = 0;
const ENTRY: u8 = 1;
const KEY_FILE: u8 = 2;

/// One record of a backup.
#[derive(Debug, PartialEq, Eq)]
pub enum Record {
    Entry {
        tree: String,
        key: Vec<u8>,
        value: Vec<u8>,
    },
    KeyFile {
        name: String,
        contents: Vec<u8>,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("cannot read or write the backup: {0}")]
    Io(#[from] io::Error),
    #[error("not a toolhost backup (it does not start with \"toolhost-backup 1\")")]
    NotABackup,
    #[error("the backup is cut short: it ends before its checksum")]
    Truncated,
    #[error("the backup is damaged: {0}")]
    Damaged(String),
}

/// Writes a backup: [`BackupWriter::record`] each record, then [`BackupWriter::finish`].
pub struct BackupWriter<W: Write> {
    out: W,
    digest: Sha256,
}

impl<W: Write> BackupWriter<W> {
    pub fn new(out: W) -> io::Result<Self> {
        let mut writer = BackupWriter {
            out,
            digest: Sha256::new(),
        };
        writer.bytes(MAGIC)?;
        Ok(writer)
    }

    pub fn entry(&mut self, tree: &str, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.bytes(&[ENTRY])?;
        self.name(tree)?;
        self.field(key)?;
        self.field(value)
    }

    pub fn key_file(&mut self, name: &str, contents: &[u8]) -> io::Result<()> {
        self.bytes(&[KEY_FILE])?;
        self.name(name)?;
        self.field(contents)
    }

    /// Writes the end record with the checksum; the file is whole only then.
    pub fn finish(mut self) -> io::Result<W> {
        let sum = self.digest.finalize_reset();
        self.out.write_all(&[END])?;
        self.out.write_all(&sum)?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn name(&mut self, name: &str) -> io::Result<()> {
        let length = u8::try_from(name.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a name over 255 bytes"))?;
        self.bytes(&[length])?;
        self.bytes(name.as_bytes())
    }

    fn field(&mut self, bytes: &[u8]) -> io::Result<()> {
        let length = u32::try_from(bytes.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a field over 4 GiB"))?;
        self.bytes(&length.to_be_bytes())?;
        self.bytes(bytes)
    }

    fn bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.digest.update(bytes);
        self.out.write_all(bytes)
    }
}

/// Reads a backup from `input`, giving each record to `visit` as it goes, and checks the
/// checksum at the end: a caller that must not act on a damaged file reads it twice, first
/// with a `visit` that does nothing ([`check`]). Returns how many records there were; stops at
/// the first error of the file's or of `visit`'s.
pub fn read<E: From<BackupError>>(
    input: impl Read,
    mut visit: impl FnMut(Record) -> Result<(), E>,
) -> Result<u64, E> {
    let mut reader = Reader {
        input: io::BufReader::new(input),
        digest: Sha256::new(),
    };
    let mut magic = [0u8; MAGIC.len()];
    reader
        .exact(&mut magic)
        .map_err(|_| BackupError::NotABackup)?;
    if magic != MAGIC {
        return Err(BackupError::NotABackup.into());
    }
    let mut records = 0;
    loop {
        let mut kind = [0u8];
        let before = reader.digest.clone();
        reader.exact(&mut kind)?;
        match kind[0] {
            END => {
                let mut sum = [0u8; 32];
                reader.input.read_exact(&mut sum).map_err(truncated)?;
                if before.finalize().as_slice() != sum {
                    return Err(BackupError::Damaged("its checksum does not match".into()).into());
                }
                if reader.input.read(&mut [0u8]).map_err(BackupError::Io)? != 0 {
                    return Err(BackupError::Damaged("bytes follow its end".into()).into());
                }
                return Ok(records);
            }
            ENTRY => {
                let tree = reader.name()?;
                let key = reader.field()?;
                let value = reader.field()?;
                visit(Record::Entry { tree, key, value })?;
            }
            KEY_FILE => {
                let name = reader.name()?;
                let contents = reader.field()?;
                visit(Record::KeyFile { name, contents })?;
            }
            other => return Err(BackupError::Damaged(format!("a record of kind {other}")).into()),
        }
        records += 1;
    }
}

/// Checks a whole backup (structure and checksum) without acting on it; its record count.
pub fn check(input: impl Read) -> Result<u64, BackupError> {
    read(input, |_| Ok::<(), BackupError>(()))
}

struct Reader<R: Read> {
    input: io::BufReader<R>,
    digest: Sha256,
}

fn truncated(e: io::Error) -> BackupError {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => BackupError::Truncated,
        _ => BackupError::Io(e),
    }
}

impl<R: Read> Reader<R> {
    fn exact(&mut self, buffer: &mut [u8]) -> Result<(), BackupError> {
        self.input.read_exact(buffer).map_err(truncated)?;
        self.digest.update(&*buffer);
        Ok(())
    }

    fn name(&mut self) -> Result<String, BackupError> {
        let mut length = [0u8];
        self.exact(&mut length)?;
        let mut name = vec![0u8; usize::from(length[0])];
        self.exact(&mut name)?;
        String::from_utf8(name).map_err(|_| BackupError::Damaged("a name is not UTF-8".into()))
    }

    fn field(&mut self) -> Result<Vec<u8>, BackupError> {
        let mut length = [0u8; 4];
        self.exact(&mut length)?;
        let length = u32::from_be_bytes(length) as usize;
        // Read as it comes rather than allocated up front: a damaged length must not make a
        // huge allocation; a short file ends the read.
        let mut field = Vec::new();
        let read = (&mut self.input)
            .take(length as u64)
            .read_to_end(&mut field)?;
        if read != length {
            return Err(BackupError::Truncated);
        }
        self.digest.update(&field);
        Ok(field)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example() -> Vec<u8> {
        let mut writer = BackupWriter::new(Vec::new()).unwrap();
        writer.entry("receipts", b"rcpt_1", b"{\"a\":1}").unwrap();
        writer.entry("meta", b"", b"").unwrap();
        writer.key_file("admin_token", b"tha_secret").unwrap();
        writer.finish().unwrap()
    }

    #[test]
    fn records_come_back_as_written() {
        let mut records = Vec::new();
        let count = read(example().as_slice(), |r| {
            records.push(r);
            Ok::<(), BackupError>(())
        })
        .unwrap();
        assert_eq!(count, 3);
        assert_eq!(
            records,
            [
                Record::Entry {
                    tree: "receipts".into(),
                    key: b"rcpt_1".to_vec(),
                    value: b"{\"a\":1}".to_vec()
                },
                Record::Entry {
                    tree: "meta".into(),
                    key: Vec::new(),
                    value: Vec::new()
                },
                Record::KeyFile {
                    name: "admin_token".into(),
                    contents: b"tha_secret".to_vec()
                },
            ]
        );
    }

    #[test]
    fn a_file_cut_short_anywhere_or_changed_anywhere_is_refused() {
        let whole = example();
        assert!(check(whole.as_slice()).is_ok());
        for end in 0..whole.len() {
            let refused = check(&whole[..end]);
            assert!(refused.is_err(), "cut at {end} of {}", whole.len());
        }
        for at in 0..whole.len() {
            let mut changed = whole.clone();
            changed[at] ^= 0x20;
            assert!(check(changed.as_slice()).is_err(), "byte {at} changed");
        }
        let mut longer = whole.clone();
        longer.push(0);
        assert!(matches!(
            check(longer.as_slice()),
            Err(BackupError::Damaged(_))
        ));
        assert!(matches!(
            check(&b"PK\x03\x04 not a backup at all"[..]),
            Err(BackupError::NotABackup)
        ));
    }

    #[test]
    fn a_huge_length_does_not_allocate_it() {
        let mut bytes = MAGIC.to_vec();
        bytes.extend([ENTRY, 1, b'x', 0xff, 0xff, 0xff, 0xff]);
        assert!(matches!(
            check(bytes.as_slice()),
            Err(BackupError::Truncated)
        ));
    }
}
