//! Comparing JSON from two encoders that may spell a float differently.

/// JSON text in one canonical spelling: each number with a fraction or
/// an exponent re-spelt from the double it denotes (Rust's shortest form),
/// everything else as written. Two encoders that may spell a float
/// differently (`1e+300` / `1e300`) compare equal exactly when they wrote
/// the same values, keys and escapes in the same order. Panics, naming
/// `who`, on text that is not JSON (a strict reader: no nesting limit,
/// UTF-8 only, nothing after the value).
pub(crate) fn canonical(text: &[u8], who: &str) -> String {
    let mut r = Reader {
        text,
        at: 0,
        out: String::with_capacity(text.len()),
    };
    let read = r.value().and_then(|()| match r.at == text.len() {
        true => Ok(()),
        false => Err("text after the value".into()),
    });
    if let Err(e) = read {
        panic!(
            "{who} wrote invalid JSON ({e} at byte {}): {:?}",
            r.at,
            String::from_utf8_lossy(text)
        );
    }
    r.out
}

struct Reader<'a> {
    text: &'a [u8],
    at: usize,
    out: String,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    fn expect(&mut self, b: u8) -> Result<(), String> {
        if self.peek() != Some(b) {
            return Err(format!("expected {:?}", b as char));
        }
        self.at += 1;
        self.out.push(b as char);
        Ok(())
    }

    fn value(&mut self) -> Result<(), String> {
        match self.peek().ok_or("end of text")? {
            b'{' => self.list(b'}', true),
            b'[' => self.list(b']', false),
            b'"' => self.string(),
            b't' => self.word("true"),
            b'f' => self.word("false"),
            b'n' => self.word("null"),
            _ => self.number(),
        }
    }

    /// An object (`keyed`) or an array, without whitespace (neither
    /// encoder writes any).
    fn list(&mut self, close: u8, keyed: bool) -> Result<(), String> {
        self.expect(self.text[self.at])?;
        if self.peek() == Some(close) {
            return self.expect(close);
        }
        loop {
            if keyed {
                self.string()?;
                self.expect(b':')?;
            }
            self.value()?;
            if self.peek() == Some(b',') {
                self.expect(b',')?;
            } else {
                return self.expect(close);
            }
        }
    }

    fn string(&mut self) -> Result<(), String> {
        let start = self.at;
        self.expect(b'"')?;
        loop {
            match self.peek().ok_or("unterminated string")? {
                b'"' => break,
                b'\\' => {
                    let escape = *self.text.get(self.at + 1).ok_or("cut escape")?;
                    let len = match escape {
                        b'u' => 6,
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                        _ => return Err("bad escape".into()),
                    };
                    self.at += len;
                }
                b if b < 0x20 => return Err("raw control character in a string".into()),
                _ => self.at += 1,
            }
        }
        self.at += 1;
        let s = std::str::from_utf8(&self.text[start + 1..self.at]).map_err(|e| e.to_string())?;
        self.out.push_str(s);
        Ok(())
    }

    fn word(&mut self, w: &str) -> Result<(), String> {
        if !self.text[self.at..].starts_with(w.as_bytes()) {
            return Err(format!("expected {w}"));
        }
        self.at += w.len();
        self.out.push_str(w);
        Ok(())
    }

    fn number(&mut self) -> Result<(), String> {
        let start = self.at;
        while matches!(
            self.peek(),
            Some(b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
        ) {
            self.at += 1;
        }
        let token = std::str::from_utf8(&self.text[start..self.at]).map_err(|e| e.to_string())?;
        if token.contains(['.', 'e', 'E']) {
            let f: f64 = token.parse().map_err(|_| format!("bad number {token}"))?;
            self.out.push_str(&format!("{f:?}"));
        } else {
            token
                .parse::<i128>()
                .map_err(|_| format!("bad number {token:?}"))?;
            self.out.push_str(token);
        }
        Ok(())
    }
}
