//! Stored procedures: `CREATE PROCEDURE` checks a body and keeps it in the catalog (`define`),
//! `DROP PROCEDURE`, `SHOW CREATE PROCEDURE`, and `CALL`, which runs the body's statements one
//! by one through the ordinary statement path with the parameters bound to the arguments' values
//! (`call`, `binding`), its SELECTs' result sets going to the client as several results.
//!
//! The body language is a list of SQL statements in `BEGIN .. END` (blocks may nest) or a
//! single statement; declarations, flow control, cursors, handlers and assigning parameters are
//! refused at CREATE with 1235 naming the construct, and so are OUT and INOUT parameters (a
//! body cannot assign them). Privileges: CREATE PROCEDURE needs CREATE on the database (MySQL's
//! CREATE ROUTINE), DROP PROCEDURE needs DROP there (ALTER ROUTINE), CALL and SHOW CREATE
//! PROCEDURE need some privilege on the database (EXECUTE); the body runs with the caller's
//! privileges, each statement checked as if the caller had sent it.

mod binding;
mod call;
mod define;
