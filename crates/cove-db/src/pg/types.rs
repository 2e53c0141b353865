//! Cove values to PostgreSQL parameters and PostgreSQL results to Cove values.
//!
//! Apps were written against SQLite, whose values are only NULL, integer, real, text and
//! blob, and whose column types are advice. PostgreSQL is strict, so the conversion is
//! driven by the type PostgreSQL inferred for each parameter and reported for each
//! column, aiming to give an app the value it would have seen from SQLite:
//!
//! * An integer fits any numeric parameter (range-checked, never wrapped), and `bool`
//!   (0 is false): Lua code passes `1`/`0` for flags.
//! * Text for a type Cove has no binary encoder for (`numeric`, `timestamptz`, `uuid`,
//!   an enum, an array, …) is sent in PostgreSQL's *text* format, so the server parses it
//!   exactly as it would parse a literal in the SQL.
//! * Results come in PostgreSQL's binary format and are decoded here: integers and floats
//!   as numbers, `bool` as 1/0 (SQLite's `TRUE`), everything else as the text PostgreSQL
//!   itself would print (with `TimeZone` = `UTC` for `timestamptz`), `bytea` as a blob.
//!   A type not listed is an error that says how to cast it, not a silent guess.

use std::borrow::Cow;
use std::error::Error;
use std::fmt::{self, Write as _};

use postgres_protocol::types as wire;
// `BytesMut` is the buffer type of `ToSql::to_sql`; cove-db does not depend on `bytes`
// itself, so it is named through the re-export `to_sql_checked!` also expands to.
use tokio_postgres::types::private::BytesMut;
use tokio_postgres::types::{to_sql_checked, Format, FromSql, IsNull, Kind, ToSql, Type};
use tokio_postgres::Row;

use crate::error::DbError;
use crate::value::Value;

/// A Cove value bound as a statement parameter, encoded for the type PostgreSQL inferred.
#[derive(Debug)]
pub(crate) struct Param<'a>(pub &'a Value);

/// Why a parameter could not be encoded; `errors::db_error` maps it to `DbError::Params`.
#[derive(Debug)]
pub(crate) struct ParamError(String);

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Error for ParamError {}

impl ToSql for Param<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        match encode(self.0, ty)? {
            Encoded::Null => return Ok(IsNull::Yes),
            Encoded::Int8(v) => wire::int8_to_sql(v, out),
            Encoded::Int4(v) => wire::int4_to_sql(v, out),
            Encoded::Int2(v) => wire::int2_to_sql(v, out),
            Encoded::Float8(v) => wire::float8_to_sql(v, out),
            Encoded::Float4(v) => wire::float4_to_sql(v, out),
            Encoded::Bool(v) => wire::bool_to_sql(v, out),
            Encoded::Oid(v) => wire::oid_to_sql(v, out),
            Encoded::Raw(bytes) => out.extend_from_slice(&bytes),
            Encoded::Jsonb(json) => {
                out.extend_from_slice(&[JSONB_VERSION]);
                out.extend_from_slice(json);
            }
            Encoded::Parsed(text) => out.extend_from_slice(text.as_bytes()),
        }
        Ok(IsNull::No)
    }

    /// Every type is accepted here; [`encode`] refuses the pairs that make no sense, with
    /// a message naming the type.
    fn accepts(_: &Type) -> bool {
        true
    }

    fn encode_format(&self, ty: &Type) -> Format {
        match encode(self.0, ty) {
            Ok(Encoded::Parsed(_)) => Format::Text,
            _ => Format::Binary,
        }
    }

    to_sql_checked!();
}

/// The version byte in front of jsonb's binary format (the JSON text follows).
const JSONB_VERSION: u8 = 1;

/// How one parameter goes on the wire. `encode_format` and `to_sql` both derive it from
/// the same value and type, so the format code and the bytes always agree.
#[derive(Debug)]
enum Encoded<'a> {
    Null,
    Int8(i64),
    Int4(i32),
    Int2(i16),
    Float8(f64),
    Float4(f32),
    Bool(bool),
    Oid(u32),
    /// Bytes sent as they are in binary format (the text types, json, bytea).
    Raw(Cow<'a, [u8]>),
    /// jsonb in binary format: the version byte, then the JSON text.
    Jsonb(&'a [u8]),
    /// Text sent in text format, for PostgreSQL to parse with the type's input function.
    Parsed(Cow<'a, str>),
}

/// Chooses the encoding of `value` for a parameter of type `ty`.
fn encode<'a>(value: &'a Value, ty: &Type) -> Result<Encoded<'a>, ParamError> {
    let ty = base_type(ty);
    match value {
        Value::Null => Ok(Encoded::Null),
        Value::Integer(i) => encode_integer(*i, ty),
        Value::Real(f) => encode_real(*f, ty),
        Value::Text(t) => encode_text(t, ty),
        Value::Blob(b) if *ty == Type::BYTEA => Ok(Encoded::Raw(Cow::Borrowed(b))),
        Value::Blob(_) => Err(ParamError(format!(
            "a blob can only be passed for a bytea parameter, not {}",
            type_name(ty)
        ))),
    }
}

fn encode_integer(i: i64, ty: &Type) -> Result<Encoded<'static>, ParamError> {
    let out_of_range = || ParamError(format!("value {i} out of range for {}", type_name(ty)));
    Ok(match *ty {
        Type::INT8 => Encoded::Int8(i),
        Type::INT4 => Encoded::Int4(i32::try_from(i).map_err(|_| out_of_range())?),
        Type::INT2 => Encoded::Int2(i16::try_from(i).map_err(|_| out_of_range())?),
        Type::OID => Encoded::Oid(u32::try_from(i).map_err(|_| out_of_range())?),
        // Rounds beyond 2^53 (or 2^24 for real), as SQLite's own conversion does.
        Type::FLOAT8 => Encoded::Float8(i as f64),
        Type::FLOAT4 => Encoded::Float4(i as f32),
        Type::BOOL => Encoded::Bool(i != 0),
        _ if is_text_type(ty) => Encoded::Raw(Cow::Owned(i.to_string().into_bytes())),
        // numeric, money, interval, …: PostgreSQL parses the decimal text.
        _ => Encoded::Parsed(Cow::Owned(i.to_string())),
    })
}

fn encode_real(f: f64, ty: &Type) -> Result<Encoded<'static>, ParamError> {
    match *ty {
        Type::FLOAT8 => Ok(Encoded::Float8(f)),
        Type::FLOAT4 => {
            let narrow = f as f32;
            if f.is_finite() && narrow.is_infinite() {
                return Err(ParamError(format!(
                    "value {} out of range for real",
                    real_text(f)
                )));
            }
            Ok(Encoded::Float4(narrow))
        }
        Type::INT8 | Type::INT4 | Type::INT2 => {
            if f.fract() != 0.0 || !f.is_finite() {
                return Err(ParamError(format!(
                    "value {} is not a whole number, as type {} needs",
                    real_text(f),
                    type_name(ty)
                )));
            }
            // 2^63 is exactly representable; every whole f64 below it fits an i64.
            if !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
                return Err(ParamError(format!(
                    "value {} out of range for {}",
                    real_text(f),
                    type_name(ty)
                )));
            }
            encode_integer(f as i64, ty)
        }
        _ if is_text_type(ty) => Ok(Encoded::Raw(Cow::Owned(real_text(f).into_bytes()))),
        _ => Ok(Encoded::Parsed(Cow::Owned(real_text(f)))),
    }
}

fn encode_text<'a>(t: &'a [u8], ty: &Type) -> Result<Encoded<'a>, ParamError> {
    if *ty == Type::BYTEA {
        return Ok(Encoded::Raw(Cow::Borrowed(t)));
    }
    // PostgreSQL rejects both in text (its strings are NUL-terminated inside the server).
    let text = std::str::from_utf8(t)
        .ok()
        .filter(|s| !s.contains('\0'))
        .ok_or_else(|| {
            ParamError(
                "text parameters must be UTF-8 without NUL bytes; use a BYTEA column for binary data"
                    .to_owned(),
            )
        })?;
    Ok(match *ty {
        Type::JSON => Encoded::Raw(Cow::Borrowed(t)),
        Type::JSONB => Encoded::Jsonb(t),
        _ if is_text_type(ty) => Encoded::Raw(Cow::Borrowed(t)),
        _ => Encoded::Parsed(Cow::Borrowed(text)),
    })
}

/// The types whose binary format is the text itself.
fn is_text_type(ty: &Type) -> bool {
    matches!(*ty, Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME)
}

/// A float as text that reads back as the same float: Rust's shortest round-trip digits
/// (`0.1`, `5.0`, `1e300`), with PostgreSQL's spelling of the special values.
fn real_text(f: f64) -> String {
    if f.is_nan() {
        "NaN".to_owned()
    } else if f.is_infinite() {
        if f > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        format!("{f:?}")
    }
}

/// The type a domain is defined over (PostgreSQL encodes a domain value as its base type).
fn base_type(mut ty: &Type) -> &Type {
    while let Kind::Domain(inner) = ty.kind() {
        ty = inner;
    }
    ty
}

/// A type's name as SQL spells it, for messages (`integer`, not `int4`).
fn type_name(ty: &Type) -> String {
    let name = match *ty {
        Type::INT8 => "bigint",
        Type::INT4 => "integer",
        Type::INT2 => "smallint",
        Type::FLOAT8 => "double precision",
        Type::FLOAT4 => "real",
        Type::BOOL => "boolean",
        Type::VARCHAR => "character varying",
        Type::BPCHAR => "character",
        Type::TIMESTAMP => "timestamp without time zone",
        Type::TIMESTAMPTZ => "timestamp with time zone",
        _ => match ty.kind() {
            Kind::Array(inner) => return format!("{}[]", type_name(inner)),
            _ => ty.name(),
        },
    };
    name.to_owned()
}

/// The raw bytes of one result cell (`None` for NULL), read without any conversion.
struct Raw<'a>(Option<&'a [u8]>);

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Raw(Some(raw)))
    }

    fn from_sql_null(_: &Type) -> Result<Self, Box<dyn Error + Sync + Send>> {
        Ok(Raw(None))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

/// The value of column `i` (0-based) of `row`, decoded by the column's type.
pub(crate) fn read(row: &Row, i: usize) -> Result<Value, DbError> {
    let column = row
        .columns()
        .get(i)
        .ok_or_else(|| DbError::Sql(format!("column index {i} is out of range")))?;
    let Raw(raw) = row.try_get(i).map_err(|e| DbError::Sql(e.to_string()))?;
    decode(column.type_(), column.name(), raw)
}

/// Decodes one cell in PostgreSQL's binary format; `column` names it in errors.
fn decode(ty: &Type, column: &str, raw: Option<&[u8]>) -> Result<Value, DbError> {
    let Some(raw) = raw else {
        return Ok(Value::Null);
    };
    let ty = base_type(ty);
    match decode_binary(ty, raw) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(DbError::Sql(format!(
            "column \"{column}\" has type {}, which Cove cannot read; cast it in the query ({column}::text)",
            type_name(ty)
        ))),
        Err(Malformed) => Err(DbError::Sql(format!(
            "column \"{column}\": malformed {} value from PostgreSQL",
            type_name(ty)
        ))),
    }
}

/// The bytes do not hold a valid value of the type they were sent as.
struct Malformed;

impl From<Box<dyn Error + Sync + Send>> for Malformed {
    fn from(_: Box<dyn Error + Sync + Send>) -> Malformed {
        Malformed
    }
}

/// Decodes `raw` as type `ty`; `Ok(None)` for a type Cove does not read.
fn decode_binary(ty: &Type, raw: &[u8]) -> Result<Option<Value>, Malformed> {
    let text = |s: String| Value::Text(s.into_bytes());
    Ok(Some(match *ty {
        Type::INT2 => Value::Integer(wire::int2_from_sql(raw)?.into()),
        Type::INT4 => Value::Integer(wire::int4_from_sql(raw)?.into()),
        Type::INT8 => Value::Integer(wire::int8_from_sql(raw)?),
        Type::OID => Value::Integer(wire::oid_from_sql(raw)?.into()),
        Type::FLOAT4 => Value::Real(widen(wire::float4_from_sql(raw)?)),
        Type::FLOAT8 => Value::Real(wire::float8_from_sql(raw)?),
        Type::BOOL => Value::Integer(wire::bool_from_sql(raw)?.into()),
        Type::NUMERIC => text(numeric_text(raw).ok_or(Malformed)?),
        Type::TEXT
        | Type::VARCHAR
        | Type::BPCHAR
        | Type::NAME
        | Type::UNKNOWN
        | Type::JSON
        | Type::XML => Value::Text(raw.to_vec()),
        Type::JSONB => match raw.split_first() {
            Some((&JSONB_VERSION, json)) => Value::Text(json.to_vec()),
            _ => return Err(Malformed),
        },
        Type::BYTEA => Value::Blob(raw.to_vec()),
        Type::UUID => text(uuid_text(wire::uuid_from_sql(raw)?)),
        Type::TIMESTAMP => text(timestamp_text(wire::timestamp_from_sql(raw)?, "")),
        Type::TIMESTAMPTZ => text(timestamp_text(wire::timestamp_from_sql(raw)?, "+00")),
        Type::DATE => text(date_text(wire::date_from_sql(raw)?)),
        Type::TIME => text(time_text(wire::time_from_sql(raw)?)),
        // `SELECT pg_notify(…)` and other functions returning void.
        Type::VOID => Value::Null,
        // An enum's binary format is its label; citext (an extension) sends plain text.
        _ if matches!(ty.kind(), Kind::Enum(_)) || ty.name() == "citext" => {
            Value::Text(raw.to_vec())
        }
        _ => return Ok(None),
    }))
}

/// A `real` as the double its shortest decimal text denotes: `0.1::real` reads as 0.1
/// (what PostgreSQL prints), not 0.10000000149011612.
fn widen(f: f32) -> f64 {
    if !f.is_finite() {
        return f.into();
    }
    f.to_string().parse().unwrap_or(f.into())
}

/// Renders PostgreSQL's binary `numeric` as its text output.
///
/// The format: `ndigits`, `weight`, `sign`, `dscale` (16 bits each), then `ndigits`
/// base-10000 digits; the value is Σ digit[k] × 10000^(weight − k), and `dscale` is the
/// number of decimal digits shown after the point (so `12.50` keeps its zero).
fn numeric_text(raw: &[u8]) -> Option<String> {
    const POSITIVE: u16 = 0x0000;
    const NEGATIVE: u16 = 0x4000;
    const NAN: u16 = 0xC000;
    const PLUS_INFINITY: u16 = 0xD000;
    const MINUS_INFINITY: u16 = 0xF000;
    /// The largest `dscale` PostgreSQL stores.
    const MAX_DSCALE: usize = 0x3FFF;

    if !raw.len().is_multiple_of(2) {
        return None;
    }
    let mut words = raw
        .chunks_exact(2)
        .map(|w| u16::from_be_bytes([w[0], w[1]]));
    let ndigits = usize::from(words.next()?);
    let weight = i32::from(words.next()? as i16);
    let sign = words.next()?;
    let dscale = usize::from(words.next()?);
    let digits: Vec<u16> = words.collect();
    if digits.len() != ndigits || dscale > MAX_DSCALE || digits.iter().any(|&d| d > 9999) {
        return None;
    }
    let mut s = String::new();
    match sign {
        POSITIVE => {}
        NEGATIVE => s.push('-'),
        NAN => return Some("NaN".to_owned()),
        PLUS_INFINITY => return Some("Infinity".to_owned()),
        MINUS_INFINITY => return Some("-Infinity".to_owned()),
        _ => return None,
    }
    // Digit k (counted from the first stored one); zeros beyond what is stored.
    let digit = |k: i32| {
        usize::try_from(k)
            .ok()
            .and_then(|k| digits.get(k))
            .copied()
            .unwrap_or(0)
    };
    // Writing to a String cannot fail.
    if weight < 0 {
        s.push('0');
    } else {
        let _ = write!(s, "{}", digit(0));
        for k in 1..=weight {
            let _ = write!(s, "{:04}", digit(k));
        }
    }
    if dscale > 0 {
        s.push('.');
        let point = s.len();
        let mut k = weight + 1;
        while s.len() - point < dscale {
            let _ = write!(s, "{:04}", digit(k));
            k += 1;
        }
        s.truncate(point + dscale);
    }
    Some(s)
}

/// A UUID in its canonical form: lowercase hex, hyphens after 4, 6, 8 and 10 bytes.
fn uuid_text(bytes: [u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_DAY: i64 = 86_400 * USECS_PER_SEC;

/// A `timestamp` (microseconds since 2000-01-01 00:00:00) as PostgreSQL prints it with
/// `DateStyle` ISO: `2026-11-27 08:55:53.123`, the zone suffix after the time
/// (`+00` for a `timestamptz` read with `TimeZone` = UTC), ` BC` for years before 1.
///
/// The format is also what SQLite's `datetime()` gives (plus fractions when present), so
/// apps that compare or sort such strings keep working.
fn timestamp_text(usecs: i64, zone: &str) -> String {
    match usecs {
        i64::MAX => return "infinity".to_owned(),
        i64::MIN => return "-infinity".to_owned(),
        _ => {}
    }
    let (date, era) = civil_text(usecs.div_euclid(USECS_PER_DAY));
    let time = time_text(usecs.rem_euclid(USECS_PER_DAY));
    format!("{date} {time}{zone}{era}")
}

/// A `date` (days since 2000-01-01) as `YYYY-MM-DD`.
fn date_text(days: i32) -> String {
    match days {
        i32::MAX => "infinity".to_owned(),
        i32::MIN => "-infinity".to_owned(),
        _ => {
            let (date, era) = civil_text(days.into());
            format!("{date}{era}")
        }
    }
}

/// A `time` (microseconds since midnight; 24:00:00 is allowed) as `HH:MM:SS[.ffffff]`,
/// fractions without trailing zeros, as PostgreSQL prints them.
fn time_text(usecs: i64) -> String {
    let secs = usecs.div_euclid(USECS_PER_SEC);
    let fraction = usecs.rem_euclid(USECS_PER_SEC);
    let mut s = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if fraction != 0 {
        let digits = format!("{fraction:06}");
        s.push('.');
        s.push_str(digits.trim_end_matches('0'));
    }
    s
}

/// `YYYY-MM-DD` of a day counted from 2000-01-01, and `" BC"` or `""`: PostgreSQL has no
/// year 0, so astronomical year 0 is 1 BC, −1 is 2 BC, …
fn civil_text(days: i64) -> (String, &'static str) {
    let (year, month, day) = civil_from_days(days);
    let (year, era) = if year <= 0 {
        (1 - year, " BC")
    } else {
        (year, "")
    };
    (format!("{year:04}-{month:02}-{day:02}"), era)
}

/// The proleptic Gregorian (year, month, day) of a day counted from 2000-01-01.
///
/// Counting from a 1 March makes February, with its leap day, the last month of the
/// year, so each 400-year era (146097 days) splits into years of 365 days plus one
/// every 4th, except every 100th, except every 400th; months then follow from a linear
/// formula over the day of that March-based year.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    /// Days from 0000-03-01 to 2000-01-01.
    const SHIFT: i64 = 730_425;
    const DAYS_PER_ERA: i64 = 146_097;
    let z = days + SHIFT;
    let era = z.div_euclid(DAYS_PER_ERA);
    let day_of_era = z.rem_euclid(DAYS_PER_ERA); // 0 ..= 146096
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_month = (5 * day_of_year + 2) / 153; // 0 = March … 11 = February
    let day = day_of_year - (153 * march_month + 2) / 5 + 1;
    let month = if march_month < 10 {
        march_month + 3
    } else {
        march_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    // Both are small by construction (1..=31, 1..=12).
    (year, day_u32(month), day_u32(day))
}

fn day_u32(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The format code (`"text"` or `"binary"`) and bytes a value goes on the wire as.
    fn to_wire(value: &Value, ty: &Type) -> (&'static str, Option<Vec<u8>>) {
        let param = Param(value);
        let mut out = BytesMut::new();
        let format = match param.encode_format(ty) {
            Format::Text => "text",
            Format::Binary => "binary",
        };
        match param.to_sql_checked(ty, &mut out).expect("encodes") {
            IsNull::Yes => (format, None),
            IsNull::No => (format, Some(out.to_vec())),
        }
    }

    fn bytes(value: &Value, ty: &Type) -> Vec<u8> {
        to_wire(value, ty).1.expect("not null")
    }

    fn refusal(value: &Value, ty: &Type) -> String {
        let mut out = BytesMut::new();
        match Param(value).to_sql_checked(ty, &mut out) {
            Ok(_) => panic!("{value:?} as {ty} should be refused"),
            Err(e) => {
                assert!(e.is::<ParamError>());
                e.to_string()
            }
        }
    }

    fn decoded(ty: &Type, raw: &[u8]) -> Value {
        decode(ty, "c", Some(raw)).expect("decodes")
    }

    fn decoded_text(ty: &Type, raw: &[u8]) -> String {
        match decoded(ty, raw) {
            Value::Text(t) => String::from_utf8(t).expect("UTF-8"),
            other => panic!("expected text, got {other:?}"),
        }
    }

    /// Binary numeric: header words, then base-10000 digits.
    fn numeric(weight: i16, sign: u16, dscale: u16, digits: &[u16]) -> Vec<u8> {
        let mut v = Vec::new();
        let ndigits = u16::try_from(digits.len()).expect("few digits");
        for w in [ndigits, weight as u16, sign, dscale].iter().chain(digits) {
            v.extend_from_slice(&w.to_be_bytes());
        }
        v
    }

    #[test]
    fn integers_encode_by_parameter_type() {
        let v = Value::Integer(42);
        assert_eq!(bytes(&v, &Type::INT8), 42i64.to_be_bytes());
        assert_eq!(bytes(&v, &Type::INT4), 42i32.to_be_bytes());
        assert_eq!(bytes(&v, &Type::INT2), 42i16.to_be_bytes());
        assert_eq!(bytes(&v, &Type::OID), 42u32.to_be_bytes());
        assert_eq!(bytes(&v, &Type::FLOAT8), 42f64.to_be_bytes());
        assert_eq!(bytes(&v, &Type::FLOAT4), 42f32.to_be_bytes());
        assert_eq!(bytes(&v, &Type::TEXT), b"42");
        assert_eq!(bytes(&v, &Type::VARCHAR), b"42");
        assert_eq!(to_wire(&v, &Type::NUMERIC), ("text", Some(b"42".to_vec())));
        assert_eq!(
            to_wire(&Value::Integer(-7), &Type::UNKNOWN),
            ("text", Some(b"-7".to_vec()))
        );
    }

    #[test]
    fn integers_become_booleans() {
        assert_eq!(bytes(&Value::Integer(0), &Type::BOOL), [0]);
        assert_eq!(bytes(&Value::Integer(1), &Type::BOOL), [1]);
        assert_eq!(bytes(&Value::Integer(-5), &Type::BOOL), [1]);
    }

    #[test]
    fn integers_out_of_range_are_refused() {
        assert_eq!(
            refusal(&Value::Integer(3_000_000_000), &Type::INT4),
            "value 3000000000 out of range for integer"
        );
        assert_eq!(
            refusal(&Value::Integer(-40_000), &Type::INT2),
            "value -40000 out of range for smallint"
        );
        assert_eq!(
            refusal(&Value::Integer(-1), &Type::OID),
            "value -1 out of range for oid"
        );
        assert_eq!(
            bytes(&Value::Integer(i32::MIN.into()), &Type::INT4),
            i32::MIN.to_be_bytes()
        );
        assert_eq!(
            bytes(&Value::Integer(i16::MAX.into()), &Type::INT2),
            i16::MAX.to_be_bytes()
        );
    }

    #[test]
    fn reals_encode_by_parameter_type() {
        let v = Value::Real(2.5);
        assert_eq!(bytes(&v, &Type::FLOAT8), 2.5f64.to_be_bytes());
        assert_eq!(bytes(&v, &Type::FLOAT4), 2.5f32.to_be_bytes());
        assert_eq!(to_wire(&v, &Type::NUMERIC), ("text", Some(b"2.5".to_vec())));
        assert_eq!(bytes(&Value::Real(0.1), &Type::TEXT), b"0.1");
        assert_eq!(bytes(&Value::Real(5.0), &Type::TEXT), b"5.0");
        assert_eq!(bytes(&Value::Real(1e300), &Type::TEXT), b"1e300");
        assert_eq!(bytes(&Value::Real(f64::NAN), &Type::NUMERIC), b"NaN");
        assert_eq!(
            bytes(&Value::Real(f64::NEG_INFINITY), &Type::NUMERIC),
            b"-Infinity"
        );
        assert_eq!(bytes(&Value::Real(3.0), &Type::INT8), 3i64.to_be_bytes());
        assert_eq!(
            bytes(&Value::Real(-3.0), &Type::INT2),
            (-3i16).to_be_bytes()
        );
    }

    #[test]
    fn reals_that_do_not_fit_are_refused() {
        assert_eq!(
            refusal(&Value::Real(2.5), &Type::INT8),
            "value 2.5 is not a whole number, as type bigint needs"
        );
        assert_eq!(
            refusal(&Value::Real(f64::INFINITY), &Type::INT4),
            "value Infinity is not a whole number, as type integer needs"
        );
        assert_eq!(
            refusal(&Value::Real(1e19), &Type::INT8),
            "value 1e19 out of range for bigint"
        );
        assert_eq!(
            refusal(&Value::Real(70000.0), &Type::INT2),
            "value 70000 out of range for smallint"
        );
        assert_eq!(
            refusal(&Value::Real(1e300), &Type::FLOAT4),
            "value 1e300 out of range for real"
        );
        assert_eq!(
            bytes(&Value::Real(i64::MIN as f64), &Type::INT8),
            i64::MIN.to_be_bytes()
        );
    }

    #[test]
    fn text_encodes_by_parameter_type() {
        let v = Value::Text(b"{\"a\":1}".to_vec());
        assert_eq!(
            to_wire(&v, &Type::TEXT),
            ("binary", Some(b"{\"a\":1}".to_vec()))
        );
        assert_eq!(bytes(&v, &Type::JSON), b"{\"a\":1}");
        assert_eq!(
            to_wire(&v, &Type::JSONB),
            ("binary", Some(b"\x01{\"a\":1}".to_vec()))
        );
        assert_eq!(bytes(&Value::Text(vec![0, 0xff]), &Type::BYTEA), [0, 0xff]);
    }

    #[test]
    fn text_for_other_types_goes_in_text_format() {
        let cases = [
            (Type::NUMERIC, "12.50"),
            (Type::TIMESTAMPTZ, "2026-11-27 08:55:53+01"),
            (Type::TIMESTAMP, "2026-11-27 08:55:53"),
            (Type::DATE, "2026-11-27"),
            (Type::TIME, "08:55"),
            (Type::UUID, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
            (Type::INET, "10.0.0.1"),
            (Type::INTERVAL, "1 day"),
            (Type::INT4, "12"),
            (Type::BOOL, "true"),
            (Type::INT4_ARRAY, "{1,2}"),
            (Type::UNKNOWN, "x"),
        ];
        for (ty, text) in cases {
            let v = Value::Text(text.as_bytes().to_vec());
            assert_eq!(
                to_wire(&v, &ty),
                ("text", Some(text.as_bytes().to_vec())),
                "{ty}"
            );
        }
    }

    #[test]
    fn text_must_be_utf8_without_nul() {
        let message =
            "text parameters must be UTF-8 without NUL bytes; use a BYTEA column for binary data";
        assert_eq!(
            refusal(&Value::Text(b"a\0b".to_vec()), &Type::TEXT),
            message
        );
        assert_eq!(
            refusal(&Value::Text(vec![0xff, 0xfe]), &Type::TEXT),
            message
        );
        assert_eq!(refusal(&Value::Text(vec![0xc3]), &Type::NUMERIC), message);
        assert_eq!(
            refusal(&Value::Text(b"{}\0".to_vec()), &Type::JSONB),
            message
        );
    }

    #[test]
    fn blobs_go_to_bytea_only() {
        assert_eq!(bytes(&Value::Blob(vec![1, 0, 2]), &Type::BYTEA), [1, 0, 2]);
        assert_eq!(
            refusal(&Value::Blob(vec![1]), &Type::TEXT),
            "a blob can only be passed for a bytea parameter, not text"
        );
        assert_eq!(
            refusal(&Value::Blob(vec![1]), &Type::INT4),
            "a blob can only be passed for a bytea parameter, not integer"
        );
    }

    #[test]
    fn null_is_null_for_every_type() {
        for ty in [
            Type::INT4,
            Type::TEXT,
            Type::BYTEA,
            Type::JSONB,
            Type::TIMESTAMPTZ,
            Type::INTERVAL,
        ] {
            assert_eq!(to_wire(&Value::Null, &ty).1, None, "{ty}");
        }
    }

    #[test]
    fn numbers_decode() {
        assert_eq!(
            decoded(&Type::INT2, &(-3i16).to_be_bytes()),
            Value::Integer(-3)
        );
        assert_eq!(decoded(&Type::INT4, &7i32.to_be_bytes()), Value::Integer(7));
        assert_eq!(
            decoded(&Type::INT8, &i64::MAX.to_be_bytes()),
            Value::Integer(i64::MAX)
        );
        assert_eq!(
            decoded(&Type::OID, &u32::MAX.to_be_bytes()),
            Value::Integer(u32::MAX.into())
        );
        assert_eq!(
            decoded(&Type::FLOAT8, &0.1f64.to_be_bytes()),
            Value::Real(0.1)
        );
        assert_eq!(
            decoded(&Type::FLOAT4, &0.1f32.to_be_bytes()),
            Value::Real(0.1)
        );
        assert_eq!(
            decoded(&Type::FLOAT4, &f32::INFINITY.to_be_bytes()),
            Value::Real(f64::INFINITY)
        );
        assert_eq!(decoded(&Type::BOOL, &[1]), Value::Integer(1));
        assert_eq!(decoded(&Type::BOOL, &[0]), Value::Integer(0));
    }

    #[test]
    fn encoded_numbers_decode_to_the_same_value() {
        for (i, ty) in [
            (i64::MIN, Type::INT8),
            (-32768, Type::INT2),
            (123_456, Type::INT4),
            (1, Type::BOOL),
        ] {
            let v = Value::Integer(i);
            assert_eq!(decoded(&ty, &bytes(&v, &ty)), v, "{ty}");
        }
        let v = Value::Real(-1.25e-300);
        assert_eq!(decoded(&Type::FLOAT8, &bytes(&v, &Type::FLOAT8)), v);
    }

    #[test]
    fn numerics_decode_to_their_exact_text() {
        let n = |w, s, d, digits: &[u16]| decoded_text(&Type::NUMERIC, &numeric(w, s, d, digits));
        assert_eq!(n(0, 0, 0, &[]), "0");
        assert_eq!(n(0, 0, 2, &[]), "0.00");
        assert_eq!(n(0, 0, 2, &[12, 5000]), "12.50");
        assert_eq!(n(-1, 0x4000, 3, &[10]), "-0.001");
        assert_eq!(n(5, 0, 0, &[1]), "100000000000000000000");
        assert_eq!(n(2, 0, 6, &[1, 2345, 6789, 0, 100]), "123456789.000001");
        assert_eq!(n(1, 0, 0, &[1, 1]), "10001");
        assert_eq!(n(-2, 0, 8, &[1]), "0.00000001");
        assert_eq!(n(0, 0x4000, 1, &[3, 1400]), "-3.1");
        assert_eq!(n(0, 0xC000, 0, &[]), "NaN");
        assert_eq!(n(0, 0xD000, 0, &[]), "Infinity");
        assert_eq!(n(0, 0xF000, 0, &[]), "-Infinity");
    }

    #[test]
    fn malformed_numerics_are_errors() {
        let bad = |raw: &[u8]| {
            decode(&Type::NUMERIC, "n", Some(raw))
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            bad(&[0, 1]),
            "column \"n\": malformed numeric value from PostgreSQL"
        );
        bad(&numeric(0, 0, 0, &[10_000]));
        bad(&numeric(0, 0x1234, 0, &[1]));
        bad(&numeric(0, 0, 0x4000, &[1]));
        let mut short = numeric(0, 0, 0, &[1, 2]);
        short.truncate(10);
        bad(&short);
        bad(&[0, 0, 0]);
    }

    #[test]
    fn text_types_decode() {
        for ty in [
            Type::TEXT,
            Type::VARCHAR,
            Type::BPCHAR,
            Type::NAME,
            Type::JSON,
            Type::UNKNOWN,
        ] {
            assert_eq!(
                decoded(&ty, "héllo".as_bytes()),
                Value::Text("héllo".as_bytes().to_vec())
            );
        }
        assert_eq!(
            decoded(&Type::JSONB, b"\x01{\"a\": 1}"),
            Value::Text(b"{\"a\": 1}".to_vec())
        );
        assert!(decode(&Type::JSONB, "j", Some(b"\x02{}")).is_err());
        assert_eq!(
            decoded(&Type::BYTEA, &[0, 1, 255]),
            Value::Blob(vec![0, 1, 255])
        );
        assert_eq!(decode(&Type::TEXT, "c", None).unwrap(), Value::Null);
        assert_eq!(decode(&Type::INTERVAL, "c", None).unwrap(), Value::Null);
        assert_eq!(decoded(&Type::VOID, &[]), Value::Null);
    }

    #[test]
    fn uuids_decode_hyphenated_lowercase() {
        let raw = [
            0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38,
            0x0a, 0x11,
        ];
        assert_eq!(
            decoded_text(&Type::UUID, &raw),
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
        );
        assert!(decode(&Type::UUID, "u", Some(&raw[..15])).is_err());
    }

    #[test]
    fn timestamps_decode_like_postgres_prints_them() {
        let ts = |us: i64| decoded_text(&Type::TIMESTAMP, &us.to_be_bytes());
        let tz = |us: i64| decoded_text(&Type::TIMESTAMPTZ, &us.to_be_bytes());
        assert_eq!(ts(0), "2000-01-01 00:00:00");
        assert_eq!(ts(849_084_953_123_000), "2026-11-27 08:55:53.123");
        assert_eq!(tz(849_084_953_123_000), "2026-11-27 08:55:53.123+00");
        assert_eq!(ts(-960_867_740_000_000), "1969-07-20 20:17:40");
        assert_eq!(ts(762_566_399_999_999), "2024-02-29 23:59:59.999999");
        assert_eq!(ts(-3_150_576_000_000_000), "1900-03-01 00:00:00");
        assert_eq!(ts(-63_082_281_600_000_000), "0001-01-01 00:00:00");
        assert_eq!(ts(252_455_615_999_001_000), "9999-12-31 23:59:59.001");
        assert_eq!(ts(-1), "1999-12-31 23:59:59.999999");
        assert_eq!(
            tz(-63_082_281_600_000_001),
            "0001-12-31 23:59:59.999999+00 BC"
        );
        assert_eq!(ts(i64::MAX), "infinity");
        assert_eq!(tz(i64::MIN), "-infinity");
        assert!(decode(&Type::TIMESTAMP, "t", Some(&[0; 4])).is_err());
    }

    #[test]
    fn dates_and_times_decode() {
        let date = |d: i32| decoded_text(&Type::DATE, &d.to_be_bytes());
        assert_eq!(date(0), "2000-01-01");
        assert_eq!(date(59), "2000-02-29");
        assert_eq!(date(-146_038), "1600-02-29");
        assert_eq!(date(36_584), "2100-03-01");
        assert_eq!(date(-1), "1999-12-31");
        assert_eq!(date(-730_120), "0001-12-31 BC");
        assert_eq!(date(i32::MAX), "infinity");
        assert_eq!(date(i32::MIN), "-infinity");
        let time = |us: i64| decoded_text(&Type::TIME, &us.to_be_bytes());
        assert_eq!(time(0), "00:00:00");
        assert_eq!(time(32_153_120_000), "08:55:53.12");
        assert_eq!(time(86_399_000_001), "23:59:59.000001");
        assert_eq!(time(USECS_PER_DAY), "24:00:00");
    }

    #[test]
    fn civil_dates_match_a_day_by_day_calendar() {
        let leap = |y: i64| (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let month_len = |y: i64, m: u32| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        // Walk day by day from 1 March of year −800 (astronomical) across year 0 and 2000.
        // 2000-03-01 is day 60; seven 400-year eras of 146097 days lie between.
        let start = 60 - 7 * 146_097;
        let (mut y, mut m, mut d) = (-800i64, 3u32, 1u32);
        for days in start..start + 4000 * 366 {
            assert_eq!(civil_from_days(days), (y, m, d), "day {days}");
            d += 1;
            if d > month_len(y, m) {
                d = 1;
                m += 1;
                if m > 12 {
                    m = 1;
                    y += 1;
                }
            }
        }
    }

    #[test]
    fn other_types_are_refused_with_a_cast_hint() {
        let e = decode(&Type::INTERVAL, "age", Some(&[0; 16])).unwrap_err();
        assert!(matches!(e, DbError::Sql(_)));
        assert_eq!(
            e.to_string(),
            "column \"age\" has type interval, which Cove cannot read; cast it in the query (age::text)"
        );
        let e = decode(&Type::INT4_ARRAY, "ids", Some(&[])).unwrap_err();
        assert_eq!(
            e.to_string(),
            "column \"ids\" has type integer[], which Cove cannot read; cast it in the query (ids::text)"
        );
    }
}
