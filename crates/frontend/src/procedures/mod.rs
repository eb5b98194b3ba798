//! Stored procedures: `CREATE PROCEDURE` checks a body and keeps it in the catalog (`define`,
//! `validate`), `DROP PROCEDURE`, `SHOW CREATE PROCEDURE`, and `CALL` (`call`), which runs the
//! body (`interpreter`) through the ordinary statement path with the parameters and local
//! variables bound as literals (`binding`, `values`, `frame`), its SELECTs' result sets going
//! to the client as several results.
//!
//! The body language is MySQL's: blocks, local variables, IF/CASE/WHILE/REPEAT/LOOP with
//! labels, LEAVE/ITERATE, SET, SELECT .. INTO, cursors, CONTINUE and EXIT handlers, and IN,
//! OUT and INOUT parameters; SIGNAL/RESIGNAL, GET DIAGNOSTICS and UNDO handlers are refused at
//! CREATE with 1235. Privileges: CREATE PROCEDURE needs CREATE on the database (MySQL's CREATE
//! ROUTINE), DROP PROCEDURE needs DROP there (ALTER ROUTINE), CALL and SHOW CREATE PROCEDURE
//! need some privilege on the database (EXECUTE); the body runs with its definer's privileges
//! (`SQL SECURITY DEFINER`, the default) or the caller's (`INVOKER`), see `context`.
//!
//! Stored functions (`CREATE FUNCTION .. RETURNS type`) share all of this; their calls in
//! expressions run the body once per row (`functions`, `function_udf`).

mod binding;
mod call;
mod call_inputs;
mod context;
mod define;
mod fitting;
mod frame;
mod function_udf;
mod functions;
mod interpreter;
mod validate;
mod values;

pub(crate) use call_inputs::run_inputs as run_call_inputs;
pub(crate) use context::RoutineContext;
pub(crate) use function_udf::function as stored_function_call;
pub(crate) use functions::unknown_function_error;

impl crate::session::Session {
    /// Lets stored functions called in this session's queries run (they need the engine and
    /// the shared session itself); a session that is never shared runs none.
    pub fn enable_routines(
        self: &std::sync::Arc<Self>,
        engine: &std::sync::Arc<crate::engine::QueryEngine>,
    ) {
        self.info.routine.set_handles(engine, self);
    }
}
