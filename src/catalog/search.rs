//! What the catalog's `q` filter searches, and an index over it so a search costs what it
//! finds, not the catalog.
//!
//! `q` matches an endpoint when it occurs, ignoring case, in its slug, title, description or a
//! tag: a substring test over each field lower-cased ([`SearchText::mentions`]). The index maps
//! every three-byte sequence (trigram) of those lower-cased fields to the endpoints whose text
//! has it. Any field holding the lower-cased query holds all of the query's trigrams, so the
//! endpoints holding them all are a superset of the matches; each is then checked with the
//! substring test itself, so the answers are exactly the scan's. Bytes rather than characters:
//! a substring of UTF-8 text is a byte substring, and the other way round.
//!
//! A query under three bytes has no trigram and is answered by scanning (see
//! `Registry::page`).

use std::collections::HashMap;

/// The lower-cased searchable fields of one endpoint, in one allocation.
pub(super) struct SearchText {
    /// The fields one after another.
    text: Box<str>,
    /// Where each field ends in `text`.
    ends: Box<[u32]>,
}

impl SearchText {
    pub(super) fn new<'a>(fields: impl IntoIterator<Item = &'a str>) -> Self {
        let mut text = String::new();
        let mut ends = Vec::new();
        for field in fields {
            text.push_str(&field.to_lowercase());
            ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
        }
        Self {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }

    fn fields(&self) -> impl Iterator<Item = &str> {
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let field = &self.text[start..end as usize];
            start = end as usize;
            field
        })
    }

    /// Whether `needle` (already lower-cased) occurs in one of the fields.
    pub(super) fn mentions(&self, needle: &str) -> bool {
        self.fields().any(|field| field.contains(needle))
    }

    /// The distinct trigrams of the fields (none spanning two fields), sorted.
    fn trigrams(&self) -> Vec<u32> {
        let mut out: Vec<u32> = self.fields().flat_map(|f| trigrams(f.as_bytes())).collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

fn trigrams(bytes: &[u8]) -> impl Iterator<Item = u32> + '_ {
    bytes
        .windows(3)
        .map(|w| u32::from(w[0]) << 16 | u32::from(w[1]) << 8 | u32::from(w[2]))
}

/// Trigram → the slots (see `Index` in the registry) of the endpoints whose text has it,
/// ascending. Sorted vectors: four bytes per endpoint and trigram, and lists that intersect by
/// binary search.
#[derive(Default)]
pub(super) struct SearchIndex {
    postings: HashMap<u32, Vec<u32>>,
}

impl SearchIndex {
    /// Indexes `text` under `slot`, replacing what `old` (the slot's previous text, if any)
    /// put there; only the trigrams that changed are touched.
    pub(super) fn insert(&mut self, slot: u32, text: &SearchText, old: Option<&SearchText>) {
        let new = text.trigrams();
        let old = old.map(SearchText::trigrams).unwrap_or_default();
        for gram in difference(&old, &new) {
            self.unlist(gram, slot);
        }
        for gram in difference(&new, &old) {
            let slots = self.postings.entry(gram).or_default();
            if let Err(at) = slots.binary_search(&slot) {
                slots.insert(at, slot);
            }
        }
    }

    pub(super) fn remove(&mut self, slot: u32, text: &SearchText) {
        for gram in text.trigrams() {
            self.unlist(gram, slot);
        }
    }

    fn unlist(&mut self, gram: u32, slot: u32) {
        if let Some(slots) = self.postings.get_mut(&gram) {
            if let Ok(at) = slots.binary_search(&slot) {
                slots.remove(at);
            }
            if slots.is_empty() {
                self.postings.remove(&gram);
            }
        }
    }

    #[cfg(test)]
    pub(super) fn is_empty(&self) -> bool {
        self.postings.is_empty()
    }

    /// Frees the spare capacity of the lists after a bulk load.
    pub(super) fn shrink(&mut self) {
        self.postings.values_mut().for_each(Vec::shrink_to_fit);
        self.postings.shrink_to_fit();
    }

    /// The slots whose text has every trigram of `needle` (lower-cased), ascending: a superset
    /// of those that mention it. `None` when `needle` is too short to have a trigram.
    pub(super) fn candidates(&self, needle: &str) -> Option<Vec<u32>> {
        let mut grams: Vec<u32> = trigrams(needle.as_bytes()).collect();
        if grams.is_empty() {
            return None;
        }
        grams.sort_unstable();
        grams.dedup();
        let mut lists = Vec::with_capacity(grams.len());
        for gram in grams {
            match self.postings.get(&gram) {
                Some(slots) => lists.push(slots.as_slice()),
                None => return Some(Vec::new()),
            }
        }
        // From the shortest list, keeping what every other list has.
        lists.sort_unstable_by_key(|slots| slots.len());
        let (shortest, rest) = lists
            .split_first()
            .expect("one list per trigram, at least one");
        Some(
            shortest
                .iter()
                .copied()
                .filter(|slot| rest.iter().all(|list| list.binary_search(slot).is_ok()))
                .collect(),
        )
    }
}

/// What sorted, deduplicated `a` has and `b` has not.
fn difference<'a>(a: &'a [u32], b: &'a [u32]) -> impl Iterator<Item = u32> + 'a {
    a.iter().copied().filter(|x| b.binary_search(x).is_err())
}
