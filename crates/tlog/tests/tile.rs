//! Tile paths and contents as C2SP `tlog-tiles` defines them: the spec's own path example,
//! every path read back as written and nothing else read, the tiles of trees of every shape,
//! and entry bundles.

use toolhost_tlog::hash;
use toolhost_tlog::tile::{self, Tile, TILE_WIDTH};
use toolhost_tlog::tree;

fn hash_tile(level: u8, index: u64, width: u64) -> Tile {
    Tile {
        level: Some(level),
        index,
        width,
    }
}

#[test]
fn paths_are_written_as_the_spec_writes_them() {
    assert_eq!(hash_tile(0, 1234067, 256).path(), "tile/0/x001/x234/067");
    assert_eq!(hash_tile(0, 1234067, 8).path(), "tile/0/x001/x234/067.p/8");
    assert_eq!(hash_tile(2, 0, 256).path(), "tile/2/000");
    assert_eq!(hash_tile(1, 1000, 1).path(), "tile/1/x001/000.p/1");
    let bundle = Tile {
        level: None,
        index: 5,
        width: 17,
    };
    assert_eq!(bundle.path(), "tile/entries/005.p/17");
}

#[test]
fn every_path_written_is_read_back_and_nothing_else_is() {
    let indexes = (0..2100)
        .chain([999_999, 1_000_000, 1_234_067, u64::MAX / 256, u64::MAX])
        .collect::<Vec<_>>();
    for index in indexes {
        for level in [None, Some(0), Some(3), Some(63)] {
            for width in [1, 7, 255, 256] {
                let tile = Tile {
                    level,
                    index,
                    width,
                };
                assert_eq!(Tile::parse(&tile.path()), Some(tile), "{}", tile.path());
            }
        }
    }
    for path in [
        "tile/0/1234067",
        "tile/0/x1/234",
        "tile/0/x001/x234",
        "tile/0/001/234",
        "tile/00/000",
        "tile/-1/000",
        "tile/256/000",
        "tile/0/000.p/256",
        "tile/0/000.p/0",
        "tile/0/000.p/08",
        "tile/0/000.p/",
        "tile/0/000/",
        "tile/0/x000/001",
        "tile/0/x99999999999999999999/000",
        "tile/data/000",
        "tile/0",
        "tiles/0/000",
        "/tile/0/000",
    ] {
        assert_eq!(Tile::parse(path), None, "{path}");
    }
}

#[test]
fn a_tree_has_full_tiles_and_one_partial_tile_per_level() {
    assert_eq!(Tile::all_of(0), []);
    assert_eq!(
        Tile::all_of(1),
        [
            Tile {
                level: None,
                index: 0,
                width: 1
            },
            hash_tile(0, 0, 1)
        ]
    );
    let size = 256 * 256 * 2 + 256 * 3 + 5;
    let tiles = Tile::all_of(size);
    let level = |l: u8| -> Vec<Tile> {
        tiles
            .iter()
            .copied()
            .filter(|t| t.level == Some(l))
            .collect()
    };
    assert_eq!(level(0).len(), 256 * 2 + 3 + 1);
    assert_eq!(level(0).last(), Some(&hash_tile(0, 256 * 2 + 3, 5)));
    assert_eq!(level(1).len(), 2 + 1);
    assert_eq!(level(1).last(), Some(&hash_tile(1, 2, 3)));
    assert_eq!(level(2), [hash_tile(2, 0, 2)]);
    assert!(level(3).is_empty());
    assert_eq!(
        tiles.iter().filter(|t| t.level.is_none()).count(),
        256 * 2 + 3 + 1
    );
}

#[test]
fn tiles_hold_the_roots_of_their_subtrees() {
    let size = 256 * 3 + 5;
    let leaves: Vec<_> = (0..size as u32)
        .map(|i| hash::leaf(&i.to_be_bytes()))
        .collect();
    let level0 = hash_tile(0, 3, 5).hashes(&leaves).unwrap();
    assert_eq!(level0, &leaves[256 * 3..]);
    let level1 = hash_tile(1, 0, 3).hashes(&leaves).unwrap();
    for (i, node) in level1.iter().enumerate() {
        assert_eq!(*node, tree::root(&leaves[i * 256..(i + 1) * 256]));
    }
    // The root of the first 512 leaves from the level-1 tile alone.
    assert_eq!(
        hash::node(&level1[0], &level1[1]),
        tree::root(&leaves[..512])
    );
    // A fourth level-1 node would need leaves the tree does not have.
    assert_eq!(hash_tile(1, 0, 4).hashes(&leaves), None);
    let bundle = Tile {
        level: None,
        index: 0,
        width: 5,
    };
    assert_eq!(bundle.hashes(&leaves), None);
    assert_eq!(TILE_WIDTH, 256);
}

#[test]
fn entry_bundles_round_trip_and_refuse_what_is_not_whole() {
    let long = vec![7u8; tile::MAX_ENTRY_BYTES];
    let entries: Vec<&[u8]> = vec![b"", b"a receipt", &long];
    let bundle = tile::encode_entries(entries.iter().copied()).unwrap();
    assert_eq!(&bundle[..2], [0, 0]);
    assert_eq!(tile::decode_entries(&bundle), Some(entries));
    assert_eq!(tile::decode_entries(&bundle[..bundle.len() - 1]), None);
    assert_eq!(tile::decode_entries(&[0]), None);
    let too_long = vec![0u8; tile::MAX_ENTRY_BYTES + 1];
    assert_eq!(tile::encode_entries([too_long.as_slice()]), None);
}

/// A log that keeps only its tiles, as the service does.
struct Tiles(std::collections::HashMap<(u8, u64), Vec<hash::Hash>>);

impl Tiles {
    fn of(leaves: &[hash::Hash]) -> Tiles {
        let tiles = Tile::all_of(leaves.len() as u64)
            .into_iter()
            .filter_map(|tile| Some(((tile.level?, tile.index), tile.hashes(leaves)?)))
            .collect();
        Tiles(tiles)
    }
}

impl tree::Nodes for Tiles {
    type Error = String;

    fn node(&self, height: u32, index: u64) -> Result<hash::Hash, String> {
        let (level, tile, range) = tile::locate(height, index);
        let hashes = self
            .0
            .get(&(level, tile))
            .ok_or(format!("no tile {level}/{tile}"))?;
        tile::node_in(hashes, range).ok_or(format!("tile {level}/{tile} is too short"))
    }
}

#[test]
fn roots_and_proofs_from_tiles_alone_are_the_trees_own() {
    let all: Vec<_> = (0..65_537u32)
        .map(|i| hash::leaf(&i.to_be_bytes()))
        .collect();
    // Every size up to past the first tile, then the edges of the first level-1 and level-2
    // tiles; some proofs of each (each slice-built proof hashes the whole tree).
    let sizes = (1..=300)
        .chain([511, 512, 513, 4097, 65_537])
        .collect::<Vec<u64>>();
    for size in sizes {
        let leaves = &all[..size as usize];
        let tiles = Tiles::of(leaves);
        assert_eq!(
            tree::root_of(&tiles, size),
            Ok(tree::root(leaves)),
            "{size}"
        );
        let step = match size {
            ..=300 => (size / 16).max(1),
            _ => size / 5,
        };
        for index in (0..size).step_by(step as usize).chain([size - 1]) {
            assert_eq!(
                tree::inclusion_proof_of(&tiles, index, size),
                Ok(tree::inclusion_proof(index, leaves)),
                "{index} of {size}"
            );
        }
        for old in (1..=size).step_by(step as usize).chain([size]) {
            assert_eq!(
                tree::consistency_proof_of(&tiles, old, size),
                Ok(tree::consistency_proof(old, leaves)),
                "{old} to {size}"
            );
        }
    }
}
