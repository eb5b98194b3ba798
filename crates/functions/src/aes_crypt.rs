//! `AES_ENCRYPT(str, key[, iv[, mode]])` and `AES_DECRYPT(crypt, key[, iv[, mode]])` as MySQL
//! and Doris compute them. The mode is the session's `block_encryption_mode` (default
//! `aes-128-ecb`) unless Doris's fourth argument names one (`AES_256_CBC`; MySQL's
//! `aes-256-cbc` spelling taken too): `aes-{128,192,256}-{ecb,cbc,cfb1,cfb8,cfb128,ofb}` and
//! Doris's `cfb` (= cfb128) and `ctr`. The key is folded into the key size as MySQL folds it
//! (byte i XORed into byte i mod size of a zeroed key). ECB and CBC pad the text with PKCS#7;
//! the stream modes keep its length. Every mode but ECB needs an initialization vector of at
//! least 16 bytes (its first 16 are used); ECB ignores one. The result is binary; decrypting
//! with the wrong key (bad padding) or a length that is no multiple of 16 gives NULL in ECB
//! and CBC, as does any NULL argument.
//!
//! Doris's `SM4_ENCRYPT` / `SM4_DECRYPT` work the same way with the SM4 block cipher (GB/T
//! 32907, 128-bit key and block) in the modes `SM4_128_{ECB,CBC,CFB,CFB1,CFB8,CFB128,OFB,CTR}`;
//! their default is `SM4_128_ECB`, and the session's `block_encryption_mode` counts only when
//! it names an SM4 mode (as an AES mode only counts for the AES functions). A mode of the other
//! cipher as an argument is an error.

use crate::exact_division::MySqlOptions;
use crate::mysql_values::bytes;
use crate::util::{arguments, output, plain_function};
use aes::cipher::generic_array::GenericArray;
use aes::cipher::{BlockDecrypt, BlockEncrypt, KeyInit};
use datafusion::arrow::array::BinaryArray;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, Signature, TypeSignature, Volatility,
};
use std::sync::Arc;

const BLOCK: usize = 16;

pub fn functions() -> Vec<ScalarUDF> {
    let signature = || {
        Signature::one_of(
            vec![
                TypeSignature::Any(2),
                TypeSignature::Any(3),
                TypeSignature::Any(4),
            ],
            Volatility::Immutable,
        )
    };
    vec![
        plain_function("aes_encrypt", signature(), DataType::Binary, encrypt),
        plain_function("aes_decrypt", signature(), DataType::Binary, decrypt),
        plain_function("sm4_encrypt", signature(), DataType::Binary, sm4_encrypt),
        plain_function("sm4_decrypt", signature(), DataType::Binary, sm4_decrypt),
    ]
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Chaining {
    Ecb,
    Cbc,
    /// Cipher feedback of 1, 8 or 128 bits a step (`cfb` alone is 128, as OpenSSL names it).
    Cfb1,
    Cfb8,
    Cfb128,
    Ofb,
    /// Doris's counter mode: the IV is a 128-bit big-endian counter.
    Ctr,
}

impl Chaining {
    /// ECB and CBC pad the text to whole blocks (PKCS#7); the others are streams.
    fn padded(self) -> bool {
        matches!(self, Chaining::Ecb | Chaining::Cbc)
    }
}

/// The block cipher of a mode.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Algorithm {
    Aes,
    Sm4,
}

/// A mode: cipher, key size in bytes and block chaining.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mode {
    algorithm: Algorithm,
    key_bytes: usize,
    chaining: Chaining,
}

const DEFAULT_MODE: Mode = Mode {
    algorithm: Algorithm::Aes,
    key_bytes: 16,
    chaining: Chaining::Ecb,
};

const DEFAULT_SM4_MODE: Mode = Mode {
    algorithm: Algorithm::Sm4,
    key_bytes: 16,
    chaining: Chaining::Ecb,
};

/// A mode named as MySQL's `block_encryption_mode` names it (`aes-256-cbc`) or as Doris's
/// fourth argument does (`AES_256_CBC`).
fn parse_mode(function: &str, text: &str) -> Result<Mode> {
    let normal = text.trim().to_ascii_lowercase().replace('_', "-");
    let parts: Vec<&str> = normal.split('-').collect();
    let (algorithm, bits, chaining) = match parts.as_slice() {
        ["aes", bits, chaining] => (Algorithm::Aes, *bits, *chaining),
        ["sm4", bits, chaining] => (Algorithm::Sm4, *bits, *chaining),
        _ => return exec_err!("{function}: unknown encryption mode '{text}'"),
    };
    let key_bytes = match (algorithm, bits) {
        (_, "128") => 16,
        (Algorithm::Aes, "192") => 24,
        (Algorithm::Aes, "256") => 32,
        _ => return exec_err!("{function}: unknown encryption mode '{text}'"),
    };
    let chaining = match chaining {
        "ecb" => Chaining::Ecb,
        "cbc" => Chaining::Cbc,
        "cfb1" => Chaining::Cfb1,
        "cfb8" => Chaining::Cfb8,
        "cfb" | "cfb128" => Chaining::Cfb128,
        "ofb" => Chaining::Ofb,
        "ctr" => Chaining::Ctr,
        _ => return exec_err!("{function}: unknown encryption mode '{text}'"),
    };
    Ok(Mode {
        algorithm,
        key_bytes,
        chaining,
    })
}

/// MySQL's key folding: every key byte XORed into a zeroed key of the mode's size.
fn fold_key(key: &[u8], size: usize) -> Vec<u8> {
    let mut folded = vec![0_u8; size];
    for (i, b) in key.iter().enumerate() {
        folded[i % size] ^= b;
    }
    folded
}

/// One AES cipher of any key size, or SM4.
enum Cipher {
    A128(aes::Aes128),
    A192(aes::Aes192),
    A256(aes::Aes256),
    Sm4(sm4::Sm4),
}

impl Cipher {
    fn new(key: &[u8]) -> Option<Cipher> {
        Some(match key.len() {
            16 => Cipher::A128(aes::Aes128::new_from_slice(key).ok()?),
            24 => Cipher::A192(aes::Aes192::new_from_slice(key).ok()?),
            32 => Cipher::A256(aes::Aes256::new_from_slice(key).ok()?),
            _ => return None,
        })
    }

    fn for_mode(mode: Mode, key: &[u8]) -> Option<Cipher> {
        match mode.algorithm {
            Algorithm::Aes => Cipher::new(key),
            Algorithm::Sm4 => Some(Cipher::Sm4(sm4::Sm4::new_from_slice(key).ok()?)),
        }
    }

    fn encrypt(&self, block: &mut [u8]) {
        let block = GenericArray::from_mut_slice(block);
        match self {
            Cipher::A128(c) => c.encrypt_block(block),
            Cipher::A192(c) => c.encrypt_block(block),
            Cipher::A256(c) => c.encrypt_block(block),
            Cipher::Sm4(c) => c.encrypt_block(block),
        }
    }

    fn decrypt(&self, block: &mut [u8]) {
        let block = GenericArray::from_mut_slice(block);
        match self {
            Cipher::A128(c) => c.decrypt_block(block),
            Cipher::A192(c) => c.decrypt_block(block),
            Cipher::A256(c) => c.decrypt_block(block),
            Cipher::Sm4(c) => c.decrypt_block(block),
        }
    }
}

/// The first block's chaining input: the IV's first 16 bytes (zeros past its end; ECB
/// ignores it).
fn initial_vector(iv: &[u8]) -> [u8; BLOCK] {
    let mut v = [0_u8; BLOCK];
    v.iter_mut().zip(iv).for_each(|(d, s)| *d = *s);
    v
}

fn encrypt_bytes(text: &[u8], cipher: &Cipher, chaining: Chaining, iv: &[u8]) -> Vec<u8> {
    if !chaining.padded() {
        return stream(text, cipher, chaining, iv, true);
    }
    let pad = BLOCK - text.len() % BLOCK;
    let mut data = text.to_vec();
    data.extend(std::iter::repeat_n(pad as u8, pad));
    let mut previous = initial_vector(iv);
    for block in data.chunks_mut(BLOCK) {
        if chaining == Chaining::Cbc {
            block.iter_mut().zip(&previous).for_each(|(b, p)| *b ^= p);
        }
        cipher.encrypt(block);
        previous.copy_from_slice(block);
    }
    data
}

fn decrypt_bytes(crypt: &[u8], cipher: &Cipher, chaining: Chaining, iv: &[u8]) -> Option<Vec<u8>> {
    if !chaining.padded() {
        return Some(stream(crypt, cipher, chaining, iv, false));
    }
    if crypt.is_empty() || !crypt.len().is_multiple_of(BLOCK) {
        return None;
    }
    let mut data = crypt.to_vec();
    let mut previous = initial_vector(iv);
    for block in data.chunks_mut(BLOCK) {
        let mut cipher_text = [0_u8; BLOCK];
        cipher_text.copy_from_slice(block);
        cipher.decrypt(block);
        if chaining == Chaining::Cbc {
            block.iter_mut().zip(&previous).for_each(|(b, p)| *b ^= p);
        }
        previous = cipher_text;
    }
    let pad = usize::from(*data.last()?);
    if pad == 0
        || pad > BLOCK
        || data[data.len() - pad..]
            .iter()
            .any(|b| usize::from(*b) != pad)
    {
        return None;
    }
    data.truncate(data.len() - pad);
    Some(data)
}

/// The stream modes (CFB1/8/128, OFB, CTR): the text XORed with a key stream made by
/// encrypting a register that starts as the IV; as long as the text, no padding. Cipher
/// feedback shifts the cipher text into the register, so `encrypting` says which side
/// that is.
fn stream(
    input: &[u8],
    cipher: &Cipher,
    chaining: Chaining,
    iv: &[u8],
    encrypting: bool,
) -> Vec<u8> {
    let mut register = initial_vector(iv);
    let mut out = Vec::with_capacity(input.len());
    let key_stream = |register: &[u8; BLOCK]| {
        let mut block = *register;
        cipher.encrypt(&mut block);
        block
    };
    match chaining {
        Chaining::Cfb1 => {
            for byte in input {
                let mut result = 0_u8;
                for bit in (0..8).rev() {
                    let in_bit = (byte >> bit) & 1;
                    let out_bit = in_bit ^ (key_stream(&register)[0] >> 7);
                    result |= out_bit << bit;
                    let fed = if encrypting { out_bit } else { in_bit };
                    shift_in_bit(&mut register, fed);
                }
                out.push(result);
            }
        }
        Chaining::Cfb8 => {
            for byte in input {
                let c = byte ^ key_stream(&register)[0];
                out.push(c);
                register.copy_within(1.., 0);
                register[BLOCK - 1] = if encrypting { c } else { *byte };
            }
        }
        Chaining::Cfb128 => {
            for chunk in input.chunks(BLOCK) {
                let ks = key_stream(&register);
                let start = out.len();
                out.extend(chunk.iter().zip(ks).map(|(b, k)| b ^ k));
                let fed = if encrypting { &out[start..] } else { chunk };
                register[..fed.len()].copy_from_slice(fed);
            }
        }
        Chaining::Ofb => {
            for chunk in input.chunks(BLOCK) {
                register = key_stream(&register);
                out.extend(chunk.iter().zip(register).map(|(b, k)| b ^ k));
            }
        }
        Chaining::Ctr => {
            let mut counter = u128::from_be_bytes(register);
            for chunk in input.chunks(BLOCK) {
                let ks = key_stream(&counter.to_be_bytes());
                out.extend(chunk.iter().zip(ks).map(|(b, k)| b ^ k));
                counter = counter.wrapping_add(1);
            }
        }
        Chaining::Ecb | Chaining::Cbc => {}
    }
    out
}

/// The register shifted one bit left, `bit` coming in at the right.
fn shift_in_bit(register: &mut [u8; BLOCK], bit: u8) {
    for i in 0..BLOCK {
        let next = register.get(i + 1).map_or(bit, |b| b >> 7);
        register[i] = (register[i] << 1) | next;
    }
}

fn encrypt(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    crypt(
        args,
        "aes_encrypt",
        DEFAULT_MODE,
        |data, cipher, chaining, iv| Some(encrypt_bytes(data, cipher, chaining, iv)),
    )
}

fn decrypt(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    crypt(args, "aes_decrypt", DEFAULT_MODE, decrypt_bytes)
}

fn sm4_encrypt(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    crypt(
        args,
        "sm4_encrypt",
        DEFAULT_SM4_MODE,
        |data, cipher, chaining, iv| Some(encrypt_bytes(data, cipher, chaining, iv)),
    )
}

fn sm4_decrypt(args: &ScalarFunctionArgs) -> Result<ColumnarValue> {
    crypt(args, "sm4_decrypt", DEFAULT_SM4_MODE, decrypt_bytes)
}

/// `mode` when its cipher is the function's (the `default`'s), else an error.
fn check_algorithm(function: &str, mode: Mode, default: Mode) -> Result<Mode> {
    if mode.algorithm == default.algorithm {
        Ok(mode)
    } else {
        exec_err!(
            "{function}: the encryption mode names another cipher ({:?})",
            mode.algorithm
        )
    }
}

fn crypt(
    args: &ScalarFunctionArgs,
    function: &str,
    default: Mode,
    f: impl Fn(&[u8], &Cipher, Chaining, &[u8]) -> Option<Vec<u8>>,
) -> Result<ColumnarValue> {
    // The session's mode counts when it is one of this function's cipher.
    let session_mode = match args
        .config_options
        .extensions
        .get::<MySqlOptions>()
        .map(|o| o.block_encryption_mode.as_str())
    {
        Some(text) if !text.is_empty() => match parse_mode(function, text) {
            Ok(mode) if mode.algorithm == default.algorithm => mode,
            Ok(_) => default,
            Err(e) if default.algorithm == Algorithm::Aes => return Err(e),
            Err(_) => default,
        },
        _ => default,
    };
    let (arrays, scalar) = arguments(args)?;
    let columns: Vec<Vec<Option<Vec<u8>>>> = arrays.iter().map(bytes).collect::<Result<_>>()?;
    let rows = arrays.first().map_or(0, |a| a.len());
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(rows);
    for row in 0..rows {
        let cell = |i: usize| columns.get(i).map(|c| c[row].as_deref());
        let mode = match cell(3) {
            Some(Some(m)) => check_algorithm(
                function,
                parse_mode(function, &String::from_utf8_lossy(m))?,
                default,
            )?,
            Some(None) => {
                out.push(None);
                continue;
            }
            None => session_mode,
        };
        let (Some(Some(data)), Some(Some(key))) = (cell(0), cell(1)) else {
            out.push(None);
            continue;
        };
        let iv: &[u8] = match (mode.chaining, cell(2)) {
            (Chaining::Ecb, _) => &[],
            (_, Some(Some(iv))) if iv.len() >= BLOCK => &iv[..BLOCK],
            (_, Some(None)) => {
                out.push(None);
                continue;
            }
            (_, Some(Some(_))) => {
                return exec_err!(
                    "The initialization vector supplied to {function} is too short. Must be at least {BLOCK} bytes long"
                )
            }
            (_, None) => {
                return exec_err!(
                    "Incorrect parameter count in the call to native function '{function}'"
                )
            }
        };
        let Some(cipher) = Cipher::for_mode(mode, &fold_key(key, mode.key_bytes)) else {
            return exec_err!("{function}: bad key size {}", mode.key_bytes);
        };
        out.push(f(data, &cipher, mode.chaining, iv));
    }
    let out: BinaryArray = out.iter().map(|v| v.as_deref()).collect();
    output(Arc::new(out), scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02X}")).collect()
    }

    #[test]
    fn ecb_matches_mysql() {
        // SELECT HEX(AES_ENCRYPT('text', 'password')) on MySQL / MariaDB.
        let cipher = Cipher::new(&fold_key(b"password", 16)).unwrap();
        let crypt = encrypt_bytes(b"text", &cipher, Chaining::Ecb, &[]);
        assert_eq!(hex(&crypt), "F6BD0FA8DCB7F8CD4A2FAABC54668044");
        let empty = encrypt_bytes(
            b"",
            &Cipher::new(&fold_key(b"k", 16)).unwrap(),
            Chaining::Ecb,
            &[],
        );
        assert_eq!(hex(&empty), "932F1B1E9189536B938A6B67666D4031");
        let long_key = Cipher::new(&fold_key(b"a-key-longer-than-sixteen-bytes", 16)).unwrap();
        assert_eq!(
            hex(&encrypt_bytes(
                b"0123456789abcdef",
                &long_key,
                Chaining::Ecb,
                &[]
            )),
            "211FCE2A60F02B384AF7181E44DE3545B6DACFCC4735B609D31F9A1D445226ED"
        );
        assert_eq!(
            decrypt_bytes(&crypt, &cipher, Chaining::Ecb, &[]).as_deref(),
            Some(&b"text"[..])
        );
        let other = Cipher::new(&fold_key(b"wrong", 16)).unwrap();
        assert_ne!(
            decrypt_bytes(&crypt, &other, Chaining::Ecb, &[]).as_deref(),
            Some(&b"text"[..])
        );
    }

    #[test]
    fn sm4_matches_doris_documentation() {
        // Doris: TO_BASE64(SM4_ENCRYPT('text', 'F3229A0B371ED2D9441B830D21A390C3')) in
        // SM4_128_ECB is 'aDjwRflBrDjhBZIOFNw3Tg=='.
        use base64::Engine;
        let key = fold_key(b"F3229A0B371ED2D9441B830D21A390C3", 16);
        let cipher = Cipher::for_mode(DEFAULT_SM4_MODE, &key).unwrap();
        let crypt = encrypt_bytes(b"text", &cipher, Chaining::Ecb, &[]);
        let text = base64::engine::general_purpose::STANDARD.encode(&crypt);
        assert_eq!(text, "aDjwRflBrDjhBZIOFNw3Tg==");
        assert_eq!(
            decrypt_bytes(&crypt, &cipher, Chaining::Ecb, &[]).as_deref(),
            Some(&b"text"[..])
        );
        assert_eq!(
            parse_mode("f", "SM4_128_CBC").unwrap().algorithm,
            Algorithm::Sm4
        );
        assert!(parse_mode("f", "sm4_256_ecb").is_err());
    }

    #[test]
    fn keys_fold_and_modes_parse() {
        assert_eq!(fold_key(&[1; 17], 16)[0], 0);
        assert_eq!(parse_mode("f", "AES_256_CBC").unwrap().key_bytes, 32);
        assert_eq!(parse_mode("f", "aes-128-ecb").unwrap(), DEFAULT_MODE);
        assert!(parse_mode("f", "aes-128-gcm").is_err());
    }
}
