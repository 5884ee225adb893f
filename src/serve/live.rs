//! The configuration of a running server, re-read when its file changes:
//! jobs added, removed or rescheduled in `harvest.toml` take effect without
//! a restart (the scheduler, `/api/jobs`, `POST /api/jobs/{name}/run` and
//! commands forwarded through `/api/cli` all see the current file).
//!
//! What cannot change under a running server, the archive it serves
//! (`data_dir`, `[storage] packs`, `[index]`), keeps its loaded value; a
//! file that names another archive, or does not parse, leaves the last good
//! configuration in place and is reported (log and `/api/jobs`).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use crate::config::Config;

/// What identifies a version of the file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

fn stamp(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        modified: meta.modified().ok(),
        len: meta.len(),
    })
}

struct State {
    config: Config,
    /// The file version `config` (or `error`) comes from.
    stamp: Option<Stamp>,
    /// Why the file's current version is not in effect.
    error: Option<String>,
}

/// A configuration that follows its file.
pub struct LiveConfig {
    file: Option<PathBuf>,
    state: Mutex<State>,
}

impl LiveConfig {
    /// `config` as loaded from `file` (`None`: no file, never reloaded).
    pub fn new(config: Config, file: Option<PathBuf>) -> LiveConfig {
        let stamp = file.as_deref().and_then(stamp);
        LiveConfig {
            file,
            state: Mutex::new(State {
                config,
                stamp,
                error: None,
            }),
        }
    }

    /// The configuration now in effect, re-reading the file first when it
    /// changed since the last look.
    pub fn current(&self) -> Config {
        let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = &self.file {
            let now = stamp(file);
            if now != st.stamp {
                st.stamp = now;
                match Config::load(Some(file)).and_then(|new| same_archive(&st.config, new)) {
                    Ok(new) => {
                        tracing::info!(file = %file.display(), jobs = new.jobs.len(), "configuration reloaded");
                        st.config = new;
                        st.error = None;
                    }
                    Err(e) => {
                        let msg = format!(
                            "{}: {e:#} (the configuration loaded before stays in effect)",
                            file.display()
                        );
                        tracing::error!("{msg}");
                        st.error = Some(msg);
                    }
                }
            }
        }
        st.config.clone()
    }

    /// Why the file's current content is not in effect, if it is not.
    pub fn error(&self) -> Option<String> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .error
            .clone()
    }
}

/// `new` when it names the archive `old` does (the server keeps its stores).
fn same_archive(old: &Config, new: Config) -> anyhow::Result<Config> {
    let mut changed = Vec::new();
    if new.data_dir != old.data_dir {
        changed.push("data_dir");
    }
    if new.packs != old.packs {
        changed.push("[storage] packs");
    }
    if new.index != old.index || new.buckets != old.buckets {
        changed.push("[index]");
    }
    if changed.is_empty() {
        Ok(new)
    } else {
        anyhow::bail!(
            "{} changed: restart harvest serve to serve another archive",
            changed.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
        // Another length or mtime: make sure the stamp moves even on a
        // coarse-grained clock.
        let t = SystemTime::now() + std::time::Duration::from_secs(2);
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(t).unwrap();
    }

    #[test]
    fn jobs_follow_the_file_and_a_bad_file_keeps_the_last_good_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("harvest.toml");
        let job = |name: &str| {
            format!("[[job]]\nname = \"{name}\"\nseeds = [\"https://example.org/\"]\n")
        };
        write(&file, &job("first"));
        let live = LiveConfig::new(Config::load(Some(&file)).unwrap(), Some(file.clone()));
        let names = |c: &Config| c.jobs.iter().map(|j| j.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&live.current()), ["first"]);

        write(&file, &format!("{}{}", job("first"), job("second")));
        assert_eq!(names(&live.current()), ["first", "second"]);
        assert_eq!(live.error(), None);

        write(&file, "[[job]]\nname = \"broken\"\n");
        assert_eq!(names(&live.current()), ["first", "second"]);
        let err = live.error().expect("the bad file is reported");
        assert!(err.contains("broken") || err.contains("seeds"), "{err}");

        write(
            &file,
            &format!("data_dir = \"elsewhere\"\n{}", job("third")),
        );
        assert_eq!(names(&live.current()), ["first", "second"]);
        let err = live.error().expect("another archive is refused");
        assert!(err.contains("data_dir") && err.contains("restart"), "{err}");

        write(&file, &job("third"));
        assert_eq!(names(&live.current()), ["third"]);
        assert_eq!(live.error(), None);
    }
}
