//! Static files (Hull §8): `static/` served at `/static/*` from the app
//! directory or from the pack of a built executable, after the app's
//! pre-body middleware and before routing, which gets the request when no
//! such file exists. GET and HEAD; ETag/`If-None-Match` and
//! `Last-Modified`/`If-Modified-Since` → 304; single byte ranges (206/416);
//! gzip or brotli from a precompressed sibling (`app.css.br`) or compressed
//! on the fly and cached per worker. Differences from Hull are listed in
//! docs/compat.md.
//!
//! tower-http's `ServeDir` is not used: it reads the filesystem only, and a
//! built executable serves its files from memory.

mod cache;
mod encoding;
mod mime;
mod path;
mod source;
mod validators;

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::Hasher;
use std::io;

use bytes::Bytes;
use hyper::header::{
    HeaderMap, HeaderName, HeaderValue, ACCEPT_RANGES, CACHE_CONTROL, CONTENT_ENCODING,
    CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, ETAG, LAST_MODIFIED, VARY,
};
use hyper::StatusCode;

use cove_core::{log, AppFiles, Request};

use crate::convert::HttpResponse;
use crate::Body;
use cache::Cache;
use encoding::{Accepted, Encoding};
use source::{Content, Found};
use validators::{Conditions, Range};

/// Bodies compressed on the fly lie in this range: below it a coding's
/// overhead eats the gain; above it the first request would keep a blocking
/// thread busy for long and the cache could not keep the result (serve a
/// precompressed sibling instead).
const COMPRESS_MIN: u64 = 256;
const COMPRESS_MAX: u64 = 1024 * 1024;
/// Compressed bodies kept per worker, in bytes.
const CACHE_BUDGET: usize = 4 * 1024 * 1024;
/// Packed files up to this size are hashed (for their ETag) on the worker's
/// thread; larger ones on the blocking pool.
const HASH_INLINE_MAX: usize = 1024 * 1024;

/// Hull: revalidate every time on disk (files change while developing); a
/// day for the files of a built executable.
const DIR_CACHE_CONTROL: &str = "no-cache";
const PACK_CACHE_CONTROL: &str = "public, max-age=86400";

/// Headers a static response sets itself: middleware's values for these
/// are dropped (its `Cache-Control` replaces ours; anything else is added).
const OWN: [HeaderName; 7] = [
    CONTENT_TYPE,
    CONTENT_LENGTH,
    CONTENT_RANGE,
    CONTENT_ENCODING,
    ETAG,
    LAST_MODIFIED,
    ACCEPT_RANGES,
];

/// A worker's static file server.
pub(crate) struct StaticFiles {
    files: AppFiles,
    compressed: RefCell<Cache>,
    /// Content hashes of packed files (their ETags), computed once per worker.
    hashes: RefCell<HashMap<String, u64>>,
}

/// Whether a request is one static files may answer. Costs one prefix
/// comparison for every other request.
pub(crate) fn wants(req: &Request) -> bool {
    req.path.starts_with("/static/") && (req.method == "GET" || req.method == "HEAD")
}

impl StaticFiles {
    pub fn new(files: AppFiles) -> StaticFiles {
        StaticFiles {
            files,
            compressed: RefCell::new(Cache::new(CACHE_BUDGET)),
            hashes: RefCell::new(HashMap::new()),
        }
    }

    /// The response to a GET or HEAD of `/static/…`, or `None` when there
    /// is no such file (the request goes on to routing). `app_headers` are
    /// what middleware added to the response so far (CORS and the like).
    pub async fn serve(
        &self,
        req: &Request,
        app_headers: &[(String, String)],
    ) -> Option<HttpResponse> {
        let rel = path::file_of(&req.path)?;
        let found = source::find(&self.files, &rel)?;
        let head = req.method == "HEAD";
        let mut res = match self.respond(req, &rel, found).await {
            Ok((status, headers, body)) => reply(status, headers, body, head),
            Err(e) => {
                log::error(&format!(
                    "{} {}: cannot read {rel}: {e}",
                    req.method, req.path
                ));
                let mut h = HeaderMap::new();
                h.insert(
                    CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                );
                let body = Body::bytes(Bytes::from_static(b"Internal Server Error"));
                reply(StatusCode::INTERNAL_SERVER_ERROR, h, body, head)
            }
        };
        add_app_headers(res.headers_mut(), app_headers);
        Some(res)
    }

    async fn respond(
        &self,
        req: &Request,
        rel: &str,
        found: Found,
    ) -> io::Result<(StatusCode, HeaderMap, Body)> {
        let content_type = mime::content_type(rel);
        let compressible = mime::compressible(content_type);
        let etag = self.etag(rel, &found).await;
        let mut h = HeaderMap::with_capacity(8);
        h.insert(ETAG, value(&etag));
        h.insert(
            CACHE_CONTROL,
            HeaderValue::from_static(self.cache_control()),
        );
        if let Some(m) = found.modified.and_then(validators::whole_seconds) {
            h.insert(LAST_MODIFIED, value(&httpdate::fmt_http_date(m)));
        }
        if compressible {
            h.insert(VARY, HeaderValue::from_static("Accept-Encoding"));
        }
        let cond = Conditions::of(&req.headers);
        if cond.not_modified(&etag, found.modified) {
            return Ok((StatusCode::NOT_MODIFIED, h, Body::empty()));
        }
        let len = found.len;
        match cond.range(found.modified, len) {
            Range::Unsatisfiable => {
                h.insert(CONTENT_RANGE, value(&format!("bytes */{len}")));
                Ok((StatusCode::RANGE_NOT_SATISFIABLE, h, Body::empty()))
            }
            Range::Part(r) => {
                // Ranges are of the file as it is: never compressed.
                h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
                h.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
                h.insert(
                    CONTENT_RANGE,
                    value(&format!("bytes {}-{}/{len}", r.start(), r.end())),
                );
                let body = found.content.body(*r.start(), r.end() + 1)?;
                Ok((StatusCode::PARTIAL_CONTENT, h, body))
            }
            Range::Full => {
                h.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
                let accepted = Accepted::of(req.header_values("accept-encoding"));
                let body = self
                    .encoded(rel, &found, &etag, compressible, accepted, &mut h)
                    .await?;
                Ok((StatusCode::OK, h, body))
            }
        }
    }

    /// The whole body, compressed if the client and the file allow it; sets
    /// `Content-Encoding` (or `Accept-Ranges` when not compressed).
    async fn encoded(
        &self,
        rel: &str,
        found: &Found,
        etag: &str,
        compressible: bool,
        accepted: Accepted,
        h: &mut HeaderMap,
    ) -> io::Result<Body> {
        for enc in accepted.preferred() {
            if let Some(sibling) = self.sibling(rel, enc, found) {
                if !compressible {
                    h.insert(VARY, HeaderValue::from_static("Accept-Encoding"));
                }
                h.insert(CONTENT_ENCODING, HeaderValue::from_static(enc.token()));
                return sibling.content.body(0, sibling.len);
            }
        }
        let first = accepted.preferred().next();
        if let (Some(enc), true) = (
            first,
            compressible && (COMPRESS_MIN..=COMPRESS_MAX).contains(&found.len),
        ) {
            if let Some(packed) = self.compressed(rel, enc, etag, found).await? {
                h.insert(CONTENT_ENCODING, HeaderValue::from_static(enc.token()));
                return Ok(Body::bytes(packed));
            }
        }
        h.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
        found.content.body(0, found.len)
    }

    /// A precompressed `rel.br` / `rel.gz` next to the file. On disk it must
    /// not be older than the file, so a stale sibling left from an earlier
    /// build is not served in place of an edited file.
    fn sibling(&self, rel: &str, enc: Encoding, original: &Found) -> Option<Found> {
        let sibling = source::find(&self.files, &format!("{rel}{}", enc.suffix()))?;
        match (sibling.modified, original.modified) {
            (Some(s), Some(o)) if s < o => None,
            _ => Some(sibling),
        }
    }

    /// `found` compressed with `enc`, from the worker's cache or made on the
    /// blocking pool; `None` when compressing does not make it smaller.
    async fn compressed(
        &self,
        rel: &str,
        enc: Encoding,
        etag: &str,
        found: &Found,
    ) -> io::Result<Option<Bytes>> {
        if let Some(hit) = self.compressed.borrow().get(rel, enc, etag) {
            return Ok(hit);
        }
        let (content, len) = (found.content.clone(), found.len);
        let made = tokio::task::spawn_blocking(move || -> io::Result<Option<Bytes>> {
            let data = content.read(0, len)?;
            let packed = encoding::compress(&data, enc)?;
            Ok((packed.len() < data.len()).then(|| Bytes::from(packed)))
        })
        .await
        .map_err(io::Error::other)??;
        self.compressed
            .borrow_mut()
            .put(rel, enc, etag, made.clone());
        Ok(made)
    }

    async fn etag(&self, rel: &str, found: &Found) -> String {
        match &found.content {
            Content::Packed(bytes) => validators::pack_etag(self.pack_hash(rel, bytes).await),
            Content::File(_) => validators::dir_etag(found.modified, found.len),
        }
    }

    async fn pack_hash(&self, rel: &str, bytes: &Bytes) -> u64 {
        if let Some(&h) = self.hashes.borrow().get(rel) {
            return h;
        }
        let h = if bytes.len() <= HASH_INLINE_MAX {
            hash(bytes)
        } else {
            let b = bytes.clone();
            match tokio::task::spawn_blocking(move || hash(&b)).await {
                Ok(h) => h,
                Err(_) => hash(bytes),
            }
        };
        self.hashes.borrow_mut().insert(rel.to_string(), h);
        h
    }

    fn cache_control(&self) -> &'static str {
        match self.files {
            AppFiles::Dir(_) => DIR_CACHE_CONTROL,
            AppFiles::Pack(_) => PACK_CACHE_CONTROL,
        }
    }
}

/// A hash of a file's bytes for its ETag. `DefaultHasher::new()` is the same
/// in every process of one build; a new Cove version may change it, which
/// only costs clients one full download.
fn hash(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(bytes);
    h.finish()
}

/// Our own header values are ASCII without control characters.
fn value(s: &str) -> HeaderValue {
    HeaderValue::from_str(s).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The response; for HEAD without its body, but with the length it has.
fn reply(status: StatusCode, headers: HeaderMap, body: Body, head: bool) -> HttpResponse {
    let len = body.len();
    let mut res = hyper::Response::new(if head { Body::empty() } else { body });
    *res.status_mut() = status;
    *res.headers_mut() = headers;
    if head && status != StatusCode::NOT_MODIFIED {
        res.headers_mut()
            .insert(CONTENT_LENGTH, HeaderValue::from(len));
    }
    res
}

/// Headers middleware added (names and values were checked when set).
fn add_app_headers(map: &mut HeaderMap, app: &[(String, String)]) {
    let mut own_cache_control = true;
    for (n, v) in app {
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(n.as_bytes()),
            HeaderValue::from_str(v),
        ) else {
            continue;
        };
        if OWN.contains(&name) {
            continue;
        }
        if name == CACHE_CONTROL && own_cache_control {
            own_cache_control = false;
            map.insert(name, value);
        } else {
            map.append(name, value);
        }
    }
}
