//! Output files that appear whole or not at all.
//!
//! A file is written under a temporary name beside its target (same folder, so the rename
//! stays on one file system: `.<name>.partial-<pid>`) and renamed onto the target by
//! [`AtomicFile::commit`] once everything succeeded. Dropped without a commit (an error, a
//! Ctrl-C unwinding out of the work), the temporary file is removed: a failed run never leaves
//! a half-written file, or an old one truncated, under the target name. Every native writer
//! (pcaps here, rule files in the Python binding) goes through this one type.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// A file being written for `target` (see the module doc).
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// Creates the temporary file for `target` (replacing a stale one of this process).
    pub fn create(target: &Path) -> io::Result<(AtomicFile, File)> {
        let name = target.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "an output must be a file name, not a folder",
            )
        })?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(name);
        temp_name.push(format!(".partial-{}", std::process::id()));
        let temp = target.with_file_name(temp_name);
        let file = OpenOptions::new().write(true).create(true).truncate(true).open(&temp)?;
        let output = AtomicFile {
            target: target.to_path_buf(),
            temp,
            committed: false,
        };
        Ok((output, file))
    }

    /// The file's final name.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the finished temporary file onto the target (replacing what was there).
    pub fn commit(mut self) -> io::Result<()> {
        fs::rename(&self.temp, &self.target)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.temp); // best effort: the run's own error is what is reported
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("nicbench-atomic-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<_> = fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_committed_file_replaces_the_target() {
        let d = dir("commit");
        let target = d.join("out.pcap");
        fs::write(&target, b"old").unwrap();
        let (output, mut file) = AtomicFile::create(&target).unwrap();
        std::io::Write::write_all(&mut file, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"old", "replaced only by the commit");
        output.commit().unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(names(&d), ["out.pcap"]);
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing_and_the_old_target_alone() {
        let d = dir("drop");
        let target = d.join("out.pcap");
        fs::write(&target, b"old").unwrap();
        {
            let (output, file) = AtomicFile::create(&target).unwrap();
            drop(file);
            assert_eq!(names(&d).len(), 2, "the temporary file is beside the target");
            drop(output);
        }
        assert_eq!(names(&d), ["out.pcap"]);
        assert_eq!(fs::read(&target).unwrap(), b"old");
        let _ = fs::remove_dir_all(&d);
    }
}
