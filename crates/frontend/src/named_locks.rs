//! MySQL's user-level locks, held by sessions of this server: `GET_LOCK(name, timeout)` takes
//! the lock named `name` (names compare case-insensitively), waiting up to `timeout` seconds
//! (a negative timeout waits for ever) while another session holds it: 1 when taken, 0 when
//! the wait timed out. A session may take a lock it holds again; `RELEASE_LOCK(name)` gives up
//! one hold (1), or answers 0 when another session holds it and NULL when no one does.
//! `IS_FREE_LOCK(name)` is 1 or 0, `IS_USED_LOCK(name)` the holder's connection id or NULL,
//! `RELEASE_ALL_LOCKS()` the number of holds the session gave up. A session's locks are given
//! up when it ends. NULL arguments give NULL (MariaDB's answers). The wait is a timer, not a
//! blocked thread, and KILL QUERY ends it.

use crate::session::SessionInfo;
use datafusion::arrow::array::{Array, AsArray, Int64Array, UInt64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::{exec_err, Result};
use datafusion::logical_expr::async_udf::{AsyncScalarUDF, AsyncScalarUDFImpl};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::sync::Notify;

/// The longest wait one call accepts (a year), also what a negative timeout means.
const MAX_WAIT_SECONDS: f64 = 365.0 * 24.0 * 3600.0;

/// Who holds a lock and how many times.
#[derive(Debug, Clone, Copy)]
struct Hold {
    owner: u32,
    count: u64,
}

/// Every lock of the process and a signal for waiters when one is given up.
#[derive(Default)]
struct Locks {
    held: parking_lot::Mutex<HashMap<String, Hold>>,
    released: Notify,
}

fn locks() -> &'static Locks {
    static LOCKS: OnceLock<Locks> = OnceLock::new();
    LOCKS.get_or_init(Locks::default)
}

fn key(name: &str) -> String {
    name.to_lowercase()
}

impl Locks {
    /// Takes `name` for `owner` if it is free or already `owner`'s.
    fn try_take(&self, name: &str, owner: u32) -> bool {
        let mut held = self.held.lock();
        let hold = held.entry(key(name)).or_insert(Hold { owner, count: 0 });
        if hold.owner != owner {
            return false;
        }
        hold.count += 1;
        true
    }

    /// Takes `name`, waiting up to `wait` for its holder to give it up.
    async fn take(&self, name: &str, owner: u32, wait: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.released.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.try_take(name, owner) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.try_take(name, owner);
            }
        }
    }

    /// Gives up one hold: Some(true) released, Some(false) another session's, None no lock.
    fn release(&self, name: &str, owner: u32) -> Option<bool> {
        let mut held = self.held.lock();
        let k = key(name);
        let hold = held.get_mut(&k)?;
        if hold.owner != owner {
            return Some(false);
        }
        hold.count -= 1;
        if hold.count == 0 {
            held.remove(&k);
            self.released.notify_waiters();
        }
        Some(true)
    }

    fn holder(&self, name: &str) -> Option<u32> {
        self.held.lock().get(&key(name)).map(|h| h.owner)
    }

    /// Gives up every hold of `owner`; the number of holds.
    fn release_all(&self, owner: u32) -> u64 {
        let mut held = self.held.lock();
        let mut count = 0;
        held.retain(|_, h| {
            if h.owner == owner {
                count += h.count;
                false
            } else {
                true
            }
        });
        if count > 0 {
            self.released.notify_waiters();
        }
        count
    }
}

/// Gives up the locks of a session that ends.
pub(crate) fn release_session_locks(connection_id: u32) {
    locks().release_all(connection_id);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    GetLock,
    ReleaseLock,
    IsFreeLock,
    IsUsedLock,
    ReleaseAllLocks,
}

#[derive(Debug)]
struct LockFunction {
    name: &'static str,
    kind: Kind,
    signature: Signature,
    info: Arc<SessionInfo>,
}

impl PartialEq for LockFunction {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && Arc::ptr_eq(&self.info, &other.info)
    }
}

impl Eq for LockFunction {}

impl Hash for LockFunction {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.kind.hash(state);
    }
}

/// The lock functions of one session.
pub(crate) fn functions(info: &Arc<SessionInfo>) -> Vec<ScalarUDF> {
    let make = |name, kind, signature| LockFunction {
        name,
        kind,
        signature,
        info: info.clone(),
    };
    let one = || Signature::uniform(1, vec![DataType::Utf8], Volatility::Volatile);
    vec![
        AsyncScalarUDF::new(Arc::new(make(
            "get_lock",
            Kind::GetLock,
            Signature::exact(
                vec![DataType::Utf8, DataType::Float64],
                Volatility::Volatile,
            ),
        )))
        .into_scalar_udf(),
        ScalarUDF::new_from_impl(make("release_lock", Kind::ReleaseLock, one())),
        ScalarUDF::new_from_impl(make("is_free_lock", Kind::IsFreeLock, one())),
        ScalarUDF::new_from_impl(make("is_used_lock", Kind::IsUsedLock, one())),
        ScalarUDF::new_from_impl(make(
            "release_all_locks",
            Kind::ReleaseAllLocks,
            Signature::nullary(Volatility::Volatile),
        )),
    ]
}

impl ScalarUDFImpl for LockFunction {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _types: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::IsUsedLock => DataType::UInt64,
            _ => DataType::Int64,
        })
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let owner = self.info.connection_id;
        let rows = args.number_rows;
        if self.kind == Kind::ReleaseAllLocks {
            let n = i64::try_from(locks().release_all(owner)).unwrap_or(i64::MAX);
            return Ok(ColumnarValue::Array(Arc::new(Int64Array::from(vec![
                n;
                rows
            ]))));
        }
        let names = cast(&args.args[0].to_array(rows)?, &DataType::Utf8)?;
        let names = names.as_string::<i32>();
        let name = |i: usize| names.is_valid(i).then(|| names.value(i));
        Ok(ColumnarValue::Array(match self.kind {
            Kind::IsUsedLock => Arc::new(
                (0..rows)
                    .map(|i| name(i).and_then(|n| locks().holder(n)).map(u64::from))
                    .collect::<UInt64Array>(),
            ),
            Kind::IsFreeLock => Arc::new(
                (0..rows)
                    .map(|i| name(i).map(|n| i64::from(locks().holder(n).is_none())))
                    .collect::<Int64Array>(),
            ),
            Kind::ReleaseLock => Arc::new(
                (0..rows)
                    .map(|i| {
                        name(i)
                            .and_then(|n| locks().release(n, owner))
                            .map(i64::from)
                    })
                    .collect::<Int64Array>(),
            ),
            Kind::GetLock | Kind::ReleaseAllLocks => {
                return exec_err!("{} runs only as an asynchronous function", self.name)
            }
        }))
    }
}

#[async_trait::async_trait]
impl AsyncScalarUDFImpl for LockFunction {
    async fn invoke_async_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let names = cast(&args.args[0].to_array(rows)?, &DataType::Utf8)?;
        let timeouts = cast(&args.args[1].to_array(rows)?, &DataType::Float64)?;
        let (names, timeouts) = (
            names.as_string::<i32>(),
            timeouts.as_primitive::<Float64Type>(),
        );
        let mut out = Vec::with_capacity(rows);
        for i in 0..rows {
            if names.is_null(i) || timeouts.is_null(i) {
                out.push(None);
                continue;
            }
            let seconds = match timeouts.value(i) {
                s if s < 0.0 || s.is_nan() => MAX_WAIT_SECONDS,
                s => s.min(MAX_WAIT_SECONDS),
            };
            let taken = locks()
                .take(
                    names.value(i),
                    self.info.connection_id,
                    Duration::from_secs_f64(seconds),
                )
                .await;
            out.push(Some(i64::from(taken)));
        }
        Ok(ColumnarValue::Array(Arc::new(Int64Array::from(out))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn locks_are_held_counted_and_waited_for() {
        let locks = Locks::default();
        assert!(locks.try_take("L", 1));
        assert!(locks.try_take("l", 1));
        assert!(!locks.take("l", 2, Duration::from_millis(20)).await);
        assert_eq!(locks.holder("l"), Some(1));
        assert_eq!(locks.release("l", 2), Some(false));
        assert_eq!(locks.release("l", 1), Some(true));
        assert_eq!(locks.holder("l"), Some(1));
        let locks = Arc::new(locks);
        let waiter = {
            let locks = locks.clone();
            tokio::spawn(async move { locks.take("l", 2, Duration::from_secs(5)).await })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(locks.release_all(1), 1);
        assert!(waiter.await.unwrap());
        assert_eq!(locks.holder("l"), Some(2));
        assert_eq!(locks.release("gone", 2), None);
    }
}
