//! The one error type of Basalt and the single place where errors map to MySQL error codes
//! and SQLSTATEs.

use thiserror::Error;

/// Result alias used across Basalt.
pub type Result<T, E = BasaltError> = std::result::Result<T, E>;

/// Every error Basalt reports to a client or logs.
#[derive(Debug, Error)]
pub enum BasaltError {
    /// Malformed SQL; `near` is the text at the failing position, `line` is 1-based.
    #[error("You have an error in your SQL syntax; {message} near '{near}' at line {line}")]
    Syntax {
        message: String,
        near: String,
        line: u64,
    },
    #[error("Unknown database '{0}'")]
    UnknownDatabase(String),
    #[error("Can't create database '{0}'; database exists")]
    DatabaseExists(String),
    #[error("Can't drop database '{0}'; database doesn't exist")]
    DropMissingDatabase(String),
    #[error("Table '{0}' doesn't exist")]
    UnknownTable(String),
    #[error("Table '{0}' already exists")]
    TableExists(String),
    /// SHOW CREATE VIEW of a table.
    #[error("'{0}' is not VIEW")]
    NotAView(String),
    /// An INSERT row with more or fewer values than columns (1-based row number).
    #[error("Column count doesn't match value count at row {0}")]
    ColumnCountMismatch(u64),
    /// A view's column list names more or fewer columns than its SELECT returns.
    #[error("In definition of view, derived table or common table expression, SELECT list and column names list have different column counts")]
    ViewColumnCount,
    /// INSERT into a view that is no single table's columns (view name).
    #[error("The target table {0} of the INSERT is not insertable-into")]
    NotInsertable(String),
    /// A write to a view column its SELECT computes (column name).
    #[error("Column '{0}' is not updatable")]
    ColumnNotUpdatable(String),
    /// A row written through a view WITH CHECK OPTION that the view would not show
    /// (`db.view`).
    #[error("CHECK OPTION failed '{0}'")]
    CheckOptionFailed(String),
    /// A write through a view joining tables that would change more than one of them
    /// (`db.view`).
    #[error("Can not modify more than one base table through a join view '{0}'")]
    JoinViewManyTables(String),
    /// INSERT into a view joining tables without a column list (`db.view`).
    #[error("Can not insert into join view '{0}' without fields list")]
    JoinViewNoFields(String),
    /// CREATE VIEW whose SELECT reads a user or system variable.
    #[error("View's SELECT contains a variable or parameter")]
    ViewSelectVariable,
    /// DELETE from a view joining tables (`db.view`).
    #[error("Can not delete from join view '{0}'")]
    JoinViewDelete(String),
    #[error("Duplicate column name '{0}'")]
    DuplicateColumn(String),
    /// One table name (or alias) twice in a FROM clause (`FROM t, t`).
    #[error("Not unique table/alias: '{0}'")]
    NotUniqueTable(String),
    /// `OVER w` or `OVER (w ..)` naming a window the query block does not define.
    #[error("Window name '{0}' is not defined.")]
    UndefinedWindow(String),
    /// One window name defined twice in a WINDOW clause (case-insensitively).
    #[error("Window '{0}' is defined twice.")]
    DuplicateWindow(String),
    /// Named windows that refine each other in a cycle (`w1 AS (w2), w2 AS (w1)`).
    #[error("There is a circularity in the window dependency graph.")]
    WindowCycle,
    /// A window that refines another and has its own PARTITION BY.
    #[error("A window which depends on another cannot define partitioning.")]
    WindowChildPartitioning,
    /// A window with a frame that another window refines.
    #[error("Window '{0}' has a frame definition, so cannot be referenced by another window.")]
    WindowInheritsFrame(String),
    /// A window with an ORDER BY that refines one which has an ORDER BY too.
    #[error("Window '{window}' cannot inherit '{base}' since both contain an ORDER BY clause.")]
    WindowRedefinesOrder { window: String, base: String },
    /// A recursive CTE still giving rows after `@@cte_max_recursion_depth` iterations.
    #[error("Recursive query aborted after {0} iterations. Try increasing @@cte_max_recursion_depth to a larger value.")]
    RecursionDepth(u64),
    /// ALTER TABLE .. DROP COLUMN of a column the table does not have.
    #[error("Can't DROP '{0}'; check that column/key exists")]
    CantDropColumn(String),
    /// An index or foreign key naming a column the table does not have.
    #[error("Key column '{0}' doesn't exist in table")]
    KeyColumnMissing(String),
    /// An index named PRIMARY (the primary key's name).
    #[error("Incorrect index name '{0}'")]
    WrongIndexName(String),
    #[error("Duplicate key name '{0}'")]
    DuplicateKeyName(String),
    /// ALTER TABLE .. ADD PRIMARY KEY on a table that has one.
    #[error("Multiple primary key defined")]
    MultiplePrimaryKey,
    /// A DEFAULT the column's type or nullability can not take (ALTER .. SET DEFAULT).
    #[error("Invalid default value for '{0}'")]
    InvalidDefault(String),
    /// An index's prefix length on a column that is no string or is shorter than it.
    #[error("Incorrect prefix key; the used key part isn't a string, the used length is longer than the key part, or the storage engine doesn't support unique prefix keys")]
    WrongPrefixKey,
    /// ALTER TABLE's `ALGORITHM = a` that the change can not run as.
    #[error("{operation} is not supported for this operation. Try {try_instead}")]
    AlterAlgorithm {
        operation: String,
        try_instead: String,
    },
    /// ALTER TABLE's `LOCK = l` that the change can not run under.
    #[error("{operation} is not supported. Reason: {reason}. Try {try_instead}")]
    AlterLock {
        operation: String,
        reason: String,
        try_instead: String,
    },
    /// `ENGINE = e` naming an engine Basalt does not stand in for.
    #[error("Unknown storage engine '{0}'")]
    UnknownStorageEngine(String),
    /// RENAME INDEX of an index the table does not have.
    #[error("Key '{key}' doesn't exist in table '{table}'")]
    KeyMissing { key: String, table: String },
    #[error("Duplicate foreign key constraint name '{0}'")]
    DuplicateForeignKey(String),
    /// A foreign key with more or fewer columns than it references.
    #[error(
        "Incorrect foreign key definition for '{0}': Key reference and table reference don't match"
    )]
    ForeignKeyMismatch(String),
    /// A foreign key to a table that does not exist (with foreign_key_checks on).
    #[error("Failed to open the referenced table '{0}'")]
    ForeignKeyTableMissing(String),
    #[error("Failed to add the foreign key constraint. Missing column '{column}' for constraint '{constraint}' in the referenced table '{table}'")]
    ForeignKeyColumnMissing {
        column: String,
        constraint: String,
        table: String,
    },
    #[error("Cannot drop index '{0}': needed in a foreign key constraint")]
    IndexNeededByForeignKey(String),
    #[error("Cannot drop column '{column}': needed in a foreign key constraint '{constraint}'")]
    ForeignKeyColumnDrop { column: String, constraint: String },
    /// An INSERT or UPDATE giving a generated column a value other than DEFAULT.
    #[error(
        "The value specified for generated column '{column}' in table '{table}' is not allowed."
    )]
    GeneratedColumnValue { column: String, table: String },
    /// SET time_zone to something that is not an offset or a known zone.
    #[error("Unknown or incorrect time zone: '{0}'")]
    UnknownTimeZone(String),
    /// ALTER TABLE making a column NOT NULL over stored NULLs.
    #[error("Invalid use of NULL value")]
    InvalidUseOfNull,
    /// ALTER TABLE that would leave no column.
    #[error("You can't delete all columns with ALTER TABLE; use DROP TABLE instead")]
    CantDropAllColumns,
    /// DROP TABLE / DROP VIEW of one that does not exist.
    #[error("Unknown table '{0}'")]
    UnknownTableToDrop(String),
    #[error("Unknown column '{column}' in '{context}'")]
    UnknownColumn { column: String, context: String },
    /// A column name more than one table of a statement has (`context`: where it was named).
    #[error("Column '{column}' in {context} is ambiguous")]
    AmbiguousColumn { column: String, context: String },
    /// A multiple-table DELETE naming a table its FROM / USING does not have (`statement`:
    /// `MULTI DELETE`).
    #[error("Unknown table '{table}' in {statement}")]
    UnknownTableInStatement {
        table: String,
        statement: &'static str,
    },
    /// A clause a statement's form does not allow (MySQL's 1221: a multiple-table UPDATE
    /// with ORDER BY or LIMIT).
    #[error("Incorrect usage of {statement} and {clause}")]
    IncorrectUsage {
        statement: &'static str,
        clause: &'static str,
    },
    /// A target of UPDATE or DELETE that is no table of the database (a derived table).
    #[error("The target table {table} of the {statement} is not updatable")]
    NotUpdatable {
        table: String,
        statement: &'static str,
    },
    #[error("Access denied for user '{user}'@'{host}' (using password: {})", if *.using_password { "YES" } else { "NO" })]
    AccessDenied {
        user: String,
        host: String,
        using_password: bool,
    },
    /// The account lacks a global privilege an operation needs (the privilege's name).
    #[error("Access denied; you need (at least one of) the {0} privilege(s) for this operation")]
    PrivilegeRequired(String),
    /// The account may not use a workload group.
    #[error("Access denied; user '{user}' needs USAGE_PRIV on workload group '{group}' (GRANT USAGE_PRIV ON WORKLOAD GROUP '{group}' TO '{user}'@'%')")]
    WorkloadGroupDenied { user: String, group: String },
    /// The account lacks a privilege on a table (`command` names it: SELECT, INSERT, ..).
    #[error("{command} command denied to user '{user}'@'{host}' for table '{table}'")]
    TableAccessDenied {
        command: String,
        user: String,
        host: String,
        table: String,
    },
    /// The account lacks a privilege a database-level operation needs.
    #[error("Access denied for user '{user}'@'{host}' to database '{database}'")]
    DatabaseAccessDenied {
        user: String,
        host: String,
        database: String,
    },
    /// GRANT/REVOKE to an account that does not exist.
    #[error("Can't find any matching row in the user table for {0}")]
    UnknownGrantee(String),
    /// A role that does not exist.
    #[error("Unknown authorization ID `{0}`@`%`")]
    UnknownRole(String),
    /// SET ROLE of a role the account was not granted.
    #[error("`{role}`@`%` is not granted to {user}")]
    RoleNotGranted { role: String, user: String },
    /// A privilege that does not exist, or one that cannot be granted at that level.
    #[error("Illegal GRANT/REVOKE command: {0}")]
    IllegalGrant(String),
    #[error("No database selected")]
    NoDatabaseSelected,
    /// `max_connections` sessions are open.
    #[error("Too many connections")]
    TooManyConnections,
    /// A statement beyond one of the limits on its shape (nesting, UNION arms, width).
    #[error("Statement too complex: {0}")]
    StatementTooComplex(String),
    /// A prepared statement with more placeholders than the protocol can bind.
    #[error("Prepared statement contains too many placeholders ({0}; at most 65535)")]
    TooManyPlaceholders(usize),
    /// Arithmetic whose result does not fit its type (MySQL's ER_DATA_OUT_OF_RANGE).
    #[error("{0}")]
    NumericOverflow(String),
    #[error("Unknown system variable '{0}'")]
    UnknownVariable(String),
    /// SET of a variable that cannot be set (MySQL's ER_INCORRECT_GLOBAL_LOCAL_VAR).
    #[error("Variable '{0}' is a read only variable")]
    ReadOnlyVariable(String),
    #[error("Variable '{name}' can't be set to the value of '{value}'")]
    WrongVariableValue { name: String, value: String },
    #[error("Operation {operation} failed for {user}")]
    UserOperation { operation: String, user: String },
    /// A DDL statement that is well-formed SQL but describes an invalid table.
    #[error("{0}")]
    InvalidDdl(String),
    /// A value longer than its column holds: `max` counts `unit`s (characters for CHAR and
    /// VARCHAR, bytes for BINARY and VARBINARY, bits for BIT).
    #[error("Data too long for column '{column}' (at most {max} {unit})")]
    DataTooLong {
        column: String,
        max: u32,
        unit: &'static str,
    },
    #[error("Out of range value for column '{0}'")]
    OutOfRange(String),
    /// A value a strict INSERT or UPDATE cannot store as written, with MySQL's error for it and
    /// its message naming the column and row: 1264 (out of range), 1265 (data truncated), 1366
    /// (no number at all), as non-strict mode would have warned.
    #[error("{message}")]
    StoredValue { code: u16, message: String },
    /// A value for a JSON column that is not a JSON document (MySQL's 3140).
    #[error("Invalid JSON text: \"{reason}\" in value for column '{column}'.")]
    InvalidJson { column: String, reason: String },
    /// A value for an ARRAY, MAP or STRUCT column that does not read as one.
    #[error("Invalid {ty} value for column '{column}': {reason}")]
    InvalidNestedValue {
        column: String,
        ty: String,
        reason: String,
    },
    #[error("Column '{0}' cannot be null")]
    ColumnCannotBeNull(String),
    /// A row whose partition column value falls in no partition.
    #[error("no partition for value {value} of column {column}")]
    NoPartition { column: String, value: String },
    #[error("Unknown partition '{0}'")]
    UnknownPartition(String),
    /// A row of `INSERT .. PARTITION (p1, ..)` that falls in none of the named partitions.
    #[error("Found a row not matching the given partition set")]
    RowNotInPartitions,
    #[error("Duplicate partition name '{0}'")]
    DuplicatePartition(String),
    #[error("{0} is not supported")]
    NotSupported(String),
    /// `ON UPDATE CURRENT_TIMESTAMP` on a column that is no TIMESTAMP or DATETIME (1294).
    #[error("Invalid ON UPDATE clause for '{0}' column")]
    InvalidOnUpdate(String),
    /// `CREATE PROCEDURE` of a name the database already has (MySQL's 1304).
    #[error("PROCEDURE {0} already exists")]
    ProcedureExists(String),
    /// A procedure that does not exist (MySQL's 1305); the name as `db.name`.
    #[error("PROCEDURE {0} does not exist")]
    UnknownProcedure(String),
    /// `CALL p(..)` with another number of arguments than `p` has parameters (MySQL's 1318).
    #[error("Incorrect number of arguments for PROCEDURE {name}; expected {expected}, got {got}")]
    ProcedureArguments {
        name: String,
        expected: usize,
        got: usize,
    },
    /// A procedure that calls itself, directly or not (MySQL's 1456 under its default
    /// `max_sp_recursion_depth` of 0).
    #[error("Recursive limit {limit} (as set by the max_sp_recursion_depth variable) was exceeded for routine {name}")]
    ProcedureRecursion { name: String, limit: u64 },
    /// An error of a stored procedure's body with MySQL's code for it (1310 end-label without
    /// match, 1172 more than one row for SELECT .. INTO, 1329 no data for FETCH, 1339 CASE not
    /// found, 1414 OUT argument that is no variable, 1324-1326 cursors, ..).
    #[error("{message}")]
    Routine { code: u16, message: String },
    /// A Basalt error several partitions of a plan share (it cannot be moved out of the
    /// shared handle): its code and text, as the error itself had them.
    #[error("{message}")]
    Relayed { code: u16, message: String },
    /// A transaction's COMMIT found a table it wrote changed by another session's publish in a
    /// way its changes cannot be replayed on (MySQL's 1213, ER_LOCK_DEADLOCK); nothing of the
    /// transaction was published. The string says which table.
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    TransactionConflict(String),
    /// A load reused the label of a committed load in the same database.
    #[error("Label [{0}] has already been used")]
    LabelAlreadyExists(String),
    /// Bad arguments to a function, e.g. an unknown property of `local(...)`.
    #[error("Incorrect arguments to {function}: {message}")]
    WrongArguments { function: String, message: String },
    /// A file outside the directory the server may read loads from (`--allowed-load-dir`),
    /// like MySQL's `secure_file_priv`.
    #[error("The Basalt server is running with the --allowed-load-dir option so it cannot execute this statement: {0}")]
    FileAccessDenied(String),
    #[error("File '{0}' not found")]
    FileNotFound(String),
    /// Data that cannot be converted to a column's type.
    #[error("{0}")]
    InvalidData(String),
    /// Text stored into a DATE or DATETIME column that names no date (MySQL's 1292,
    /// "Incorrect date value: '..'").
    #[error("{0}")]
    IncorrectDateValue(String),
    /// Errors from query planning or execution.
    #[error("{0}")]
    Execution(String),
    /// A load would give a tablet more rowsets (versions) than allowed: compaction is behind.
    #[error("too many versions in tablet {tablet} ({versions} > {max}): compaction cannot keep up, retry later")]
    TooManyVersions {
        tablet: u64,
        versions: usize,
        max: usize,
    },
    /// EXECUTE / COM_STMT_* naming a statement this session has not prepared.
    #[error("Unknown prepared statement handler ({name}) given to {command}")]
    UnknownPreparedStatement { name: String, command: String },
    /// The session already holds `max_prepared_stmt_count` prepared statements.
    #[error("Can't create more than max_prepared_stmt_count statements (current value: {0})")]
    TooManyPreparedStatements(u64),
    /// A workload group statement with a bad property, name or combination.
    #[error("{0}")]
    InvalidWorkloadGroup(String),
    #[error("Can not find workload group {0}")]
    UnknownWorkloadGroup(String),
    /// The group runs `max_concurrency` queries and its queue is full.
    #[error("query waiting queue is full, queue length={0}")]
    QueueFull(usize),
    /// The query waited in its group's queue longer than `queue_timeout`.
    #[error("query queue timeout, timeout: {0} ms")]
    QueueTimeout(u64),
    /// The query waited longer than `queue_timeout` for its hard-limited group's memory.
    #[error("{0}")]
    MemoryQueueTimeout(String),
    /// KILL QUERY / KILL CONNECTION stopped the statement.
    #[error("Query execution was interrupted")]
    QueryInterrupted,
    /// A workload policy cancelled the statement.
    #[error("Query execution was interrupted: {0}")]
    QueryCancelled(String),
    /// The statement ran past its time limit (`query_timeout`, `insert_timeout`,
    /// `max_execution_time`) or planned past `nereids_timeout_second`.
    #[error("Query execution was interrupted, maximum statement execution time exceeded: {0}")]
    QueryTimeout(String),
    #[error("Unknown thread id: {0}")]
    UnknownThread(u64),
    /// SHOW QUERY PROFILE of a query whose profile is not kept.
    #[error("Unknown query profile '{0}': SHOW QUERY PROFILE lists the kept ones (statements run with SET enable_profile = true)")]
    UnknownQueryProfile(String),
    /// KILL of another user's session without the right.
    #[error("You are not owner of thread {0}")]
    NotThreadOwner(u64),
    #[error("storage error: {0}")]
    Storage(String),
    /// A read needs a tablet none of whose readable replicas is on a live backend, or a
    /// backend a query ran on stopped answering (Doris: "no queryable replica found").
    #[error("{0}")]
    BackendUnavailable(String),
    #[error("catalog error: {0}")]
    Catalog(String),
    /// A DDL statement's checks were made against metadata another statement has changed
    /// since (MySQL's ER_TABLE_DEF_CHANGED).
    #[error("Table definition has changed, please retry transaction: {0}")]
    ConcurrentDdl(String),
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A selected, ordered or HAVING column that is neither grouped, aggregated nor
    /// functionally dependent on the grouped columns (MySQL's ONLY_FULL_GROUP_BY).
    #[error("Column '{0}' is not in GROUP BY clause and is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by")]
    NotInGroupBy(String),
    /// A row would take a key another row has (ER_DUP_ENTRY): the key's value as MySQL shows
    /// it (key columns joined by '-') and the key's name.
    #[error("Duplicate entry '{entry}' for key '{key}'")]
    DuplicateEntry { entry: String, key: String },
    /// A scalar subquery (one that stands for a value) found more than one row.
    #[error("Subquery returns more than 1 row")]
    SubqueryReturnsManyRows,
    /// An aggregate where no query may compute it (ER_INVALID_GROUP_FUNC_USE): in a WHERE
    /// that cannot hand it to an outer query, or in GROUP BY.
    #[error("Invalid use of group function")]
    InvalidGroupFunction,
    /// An option where MySQL does not take it (ER_CANT_USE_OPTION_HERE): SQL_CALC_FOUND_ROWS
    /// anywhere but a statement's first SELECT.
    #[error("Incorrect usage/placement of '{0}'")]
    OptionPlacement(String),
    #[error("internal error: {0}")]
    Internal(String),
}

impl BasaltError {
    /// Builds a syntax error from a message, the SQL text and a 1-based line/column position.
    /// Line 0 means "no position known": the error points at the end of the statement.
    pub fn syntax_at(message: impl Into<String>, sql: &str, line: u64, column: u64) -> Self {
        let (line, column) = if line == 0 {
            let last = sql.lines().count().max(1) as u64;
            let width = sql.lines().last().map(|l| l.chars().count()).unwrap_or(0) as u64;
            (last, width + 1)
        } else {
            (line, column)
        };
        let near = text_near(sql, line, column);
        BasaltError::Syntax {
            message: message.into(),
            near,
            line: line.max(1),
        }
    }

    /// MySQL error number for this error.
    pub fn mysql_code(&self) -> u16 {
        match self {
            BasaltError::Syntax { .. } => 1064,
            BasaltError::ConcurrentDdl(_) => 1412,
            BasaltError::UnknownDatabase(_) => 1049,
            BasaltError::DatabaseExists(_) => 1007,
            BasaltError::DropMissingDatabase(_) => 1008,
            BasaltError::UnknownTable(_) => 1146,
            BasaltError::TableExists(_) => 1050,
            BasaltError::UnknownTableToDrop(_) => 1051,
            BasaltError::ViewColumnCount => 1353,
            BasaltError::NotInsertable(_) => 1471,
            BasaltError::ColumnNotUpdatable(_) => 1348,
            BasaltError::CheckOptionFailed(_) => 1369,
            BasaltError::JoinViewManyTables(_) => 1393,
            BasaltError::JoinViewNoFields(_) => 1394,
            BasaltError::JoinViewDelete(_) => 1395,
            BasaltError::ViewSelectVariable => 1351,
            BasaltError::ColumnCountMismatch(_) => 1136,
            BasaltError::NotAView(_) => 1347,
            BasaltError::DuplicateColumn(_) => 1060,
            BasaltError::NotUniqueTable(_) => 1066,
            BasaltError::UndefinedWindow(_) => 3579,
            BasaltError::WindowCycle => 3580,
            BasaltError::DuplicateWindow(_) => 3591,
            BasaltError::WindowChildPartitioning => 3581,
            BasaltError::WindowInheritsFrame(_) => 3582,
            BasaltError::WindowRedefinesOrder { .. } => 3583,
            BasaltError::RecursionDepth(_) => 3636,
            BasaltError::CantDropColumn(_) => 1091,
            BasaltError::CantDropAllColumns => 1090,
            BasaltError::KeyColumnMissing(_) => 1072,
            BasaltError::WrongIndexName(_) => 1280,
            BasaltError::DuplicateKeyName(_) => 1061,
            BasaltError::MultiplePrimaryKey => 1068,
            BasaltError::UnknownStorageEngine(_) => 1286,
            BasaltError::InvalidDefault(_) => 1067,
            BasaltError::AlterAlgorithm { .. } => 1845,
            BasaltError::WrongPrefixKey => 1089,
            BasaltError::AlterLock { .. } => 1846,
            BasaltError::KeyMissing { .. } => 1176,
            BasaltError::DuplicateForeignKey(_) => 1826,
            BasaltError::ForeignKeyMismatch(_) => 1239,
            BasaltError::ForeignKeyTableMissing(_) => 1824,
            BasaltError::ForeignKeyColumnMissing { .. } => 3734,
            BasaltError::ForeignKeyColumnDrop { .. } => 1828,
            BasaltError::IndexNeededByForeignKey(_) => 1553,
            BasaltError::GeneratedColumnValue { .. } => 3105,
            BasaltError::InvalidUseOfNull => 1138,
            BasaltError::UnknownTimeZone(_) => 1298,
            BasaltError::UnknownColumn { .. } => 1054,
            BasaltError::AmbiguousColumn { .. } => 1052,
            BasaltError::UnknownTableInStatement { .. } => 1109,
            BasaltError::IncorrectUsage { .. } => 1221,
            BasaltError::NotUpdatable { .. } => 1288,
            BasaltError::AccessDenied { .. } => 1045,
            BasaltError::NoDatabaseSelected => 1046,
            BasaltError::PrivilegeRequired(_) | BasaltError::WorkloadGroupDenied { .. } => 1227,
            BasaltError::TableAccessDenied { .. } => 1142,
            BasaltError::DatabaseAccessDenied { .. } => 1044,
            BasaltError::UnknownGrantee(_) => 1133,
            BasaltError::UnknownRole(_) => 3523,
            BasaltError::RoleNotGranted { .. } => 3530,
            BasaltError::IllegalGrant(_) => 1144,
            BasaltError::UnknownVariable(_) => 1193,
            BasaltError::WrongVariableValue { .. } => 1231,
            BasaltError::ReadOnlyVariable(_) => 1238,
            BasaltError::UserOperation { .. } => 1396,
            BasaltError::InvalidDdl(_) => 1105,
            BasaltError::ColumnCannotBeNull(_) => 1048,
            BasaltError::DataTooLong { .. } => 1406,
            BasaltError::OutOfRange(_) => 1264,
            BasaltError::StoredValue { code, .. } => *code,
            BasaltError::InvalidJson { .. } => 3140,
            BasaltError::InvalidNestedValue { .. } => 1366,
            BasaltError::NumericOverflow(_) => 1690,
            BasaltError::StatementTooComplex(_) => 1473,
            BasaltError::TooManyConnections => 1040,
            BasaltError::TooManyPlaceholders(_) => 1390,
            BasaltError::NoPartition { .. } => 1526,
            BasaltError::UnknownPartition(_) => 1735,
            BasaltError::RowNotInPartitions => 1748,
            BasaltError::DuplicatePartition(_) => 1517,
            BasaltError::NotSupported(_) => 1235,
            BasaltError::InvalidOnUpdate(_) => 1294,
            BasaltError::ProcedureExists(_) => 1304,
            BasaltError::UnknownProcedure(_) => 1305,
            BasaltError::ProcedureArguments { .. } => 1318,
            BasaltError::ProcedureRecursion { .. } => 1456,
            BasaltError::Routine { code, .. } => *code,
            BasaltError::Relayed { code, .. } => *code,
            BasaltError::InvalidData(_) => 1366,
            BasaltError::IncorrectDateValue(_) => 1292,
            // ER_TOO_MANY_CONCURRENT_TRXS: the server is out of room for more write work right
            // now; the client should retry later (Doris reports its E-235 as a generic error).
            BasaltError::TooManyVersions { .. } => 1637,
            BasaltError::TransactionConflict(_) => 1213,
            BasaltError::WrongArguments { .. } => 1210,
            BasaltError::UnknownPreparedStatement { .. } => 1243,
            BasaltError::TooManyPreparedStatements(_) => 1461,
            BasaltError::FileAccessDenied(_) => 1290,
            BasaltError::FileNotFound(_) => 29,
            BasaltError::QueryInterrupted | BasaltError::QueryCancelled(_) => 1317,
            BasaltError::QueryTimeout(_) => 3024,
            BasaltError::SubqueryReturnsManyRows => 1242,
            BasaltError::DuplicateEntry { .. } => 1062,
            BasaltError::InvalidGroupFunction => 1111,
            BasaltError::OptionPlacement(_) => 1234,
            BasaltError::NotInGroupBy(_) => 1055,
            BasaltError::UnknownThread(_) => 1094,
            BasaltError::NotThreadOwner(_) => 1095,
            BasaltError::InvalidWorkloadGroup(_)
            | BasaltError::UnknownWorkloadGroup(_)
            | BasaltError::UnknownQueryProfile(_)
            | BasaltError::QueueFull(_)
            | BasaltError::QueueTimeout(_)
            | BasaltError::MemoryQueueTimeout(_) => 1105,
            BasaltError::LabelAlreadyExists(_)
            | BasaltError::Execution(_)
            | BasaltError::Storage(_)
            | BasaltError::BackendUnavailable(_)
            | BasaltError::Catalog(_)
            | BasaltError::Io(_)
            | BasaltError::Internal(_) => 1105,
        }
    }

    /// Five-character SQLSTATE for this error.
    pub fn sqlstate(&self) -> &'static str {
        match self.mysql_code() {
            1055 | 1064 | 1136 | 1049 | 1193 | 1231 | 1227 | 1461 | 1142 | 1044 | 1133 | 1144
            | 1390 | 1090 | 1091 | 1304 | 1305 | 1318 | 1072 | 1280 | 1061 | 1176 | 1239 => "42000",
            1060 => "42S21",
            1172 | 1308 | 1309 | 1310 | 1313 | 1319 | 1324 | 1327 | 1407 | 1414 => "42000",
            1329 => "02000",
            1234 | 1068 | 1286 | 1067 | 1066 => "42000",
            1213 => "40001",
            1339 => "20000",
            1325 | 1326 => "24000",
            1048 | 1062 => "23000",
            1138 => "22004",
            1406 => "22001",
            3140 => "22032",
            1264 | 1690 => "22003",
            1292 => "22007",
            1265 => "01000",
            1045 => "28000",
            1040 => "08004",
            1046 => "3D000",
            1242 => "21000",
            1054 => "42S22",
            1050 => "42S01",
            1051 | 1109 | 1146 => "42S02",
            1052 => "23000",
            _ => "HY000",
        }
    }
}

/// Returns up to 80 characters of `sql` starting at the 1-based `line`/`column`.
fn text_near(sql: &str, line: u64, column: u64) -> String {
    let line_text = sql
        .lines()
        .nth(line.saturating_sub(1) as usize)
        .unwrap_or("");
    let skip_lines: usize = sql
        .lines()
        .take(line.saturating_sub(1) as usize)
        .map(|l| l.len() + 1)
        .sum();
    let col = column.saturating_sub(1) as usize;
    let start_in_line = line_text
        .char_indices()
        .nth(col)
        .map(|(i, _)| i)
        .unwrap_or(line_text.len());
    let start = (skip_lines + start_in_line).min(sql.len());
    sql[start..].chars().take(80).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn syntax_error_points_at_position() {
        let e = BasaltError::syntax_at("unexpected token", "SELEC 1 FROM t", 1, 1);
        assert_eq!(e.mysql_code(), 1064);
        assert_eq!(e.sqlstate(), "42000");
        assert!(
            e.to_string().contains("near 'SELEC 1 FROM t' at line 1"),
            "{e}"
        );
        let e = BasaltError::syntax_at("x", "SELECT *\nFROM t WHERE", 2, 14);
        assert!(e.to_string().ends_with("near '' at line 2"), "{e}");
        let e = BasaltError::syntax_at("x", "SELECT *\nFROM t WHERE", 2, 8);
        assert!(e.to_string().contains("near 'WHERE'"), "{e}");
    }

    #[test]
    fn codes_and_states() {
        assert_eq!(BasaltError::UnknownTable("d.t".into()).sqlstate(), "42S02");
        assert_eq!(BasaltError::UnknownTable("d.t".into()).mysql_code(), 1146);
        assert_eq!(BasaltError::UnknownDatabase("d".into()).mysql_code(), 1049);
        let denied = BasaltError::AccessDenied {
            user: "u".into(),
            host: "h".into(),
            using_password: true,
        };
        assert_eq!(denied.mysql_code(), 1045);
        assert_eq!(denied.sqlstate(), "28000");
        assert!(denied.to_string().ends_with("(using password: YES)"));
        let versions = BasaltError::TooManyVersions {
            tablet: 7,
            versions: 501,
            max: 500,
        };
        assert_eq!(versions.mysql_code(), 1637);
        assert_eq!(
            versions.to_string(),
            "too many versions in tablet 7 (501 > 500): compaction cannot keep up, retry later"
        );
    }
}
