//! A request's start time as the two formats write it, UTC:
//! `10/Oct/2000:13:55:36 +0000` (combined) and `2000-10-10T13:55:36.123Z`
//! (JSON, RFC 3339 with milliseconds).
//!
//! A worker logs many requests in the same second, so the text of the
//! last second is kept and reused; only the milliseconds change.

use std::time::Duration;

use cove_core::date::civil_from_days;
use cove_core::Room;

use super::text::padded;
use super::Format;

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// The last second formatted, per format.
pub(crate) struct Clock {
    format: Format,
    secs: u64,
    text: Vec<u8>,
}

impl Clock {
    pub(crate) fn new(format: Format) -> Clock {
        Clock {
            format,
            secs: u64::MAX,
            text: Vec::with_capacity(32),
        }
    }

    /// Append the time `since` the Unix epoch.
    pub(crate) fn write(&mut self, out: &mut Room<'_>, since: Duration) {
        let secs = since.as_secs();
        if secs != self.secs {
            self.text.clear();
            let mut room = Room::new(&mut self.text, 32);
            match self.format {
                Format::Combined => combined(&mut room, secs),
                Format::Json => rfc3339(&mut room, secs),
            }
            drop(room);
            self.secs = secs;
        }
        out.put(&self.text);
        if let Format::Json = self.format {
            out.byte(b'.');
            padded(out, since.subsec_millis(), 3);
            out.byte(b'Z');
        }
    }
}

/// (year, month, day, hour, minute, second) of a Unix time.
fn civil(secs: u64) -> (i64, u32, u32, u32, u32, u32) {
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = (secs % 86_400) as u32;
    (y, m, d, s / 3600, s / 60 % 60, s % 60)
}

/// Years past 9999 are written whole (not reachable in practice).
fn year(out: &mut Room<'_>, y: i64) {
    match u32::try_from(y) {
        Ok(y) if y <= 9999 => padded(out, y, 4),
        _ => super::text::decimal(out, y.unsigned_abs()),
    }
}

fn combined(out: &mut Room<'_>, secs: u64) {
    let (y, mo, d, h, mi, s) = civil(secs);
    padded(out, d, 2);
    out.byte(b'/');
    out.put(MONTHS[mo as usize - 1]);
    out.byte(b'/');
    year(out, y);
    for n in [h, mi, s] {
        out.byte(b':');
        padded(out, n, 2);
    }
    out.put(b" +0000");
}

fn rfc3339(out: &mut Room<'_>, secs: u64) {
    let (y, mo, d, h, mi, s) = civil(secs);
    year(out, y);
    out.byte(b'-');
    padded(out, mo, 2);
    out.byte(b'-');
    padded(out, d, 2);
    out.byte(b'T');
    padded(out, h, 2);
    out.byte(b':');
    padded(out, mi, 2);
    out.byte(b':');
    padded(out, s, 2);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64, millis: u64) -> Duration {
        Duration::from_secs(secs) + Duration::from_millis(millis)
    }

    fn both(time: Duration) -> (String, String) {
        let write = |format| {
            let mut v = Vec::new();
            Clock::new(format).write(&mut Room::new(&mut v, 0), time);
            String::from_utf8(v).unwrap()
        };
        (write(Format::Combined), write(Format::Json))
    }

    #[test]
    fn known_instants() {
        let cases = [
            // The epoch; times before it.
            (
                0,
                0,
                "01/Jan/1970:00:00:00 +0000",
                "1970-01-01T00:00:00.000Z",
            ),
            // Apache's documentation example.
            (
                971_186_136,
                7,
                "10/Oct/2000:13:55:36 +0000",
                "2000-10-10T13:55:36.007Z",
            ),
            // Leap days: 2000 (a 400-year), 2024; 2100 has none.
            (
                951_782_400,
                0,
                "29/Feb/2000:00:00:00 +0000",
                "2000-02-29T00:00:00.000Z",
            ),
            (
                1_709_251_199,
                999,
                "29/Feb/2024:23:59:59 +0000",
                "2024-02-29T23:59:59.999Z",
            ),
            (
                1_709_251_200,
                0,
                "01/Mar/2024:00:00:00 +0000",
                "2024-03-01T00:00:00.000Z",
            ),
            (
                4_107_542_399,
                0,
                "28/Feb/2100:23:59:59 +0000",
                "2100-02-28T23:59:59.000Z",
            ),
            (
                4_107_542_400,
                0,
                "01/Mar/2100:00:00:00 +0000",
                "2100-03-01T00:00:00.000Z",
            ),
            // Year boundaries.
            (
                1_704_067_199,
                500,
                "31/Dec/2023:23:59:59 +0000",
                "2023-12-31T23:59:59.500Z",
            ),
            (
                1_704_067_200,
                0,
                "01/Jan/2024:00:00:00 +0000",
                "2024-01-01T00:00:00.000Z",
            ),
            (
                1_767_225_599,
                0,
                "31/Dec/2025:23:59:59 +0000",
                "2025-12-31T23:59:59.000Z",
            ),
        ];
        for (secs, millis, combined, json) in cases {
            let got = both(at(secs, millis));
            assert_eq!(got, (combined.to_string(), json.to_string()), "{secs}");
        }
    }

    #[test]
    fn the_cached_second_is_replaced() {
        let mut clock = Clock::new(Format::Json);
        let mut v = Vec::new();
        for (secs, millis) in [(0, 1), (0, 2), (86_400, 3), (86_400, 3)] {
            let mut room = Room::new(&mut v, 0);
            clock.write(&mut room, at(secs, millis));
            room.byte(b' ');
        }
        assert_eq!(
            String::from_utf8(v).unwrap(),
            "1970-01-01T00:00:00.001Z 1970-01-01T00:00:00.002Z \
             1970-01-02T00:00:00.003Z 1970-01-02T00:00:00.003Z "
        );
    }
}
