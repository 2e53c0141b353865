//! Appending short byte strings to the output.
//!
//! Most of what a template render or a JSON encoder writes is a few bytes
//! at a time (`">`, `</li>`, a key, a number), and `Vec::extend_from_slice` makes a `memcpy` call
//! for each: about half the cost of such a write is the call. Up to 16
//! bytes are copied here with two overlapping loads and stores instead.
#![allow(unsafe_code)]

/// Append `s` to `out`.
#[inline(always)]
pub fn append(out: &mut Vec<u8>, s: &[u8]) {
    let n = s.len();
    if n > 16 {
        out.extend_from_slice(s);
        return;
    }
    out.reserve(16);
    let len = out.len();
    // SAFETY: `reserve(16)` made room for 16 bytes past `len` (n ≤ 16);
    // every read is inside `s` (the two reads of a pair overlap when n is
    // below twice their size) and the bytes up to `len + n` are written
    // before the length covers them.
    unsafe {
        let src = s.as_ptr();
        let dst = out.as_mut_ptr().add(len);
        if n >= 8 {
            let a = src.cast::<u64>().read_unaligned();
            let b = src.add(n - 8).cast::<u64>().read_unaligned();
            dst.cast::<u64>().write_unaligned(a);
            dst.add(n - 8).cast::<u64>().write_unaligned(b);
        } else if n >= 4 {
            let a = src.cast::<u32>().read_unaligned();
            let b = src.add(n - 4).cast::<u32>().read_unaligned();
            dst.cast::<u32>().write_unaligned(a);
            dst.add(n - 4).cast::<u32>().write_unaligned(b);
        } else {
            for i in 0..n {
                *dst.add(i) = *src.add(i);
            }
        }
        out.set_len(len + n);
    }
}

#[cfg(test)]
mod tests {
    use super::append;

    #[test]
    fn every_short_length_and_a_long_one() {
        let src: Vec<u8> = (0..40u8).collect();
        for n in 0..=40 {
            for start in [0usize, 1, 7, 15] {
                let mut out = b"x".repeat(start);
                append(&mut out, &src[..n]);
                let mut want = b"x".repeat(start);
                want.extend_from_slice(&src[..n]);
                assert_eq!(out, want, "n = {n}, after {start} bytes");
            }
        }
    }
}
