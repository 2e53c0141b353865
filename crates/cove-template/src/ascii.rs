//! ASCII case changes a word at a time (`upper` and `lower` filters).
//!
//! The standard `make_ascii_uppercase` changes one byte per step (~10
//! instructions a byte); here eight bytes take about as many. Changing
//! the case is idempotent (an upper-case letter is left as it is), so the
//! last word may overlap the one before it instead of being done byte by
//! byte.

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = ONES * 0x80;

/// Upper-case the ASCII letters of `s`; other bytes stay.
pub(crate) fn upper(s: &mut [u8]) {
    change(s, b'a', b'z');
}

/// Lower-case the ASCII letters of `s`; other bytes stay.
pub(crate) fn lower(s: &mut [u8]) {
    change(s, b'A', b'Z');
}

/// Flip the case bit (0x20) of every byte of `w` in `first..=last`.
#[inline(always)]
fn flip(w: u64, first: u8, last: u8) -> u64 {
    // Per byte, on its low 7 bits (so no sum carries into the next byte):
    // the high bit of `from` is set when the byte is ≥ `first`, that of
    // `past` when it is > `last`; bytes ≥ 0x80 are left out.
    let low = w & !HIGH;
    let from = low + ONES * u64::from(0x80 - first);
    let past = low + ONES * u64::from(0x7f - last);
    let hit = from & !past & !w & HIGH;
    w ^ (hit >> 2)
}

fn change(s: &mut [u8], first: u8, last: u8) {
    let n = s.len();
    if n >= 8 {
        let mut i = 0;
        loop {
            let at = i.min(n - 8);
            let word: &mut [u8; 8] = (&mut s[at..at + 8]).try_into().expect("8 bytes");
            *word = flip(u64::from_le_bytes(*word), first, last).to_le_bytes();
            if at == n - 8 {
                return;
            }
            i += 8;
        }
    }
    if n >= 4 {
        for at in [0, n - 4] {
            let word: &mut [u8; 4] = (&mut s[at..at + 4]).try_into().expect("4 bytes");
            let w = u64::from(u32::from_le_bytes(*word));
            *word = (flip(w, first, last) as u32).to_le_bytes();
        }
        return;
    }
    for b in s {
        *b = flip(u64::from(*b), first, last) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::{lower, upper};

    #[test]
    fn same_as_the_standard_library_for_every_byte_and_length() {
        let all: Vec<u8> = (0..=255u8).collect();
        for n in 0..40 {
            for start in (0..all.len() - n).step_by(7) {
                let src = &all[start..start + n];
                let (mut a, mut b) = (src.to_vec(), src.to_vec());
                upper(&mut a);
                b.make_ascii_uppercase();
                assert_eq!(a, b, "upper of {src:?}");
                let (mut a, mut b) = (src.to_vec(), src.to_vec());
                lower(&mut a);
                b.make_ascii_lowercase();
                assert_eq!(a, b, "lower of {src:?}");
            }
        }
        let mut text = b"Item 12 <b>caf\xc3\xa9</b> zZ@[`{".to_vec();
        upper(&mut text);
        assert_eq!(text, b"ITEM 12 <B>CAF\xc3\xa9</B> ZZ@[`{".to_vec());
    }
}
