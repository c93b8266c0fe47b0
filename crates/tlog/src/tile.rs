//! Where a log's hashes and entries are served, and what each file holds (C2SP `tlog-tiles`):
//! the tree cut into tiles of [`TILE_WIDTH`] hashes, so a reader fetches a few static files to
//! check a proof or read entries, and every full tile never changes (cacheable forever).
//!
//! - A tile of level `L` holds the tree's nodes at height `8·L` (level 0 the leaf hashes):
//!   tile `N` holds nodes `256·N` to `256·N + W - 1`, each node the root of the `256^L`
//!   leaves below it. It is full when `W` is 256, partial (the tree's right edge) below.
//! - Its path is `tile/<L>/<N>`, a partial one `tile/<L>/<N>.p/<W>`; `<N>` is written in
//!   groups of three digits, every group but the last prefixed with `x` (`1234067` is
//!   `x001/x234/067`), so no directory holds more than a thousand names.
//! - The entries of leaves `256·N ..` are in `tile/entries/<N>[.p/<W>]`: each entry as a
//!   big-endian 16-bit length and its bytes.

use std::ops::Range;

use crate::hash::Hash;
use crate::tree;

/// Hashes (or entries) in a full tile.
pub const TILE_WIDTH: u64 = 256;
/// The levels of the tree one tile level spans: `TILE_WIDTH` is `2^TILE_HEIGHT`.
pub const TILE_HEIGHT: u32 = 8;
/// The longest entry an entry bundle can hold.
pub const MAX_ENTRY_BYTES: usize = u16::MAX as usize;

/// A tile: a hash tile of `level`, or the entry bundle (`level` `None`), with its index and
/// the number of hashes or entries it holds (1 to [`TILE_WIDTH`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    pub level: Option<u8>,
    pub index: u64,
    pub width: u64,
}

impl Tile {
    /// Whether it holds all [`TILE_WIDTH`] hashes (and so never changes).
    pub fn is_full(&self) -> bool {
        self.width == TILE_WIDTH
    }

    /// Its path under the log's prefix, as the spec writes it.
    pub fn path(&self) -> String {
        let level = match self.level {
            Some(level) => level.to_string(),
            None => "entries".to_owned(),
        };
        let mut path = format!("tile/{level}/{}", index_path(self.index));
        if !self.is_full() {
            path.push_str(&format!(".p/{}", self.width));
        }
        path
    }

    /// Reads a tile's path (the part after the log's prefix): `None` for anything that is not
    /// exactly a path [`Tile::path`] writes.
    pub fn parse(path: &str) -> Option<Tile> {
        let rest = path.strip_prefix("tile/")?;
        let (level, rest) = rest.split_once('/')?;
        let level = match level {
            "entries" => None,
            level => Some(canonical_number(level)?.try_into().ok()?),
        };
        let (index, width) = match rest.split_once(".p/") {
            Some((index, width)) => {
                let width = canonical_number(width)?;
                (index, (1..TILE_WIDTH).contains(&width).then_some(width)?)
            }
            None => (rest, TILE_WIDTH),
        };
        let tile = Tile {
            level,
            index: parse_index(index)?,
            width,
        };
        (tile.path() == path).then_some(tile)
    }

    /// The tiles a tree of `size` leaves has: for each level with nodes, its full tiles and
    /// the partial one at its right edge; and the entry bundles, likewise.
    pub fn all_of(size: u64) -> Vec<Tile> {
        let mut tiles = bundles(size, None);
        let mut nodes = size;
        let mut level = 0u8;
        while nodes > 0 {
            tiles.extend(bundles(nodes, Some(level)));
            nodes >>= TILE_HEIGHT;
            level += 1;
        }
        tiles
    }

    /// The hashes of this tile of the tree whose leaves hash to `leaves`: `None` for an entry
    /// bundle, or a tile past the tree's nodes at its level.
    pub fn hashes(&self, leaves: &[Hash]) -> Option<Vec<Hash>> {
        let level = u32::from(self.level?);
        let span = 1u64.checked_shl(TILE_HEIGHT * level)?;
        let first = self.index.checked_mul(TILE_WIDTH)?;
        (first..first + self.width)
            .map(|node| {
                let start = usize::try_from(node.checked_mul(span)?).ok()?;
                let end = usize::try_from((node + 1).checked_mul(span)?).ok()?;
                leaves.get(start..end).map(tree::root)
            })
            .collect()
    }
}

/// Where the root of the complete subtree of `height` at `index` ([`tree::Nodes`]) is kept:
/// the level and index of the hash tile holding the stored nodes it is made of, and which of
/// that tile's hashes they are. A level-`L` tile stores the nodes of height `8·L`; a node
/// between two stored heights is the root of `2^(height mod 8)` of them, all in one tile.
pub fn locate(height: u32, index: u64) -> (u8, u64, Range<usize>) {
    let (level, extra) = (height / TILE_HEIGHT, height % TILE_HEIGHT);
    let first = index << extra;
    let offset = usize::try_from(first % TILE_WIDTH).unwrap_or(0);
    (
        u8::try_from(level).unwrap_or(u8::MAX),
        first / TILE_WIDTH,
        offset..offset + (1 << extra),
    )
}

/// The node [`locate`] points to, from its tile's hashes; `None` if the tile holds too few.
pub fn node_in(hashes: &[Hash], range: Range<usize>) -> Option<Hash> {
    hashes.get(range).map(tree::complete_root)
}

/// The full tiles and the partial one holding `count` items at `level`.
fn bundles(count: u64, level: Option<u8>) -> Vec<Tile> {
    let mut tiles: Vec<Tile> = (0..count / TILE_WIDTH)
        .map(|index| Tile {
            level,
            index,
            width: TILE_WIDTH,
        })
        .collect();
    if !count.is_multiple_of(TILE_WIDTH) {
        tiles.push(Tile {
            level,
            index: count / TILE_WIDTH,
            width: count % TILE_WIDTH,
        });
    }
    tiles
}

/// `1234067` as `x001/x234/067`.
fn index_path(index: u64) -> String {
    let digits = index.to_string();
    let padded = format!("{}{digits}", "0".repeat((3 - digits.len() % 3) % 3));
    let groups: Vec<&str> = padded
        .as_bytes()
        .chunks(3)
        .map(|group| std::str::from_utf8(group).unwrap_or("000"))
        .collect();
    let (last, rest) = groups.split_last().unwrap_or((&"000", &[]));
    let mut path: String = rest.iter().map(|group| format!("x{group}/")).collect();
    path.push_str(last);
    path
}

fn parse_index(path: &str) -> Option<u64> {
    let groups: Vec<&str> = path.split('/').collect();
    let (last, rest) = groups.split_last()?;
    let mut index = 0u64;
    for group in rest
        .iter()
        .map(|group| group.strip_prefix('x'))
        .chain([Some(*last)])
    {
        let group = group.filter(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()))?;
        index = index.checked_mul(1000)?.checked_add(group.parse().ok()?)?;
    }
    Some(index)
}

/// A decimal number written without leading zeros.
fn canonical_number(text: &str) -> Option<u64> {
    let canonical = text == "0" || (!text.is_empty() && !text.starts_with('0'));
    (canonical && text.bytes().all(|b| b.is_ascii_digit()))
        .then(|| text.parse().ok())
        .flatten()
}

/// An entry bundle's bytes: each entry as its 16-bit big-endian length and its bytes. `None`
/// if an entry is longer than [`MAX_ENTRY_BYTES`].
pub fn encode_entries<'e>(entries: impl IntoIterator<Item = &'e [u8]>) -> Option<Vec<u8>> {
    let mut bundle = Vec::new();
    for entry in entries {
        bundle.extend_from_slice(&u16::try_from(entry.len()).ok()?.to_be_bytes());
        bundle.extend_from_slice(entry);
    }
    Some(bundle)
}

/// An entry bundle's entries; `None` if its bytes are not whole entries.
pub fn decode_entries(mut bundle: &[u8]) -> Option<Vec<&[u8]>> {
    let mut entries = Vec::new();
    while !bundle.is_empty() {
        let (length, rest) = bundle.split_first_chunk::<2>()?;
        let length = usize::from(u16::from_be_bytes(*length));
        if rest.len() < length {
            return None;
        }
        let (entry, rest) = rest.split_at(length);
        entries.push(entry);
        bundle = rest;
    }
    Some(entries)
}
