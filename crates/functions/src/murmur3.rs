//! MurmurHash3 variants Doris uses for `bitmap_hash` (x86_32, seed 104729) and `bitmap_hash64`
//! (Doris's 64-bit variant `murmur_hash3_x64_64`: the x64 mixing over 8-byte blocks with a single
//! lane, seed 0). Little-endian block reads, as on the x86/ARM machines Doris runs on.

const C1_32: u32 = 0xcc9e_2d51;
const C2_32: u32 = 0x1b87_3593;

/// MurmurHash3_x86_32.
pub fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        let k = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        h ^= mix32(k);
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, &byte) in tail.iter().enumerate() {
            k |= (byte as u32) << (8 * i);
        }
        h ^= mix32(k);
    }
    h ^= data.len() as u32;
    fmix32(h)
}

const C1_64: u64 = 0x87c3_7b91_1142_53d5;
const C2_64: u64 = 0x4cf5_ad43_2745_937f;

/// Doris's `murmur_hash3_x64_64`.
pub fn murmur3_x64_64(data: &[u8], seed: u64) -> u64 {
    let mut h = seed;
    let mut blocks = data.chunks_exact(8);
    for b in &mut blocks {
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        h ^= mix64(u64::from_le_bytes(w));
        h = h.rotate_left(27).wrapping_mul(5).wrapping_add(0x52dc_e729);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k = 0u64;
        for (i, &byte) in tail.iter().enumerate() {
            k |= (byte as u64) << (8 * i);
        }
        h ^= mix64(k);
    }
    h ^= data.len() as u64;
    fmix64(h)
}

#[inline]
fn mix32(k: u32) -> u32 {
    k.wrapping_mul(C1_32).rotate_left(15).wrapping_mul(C2_32)
}

#[inline]
fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

#[inline]
fn mix64(k: u64) -> u64 {
    k.wrapping_mul(C1_64).rotate_left(31).wrapping_mul(C2_64)
}

#[inline]
fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn murmur3_32_reference_vectors() {
        // Published MurmurHash3_x86_32 vectors.
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_32(b"", 0xffff_ffff), 0x81f1_6f39);
        assert_eq!(murmur3_32(&[0, 0, 0, 0], 0), 0x2362_f9de);
        assert_eq!(murmur3_32(b"a", 0x9747_b28c), 0x7fa0_9ea6);
        assert_eq!(murmur3_32(b"abcd", 0x9747_b28c), 0xf047_8627);
        assert_eq!(murmur3_32(b"Hello, world!", 0x9747_b28c), 0x2488_4cba);
        assert_eq!(murmur3_32(b"hello", 0), 0x248b_fa47);
    }

    #[test]
    fn doris_examples() {
        // Doris docs: bitmap_hash('hello') = 1321743225 (seed 104729),
        // bitmap_hash64('hello') = 15231136565543391023.
        assert_eq!(murmur3_32(b"hello", 104_729), 1_321_743_225);
        assert_eq!(murmur3_x64_64(b"hello", 0), 15_231_136_565_543_391_023);
    }
}
