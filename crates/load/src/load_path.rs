//! Confines the files a user names (in `local("file_path" = ...)`) to the server's allowed load
//! directory, like MySQL's `secure_file_priv`.
//!
//! A path is relative to the directory or absolute inside it, and may end in a glob
//! (`logs/*.csv`, `day=*/part-?.parquet`). `..` is refused outright; every file a path or glob
//! names is canonicalized (following symlinks) and must still lie inside the directory, so a
//! symlink pointing outside is refused too. Paths outside the directory are refused before
//! they are looked at, so errors never tell whether a file outside exists.
//!
//! The check happens when the statement is planned; a symlink swapped in between planning and
//! reading is not caught (the directory is the operator's, not the client's).

use basalt_common::{BasaltError, Result};
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// The directory loads may read from.
#[derive(Debug, Clone)]
pub struct LoadDir {
    /// As configured (made absolute), so absolute paths spelled that way are accepted.
    configured: PathBuf,
    /// The directory with all symlinks resolved; every file must resolve to inside it.
    canonical: PathBuf,
}

impl LoadDir {
    /// Creates the directory if needed and resolves it.
    pub fn open(dir: &Path) -> Result<LoadDir> {
        std::fs::create_dir_all(dir)?;
        let canonical = std::fs::canonicalize(dir)?;
        let configured = std::path::absolute(dir)?;
        Ok(LoadDir {
            configured,
            canonical,
        })
    }

    /// The resolved directory.
    pub fn path(&self) -> &Path {
        &self.canonical
    }

    fn denied(&self, what: String) -> BasaltError {
        BasaltError::FileAccessDenied(format!(
            "{what}; files must be under '{}'",
            self.canonical.display()
        ))
    }

    /// The canonical paths of the regular files `file_path` names, sorted. Errors: 1290 if the
    /// path or any file it names lies outside the directory, 29 if nothing matches.
    pub fn resolve(&self, file_path: &str) -> Result<Vec<PathBuf>> {
        let requested = Path::new(file_path);
        if file_path.trim().is_empty() {
            return Err(BasaltError::WrongArguments {
                function: "local".into(),
                message: "\"file_path\" is empty".into(),
            });
        }
        if file_path.contains('\0') {
            return Err(self.denied(format!("'{file_path}' contains a NUL byte")));
        }
        if requested.components().any(|c| c == Component::ParentDir) {
            return Err(self.denied(format!("'..' is not allowed in '{file_path}'")));
        }
        let full = if requested.is_absolute() {
            // Refuse before touching the file system: no hint whether a file outside exists.
            if !requested.starts_with(&self.canonical) && !requested.starts_with(&self.configured) {
                return Err(self.denied(format!("'{file_path}' is outside the load directory")));
            }
            requested.to_path_buf()
        } else {
            self.configured.join(requested)
        };
        // The literal leading components, then the rest from the first one with a glob.
        let mut base = PathBuf::new();
        let mut pattern: Vec<String> = Vec::new();
        for c in full.components() {
            let text = c.as_os_str().to_string_lossy();
            if pattern.is_empty() && !is_glob(&text) {
                base.push(c);
            } else {
                pattern.push(text.into_owned());
            }
        }
        let mut files = if pattern.is_empty() {
            let file = self.canonicalize_inside(&full, file_path)?;
            if file.is_dir() {
                return Err(BasaltError::WrongArguments {
                    function: "local".into(),
                    message: format!(
                        "'{file_path}' is a directory; name its files with a glob such as '{}/*'",
                        file_path.trim_end_matches('/')
                    ),
                });
            }
            vec![file]
        } else {
            self.expand_glob(&base, &pattern, file_path)?
        };
        files.sort();
        files.dedup();
        if files.is_empty() {
            return Err(BasaltError::FileNotFound(file_path.to_string()));
        }
        Ok(files)
    }

    /// Resolves `path` (following symlinks) and checks the result is inside the directory.
    fn canonicalize_inside(&self, path: &Path, requested: &str) -> Result<PathBuf> {
        let resolved = match std::fs::canonicalize(path) {
            Ok(p) => p,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(BasaltError::FileNotFound(requested.to_string()))
            }
            Err(e) => return Err(BasaltError::Io(e)),
        };
        if !resolved.starts_with(&self.canonical) {
            return Err(self.denied(format!(
                "'{requested}' resolves to '{}', outside the load directory",
                resolved.display()
            )));
        }
        Ok(resolved)
    }

    /// Regular files matching `pattern` (path components) under `base`, each checked.
    fn expand_glob(
        &self,
        base: &Path,
        pattern: &[String],
        requested: &str,
    ) -> Result<Vec<PathBuf>> {
        let base = self.canonicalize_inside(base, requested)?;
        let base_text = base.to_str().ok_or_else(|| BasaltError::WrongArguments {
            function: "local".into(),
            message: format!("'{}' is not valid UTF-8", base.display()),
        })?;
        let full = format!(
            "{}/{}",
            glob::Pattern::escape(base_text).trim_end_matches('/'),
            pattern.join("/")
        );
        let options = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: true,
        };
        let entries = glob::glob_with(&full, options).map_err(|e| BasaltError::WrongArguments {
            function: "local".into(),
            message: format!("bad glob in '{requested}': {e}"),
        })?;
        let mut files = Vec::new();
        for entry in entries {
            let path = entry.map_err(|e| BasaltError::Io(e.into()))?;
            let shown = path.display().to_string();
            let file = self.canonicalize_inside(&path, &shown)?;
            if file.is_file() {
                files.push(file);
            }
        }
        Ok(files)
    }
}

fn is_glob(component: &str) -> bool {
    component.contains(['*', '?', '['])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(r: Result<Vec<PathBuf>>) -> u16 {
        r.expect_err("should fail").mysql_code()
    }

    #[test]
    fn confines_paths_to_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("load");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("a.csv"), "1\n").unwrap();
        std::fs::write(root.join("b.csv"), "2\n").unwrap();
        std::fs::write(root.join(".hidden.csv"), "2\n").unwrap();
        std::fs::write(root.join("sub/c.csv"), "3\n").unwrap();
        std::fs::write(outside.join("secret.csv"), "x\n").unwrap();
        let dir = LoadDir::open(&root).unwrap();
        let canon = dir.path().to_path_buf();

        // Relative, absolute, and glob paths inside.
        assert_eq!(dir.resolve("a.csv").unwrap(), vec![canon.join("a.csv")]);
        let abs = root.join("sub/c.csv");
        assert_eq!(
            dir.resolve(abs.to_str().unwrap()).unwrap(),
            vec![canon.join("sub/c.csv")]
        );
        assert_eq!(
            dir.resolve("*.csv").unwrap(),
            vec![canon.join("a.csv"), canon.join("b.csv")]
        );
        assert_eq!(
            dir.resolve("s*/*.csv").unwrap(),
            vec![canon.join("sub/c.csv")]
        );
        assert_eq!(dir.resolve("./a.csv").unwrap(), vec![canon.join("a.csv")]);

        // `..`, even if it would land inside again.
        assert_eq!(code(dir.resolve("../outside/secret.csv")), 1290);
        assert_eq!(code(dir.resolve("sub/../a.csv")), 1290);
        // Absolute paths outside, existing or not: same refusal.
        assert_eq!(
            code(dir.resolve(outside.join("secret.csv").to_str().unwrap())),
            1290
        );
        assert_eq!(code(dir.resolve("/etc/passwd")), 1290);
        assert_eq!(code(dir.resolve("/no/such/file")), 1290);
        assert_eq!(code(dir.resolve("/etc/*")), 1290);
        // A sibling whose name extends the directory's is outside.
        let sibling = format!("{}2/x.csv", root.display());
        assert_eq!(code(dir.resolve(&sibling)), 1290);

        // Missing files, empty globs, directories, empty paths.
        assert_eq!(code(dir.resolve("nope.csv")), 29);
        assert_eq!(code(dir.resolve("*.parquet")), 29);
        assert_eq!(code(dir.resolve("nodir/*.csv")), 29);
        assert_eq!(code(dir.resolve("sub")), 1210);
        assert_eq!(code(dir.resolve("")), 1210);
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_must_stay_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("load");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("a.csv"), "1\n").unwrap();
        std::fs::write(outside.join("secret.csv"), "x\n").unwrap();
        std::os::unix::fs::symlink(outside.join("secret.csv"), root.join("link.csv")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("linkdir")).unwrap();
        std::os::unix::fs::symlink(root.join("a.csv"), root.join("inner.csv")).unwrap();
        let dir = LoadDir::open(&root).unwrap();
        let canon = dir.path().to_path_buf();

        assert_eq!(code(dir.resolve("link.csv")), 1290);
        assert_eq!(code(dir.resolve("linkdir/secret.csv")), 1290);
        assert_eq!(code(dir.resolve("linkdir/*.csv")), 1290);
        // A glob that matches an escaping link refuses the whole statement.
        assert_eq!(code(dir.resolve("*.csv")), 1290);
        // A link to a file inside is fine.
        assert_eq!(dir.resolve("inner.csv").unwrap(), vec![canon.join("a.csv")]);

        // The directory itself may be reached through a symlink.
        let alias = tmp.path().join("alias");
        std::os::unix::fs::symlink(&root, &alias).unwrap();
        let via_alias = LoadDir::open(&alias).unwrap();
        assert_eq!(via_alias.path(), canon.as_path());
        let abs = alias.join("a.csv");
        assert_eq!(
            via_alias.resolve(abs.to_str().unwrap()).unwrap(),
            vec![canon.join("a.csv")]
        );
    }
}
