//! AVG of DATE, DATETIME and TIME values, as MySQL averages them: their numbers
//! (`AVG(DATE '2020-01-01')` is 20200101). DataFusion's AVG refuses such arguments while the
//! statement is planned, before [`crate::TemporalNumbers`] could turn them into numbers, so
//! Basalt's `avg` takes them as they are while planned and is DataFusion's AVG otherwise.

use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::Result;
use datafusion::functions_aggregate::average::Avg;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, GroupsAccumulator, ReversedUDAF,
    Signature,
};
use std::sync::{Arc, OnceLock};

/// Basalt's `avg`, replacing DataFusion's.
pub fn function() -> AggregateUDF {
    AggregateUDF::new_from_impl(TemporalAvg::default())
}

#[derive(Debug, Default, PartialEq, Eq, Hash)]
struct TemporalAvg {
    inner: Avg,
}

impl AggregateUDFImpl for TemporalAvg {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn signature(&self) -> &Signature {
        static SIGNATURE: OnceLock<Signature> = OnceLock::new();
        SIGNATURE.get_or_init(|| Signature::user_defined(self.inner.signature().volatility))
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        let avg = AggregateUDF::new_from_impl(Avg::default());
        crate::date_number::aggregate_argument_types(&avg, arg_types)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let types = crate::date_number::aggregate_result_argument_types(arg_fields);
        let t = self.return_type(&types)?;
        Ok(Arc::new(Field::new(self.name(), t, true)))
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        self.inner.accumulator(args)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.inner.state_fields(args)
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.inner.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        self.inner.create_groups_accumulator(args)
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        ReversedUDAF::Identical
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}
