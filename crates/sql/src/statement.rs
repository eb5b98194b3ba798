//! The typed statements Basalt understands: standard SQL (kept as `sqlparser` AST) and the Doris
//! and administration statements that Basalt parses itself.

use basalt_common::SqlType;
use sqlparser::ast;

/// One parsed statement.
#[derive(Debug, Clone)]
pub enum Statement {
    /// Any statement `sqlparser`'s MySQL dialect understands (queries, INSERT, SET, SHOW, ...).
    Standard(Box<ast::Statement>),
    CreateTable(Box<CreateTable>),
    /// `CREATE TABLE .. AS query` (also MySQL's `CREATE TABLE .. query` without AS).
    CreateTableAs(Box<CreateTableAs>),
    /// MySQL's `CREATE [OR REPLACE] | ALTER  [ALGORITHM = ..] [DEFINER = ..] [SQL SECURITY ..]
    /// VIEW v [(cols)] AS query [WITH [CASCADED | LOCAL] CHECK OPTION]`.
    View(Box<ViewDefinition>),
    /// MariaDB's `SET STATEMENT name = value [, ..] FOR statement`: `statement` run with the
    /// session variables set, which are put back after it.
    SetStatement {
        assignments: Vec<ast::SetAssignment>,
        statement: Box<Statement>,
    },
    /// `SET [GLOBAL | SESSION] TRANSACTION ISOLATION LEVEL .. | READ ONLY | READ WRITE`.
    SetTransaction {
        scope: TransactionScope,
        modes: Vec<ast::TransactionMode>,
    },
    /// MySQL's `CREATE TABLE [IF NOT EXISTS] t LIKE source`: an empty table with the source's
    /// definition.
    CreateTableLike {
        table: TableName,
        like: TableName,
        if_not_exists: bool,
    },
    /// `CREATE TEMPORARY TABLE ..`: the `CreateTable`, `CreateTableAs` or `CreateTableLike` it
    /// wraps, made the session's own (see the frontend's `temporary_tables`).
    CreateTemporaryTable(Box<Statement>),
    /// `ALTER TABLE t ADD PARTITION ...` / `DROP PARTITION ...`.
    AlterPartitions {
        table: TableName,
        op: PartitionOp,
    },
    /// Doris's `SYNC` (waits for followers' metadata; one frontend has none to wait for).
    Sync,
    /// MariaDB's `CREATE OR REPLACE [TEMPORARY] TABLE ..`: the table of the `CreateTable`,
    /// `CreateTableAs`, `CreateTableLike` or `CreateTemporaryTable` it wraps is dropped if it
    /// exists, then created.
    ReplaceTable(Box<Statement>),
    /// `SELECT .. INTO @a, @b`: the query (without its INTO clause) returns at most one row,
    /// whose values the user variables take.
    SelectIntoVariables {
        query: Box<ast::Query>,
        variables: Vec<String>,
    },
    /// `DO expr, ..`: the one-row query `SELECT expr, ..` is run and its row discarded.
    Do {
        query: Box<ast::Query>,
    },
    /// `ANALYZE TABLE t [(cols)] [WITH SYNC ..]`: Basalt keeps statistics with every segment,
    /// so there is nothing to collect; the table must exist.
    AnalyzeTable {
        table: TableName,
    },
    /// `ALTER TABLE t ..` changing columns, name, comment or properties.
    AlterTable {
        table: TableName,
        ops: Vec<AlterTableOp>,
        /// `ALTER TABLE IF EXISTS t` (MariaDB): a missing table is a note, not an error.
        if_exists: bool,
    },
    /// A SHOW statement of MySQL's tools answered from information_schema.
    ShowMetadata {
        kind: MetadataShow,
        /// `FROM db` / `IN db`.
        database: Option<String>,
        /// The table of `SHOW INDEX FROM t`.
        table: Option<TableName>,
        filter: Option<ShowFilter>,
    },
    /// `SHOW CREATE DATABASE [IF NOT EXISTS] db`.
    ShowCreateDatabase {
        database: String,
        if_not_exists: bool,
    },
    /// `ALTER TABLE t DISABLE KEYS` / `ENABLE KEYS`, which dumps wrap their INSERTs in: a
    /// table's sort key is maintained as rows are written, so there is nothing to defer.
    AlterTableKeys {
        table: TableName,
        enable: bool,
    },
    /// `LOAD DATA [LOCAL] INFILE ..`.
    LoadData(Box<LoadData>),
    /// Doris's `SHOW DATA` (the current database's tables) / `SHOW DATA FROM t`.
    ShowData {
        table: Option<TableName>,
    },
    /// `SHOW COUNT(*) WARNINGS` / `ERRORS`.
    ShowWarningCount,
    /// `START TRANSACTION WITH CONSISTENT SNAPSHOT`: the session reads every table as it was
    /// then, until the transaction ends.
    StartConsistentSnapshot,
    /// Doris's `BEGIN WITH LABEL l`: a transaction whose BEGIN, writes and COMMIT report the
    /// label `l`.
    BeginWithLabel {
        label: String,
    },
    /// Doris's `ADMIN SET [FRONTEND | ALL FRONTENDS] CONFIG ("key" = "value", ..)`.
    AdminSetFrontendConfig {
        settings: Vec<(String, String)>,
    },
    /// Doris's `ADMIN SHOW FRONTEND CONFIG [LIKE 'pattern']`.
    AdminShowFrontendConfig {
        like: Option<String>,
    },
    /// Doris's `CLEAN LABEL [l] FROM db`: forgets the database's load labels (or one), so they
    /// can be used again.
    CleanLabel {
        label: Option<String>,
        database: String,
    },
    /// Doris's `INSERT INTO t WITH LABEL l ..`: the INSERT (a standard statement), recorded as
    /// a load under label `l`.
    LabelledInsert {
        label: String,
        insert: Box<ast::Statement>,
    },
    /// `SHOW [TEMPORARY] PARTITIONS FROM t [WHERE ..] [ORDER BY ..] [LIMIT ..]`.
    ShowPartitions {
        table: TableName,
        /// Doris's temporary partitions instead of the formal ones.
        temporary: bool,
        rows: Box<ShowRows>,
    },
    /// `SHOW WARNINGS` / `SHOW ERRORS` (Basalt keeps no warnings yet: always empty).
    ShowWarnings,
    /// `SHOW QUERY PROFILE ['/' | '[/]query_id']`: the list of kept profiles, or one query's
    /// per-operator profile.
    ShowQueryProfile {
        query_id: Option<String>,
    },
    /// `SHOW TABLETS FROM t [PARTITION (p, ..)] [WHERE ..] [ORDER BY ..] [LIMIT ..]`.
    ShowTablets {
        table: TableName,
        partitions: Vec<String>,
        rows: Box<ShowRows>,
    },
    /// `SHOW BACKENDS`: the cluster's backends and their health.
    ShowBackends,
    /// Doris's `SHOW PROC '/path'`: the administrator's view of the cluster's state.
    ShowProc {
        path: String,
    },
    /// `ALTER SYSTEM {ADD | DROP | DROPP | DECOMMISSION} BACKEND "host:port" [, ...]` and
    /// `CANCEL DECOMMISSION BACKEND "host:port" [, ...]`.
    AlterSystemBackends {
        action: BackendAction,
        addresses: Vec<String>,
    },
    /// `SHOW DYNAMIC PARTITION TABLES [FROM db]`.
    ShowDynamicPartitionTables {
        database: Option<String>,
    },
    /// Doris's `SHOW TRANSACTION [FROM db] WHERE ID = n | LABEL = 'l' | STATUS = 's'`: the
    /// transactions of the database's loads.
    ShowTransaction {
        database: Option<String>,
        filter: TransactionFilter,
    },
    /// `SHOW [STREAM] LOAD [FROM db] [WHERE LABEL = 'l'] [LIMIT n]`.
    ShowLoad {
        stream: bool,
        database: Option<String>,
        label: Option<String>,
        limit: Option<u64>,
    },
    /// `CREATE USER [IF NOT EXISTS] u [IDENTIFIED BY 'p'] [DEFAULT ROLE 'r']` (Doris: the
    /// account is granted the role).
    CreateUser {
        user: UserName,
        password: Option<String>,
        role: Option<String>,
        if_not_exists: bool,
    },
    DropUser {
        users: Vec<UserName>,
        if_exists: bool,
    },
    /// `SET PASSWORD [FOR u] = PASSWORD('p')` or `= 'p'`.
    SetPassword {
        user: Option<UserName>,
        password: String,
    },
    /// `PREPARE name FROM 'text'` or `FROM @variable`.
    Prepare {
        name: String,
        source: PrepareSource,
    },
    /// `EXECUTE name [USING @a, @b, ...]`.
    Execute {
        name: String,
        using: Vec<String>,
    },
    /// `DEALLOCATE PREPARE name` / `DROP PREPARE name`.
    Deallocate {
        name: String,
    },
    /// `CREATE [UNIQUE | FULLTEXT] INDEX [IF NOT EXISTS] name ON t (cols) ..`: MySQL's other
    /// spelling of `ALTER TABLE t ADD INDEX` (the index is kept in the table's definition).
    CreateIndex {
        table: TableName,
        index: IndexDef,
        if_not_exists: bool,
    },
    /// `DROP INDEX [IF EXISTS] name ON t`.
    DropIndex {
        name: String,
        table: TableName,
        if_exists: bool,
    },
    /// `CREATE WORKLOAD GROUP [IF NOT EXISTS] g [PROPERTIES (..)]`.
    CreateWorkloadGroup {
        name: String,
        if_not_exists: bool,
        properties: Vec<(String, String)>,
    },
    /// `ALTER WORKLOAD GROUP g PROPERTIES (..)`.
    AlterWorkloadGroup {
        name: String,
        properties: Vec<(String, String)>,
    },
    /// `DROP WORKLOAD GROUP [IF EXISTS] g`.
    DropWorkloadGroup {
        name: String,
        if_exists: bool,
    },
    /// `SHOW WORKLOAD GROUPS [LIKE 'pattern']`.
    ShowWorkloadGroups {
        like: Option<String>,
    },
    /// `CREATE WORKLOAD POLICY [IF NOT EXISTS] p CONDITIONS(..) ACTIONS(..) [PROPERTIES(..)]`.
    CreateWorkloadPolicy {
        name: String,
        if_not_exists: bool,
        conditions: Vec<PolicyCondition>,
        actions: Vec<PolicyAction>,
        properties: Vec<(String, String)>,
    },
    /// `ALTER WORKLOAD POLICY p PROPERTIES(..)`.
    AlterWorkloadPolicy {
        name: String,
        properties: Vec<(String, String)>,
    },
    /// `DROP WORKLOAD POLICY [IF EXISTS] p`.
    DropWorkloadPolicy {
        name: String,
        if_exists: bool,
    },
    /// `GRANT USAGE_PRIV ON WORKLOAD GROUP 'g' TO 'u'@'h'` (or `REVOKE .. FROM`); `'%'` is
    /// every group.
    GrantWorkloadGroup {
        group: String,
        user: UserName,
        revoke: bool,
    },
    /// `SET PROPERTY [FOR 'u'] 'key' = 'value' [, ..]`.
    SetUserProperty {
        user: Option<String>,
        properties: Vec<(String, String)>,
    },
    /// `GRANT privs ON object TO grantees [WITH GRANT OPTION]` or `REVOKE privs ON object FROM
    /// grantees`. Privilege names are upper-cased as written (`SELECT`, `LOAD_PRIV`, `ALL
    /// PRIVILEGES`, `GRANT OPTION`); the frontend gives them meaning.
    Grant {
        privileges: Vec<String>,
        object: PrivilegeObject,
        grantees: Vec<Grantee>,
        with_grant_option: bool,
        revoke: bool,
    },
    /// `GRANT role, .. TO user, ..` / `REVOKE role, .. FROM user, ..`.
    GrantRole {
        roles: Vec<String>,
        users: Vec<UserName>,
        revoke: bool,
    },
    /// `CREATE ROLE [IF NOT EXISTS] r, ..`.
    CreateRole {
        names: Vec<String>,
        if_not_exists: bool,
    },
    /// `DROP ROLE [IF EXISTS] r, ..`.
    DropRole {
        names: Vec<String>,
        if_exists: bool,
    },
    /// `SHOW [ALL] GRANTS [FOR user | CURRENT_USER]` (`user` None: the current account).
    ShowGrants {
        user: Option<UserName>,
        all: bool,
    },
    /// `SHOW ROLES`.
    ShowRoles,
    /// `SET ROLE {DEFAULT | NONE | ALL [EXCEPT ..] | r, ..}`.
    SetRole {
        roles: RoleSelection,
    },
    /// `CREATE PROCEDURE ..`.
    CreateProcedure(Box<CreateProcedure>),
    /// `DROP {PROCEDURE|FUNCTION} [IF EXISTS] [db.]name`.
    DropProcedure {
        name: TableName,
        if_exists: bool,
        /// True for `DROP FUNCTION`.
        function: bool,
    },
    /// `CALL [db.]name[(args)]`.
    Call {
        name: TableName,
        args: Vec<ast::Expr>,
    },
    /// `SHOW CREATE {PROCEDURE|FUNCTION} [db.]name`.
    ShowCreateProcedure {
        name: TableName,
        /// True for `SHOW CREATE FUNCTION`.
        function: bool,
    },
}

/// How a procedure parameter passes its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParameterMode {
    In,
    Out,
    InOut,
}

/// One parameter of `CREATE PROCEDURE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcedureParam {
    pub mode: ParameterMode,
    pub name: String,
    /// The type as the parser prints it (`VARCHAR(255)`).
    pub data_type: String,
}

/// `CREATE [DEFINER = u] PROCEDURE [IF NOT EXISTS] name (params) [characteristics] body`, or
/// `CREATE [DEFINER = u] FUNCTION [IF NOT EXISTS] name (params) RETURNS type [characteristics]
/// body` (a stored function: `returns` is set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateProcedure {
    /// A stored function's return type as the parser prints it (`None`: a procedure).
    pub returns: Option<String>,
    /// The procedure's name; `table` holds the procedure name.
    pub name: TableName,
    pub if_not_exists: bool,
    /// `None`: the current user (also for `DEFINER = CURRENT_USER`).
    pub definer: Option<UserName>,
    pub parameters: Vec<ProcedureParam>,
    /// The body as written: `BEGIN .. END` or one statement.
    pub body: String,
    pub comment: String,
    pub deterministic: bool,
    /// `CONTAINS SQL` (the default), `NO SQL`, `READS SQL DATA` or `MODIFIES SQL DATA`.
    pub data_access: String,
    /// `DEFINER` (the default) or `INVOKER`.
    pub security: String,
}

/// What a GRANT or REVOKE applies to, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrivilegeObject {
    /// `*.*`
    Global,
    /// `*`: every table of the current database.
    CurrentDatabase,
    /// `db.*`
    Database(String),
    /// `db.tbl` or `tbl` (in the current database).
    Table {
        database: Option<String>,
        table: String,
    },
}

/// Who a GRANT or REVOKE of privileges applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grantee {
    User(UserName),
    Role(String),
}

/// The roles `SET ROLE` makes active.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleSelection {
    /// Every role granted (what a session starts with).
    Default,
    None,
    All {
        except: Vec<String>,
    },
    Only(Vec<String>),
}

/// One condition of a workload policy: `metric op value`, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyCondition {
    pub metric: String,
    pub op: String,
    pub value: String,
}

/// One action of a workload policy: its name and argument, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyAction {
    pub action: String,
    pub argument: Option<String>,
}

/// Where `PREPARE` takes its statement text from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrepareSource {
    Text(String),
    /// A user variable (name without the `@`).
    Variable(String),
}

/// A possibly database-qualified table name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableName {
    pub database: Option<String>,
    pub table: String,
}

/// `LOAD DATA [LOCAL] INFILE`: where the rows come from and how the file is laid out (MySQL's
/// defaults where a clause is absent: tab-separated fields, `\n` lines, `\` escapes).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadData {
    /// The client sends the file (`LOCAL`); otherwise it is a file on the server.
    pub local: bool,
    pub file: String,
    pub table: TableName,
    pub fields_terminated_by: Option<String>,
    pub enclosed_by: Option<String>,
    pub escaped_by: Option<String>,
    pub lines_terminated_by: Option<String>,
    pub lines_starting_by: Option<String>,
    pub ignore_lines: u64,
    /// The file's fields in order: column names, or names of `@variables` SET uses.
    pub columns: Vec<String>,
    /// `SET column = expression` (expressions as SQL text, `@` dropped from variables).
    pub set: Vec<(String, String)>,
}

/// The SHOW statements [`Statement::ShowMetadata`] stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataShow {
    TableStatus,
    Index,
    Engines,
    Plugins,
    Privileges,
    Triggers,
    Events,
    OpenTables,
    ProcedureStatus,
    FunctionStatus,
    MasterStatus,
    BinaryLogs,
    Profiles,
}

/// The filter of a SHOW statement.
#[derive(Debug, Clone, PartialEq)]
pub enum ShowFilter {
    Like(String),
    Where(Box<ast::Expr>),
}

/// A CREATE VIEW or ALTER VIEW statement (see [`Statement::View`]).
#[derive(Debug, Clone)]
pub struct ViewDefinition {
    /// ALTER VIEW: the view must exist.
    pub alter: bool,
    pub or_replace: bool,
    /// MariaDB's `CREATE VIEW IF NOT EXISTS`.
    pub if_not_exists: bool,
    pub name: ast::ObjectName,
    /// `(a, b)` after the name; empty: the query's own names.
    pub columns: Vec<String>,
    pub query: Box<ast::Query>,
    pub algorithm: Option<ast::CreateViewAlgorithm>,
    /// `DEFINER = u@h`; `None` also for `DEFINER = CURRENT_USER[()]` (the session's account).
    pub definer: Option<UserName>,
    pub security: Option<ast::CreateViewSecurity>,
    pub check_option: ViewCheckOption,
    /// Doris's `(a COMMENT 'x', ..)`: each column's comment ("" none), by position.
    pub column_comments: Vec<String>,
    /// Doris's `COMMENT 'x'` before AS.
    pub comment: Option<String>,
}

/// `WITH [CASCADED | LOCAL] CHECK OPTION` of a view (CASCADED when neither word is given).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ViewCheckOption {
    #[default]
    None,
    Local,
    Cascaded,
}

/// `'user'@'host'`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserName {
    pub user: String,
    pub host: String,
}

/// Doris data models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeysModel {
    Duplicate,
    Aggregate,
    Unique,
}

/// How an Aggregate-key table merges a value column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggKind {
    Sum,
    Min,
    Max,
    Replace,
    ReplaceIfNotNull,
    BitmapUnion,
    HllUnion,
    QuantileUnion,
}

/// A column's DEFAULT clause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultValue {
    Null,
    /// A literal, kept as text and converted to the column type by the catalog.
    Literal(String),
    CurrentTimestamp,
    /// MySQL's `DEFAULT (expr)` with an expression that is not a literal, as SQL text.
    Expression(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: SqlType,
    pub agg: Option<AggKind>,
    /// `Some(true)` for NULL, `Some(false)` for NOT NULL, `None` when not said.
    pub nullable: Option<bool>,
    pub default: Option<DefaultValue>,
    pub comment: Option<String>,
    pub auto_increment: bool,
    /// Doris's `KEY` attribute (`ADD COLUMN c INT KEY`): the column joins the key.
    pub key: bool,
    /// MySQL's column attribute `UNIQUE [KEY]`: a unique index on this column alone.
    pub unique: bool,
    /// `[GENERATED ALWAYS] AS (expr) [VIRTUAL | STORED]`.
    pub generated: Option<GeneratedColumn>,
    /// `ENUM('a', ..)` / `SET('a', ..)`: the values the column takes (its `ty` is the VARCHAR
    /// that holds them).
    pub allowed: Option<AllowedValues>,
    /// MySQL's `ON UPDATE CURRENT_TIMESTAMP` (TIMESTAMP and DATETIME only).
    pub on_update: bool,
}

/// A generated column's expression, as SQL text, and whether MySQL's DDL said STORED.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedColumn {
    pub expr: String,
    pub stored: bool,
}

/// The members of an ENUM or SET column type, as declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedValues {
    /// True for SET (a comma-separated subset), false for ENUM (one member).
    pub set: bool,
    pub values: Vec<String>,
}

/// One literal in a partition bound; `MaxValue` only appears in `LESS THAN (MAXVALUE)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionLiteral {
    Value(String),
    MaxValue,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RangeBound {
    /// `VALUES LESS THAN (upper)`: the lower bound is the previous partition's upper bound.
    LessThan(Vec<PartitionLiteral>),
    /// `VALUES [(lower), (upper))`.
    Fixed {
        lower: Vec<PartitionLiteral>,
        upper: Vec<PartitionLiteral>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionDef {
    Range {
        name: String,
        bound: RangeBound,
    },
    List {
        name: String,
        values: Vec<Vec<PartitionLiteral>>,
    },
}

impl PartitionDef {
    pub fn name(&self) -> &str {
        match self {
            PartitionDef::Range { name, .. } | PartitionDef::List { name, .. } => name,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionKind {
    Range,
    List,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionClause {
    pub kind: PartitionKind,
    pub columns: Vec<String>,
    pub partitions: Vec<PartitionDef>,
    /// Doris's `AUTO PARTITION BY ..`: a load creates the partitions its rows need.
    pub auto: bool,
    /// `AUTO PARTITION BY RANGE (date_trunc(col, 'unit'))`: the unit, lower case.
    pub date_trunc_unit: Option<String>,
}

/// `DISTRIBUTED BY HASH(cols) BUCKETS n` (or `RANDOM`, or `BUCKETS AUTO`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distribution {
    /// Empty for `RANDOM`.
    pub columns: Vec<String>,
    /// `None` for `BUCKETS AUTO` or an absent BUCKETS clause.
    pub buckets: Option<u32>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    pub name: TableName,
    pub if_not_exists: bool,
    pub columns: Vec<ColumnDef>,
    /// `DUPLICATE|AGGREGATE|UNIQUE KEY(cols)`.
    pub keys: Option<(KeysModel, Vec<String>)>,
    /// MySQL-style `PRIMARY KEY (cols)` in the column list.
    pub primary_key: Option<Vec<String>>,
    /// Secondary indexes (`INDEX`, `KEY`, `UNIQUE`, column-level `UNIQUE`, Doris's `INDEX ..
    /// USING INVERTED`), in declared order.
    pub indexes: Vec<IndexDef>,
    pub foreign_keys: Vec<ForeignKeyDef>,
    pub engine: Option<String>,
    pub comment: Option<String>,
    pub partition: Option<PartitionClause>,
    pub distribution: Option<Distribution>,
    pub properties: Vec<(String, String)>,
}

/// `CREATE TABLE [IF NOT EXISTS] name [(names) | (definitions)] [options] [AS] query`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateTableAs {
    /// The name, the options (keys, partitions, distribution, properties) and MySQL's column
    /// definitions (`columns`, empty when none are written).
    pub table: CreateTable,
    /// Doris's `(name, ..)`: new names for the query's columns, in order (empty: as the query
    /// names them).
    pub column_names: Vec<String>,
    pub query: Box<ast::Query>,
    /// MySQL's `IGNORE` or `REPLACE` before the query: what a row whose key is taken does.
    pub duplicates: Option<CtasDuplicates>,
}

/// `CREATE TABLE .. IGNORE | REPLACE SELECT`: a query row whose unique key an earlier row
/// holds is dropped (IGNORE) or replaces it (REPLACE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CtasDuplicates {
    Ignore,
    Replace,
}

/// Where `SET .. TRANSACTION` keeps its setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionScope {
    /// No scope word: the next transaction only.
    Next,
    Session,
    Global,
}

/// One change of `ALTER TABLE t change, change, ..`.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTableOp {
    /// `ADD [COLUMN] [IF NOT EXISTS] def [FIRST | AFTER c]` or `ADD [COLUMN] (def, ..)`
    /// (`if_not_exists`: MariaDB's; a column of the name is skipped with note 1060).
    AddColumns {
        columns: Vec<ColumnDef>,
        position: Option<ColumnPosition>,
        if_not_exists: bool,
    },
    /// `DROP [COLUMN] [IF EXISTS] c`.
    DropColumn { name: String, if_exists: bool },
    /// `MODIFY [COLUMN] def [FIRST | AFTER c]` (`from` is the column's name) or MySQL's
    /// `CHANGE [COLUMN] from def ..`, which may also rename it.
    /// `if_exists`: MariaDB's `MODIFY | CHANGE [COLUMN] IF EXISTS` (a missing column is
    /// skipped with note 1054).
    ModifyColumn {
        from: String,
        column: ColumnDef,
        position: Option<ColumnPosition>,
        if_exists: bool,
    },
    /// Doris's `MODIFY COLUMN c COMMENT '..'`.
    ModifyColumnComment { name: String, comment: String },
    /// `RENAME COLUMN a [TO] b`.
    RenameColumn { from: String, to: String },
    /// `RENAME [TO | AS] name`.
    Rename(String),
    /// `COMMENT [=] '..'` / Doris's `MODIFY COMMENT '..'`.
    Comment(String),
    /// Doris's `SET ("key" = "value", ..)`.
    SetProperties(Vec<(String, String)>),
    /// `ADD {INDEX | KEY | UNIQUE ..| FULLTEXT ..} ..` (`if_not_exists`: MariaDB's `ADD INDEX
    /// IF NOT EXISTS`).
    AddIndex {
        index: IndexDef,
        if_not_exists: bool,
    },
    /// `DROP {INDEX | KEY} [IF EXISTS] name`.
    DropIndex { name: String, if_exists: bool },
    /// `RENAME {INDEX | KEY} [IF EXISTS] a TO b`.
    RenameIndex {
        from: String,
        to: String,
        if_exists: bool,
    },
    /// `ADD [CONSTRAINT [name]] FOREIGN KEY ..`.
    AddForeignKey(ForeignKeyDef),
    /// `DROP FOREIGN KEY [IF EXISTS] name`.
    DropForeignKey { name: String, if_exists: bool },
    /// `ALTER [COLUMN] [IF EXISTS] c SET DEFAULT v` (`default` Some) or `.. DROP DEFAULT`.
    AlterColumnDefault {
        name: String,
        default: Option<DefaultValue>,
        if_exists: bool,
    },
    /// `ADD [CONSTRAINT [name]] PRIMARY KEY [IF NOT EXISTS] (cols)`.
    AddPrimaryKey {
        columns: Vec<String>,
        if_not_exists: bool,
    },
    /// `DROP PRIMARY KEY`.
    DropPrimaryKey,
    /// `DROP {CONSTRAINT | CHECK} [IF EXISTS] name`: a unique key or foreign key by its name.
    DropConstraint { name: String, if_exists: bool },
    /// MariaDB's `ADD [CONSTRAINT] FOREIGN KEY IF NOT EXISTS ..` (skipped, with a note, when the
    /// table has a foreign key of the name).
    AddForeignKeyIfNotExists(ForeignKeyDef),
    /// `ADD [CONSTRAINT [name]] CHECK (..)`: accepted with a warning, as CREATE TABLE accepts a
    /// CHECK (Basalt keeps and enforces none).
    AddCheck { name: Option<String> },
    /// One of MySQL's table options or clauses that have no effect on Basalt's storage.
    Option(AlterTableOption),
}

/// The table options and clauses ALTER TABLE accepts without a change to the table's stored
/// definition.
#[derive(Debug, Clone, PartialEq)]
pub enum AlterTableOption {
    /// `ENGINE [=] name`: every MySQL engine Basalt accepts is its one storage.
    Engine(String),
    /// `AUTO_INCREMENT [=] n`: the next generated value is at least `n`.
    AutoIncrement(u64),
    /// `ORDER BY cols`: rows stay in the table's sort-key order (warning 1105).
    OrderBy,
    /// `ALGORITHM [=] a` (upper case): a change that rewrites the rows is a copy.
    Algorithm(String),
    /// `LOCK [=] l` (upper case): loads wait while the rows are rewritten.
    Lock(String),
    /// `FORCE`, `ENABLE | DISABLE KEYS`, `[DEFAULT]
    /// CHARACTER SET | COLLATE ..`, `CONVERT TO CHARACTER SET ..` (Basalt stores UTF-8 and
    /// compares bytes) and the storage hints of [`crate::table_options`].
    NoEffect,
}

/// What kind of secondary index `INDEX`/`KEY` declares: MySQL's (plain, unique, full-text)
/// or Doris's (`USING INVERTED | BITMAP | NGRAM_BF`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexKind {
    Plain,
    Unique,
    Fulltext,
    Inverted,
    Bitmap,
    NgramBf,
}

/// One column of an index, with MySQL's prefix length (`name(10)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexColumn {
    pub name: String,
    pub length: Option<u32>,
}

/// A secondary index as declared (`name` None: MySQL names it after its first column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexDef {
    pub name: Option<String>,
    pub kind: IndexKind,
    pub columns: Vec<IndexColumn>,
    pub comment: Option<String>,
    /// Doris's `PROPERTIES ("parser" = ..)` of an inverted or n-gram index.
    pub properties: Vec<(String, String)>,
}

/// `ON DELETE` / `ON UPDATE` of a foreign key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferentialAction {
    Restrict,
    Cascade,
    SetNull,
    SetDefault,
    NoAction,
}

impl ReferentialAction {
    /// As MySQL writes it (SHOW CREATE TABLE, REFERENTIAL_CONSTRAINTS).
    pub fn sql(&self) -> &'static str {
        match self {
            ReferentialAction::Restrict => "RESTRICT",
            ReferentialAction::Cascade => "CASCADE",
            ReferentialAction::SetNull => "SET NULL",
            ReferentialAction::SetDefault => "SET DEFAULT",
            ReferentialAction::NoAction => "NO ACTION",
        }
    }
}

/// `[CONSTRAINT [name]] FOREIGN KEY [index_name] (cols) REFERENCES t (cols) [ON DELETE ..]
/// [ON UPDATE ..]` (`name`: the constraint's name, else the index name, else none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignKeyDef {
    pub name: Option<String>,
    pub columns: Vec<String>,
    pub table: TableName,
    pub referenced: Vec<String>,
    pub on_delete: Option<ReferentialAction>,
    pub on_update: Option<ReferentialAction>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnPosition {
    First,
    After(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionOp {
    /// `ADD [TEMPORARY] PARTITION ..`.
    Add { def: PartitionDef, temporary: bool },
    /// `DROP [TEMPORARY] PARTITION [IF EXISTS] p`.
    Drop {
        name: String,
        if_exists: bool,
        temporary: bool,
    },
    /// Doris's `REPLACE PARTITION (p, ..) WITH TEMPORARY PARTITION (tp, ..) [PROPERTIES (..)]`.
    Replace {
        formal: Vec<String>,
        temporary: Vec<String>,
        properties: Vec<(String, String)>,
    },
    /// Doris's `RENAME PARTITION old new`.
    Rename { from: String, to: String },
}

/// Which transactions `SHOW TRANSACTION` shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransactionFilter {
    Id(u64),
    Label(String),
    /// A status as Doris names it (`VISIBLE`, `ABORTED`, ..), in any letter case.
    Status(String),
}

/// What `ALTER SYSTEM .. BACKEND` does (Doris's verbs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendAction {
    Add,
    /// `DROP` (and Doris's older `DROPP`): remove a backend that holds no replicas.
    Drop,
    /// Move the backend's replicas to others, then remove it.
    Decommission,
    /// `CANCEL DECOMMISSION BACKEND`: keep it after all.
    CancelDecommission,
}

/// Doris's `[WHERE ..] [ORDER BY ..] [LIMIT n [OFFSET m]]` after a SHOW of its own (SHOW
/// PARTITIONS, SHOW TABLETS): applied to the rows it shows, by their column names.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShowRows {
    pub filter: Option<ast::Expr>,
    pub order_by: Vec<ast::OrderByExpr>,
    pub limit: Option<ast::Expr>,
    pub offset: Option<ast::Expr>,
}

impl ShowRows {
    /// No clause given: every row as shown.
    pub fn is_all(&self) -> bool {
        *self == ShowRows::default()
    }
}

impl std::fmt::Display for ShowRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(filter) = &self.filter {
            write!(f, " WHERE {filter}")?;
        }
        if !self.order_by.is_empty() {
            let keys: Vec<String> = self.order_by.iter().map(|o| o.to_string()).collect();
            write!(f, " ORDER BY {}", keys.join(", "))?;
        }
        if let Some(limit) = &self.limit {
            write!(f, " LIMIT {limit}")?;
        }
        if let Some(offset) = &self.offset {
            write!(f, " OFFSET {offset}")?;
        }
        Ok(())
    }
}
