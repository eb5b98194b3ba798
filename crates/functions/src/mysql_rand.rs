//! MySQL's `RAND()` and `RAND(seed)` (also named `RANDOM`, as in Doris).
//!
//! Without a seed every row gets a fresh random DOUBLE in [0, 1). With a seed the values come
//! from MySQL's own generator, so they repeat across runs and servers: two 30-bit states, each
//! step `s1 = (3*s1 + s2) mod M`, `s2 = (s1 + s2 + 33) mod M` with `M = 2^30 - 1`, giving
//! `s1 / M`; a seed `n` (read as an integer, as MySQL reads it, and cut to 32 bits) starts the
//! states at `(n*0x10001 + 55555555) mod 2^32 mod M` and `(n*0x10000001) mod 2^32 mod M`.
//! A constant seed starts one sequence per call site per query and each row takes its next
//! value (`SELECT RAND(1), RAND(1) FROM t` gives equal columns, a new value per row); a seed
//! that varies by row (`RAND(a)`) starts afresh on every row, so that row gets the sequence's
//! first value. NULL seeds like 0.
//!
//! The registered function has no state: the optimizer's simplification swaps each seeded
//! call for a copy with its own sequence (planned once per query). A call that was never
//! simplified (decoded on another node) starts its sequence on every batch.

use crate::mysql_values::integers;
use datafusion::arrow::array::{ArrayRef, Float64Array};
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::simplify::{ExprSimplifyResult, SimplifyContext};
use datafusion::logical_expr::{
    ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility,
};
use rand::Rng;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

/// The generator's modulus, 2^30 - 1.
const MODULUS: u64 = 0x3FFF_FFFF;

/// One seeded sequence of MySQL's generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SeededSequence {
    s1: u64,
    s2: u64,
}

impl SeededSequence {
    /// The sequence RAND(seed) gives (`seed` as MySQL reads it as an integer).
    pub(crate) fn new(seed: i64) -> SeededSequence {
        // MySQL keeps the seed as an unsigned 32-bit number and computes in 32 bits.
        let n = seed as u32;
        let s1 = n.wrapping_mul(0x10001).wrapping_add(55_555_555);
        let s2 = n.wrapping_mul(0x1000_0001);
        SeededSequence {
            s1: u64::from(s1) % MODULUS,
            s2: u64::from(s2) % MODULUS,
        }
    }

    /// The sequence of MySQL's `randominit(seed1, seed2)`: states taken straight from two
    /// numbers (ENCODE's password hash).
    pub(crate) fn from_states(seed1: u64, seed2: u64) -> SeededSequence {
        SeededSequence {
            s1: seed1 % MODULUS,
            s2: seed2 % MODULUS,
        }
    }

    /// The next value, in [0, 1).
    pub(crate) fn next_value(&mut self) -> f64 {
        self.s1 = (self.s1 * 3 + self.s2) % MODULUS;
        self.s2 = (self.s1 + self.s2 + 33) % MODULUS;
        self.s1 as f64 / MODULUS as f64
    }
}

/// A running seeded sequence of one call site, started by its first rows.
type Running = Arc<Mutex<Option<SeededSequence>>>;

#[derive(Debug)]
struct Rand {
    signature: Signature,
    aliases: Vec<String>,
    /// A call site's sequence; `None` in the registered function.
    running: Option<Running>,
}

impl PartialEq for Rand {
    fn eq(&self, other: &Self) -> bool {
        match (&self.running, &other.running) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl Eq for Rand {}

impl Hash for Rand {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.running.as_ref().map(Arc::as_ptr).hash(state);
    }
}

impl Rand {
    fn new(running: Option<Running>) -> Rand {
        Rand {
            signature: Signature::one_of(
                vec![TypeSignature::Nullary, TypeSignature::Any(1)],
                Volatility::Volatile,
            ),
            aliases: vec!["random".to_string()],
            running,
        }
    }
}

impl ScalarUDFImpl for Rand {
    fn name(&self) -> &str {
        "rand"
    }

    fn aliases(&self) -> &[String] {
        &self.aliases
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _arg_types: &[DataType]) -> Result<DataType> {
        Ok(DataType::Float64)
    }

    fn simplify(&self, args: Vec<Expr>, _info: &SimplifyContext) -> Result<ExprSimplifyResult> {
        if args.len() != 1 || self.running.is_some() {
            return Ok(ExprSimplifyResult::Original(args));
        }
        let call_site = ScalarUDF::new_from_impl(Rand::new(Some(Arc::default())));
        Ok(ExprSimplifyResult::Simplified(Expr::ScalarFunction(
            ScalarFunction::new_udf(Arc::new(call_site), args),
        )))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let values: Vec<f64> = match args.args.first() {
            None => {
                let mut rng = rand::rng();
                (0..rows).map(|_| rng.random::<f64>()).collect()
            }
            Some(ColumnarValue::Scalar(seed)) => {
                let seed = integers(&seed.to_array()?)?.first().copied().flatten();
                let start = || SeededSequence::new(seed.unwrap_or(0));
                match &self.running {
                    Some(running) => {
                        let mut running = running.lock().unwrap_or_else(PoisonError::into_inner);
                        let sequence = running.get_or_insert_with(start);
                        (0..rows).map(|_| sequence.next_value()).collect()
                    }
                    None => {
                        let mut sequence = start();
                        (0..rows).map(|_| sequence.next_value()).collect()
                    }
                }
            }
            Some(ColumnarValue::Array(seeds)) => integers(seeds)?
                .into_iter()
                .map(|seed| SeededSequence::new(seed.unwrap_or(0)).next_value())
                .collect(),
        };
        let out: ArrayRef = Arc::new(Float64Array::from(values));
        Ok(ColumnarValue::Array(out))
    }
}

/// `RAND`/`RANDOM` with and without a seed.
pub fn function() -> ScalarUDF {
    ScalarUDF::new_from_impl(Rand::new(None))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(seed: i64, n: usize) -> Vec<f64> {
        let mut s = SeededSequence::new(seed);
        (0..n).map(|_| s.next_value()).collect()
    }

    #[test]
    fn seeded_sequences_are_mysqls() {
        // Checked against a MariaDB server: SELECT RAND(10) over three rows, RAND(1) over two.
        assert_eq!(
            first(10, 3),
            [0.6570515219653505, 0.12820613023657923, 0.6698761160204896]
        );
        assert_eq!(first(1, 2), [0.40540353712197724, 0.8716141803857071]);
        assert_eq!(first(0, 1), [0.15522042769493574]);
        // Seeds are cut to 32 bits: -1 is 4294967295, 2^32 is 0.
        assert_eq!(first(-1, 1), [0.9050373219931845]);
        assert_eq!(first(1 << 32, 1), first(0, 1));
    }

    #[test]
    fn each_call_site_has_its_own_sequence() {
        let a = Rand::new(Some(Arc::default()));
        let b = Rand::new(Some(Arc::default()));
        assert_ne!(a, b);
        assert_eq!(Rand::new(None), Rand::new(None));
    }
}
