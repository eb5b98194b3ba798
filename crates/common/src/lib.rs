//! Types shared by every Basalt crate: the one error enum (and its mapping to MySQL error codes),
//! the SQL column types Basalt stores, server configuration and small id helpers.

pub mod bitmap_value;
pub mod clock;
pub mod column_origin;
pub mod config;
pub mod datetime_text;
pub mod df_error;
pub mod error;
pub mod hll_value;
pub mod ip_address;
pub mod json_binary;
pub mod name_case;
pub mod nested_times;
pub mod params;
pub mod quantile_value;
pub mod time_value;
pub mod typed_text;
pub mod types;
pub mod value_types;
pub mod variant;
pub mod year;

pub use error::{BasaltError, Result};
pub use name_case::TableNameCase;
pub use params::{Literal, ParamValue};
pub use types::{
    fraction_digits, is_json_field, is_largeint_field, sketch_kind, SqlType, StructField,
};
