//! Pieces of SHOW CREATE TABLE as MySQL writes them, for the parts MySQL's DDL adds to a
//! table: quoted identifiers (a backtick in a name doubled), a column's type as declared (ENUM
//! and SET with their members), a generated column's clause, and the lines of secondary
//! indexes (`UNIQUE KEY`, `KEY`, `FULLTEXT KEY`, and Doris's `INDEX .. USING INVERTED`) and
//! foreign keys (`CONSTRAINT .. FOREIGN KEY .. REFERENCES ..`), in MySQL's order: unique
//! indexes, the others, then foreign keys by name. Reflecting tools (SQLAlchemy's MySQL
//! dialect, mysqldump) read these lines back.

use basalt_catalog::{ColumnMeta, IndexKind, IndexMeta, TableMeta};

/// `name` in backticks, a backtick in it doubled.
pub fn quote_ident(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

/// A string literal as MySQL's SHOW CREATE TABLE writes it (a quote doubled; backslash, line
/// breaks, NUL and Ctrl-Z escaped, so that every clause stays on its line).
pub fn sql_string(s: &str) -> String {
    let escaped = s
        .replace('\\', "\\\\")
        .replace('\'', "''")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
        .replace('\0', "\\0")
        .replace('\u{1a}', "\\Z");
    format!("'{escaped}'")
}

/// The column's type as declared: `enum('a','b')` for ENUM and SET columns, else its type.
pub fn column_type(c: &ColumnMeta) -> String {
    match &c.allowed {
        Some(allowed) => allowed.column_type(),
        None => c.ty.to_string(),
    }
}

/// ` GENERATED ALWAYS AS (expr) STORED|VIRTUAL` of a generated column, else empty.
pub fn generated_clause(c: &ColumnMeta) -> String {
    match &c.generated {
        Some(g) => format!(
            " GENERATED ALWAYS AS ({}) {}",
            g.expr,
            if g.stored { "STORED" } else { "VIRTUAL" }
        ),
        None => String::new(),
    }
}

/// The shown name of the table's column `name` (lower case), or `name` itself.
fn shown<'a>(t: &'a TableMeta, name: &'a str) -> &'a str {
    t.column_index(name)
        .map(|i| t.columns[i].shown_name())
        .unwrap_or(name)
}

fn index_line(t: &TableMeta, index: &IndexMeta) -> String {
    let columns: Vec<String> = index
        .columns
        .iter()
        .map(|c| match c.length {
            Some(n) => format!("{}({n})", quote_ident(shown(t, &c.name))),
            None => quote_ident(shown(t, &c.name)),
        })
        .collect();
    let name = quote_ident(&index.name);
    let mut line = match index.kind {
        IndexKind::Unique => format!("  UNIQUE KEY {name} ({})", columns.join(",")),
        IndexKind::Plain => format!("  KEY {name} ({})", columns.join(",")),
        IndexKind::Fulltext => format!("  FULLTEXT KEY {name} ({})", columns.join(",")),
        kind => format!(
            "  INDEX {name} ({}) USING {}",
            columns.join(", "),
            kind.index_type()
        ),
    };
    if !index.properties.is_empty() {
        let props: Vec<String> = index
            .properties
            .iter()
            .map(|(k, v)| {
                format!(
                    "\"{}\" = \"{}\"",
                    k.replace('"', "\\\""),
                    v.replace('"', "\\\"")
                )
            })
            .collect();
        line.push_str(&format!(" PROPERTIES({})", props.join(", ")));
    }
    if !index.comment.is_empty() {
        line.push_str(&format!(" COMMENT {}", sql_string(&index.comment)));
    }
    line
}

/// The lines of the table's secondary indexes and foreign keys, in MySQL's order.
pub fn key_lines(t: &TableMeta) -> Vec<String> {
    let unique = t.indexes.iter().filter(|i| i.kind == IndexKind::Unique);
    let others = t.indexes.iter().filter(|i| i.kind != IndexKind::Unique);
    let mut lines: Vec<String> = unique.chain(others).map(|i| index_line(t, i)).collect();
    let mut fks: Vec<_> = t.foreign_keys.iter().collect();
    fks.sort_by(|a, b| a.name.cmp(&b.name));
    for fk in fks {
        let local: Vec<String> = fk
            .columns
            .iter()
            .map(|c| quote_ident(shown(t, c)))
            .collect();
        let remote: Vec<String> = fk.ref_columns.iter().map(|c| quote_ident(c)).collect();
        let table = match fk.ref_database == t.database {
            true => quote_ident(&fk.ref_table),
            false => format!(
                "{}.{}",
                quote_ident(&fk.ref_database),
                quote_ident(&fk.ref_table)
            ),
        };
        let mut line = format!(
            "  CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {table} ({})",
            quote_ident(&fk.name),
            local.join(", "),
            remote.join(", ")
        );
        // MySQL leaves RESTRICT, its default, unsaid.
        for (what, action) in [("DELETE", &fk.on_delete), ("UPDATE", &fk.on_update)] {
            if let Some(a) = action.as_deref().filter(|a| *a != "RESTRICT") {
                line.push_str(&format!(" ON {what} {a}"));
            }
        }
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_double_their_backticks() {
        assert_eq!(sql_string("it's\na\\b\r"), "'it''s\\na\\\\b\\r'");
        assert_eq!(quote_ident("q`uote"), "`q``uote`");
        assert_eq!(quote_ident("per % cent"), "`per % cent`");
    }
}
