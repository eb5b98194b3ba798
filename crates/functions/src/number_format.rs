//! MySQL's `FORMAT(x, d[, locale])`: `x` rounded to `d` decimals (0 to 38; a DECIMAL or an
//! integer half away from zero from its exact digits, a DOUBLE from its binary value with ties
//! to even) and its integer part grouped by thousands, with the locale's separators
//! (`en_US`'s `,` and `.` for a locale it does not know). NULL when `x` or `d` is.

use crate::mysql_values::{integers, leading_number, texts};
use crate::util::{arguments, output};
use datafusion::arrow::array::{Array, ArrayRef, StringArray};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use std::sync::Arc;

/// The most decimals FORMAT shows.
const MAX_DECIMALS: i64 = 38;

/// How a locale writes a number: thousands separator (None for no grouping), decimal point,
/// and whether it groups by two after the first three digits (India).
struct Locale {
    thousands: Option<char>,
    point: char,
    indian: bool,
}

const EN: Locale = Locale {
    thousands: Some(','),
    point: '.',
    indian: false,
};

/// The separators of `name` (case-insensitive); `en_US`'s for an unknown locale.
fn locale(name: &str) -> Locale {
    let l = |thousands, point| Locale {
        thousands,
        point,
        indian: false,
    };
    // The separators MySQL's (MariaDB's) locales use; the others write 1,234.5.
    match name.to_ascii_lowercase().as_str() {
        "it_ch" | "rm_ch" => l(Some('\''), ','),
        "cs_cz" | "es_cr" | "et_ee" | "fi_fi" | "ka_ge" | "lv_lv" | "mk_mk" | "ru_ru" | "sk_sk"
        | "sv_fi" | "sv_se" => l(Some(' '), ','),
        "be_by" | "da_dk" | "de_be" | "de_de" | "de_lu" | "es_ar" | "es_bo" | "es_cl" | "es_co"
        | "es_ec" | "es_es" | "es_py" | "es_uy" | "es_ve" | "fo_fo" | "hu_hu" | "id_id"
        | "is_is" | "lt_lt" | "mn_mn" | "nb_no" | "no_no" | "ro_ro" | "ru_ua" | "sq_al"
        | "tr_tr" | "uk_ua" | "vi_vn" => l(Some('.'), ','),
        "bg_bg" => l(Some('\0'), ','),
        "ca_es" | "de_at" | "el_gr" | "eu_es" | "fr_be" | "fr_ca" | "fr_ch" | "fr_fr" | "fr_lu"
        | "gl_es" | "hr_hr" | "it_it" | "nl_be" | "nl_nl" | "pl_pl" | "pt_br" | "pt_pt"
        | "sl_si" => l(None, ','),
        "de_ch" => l(Some('\''), '.'),
        "ar_sa" | "sr_rs" => l(None, '.'),
        "en_in" | "ta_in" | "te_in" => Locale {
            thousands: Some(','),
            point: '.',
            indian: true,
        },
        _ => EN,
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Format {
    signature: Signature,
}

/// `format`.
pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(Format {
        signature: Signature::one_of(
            vec![TypeSignature::Any(2), TypeSignature::Any(3)],
            Volatility::Immutable,
        ),
    })
}

impl ScalarUDFImpl for Format {
    fn name(&self) -> &str {
        "format"
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, types: &[DataType]) -> Result<DataType> {
        if !(2..=3).contains(&types.len()) {
            return plan_err!("format takes 2 or 3 arguments, got {}", types.len());
        }
        Ok(DataType::Utf8)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let (arrays, scalar) = arguments(&args)?;
        let numbers = digits_of(&arrays[0])?;
        let decimals = integers(&arrays[1])?;
        let locales = match arrays.get(2) {
            Some(a) => texts(a)?,
            None => vec![None; numbers.len()],
        };
        let out: StringArray = (0..numbers.len())
            .map(|i| {
                let d = decimals[i]?.clamp(0, MAX_DECIMALS) as usize;
                let l = locales[i].as_deref().map_or(EN, locale);
                let plain = match numbers[i].as_ref()? {
                    Number::Exact(text) => round_half_up(text, d),
                    // Ties to even on the binary value; "-0" shown as "0".
                    Number::Double(x) => round_half_up(&format!("{x:.d$}"), d),
                };
                Some(grouped(&plain, &l))
            })
            .collect();
        output(Arc::new(out), scalar)
    }
}

/// A value to format: the exact digits of a DECIMAL or an integer, or a DOUBLE.
enum Number {
    Exact(String),
    Double(f64),
}

/// The values of `a` as numbers; text is read as MySQL reads it (0 when it has no number).
fn digits_of(a: &ArrayRef) -> Result<Vec<Option<Number>>> {
    let exact = matches!(
        a.data_type(),
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
            | DataType::Decimal32(..)
            | DataType::Decimal64(..)
            | DataType::Decimal128(..)
            | DataType::Decimal256(..)
            | DataType::Boolean
    );
    let text = texts(a)?;
    let float = matches!(
        a.data_type(),
        DataType::Float16 | DataType::Float32 | DataType::Float64
    );
    if float {
        let f = datafusion::arrow::compute::cast(a, &DataType::Float64)?;
        let f = f
            .as_any()
            .downcast_ref::<datafusion::arrow::array::Float64Array>()
            .map(|f| f.iter().map(|v| v.map(Number::Double)).collect());
        if let Some(f) = f {
            return Ok(f);
        }
    }
    Ok(text
        .into_iter()
        .map(|v| {
            v.map(|t| {
                if exact {
                    Number::Exact(t)
                } else {
                    Number::Double(leading_number(&t).unwrap_or(0.0))
                }
            })
        })
        .collect())
}

/// Decimal text `text` rounded half away from zero to `d` decimals, with `d` decimals.
fn round_half_up(text: &str, d: usize) -> String {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let mut kept: Vec<u8> = whole.bytes().map(|b| b.wrapping_sub(b'0')).collect();
    let mut rest = fraction.bytes().map(|b| b.wrapping_sub(b'0'));
    for _ in 0..d {
        kept.push(rest.next().unwrap_or(0));
    }
    if rest.next().is_some_and(|x| x >= 5) {
        let mut i = kept.len();
        loop {
            if i == 0 {
                kept.insert(0, 1);
                break;
            }
            i -= 1;
            if kept[i] == 9 {
                kept[i] = 0;
            } else {
                kept[i] += 1;
                break;
            }
        }
    }
    let (units, decimals) = kept.split_at(kept.len() - d);
    let units: String = units.iter().map(|x| char::from(b'0' + x)).collect();
    let units = units.trim_start_matches('0');
    let units = if units.is_empty() { "0" } else { units };
    let decimals: String = decimals.iter().map(|x| char::from(b'0' + x)).collect();
    let zero = units == "0" && decimals.bytes().all(|b| b == b'0');
    let sign = if negative && !zero { "-" } else { "" };
    if d == 0 {
        format!("{sign}{units}")
    } else {
        format!("{sign}{units}.{decimals}")
    }
}

/// Plain number text `plain` (`-1234.5`) with the locale's grouping and decimal point.
fn grouped(plain: &str, l: &Locale) -> String {
    let (sign, digits) = match plain.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", plain),
    };
    let (whole, fraction) = match digits.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (digits, None),
    };
    let mut out = String::from(sign);
    let n = whole.len();
    for (i, c) in whole.chars().enumerate() {
        let left = n - i;
        let boundary = if l.indian {
            left == 3 || (left > 3 && (left - 3) % 2 == 0)
        } else {
            left % 3 == 0
        };
        if i > 0 && boundary {
            if let Some(sep) = l.thousands {
                out.push(sep);
            }
        }
        out.push(c);
    }
    if let Some(f) = fraction {
        out.push(l.point);
        out.push_str(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_mysql_documents() {
        assert_eq!(
            grouped(&round_half_up("12332.123456", 4), &EN),
            "12,332.1235"
        );
        assert_eq!(grouped(&round_half_up("12332.1", 4), &EN), "12,332.1000");
        assert_eq!(grouped(&round_half_up("12332.2", 0), &EN), "12,332");
        assert_eq!(grouped(&round_half_up("-0.5", 0), &EN), "-1");
        assert_eq!(grouped(&round_half_up("-0.4", 0), &EN), "0");
        assert_eq!(grouped(&round_half_up("999.5", 0), &EN), "1,000");
        assert_eq!(
            grouped(&round_half_up("12332.2", 2), &locale("de_DE")),
            "12.332,20"
        );
        assert_eq!(grouped("-1234567.89", &locale("en_IN")), "-12,34,567.89");
        assert_eq!(grouped("-1234567.89", &locale("fr_FR")), "-1234567,89");
        assert_eq!(grouped(&format!("{:.0}", 12.5f64), &EN), "12");
    }
}
