//! COM_STMT_EXECUTE's parameters.
//!
//! The client sends parameter types only when they change ("new params bound"
//! flag); libmariadb sends them on the first execution only, so the types are kept
//! per statement ([`ParamState`]) and reused. Values sent earlier with
//! COM_STMT_SEND_LONG_DATA take the place of their parameter, which the execute
//! packet then leaves out.

use tarn_row::Value;
use tarn_row::datetime::{Date, DateTime, Time};

use super::{Malformed, Reader, column_type as t};

/// What a prepared statement remembers between executions.
#[derive(Debug, Default, Clone)]
pub struct ParamState {
    /// (type, unsigned) per parameter, from the last execution that sent them.
    pub types: Vec<(u8, bool)>,
    /// Data sent with COM_STMT_SEND_LONG_DATA since the last execution or reset.
    pub long_data: Vec<Option<Vec<u8>>>,
}

impl ParamState {
    pub fn new(param_count: usize) -> ParamState {
        ParamState {
            types: Vec::new(),
            long_data: vec![None; param_count],
        }
    }
}

/// Decodes the parameters of a COM_STMT_EXECUTE payload after the statement id
/// (flags, iteration count, null bitmap, types, values).
pub fn decode_params(
    r: &mut Reader<'_>,
    param_count: usize,
    state: &mut ParamState,
) -> Result<Vec<Value>, Malformed> {
    let _flags = r.u8()?;
    let _iterations = r.u32()?;
    if param_count == 0 {
        return Ok(Vec::new());
    }
    let bitmap = r.bytes(param_count.div_ceil(8), "null bitmap")?;
    if r.u8()? == 1 {
        state.types = (0..param_count)
            .map(|_| {
                let ty = r.u8()?;
                let flags = r.u8()?;
                Ok((ty, flags & 0x80 != 0))
            })
            .collect::<Result<_, Malformed>>()?;
    }
    if state.types.len() != param_count {
        return Err(Malformed("parameter types were never sent"));
    }
    let mut values = Vec::with_capacity(param_count);
    for i in 0..param_count {
        if let Some(data) = state.long_data.get_mut(i).and_then(Option::take) {
            values.push(Value::Bytes(data));
            continue;
        }
        if bitmap[i / 8] & (1 << (i % 8)) != 0 {
            values.push(Value::Null);
            continue;
        }
        let (ty, unsigned) = state.types[i];
        values.push(decode_value(r, ty, unsigned)?);
    }
    Ok(values)
}

fn int(n: i64, unsigned_value: u64, unsigned: bool) -> Value {
    if unsigned {
        Value::UInt(unsigned_value)
    } else {
        Value::Int(n)
    }
}

fn decode_value(r: &mut Reader<'_>, ty: u8, unsigned: bool) -> Result<Value, Malformed> {
    Ok(match ty {
        t::NULL => Value::Null,
        t::TINY => {
            let b = r.u8()?;
            int(b as i8 as i64, b as u64, unsigned)
        }
        t::SHORT | t::YEAR => {
            let v = r.u16()?;
            int(v as i16 as i64, v as u64, unsigned)
        }
        t::LONG | t::INT24 => {
            let v = r.u32()?;
            int(v as i32 as i64, v as u64, unsigned)
        }
        t::LONGLONG => {
            let v = r.u64()?;
            int(v as i64, v, unsigned)
        }
        t::FLOAT => Value::Double(f32::from_bits(r.u32()?) as f64),
        t::DOUBLE => Value::Double(f64::from_bits(r.u64()?)),
        t::DATE | t::DATETIME | t::TIMESTAMP => {
            let len = r.u8()? as usize;
            let b = r.bytes(len, "date")?;
            if len == 0 {
                return Ok(Value::Bytes(b"0000-00-00 00:00:00".to_vec()));
            }
            if len < 4 {
                return Err(Malformed("date"));
            }
            let date = Date {
                year: u16::from_le_bytes([b[0], b[1]]),
                month: b[2],
                day: b[3],
            };
            let (hour, minute, second) = if len >= 7 {
                (b[4], b[5], b[6])
            } else {
                (0, 0, 0)
            };
            let micros = if len >= 11 {
                u32::from_le_bytes([b[7], b[8], b[9], b[10]])
            } else {
                0
            };
            match DateTime::new(date, hour, minute, second, micros) {
                Ok(dt) if ty == t::DATE => Value::Date(dt.date),
                Ok(dt) => Value::DateTime(dt),
                // An invalid date goes on as text; the engine reports it as MySQL does.
                Err(_) => Value::Bytes(
                    format!(
                        "{:04}-{:02}-{:02} {hour:02}:{minute:02}:{second:02}",
                        date.year, date.month, date.day
                    )
                    .into_bytes(),
                ),
            }
        }
        // Length 0 (zero), 8 (sign, days, hours, minutes, seconds) or 12 (and
        // microseconds), as MySQL's clients send a MYSQL_TIME.
        t::TIME => {
            let len = r.u8()? as usize;
            let b = r.bytes(len, "time")?;
            if len == 0 {
                return Ok(Value::Time(Time::ZERO));
            }
            if len < 8 {
                return Err(Malformed("time"));
            }
            let negative = b[0] == 1;
            let days = u32::from_le_bytes([b[1], b[2], b[3], b[4]]);
            let hours = u64::from(days) * 24 + u64::from(b[5]);
            let micros = if len >= 12 {
                u32::from_le_bytes([b[8], b[9], b[10], b[11]])
            } else {
                0
            };
            let fields = (u64::from(b[6]), u64::from(b[7]), u64::from(micros));
            match Time::from_parts(negative, hours, fields.0, fields.1, fields.2) {
                Some(time) => Value::Time(time),
                // Out of range or a bad field goes on as text; the engine reports
                // it as MySQL does.
                None => Value::Bytes(
                    format!(
                        "{}{hours:02}:{:02}:{:02}.{micros:06}",
                        if negative { "-" } else { "" },
                        b[6],
                        b[7]
                    )
                    .into_bytes(),
                ),
            }
        }
        _ => Value::Bytes(r.lenenc_bytes()?.to_vec()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::put_lenenc_bytes;

    #[test]
    fn types_sent_once_are_reused_and_long_data_replaces_its_parameter() {
        let mut state = ParamState::new(3);
        let mut p = vec![0, 1, 0, 0, 0, 0b010, 1];
        p.extend_from_slice(&[t::LONGLONG, 0, t::VAR_STRING, 0, t::LONG, 0x80]);
        p.extend_from_slice(&(-5i64).to_le_bytes());
        p.extend_from_slice(&7u32.to_le_bytes());
        let values = decode_params(&mut Reader::new(&p), 3, &mut state).unwrap();
        assert_eq!(values, vec![Value::Int(-5), Value::Null, Value::UInt(7)]);

        state.long_data[1] = Some(b"blob".to_vec());
        let mut p = vec![0, 1, 0, 0, 0, 0, 0];
        p.extend_from_slice(&9i64.to_le_bytes());
        p.extend_from_slice(&8u32.to_le_bytes());
        let values = decode_params(&mut Reader::new(&p), 3, &mut state).unwrap();
        assert_eq!(
            values,
            vec![
                Value::Int(9),
                Value::Bytes(b"blob".to_vec()),
                Value::UInt(8)
            ]
        );
        assert!(state.long_data[1].is_none(), "long data is used once");
    }

    #[test]
    fn time_parameters_are_times() {
        let mut state = ParamState::new(3);
        let mut p = vec![0, 1, 0, 0, 0, 0, 1];
        p.extend_from_slice(&[t::TIME, 0, t::TIME, 0, t::TIME, 0]);
        p.push(0);
        p.extend_from_slice(&[8, 1, 1, 0, 0, 0, 10, 20, 30]);
        p.extend_from_slice(&[12, 0, 0, 0, 0, 0, 1, 2, 3]);
        p.extend_from_slice(&500_000u32.to_le_bytes());
        let values = decode_params(&mut Reader::new(&p), 3, &mut state).unwrap();
        let shown: Vec<String> = values.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["00:00:00", "-34:20:30", "01:02:03.500000"]);
        // Minutes above 59 are no TIME: the value goes on as text.
        let mut p = vec![0, 1, 0, 0, 0, 0, 0];
        p.extend_from_slice(&[8, 0, 0, 0, 0, 0, 1, 60, 0]);
        p.extend_from_slice(&[0, 0]);
        let values = decode_params(&mut Reader::new(&p), 3, &mut state).unwrap();
        assert_eq!(values[0], Value::Bytes(b"01:60:00.000000".to_vec()));
    }

    #[test]
    fn truncated_parameters_are_malformed() {
        let mut state = ParamState::new(1);
        let mut p = vec![0, 1, 0, 0, 0, 0, 1, t::VAR_STRING, 0];
        put_lenenc_bytes(&mut p, b"hello");
        for len in 0..p.len() {
            assert!(decode_params(&mut Reader::new(&p[..len]), 1, &mut state).is_err());
        }
        assert!(decode_params(&mut Reader::new(&p), 1, &mut state).is_ok());
        let fresh = &mut ParamState::new(1);
        assert!(decode_params(&mut Reader::new(&[0, 1, 0, 0, 0, 0, 0]), 1, fresh).is_err());
    }
}
