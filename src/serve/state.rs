//! What the handlers share: the stores, the configuration as it is now, the tokens,
//! the hosts the server answers for, its metrics and its admission turns.

use std::sync::Mutex;
use std::time::Instant;

use crate::config::Config;
use crate::stores::Stores;

use super::admission::{Admission, AdmissionLimits};
use super::live;
use super::metrics::Metrics;

/// What the handlers share.
pub struct AppState {
    pub(super) stores: Stores,
    pub(super) config: Option<live::LiveConfig>,
    pub(super) token: Option<String>,
    /// The token of the routes that act on the host ([`super::route::Access::Host`]):
    /// `token` when given, else one made at start.
    pub(super) admin_token: String,
    /// Names accepted in `Host` and `Origin` besides IP literals and `localhost`.
    pub(super) allowed_hosts: Vec<String>,
    pub(super) metrics: Metrics,
    pub(super) page_count: Mutex<Option<(Instant, u64)>>,
    pub(super) admission: Admission,
}

/// A new random token (244 bits).
pub fn new_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

impl AppState {
    pub fn new(stores: Stores, token: Option<String>) -> AppState {
        Self::with_config(stores, token, None)
    }

    /// A state that also knows the configuration (jobs, `/api/cli`).
    pub fn with_config(stores: Stores, token: Option<String>, config: Option<Config>) -> AppState {
        Self::with_live_config(
            stores,
            token,
            config.map(|c| live::LiveConfig::new(c, None)),
        )
    }

    /// A state whose configuration follows its file.
    ///
    /// A state is set up by value ([`AppState::with_admission`],
    /// [`AppState::allowing_hosts`]) and shared only once [`router`] takes
    /// it, so a setting cannot be lost on a state already shared.
    pub fn with_live_config(
        stores: Stores,
        token: Option<String>,
        config: Option<live::LiveConfig>,
    ) -> AppState {
        let token = token.filter(|t| !t.is_empty());
        AppState {
            stores,
            config,
            admin_token: token.clone().unwrap_or_else(new_token),
            token,
            allowed_hosts: Vec::new(),
            metrics: Metrics::default(),
            page_count: Mutex::new(None),
            admission: Admission::new(AdmissionLimits::default()),
        }
    }

    /// The same state with these admission limits.
    pub fn with_admission(mut self, limits: AdmissionLimits) -> AppState {
        self.admission = Admission::new(limits);
        self
    }

    /// The same state accepting `hosts` in `Host` and `Origin` too.
    pub fn allowing_hosts(mut self, hosts: Vec<String>) -> AppState {
        self.allowed_hosts = hosts.into_iter().map(|h| h.to_ascii_lowercase()).collect();
        self
    }

    /// The token the routes acting on the host need (the serve file keeps it).
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }
}
