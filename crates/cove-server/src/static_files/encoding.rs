//! `Accept-Encoding` negotiation (RFC 9110 §12.5.3) and compression with
//! gzip (`flate2`) and brotli (`brotli`).

use std::io::{self, Write};

/// A content coding Cove can send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Encoding {
    Br,
    Gzip,
}

impl Encoding {
    /// The `Content-Encoding` token.
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Br => "br",
            Encoding::Gzip => "gzip",
        }
    }

    /// The name suffix of a precompressed sibling (`app.css.br`).
    pub fn suffix(self) -> &'static str {
        match self {
            Encoding::Br => ".br",
            Encoding::Gzip => ".gz",
        }
    }
}

/// The codings a client accepts, best first: by weight, brotli before gzip
/// on a tie (smaller). Weights are kept in thousandths.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct Accepted {
    br: Option<u16>,
    gzip: Option<u16>,
    star: Option<u16>,
}

/// `q=0.5` → 500; `None` if it is not a weight (the element is then ignored).
fn weight(params: &str) -> Option<u16> {
    let mut q = 1000;
    for param in params.split(';') {
        let Some((name, value)) = param.split_once('=') else {
            continue;
        };
        if name.trim().eq_ignore_ascii_case("q") {
            let v: f32 = value.trim().parse().ok()?;
            if !(0.0..=1.0).contains(&v) {
                return None;
            }
            q = (v * 1000.0).round() as u16;
        }
    }
    Some(q)
}

impl Accepted {
    /// From every `Accept-Encoding` value of a request.
    pub fn of<'a>(values: impl Iterator<Item = &'a str>) -> Accepted {
        let mut a = Accepted::default();
        for element in values.flat_map(|v| v.split(',')) {
            let (name, params) = element.split_once(';').unwrap_or((element, ""));
            let Some(q) = weight(params) else { continue };
            let name = name.trim();
            let slot = if name.eq_ignore_ascii_case("br") {
                &mut a.br
            } else if name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip") {
                &mut a.gzip
            } else if name == "*" {
                &mut a.star
            } else {
                continue;
            };
            *slot = Some(q);
        }
        a
    }

    /// Acceptable codings (weight above 0), best first.
    pub fn preferred(&self) -> impl Iterator<Item = Encoding> {
        let br = self.br.or(self.star).unwrap_or(0);
        let gzip = self.gzip.or(self.star).unwrap_or(0);
        let order = if gzip > br {
            [(Encoding::Gzip, gzip), (Encoding::Br, br)]
        } else {
            [(Encoding::Br, br), (Encoding::Gzip, gzip)]
        };
        order.into_iter().filter(|&(_, q)| q > 0).map(|(e, _)| e)
    }
}

/// Brotli quality for compression on the fly: results are cached per
/// worker, so a good ratio pays; 11 costs ~20× more time than 6 for a few
/// percent. Precompressed `.br` siblings can use 11.
const BROTLI_QUALITY: u32 = 6;
const BROTLI_WINDOW: u32 = 22;

/// `data` compressed.
pub(super) fn compress(data: &[u8], enc: Encoding) -> io::Result<Vec<u8>> {
    let mut out = Vec::with_capacity(data.len() / 3 + 64);
    match enc {
        Encoding::Gzip => {
            let mut w = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            w.write_all(data)?;
            out = w.finish()?;
        }
        Encoding::Br => {
            let mut w =
                brotli::CompressorWriter::new(&mut out, 16 * 1024, BROTLI_QUALITY, BROTLI_WINDOW);
            w.write_all(data)?;
            // Ends the stream (writing into a Vec cannot fail).
            w.into_inner();
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn prefs(v: &str) -> Vec<Encoding> {
        Accepted::of(std::iter::once(v)).preferred().collect()
    }

    #[test]
    fn negotiates_by_weight() {
        use Encoding::*;
        assert_eq!(prefs("gzip, deflate, br"), vec![Br, Gzip]);
        assert_eq!(prefs("gzip"), vec![Gzip]);
        assert_eq!(prefs("br;q=0.5, gzip"), vec![Gzip, Br]);
        assert_eq!(prefs("br;q=0, gzip"), vec![Gzip]);
        assert_eq!(prefs("gzip;q=0"), vec![]);
        assert_eq!(prefs("identity"), vec![]);
        assert_eq!(prefs(""), vec![]);
        assert_eq!(prefs("*"), vec![Br, Gzip]);
        assert_eq!(prefs("*;q=0.5, br;q=0"), vec![Gzip]);
        assert_eq!(prefs("GZIP;Q=1.0, BR;q=0.9"), vec![Gzip, Br]);
        assert_eq!(prefs("x-gzip"), vec![Gzip]);
        assert_eq!(prefs("br;q=abc, gzip"), vec![Gzip]);
        assert_eq!(prefs("br;q=2"), vec![]);
        let two = ["gzip;q=0.1", "br"];
        let got: Vec<_> = Accepted::of(two.into_iter()).preferred().collect();
        assert_eq!(got, vec![Br, Gzip]);
    }

    #[test]
    fn compresses_both_ways_and_round_trips() {
        let text = "body { color: red; }\n".repeat(500);
        let gz = compress(text.as_bytes(), Encoding::Gzip).unwrap();
        assert_eq!(&gz[..2], &[0x1f, 0x8b]);
        let mut back = String::new();
        flate2::read::GzDecoder::new(&gz[..])
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, text);

        let br = compress(text.as_bytes(), Encoding::Br).unwrap();
        assert!(br.len() < text.len() / 10);
        let mut back = String::new();
        brotli::Decompressor::new(&br[..], 4096)
            .read_to_string(&mut back)
            .unwrap();
        assert_eq!(back, text);
    }
}
