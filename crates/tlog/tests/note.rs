//! Signed notes and checkpoints against the published vectors of Go's `sumdb/note` and of the
//! C2SP `signed-note` spec (Ed25519 signatures are deterministic, so signing the same text
//! with the same key must give the published note byte for byte), then what a reader must
//! refuse.

use toolhost_tlog::{tree, Checkpoint, NoteError, Signer, Verifier};

const GO_SIGNER: &str =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
const GO_VERIFIER: &str = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
const GO_TEXT: &str = "If you think cryptography is the answer to your problem,\n\
                       then you don't know what your problem is.\n";
const GO_SIGNATURE: &str = "\u{2014} PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
const ENOCH_SIGNATURE: &str = "\u{2014} EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";
const SPEC_VERIFIER: &str = "example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k";
const SPEC_NOTE: &str = "This is an example message.\n\n\u{2014} example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n";

fn go_note() -> String {
    format!("{GO_TEXT}\n{GO_SIGNATURE}")
}

#[test]
fn signing_gives_the_published_note() {
    let signer = Signer::from_private_key(GO_SIGNER).unwrap();
    assert_eq!(signer.verifier().key_text(), GO_VERIFIER);
    assert_eq!(signer.sign(GO_TEXT).unwrap(), go_note());
}

#[test]
fn published_notes_open() {
    let peter = Verifier::parse(GO_VERIFIER).unwrap();
    assert_eq!(peter.open(&go_note()), Ok(GO_TEXT));
    assert_eq!(peter.key_text(), GO_VERIFIER);
    // Another key's signature beside it is ignored.
    let cosigned = format!("{GO_TEXT}\n{ENOCH_SIGNATURE}{GO_SIGNATURE}");
    assert_eq!(peter.open(&cosigned), Ok(GO_TEXT));
    let spec = Verifier::parse(SPEC_VERIFIER).unwrap();
    assert_eq!(spec.open(SPEC_NOTE), Ok("This is an example message.\n"));
}

#[test]
fn a_note_changed_in_any_way_does_not_open() {
    let peter = Verifier::parse(GO_VERIFIER).unwrap();
    let note = go_note();
    let changed_text = note.replace("cryptography", "cryptographY");
    assert_eq!(
        peter.open(&changed_text),
        Err(NoteError::Unverified("PeterNeumann".into()))
    );
    // Only another key's signature: nothing of this key to trust.
    let others_only = format!("{GO_TEXT}\n{ENOCH_SIGNATURE}");
    assert!(matches!(
        peter.open(&others_only),
        Err(NoteError::Unverified(_))
    ));
    // The right name with another key's id, and a signature cut short.
    let renamed = ENOCH_SIGNATURE.replace("EnochRoot", "PeterNeumann");
    assert!(peter.open(&format!("{GO_TEXT}\n{renamed}")).is_err());
    let cut = GO_SIGNATURE.replace("JnAM=", "");
    assert!(peter.open(&format!("{GO_TEXT}\n{cut}")).is_err());
    for malformed in [
        GO_TEXT.to_owned(),
        note.trim_end().to_owned(),
        note.replace('\u{2014}', "-"),
        format!("\n{GO_TEXT}\n{GO_SIGNATURE}"),
    ] {
        assert!(peter.open(&malformed).is_err(), "{malformed:?}");
    }
}

#[test]
fn keys_are_checked() {
    // The id must be the key's own.
    let wrong_id = GO_VERIFIER.replace("c74f20a3", "c74f20a4");
    assert!(Verifier::parse(&wrong_id).is_err());
    assert!(Verifier::parse("PeterNeumann+c74f20a3").is_err());
    assert!(Verifier::parse(&GO_VERIFIER.replace("+ARpc", "+AhPc")).is_err());
    assert!(Signer::new("two words", &[7; 32]).is_err());
    assert!(Signer::new("", &[7; 32]).is_err());
    let signer = Signer::new("log.example/receipts", &[7; 32]).unwrap();
    assert!(signer.sign("no newline").is_err());
    assert!(signer.sign("a\n\nblank line\n").is_err());
    assert!(signer.sign("a\tb\n").is_err());
}

#[test]
fn a_signed_checkpoint_round_trips() {
    let leaves: Vec<_> = (0u8..5).map(|i| toolhost_tlog::hash::leaf(&[i])).collect();
    let head = Checkpoint {
        origin: "toolhost.example/receipts".into(),
        size: 5,
        root: tree::root(&leaves),
        extensions: Vec::new(),
    };
    let signer = Signer::new(&head.origin, &[9; 32]).unwrap();
    let note = signer.sign(&head.text()).unwrap();
    let verifier = Verifier::parse(&signer.verifier().key_text()).unwrap();
    let text = verifier.open(&note).unwrap();
    assert_eq!(Checkpoint::parse(text), Ok(head.clone()));
    // Extension lines are kept.
    let extended = Checkpoint {
        extensions: vec!["timestamp 1764190000123".into(), "other line".into()],
        ..head.clone()
    };
    assert_eq!(
        extended.text(),
        format!("{}timestamp 1764190000123\nother line\n", head.text())
    );
    assert_eq!(Checkpoint::parse(&extended.text()), Ok(extended));
    for bad in [
        "\n5\nAAAA\n".to_owned(),
        head.text().replace("\n5\n", "\n05\n"),
        head.text().replace("\n5\n", "\n-5\n"),
        head.text().replace("\n5\n", "\n\n"),
        "origin\n5\nc2hvcnQ=\n".to_owned(),
        "origin\n5\n".to_owned(),
    ] {
        assert!(Checkpoint::parse(&bad).is_err(), "{bad:?}");
    }
}
