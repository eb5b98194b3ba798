//! One client session: who it is, its current database, its variables, and the DataFusion
//! context (with Basalt's catalog, session functions and variable providers) its queries run in.

use crate::catalog_provider::{BasaltCatalogList, Services};
use crate::functions::session_functions;
use crate::planning_budget::{with_checkpoints, PlanningCheckpoint};
use crate::prepared::PreparedStatements;
use crate::variables::{SessionVariables, VarValue};
use basalt_common::df_error::to_df;
use basalt_common::BasaltError;
use basalt_load::local_files::{self, LocalFunction};
use basalt_query::ScanReports;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::ScalarValue;
use datafusion::config::ConfigOptions;
use datafusion::execution::context::{SessionConfig, SessionContext};
use datafusion::execution::runtime_env::RuntimeEnv;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::variable::{VarProvider, VarType};
use parking_lot::RwLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// Default schema DataFusion resolves unqualified names in while no database is selected.
pub(crate) const NO_DATABASE: &str = "(no database selected)";

/// Session facts shared with session functions and variable providers.
#[derive(Debug)]
pub struct SessionInfo {
    pub connection_id: u32,
    pub user: String,
    /// The client's address.
    pub host: String,
    /// The account it authenticated as and its active roles (what access checks read).
    pub(crate) account: crate::access::Account,
    database: RwLock<Option<String>>,
    last_insert_id: AtomicU64,
    /// The first AUTO_INCREMENT value the running INSERT generated.
    pub(crate) generated_ids: Arc<basalt_query::GeneratedIds>,
    pub vars: RwLock<SessionVariables>,
    /// The notes and warnings of the last statement.
    pub(crate) warnings: crate::warnings::Warnings,
    /// The tables as `START TRANSACTION WITH CONSISTENT SNAPSHOT` found them, while it lasts.
    pub(crate) snapshot: parking_lot::Mutex<Option<Arc<crate::read_snapshot::ReadSnapshot>>>,
    /// Whether a transaction is open (SERVER_STATUS_IN_TRANS).
    pub(crate) transaction: crate::transaction::TransactionState,
    /// ROW_COUNT(): the rows the previous statement affected.
    pub(crate) row_count: crate::row_count::RowCount,
    /// FOUND_ROWS(): the rows the last result set had (without LIMIT under SQL_CALC_FOUND_ROWS).
    pub(crate) found_rows: crate::found_rows::FoundRows,
    /// The stored procedures running and the definer they run as.
    pub(crate) routine: crate::procedures::RoutineContext,
    /// The session's temporary tables (dropped when it ends).
    pub(crate) temporary: crate::temporary_tables::TemporaryTables,
}

impl SessionInfo {
    pub fn database(&self) -> Option<String> {
        self.database.read().clone()
    }

    pub fn last_insert_id(&self) -> u64 {
        self.last_insert_id.load(Ordering::Relaxed)
    }
}

pub struct Session {
    pub(crate) info: Arc<SessionInfo>,
    pub(crate) ctx: SessionContext,
    pub(crate) scan_reports: Arc<ScanReports>,
    /// DataFusion's options as the session started, restored by COM_RESET_CONNECTION after
    /// `SET datafusion.*` changed them.
    initial_options: ConfigOptions,
    /// The `parallel_pipeline_task_num` last applied to `target_partitions` (0: none).
    applied_parallelism: AtomicUsize,
    /// Statements prepared by COM_STMT_PREPARE or PREPARE.
    pub(crate) prepared: parking_lot::Mutex<PreparedStatements>,
    /// This session's entry in the process list (removed when the session ends).
    pub(crate) process: Arc<crate::processes::Process>,
    processes: Arc<crate::processes::ProcessList>,
    catalog: Arc<dyn basalt_catalog::Catalog>,
    /// Where the session's temporary tables' files are removed from when it ends.
    storage: Arc<basalt_storage::StorageEngine>,
}

impl Drop for Session {
    fn drop(&mut self) {
        self.info
            .temporary
            .drop_all(self.catalog.as_ref(), &self.storage);
        self.processes.remove(self.info.connection_id);
        crate::named_locks::release_session_locks(self.info.connection_id);
    }
}

/// DataFusion's analyzer rules with Doris's COUNT(DISTINCT bitmap) and casts into nested types,
/// text meeting IPV4/IPV6 values, MySQL's implicit casts,
/// numbers beside dates, exact division and integer arithmetic in BIGINT before type coercion,
/// then integer arithmetic that fails on overflow as MySQL's does.
fn analyzer_rules(
    info: &Arc<SessionInfo>,
) -> Vec<Arc<dyn datafusion::optimizer::AnalyzerRule + Send + Sync>> {
    let mut rules = datafusion::optimizer::Analyzer::new().rules;
    rules.insert(
        0,
        Arc::new(crate::variable_literals::VariableLiterals {
            system: Arc::new(SystemVariables(info.clone())),
            user: Arc::new(UserVariables(info.clone())),
        }),
    );
    // CAST(x AS SIGNED) as written unless x is a DECIMAL or float, before the rules that
    // read casts of ENUM members and hex literals.
    rules.insert(1, Arc::new(basalt_functions::IntegralCastOperands));
    // Outer aggregates moved to their queries before anything types or rewrites them.
    rules.insert(2, Arc::new(basalt_query::OuterAggregates));
    // Full-text operators read indexed columns with their index's analyzer.
    rules.insert(3, Arc::new(basalt_query::FullTextIndexes));
    // ENUM/SET columns read as numbers where MySQL does, before any rule casts their text.
    rules.insert(4, Arc::new(basalt_query::EnumNumbers));
    // INTERSECT ALL / EXCEPT ALL count copies, while their joins are still the only ones of
    // their shape.
    rules.insert(5, Arc::new(basalt_query::SetOperationMultiplicity));
    let coercion = rules
        .iter()
        .position(|r| r.name() == "type_coercion")
        .unwrap_or(0);
    // Integer + - * in 64 bits, on the operands the rules below leave.
    rules.insert(coercion, Arc::new(basalt_functions::BigintArithmetic));
    rules.insert(coercion, Arc::new(basalt_functions::ExactDivision));
    rules.insert(coercion, Arc::new(basalt_functions::LikeEscapes));
    rules.insert(coercion, Arc::new(basalt_functions::BitValueNumbers));
    rules.insert(coercion, Arc::new(basalt_functions::TimeIntervals));
    // A TIME beside dates is a DATETIME, beside a number it reads the number as a TIME.
    rules.insert(coercion, Arc::new(basalt_functions::TimeBesideDates));
    rules.insert(coercion, Arc::new(basalt_functions::NumericDates));
    // Dates cast to numbers: MySQL's YYYYMMDDhhmmss numbers.
    rules.insert(coercion, Arc::new(basalt_functions::TemporalNumbers));
    // Signed integers CAST to UNSIGNED keep their bits (-2 is 18446744073709551614).
    rules.insert(coercion, Arc::new(basalt_functions::UnsignedCasts));
    // DECIMAL to BOOLEAN, BOOLEAN to dates (before the number-to-date rules above).
    rules.insert(coercion, Arc::new(basalt_functions::BooleanCasts));
    rules.insert(coercion, Arc::new(basalt_functions::ListReverse));
    rules.insert(coercion, Arc::new(basalt_functions::ImplicitCasts));
    rules.insert(coercion, Arc::new(basalt_functions::NestedCasts));
    rules.insert(
        coercion,
        Arc::new(basalt_functions::IpCoercion::before_type_coercion()),
    );
    rules.insert(
        coercion,
        Arc::new(basalt_functions::BitmapCountDistinct::default()),
    );
    // Booleans and JSON beside numbers, before any rule asks a comparison for its type.
    rules.insert(coercion, Arc::new(basalt_functions::MySqlComparisons));
    // Values chosen among mixed types (COALESCE, CASE, GREATEST, NULLIF) typed as MySQL types
    // them, before the rules above retype their comparisons and casts.
    rules.insert(coercion, Arc::new(basalt_functions::MixedResultTypes));
    // Quotients keep MySQL's digits inside arithmetic (after the exact division is planned).
    let coercion = rules
        .iter()
        .position(|r| r.name() == "type_coercion")
        .unwrap_or(0);
    rules.insert(coercion, Arc::new(basalt_functions::DivisionDigits));
    // Values chosen among a quotient and others, once `/` is MySQL's exact division.
    rules.insert(coercion + 1, Arc::new(basalt_functions::MixedQuotientTypes));
    // DATETIME values become MySQL's text, in the query's casts and those coercion added.
    let coerced = rules
        .iter()
        .position(|r| r.name() == "type_coercion")
        .map_or(rules.len(), |i| i + 1);
    rules.insert(coerced, Arc::new(basalt_functions::DatetimeTextCasts));
    // TIME values (signed spans past 24 hours) converted MySQL's way, not as times of day.
    rules.insert(coerced, Arc::new(basalt_functions::SignedTimeCasts));
    // Text that coercion casts to a date read MySQL's way (NULL for no date).
    rules.insert(coerced, Arc::new(basalt_functions::CoercedTextDates));
    // Numbers that coercion casts to a date too (YYYYMMDD[hhmmss], not time since 1970).
    rules.insert(coerced, Arc::new(basalt_functions::CoercedNumberDates));
    // First after coercion: BOOLEAN values as 1 or 0 (as text, dates, decimals) in the casts
    // coercion added too, before the rules above give number casts their meaning.
    rules.insert(coerced, Arc::new(basalt_functions::BooleanCasts));
    // Casts of addresses to text, the query's and those coercion added.
    let after_coercion = rules
        .iter()
        .position(|r| r.name() == "type_coercion")
        .map_or(rules.len(), |i| i + 1);
    rules.insert(
        after_coercion,
        Arc::new(basalt_functions::IpCoercion::after_type_coercion()),
    );
    // Numbers, dates and booleans cast to bytes are their text's bytes, before the rules above
    // write that text MySQL's way.
    rules.insert(after_coercion, Arc::new(basalt_functions::BinaryCasts));
    rules.push(Arc::new(basalt_functions::CheckedIntegerArithmetic));
    // Comparisons of a rounding cast stay as written (the simplifier would move the cast).
    rules.push(Arc::new(basalt_functions::LossyCastComparisons));
    // ASOF joins planned as ranked joins, their conditions typed.
    rules.push(Arc::new(basalt_functions::AsofJoins));
    rules.push(Arc::new(basalt_query::ValuesWithSubqueries));
    rules.push(Arc::new(basalt_query::SingleRowScalarSubqueries));
    rules.push(Arc::new(basalt_query::ApplyRefusedSubqueries));
    with_checkpoints(rules, Arc::new(PlanningCheckpoint))
}

/// DataFusion's optimizer rules, then per-row evaluation of the subqueries they could not
/// decorrelate, each after a planning checkpoint.
fn optimizer_rules() -> Vec<Arc<dyn datafusion::optimizer::OptimizerRule + Send + Sync>> {
    let mut rules = datafusion::optimizer::Optimizer::new().rules;
    // Right after the decorrelation rules: a subquery they leave must not meet the filter
    // push-down, which moves it by its (outer-reference-blind) columns.
    let decorrelated = rules
        .iter()
        .rposition(|r| r.name().contains("decorrelate") || r.name().contains("subquery"))
        .map_or(rules.len(), |i| i + 1);
    rules.insert(
        decorrelated,
        Arc::new(basalt_query::ApplyRemainingSubqueries),
    );
    // Join order from estimated cardinalities, once filters are pushed down and before the
    // projections are pruned again.
    let projections = rules
        .iter()
        .position(|r| r.name() == "optimize_projections")
        .unwrap_or(rules.len());
    rules.insert(projections, Arc::new(basalt_query::ReorderJoins));
    // Right after constant folding, which drops nested literals' field metadata.
    let folded = rules
        .iter()
        .position(|r| r.name() == "simplify_expressions")
        .map_or(rules.len(), |i| i + 1);
    rules.insert(folded, Arc::new(basalt_query::RetypeNestedLiterals));
    // Last: sorts above outer joins keep their keys (the nullable side's constants are none).
    rules.push(Arc::new(basalt_functions::OuterJoinSortKeys));
    // A UNION's columns nullable where a branch's became so (after decorrelation).
    rules.push(Arc::new(basalt_query::UnionNullability));
    with_checkpoints(rules, Arc::new(PlanningCheckpoint))
}

/// DataFusion's physical optimizer rules and Basalt's, each after a planning checkpoint. On a
/// cluster's frontend the LIKE kernel is left out (its expressions do not travel in plan
/// fragments; backends apply it to the fragments they run) and single-task operators get
/// gathered inputs (their scans stay on the backends).
fn physical_optimizer_rules(
    cluster: bool,
) -> Vec<Arc<dyn datafusion::physical_optimizer::PhysicalOptimizerRule + Send + Sync>> {
    let mut rules = datafusion::physical_optimizer::optimizer::PhysicalOptimizer::new().rules;
    rules.push(Arc::new(basalt_query::RecursionDepth));
    if cluster {
        rules.push(Arc::new(basalt_dist::GatherSingleTaskInputs));
        // Reversed LAG/LEAD lose their direction in plan fragments' wire form.
        rules.push(Arc::new(basalt_dist::PlainWindowFunctions));
        // The plan is checked again after the gathering.
        rules.push(Arc::new(
            datafusion::physical_optimizer::sanity_checker::SanityCheckPlan::new(),
        ));
    } else {
        rules.push(Arc::new(basalt_query::BinaryJsonColumns));
        rules.push(Arc::new(basalt_query::FastLikeRule));
    }
    with_checkpoints(rules, Arc::new(PlanningCheckpoint))
}

impl Session {
    pub(crate) fn new(
        connection_id: u32,
        user: &str,
        host: &str,
        vars: SessionVariables,
        services: Services,
        runtime: Arc<RuntimeEnv>,
        target_partitions: usize,
    ) -> Session {
        let info = Arc::new(SessionInfo {
            connection_id,
            user: user.to_string(),
            host: host.to_string(),
            account: crate::access::Account::resolve(services.catalog.as_ref(), user, host),
            database: RwLock::new(None),
            last_insert_id: AtomicU64::new(0),
            generated_ids: Default::default(),
            vars: RwLock::new(vars),
            warnings: Default::default(),
            snapshot: Default::default(),
            transaction: Default::default(),
            row_count: Default::default(),
            found_rows: Default::default(),
            routine: Default::default(),
            temporary: Default::default(),
        });
        let load_dir = services.load_dir.clone();
        let cluster = services.cluster.clone();
        let local_gate = crate::access::local_files_gate(services.catalog.clone(), info.clone());
        let processes = services.processes.clone();
        let catalog = services.catalog.clone();
        let storage = services.storage.clone();
        let process = processes.register(info.clone());
        let catalog_list = Arc::new(BasaltCatalogList::new(services, info.clone()));
        let scan_reports = Arc::new(ScanReports::default());
        let mut config = SessionConfig::new()
            .with_default_catalog_and_schema("def", NO_DATABASE)
            .with_create_default_catalog_and_schema(false)
            .with_information_schema(false)
            .with_target_partitions(target_partitions)
            .with_option_extension(basalt_functions::MySqlOptions::default())
            .with_extension(scan_reports.clone());
        {
            let opts = config.options_mut();
            opts.sql_parser.dialect = datafusion::config::Dialect::MySQL;
            // MySQL reads 1.5 as an exact DECIMAL literal, not a double.
            opts.sql_parser.parse_float_as_decimal = true;
            // MySQL (and Doris) sort NULL below every value: first in ASC, last in DESC.
            opts.sql_parser.default_null_ordering = "nulls_min".to_string();
            // Filters inside the Parquet decoder (late materialization) stay off, as in
            // DataFusion's defaults: on TPC-H SF1 they cost 12% of the geometric mean (a
            // join's runtime filter probed its hash table row by row during the scan, then
            // the join probed it again). Row-group and page pruning work either way;
            // `SET datafusion.execution.parquet.pushdown_filters = true` turns them on.
        }
        let mut builder = SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(runtime)
            .with_default_features();
        // SUBSTRING/SUBSTR of a number plans before DataFusion's own planner refuses it; so do
        // the JSON operators -> and ->>, and subscripts of VARIANT values (`v['a']`).
        if let Some(planners) = builder.expr_planners() {
            planners.insert(0, Arc::new(basalt_functions::TextSubstringPlanner));
            planners.insert(0, Arc::new(basalt_functions::JsonOperatorPlanner));
            planners.insert(0, Arc::new(basalt_functions::VariantSubscriptPlanner));
        }
        let builder = builder
            .with_catalog_list(catalog_list)
            .with_analyzer_rules(analyzer_rules(&info))
            .with_optimizer_rules(optimizer_rules())
            .with_physical_optimizer_rules(physical_optimizer_rules(cluster.is_some()))
            .with_query_planner(Arc::new(basalt_query::BasaltQueryPlanner));
        let builder = match &cluster {
            None => builder,
            Some(cluster) => basalt_dist::distributed_session(builder, cluster),
        };
        let state = builder.build();
        let initial_options = state.config().options().as_ref().clone();
        let ctx = SessionContext::new_with_state(state);
        for f in session_functions(&info) {
            ctx.register_udf(f);
        }
        for f in crate::named_locks::functions(&info) {
            ctx.register_udf(f);
        }
        ctx.register_udf(crate::procedures::stored_function_call(&info));
        // Doris's BITMAP, HLL and statistics functions (basalt-functions), built once per
        // process; they replace DataFusion's built-ins of the same names.
        basalt_functions::register_all(&ctx);
        // Aggregates of a subquery's WHERE, kept for the outer query (where_aggregates).
        let aggregates = ctx.state().aggregate_functions().clone();
        ctx.register_udf(basalt_query::outer_aggregate_call(aggregates));
        {
            use datafusion::execution::FunctionRegistry;
            let planner = Arc::new(basalt_functions::BitValueNumbersPlanner);
            let _ = ctx.state_ref().write().register_expr_planner(planner);
            let planner = Arc::new(basalt_functions::NumericDatesPlanner);
            let _ = ctx.state_ref().write().register_expr_planner(planner);
            let planner = Arc::new(basalt_functions::TimeBesideDatesPlanner);
            let _ = ctx.state_ref().write().register_expr_planner(planner);
            let planner = Arc::new(basalt_functions::StringArithmeticPlanner);
            let _ = ctx.state_ref().write().register_expr_planner(planner);
            let planner = Arc::new(basalt_functions::ComparisonsPlanner);
            let _ = ctx.state_ref().write().register_expr_planner(planner);
        }
        ctx.register_udtf(
            crate::numbers_table::NAME,
            Arc::new(crate::numbers_table::NumbersFunction),
        );
        ctx.register_udtf(
            local_files::NAME,
            Arc::new(LocalFunction::new(load_dir, local_gate)),
        );
        ctx.register_variable(VarType::System, Arc::new(SystemVariables(info.clone())));
        ctx.register_variable(VarType::UserDefined, Arc::new(UserVariables(info.clone())));
        Session {
            info,
            ctx,
            scan_reports,
            initial_options,
            applied_parallelism: AtomicUsize::new(0),
            prepared: parking_lot::Mutex::new(PreparedStatements::default()),
            process,
            processes,
            catalog,
            storage,
        }
    }

    /// Cancelled when this session's connection is killed (KILL CONNECTION).
    pub fn killed(&self) -> tokio_util::sync::CancellationToken {
        self.process.connection_token()
    }

    pub fn connection_id(&self) -> u32 {
        self.info.connection_id
    }

    /// Notes and warnings of the last statement (the warning count of its OK packet).
    pub fn warning_count(&self) -> u16 {
        self.info.warnings.count().min(u16::MAX as usize) as u16
    }

    pub fn user(&self) -> &str {
        &self.info.user
    }

    pub fn host(&self) -> &str {
        &self.info.host
    }

    pub fn database(&self) -> Option<String> {
        self.info.database()
    }

    /// What this session may do now (its account's grants and its active roles').
    pub(crate) fn access(&self) -> crate::access::Access {
        crate::access::access(self.catalog.as_ref(), &self.info)
    }

    /// Switches the current database (the caller checked it exists).
    pub(crate) fn set_database(&self, db: Option<String>) {
        let schema = db.clone().unwrap_or_else(|| NO_DATABASE.to_string());
        self.ctx
            .state_ref()
            .write()
            .config_mut()
            .options_mut()
            .catalog
            .default_schema = schema;
        *self.info.database.write() = db;
    }

    pub(crate) fn set_last_insert_id(&self, id: u64) {
        self.info.last_insert_id.store(id, Ordering::Relaxed);
    }

    /// True unless `enable_short_circuit_query` is off.
    /// `SET enable_profile = true`: keep a per-operator profile of each query.
    pub(crate) fn profile_enabled(&self) -> bool {
        matches!(
            self.info.vars.read().get("enable_profile"),
            Ok(VarValue::Int(v)) if v != 0
        )
    }

    pub(crate) fn short_circuit_enabled(&self) -> bool {
        // A point query reads the newest version; a consistent snapshot must not, nor a
        // transaction that staged writes (they are not in the published version).
        self.info.snapshot.lock().is_none()
            && self.info.transaction.staged_writes().is_none()
            && !matches!(
                self.info.vars.read().get("enable_short_circuit_query"),
                Ok(VarValue::Int(0))
            )
    }

    /// A transaction is open: BEGIN, or a write with autocommit off, not yet committed.
    pub fn in_transaction(&self) -> bool {
        self.info.transaction.is_open()
    }

    pub fn autocommit(&self) -> bool {
        matches!(
            self.info.vars.read().get("autocommit"),
            Ok(VarValue::Int(1))
        )
    }

    /// Whether `name` (lower case) is an aggregate function of this session.
    pub(crate) fn is_aggregate(&self, name: &str) -> bool {
        use datafusion::execution::FunctionRegistry;
        self.ctx.udaf(name).is_ok()
    }

    /// Copies the session variables Basalt's planner rules and functions read
    /// (`div_precision_increment`, `disable_join_reorder`, `time_zone`,
    /// `block_encryption_mode`) into the planner's options; called before a statement is planned.
    pub(crate) fn sync_planner_options(&self) {
        use basalt_functions::MySqlOptions;
        let increment = match self.variables().get("div_precision_increment") {
            Ok(VarValue::Int(n)) => n.clamp(0, 30) as u8,
            _ => 4,
        };
        let no_reorder = matches!(
            self.variables().get("disable_join_reorder"),
            Ok(VarValue::Int(n)) if n != 0
        );
        let block_mode = match self.variables().get("block_encryption_mode") {
            Ok(VarValue::Str(mode)) => mode,
            _ => String::new(),
        };
        let recursion_depth = match self.variables().get("cte_max_recursion_depth") {
            Ok(VarValue::Int(n)) => n.clamp(0, u32::MAX as i64) as u64,
            _ => 1000,
        };
        let current = self
            .ctx
            .state_ref()
            .read()
            .config()
            .options()
            .extensions
            .get::<MySqlOptions>()
            .map(|o| {
                (
                    o.div_precision_increment,
                    o.disable_join_reorder,
                    o.time_zone.clone(),
                    o.routine_depth,
                    o.block_encryption_mode.clone(),
                    o.cte_max_recursion_depth,
                )
            });
        self.sync_parallelism();
        let zone = self.time_zone();
        let depth = self.info.routine.depth();
        let wanted = (
            increment,
            no_reorder,
            zone.clone(),
            depth,
            block_mode.clone(),
            recursion_depth,
        );
        if current.as_ref() != Some(&wanted) {
            let state_ref = self.ctx.state_ref();
            let mut state = state_ref.write();
            let extensions = &mut state.config_mut().options_mut().extensions;
            if extensions.get::<MySqlOptions>().is_none() {
                extensions.insert(MySqlOptions::default());
            }
            if let Some(o) = extensions.get_mut::<MySqlOptions>() {
                o.div_precision_increment = increment;
                o.disable_join_reorder = no_reorder;
                o.time_zone = zone;
                o.routine_depth = depth;
                o.block_encryption_mode = block_mode;
                o.cte_max_recursion_depth = recursion_depth;
            }
        }
    }

    /// `parallel_pipeline_task_num` > 0 sets how many partitions a query runs in (DataFusion's
    /// `target_partitions`); 0 leaves the server's choice (one per core), restored when the
    /// variable goes back to 0.
    fn sync_parallelism(&self) {
        let wanted = match self.variables().get("parallel_pipeline_task_num") {
            Ok(VarValue::Int(n)) if n > 0 => n.min(1024) as usize,
            _ => 0,
        };
        let applied = self.applied_parallelism.swap(wanted, Ordering::Relaxed);
        if wanted == applied {
            return;
        }
        let partitions = match wanted {
            0 => self.initial_options.execution.target_partitions,
            n => n,
        };
        let state_ref = self.ctx.state_ref();
        let mut state = state_ref.write();
        state.config_mut().options_mut().execution.target_partitions = partitions;
    }

    /// `@@exec_mem_limit`: the bytes one query may hold (0 or less: no limit of its own).
    pub fn exec_mem_limit(&self) -> usize {
        match self.variables().get("exec_mem_limit") {
            Ok(VarValue::Int(n)) if n > 0 => n as usize,
            _ => 0,
        }
    }

    /// What the statement rewrite reads of this session (`time_zone`, `sql_mode`).
    pub(crate) fn sql_settings(&self) -> crate::mysql_compat::SqlSettings {
        let sql_mode = self
            .variables()
            .get("sql_mode")
            .map(|v| v.as_text())
            .unwrap_or_default();
        // Doris's default, 2147483646, is no limit any result reaches.
        let group_concat_max_len = match self.variables().get("group_concat_max_len") {
            Ok(VarValue::Int(n)) if n < 2_147_483_646 => Some(n.max(4) as u64),
            _ => None,
        };
        crate::mysql_compat::SqlSettings {
            table_name_case: self.name_case(),
            group_concat_max_len,
            ..crate::mysql_compat::SqlSettings::new(&self.time_zone(), &sql_mode)
        }
    }

    /// `lower_case_table_names`: how database and table names keep and compare their case.
    pub(crate) fn name_case(&self) -> basalt_common::TableNameCase {
        self.catalog.table_name_case()
    }

    /// A database or table name as a statement writes it, as the catalog stores it (folded to
    /// lower case under `lower_case_table_names` = 1, else as written).
    pub(crate) fn stored_name(&self, name: &str) -> String {
        self.name_case().stored(name)
    }

    /// False under `sql_mode` NO_BACKSLASH_ESCAPES: `\` is an ordinary character in the
    /// session's string literals (and the server says so in its status flags).
    pub fn backslash_escapes(&self) -> bool {
        self.sql_syntax().backslash_escapes
    }

    /// How this session's `sql_mode` parses text (string escapes, `||`).
    pub fn sql_syntax(&self) -> basalt_sql::SqlSyntax {
        let sql_mode = self
            .variables()
            .get("sql_mode")
            .map(|v| v.as_text())
            .unwrap_or_default();
        basalt_sql::SqlSyntax::from_sql_mode(&sql_mode)
    }

    /// `@@time_zone` (`SYSTEM`, an offset or a zone name).
    pub fn time_zone(&self) -> String {
        self.variables()
            .get("time_zone")
            .map(|v| v.as_text())
            .unwrap_or_else(|_| "SYSTEM".into())
    }

    pub fn variables(&self) -> parking_lot::RwLockReadGuard<'_, SessionVariables> {
        self.info.vars.read()
    }

    /// COM_RESET_CONNECTION (also drops the session's temporary tables, as MySQL does).
    pub fn reset(&self) {
        self.prepared.lock().clear();
        crate::transaction::end(self);
        self.info
            .temporary
            .drop_all(self.catalog.as_ref(), &self.storage);
        self.info.vars.write().reset();
        self.set_last_insert_id(0);
        let state_ref = self.ctx.state_ref();
        let mut state = state_ref.write();
        let options = state.config_mut().options_mut();
        let schema = std::mem::take(&mut options.catalog.default_schema);
        *options = self.initial_options.clone();
        options.catalog.default_schema = schema;
    }
}

/// Splits DataFusion's variable path into (global?, name): `@@x`, `@@session.x`, `@@global.x`.
fn system_variable_name(names: &[String]) -> (bool, String) {
    let first = names
        .first()
        .map(|s| s.trim_start_matches('@').to_ascii_lowercase())
        .unwrap_or_default();
    if names.len() >= 2 && matches!(first.as_str(), "session" | "local" | "global") {
        (first == "global", names[1..].join(".").to_ascii_lowercase())
    } else {
        (
            false,
            names.join(".").trim_start_matches('@').to_ascii_lowercase(),
        )
    }
}

fn to_scalar(v: VarValue) -> ScalarValue {
    match v {
        VarValue::Int(i) => ScalarValue::Int64(Some(i)),
        other => ScalarValue::Utf8(Some(other.as_text())),
    }
}

#[derive(Debug)]
struct SystemVariables(Arc<SessionInfo>);

impl VarProvider for SystemVariables {
    fn get_value(&self, var_names: Vec<String>) -> datafusion::common::Result<ScalarValue> {
        let (global, name) = system_variable_name(&var_names);
        if let Some(count) = diagnostics_count(&self.0, &name) {
            return Ok(ScalarValue::Int64(Some(count)));
        }
        let vars = self.0.vars.read();
        if name == crate::session_clock::NAME {
            return Ok(crate::session_clock::seconds(&vars));
        }
        let v = if global {
            vars.get_global(&name)
        } else {
            vars.get(&name)
        };
        v.map(to_scalar).map_err(to_df)
    }

    fn get_type(&self, var_names: &[String]) -> Option<DataType> {
        let (global, name) = system_variable_name(var_names);
        if diagnostics_count(&self.0, &name).is_some() {
            return Some(DataType::Int64);
        }
        if name == crate::session_clock::NAME {
            use crate::session_clock::{PRECISION, SCALE};
            return Some(DataType::Decimal128(PRECISION, SCALE));
        }
        let vars = self.0.vars.read();
        let v = if global {
            vars.get_global(&name)
        } else {
            vars.get(&name)
        };
        Some(match v {
            Ok(VarValue::Int(_)) => DataType::Int64,
            // Unknown names plan as text and fail with 1193 when evaluated.
            _ => DataType::Utf8,
        })
    }
}

/// `@@warning_count` and `@@error_count`: read from the session's diagnostics area.
fn diagnostics_count(info: &SessionInfo, name: &str) -> Option<i64> {
    match name {
        "warning_count" => Some(info.warnings.count() as i64),
        // A failed statement's error reaches the client in its ERR packet; none is kept.
        "error_count" => Some(0),
        _ => None,
    }
}

#[derive(Debug)]
struct UserVariables(Arc<SessionInfo>);

impl VarProvider for UserVariables {
    fn get_value(&self, var_names: Vec<String>) -> datafusion::common::Result<ScalarValue> {
        let name = var_names.join(".");
        let name = name.trim_start_matches('@');
        Ok(match self.0.vars.read().get_user(name) {
            Some(v) => crate::user_variables::to_scalar(v),
            None => ScalarValue::Utf8(None),
        })
    }

    fn get_type(&self, var_names: &[String]) -> Option<DataType> {
        let name = var_names.join(".");
        let name = name.trim_start_matches('@');
        Some(crate::user_variables::data_type(
            self.0.vars.read().get_user(name).as_ref(),
        ))
    }
}

/// Errors a session reports when it has no current database.
pub(crate) fn require_database(session: &Session) -> Result<String, BasaltError> {
    session.database().ok_or(BasaltError::NoDatabaseSelected)
}
