//! Writing a packed `db.query` result (rows.rs) as JSON, as the encoder
//! (json.rs) would write its plain form, straight from the block.
#![allow(unsafe_code)]

use std::cell::Cell as StdCell;

use smallvec::SmallVec;

use cove_caps::json::{
    is_plain, put_float, put_int, put_string, write_string, JsonError, MAX_FLOAT_LEN, MAX_INT_LEN,
};
use cove_core::Room;

use super::rows::{Cell, Packed, INT, NULL, REAL};

/// Write the packed result as the encoder would write its plain form:
/// objects with sorted keys, the last non-NULL of equal names, `[]` for a
/// row with no values.
pub(super) unsafe fn write_json(block: *const u8, out: &mut Vec<u8>) -> Result<(), JsonError> {
    let p = Packed::from_block(block);
    // Nothing here is allocated for a result of up to 16 columns (the
    // keys' buffer is kept between calls): three allocations and frees were
    // ~400 instructions of a 20-row result.
    let mut order: SmallVec<[usize; 16]> = (0..p.cols).collect();
    order.sort_by(|&a, &b| key_order(p.text(p.names[a]), p.text(p.names[b])).then(a.cmp(&b)));
    // One member per distinct name: its `,"name":` and its columns, a run of
    // `order` (more than one only when names repeat).
    let mut keys = KEYS.take();
    keys.clear();
    let mut members: SmallVec<[Member; 16]> = SmallVec::new();
    let mut i = 0;
    while i < order.len() {
        let name = p.text(p.names[order[i]]);
        let mut j = i + 1;
        while j < order.len() && p.text(p.names[order[j]]) == name {
            j += 1;
        }
        let from = keys.len();
        keys.push(b',');
        write_string(&mut keys, name);
        keys.push(b':');
        members.push(Member {
            col: order[i],
            cols: i..j,
            key: from..keys.len(),
        });
        i = j;
    }
    // Plain slices in the loops: a `SmallVec` checks where it keeps its
    // items at every access.
    let written = write_rows(&p, &order, &members, &keys, out);
    if keys.capacity() <= 4096 {
        KEYS.set(keys);
    }
    written
}

/// [`write_json`]'s rows, with the members' keys ready.
fn write_rows(
    p: &Packed<'_>,
    order: &[usize],
    members: &[Member],
    keys: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), JsonError> {
    // A row with a value in every column and no repeated name, the usual
    // kind, is written member after member; `{` replaces the first comma.
    let simple = members.len() == p.cols;
    // All of it, if no text needs escaping: then no write below grows `out`.
    let per_row = keys.len() + 3;
    let cells: usize = p.cells.iter().map(|&c| room_for(c)).sum();
    let all = 2 + p.rows * per_row + cells;
    let mut room = Room::new(out, all);
    let member_keys: SmallVec<[&[u8]; 16]> = members.iter().map(|m| &keys[m.key.clone()]).collect();
    room.byte(b'[');
    for r in 0..p.rows {
        let row = p.row(r);
        if r > 0 {
            room.byte(b',');
        }
        if simple && row.iter().all(|c| c.kind != NULL) {
            // SAFETY: the room left covers the rows still to write, each
            // row's share being its keys, braces, comma and `room_for` of
            // its cells (~1k instructions of checks a 20-row result). Only
            // text that needs escaping writes beyond its share; the room
            // is then reserved again in full.
            unsafe {
                room.byte_reserved(b'{');
                for (k, m) in members.iter().enumerate() {
                    let key = member_keys[k];
                    room.put_reserved(if k == 0 { &key[1..] } else { key });
                    let c = row[m.col];
                    match c.kind {
                        INT => {
                            room.put_reserved(itoa::Buffer::new().format(c.bits as i64).as_bytes())
                        }
                        REAL => put_float(&mut room, f64::from_bits(c.bits))?,
                        _ => {
                            let text = p.text(c);
                            if is_plain(text) {
                                room.byte_reserved(b'"');
                                room.put_reserved(text);
                                room.byte_reserved(b'"');
                            } else {
                                put_string(&mut room, text);
                                room.reserve(all);
                            }
                        }
                    }
                }
                room.byte_reserved(b'}');
            }
            continue;
        }
        let mut first = true;
        for m in members {
            // Equal names: the last non-NULL wins, as in the row table.
            let mut last = order[m.cols.clone()].iter().rev().map(|&c| row[c]);
            let Some(c) = last.find(|c| c.kind != NULL) else {
                continue;
            };
            let key = &keys[m.key.clone()];
            if first {
                room.byte(b'{');
                room.put(&key[1..]);
                first = false;
            } else {
                room.put(key);
            }
            put_cell(&mut room, p, c)?;
        }
        room.put(if first { b"[]" } else { b"}" });
        // Its text may have been escaped past its share, and the rows
        // after it may be written unchecked.
        room.reserve(all);
    }
    room.byte(b']');
    Ok(())
}

thread_local! {
    /// [`write_json`]'s key bytes, kept for their capacity.
    static KEYS: StdCell<Vec<u8>> = const { StdCell::new(Vec::new()) };
}

/// Write a non-NULL cell's value.
#[inline(always)]
fn put_cell(room: &mut Room<'_>, p: &Packed<'_>, c: Cell) -> Result<(), JsonError> {
    match c.kind {
        INT => put_int(room, c.bits as i64),
        REAL => put_float(room, f64::from_bits(c.bits))?,
        _ => put_string(room, p.text(c)),
    }
    Ok(())
}

/// A key of the rows' objects.
struct Member {
    /// Its first column.
    col: usize,
    /// Its columns, as a range of the sorted order.
    cols: std::ops::Range<usize>,
    /// Its `"name":` in the key bytes.
    key: std::ops::Range<usize>,
}

/// The most a cell's JSON takes when its text needs no escaping.
fn room_for(c: Cell) -> usize {
    match c.kind {
        NULL => 0,
        INT => MAX_INT_LEN,
        REAL => MAX_FLOAT_LEN,
        _ => c.bits as usize + 2,
    }
}

/// The byte order of two object keys. Keys mostly differ in their first
/// byte: that is compared before calling into memcmp (~50 instructions a
/// comparison).
#[inline(always)]
pub(crate) fn key_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    match (a.first(), b.first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}
