//! Signed notes (C2SP `signed-note`), the envelope a log's tree heads travel in, so that tlog
//! tooling (Go's `sumdb/note`, witnesses, monitors) reads toolhost's heads as it reads any
//! log's.
//!
//! A note is UTF-8 text ending in a newline, a blank line, then one line per signature:
//! `— <key name> <base64 of the key id (4 bytes, big-endian) and the Ed25519 signature of the
//! text>`. A key id is the first four bytes of SHA-256 of the key's name, a newline, the
//! algorithm byte (`0x01`, Ed25519) and the public key, so a reader picks the signature of the
//! key it trusts by name and id, and ignores the others (witnesses add their own). A verifier
//! key is written `<name>+<id in hex>+<base64 of 0x01 and the public key>`; a signer key, as
//! Go writes it, `PRIVATE+KEY+<name>+<id>+<base64 of 0x01 and the 32-byte seed>`.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use sha2::{Digest, Sha256};

/// The algorithm byte of an Ed25519 key.
const ED25519: u8 = 0x01;
/// What starts a signature line: an em dash and a space.
const SIGNATURE_PREFIX: &str = "\u{2014} ";

/// Why a key or a note was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoteError {
    /// A key's text is not a key of this kind.
    #[error("malformed key: {0}")]
    Key(&'static str),
    /// The text to sign, or a note's text, breaks the format's rules.
    #[error("malformed note: {0}")]
    Malformed(&'static str),
    /// No signature of the trusted key verifies.
    #[error("the note carries no valid signature of {0}")]
    Unverified(String),
}

/// Signs notes with one Ed25519 key under one name.
pub struct Signer {
    name: String,
    id: u32,
    key: SigningKey,
}

/// Checks notes against one trusted key.
#[derive(Clone, Debug)]
pub struct Verifier {
    name: String,
    id: u32,
    key: VerifyingKey,
}

impl Signer {
    /// The signer named `name` with the Ed25519 key of `seed`.
    pub fn new(name: &str, seed: &[u8; 32]) -> Result<Signer, NoteError> {
        check_name(name)?;
        let key = SigningKey::from_bytes(seed);
        Ok(Signer {
            id: key_id(name, key.verifying_key().as_bytes()),
            name: name.to_owned(),
            key,
        })
    }

    /// A signer key as Go's `note.GenerateKey` writes it.
    pub fn from_private_key(text: &str) -> Result<Signer, NoteError> {
        let rest = text
            .strip_prefix("PRIVATE+KEY+")
            .ok_or(NoteError::Key("a signer key starts with PRIVATE+KEY+"))?;
        let (name, id, material) = split_key(rest)?;
        let seed: [u8; 32] = material
            .try_into()
            .map_err(|_| NoteError::Key("an Ed25519 seed is 32 bytes"))?;
        let signer = Signer::new(name, &seed)?;
        match signer.id == id {
            true => Ok(signer),
            false => Err(NoteError::Key("the key id does not match the key")),
        }
    }

    /// The key a reader trusts to check this signer's notes.
    pub fn verifier(&self) -> Verifier {
        Verifier {
            name: self.name.clone(),
            id: self.id,
            key: self.key.verifying_key(),
        }
    }

    /// The note of `text` (UTF-8 lines, each ending in a newline, none of them empty) signed
    /// by this key.
    pub fn sign(&self, text: &str) -> Result<String, NoteError> {
        check_text(text)?;
        let signature = self.key.sign(text.as_bytes());
        let mut blob = self.id.to_be_bytes().to_vec();
        blob.extend_from_slice(&signature.to_bytes());
        Ok(format!(
            "{text}\n{SIGNATURE_PREFIX}{} {}\n",
            self.name,
            BASE64.encode(blob)
        ))
    }
}

impl Verifier {
    /// A verifier key (`<name>+<id>+<key>`).
    pub fn parse(text: &str) -> Result<Verifier, NoteError> {
        let (name, id, material) = split_key(text)?;
        let bytes: [u8; 32] = material
            .try_into()
            .map_err(|_| NoteError::Key("an Ed25519 public key is 32 bytes"))?;
        let key = VerifyingKey::from_bytes(&bytes)
            .map_err(|_| NoteError::Key("not an Ed25519 public key"))?;
        if key_id(name, key.as_bytes()) != id {
            return Err(NoteError::Key("the key id does not match the key"));
        }
        Ok(Verifier {
            name: name.to_owned(),
            id,
            key,
        })
    }

    /// The key's text (`<name>+<id>+<key>`), as [`Verifier::parse`] reads it.
    pub fn key_text(&self) -> String {
        let mut material = vec![ED25519];
        material.extend_from_slice(self.key.as_bytes());
        format!("{}+{:08x}+{}", self.name, self.id, BASE64.encode(material))
    }

    /// The key's name (a log's origin).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Ed25519 public key.
    pub fn public_key(&self) -> [u8; 32] {
        self.key.to_bytes()
    }

    /// The text of `note` if one of its signatures is this key's and verifies. Other keys'
    /// signatures are ignored; a signature line that is not well formed makes the note
    /// malformed.
    pub fn open<'n>(&self, note: &'n str) -> Result<&'n str, NoteError> {
        let split = note
            .rfind("\n\n")
            .ok_or(NoteError::Malformed("no blank line before the signatures"))?;
        let (text, signatures) = (&note[..=split], &note[split + 2..]);
        check_text(text)?;
        let lines = signatures
            .strip_suffix('\n')
            .ok_or(NoteError::Malformed("a note ends with a newline"))?;
        let mut verified = false;
        for line in lines.split('\n') {
            let (name, blob) = line
                .strip_prefix(SIGNATURE_PREFIX)
                .and_then(|line| line.split_once(' '))
                .ok_or(NoteError::Malformed(
                    "a signature line is `— <name> <base64>`",
                ))?;
            let blob = BASE64
                .decode(blob)
                .map_err(|_| NoteError::Malformed("a signature is base64"))?;
            if blob.len() < 4 {
                return Err(NoteError::Malformed("a signature starts with a key id"));
            }
            let (id, signature) = blob.split_at(4);
            if name != self.name || id != self.id.to_be_bytes() {
                continue;
            }
            let signature = Signature::from_slice(signature)
                .map_err(|_| NoteError::Malformed("an Ed25519 signature is 64 bytes"))?;
            verified |= self.key.verify_strict(text.as_bytes(), &signature).is_ok();
        }
        match verified {
            true => Ok(text),
            false => Err(NoteError::Unverified(self.name.clone())),
        }
    }
}

/// The id of the Ed25519 key `public` named `name`.
fn key_id(name: &str, public: &[u8; 32]) -> u32 {
    let mut hasher = Sha256::new();
    hasher.update(name.as_bytes());
    hasher.update(b"\n");
    hasher.update([ED25519]);
    hasher.update(public);
    let digest = hasher.finalize();
    u32::from_be_bytes([digest[0], digest[1], digest[2], digest[3]])
}

/// `<name>+<id>+<base64 of 0x01 and the key material>`, split and checked. The base64 may
/// itself hold `+`.
fn split_key(text: &str) -> Result<(&str, u32, Vec<u8>), NoteError> {
    let mut parts = text.splitn(3, '+');
    let (Some(name), Some(id), Some(material)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(NoteError::Key("a key is <name>+<id>+<key>"));
    };
    check_name(name)?;
    if id.len() != 8 {
        return Err(NoteError::Key("a key id is 8 hex digits"));
    }
    let id = u32::from_str_radix(id, 16).map_err(|_| NoteError::Key("a key id is hex"))?;
    let material = BASE64
        .decode(material)
        .map_err(|_| NoteError::Key("a key is base64"))?;
    match material.split_first() {
        Some((&ED25519, key)) => Ok((name, id, key.to_vec())),
        _ => Err(NoteError::Key("only Ed25519 keys (type 0x01) are read")),
    }
}

fn check_name(name: &str) -> Result<(), NoteError> {
    match !name.is_empty() && !name.contains(|c: char| c.is_whitespace() || c == '+') {
        true => Ok(()),
        false => Err(NoteError::Key(
            "a key name is not empty and has no spaces or +",
        )),
    }
}

/// A note's text: lines ending in a newline, none empty, no control characters but the
/// newlines.
fn check_text(text: &str) -> Result<(), NoteError> {
    if !text.ends_with('\n') {
        return Err(NoteError::Malformed("the text ends with a newline"));
    }
    if text.split('\n').rev().skip(1).any(str::is_empty) {
        return Err(NoteError::Malformed("the text has no empty line"));
    }
    if text.chars().any(|c| c.is_control() && c != '\n') {
        return Err(NoteError::Malformed(
            "the text has no control characters but newlines",
        ));
    }
    Ok(())
}
