//! `mysql_native_password` authentication: the per-connection scramble (salt) and verification of
//! a client's scrambled token against the stored SHA1(SHA1(password)).

use rand::Rng;
use sha1::{Digest, Sha1};

/// Length of the scramble sent in the handshake.
pub const SALT_LEN: usize = 20;

/// Name of the only authentication plugin the server speaks.
pub const NATIVE_PASSWORD_PLUGIN: &str = "mysql_native_password";

/// A fresh random scramble: printable bytes 0x21..=0x7e, never NUL or '$'.
pub fn generate_salt() -> [u8; SALT_LEN] {
    let mut rng = rand::rng();
    let mut salt = [0u8; SALT_LEN];
    for b in salt.iter_mut() {
        *b = loop {
            let c: u8 = rng.random_range(0x21..=0x7e);
            if c != b'$' {
                break c;
            }
        };
    }
    salt
}

/// SHA1(SHA1(password)): the form in which a `mysql_native_password` password is stored.
pub fn double_sha1(password: &[u8]) -> [u8; 20] {
    let once = Sha1::digest(password);
    Sha1::digest(once).into()
}

/// Checks a client's `mysql_native_password` token.
///
/// `stored_double_sha1` is SHA1(SHA1(password)); empty means the account has no password, and then
/// only an empty token is accepted. Otherwise the token must satisfy
/// SHA1(token XOR SHA1(salt ++ stored)) == stored.
pub fn verify_native_password(salt: &[u8], token: &[u8], stored_double_sha1: &[u8]) -> bool {
    if stored_double_sha1.is_empty() {
        return token.is_empty();
    }
    if token.len() != 20 || stored_double_sha1.len() != 20 {
        return false;
    }
    let mut hasher = Sha1::new();
    hasher.update(salt);
    hasher.update(stored_double_sha1);
    let mask = hasher.finalize();
    let mut sha1_password = [0u8; 20];
    for ((out, t), m) in sha1_password.iter_mut().zip(token).zip(mask.iter()) {
        *out = t ^ m;
    }
    let candidate = Sha1::digest(sha1_password);
    // Compare without an early exit.
    candidate
        .iter()
        .zip(stored_double_sha1)
        .fold(0u8, |acc, (a, b)| acc | (a ^ b))
        == 0
}

/// The token a client computes: SHA1(password) XOR SHA1(salt ++ SHA1(SHA1(password))); empty for
/// an empty password.
pub fn scramble_native_password(salt: &[u8], password: &[u8]) -> Vec<u8> {
    if password.is_empty() {
        return Vec::new();
    }
    let stage1 = Sha1::digest(password);
    let stage2 = Sha1::digest(stage1);
    let mut hasher = Sha1::new();
    hasher.update(salt);
    hasher.update(stage2);
    let mask = hasher.finalize();
    stage1.iter().zip(mask.iter()).map(|(a, b)| a ^ b).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salt_is_printable_and_fresh() {
        let a = generate_salt();
        let b = generate_salt();
        assert_ne!(a, b);
        for s in [a, b] {
            assert!(s.iter().all(|c| (0x21..=0x7e).contains(c) && *c != b'$'));
        }
    }

    #[test]
    fn verifies_correct_token_only() {
        let salt = generate_salt();
        let stored = double_sha1(b"secret");
        let token = scramble_native_password(&salt, b"secret");
        assert_eq!(token.len(), 20);
        assert!(verify_native_password(&salt, &token, &stored));
        assert!(!verify_native_password(
            &salt,
            &scramble_native_password(&salt, b"Secret"),
            &stored
        ));
        let other_salt = generate_salt();
        assert!(!verify_native_password(&other_salt, &token, &stored));
        assert!(!verify_native_password(&salt, &[], &stored));
        assert!(!verify_native_password(&salt, &token[..19], &stored));
        assert!(!verify_native_password(&salt, &token, &stored[..10]));
    }

    #[test]
    fn empty_password_accepts_only_empty_token() {
        let salt = generate_salt();
        assert!(verify_native_password(&salt, &[], &[]));
        assert!(!verify_native_password(&salt, &[0u8; 20], &[]));
        assert!(scramble_native_password(&salt, b"").is_empty());
    }

    #[test]
    fn known_vector() {
        // SHA1(SHA1("password")), as MySQL shows it in mysql.user: *2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19
        let stored = double_sha1(b"password");
        let hex: String = stored.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(hex, "2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19");
    }
}
