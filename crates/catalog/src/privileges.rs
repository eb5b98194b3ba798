//! Privileges as stored with accounts and roles: Doris's privilege set (`SELECT_PRIV`,
//! `LOAD_PRIV`, ..., `ADMIN_PRIV`) held at three levels (`*.*`, `db.*`, `db.tbl`), the union of
//! an account's own grants and its roles', and the questions access checks ask of them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One privilege. MySQL's names map onto these: INSERT, UPDATE and DELETE are `Load`, INDEX is
/// `Alter`, SUPER is `Admin`, GRANT OPTION is `Grant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Privilege {
    Select,
    Load,
    Alter,
    Create,
    Drop,
    ShowView,
    Grant,
    /// Cluster management (`ALTER SYSTEM`); only at `*.*`.
    Node,
    /// Every privilege on everything, plus accounts, workload groups and global settings; only
    /// at `*.*`.
    Admin,
}

impl Privilege {
    pub const ALL: [Privilege; 9] = [
        Privilege::Select,
        Privilege::Load,
        Privilege::Alter,
        Privilege::Create,
        Privilege::Drop,
        Privilege::ShowView,
        Privilege::Grant,
        Privilege::Node,
        Privilege::Admin,
    ];

    fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// Doris's name (`SELECT_PRIV`).
    pub fn doris_name(self) -> &'static str {
        match self {
            Privilege::Select => "SELECT_PRIV",
            Privilege::Load => "LOAD_PRIV",
            Privilege::Alter => "ALTER_PRIV",
            Privilege::Create => "CREATE_PRIV",
            Privilege::Drop => "DROP_PRIV",
            Privilege::ShowView => "SHOW_VIEW_PRIV",
            Privilege::Grant => "GRANT_PRIV",
            Privilege::Node => "NODE_PRIV",
            Privilege::Admin => "ADMIN_PRIV",
        }
    }

    /// The command word MySQL names in error 1142 (`SELECT command denied ..`).
    pub fn command(self) -> &'static str {
        match self {
            Privilege::Select => "SELECT",
            Privilege::Load => "INSERT",
            Privilege::Alter => "ALTER",
            Privilege::Create => "CREATE",
            Privilege::Drop => "DROP",
            Privilege::ShowView => "SHOW VIEW",
            Privilege::Grant => "GRANT",
            Privilege::Node => "NODE",
            Privilege::Admin => "ADMIN",
        }
    }

    /// True for the privileges that exist only at `*.*`.
    pub fn global_only(self) -> bool {
        matches!(self, Privilege::Node | Privilege::Admin)
    }
}

/// A set of privileges.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PrivilegeSet(u16);

impl PrivilegeSet {
    pub const EMPTY: PrivilegeSet = PrivilegeSet(0);

    /// `ALL [PRIVILEGES]`: every data privilege (Doris: SELECT, LOAD, ALTER, CREATE, DROP,
    /// SHOW_VIEW), not GRANT, NODE or ADMIN.
    pub fn all_data() -> PrivilegeSet {
        [
            Privilege::Select,
            Privilege::Load,
            Privilege::Alter,
            Privilege::Create,
            Privilege::Drop,
            Privilege::ShowView,
        ]
        .into_iter()
        .collect()
    }

    pub fn contains(self, p: Privilege) -> bool {
        self.0 & p.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn insert(&mut self, p: Privilege) {
        self.0 |= p.bit();
    }

    pub fn union(self, other: PrivilegeSet) -> PrivilegeSet {
        PrivilegeSet(self.0 | other.0)
    }

    pub fn minus(self, other: PrivilegeSet) -> PrivilegeSet {
        PrivilegeSet(self.0 & !other.0)
    }

    pub fn iter(self) -> impl Iterator<Item = Privilege> {
        Privilege::ALL
            .into_iter()
            .filter(move |p| self.contains(*p))
    }
}

impl FromIterator<Privilege> for PrivilegeSet {
    fn from_iter<I: IntoIterator<Item = Privilege>>(iter: I) -> PrivilegeSet {
        let mut set = PrivilegeSet::EMPTY;
        for p in iter {
            set.insert(p);
        }
        set
    }
}

/// What a grant applies to. Database and table names are kept lower-cased, as the catalog
/// keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GrantObject {
    /// `*.*`
    Global,
    /// `db.*`
    Database(String),
    /// `db.tbl`
    Table(String, String),
}

impl std::fmt::Display for GrantObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GrantObject::Global => write!(f, "*.*"),
            GrantObject::Database(db) => write!(f, "`{db}`.*"),
            GrantObject::Table(db, t) => write!(f, "`{db}`.`{t}`"),
        }
    }
}

/// Privileges held at each level.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Grants {
    #[serde(default)]
    pub global: PrivilegeSet,
    /// database -> privileges on `db.*`
    #[serde(default)]
    pub databases: BTreeMap<String, PrivilegeSet>,
    /// database -> table -> privileges on `db.tbl`
    #[serde(default)]
    pub tables: BTreeMap<String, BTreeMap<String, PrivilegeSet>>,
}

impl Grants {
    /// Adds `privileges` on `object`.
    pub fn grant(&mut self, object: &GrantObject, privileges: PrivilegeSet) {
        let slot = match object {
            GrantObject::Global => &mut self.global,
            GrantObject::Database(db) => self.databases.entry(db.clone()).or_default(),
            GrantObject::Table(db, t) => self
                .tables
                .entry(db.clone())
                .or_default()
                .entry(t.clone())
                .or_default(),
        };
        *slot = slot.union(privileges);
    }

    /// Removes `privileges` from `object` (only what was granted at exactly that level, as
    /// MySQL and Doris do); levels left empty disappear.
    pub fn revoke(&mut self, object: &GrantObject, privileges: PrivilegeSet) {
        match object {
            GrantObject::Global => self.global = self.global.minus(privileges),
            GrantObject::Database(db) => {
                if let Some(set) = self.databases.get_mut(db) {
                    *set = set.minus(privileges);
                    if set.is_empty() {
                        self.databases.remove(db);
                    }
                }
            }
            GrantObject::Table(db, t) => {
                if let Some(tables) = self.tables.get_mut(db) {
                    if let Some(set) = tables.get_mut(t) {
                        *set = set.minus(privileges);
                        if set.is_empty() {
                            tables.remove(t);
                        }
                    }
                    if tables.is_empty() {
                        self.tables.remove(db);
                    }
                }
            }
        }
    }

    /// Adds everything `other` holds.
    pub fn merge(&mut self, other: &Grants) {
        self.grant(&GrantObject::Global, other.global);
        for (db, set) in &other.databases {
            self.grant(&GrantObject::Database(db.clone()), *set);
        }
        for (db, tables) in &other.tables {
            for (t, set) in tables {
                self.grant(&GrantObject::Table(db.clone(), t.clone()), *set);
            }
        }
    }

    /// Every (object, privileges) pair held, global first.
    pub fn entries(&self) -> Vec<(GrantObject, PrivilegeSet)> {
        let mut out = Vec::new();
        if !self.global.is_empty() {
            out.push((GrantObject::Global, self.global));
        }
        for (db, set) in &self.databases {
            out.push((GrantObject::Database(db.clone()), *set));
        }
        for (db, tables) in &self.tables {
            for (t, set) in tables {
                out.push((GrantObject::Table(db.clone(), t.clone()), *set));
            }
        }
        out
    }
}

/// What one session may do: the union of its account's grants and those of its active roles.
#[derive(Debug, Clone, Default)]
pub struct AccessRights {
    grants: Grants,
}

impl AccessRights {
    /// Every privilege on everything (the built-in `root`).
    pub fn superuser() -> AccessRights {
        AccessRights {
            grants: Grants {
                global: Privilege::ALL.into_iter().collect(),
                ..Default::default()
            },
        }
    }

    pub fn from_grants(grants: Grants) -> AccessRights {
        AccessRights { grants }
    }

    pub fn is_admin(&self) -> bool {
        self.grants.global.contains(Privilege::Admin)
    }

    /// True if `privilege` is held at `*.*`.
    pub fn has_global(&self, privilege: Privilege) -> bool {
        self.is_admin() || self.grants.global.contains(privilege)
    }

    /// True if `privilege` is held on database `db` (at `*.*` or `db.*`).
    pub fn has_on_database(&self, privilege: Privilege, db: &str) -> bool {
        self.has_global(privilege)
            || self
                .grants
                .databases
                .get(db)
                .is_some_and(|s| s.contains(privilege))
    }

    /// True if `privilege` is held on table `db.table` (at any level above it too).
    pub fn has_on_table(&self, privilege: Privilege, db: &str, table: &str) -> bool {
        self.has_on_database(privilege, db)
            || self
                .grants
                .tables
                .get(db)
                .and_then(|t| t.get(table))
                .is_some_and(|s| s.contains(privilege))
    }

    /// True if anything at all is held on `db` or on one of its tables: the database is
    /// visible (SHOW DATABASES, information_schema, USE).
    pub fn may_see_database(&self, db: &str) -> bool {
        self.sees_all_of(db)
            || self
                .grants
                .tables
                .get(db)
                .is_some_and(|t| t.values().any(|s| !data(*s).is_empty()))
    }

    /// True if anything is held on table `db.table`: it is visible (SHOW TABLES,
    /// information_schema, DESCRIBE).
    pub fn may_see_table(&self, db: &str, table: &str) -> bool {
        self.sees_all_of(db)
            || self
                .grants
                .tables
                .get(db)
                .and_then(|t| t.get(table))
                .is_some_and(|s| !data(*s).is_empty())
    }

    /// Something held at `*.*` or on `db.*`: every table of `db` is visible.
    fn sees_all_of(&self, db: &str) -> bool {
        self.is_admin()
            || !data(self.grants.global).is_empty()
            || self
                .grants
                .databases
                .get(db)
                .is_some_and(|s| !data(*s).is_empty())
    }
}

/// The privileges of a set that say something about data (all but GRANT, which alone does not
/// make a database visible).
fn data(set: PrivilegeSet) -> PrivilegeSet {
    set.minus([Privilege::Grant].into_iter().collect())
}

/// A role as stored: its name and grants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleMeta {
    pub name: String,
    #[serde(default)]
    pub grants: Grants,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ps: &[Privilege]) -> PrivilegeSet {
        ps.iter().copied().collect()
    }

    #[test]
    fn levels_inherit_downwards_and_revoke_is_exact() {
        let mut g = Grants::default();
        g.grant(
            &GrantObject::Database("d".into()),
            set(&[Privilege::Select]),
        );
        g.grant(
            &GrantObject::Table("e".into(), "t".into()),
            set(&[Privilege::Load, Privilege::Select]),
        );
        let r = AccessRights::from_grants(g.clone());
        assert!(r.has_on_table(Privilege::Select, "d", "any"));
        assert!(!r.has_on_table(Privilege::Load, "d", "any"));
        assert!(r.has_on_table(Privilege::Load, "e", "t"));
        assert!(!r.has_on_table(Privilege::Load, "e", "u"));
        assert!(r.may_see_database("e") && !r.may_see_database("f"));
        assert!(r.may_see_table("e", "t") && !r.may_see_table("e", "u"));
        // Revoking at the database level leaves table-level grants alone.
        g.revoke(&GrantObject::Database("e".into()), set(&[Privilege::Load]));
        assert!(AccessRights::from_grants(g.clone()).has_on_table(Privilege::Load, "e", "t"));
        g.revoke(
            &GrantObject::Table("e".into(), "t".into()),
            set(&[Privilege::Load, Privilege::Select]),
        );
        assert!(g.tables.is_empty());
        assert_eq!(g.entries().len(), 1);
    }

    #[test]
    fn admin_implies_everything_and_grant_alone_shows_nothing() {
        let mut g = Grants::default();
        g.grant(&GrantObject::Global, set(&[Privilege::Grant]));
        let r = AccessRights::from_grants(g);
        assert!(r.has_global(Privilege::Grant));
        assert!(!r.may_see_database("d"));
        let root = AccessRights::superuser();
        assert!(root.has_on_table(Privilege::Drop, "x", "y") && root.may_see_database("x"));
        let json = serde_json::to_string(&Grants::default()).unwrap();
        assert_eq!(
            serde_json::from_str::<Grants>(&json).unwrap(),
            Grants::default()
        );
    }
}
