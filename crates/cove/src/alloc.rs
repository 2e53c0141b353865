//! The global allocator: mimalloc, entered through its plain `mi_malloc`
//! wherever that already gives the alignment asked for.
//!
//! The `mimalloc` crate sends every request through `mi_malloc_aligned`,
//! which takes a slower path whenever the next free block is not aligned
//! beyond what was asked (often, for Lua's 16-byte-aligned allocations in
//! 8-byte-spaced size classes: it then over-allocates) or the page's free
//! list needs refilling. Every mimalloc block is aligned to a machine word,
//! so requests aligned to 8 or less take `mi_malloc`; 16-byte requests are
//! rounded up to a multiple of 16 (whose size classes are 16-byte spaced)
//! and checked, with the aligned call as the fallback.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// The alignment every mimalloc block has.
const WORD: usize = std::mem::size_of::<usize>();

pub struct Allocator;

#[inline]
fn aligned(p: *mut c_void, align: usize) -> bool {
    (p as usize) & (align - 1) == 0
}

// SAFETY: every path returns a block of at least the size asked for,
// aligned to `layout.align()` (checked where mimalloc does not promise it),
// or null; `dealloc`/`realloc` take only blocks from these functions, and
// `mi_free`/`mi_realloc` accept any mimalloc block, aligned or not.
// (`mi_realloc_aligned` keeps a block that is already aligned.)
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let (size, align) = (layout.size(), layout.align());
        if align <= WORD {
            return mi::mi_malloc(size).cast();
        }
        if align == 2 * WORD {
            let p = mi::mi_malloc(size.next_multiple_of(align));
            if aligned(p, align) {
                return p.cast();
            }
            mi::mi_free(p);
        }
        mi::mi_malloc_aligned(size, align).cast()
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.align() <= WORD {
            return mi::mi_zalloc(layout.size()).cast();
        }
        mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi::mi_free(ptr.cast());
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let align = layout.align();
        if align <= WORD {
            return mi::mi_realloc(ptr.cast(), new_size).cast();
        }
        mi::mi_realloc_aligned(ptr.cast(), new_size, align).cast()
    }
}

extern "C" {
    // In every mimalloc build; libmimalloc-sys declares it only with its
    // `extended` feature, which would bring nothing else we use.
    fn mi_collect(force: bool);
}

/// Give back to the OS the memory the calling thread's mimalloc heap holds
/// free (Lua VMs and Rust allocate there) and what glibc's malloc holds
/// free (QuickJS allocates there). Called by a worker after a script ran
/// out of heap (`cove_core::release_heap`), so its RSS falls back; mimalloc
/// would otherwise keep those pages until it touched them again.
pub fn release() {
    // SAFETY: no preconditions; both only walk their own free lists.
    unsafe {
        mi_collect(true);
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_have_the_alignment_asked_for_and_keep_their_bytes() {
        let a = Allocator;
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1, 7, 8, 15, 16, 24, 40, 56, 100, 1000, 1025, 5000, 70_000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; each block is written within its
                // size and freed with its layout.
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size}, align {align}");
                    std::ptr::write_bytes(p, 0xab, size);
                    let q = a.realloc(p, layout, size * 3);
                    assert_eq!(q as usize % align, 0, "realloc {size}, align {align}");
                    assert!((0..size).all(|i| *q.add(i) == 0xab));
                    a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0);
                    assert!((0..size).all(|i| *z.add(i) == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
