//! A glance at each request head as it is read from the socket, for what
//! hyper's parser hides from the service: whether the head carried both
//! `Content-Length` and `Transfer-Encoding`. hyper drops the first and
//! frames the body by the chunks; Cove refuses such a request outright
//! (400, RFC 9112 §6.3), so it has to see the head itself.
//!
//! The scan looks at the first bytes of each header line only, and skips
//! the rest of a line with one (vectorised) search for its LF: nothing is copied, and
//! a head split across any number of reads costs a few bytes of state. It
//! also reads the `Content-Length` value, so that [`Timed`] can count the
//! body and know where the next request starts.
//!
//! It follows httparse's reading of a request head as hyper configures it:
//! blank lines before the request line are skipped, lines end in CRLF or a
//! bare LF, a header name is followed by its colon with no space between,
//! and there is no line folding. A head that breaks these rules is refused
//! by hyper (400) before any service sees it, so what the scan makes of it
//! does not matter.
//!
//! [`Timed`]: crate::timeouts::Timed

/// The names looked for, lowercase, with their colon.
const CONTENT_LENGTH: &[u8] = b"content-length:";
const TRANSFER_ENCODING: &[u8] = b"transfer-encoding:";

/// The line starts with `name` (lowercase, with its colon), in any case.
/// OR-ing 0x20 lowercases a letter and keeps `-` and `:`; the bytes it would
/// also map onto them (CR, other controls) cannot be in a header name hyper
/// accepts, and a head it refuses has no next request to misread. No early
/// exit, so the comparison of these fixed lengths vectorises.
#[inline]
fn has_name(line: &[u8], name: &[u8]) -> bool {
    line.len() >= name.len()
        && line[..name.len()]
            .iter()
            .zip(name)
            .fold(0u8, |diff, (a, b)| diff | ((a | 0x20) ^ b))
            == 0
}

/// Without blanks (spaces, tabs; a CR at the end, as the byte steps take
/// it) at either end.
fn trim_blanks(v: &[u8]) -> &[u8] {
    let blank = |b: &u8| matches!(b, b' ' | b'\t');
    let start = v.iter().position(|b| !blank(b)).unwrap_or(v.len());
    let end = v
        .iter()
        .rposition(|b| !blank(b) && *b != b'\r')
        .map_or(start, |e| e + 1);
    &v[start..end.max(start)]
}

/// What a complete head showed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Head {
    /// Where the head ends in the bytes last fed: just past its blank line.
    pub(crate) end: usize,
    /// Both `Content-Length` and `Transfer-Encoding` were there.
    pub(crate) conflict: bool,
    /// The body's length if the head says it plainly: its `Content-Length`
    /// (one value, or the same one repeated), or 0 with neither header.
    /// `None` for a chunked body or a `Content-Length` hyper would refuse.
    pub(crate) body: Option<u64>,
}

/// Where the scan is in the current line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Nothing of the line read yet.
    LineStart,
    /// The line so far is one CR: it is the blank line if an LF follows.
    Cr,
    /// The line so far is the first `n` bytes of `transfer-encoding:`
    /// (`te`) or of `content-length:`.
    Name { te: bool, n: u8 },
    /// In a `Content-Length` value.
    Length(Digits),
    /// The rest of the line does not matter.
    Skip,
}

/// A `Content-Length` value being read: optional blanks, decimal digits,
/// optional blanks (httparse trims them, and hyper wants digits only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Digits {
    Before,
    In(u64),
    After(u64),
}

/// The `Content-Length` of the head so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Length {
    Absent,
    Is(u64),
    /// Not a plain number, or two different ones.
    Unusable,
}

/// The scan of one request head, fed the bytes as they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeadScan {
    at: At,
    /// The request line has begun: a blank line now ends the head.
    started: bool,
    transfer_encoding: bool,
    length: Length,
}

impl Default for HeadScan {
    fn default() -> HeadScan {
        HeadScan {
            at: At::LineStart,
            started: false,
            transfer_encoding: false,
            length: Length::Absent,
        }
    }
}

impl HeadScan {
    /// Scan the next bytes of the head. Once its blank line is among them,
    /// returns what the head showed (the scan is then ready for the next
    /// head); bytes after that blank line are not looked at.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Option<Head> {
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            // A whole line from its start: taken in one piece (the byte
            // steps below cost ~15 instructions a byte; this, a search and
            // a comparison a line). They take over for a line split
            // across reads.
            if self.at == At::LineStart {
                if let Some(lf) = memchr::memchr(b'\n', &bytes[i..]) {
                    let line = &bytes[i..i + lf];
                    i += lf + 1;
                    if self.whole_line(line) {
                        return Some(self.finish(i));
                    }
                    continue;
                }
            }
            match self.at {
                At::Skip => match memchr::memchr(b'\n', &bytes[i..]) {
                    Some(lf) => {
                        i += lf + 1;
                        self.at = At::LineStart;
                    }
                    None => return None,
                },
                At::LineStart | At::Cr if b == b'\n' => {
                    i += 1;
                    if self.started {
                        return Some(self.finish(i));
                    }
                    // A blank line before the request line: skipped.
                    self.at = At::LineStart;
                }
                // A CR not followed by LF: hyper refuses the head.
                At::Cr => self.at = At::Skip,
                At::LineStart => {
                    i += 1;
                    self.at = if b == b'\r' {
                        At::Cr
                    } else if !self.started {
                        self.started = true;
                        At::Skip
                    } else {
                        match b.to_ascii_lowercase() {
                            b'c' => At::Name { te: false, n: 1 },
                            b't' => At::Name { te: true, n: 1 },
                            _ => At::Skip,
                        }
                    };
                }
                At::Name { te, n } => {
                    let name = if te {
                        TRANSFER_ENCODING
                    } else {
                        CONTENT_LENGTH
                    };
                    if b.to_ascii_lowercase() != name[usize::from(n)] {
                        // Another header (or the line's end: looked at again).
                        self.at = At::Skip;
                        continue;
                    }
                    i += 1;
                    let n = n + 1;
                    self.at = if usize::from(n) < name.len() {
                        At::Name { te, n }
                    } else if te {
                        self.transfer_encoding = true;
                        At::Skip
                    } else {
                        At::Length(Digits::Before)
                    };
                }
                At::Length(digits) => {
                    i += 1;
                    self.at = match (digits, b) {
                        (_, b'\n') => {
                            self.length_is(digits);
                            At::LineStart
                        }
                        (Digits::Before, b' ' | b'\t') => At::Length(digits),
                        (Digits::Before, b'0'..=b'9') => {
                            At::Length(Digits::In(u64::from(b - b'0')))
                        }
                        (Digits::In(v), b'0'..=b'9') => {
                            match v
                                .checked_mul(10)
                                .and_then(|v| v.checked_add(u64::from(b - b'0')))
                            {
                                Some(v) => At::Length(Digits::In(v)),
                                None => self.unusable_length(),
                            }
                        }
                        (Digits::In(v) | Digits::After(v), b' ' | b'\t' | b'\r') => {
                            At::Length(Digits::After(v))
                        }
                        _ => self.unusable_length(),
                    };
                }
            }
        }
        None
    }

    /// A whole line (without its LF) read from its start; true if it is
    /// the blank line that ends the head. The same reading as the byte
    /// steps of [`feed`](Self::feed).
    fn whole_line(&mut self, line: &[u8]) -> bool {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            // The blank line; before the request line, skipped.
            return self.started;
        }
        if !self.started {
            self.started = true;
            return false;
        }
        // Most lines are neither (Host, Accept, User-Agent, …).
        match line[0] | 0x20 {
            b't' if has_name(line, TRANSFER_ENCODING) => self.transfer_encoding = true,
            b'c' if has_name(line, CONTENT_LENGTH) => {
                let value = trim_blanks(&line[CONTENT_LENGTH.len()..]);
                let digits = if value.is_empty() || !value.iter().all(u8::is_ascii_digit) {
                    None
                } else {
                    value.iter().try_fold(0u64, |v, d| {
                        v.checked_mul(10)?.checked_add(u64::from(d - b'0'))
                    })
                };
                match digits {
                    Some(v) => self.length_is(Digits::In(v)),
                    None => self.length = Length::Unusable,
                }
            }
            _ => {}
        }
        false
    }

    /// A `Content-Length` line ended after `digits`.
    fn length_is(&mut self, digits: Digits) {
        self.length = match (self.length, digits) {
            (_, Digits::Before) | (Length::Unusable, _) => Length::Unusable,
            (Length::Absent, Digits::In(v) | Digits::After(v)) => Length::Is(v),
            (Length::Is(was), Digits::In(v) | Digits::After(v)) if was == v => Length::Is(v),
            (Length::Is(_), _) => Length::Unusable,
        };
    }

    fn unusable_length(&mut self) -> At {
        self.length = Length::Unusable;
        At::Skip
    }

    /// The head ended just before `end`: what it showed, and a fresh scan.
    fn finish(&mut self, end: usize) -> Head {
        let head = Head {
            end,
            conflict: self.transfer_encoding && self.length != Length::Absent,
            body: match (self.transfer_encoding, self.length) {
                (true, _) | (_, Length::Unusable) => None,
                (false, Length::Absent) => Some(0),
                (false, Length::Is(n)) => Some(n),
            },
        };
        *self = HeadScan::default();
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `parts` in turn; the head, and the index of the part it ended in.
    fn scan(parts: &[&[u8]]) -> Option<(usize, Head)> {
        let mut s = HeadScan::default();
        for (k, part) in parts.iter().enumerate() {
            if let Some(head) = s.feed(part) {
                return Some((k, head));
            }
        }
        None
    }

    fn whole(head: &[u8]) -> Head {
        let (_, h) = scan(&[head]).expect("a complete head");
        h
    }

    /// Every split of `head` into two and three reads gives what one read does.
    fn same_in_any_split(head: &[u8]) -> Head {
        let one = whole(head);
        for i in 0..=head.len() {
            let (k, h) = scan(&[&head[..i], &head[i..]]).unwrap();
            assert_eq!(h.conflict, one.conflict, "split at {i}");
            assert_eq!(h.body, one.body, "split at {i}");
            let before = if k == 0 { 0 } else { i };
            assert_eq!(before + h.end, one.end, "split at {i}");
            for j in i..=head.len() {
                let (_, h) = scan(&[&head[..i], &head[i..j], &head[j..]]).unwrap();
                assert_eq!((h.conflict, h.body), (one.conflict, one.body), "{i}/{j}");
            }
        }
        one
    }

    #[test]
    fn both_headers_in_either_order_are_a_conflict() {
        for head in [
            &b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nHost: x\r\nContent-Length: 3\r\n\r\n",
        ] {
            let h = same_in_any_split(head);
            assert!(h.conflict);
            assert_eq!((h.end, h.body), (head.len(), None));
        }
    }

    #[test]
    fn one_of_them_alone_is_no_conflict() {
        let h = same_in_any_split(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 12\r\n\r\n");
        assert_eq!((h.conflict, h.body), (false, Some(12)));
        let h =
            same_in_any_split(b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert_eq!((h.conflict, h.body), (false, None));
        let h = same_in_any_split(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assert_eq!((h.conflict, h.body), (false, Some(0)));
    }

    #[test]
    fn names_are_case_insensitive() {
        let h =
            whole(b"POST / HTTP/1.1\r\ncOnTeNt-LeNgTh: 3\r\nTRANSFER-ENCODING: chunked\r\n\r\n");
        assert!(h.conflict);
    }

    #[test]
    fn bare_lf_line_ends_work_too() {
        let h = same_in_any_split(
            b"POST / HTTP/1.1\nContent-Length: 3\nTransfer-Encoding: chunked\n\n",
        );
        assert!(h.conflict);
        let h = same_in_any_split(b"POST / HTTP/1.1\nHost: x\r\nContent-Length: 7\n\r\n");
        assert_eq!((h.conflict, h.body), (false, Some(7)));
    }

    #[test]
    fn the_words_in_a_value_or_another_name_do_not_count() {
        for head in [
            &b"POST / HTTP/1.1\r\nX-A: Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"POST / HTTP/1.1\r\nContent-Length: 3\r\nX-A: transfer-encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encodings: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Lengths: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nX-Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            // The request line is not a header line.
            b"Transfer-Encoding: / HTTP/1.1\r\nContent-Length: 3\r\n\r\n",
        ] {
            assert!(
                !same_in_any_split(head).conflict,
                "{:?}",
                String::from_utf8_lossy(head)
            );
        }
    }

    #[test]
    fn what_follows_the_blank_line_is_not_looked_at() {
        let head = b"POST / HTTP/1.1\r\nContent-Length: 40\r\n\r\n";
        let mut bytes = head.to_vec();
        bytes.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        let h = whole(&bytes);
        assert_eq!((h.end, h.conflict, h.body), (head.len(), false, Some(40)));
        // Nor in a later read.
        let (k, h) = scan(&[head, b"Transfer-Encoding: chunked\r\n\r\n"]).unwrap();
        assert_eq!((k, h.conflict), (0, false));
    }

    #[test]
    fn the_scan_starts_again_after_a_head() {
        let mut s = HeadScan::default();
        let two = b"GET / HTTP/1.1\r\n\r\nPOST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n";
        let first = s.feed(two).unwrap();
        assert_eq!((first.end, first.conflict), (18, false));
        let second = s.feed(&two[first.end..]).unwrap();
        assert_eq!((second.end, second.conflict), (two.len() - 18, true));
    }

    #[test]
    fn blank_lines_before_the_request_line_are_skipped() {
        let h = same_in_any_split(
            b"\r\n\nPOST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        assert!(h.conflict);
        assert!(scan(&[b"\r\n\r\n\n"]).is_none());
    }

    #[test]
    fn content_length_values() {
        let body = |head: &[u8]| same_in_any_split(head).body;
        assert_eq!(body(b"PUT / HTTP/1.1\r\nContent-Length:5\r\n\r\n"), Some(5));
        assert_eq!(
            body(b"PUT / HTTP/1.1\r\nContent-Length: \t 5 \t\r\n\r\n"),
            Some(5)
        );
        assert_eq!(
            body(b"PUT / HTTP/1.1\r\nContent-Length: 5\r\ncontent-length: 5\r\n\r\n"),
            Some(5)
        );
        assert_eq!(
            body(b"PUT / HTTP/1.1\r\nContent-Length: 18446744073709551615\r\n\r\n"),
            Some(u64::MAX)
        );
        // What hyper refuses, or frames otherwise: not counted.
        for bad in [
            &b"Content-Length: 5\r\nContent-Length: 6"[..],
            b"Content-Length: 5, 5",
            b"Content-Length: +5",
            b"Content-Length: 5 5",
            b"Content-Length: ",
            b"Content-Length: 18446744073709551616",
        ] {
            let mut head = b"PUT / HTTP/1.1\r\n".to_vec();
            head.extend_from_slice(bad);
            head.extend_from_slice(b"\r\n\r\n");
            assert_eq!(body(&head), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn an_unfinished_head_is_no_verdict() {
        assert!(
            scan(&[b"POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n"])
                .is_none()
        );
        assert!(scan(&[b""]).is_none());
    }
}
