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
    // SAFETY: `reserve(16)` made room for 16 bytes past `len` (n ≤ 16), and
    // the bytes up to `len + n` are written before the length covers them.
    unsafe {
        copy_short(s.as_ptr(), out.as_mut_ptr().add(len), n);
        out.set_len(len + n);
    }
}

/// Copy `n` bytes, up to 16, from `src` to `dst` without a `memcpy` call.
///
/// # Safety
/// `src` is readable and `dst` writable for `n` bytes, `n <= 16`, and the
/// two do not overlap.
#[inline(always)]
pub unsafe fn copy_short(src: *const u8, dst: *mut u8, n: usize) {
    debug_assert!(n <= 16);
    // Every read is inside `src`: the two reads of a pair overlap when n is
    // below twice their size.
    unsafe {
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
    }
}

/// A writer into room reserved at the end of a `Vec<u8>`.
///
/// Its position and end stay in locals, where a `Vec`'s length and capacity
/// are read back from memory after every call the compiler cannot see
/// through. An encoder that reserves what a run of writes needs ahead of it
/// (a row, an object) pays one comparison per write. A write past the room
/// still works: it grows the vector. Dropping the writer sets the vector's
/// length to what was written.
pub struct Room<'a> {
    out: &'a mut Vec<u8>,
    at: *mut u8,
    end: *mut u8,
}

impl<'a> Room<'a> {
    /// A writer at the end of `out`, with room for `n` bytes.
    pub fn new(out: &'a mut Vec<u8>, n: usize) -> Room<'a> {
        let mut room = Room {
            out,
            at: std::ptr::null_mut(),
            end: std::ptr::null_mut(),
        };
        room.renew(n);
        room
    }

    /// Make room for `n` bytes from here.
    #[inline(always)]
    pub fn reserve(&mut self, n: usize) {
        if self.left() < n {
            self.grow(n);
        }
    }

    /// Append one byte.
    #[inline(always)]
    pub fn byte(&mut self, b: u8) {
        self.reserve(1);
        // SAFETY: `reserve` left room for it.
        unsafe { self.byte_reserved(b) }
    }

    /// Append `s`.
    #[inline(always)]
    pub fn put(&mut self, s: &[u8]) {
        self.reserve(s.len());
        // SAFETY: `reserve` left room for `s`.
        unsafe { self.put_reserved(s) }
    }

    /// Append `s` to room reserved for it earlier, without checking: a
    /// writer that reserved a whole run of writes (a packed result's rows)
    /// saves the comparison and the call to [`Room::reserve`] of each.
    ///
    /// # Safety
    /// At least `s.len()` bytes of room are left.
    #[inline(always)]
    pub unsafe fn put_reserved(&mut self, s: &[u8]) {
        let n = s.len();
        debug_assert!(self.left() >= n, "put_reserved past the room");
        // SAFETY: the caller guarantees the room; `s` cannot overlap it,
        // as the room is past the vector's length.
        unsafe {
            if n <= 16 {
                copy_short(s.as_ptr(), self.at, n);
            } else {
                std::ptr::copy_nonoverlapping(s.as_ptr(), self.at, n);
            }
            self.at = self.at.add(n);
        }
    }

    /// [`Room::byte`] to room reserved for it earlier.
    ///
    /// # Safety
    /// At least one byte of room is left.
    #[inline(always)]
    pub unsafe fn byte_reserved(&mut self, b: u8) {
        debug_assert!(self.left() >= 1, "byte_reserved past the room");
        // SAFETY: the caller guarantees the room.
        unsafe {
            self.at.write(b);
            self.at = self.at.add(1);
        }
    }

    /// Where the next byte goes, for a loop of writes into reserved room
    /// that keeps its position in a local: through [`Room::put_reserved`]
    /// the compiler stores the position back after every byte, as a byte
    /// written through it might be the writer's own field. The loop
    /// reports how far it wrote with [`Room::advance_to`].
    #[inline(always)]
    pub fn cursor(&self) -> *mut u8 {
        self.at
    }

    /// Move the position to `at`, past bytes written from [`Room::cursor`].
    ///
    /// # Safety
    /// `at` lies between the cursor and the end of the room reserved since
    /// the cursor was taken, and every byte before it is written.
    #[inline(always)]
    pub unsafe fn advance_to(&mut self, at: *mut u8) {
        debug_assert!(
            self.at <= at && at <= self.end,
            "advance_to outside the room"
        );
        self.at = at;
    }

    /// Write through the vector itself (for the rare paths).
    pub fn with_vec<R>(&mut self, write: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        self.commit();
        // No room while `write` runs: it may move the vector's buffer, and
        // if it panics, dropping this writer must not set a length from a
        // pointer into the old one.
        self.at = std::ptr::null_mut();
        self.end = std::ptr::null_mut();
        let r = write(self.out);
        self.renew(0);
        r
    }

    fn left(&self) -> usize {
        self.end as usize - self.at as usize
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, n: usize) {
        self.commit();
        self.renew(n);
    }

    fn renew(&mut self, n: usize) {
        self.out.reserve(n);
        let len = self.out.len();
        let free = self.out.capacity() - len;
        // SAFETY: both stay inside the allocation (or at its end).
        unsafe {
            self.at = self.out.as_mut_ptr().add(len);
            self.end = self.at.add(free);
        }
    }

    fn commit(&mut self) {
        if self.at.is_null() {
            return;
        }
        let len = self.at as usize - self.out.as_ptr() as usize;
        // SAFETY: every byte up to `at` was written, and `at` is within the
        // capacity `renew` saw (the vector did not change since).
        unsafe { self.out.set_len(len) };
    }
}

impl Drop for Room<'_> {
    fn drop(&mut self) {
        self.commit();
    }
}

#[cfg(test)]
mod tests {
    use super::{append, Room};

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

    #[test]
    fn room_writes_past_what_was_reserved_and_through_the_vector() {
        let mut out = b"ab".to_vec();
        {
            let mut room = Room::new(&mut out, 3);
            room.byte(b'[');
            room.put(b"0123456789abcdefXYZ");
            room.with_vec(|v| v.extend_from_slice(b"--"));
            for i in 0..100u8 {
                room.byte(b'a' + i % 26);
                room.put(&[b'0' + i % 10; 9]);
            }
            room.put(b"]");
        }
        let mut want = b"ab[0123456789abcdefXYZ--".to_vec();
        for i in 0..100u8 {
            want.push(b'a' + i % 26);
            want.extend_from_slice(&[b'0' + i % 10; 9]);
        }
        want.push(b']');
        assert_eq!(out, want);
    }

    #[test]
    fn a_panic_while_writing_through_the_vector_leaves_it_whole() {
        let mut out = Vec::with_capacity(4);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut room = Room::new(&mut out, 4);
            room.put(b"ab");
            room.with_vec(|v| {
                v.extend_from_slice(&[b'x'; 4096]);
                panic!("in the middle of a write");
            });
        }));
        assert!(caught.is_err());
        assert_eq!(out.len(), 2 + 4096);
        assert_eq!(&out[..3], b"abx");
    }
}
